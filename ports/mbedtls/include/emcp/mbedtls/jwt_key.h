// emcp/mbedtls/jwt_key.h - the key that checks JWT signatures, with Mbed TLS (ES256, RS256, HS256).
//
// emcp::auth::verify_jwt() (emcp/auth/jwt.h) leaves the signature to a callback; a JwtKey is
// that callback's context. It holds one key for one algorithm, fixed when the key is loaded:
//
//   ES256  an EC P-256 public key (PEM "BEGIN PUBLIC KEY" or DER SubjectPublicKeyInfo); the
//          signature is R||S, 64 bytes (RFC 7518 3.4), checked with ECDSA over SHA-256.
//   RS256  an RSA public key of 2048 bits or more (same formats); RSASSA-PKCS1-v1_5 SHA-256,
//          the signature exactly as long as the modulus.
//   HS256  a shared secret of 32 bytes or more (RFC 7518 3.2); HMAC-SHA256 compared in
//          constant time. A secret longer than 64 bytes is kept as its SHA-256, which is what
//          HMAC does with it anyway (RFC 2104 2).
//
// Algorithm confusion cannot happen here: the callback refuses any algorithm other than the
// key's, so an RSA or EC key never checks an HMAC, and a secret never checks ES256/RS256.
// load_hmac_secret() refuses text that starts like a PEM object ("-----BEGIN"): a public key
// file configured as the HMAC secret is a configuration error, since anyone can read it.
// verify_jwt() itself refuses tokens whose header names another algorithm than the pinned one.
//
// Memory: the object holds the secret (up to 64 bytes) and an mbedtls_pk_context. No heap of
// emcp's; Mbed TLS's key parsing and each verification allocate through its platform calloc
// (on the boards, MBEDTLS_MEMORY_BUFFER_ALLOC_C's static pool), freed before they return or by
// the destructor. Mbed TLS modules needed: PK_C, PK_PARSE_C, PEM_PARSE_C, BASE64_C,
// ASN1_PARSE_C, OID_C, BIGNUM_C, ECP_C with ECP_DP_SECP256R1_ENABLED, ECDSA_C (with
// ASN1_WRITE_C), RSA_C with PKCS1_V15, MD_C, SHA256_C.
//
// Context: load in setup; verify_signature() may run from any task, one call at a time per key
// (Mbed TLS's ECP and RSA code keep no state, but the platform allocator may not be shared).
//
// Example:
//   static emcp::mbedtls::JwtKey key;
//   if (key.load_public_key_pem(emcp::auth::JwtAlg::kES256, pem_text) != emcp::Status::kOk) fail();
//   emcp::auth::JwtConfig cfg;
//   key.bind(&cfg);                          // alg, verify, verify_ctx
//   cfg.issuer = "https://auth.example.com";
//   cfg.audience = "https://device.example.com/mcp";
#ifndef EMCP_MBEDTLS_JWT_KEY_H
#define EMCP_MBEDTLS_JWT_KEY_H

#include <mbedtls/pk.h>
#include <stddef.h>
#include <stdint.h>

#include "emcp/auth/jwt.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace mbedtls {

class JwtKey {
 public:
  /// Shortest HS256 secret accepted (RFC 7518 3.2: a key of the hash's size or larger).
  static constexpr size_t kMinSecret = 32;
  /// Smallest RSA modulus accepted, in bits.
  static constexpr size_t kMinRsaBits = 2048;

  JwtKey();
  ~JwtKey();
  JwtKey(const JwtKey&) = delete;
  JwtKey& operator=(const JwtKey&) = delete;

  /// Loads a public key for `alg` (kES256: EC P-256; kRS256: RSA, >= kMinRsaBits) from `key`:
  /// DER SubjectPublicKeyInfo, or PEM ("-----BEGIN PUBLIC KEY-----" or "BEGIN RSA PUBLIC
  /// KEY"), in which case the text must end with its NUL and `n` count it, as Mbed TLS wants
  /// (load_public_key_pem() does that for a C string). Copied; `key` may go afterwards.
  /// Returns kOk; kInvalidArgument when the bytes are not such a key, the key is of another
  /// type or curve than `alg` needs, is too small, or `alg` is kHS256 (no public key for it);
  /// kNoSpace when Mbed TLS's allocator ran out. Any earlier key is forgotten, also on failure
  /// (the object then checks nothing).
  Status load_public_key(auth::JwtAlg alg, const uint8_t* key, size_t n);
  /// load_public_key() of a NUL-terminated PEM text.
  Status load_public_key_pem(auth::JwtAlg alg, const char* pem);

  /// Loads an HS256 secret (`n` bytes at `secret`, copied). Returns kOk; kInvalidArgument when
  /// it is shorter than kMinSecret or starts with "-----BEGIN" (a PEM key or certificate is
  /// no secret). Any earlier key is forgotten, also on failure.
  Status load_hmac_secret(const uint8_t* secret, size_t n);

  /// True once a key is loaded.
  bool loaded() const { return loaded_; }
  /// The algorithm of the loaded key (meaningless before).
  auth::JwtAlg alg() const { return alg_; }

  /// Sets config->alg to the key's algorithm and config->verify/verify_ctx to this key.
  void bind(auth::JwtConfig* config);

  /// The auth::JwtVerifyFn: `ctx` is a JwtKey. True only when a key is loaded, `alg` is the
  /// key's algorithm and `sig` is a valid signature of `signing_input` by it.
  static bool verify_signature(void* ctx, auth::JwtAlg alg, const uint8_t* signing_input,
                               size_t n, const uint8_t* sig, size_t sig_len);

 private:
  void clear();
  bool verify(auth::JwtAlg alg, const uint8_t* input, size_t n, const uint8_t* sig,
              size_t sig_len);

  mbedtls_pk_context pk_;
  uint8_t secret_[64];
  size_t secret_len_ = 0;
  auth::JwtAlg alg_ = auth::JwtAlg::kES256;
  bool loaded_ = false;
};

}  // namespace mbedtls
EMCP_NS_END

#endif  // EMCP_MBEDTLS_JWT_KEY_H
