#include "emcp/mbedtls/jwt_key.h"

#include <mbedtls/asn1.h>
#include <mbedtls/bignum.h>
#include <mbedtls/ecp.h>
#include <mbedtls/md.h>
#include <mbedtls/pem.h>
#include <mbedtls/platform_util.h>
#include <mbedtls/rsa.h>
#include <mbedtls/sha256.h>
#include <mbedtls/version.h>
#include <string.h>

EMCP_NS_BEGIN
namespace mbedtls {

namespace {

using auth::JwtAlg;

void sha256(const uint8_t* data, size_t n, uint8_t out[32]) {
#if MBEDTLS_VERSION_MAJOR >= 3
  (void)mbedtls_sha256(data, n, out, 0);
#else
  (void)mbedtls_sha256_ret(data, n, out, 0);
#endif
}

// True when the (possibly composite) Mbed TLS error `err` says an allocation failed.
bool alloc_failed(int err) {
  if (err >= 0) return false;
  const int high = -((-err) & 0xFF80);
  const int low = -((-err) & 0x007F);
  return high == MBEDTLS_ERR_PK_ALLOC_FAILED || high == MBEDTLS_ERR_PEM_ALLOC_FAILED ||
         high == MBEDTLS_ERR_ECP_ALLOC_FAILED || low == MBEDTLS_ERR_MPI_ALLOC_FAILED ||
         low == MBEDTLS_ERR_ASN1_ALLOC_FAILED;
}

mbedtls_ecp_group_id ec_group(const mbedtls_pk_context& pk) {
#if MBEDTLS_VERSION_MAJOR >= 3
  return mbedtls_pk_ec(pk)->MBEDTLS_PRIVATE(grp).id;
#else
  return mbedtls_pk_ec(pk)->grp.id;
#endif
}

// Writes the DER INTEGER of the 32-byte big-endian unsigned `v` at `out`; returns its length
// (at most 35: tag, length, a leading zero when the top bit is set, 32 bytes).
size_t der_integer(const uint8_t* v, uint8_t* out) {
  size_t skip = 0;
  while (skip < 31 && v[skip] == 0) ++skip;  // minimal: no leading zero bytes (one for zero)
  const size_t len = 32 - skip;
  const bool pad = (v[skip] & 0x80) != 0;  // positive: a zero byte before a set top bit
  size_t o = 0;
  out[o++] = 0x02;
  out[o++] = static_cast<uint8_t>(len + (pad ? 1 : 0));
  if (pad) out[o++] = 0x00;
  memcpy(out + o, v + skip, len);
  return o + len;
}

// The ECDSA-Sig-Value (RFC 3279 2.2.3: SEQUENCE { r INTEGER, s INTEGER }) of the JWS R||S
// (RFC 7518 3.4), as Mbed TLS's pk layer verifies it. `out` holds at least 72 bytes.
size_t der_ecdsa_signature(const uint8_t rs[64], uint8_t* out) {
  uint8_t body[70];
  size_t n = der_integer(rs, body);
  n += der_integer(rs + 32, body + n);
  out[0] = 0x30;
  out[1] = static_cast<uint8_t>(n);  // at most 70: short form
  memcpy(out + 2, body, n);
  return n + 2;
}

// Equality of two n-byte buffers in time that depends on n only.
bool equal_ct(const uint8_t* a, const uint8_t* b, size_t n) {
  volatile uint8_t diff = 0;
  for (size_t i = 0; i < n; ++i) diff = static_cast<uint8_t>(diff | (a[i] ^ b[i]));
  return diff == 0;
}

}  // namespace

JwtKey::JwtKey() { mbedtls_pk_init(&pk_); }

JwtKey::~JwtKey() { clear(); }

void JwtKey::clear() {
  mbedtls_pk_free(&pk_);
  mbedtls_pk_init(&pk_);
  mbedtls_platform_zeroize(secret_, sizeof secret_);
  secret_len_ = 0;
  loaded_ = false;
}

Status JwtKey::load_public_key(JwtAlg alg, const uint8_t* key, size_t n) {
  clear();
  if (key == nullptr || n == 0 || (alg != JwtAlg::kES256 && alg != JwtAlg::kRS256))
    return Status::kInvalidArgument;
  const int err = mbedtls_pk_parse_public_key(&pk_, key, n);
  if (err != 0) {
    clear();
    return alloc_failed(err) ? Status::kNoSpace : Status::kInvalidArgument;
  }
  bool ok = false;
  const mbedtls_pk_type_t type = mbedtls_pk_get_type(&pk_);
  if (alg == JwtAlg::kES256) {
    // id-ecPublicKey on P-256 (an ECDH-only key, id-ecDH, cannot do ECDSA).
    ok = (type == MBEDTLS_PK_ECKEY || type == MBEDTLS_PK_ECDSA) &&
         mbedtls_pk_can_do(&pk_, MBEDTLS_PK_ECDSA) != 0 &&
         ec_group(pk_) == MBEDTLS_ECP_DP_SECP256R1;
  } else {
    ok = type == MBEDTLS_PK_RSA && mbedtls_pk_get_bitlen(&pk_) >= kMinRsaBits;
    // PKCS#1 v1.5 is the parser's default; say so rather than rely on it.
#if MBEDTLS_VERSION_MAJOR >= 3
    if (ok) ok = mbedtls_rsa_set_padding(mbedtls_pk_rsa(pk_), MBEDTLS_RSA_PKCS_V15, MBEDTLS_MD_NONE) == 0;
#else
    if (ok) mbedtls_rsa_set_padding(mbedtls_pk_rsa(pk_), MBEDTLS_RSA_PKCS_V15, MBEDTLS_MD_NONE);
#endif
  }
  if (!ok) {
    clear();
    return Status::kInvalidArgument;
  }
  alg_ = alg;
  loaded_ = true;
  return Status::kOk;
}

Status JwtKey::load_public_key_pem(JwtAlg alg, const char* pem) {
  if (pem == nullptr) {
    clear();
    return Status::kInvalidArgument;
  }
  return load_public_key(alg, reinterpret_cast<const uint8_t*>(pem), strlen(pem) + 1);
}

Status JwtKey::load_hmac_secret(const uint8_t* secret, size_t n) {
  clear();
  static const char kPem[] = "-----BEGIN";
  if (secret == nullptr || n < kMinSecret ||
      memcmp(secret, kPem, sizeof kPem - 1) == 0)  // n >= 32 > 10
    return Status::kInvalidArgument;
  if (n > sizeof secret_) {
    sha256(secret, n, secret_);  // HMAC's own treatment of a key longer than the block
    secret_len_ = 32;
  } else {
    memcpy(secret_, secret, n);
    secret_len_ = n;
  }
  alg_ = JwtAlg::kHS256;
  loaded_ = true;
  return Status::kOk;
}

void JwtKey::bind(auth::JwtConfig* config) {
  config->alg = alg_;
  config->verify = &JwtKey::verify_signature;
  config->verify_ctx = this;
}

bool JwtKey::verify_signature(void* ctx, JwtAlg alg, const uint8_t* signing_input, size_t n,
                              const uint8_t* sig, size_t sig_len) {
  if (ctx == nullptr) return false;
  return static_cast<JwtKey*>(ctx)->verify(alg, signing_input, n, sig, sig_len);
}

bool JwtKey::verify(JwtAlg alg, const uint8_t* input, size_t n, const uint8_t* sig,
                    size_t sig_len) {
  if (!loaded_ || alg != alg_ || (n != 0 && input == nullptr) || (sig_len != 0 && sig == nullptr))
    return false;
  switch (alg_) {
    case JwtAlg::kHS256: {
      if (sig_len != 32) return false;
      uint8_t mac[32];
      const int err = mbedtls_md_hmac(mbedtls_md_info_from_type(MBEDTLS_MD_SHA256), secret_,
                                      secret_len_, input, n, mac);
      const bool ok = err == 0 && equal_ct(mac, sig, sizeof mac);
      mbedtls_platform_zeroize(mac, sizeof mac);
      return ok;
    }
    case JwtAlg::kES256: {
      if (sig_len != 64) return false;
      uint8_t hash[32];
      sha256(input, n, hash);
      uint8_t der[72];
      const size_t der_len = der_ecdsa_signature(sig, der);
      return mbedtls_pk_verify(&pk_, MBEDTLS_MD_SHA256, hash, sizeof hash, der, der_len) == 0;
    }
    case JwtAlg::kRS256: {
      if (sig_len != mbedtls_pk_get_len(&pk_)) return false;
      uint8_t hash[32];
      sha256(input, n, hash);
      return mbedtls_pk_verify(&pk_, MBEDTLS_MD_SHA256, hash, sizeof hash, sig, sig_len) == 0;
    }
  }
  return false;
}

}  // namespace mbedtls
EMCP_NS_END
