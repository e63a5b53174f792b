// base64url without padding (see base64url.h).
#include "base64url.h"

EMCP_NS_BEGIN
namespace util {

namespace {

constexpr uint8_t kNotB64 = 0xFF;
constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

uint8_t b64url_value(char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<uint8_t>(c - 'A');
  if (c >= 'a' && c <= 'z') return static_cast<uint8_t>(c - 'a' + 26);
  if (c >= '0' && c <= '9') return static_cast<uint8_t>(c - '0' + 52);
  if (c == '-') return 62;
  if (c == '_') return 63;
  return kNotB64;
}

}  // namespace

bool b64url_valid(StrView in) {
  const size_t rem = in.size() % 4;
  if (rem == 1) return false;
  for (size_t i = 0; i < in.size(); ++i)
    if (b64url_value(in[i]) == kNotB64) return false;
  if (rem == 0) return true;
  // The last character carries 4 (rem 2) or 2 (rem 3) bits that belong to no byte.
  const uint8_t last = b64url_value(in[in.size() - 1]);
  const uint8_t unused = rem == 2 ? 0x0F : 0x03;
  return (last & unused) == 0;
}

size_t b64url_decode_valid(const char* in, size_t n, uint8_t* out) {
  size_t o = 0;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (size_t i = 0; i < n; ++i) {
    acc = (acc << 6) | b64url_value(in[i]);
    bits += 6;
    if (bits >= 8) {
      bits -= 8;
      out[o++] = static_cast<uint8_t>(acc >> bits);
      acc &= (1u << bits) - 1u;
    }
  }
  return o;
}

size_t b64url_encode(const uint8_t* in, size_t n, char* out) {
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    const uint32_t v = (static_cast<uint32_t>(in[i]) << 16) | (i + 1 < n ? static_cast<uint32_t>(in[i + 1]) << 8 : 0u) |
                       (i + 2 < n ? in[i + 2] : 0u);
    out[o++] = kAlphabet[(v >> 18) & 63];
    out[o++] = kAlphabet[(v >> 12) & 63];
    if (i + 1 < n) out[o++] = kAlphabet[(v >> 6) & 63];
    if (i + 2 < n) out[o++] = kAlphabet[v & 63];
  }
  return o;
}

}  // namespace util
EMCP_NS_END
