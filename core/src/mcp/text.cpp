// Text: number formatting for TextPiece, text pieces into a JSON string or a plain buffer.
#include <string.h>

#include "emcp/json/number.h"
#include "emcp/mcp/server.h"

EMCP_NS_BEGIN
namespace mcp {

size_t TextPiece::format_int(const TextPiece& p, char* out) { return json::format_int64(p.i, out); }

size_t TextPiece::format_shortest(const TextPiece& p, char* out) {
  return json::format_double(p.d, out);
}

namespace {
// The k decimal digits of an integer with a point `places` digits from the end, padded with
// zeros on the left as needed ("5" with 2 places: "0.05"; k >= 1); returns the length written.
size_t write_point(const char* digits, size_t k, size_t places, char* out) {
  size_t n = 0;
  if (k <= places) {
    out[n++] = '0';
    out[n++] = '.';
    for (size_t i = k; i < places; ++i) out[n++] = '0';
    memcpy(out + n, digits, k);
    return n + k;
  }
  memcpy(out, digits, k - places);
  n = k - places;
  if (places != 0) {
    out[n++] = '.';
    memcpy(out + n, digits + k - places, places);
    n += places;
  }
  return n;
}
}  // namespace

// `places` digits after the point, rounding half away from zero, with integer arithmetic once
// scaled: no Grisu tables. Places are given up when the scaled value would leave the range
// where doubles hold every integer (9e15); integers up to 1.8e19 are exact; beyond, the value
// keeps 12 significant digits.
size_t TextPiece::format_fixed(const TextPiece& p, char* out) {
  int places = p.decimals < 0 ? 0 : p.decimals > 9 ? 9 : p.decimals;
  const double d = p.d;
  if (!(d - d == 0)) return 0;  // NaN or infinity
  const double mag0 = d < 0 ? -d : d;
  double scale = 1;
  for (int i = 0; i < places; ++i) scale *= 10;
  while (places > 0 && !(mag0 * scale < 9.0e15)) {
    --places;
    scale /= 10;
  }
  double mag = mag0 * scale;
  uint32_t zeros = 0;
  if (!(mag < 1.8e19)) {  // beyond uint64: 12 significant digits, few divisions, exact enough
    for (; mag >= 1e34; zeros += 22) mag /= 1e22;  // 1e22 is exact, one rounding per step
    for (; mag >= 1e12; ++zeros) mag /= 10;
  }
  // Half away from zero without adding 0.5 (mag + 0.5 itself rounds: to even from 2^52 up,
  // and 0.49999999999999994 + 0.5 is 1).
  uint64_t r = static_cast<uint64_t>(mag);
  if (mag - static_cast<double>(r) >= 0.5) ++r;
  // Digits as text from here on: no 64-bit division (a library routine on 32-bit cores).
  char digits[24];
  size_t k = json::format_uint64(r, digits);
  size_t n = 0;
  if (d < 0 && r != 0) out[n++] = '-';
  if (zeros == 0) return n + write_point(digits, k, static_cast<size_t>(places), out + n);
  while (k > 1 && digits[k - 1] == '0') {
    --k;
    ++zeros;
  }
  const uint32_t exp = zeros + static_cast<uint32_t>(k) - 1u;
  if (exp < 21) {  // plain digits and zeros, as toFixed writes them below 1e21
    memcpy(out + n, digits, k);
    n += k;
    for (uint32_t i = static_cast<uint32_t>(k); i <= exp; ++i) out[n++] = '0';
    return n;
  }
  out[n++] = digits[0];
  if (k > 1) {
    out[n++] = '.';
    memcpy(out + n, digits + 1, k - 1);
    n += k - 1;
  }
  out[n++] = 'e';
  out[n++] = '+';
  return n + json::format_uint64(exp, out + n);
}

size_t TextPiece::format_scaled(const TextPiece& p, char* out) {
  char digits[24];
  const uint64_t mag = p.i < 0 ? 0u - static_cast<uint64_t>(p.i) : static_cast<uint64_t>(p.i);
  const size_t k = json::format_uint64(mag, digits);
  size_t n = 0;
  if (p.i < 0) out[n++] = '-';
  return n + write_point(digits, k, static_cast<size_t>(p.decimals), out + n);
}

StrView TextPiece::render(char (&buf)[kMaxChars]) const {
  static_assert(kMaxChars >= json::kMaxDoubleChars && kMaxChars >= 28, "room for any number");
  if (format == nullptr) return s;
  const size_t n = format(*this, buf);
  return n == 0 ? StrView("NaN") : StrView(buf, n);
}

void write_text_pieces(json::Writer& w, std::initializer_list<TextPiece> pieces) {
  char buf[TextPiece::kMaxChars];
  for (const TextPiece& p : pieces) w.string_part(p.render(buf));
}

size_t format_text(char* out, size_t cap, std::initializer_list<TextPiece> pieces) {
  if (cap == 0) return 0;
  char buf[TextPiece::kMaxChars];
  size_t n = 0;
  for (const TextPiece& p : pieces) {
    const StrView v = p.render(buf);
    size_t k = v.size();
    if (k > cap - 1 - n) {
      k = cap - 1 - n;
      // Cut before a UTF-8 continuation byte, never inside a character.
      while (k > 0 && (static_cast<uint8_t>(v[k]) & 0xC0) == 0x80) --k;
      memcpy(out + n, v.data(), k);
      n += k;
      break;
    }
    memcpy(out + n, v.data(), k);
    n += k;
  }
  out[n] = '\0';
  return n;
}

}  // namespace mcp
EMCP_NS_END
