// libFuzzer target: JWT access-token verification (emcp/auth/jwt.h), arbitrary bytes as the token.
// Each input is used twice: as the token itself, and, split at its first newline, as the JSON
// texts of a header and claims that this target encodes into a token (signature "sig"), so that
// byte-level mutations reach the JSON and claim checks too. Each token is verified with the
// HS256 algorithm pinned:
//  - with a callback that accepts every signature, so that the claims of any input are read
//    and checked (lifetime, issuer, audience, types, duplicates);
//  - with a real HS256 key (emcp::mbedtls::JwtKey; tests/fuzz/make_jwt_seeds.sh signs its seed
//    tokens with the same secret).
// Properties checked on every input:
//  1. The result is one of the enum's values and has a text.
//  2. A scratch exactly as large as the token (allocated to size, so ASan sees any byte beyond)
//     gives the same result as a larger one: never kTooLarge, never more memory than documented;
//     one byte less gives kTooLarge.
//  3. The real key gives the accepting callback's result, or kBadSignature where that result
//     was not decided from the header alone.
//  4. On kOk the claim views lie inside the scratch and exp is not in the past beyond the skew.
//  5. With JwtConfig::require_at_jwt the result is the same, or kWrongType where the result was
//     not decided by the earlier header checks.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emcp/auth/jwt.h"
#include "emcp/mbedtls/jwt_key.h"

namespace {

using emcp::auth::JwtAlg;
using emcp::auth::JwtClaims;
using emcp::auth::JwtConfig;
using emcp::auth::JwtResult;

constexpr uint64_t kNow = 1700000000;
// make_jwt_seeds.sh signs with this secret (its hex there).
constexpr char kSecret[] = "emcp-fuzz-hs256-secret-0123456789abcdef";

bool accept_any(void*, JwtAlg, const uint8_t*, size_t, const uint8_t*, size_t) { return true; }

JwtConfig base_config() {
  JwtConfig c;
  c.alg = JwtAlg::kHS256;
  c.issuer = "https://as.example.com";
  c.audience = "https://device.example.com/mcp";
  c.skew_s = 60;
  return c;
}

emcp::mbedtls::JwtKey& key() {
  static emcp::mbedtls::JwtKey k;
  static const bool loaded = k.load_hmac_secret(reinterpret_cast<const uint8_t*>(kSecret),
                                                sizeof kSecret - 1) == emcp::Status::kOk;
  if (!loaded) abort();
  return k;
}

bool inside(emcp::StrView v, const uint8_t* base, size_t n) {
  if (v.empty()) return true;
  const auto* p = reinterpret_cast<const uint8_t*>(v.data());
  return p >= base && p + v.size() <= base + n;
}

uint8_t g_big[1 << 14];
char g_token[8192 / 3 * 4 + 64];  // both parts encoded, two dots, the signature

size_t b64url(const uint8_t* in, size_t n, char* out) {
  static const char kAlpha[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  size_t o = 0;
  uint32_t acc = 0;
  unsigned bits = 0;
  for (size_t i = 0; i < n; ++i) {
    acc = (acc << 8) | in[i];
    bits += 8;
    while (bits >= 6) {
      bits -= 6;
      out[o++] = kAlpha[(acc >> bits) & 63];
    }
  }
  if (bits > 0) out[o++] = kAlpha[(acc << (6 - bits)) & 63];
  return o;
}

void check(const uint8_t* data, size_t size) {
  const emcp::StrView token(reinterpret_cast<const char*>(data), size);

  JwtConfig any = base_config();
  any.verify = &accept_any;
  JwtClaims claims;
  const JwtResult big = emcp::auth::verify_jwt(token, any, kNow, g_big, &claims);
  if (big >= JwtResult::kCount_ || emcp::auth::jwt_result_text(big)[0] == '\0') abort();
  if (big == JwtResult::kTooLarge) abort();
  if (big == JwtResult::kOk) {
    if (!inside(claims.sub, g_big, sizeof g_big) || !inside(claims.scope, g_big, sizeof g_big) ||
        !inside(claims.client_id, g_big, sizeof g_big))
      abort();
    if (claims.exp < static_cast<int64_t>(kNow) - 60) abort();
  }

  // Exactly the token's size, and one byte less.
  uint8_t* exact = static_cast<uint8_t*>(malloc(size ? size : 1));
  if (exact == nullptr) return;
  JwtClaims c2;
  const JwtResult fit = emcp::auth::verify_jwt(token, any, kNow, emcp::Span<uint8_t>(exact, size), &c2);
  if (fit != big) abort();
  if (fit == JwtResult::kOk && (c2.exp != claims.exp || !inside(c2.sub, exact, size) ||
                                !inside(c2.scope, exact, size) || !inside(c2.client_id, exact, size) ||
                                !(c2.sub == claims.sub) || !(c2.scope == claims.scope) ||
                                !(c2.client_id == claims.client_id)))
    abort();
  if (size > 0 && emcp::auth::verify_jwt(token, any, kNow, emcp::Span<uint8_t>(exact, size - 1),
                                         &c2) != JwtResult::kTooLarge)
    abort();
  free(exact);

  // The real key.
  JwtConfig real = base_config();
  key().bind(&real);
  const JwtResult r = emcp::auth::verify_jwt(token, real, kNow, g_big, &claims);
  // Decided from the header alone (kBadJson, kDuplicateKey, kBadClaimType may come from the
  // header or from the claims).
  const bool header_only = big == JwtResult::kNoToken || big == JwtResult::kMalformed ||
                           big == JwtResult::kBadBase64url || big == JwtResult::kAlgMismatch ||
                           big == JwtResult::kCritHeader;
  if (r != big && (header_only || r != JwtResult::kBadSignature)) abort();

  // Explicit typing: only adds kWrongType, after the other header checks.
  JwtConfig typed = any;
  typed.require_at_jwt = true;
  const JwtResult t = emcp::auth::verify_jwt(token, typed, kNow, g_big, &claims);
  if (t != big && (header_only || t != JwtResult::kWrongType)) abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 8192) return 0;  // the duplicate check is quadratic in the member count
  check(data, size);
  const uint8_t* nl = static_cast<const uint8_t*>(memchr(data, '\n', size));
  if (nl != nullptr) {
    size_t n = b64url(data, static_cast<size_t>(nl - data), g_token);
    g_token[n++] = '.';
    n += b64url(nl + 1, size - static_cast<size_t>(nl + 1 - data), g_token + n);
    g_token[n++] = '.';
    n += b64url(reinterpret_cast<const uint8_t*>("sig"), 3, g_token + n);
    check(reinterpret_cast<const uint8_t*>(g_token), n);
  }
  return 0;
}
