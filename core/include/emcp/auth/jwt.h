// emcp/auth/jwt.h - JWT access-token verification for an OAuth 2.1 resource server (no crypto).
//
// An MCP server that requires authorization receives `Authorization: Bearer <token>`; when the
// token is a JWT (RFC 7519, JWS compact serialization of RFC 7515) issued by the authorization
// server, verify_jwt() decides whether it may be used here: the algorithm is the one pinned by
// the configuration, the signature is valid, the token is within its lifetime (exp, nbf, iat,
// with a clock skew), it comes from the configured issuer and it was issued for this server
// (aud holds the server's canonical resource URI, RFC 8707 / the MCP authorization spec). On
// success it hands out the claims the HTTP side needs for scopes and logging (scope, sub,
// client_id, exp). Getting the token out of the header, the 401/403 answers and the scope
// checks are the HTTP layer's business, not this file's.
//
// This file holds no cryptography: the signature is checked by a callback (JwtVerifyFn).
// ports/mbedtls provides one for ES256, RS256 and HS256 (emcp/mbedtls/jwt_key.h); tests and
// fuzzers may pass their own.
//
// Security model (what the token may not do):
//   - choose the algorithm: the header's "alg" must equal the pinned JwtConfig::alg, exactly;
//     "none", other algorithms and a missing alg are kAlgMismatch. The callback is called with
//     the pinned algorithm, never with the header's.
//   - add semantics: a "crit" header parameter is refused (kCritHeader): no JWS extension is
//     understood. Other header parameters ("kid", "jwk", "jku", "x5u"...) are ignored; the key
//     is never taken from the token.
//   - be another kind of JWT (an ID token, a logout token... signed by the same issuer's key):
//     with JwtConfig::require_at_jwt the header's "typ" must be "at+jwt" or
//     "application/at+jwt", in any case (RFC 9068 2.1 and 4, RFC 8725 3.11 explicit typing);
//     absent, of another type or another value: kWrongType. Off by default: many authorization
//     servers type their access tokens "JWT" or not at all (docs/http.md); "typ" is then
//     ignored, and the audience check is what keeps other JWTs out.
//   - be ambiguous: a member name twice at the top level of the header or of the claims is
//     kDuplicateKey (RFC 7515 4, RFC 7519 4 allow refusing them); members of nested values
//     are not interpreted and not checked.
//   - be read before it is authentic: the header is parsed first (it says which algorithm);
//     the claims are parsed only after the signature has been verified.
//
// Strictness: every part must be base64url without padding, without whitespace, with no
// character outside [A-Za-z0-9_-], of a possible length and with zero unused trailing bits
// (RFC 7515 2 and appendix C, RFC 4648 3.5); the header and the claims must each be exactly
// one JSON object (RFC 8259, emcp::json::Reader: valid UTF-8, no trailing data).
//
// Claims read (all others are skipped whatever their type):
//   iss        required, a string equal to JwtConfig::issuer, byte for byte after unescaping.
//   aud        required, a string equal to JwtConfig::audience, or an array of strings one of
//              which is; no case folding, no URI normalisation (the configured value is the
//              canonical resource URI, and the authorization server is told that exact text).
//   exp        required, a NumericDate: expired when now > exp + skew.
//   nbf        optional NumericDate: not yet valid when nbf > now + skew.
//   iat        optional NumericDate: refused like nbf (kNotYetValid) when iat > now + skew, a
//              token issued in the future being a clock or issuer fault.
//   sub, scope, client_id   optional strings, handed out in JwtClaims.
// A NumericDate must be a JSON number with an integral value within int64: 1700000000,
// also written 1700000000.0 or 1.7e9; 1700000000.5 and "1700000000" are kBadClaimType. A
// claim of this list with another JSON type (null included) is kBadClaimType.
//
// Limits: the token may be at most scratch.size() bytes (kTooLarge otherwise, checked before
// any byte of the token is read); a scratch as large as the token always suffices (the decoded
// parts take at most 3/4 of it). JSON limits: nesting EMCP_JSON_MAX_DEPTH, member names up to
// kJwtMaxKeyLen bytes, numbers up to 40 significant digits; beyond them the part is kBadJson.
// Stack: about 900 bytes on Cortex-M0 before the callback's own (verify_jwt() 632: a
// json::Reader with its kJwtMaxKeyLen key buffer; the 48-byte decode buffer and the reader's
// calls below it). Flash: about 3 KiB (-Os, Cortex-M0) besides the JSON reader. Time: linear
// in the token, plus a comparison of each top-level member name with the earlier ones.
//
// Context: any task; no state, no heap, no recursion. The callback runs on the caller's stack.
//
// Example:
//   emcp::auth::JwtConfig cfg;
//   cfg.alg = emcp::auth::JwtAlg::kES256;
//   cfg.verify = &emcp::mbedtls::JwtKey::verify_signature;   // or key.bind(&cfg)
//   cfg.verify_ctx = &key;
//   cfg.issuer = "https://auth.example.com";
//   cfg.audience = "https://device.example.com/mcp";
//   static uint8_t scratch[EMCP_HTTP_MAX_AUTH];
//   emcp::auth::JwtClaims claims;
//   emcp::auth::JwtResult r = emcp::auth::verify_jwt(token, cfg, now_s, scratch, &claims);
//   if (r != emcp::auth::JwtResult::kOk) { /* 401 invalid_token; log jwt_result_text(r) */ }
//   else { /* claims.scope, claims.sub: valid while `scratch` is untouched */ }
#ifndef EMCP_AUTH_JWT_H
#define EMCP_AUTH_JWT_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace auth {

