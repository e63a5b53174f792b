#include "emcp/mbedtls/tls.h"

#include <string.h>

#include "emcp/mbedtls/pool.h"
#include "mbedtls/error.h"
#include "mbedtls/net_sockets.h"

EMCP_NS_BEGIN
namespace mbedtls {

namespace {

// TLS 1.2 suites: ECDHE for forward secrecy, AEAD only. The ECDSA ones serve an EC key, the
// RSA ones an RSA key (Mbed TLS picks those the certificate can serve).
const int kCiphersuites[] = {
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305_SHA256,
    MBEDTLS_TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384,
    0,
};
const mbedtls_ecp_group_id kCurves[] = {MBEDTLS_ECP_DP_SECP256R1, MBEDTLS_ECP_DP_NONE};

// A fatal internal_error alert, TLS 1.2 record layer: the answer to a connection refused before
// its handshake (no memory for it), instead of closing without a word.
const char kRefusalAlert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50};

// Plain HTTP sent to the TLS port: said in plain HTTP (a TLS record starts with its type, 20 to
// 24; a request with an upper-case method letter), then the connection ends.
const char kPlainHttpAnswer[] =
    "HTTP/1.1 400 Bad Request\r\nContent-Type: text/plain\r\nContent-Length: 34\r\nConnection: close\r\n\r\n"
    "this port speaks HTTPS, not HTTP\r\n";

Status status_of(int code) {
  if (code == MBEDTLS_ERR_SSL_ALLOC_FAILED || code == MBEDTLS_ERR_X509_ALLOC_FAILED ||
      code == MBEDTLS_ERR_PK_ALLOC_FAILED)
    return Status::kNoSpace;
  return Status::kInvalidArgument;
}

bool would_block(int ret) { return ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE; }

}  // namespace

// ---- TlsContext -------------------------------------------------------------------------------

TlsContext::TlsContext() { init_parts(); }

void TlsContext::init_parts() {
  mbedtls_ssl_config_init(&conf_);
  mbedtls_ctr_drbg_init(&drbg_);
  mbedtls_x509_crt_init(&cert_);
  mbedtls_x509_crt_init(&ca_);
  mbedtls_pk_init(&key_);
#if defined(MBEDTLS_SSL_TICKET_C)
  mbedtls_ssl_ticket_init(&ticket_);
#endif
}

TlsContext::~TlsContext() { release(); }

void TlsContext::release() {
#if defined(MBEDTLS_SSL_TICKET_C)
  mbedtls_ssl_ticket_free(&ticket_);
#endif
  mbedtls_pk_free(&key_);
  mbedtls_x509_crt_free(&cert_);
  mbedtls_x509_crt_free(&ca_);
  mbedtls_ctr_drbg_free(&drbg_);
  mbedtls_ssl_config_free(&conf_);
  ready_ = false;
}

#if defined(MBEDTLS_SSL_SESSION_TICKETS) && defined(MBEDTLS_SSL_TICKET_C)
// mbedtls_ssl_conf_session_tickets_cb gives both callbacks one context: this object, whose
// ticket_ they use; the parse callback also counts the tickets that let a client resume.
int TlsContext::ticket_parse(void* ctx, mbedtls_ssl_session* session, unsigned char* buf, size_t len) {
  auto* self = static_cast<TlsContext*>(ctx);
  const int ret = mbedtls_ssl_ticket_parse(&self->ticket_, session, buf, len);
  if (ret == 0) ++self->tickets_accepted_;
  return ret;
}

int TlsContext::ticket_write(void* ctx, const mbedtls_ssl_session* session, unsigned char* start,
                             const unsigned char* end, size_t* tlen, uint32_t* lifetime) {
  return mbedtls_ssl_ticket_write(&static_cast<TlsContext*>(ctx)->ticket_, session, start, end, tlen, lifetime);
}
#endif

int TlsContext::entropy(void* ctx, unsigned char* out, size_t n) {
  const Platform* p = static_cast<const Platform*>(ctx);
  return p->random(out, n) ? 0 : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED;
}

