#include "tls_common.h"

#include <stdio.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ecp.h"
#include "mbedtls/pk.h"
#include "mbedtls/x509_crt.h"

namespace tls_world {

namespace {

// ---- Randomness: a CTR-DRBG whose "entropy" is a fixed function of a seed string.

mbedtls_ctr_drbg_context g_drbg;
bool g_drbg_ready = false;
char g_seed[64];

int fixed_entropy(void* ctx, unsigned char* out, size_t n) {
  const char* s = static_cast<const char*>(ctx);
  const size_t k = strlen(s);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>(static_cast<size_t>(s[i % k]) * 7u + i);
  return 0;
}

// ---- Credentials

bool make_key(mbedtls_pk_context* pk) {
  return mbedtls_pk_setup(pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) == 0 &&
         mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(*pk), &rng, nullptr) == 0;
}

bool pem_len(Pem& out) {
  const void* end = memchr(out.data, '\0', sizeof out.data);
  if (end == nullptr) return false;
  out.len = static_cast<size_t>(static_cast<const uint8_t*>(end) - out.data) + 1;
  return true;
}

bool write_key(mbedtls_pk_context* pk, Pem& out) {
  return mbedtls_pk_write_key_pem(pk, out.data, sizeof out.data) == 0 && pem_len(out);
}

bool write_cert(mbedtls_pk_context* subject_key, mbedtls_pk_context* issuer_key, const char* subject,
                const char* issuer, bool ca, int serial, Pem& out) {
  mbedtls_x509write_cert w;
  mbedtls_x509write_crt_init(&w);
  mbedtls_mpi sn;
  mbedtls_mpi_init(&sn);
  mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
  mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
  mbedtls_x509write_crt_set_subject_key(&w, subject_key);
  mbedtls_x509write_crt_set_issuer_key(&w, issuer_key);
  const bool ok =
      mbedtls_mpi_lset(&sn, serial) == 0 && mbedtls_x509write_crt_set_serial(&w, &sn) == 0 &&
      mbedtls_x509write_crt_set_subject_name(&w, subject) == 0 &&
      mbedtls_x509write_crt_set_issuer_name(&w, issuer) == 0 &&
      mbedtls_x509write_crt_set_validity(&w, "20200101000000", "20991231235959") == 0 &&
      mbedtls_x509write_crt_set_basic_constraints(&w, ca ? 1 : 0, ca ? 0 : -1) == 0 &&
      mbedtls_x509write_crt_set_key_usage(
          &w, ca ? MBEDTLS_X509_KU_KEY_CERT_SIGN : MBEDTLS_X509_KU_DIGITAL_SIGNATURE) == 0 &&
      mbedtls_x509write_crt_set_subject_key_identifier(&w) == 0 &&
      mbedtls_x509write_crt_set_authority_key_identifier(&w) == 0 &&
      mbedtls_x509write_crt_pem(&w, out.data, sizeof out.data, &rng, nullptr) == 0 && pem_len(out);
  mbedtls_mpi_free(&sn);
  mbedtls_x509write_crt_free(&w);
  return ok;
}

bool make_credentials(Credentials& c) {
  mbedtls_pk_context ca_key, server_key, other_key;
  mbedtls_pk_init(&ca_key);
  mbedtls_pk_init(&server_key);
  mbedtls_pk_init(&other_key);
  const bool ok = make_key(&ca_key) && make_key(&server_key) && make_key(&other_key) &&
                  write_cert(&ca_key, &ca_key, "CN=emcp test CA,O=emcp", "CN=emcp test CA,O=emcp", true, 1, c.ca) &&
                  write_cert(&server_key, &ca_key, "CN=localhost,O=emcp", "CN=emcp test CA,O=emcp", false, 2, c.cert) &&
                  write_key(&server_key, c.key) && write_key(&other_key, c.other_key);
  mbedtls_pk_free(&other_key);
  mbedtls_pk_free(&server_key);
  mbedtls_pk_free(&ca_key);
  return ok;
}

Credentials g_credentials;
bool g_credentials_made = false;

}  // namespace

void reset_random(const char* seed) {
  if (g_drbg_ready) mbedtls_ctr_drbg_free(&g_drbg);
  snprintf(g_seed, sizeof g_seed, "%s", seed);
  mbedtls_ctr_drbg_init(&g_drbg);
  g_drbg_ready = mbedtls_ctr_drbg_seed(&g_drbg, &fixed_entropy, g_seed,
                                       reinterpret_cast<const unsigned char*>(g_seed), strlen(g_seed)) == 0;
}

bool random(void* out, size_t n) {
  if (!g_drbg_ready) reset_random();
  auto* p = static_cast<unsigned char*>(out);
  while (n != 0) {
    const size_t k = n < MBEDTLS_CTR_DRBG_MAX_REQUEST ? n : MBEDTLS_CTR_DRBG_MAX_REQUEST;
    if (mbedtls_ctr_drbg_random(&g_drbg, p, k) != 0) return false;
    p += k;
    n -= k;
  }
  return true;
}

int rng(void*, unsigned char* out, size_t n) { return random(out, n) ? 0 : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED; }

const Credentials& credentials() {
  if (!g_credentials_made) {
    reset_random("credentials");
    g_credentials.ok = make_credentials(g_credentials);
    g_credentials_made = true;
  }
  return g_credentials;
}

bool client_config(mbedtls_ssl_config* conf, mbedtls_x509_crt* ca) {
  const Credentials& cred = credentials();
  if (!cred.ok ||
      mbedtls_ssl_config_defaults(conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                  MBEDTLS_SSL_PRESET_DEFAULT) != 0 ||
      mbedtls_x509_crt_parse(ca, cred.ca.data, cred.ca.len) != 0)
    return false;
  mbedtls_ssl_conf_authmode(conf, MBEDTLS_SSL_VERIFY_REQUIRED);
  mbedtls_ssl_conf_ca_chain(conf, ca, nullptr);
  mbedtls_ssl_conf_rng(conf, &rng, nullptr);
  return true;
}

void RecordCount::count_records(const uint8_t* p, size_t n) {
  while (n != 0) {
    if (rec_left != 0) {
      const size_t k = n < rec_left ? n : rec_left;
      rec_left -= k;
      p += k;
      n -= k;
      if (rec_left == 0) ++records;
      continue;
    }
    rec_hdr[rec_hdr_len++] = *p++;
    --n;
    if (rec_hdr_len == 5) {
      rec_hdr_len = 0;
      rec_left = static_cast<size_t>(rec_hdr[3]) << 8 | rec_hdr[4];
      if (rec_hdr[0] >= 20 && rec_hdr[0] <= 23) ++records_of_type[rec_hdr[0] - 20];
      if (rec_hdr[0] == 21) last_alert_length = static_cast<uint32_t>(rec_left);
      if (rec_left == 0) ++records;
    }
  }
}

}  // namespace tls_world