// ---- base64url (RFC 4648 section 5, as JWS uses it: no padding) -------------------------------

/// Bytes that `chars` characters of unpadded base64url decode to (for a length of the form
/// 4k+1, which no input can have, the bytes of the 4k characters).
constexpr size_t base64url_decoded_size(size_t chars) {
  return chars / 4 * 3 + (chars % 4 == 3 ? 2 : chars % 4 == 2 ? 1 : 0);
}

/// Strict unpadded base64url decode of `in` into `out`. On kOk `*out_len` is the number of
/// bytes written (base64url_decoded_size(in.size())). Returns kInvalidArgument when `in` has a
/// character outside [A-Za-z0-9_-] (padding '=' and whitespace included), a length of the form
/// 4k+1, or non-zero unused bits in its last character (the one canonical encoding only);
/// kNoSpace when `out` is smaller than the decoded size. `out` is unchanged on failure.
/// Example: base64url_decode("aGk", buf, &n) gives "hi", n = 2.
Status base64url_decode(StrView in, Span<uint8_t> out, size_t* out_len);

// ---- verification -------------------------------------------------------------------------------

/// The JWS algorithms emcp verifies (RFC 7518 3.1). "none" is not one of them.
enum class JwtAlg : uint8_t {
  kES256,  ///< ECDSA P-256 SHA-256, signature R||S (64 bytes)
  kRS256,  ///< RSASSA-PKCS1-v1_5 SHA-256
  kHS256,  ///< HMAC SHA-256 with a shared secret
};

/// The "alg" text of `alg` ("ES256", "RS256", "HS256"; "" for a value outside the enum).
const char* jwt_alg_name(JwtAlg alg);

/// Checks a signature. `alg` is the pinned JwtConfig::alg (never the token's header);
/// `signing_input` is the ASCII "header.payload" of the token (`n` bytes, not NUL-terminated),
/// `sig` the decoded signature (`sig_len` bytes, possibly 0). Returns true only for a valid
/// signature by the configured key with that algorithm. Both buffers are valid during the
/// call only. Called at most once per verify_jwt(), on the caller's stack.
using JwtVerifyFn = bool (*)(void* ctx, JwtAlg alg, const uint8_t* signing_input, size_t n,
                             const uint8_t* sig, size_t sig_len);

/// What verify_jwt() checks against. Not copied: the strings must stay valid during the call.
struct JwtConfig {
  JwtAlg alg = JwtAlg::kES256;    ///< the only algorithm accepted
  JwtVerifyFn verify = nullptr;   ///< required
  void* verify_ctx = nullptr;     ///< passed to `verify` as is
  const char* issuer = nullptr;   ///< required: the "iss" value, exact match
  const char* audience = nullptr; ///< required: the server's canonical resource URI
  uint32_t skew_s = 60;           ///< clock skew allowed on exp, nbf and iat, in seconds
  bool require_at_jwt = false;    ///< refuse a header "typ" other than "at+jwt" (RFC 9068)
};

/// Longest member name the header and the claims may have (longer: kBadJson).
constexpr size_t kJwtMaxKeyLen = 255;