Status TlsContext::start(const Platform& platform, const TlsOptions& options) {
  // What an earlier init() left goes first: a loaded context, or one that failed halfway (its
  // certificate parsed, its key set up: parsing into them again would fail or append).
  release();
  init_parts();
  platform_ = platform;
  options_ = options;
  client_ = false;
  pool_set_clock(platform_);
  if (platform_.random == nullptr || platform_.now_ms == nullptr) return Status::kInvalidArgument;
  static const char kPersonal[] = "emcp tls";
  const int ret = mbedtls_ctr_drbg_seed(&drbg_, &TlsContext::entropy, &platform_,
                                        reinterpret_cast<const unsigned char*>(kPersonal), sizeof kPersonal - 1);
  if (ret != 0) {
    last_error_ = ret;
    return Status::kIoError;
  }
  return Status::kOk;
}

Status TlsContext::configure(int endpoint) {
  int ret = mbedtls_ssl_config_defaults(&conf_, endpoint, MBEDTLS_SSL_TRANSPORT_STREAM, MBEDTLS_SSL_PRESET_DEFAULT);
  if (ret != 0) {
    last_error_ = ret;
    return status_of(ret);
  }
  mbedtls_ssl_conf_min_version(&conf_, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
  mbedtls_ssl_conf_max_version(&conf_, MBEDTLS_SSL_MAJOR_VERSION_3, MBEDTLS_SSL_MINOR_VERSION_3);
  mbedtls_ssl_conf_ciphersuites(&conf_, kCiphersuites);
  mbedtls_ssl_conf_curves(&conf_, kCurves);
  mbedtls_ssl_conf_rng(&conf_, mbedtls_ctr_drbg_random, &drbg_);
#if defined(MBEDTLS_SSL_RENEGOTIATION)
  mbedtls_ssl_conf_renegotiation(&conf_, MBEDTLS_SSL_RENEGOTIATION_DISABLED);
#endif
  return Status::kOk;
}

Status TlsContext::init(const Platform& platform, const uint8_t* cert, size_t cert_len, const uint8_t* key,
                        size_t key_len, const TlsOptions& options) {
#if !defined(MBEDTLS_SSL_SRV_C)
  (void)platform, (void)cert, (void)cert_len, (void)key, (void)key_len, (void)options;
  return Status::kInvalidState;
#else
  Status st = start(platform, options);
  if (st != Status::kOk) return st;
  int ret;
  if ((ret = mbedtls_x509_crt_parse(&cert_, cert, cert_len)) != 0 ||
      (ret = mbedtls_pk_parse_key(&key_, key, key_len, nullptr, 0)) != 0 ||
      (ret = mbedtls_pk_check_pair(&cert_.pk, &key_)) != 0) {
    last_error_ = ret;
    return status_of(ret);
  }
  if ((st = configure(MBEDTLS_SSL_IS_SERVER)) != Status::kOk) return st;
  if ((ret = mbedtls_ssl_conf_own_cert(&conf_, &cert_, &key_)) != 0) {
    last_error_ = ret;
    return status_of(ret);
  }
#if defined(MBEDTLS_SSL_SESSION_TICKETS) && defined(MBEDTLS_SSL_TICKET_C)
  if (options_.session_tickets) {
    if ((ret = mbedtls_ssl_ticket_setup(&ticket_, mbedtls_ctr_drbg_random, &drbg_, MBEDTLS_CIPHER_AES_256_GCM,
                                        options_.ticket_lifetime_s)) != 0) {
      last_error_ = ret;
      return status_of(ret);
    }
    mbedtls_ssl_conf_session_tickets_cb(&conf_, &TlsContext::ticket_write, &TlsContext::ticket_parse, this);
  }
#endif
  ready_ = true;
  return Status::kOk;
#endif
}

Status TlsContext::init_client(const Platform& platform, const uint8_t* ca, size_t ca_len, const uint8_t* cert,
                               size_t cert_len, const uint8_t* key, size_t key_len, const TlsOptions& options) {
#if !defined(MBEDTLS_SSL_CLI_C)
  (void)platform, (void)ca, (void)ca_len, (void)cert, (void)cert_len, (void)key, (void)key_len, (void)options;
  return Status::kInvalidState;
#else
  Status st = start(platform, options);
  if (st != Status::kOk) return st;
  int ret;
  if (ca == nullptr || (ret = mbedtls_x509_crt_parse(&ca_, ca, ca_len)) != 0) {
    last_error_ = ca == nullptr ? MBEDTLS_ERR_X509_BAD_INPUT_DATA : ret;
    return ca == nullptr ? Status::kInvalidArgument : status_of(ret);
  }
  if ((cert == nullptr) != (key == nullptr)) return Status::kInvalidArgument;
  if (cert != nullptr && ((ret = mbedtls_x509_crt_parse(&cert_, cert, cert_len)) != 0 ||
                          (ret = mbedtls_pk_parse_key(&key_, key, key_len, nullptr, 0)) != 0 ||
                          (ret = mbedtls_pk_check_pair(&cert_.pk, &key_)) != 0)) {
    last_error_ = ret;
    return status_of(ret);
  }
  if ((st = configure(MBEDTLS_SSL_IS_CLIENT)) != Status::kOk) return st;
  // The broker is always verified: its chain against the CAs, its name against the host.
  mbedtls_ssl_conf_authmode(&conf_, MBEDTLS_SSL_VERIFY_REQUIRED);
  mbedtls_ssl_conf_ca_chain(&conf_, &ca_, nullptr);
  if (cert != nullptr && (ret = mbedtls_ssl_conf_own_cert(&conf_, &cert_, &key_)) != 0) {
    last_error_ = ret;
    return status_of(ret);
  }
#if defined(MBEDTLS_SSL_MAX_FRAGMENT_LENGTH)
  // Records no larger than the record buffers: asked of the server (RFC 6066's
  // max_fragment_length, the lesser of the input and output buffers' lengths, as Mbed TLS
  // advertises only that), which may ignore it (a larger record then ends the connection with
  // record_overflow).
  constexpr size_t kRecord = MBEDTLS_SSL_IN_CONTENT_LEN < MBEDTLS_SSL_OUT_CONTENT_LEN ? MBEDTLS_SSL_IN_CONTENT_LEN
                                                                                    : MBEDTLS_SSL_OUT_CONTENT_LEN;
  if (kRecord < 16384 &&
      (ret = mbedtls_ssl_conf_max_frag_len(&conf_, kRecord >= 4096   ? MBEDTLS_SSL_MAX_FRAG_LEN_4096
                                                   : kRecord >= 2048 ? MBEDTLS_SSL_MAX_FRAG_LEN_2048
                                                   : kRecord >= 1024 ? MBEDTLS_SSL_MAX_FRAG_LEN_1024
                                                                     : MBEDTLS_SSL_MAX_FRAG_LEN_512)) != 0) {
    last_error_ = ret;
    return status_of(ret);
  }
#endif
  client_ = true;
  ready_ = true;
  return Status::kOk;
#endif
}

const char* TlsContext::error_text(int code) {
  switch (code) {
    case 0: return "no error";
    case MBEDTLS_ERR_SSL_ALLOC_FAILED: return "out of TLS memory";
    case MBEDTLS_ERR_SSL_BAD_HS_CLIENT_HELLO: return "not a TLS ClientHello";
    case MBEDTLS_ERR_SSL_TIMEOUT: return "handshake timed out";
    case MBEDTLS_ERR_SSL_BAD_HS_PROTOCOL_VERSION: return "protocol version not supported";
    case MBEDTLS_ERR_SSL_NO_CIPHER_CHOSEN: return "no cipher suite in common";
    case MBEDTLS_ERR_SSL_NO_USABLE_CIPHERSUITE: return "no usable cipher suite";
    case MBEDTLS_ERR_SSL_INVALID_RECORD: return "invalid record";
    case MBEDTLS_ERR_SSL_INVALID_MAC: return "bad record MAC";
    case MBEDTLS_ERR_SSL_UNEXPECTED_MESSAGE: return "unexpected message";
    case MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE: return "the peer sent a fatal alert";
    case MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY: return "the peer closed";
    case MBEDTLS_ERR_SSL_CONN_EOF: return "connection ended";
    case MBEDTLS_ERR_X509_CERT_VERIFY_FAILED: return "the server's certificate did not verify";
    case MBEDTLS_ERR_X509_INVALID_FORMAT: return "certificate: invalid format";
    case MBEDTLS_ERR_PK_KEY_INVALID_FORMAT: return "key: invalid format";
    case MBEDTLS_ERR_PK_BAD_INPUT_DATA: return "key: bad input";
    case MBEDTLS_ERR_PK_TYPE_MISMATCH: return "key: not the certificate's type";
    case MBEDTLS_ERR_ECP_BAD_INPUT_DATA: return "key: not the certificate's key";
    case MBEDTLS_ERR_RSA_KEY_CHECK_FAILED: return "key: not the certificate's key";
    case MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED: return "random source failed";
    default: break;
  }
  if (code == MBEDTLS_ERR_X509_ALLOC_FAILED || code == MBEDTLS_ERR_PK_ALLOC_FAILED) return "out of TLS memory";
  if (code <= -0x2000 && code > -0x3000) return "certificate does not parse";
  if (code <= -0x3D00 && code > -0x3F80) return "key does not parse";
  return "TLS error";
}

// ---- TlsLayer ---------------------------------------------------------------------------------

TlsLayer::TlsLayer(TlsContext& context, const transport::HttpPort& outer, Span<TlsConn> conns)
    : context_(context), outer_(outer), conns_(conns) {}
// (The slots may be a derived class's member, initialised after this constructor: they are
// set up in open().)

TlsLayer::~TlsLayer() {
  for (TlsConn& t : conns_)
    if (t.used) release(t);
}

transport::HttpPort TlsLayer::port_interface() { return transport::HttpPort::of(this); }

const transport::ConnectionHandler::Ops TlsLayer::kOps = {
    [](void* ctx, const transport::PeerAddress& peer) { return static_cast<TlsLayer*>(ctx)->open(peer); },
    [](void* ctx, uint16_t conn, const void* data, size_t n) {
      return static_cast<TlsLayer*>(ctx)->receive(conn, data, n);
    },
    [](void* ctx, uint16_t conn) { return static_cast<TlsLayer*>(ctx)->wants_input(conn); },
    [](void* ctx, uint16_t conn) { static_cast<TlsLayer*>(ctx)->writable(conn); },
    [](void* ctx, uint16_t conn) { static_cast<TlsLayer*>(ctx)->closed(conn); },
    [](void* ctx) { static_cast<TlsLayer*>(ctx)->poll(); },
    [](void* ctx) { return static_cast<TlsLayer*>(ctx)->inner_.now_ms(); },
    [](void*) { return StrView(kRefusalAlert, sizeof kRefusalAlert); },
};

transport::ConnectionHandler TlsLayer::handler() { return transport::ConnectionHandler(&kOps, this); }

bool TlsLayer::resumed(uint16_t conn) const { return live(conn) && conns_[conn].resumed; }

// Leaves the slot as open() takes it (and as it starts: TlsConn's initializers).
void TlsLayer::release(TlsConn& t) {
  for (TlsConn& o : conns_) o.measured = false;  // its memory goes back: no figure of another's is exact
  mbedtls_ssl_free(&t.ssl);
  t.used = false;
  t.started = false;
  t.measured = false;
  t.established = false;
  t.engine_waits = false;
  t.resumed = false;
  t.in = nullptr;
  t.in_len = t.in_used = 0;
  t.in_flight = 0;
  t.carry_off = t.carry_len = 0;
}

// ---- Dialed connections (a client context) ----

transport::Dialer TlsLayer::dialer(const transport::Dialer& outer) {
  outer_dialer_ = outer;
  transport::Dialer d;
  d.dial = [](void* ctx, const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler h) {
    return static_cast<TlsLayer*>(ctx)->dial(host, port, conn, h);
  };
  d.port = port_interface();
  d.ctx = this;
  return d;
}

Status TlsLayer::dial(const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler engine) {
  if (!context_.ready() || !context_.client() || !outer_dialer_.valid()) return Status::kInvalidState;
  TlsConn* slot = nullptr;
  for (TlsConn& t : conns_)
    if (!t.used) {
      slot = &t;
      break;
    }
  if (slot == nullptr) return Status::kNoSpace;
  TlsConn& t = *slot;
  inner_ = engine;
  start_measuring(t);
  mbedtls_ssl_init(&t.ssl);
  int ret = mbedtls_ssl_setup(&t.ssl, context_.config());
  // SNI and the name verified: the host's, or the one the options give for it.
  const char* name = context_.options().server_name != nullptr ? context_.options().server_name : host;
  if (ret == 0) ret = mbedtls_ssl_set_hostname(&t.ssl, name);
  if (ret != 0) {
    mbedtls_ssl_free(&t.ssl);
    context_.note_error(ret);
    if (ret == MBEDTLS_ERR_SSL_ALLOC_FAILED) ++stats_.refused_memory;
    return ret == MBEDTLS_ERR_SSL_ALLOC_FAILED ? Status::kNoSpace : Status::kInvalidArgument;
  }
  mbedtls_ssl_set_bio(&t.ssl, &t, &TlsLayer::bio_send, &TlsLayer::bio_recv, nullptr);
  t.owner = this;
  t.used = true;
  t.started = true;  // no plaintext check: the server speaks after our ClientHello
  t.inner_conn = conn;
  t.opened_ms = inner_.now_ms();
  const Status s = outer_dialer_.dial(outer_dialer_.ctx, host, port, index(t), handler());
  if (s != Status::kOk) release(t);
  return s;
}

// The pool's figures for one handshake: measured when no other connection opens or ends
// between its open and its end (their buffers would be counted in, or out, of its figures);
// one that opens now spoils the measurement of a handshake still running.
void TlsLayer::start_measuring(TlsConn& t) {
  bool other_handshake = false;
  for (TlsConn& o : conns_) {
    other_handshake = other_handshake || (o.used && !o.established);
    o.measured = false;
  }
  t.measured = !other_handshake;
  t.pool_base = static_cast<uint32_t>(pool_stats().in_use);
  if (t.measured) pool_mark();
}

// ---- The listener's side (ConnectionHandler) ----

int TlsLayer::open(const transport::PeerAddress& peer) {
  if (!context_.ready()) return -1;
  const int conn = inner_.open(peer);
  if (conn < 0) return -1;
  if (static_cast<size_t>(conn) >= conns_.size() || conns_[static_cast<size_t>(conn)].used) {
    inner_.closed(static_cast<uint16_t>(conn));
    return -1;
  }
  TlsConn& t = conns_[static_cast<size_t>(conn)];
  start_measuring(t);
  mbedtls_ssl_init(&t.ssl);
  const int ret = mbedtls_ssl_setup(&t.ssl, context_.config());
  if (ret != 0) {
    // Its record buffers do not fit (the pool is taken by the others): refused, an alert.
    mbedtls_ssl_free(&t.ssl);
    context_.note_error(ret);
    ++stats_.refused_memory;
    inner_.closed(static_cast<uint16_t>(conn));
    return -1;
  }
  mbedtls_ssl_set_bio(&t.ssl, &t, &TlsLayer::bio_send, &TlsLayer::bio_recv, nullptr);
  t.owner = this;
  t.used = true;  // the rest is as release() (or the initializers) left it
  t.inner_conn = static_cast<uint16_t>(conn);
  t.opened_ms = inner_.now_ms();
  return conn;
}

size_t TlsLayer::receive(uint16_t conn, const void* data, size_t n) {
  if (!live(conn)) return n;
  TlsConn& t = conns_[conn];
  if (!t.started && n != 0 && !context_.client()) {
    t.started = true;
    const uint8_t first = *static_cast<const uint8_t*>(data);
    if (first >= 'A' && first <= 'Z') {
      size_t taken = 0;
      (void)outer_.write(outer_.ctx, conn, kPlainHttpAnswer, sizeof kPlainHttpAnswer - 1, &taken);
      ++stats_.failed;
      fail(t, MBEDTLS_ERR_SSL_BAD_HS_CLIENT_HELLO);
      return n;
    }
  }
  t.in = static_cast<const uint8_t*>(data);
  t.in_len = n;
  t.in_used = 0;
  step(t);
  if (!t.used) return n;  // ended meanwhile: the rest is nobody's
  t.in = nullptr;
  const size_t used = t.in_used;
  t.in_len = t.in_used = 0;
  return used;
}

bool TlsLayer::wants_input(uint16_t conn) const {
  if (!live(conn)) return false;
  const TlsConn& t = conns_[conn];
  // The handshake reads the client's next flight only once its own is out (writable()).
  if (!t.established) return t.ssl.out_left == 0;
  return t.carry_len == 0 && inner_.wants_input(t.inner_conn);
}

void TlsLayer::writable(uint16_t conn) {
  if (!live(conn)) return;
  TlsConn& t = conns_[conn];
  if (!t.established) {
    // The handshake sends what is left of its flight first, then goes on (flush() would run
    // it inside mbedtls_ssl_write, whose "wants the client's next flight" is no failure).
    step(t);
    return;
  }
  const int ret = flush(t);
  if (ret == MBEDTLS_ERR_SSL_WANT_WRITE) return;  // still going out: the listener calls again
  if (ret != 0) {
    fail(t, ret);
    return;
  }
  if (t.engine_waits) {
    t.engine_waits = false;
    inner_.writable(t.inner_conn);
    if (!t.used) return;
  }
  deliver(t);
}

void TlsLayer::closed(uint16_t conn) {
  if (!live(conn)) return;
  const uint16_t inner = conns_[conn].inner_conn;
  release(conns_[conn]);
  inner_.closed(inner);
}

void TlsLayer::poll() {
  const uint64_t now = inner_.now_ms();
  for (TlsConn& t : conns_) {
    if (t.used && !t.established && now - t.opened_ms >= context_.options().handshake_timeout_ms) {
      ++stats_.timed_out;
      fail(t, MBEDTLS_ERR_SSL_TIMEOUT);
    }
  }
  inner_.poll();
  // Plaintext the engine could not take before (it was answering) goes in now that it may.
  for (TlsConn& t : conns_)
    if (t.used && t.established) deliver(t);
}

void TlsLayer::step(TlsConn& t) {
  if (!t.established) {
    // A ticket that parses means the handshake resumes that session (no certificate, no key
    // exchange): counted around the call, the loop having one connection in hand at a time.
    const uint32_t tickets = context_.tickets_accepted();
    const int ret = mbedtls_ssl_handshake(&t.ssl);
    if (context_.tickets_accepted() != tickets) t.resumed = true;
    if (would_block(ret)) return;
    if (ret != 0) {
      ++stats_.failed;
      fail(t, ret);
      return;
    }
    t.established = true;
    ++stats_.handshakes;
    if (t.resumed) ++stats_.resumed;
    if (context_.client()) {
      // A dialed connection is established for the engine now (it has waited for writable()).
      inner_.writable(t.inner_conn);
      if (!t.used) return;
    }
    if (t.measured) {
      t.measured = false;
      const uint32_t peak = static_cast<uint32_t>(pool_peak_since_mark());
      if (peak > stats_.handshake_peak) stats_.handshake_peak = peak;
      const size_t now_in_use = pool_stats().in_use;
      const uint32_t kept = now_in_use > t.pool_base ? static_cast<uint32_t>(now_in_use - t.pool_base) : 0;
      if (kept > stats_.established_size) stats_.established_size = kept;
    }
  }
  deliver(t);
}

void TlsLayer::deliver(TlsConn& t) {
  const uint16_t conn = t.inner_conn;
  for (int rounds = 0; rounds < 64 && t.used; ++rounds) {
    if (t.carry_len != 0) {
      if (!inner_.wants_input(conn)) return;
      const size_t took = inner_.receive(conn, t.carry + t.carry_off, t.carry_len);
      if (!t.used) return;  // the engine closed it
      t.carry_off = static_cast<uint16_t>(t.carry_off + took);
      t.carry_len = static_cast<uint16_t>(t.carry_len - took);
      if (t.carry_len != 0) return;  // the rest waits until the engine wants it
      t.carry_off = 0;
      continue;
    }
    if (!inner_.wants_input(conn)) return;
    const int ret = mbedtls_ssl_read(&t.ssl, t.carry, sizeof t.carry);
    if (ret > 0) {
      t.carry_len = static_cast<uint16_t>(ret);
      continue;
    }
    if (would_block(ret)) return;
    // 0: zero-length records (TLS 1.2 allows them; Mbed TLS 2.28 returns 0 after two in a row
    // and refuses a fourth), not the end: bio_recv never reports one.
    if (ret == 0) continue;
    if (ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
      // The client is done (close_notify): like the end of a plain connection, answered with a
      // close_notify of ours first (RFC 5246 7.2.1: "The other party MUST respond with a
      // close_notify alert of its own"; best effort, as in port_close: the listener flushes what
      // it took before its FIN).
      if (t.ssl.out_left == 0) (void)mbedtls_ssl_close_notify(&t.ssl);
      const uint16_t c = conn;
      outer_.close(outer_.ctx, index(t));
      release(t);
      inner_.closed(c);
      return;
    }
    ++stats_.record_errors;
    fail(t, ret);
    return;
  }
}

int TlsLayer::flush(TlsConn& t) {
  if (t.ssl.out_left == 0) return 0;
  // With a record pending, a write of nothing only sends what is left of it (Mbed TLS 2.28's
  // mbedtls_ssl_write: "data already encrypted, just flush it").
  static const unsigned char kNothing = 0;
  const int ret = mbedtls_ssl_write(&t.ssl, &kNothing, 0);
  if (ret >= 0) return t.ssl.out_left == 0 ? 0 : MBEDTLS_ERR_SSL_WANT_WRITE;
  return ret;
}

void TlsLayer::fail(TlsConn& t, int code) {
  context_.note_error(code);
  const uint16_t conn = index(t);
  const Platform& p = context_.platform();
  if (p.log != nullptr) {
    char line[160];
    const char* what = TlsContext::error_text(code);
    size_t n = 0;
    for (const char* s = "tls: connection ended: "; *s != '\0' && n < sizeof line; ++s) line[n++] = *s;
    for (const char* s = what; *s != '\0' && n < sizeof line; ++s) line[n++] = *s;
    if (code == MBEDTLS_ERR_X509_CERT_VERIFY_FAILED) {
      // Which check failed (a dialed connection: the server's certificate).
      const uint32_t flags = mbedtls_ssl_get_verify_result(&t.ssl);
      const char* why = (flags & MBEDTLS_X509_BADCERT_CN_MISMATCH) != 0 ? ": its names do not include the host dialed"
                        : (flags & MBEDTLS_X509_BADCERT_NOT_TRUSTED) != 0 ? ": not signed by the CAs given"
                        : (flags & (MBEDTLS_X509_BADCERT_EXPIRED | MBEDTLS_X509_BADCERT_FUTURE)) != 0
                            ? ": outside its dates (is the clock set?)"
                            : "";
      for (const char* s = why; *s != '\0' && n < sizeof line; ++s) line[n++] = *s;
    }
    p.log(line, n);
  }
  const uint16_t inner = t.inner_conn;
  release(t);
  outer_.close(outer_.ctx, conn);
  inner_.closed(inner);
}

// ---- The engine's side (HttpPort) ----

Status TlsLayer::port_write(uint16_t conn, const char* data, size_t n, size_t* taken) {
  *taken = 0;
  TlsConn* found = by_inner(conn);
  if (found == nullptr) return Status::kClosed;
  TlsConn& t = *found;
  if (!t.established) return Status::kInvalidState;
  // A record still going out holds the engine's bytes: they count as taken once it is out.
  const int pending = flush(t);
  if (pending == MBEDTLS_ERR_SSL_WANT_WRITE) {
    t.engine_waits = true;
    return Status::kOk;
  }
  if (pending != 0) {
    context_.note_error(pending);
    return Status::kIoError;  // the engine drops the connection (port_close)
  }
  if (t.in_flight != 0) {
    const size_t k = t.in_flight <= n ? t.in_flight : n;
    *taken = k;
    t.in_flight = 0;
  }
  while (*taken < n) {
    const int ret = mbedtls_ssl_write(&t.ssl, reinterpret_cast<const unsigned char*>(data + *taken), n - *taken);
    if (ret > 0) {
      *taken += static_cast<size_t>(ret);
      continue;
    }
    if (ret == MBEDTLS_ERR_SSL_WANT_WRITE && t.ssl.out_left != 0) {
      // The record is made and partly out: its bytes count once the rest follows.
      const size_t made = n - *taken;
      const size_t max = mbedtls_ssl_get_max_out_record_payload(&t.ssl) > 0
                             ? static_cast<size_t>(mbedtls_ssl_get_max_out_record_payload(&t.ssl))
                             : made;
      t.in_flight = static_cast<uint32_t>(made < max ? made : max);
      t.engine_waits = true;
      return Status::kOk;
    }
    if (would_block(ret)) {
      t.engine_waits = true;
      return Status::kOk;
    }
    context_.note_error(ret);
    return Status::kIoError;
  }
  return Status::kOk;
}

Status TlsLayer::port_wait_writable(uint16_t conn, uint32_t timeout_ms) {
  TlsConn* found = by_inner(conn);
  if (found == nullptr) return Status::kClosed;
  TlsConn& t = *found;
  const uint64_t deadline = inner_.now_ms() + timeout_ms;
  for (;;) {
    const int ret = flush(t);
    if (ret == 0) return Status::kOk;
    if (ret != MBEDTLS_ERR_SSL_WANT_WRITE) {
      context_.note_error(ret);
      return Status::kIoError;
    }
    const uint64_t now = inner_.now_ms();
    if (now >= deadline) return Status::kWouldBlock;
    if (outer_.wait_writable == nullptr) return Status::kWouldBlock;
    const Status s = outer_.wait_writable(outer_.ctx, index(t), static_cast<uint32_t>(deadline - now));
    if (s != Status::kOk) return s;
  }
}

void TlsLayer::port_close(uint16_t conn) {
  TlsConn* found = by_inner(conn);
  if (found == nullptr) return;
  TlsConn& t = *found;
  // close_notify when nothing else is still going out (best effort: the listener flushes what
  // it took before its FIN).
  if (t.established && t.ssl.out_left == 0) (void)mbedtls_ssl_close_notify(&t.ssl);
  const uint16_t outer = index(t);
  release(t);
  outer_.close(outer_.ctx, outer);
}

TlsConn* TlsLayer::by_inner(uint16_t conn) {
  // The engine's numbers are the slots' own for accepted connections (open()); a dialing
  // engine names its connections itself (dial()).
  if (live(conn) && conns_[conn].inner_conn == conn) return &conns_[conn];
  for (TlsConn& t : conns_)
    if (t.used && t.inner_conn == conn) return &t;
  return nullptr;
}

int TlsLayer::bio_send(void* ctx, const unsigned char* buf, size_t len) {
  TlsConn& t = *static_cast<TlsConn*>(ctx);
  TlsLayer& self = *t.owner;
  size_t taken = 0;
  const Status s = self.outer_.write(self.outer_.ctx, self.index(t), reinterpret_cast<const char*>(buf), len, &taken);
  if (s != Status::kOk) return MBEDTLS_ERR_NET_SEND_FAILED;
  if (taken == 0) return MBEDTLS_ERR_SSL_WANT_WRITE;
  return static_cast<int>(taken);
}

int TlsLayer::bio_recv(void* ctx, unsigned char* buf, size_t len) {
  TlsConn& t = *static_cast<TlsConn*>(ctx);
  if (t.in == nullptr || t.in_used >= t.in_len) return MBEDTLS_ERR_SSL_WANT_READ;
  size_t k = t.in_len - t.in_used;
  if (k > len) k = len;
  memcpy(buf, t.in + t.in_used, k);
  t.in_used += k;
  return static_cast<int>(k);
}

}  // namespace mbedtls
EMCP_NS_END
