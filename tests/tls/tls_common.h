// tls_common.h - what the TLS tests' worlds share: the in-memory world (tls_world.h: a fake
// listener) and the lwIP world (tests/lwip/lwip_tls_test.cpp: the TLS layer over lwIP's TCP).
//
//   - randomness: one CTR-DRBG seeded from a fixed string (reset_random()), so runs repeat;
//   - credentials made at run time with Mbed TLS (P-256 keys, a self-signed CA, a server
//     certificate for "localhost" signed by it): nothing secret is committed;
//   - the clients' Mbed TLS configuration (TLS client, the CA above, VERIFY_REQUIRED);
//   - a fixed-size byte queue, and a count of the TLS records in a byte stream, read from their
//     headers (in clear on the wire: RFC 5246 6.2.1).
//
// Compiled against whichever Mbed TLS the world links: the system's libmbedtls (tls_world) or
// the boards' configuration built from source with its static pool (tests/lwip).
//
// Context: one thread.
#ifndef EMCP_TESTS_TLS_COMMON_H
#define EMCP_TESTS_TLS_COMMON_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"

namespace tls_world {

// ---- Randomness ------------------------------------------------------------------------------

/// Reseeds the world's CTR-DRBG from `seed` (a fixed entropy function): what follows repeats.
void reset_random(const char* seed = "emcp tls world");
/// Platform::random.
bool random(void* out, size_t n);
/// Mbed TLS's f_rng.
int rng(void* ctx, unsigned char* out, size_t n);

// ---- Credentials -----------------------------------------------------------------------------

struct Pem {
  uint8_t data[2048];
  size_t len = 0;  ///< including the terminating NUL (what Mbed TLS's PEM parsers want)
};
struct Credentials {
  Pem ca;         ///< self-signed CA certificate ("CN=emcp test CA")
  Pem cert;       ///< server certificate, CN=localhost, signed by the CA
  Pem key;        ///< the server certificate's private key (P-256)
  Pem other_key;  ///< a P-256 key that is not the certificate's
  bool ok = false;
};
/// Made on the first call (with reset_random("credentials") first), then kept.
const Credentials& credentials();

/// A TLS client's configuration: the CA of credentials() parsed into `ca` (init()ed by the
/// caller), the server's certificate required to verify for "localhost", rng() as its random
/// source. False when something fails.
bool client_config(mbedtls_ssl_config* conf, mbedtls_x509_crt* ca);

/// Mbed TLS's "try again" codes.
inline bool would_block(int ret) { return ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE; }

// ---- Bytes -------------------------------------------------------------------------------------

/// A byte queue of fixed capacity. `total()` counts every byte ever appended.
template <size_t N>
class Bytes {
 public:
  /// Appends what fits; false (and overflowed()) when not all of it did.
  bool append(const void* p, size_t n) {
    if (n > space()) {
      overflowed_ = true;
      n = space();
      append_some(p, n);
      return false;
    }
    append_some(p, n);
    return true;
  }
  void consume(size_t n) {
    if (n > len_) n = len_;
    off_ += n;
    len_ -= n;
    if (len_ == 0) off_ = 0;
  }
  void clear() {
    off_ = len_ = 0;
    total_ = 0;
    overflowed_ = false;
  }
  const uint8_t* data() const { return buf_ + off_; }
  const char* chars() const { return reinterpret_cast<const char*>(buf_ + off_); }
  size_t size() const { return len_; }
  bool empty() const { return len_ == 0; }
  size_t space() const { return N - len_; }
  uint64_t total() const { return total_; }
  bool overflowed() const { return overflowed_; }

 private:
  void append_some(const void* p, size_t n) {
    if (n == 0) return;
    if (off_ + len_ + n > N) {
      memmove(buf_, buf_ + off_, len_);
      off_ = 0;
    }
    memcpy(buf_ + off_ + len_, p, n);
    len_ += n;
    total_ += n;
  }
  uint8_t buf_[N];
  size_t off_ = 0;
  size_t len_ = 0;
  uint64_t total_ = 0;
  bool overflowed_ = false;
};

// ---- TLS records in a byte stream ----------------------------------------------------------------

/// Counts the records of a TLS byte stream fed in pieces of any size.
struct RecordCount {
  uint32_t records = 0;  ///< records seen whole (header and body)
  /// ... by content type, read from their headers: change_cipher_spec, alert, handshake,
  /// application_data; and the last alert record's length.
  uint32_t records_of_type[4] = {};
  uint32_t last_alert_length = 0;
  uint8_t rec_hdr[5] = {};
  size_t rec_hdr_len = 0;
  size_t rec_left = 0;
  void count_records(const uint8_t* p, size_t n);
  /// Between two records (no header or body begun).
  bool at_boundary() const { return rec_hdr_len == 0 && rec_left == 0; }
  void reset_records() { *this = RecordCount(); }
};

}  // namespace tls_world

#endif  // EMCP_TESTS_TLS_COMMON_H