/// The outcome of verify_jwt(). Every failure means "do not use this token" (401
/// invalid_token on the HTTP side, except kBadConfig, which is the server's fault).
enum class [[nodiscard]] JwtResult : uint8_t {
  kOk = 0,
  kNoToken,        ///< the token is empty
  kBadConfig,      ///< JwtConfig without verify, issuer or audience (or empty ones), bad alg
  kTooLarge,       ///< the token is longer than the scratch
  kMalformed,      ///< not three '.'-separated parts, or an empty header or claims part
  kBadBase64url,   ///< a part is not strict unpadded base64url (see base64url_decode())
  kBadJson,        ///< the header or the claims are not one JSON object (or beyond the limits)
  kDuplicateKey,   ///< a member name twice at the top level of the header or of the claims
  kBadClaimType,   ///< alg, iss, aud, exp, nbf, iat, sub, scope or client_id of a wrong type,
                   ///< or a NumericDate that is not an integral value within int64
  kAlgMismatch,    ///< the header's "alg" is missing or is not the pinned algorithm
  kCritHeader,     ///< the header has "crit" (no extension is understood)
  kWrongType,      ///< JwtConfig::require_at_jwt and the header's "typ" is not at+jwt
  kBadSignature,   ///< the callback refused the signature
  kMissingClaim,   ///< exp, iss or aud is absent
  kExpired,        ///< now > exp + skew
  kNotYetValid,    ///< nbf > now + skew, or iat > now + skew
  kWrongIssuer,    ///< iss is not JwtConfig::issuer
  kWrongAudience,  ///< aud is not, or does not contain, JwtConfig::audience
  kCount_          ///< not a result: number of values
};

/// True for the results that say the token is not a well-formed JWS/JWT (kMalformed ...
/// kBadClaimType), as opposed to a well-formed token that is refused.
constexpr bool jwt_malformed(JwtResult r) {
  return r >= JwtResult::kMalformed && r <= JwtResult::kBadClaimType;
}

/// Short English description of `r` ("token expired"), or "" when EMCP_ERROR_STRINGS is 0.
/// The string is static.
const char* jwt_result_text(JwtResult r);

/// What a verified token says. The views point into the scratch given to verify_jwt() (string
/// claims are copied there, JSON escapes decoded): valid while the scratch is neither
/// modified nor reused, and independent of the token's buffer. They may contain any UTF-8,
/// NUL included (\u0000): compare them as length-delimited bytes.
struct JwtClaims {
  StrView sub;          ///< "sub" (empty when absent)
  StrView scope;        ///< "scope": space-separated scope tokens (RFC 8693 4.2); empty when absent
  StrView client_id;    ///< "client_id" (RFC 9068 2.2; empty when absent)
  int64_t exp = 0;      ///< "exp", seconds since 1970 (always present after kOk)
  bool has_sub = false;
  bool has_scope = false;
  bool has_client_id = false;
};

/// Verifies the JWS compact `token` (the bytes after "Bearer ", not NUL-terminated) against
/// `config` at time `now_unix_s` (seconds since 1970, from the port's wall clock), working in
/// `scratch` (caller storage, at least token.size() bytes; its contents are overwritten).
/// On kOk fills `*out` (views into `scratch`, see JwtClaims); on any failure `*out` is reset to
/// an empty JwtClaims. The token is only read, and not kept after the call.
///
/// Checks in this order, the first failure is returned: config (kBadConfig), empty token
/// (kNoToken), length (kTooLarge), three parts (kMalformed), base64url of all parts
/// (kBadBase64url), header JSON (kBadJson, kDuplicateKey, kBadClaimType), alg (kAlgMismatch),
/// crit (kCritHeader), typ when required (kWrongType), signature through config.verify
/// (kBadSignature), claims JSON (kBadJson, kDuplicateKey, kBadClaimType), presence of exp,
/// iss, aud (kMissingClaim), exp (kExpired), nbf and iat (kNotYetValid), iss (kWrongIssuer),
/// aud (kWrongAudience).
JwtResult verify_jwt(StrView token, const JwtConfig& config, uint64_t now_unix_s,
                     Span<uint8_t> scratch, JwtClaims* out);

}  // namespace auth
EMCP_NS_END

#endif  // EMCP_AUTH_JWT_H
