// emcp/mbedtls/tls.h - TLS 1.2 (Mbed TLS) as a layer between any listener and the HTTP engine:
// HTTPS and WSS with the same engine, the same listeners (ports/posix, ports/lwip) and the same
// tests as plain HTTP.
//
//   listener --ConnectionHandler--> TlsLayer --ConnectionHandler--> HttpServer
//   listener <------HttpPort-------- TlsLayer <------HttpPort------- HttpServer
//
// The listener hands the layer ciphertext; the layer runs the handshake, decrypts records and
// hands the engine the plaintext; the engine's output is encrypted into records and offered to
// the listener. Nothing blocks: a record the connection cannot take yet stays in Mbed TLS's
// output buffer and goes on when the listener reports the connection writable (the engine is
// told its bytes were taken only once their record is out, so the engine's "everything is
// out" still means what it says).
//
// TlsContext is what every connection shares: the certificate chain and key, the random
// generator (seeded from the Platform's random source), the session ticket key (a returning
// client resumes with a ticket and skips the certificate and key exchange), the protocol
// settings: TLS 1.2 only, ECDHE-ECDSA (or ECDHE-RSA for an RSA key) with AES-GCM or
// ChaCha20-Poly1305, the P-256 curve. TlsLayer holds one Mbed TLS context per connection slot.
//
// Memory: Mbed TLS allocates a connection's record buffers when it opens (mbedtls_ssl_setup)
// and the handshake's state while it runs, through its platform calloc. On the boards that is
// a static pool (emcp/mbedtls/pool.h; cmake/EmcpMbedtls.cmake's configuration), never malloc;
// a connection whose buffers or handshake do not fit the pool is refused (a TLS alert, then
// close) and the others go on. The host's libmbedtls (Debian's) allocates with malloc.
//
// Limits, each ending the connection (the others go on):
//   - a handshake not finished within TlsOptions::handshake_timeout_ms (a stalled client);
//   - plain HTTP to the TLS port (a request line where a TLS record should start): answered
//     400 in plain text ("this port speaks HTTPS"), then closed;
//   - a record larger than the input buffer (MBEDTLS_SSL_IN_CONTENT_LEN; Mbed TLS answers with
//     a record_overflow alert), a bad record (bad_record_mac), anything not TLS 1.2 (plaintext
//     HTTP to the TLS port: the handshake fails);
//   - renegotiation is refused.
//
// Context: the listener's loop, like the engine.
//
// Example (ports/posix/src/serve/serve.cpp has the whole of it):
//   static emcp::mbedtls::TlsContext tls_ctx;
//   if (tls_ctx.init(platform, cert_pem, cert_len + 1, key_pem, key_len + 1) != emcp::Status::kOk) ...
//   static emcp::mbedtls::StaticTlsLayer<8> tls(tls_ctx, net.port_interface());
//   static emcp::transport::StaticHttpServer<8> http(server, options, tls.port_interface());
//   tls.attach(http.handler());
//   net.attach(tls.handler());
#ifndef EMCP_MBEDTLS_TLS_H
#define EMCP_MBEDTLS_TLS_H

#include <stddef.h>
#include <stdint.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/pk.h"
#include "mbedtls/ssl.h"
#include "mbedtls/ssl_ticket.h"
#include "mbedtls/x509_crt.h"

#include "emcp/platform.h"
#include "emcp/transport/connection.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace mbedtls {

struct TlsOptions {
  uint32_t handshake_timeout_ms = 10000;  ///< from the connection's open to the handshake's end
  uint32_t ticket_lifetime_s = 86400;     ///< how long a session ticket lets a client resume
  bool session_tickets = true;
  /// A client's (init_client()): the name the server's certificate must carry, sent as SNI,
  /// when the host dialed is not it (a broker dialed by its address whose certificate names
  /// it: a board has no resolver); nullptr: the host dialed. Kept, not copied.
  const char* server_name = nullptr;
};

/// What every TLS connection shares. Declare it with static storage; init() once.
class TlsContext {
 public:
  TlsContext();
  ~TlsContext();
  TlsContext(const TlsContext&) = delete;
  TlsContext& operator=(const TlsContext&) = delete;

  /// Loads the server's certificate chain (the server's certificate first, then its
  /// intermediates) and its private key, PEM (NUL-terminated, the NUL counted in the length) or
  /// DER, and seeds the random generator from `platform.random` (required). The buffers are
  /// parsed, not kept. kInvalidArgument: no random source, or a certificate or key that does
  /// not parse, or a key that is not the certificate's; kNoSpace: Mbed TLS's memory is short;
  /// kIoError: the random source failed. The failing Mbed TLS code is kept (last_error()).
  Status init(const Platform& platform, const uint8_t* cert, size_t cert_len, const uint8_t* key, size_t key_len,
              const TlsOptions& options = TlsOptions());
  /// For connections the device dials (TlsLayer::dialer(): the MQTT client to its broker): the
  /// CA certificates the server's chain must lead to (PEM, NUL counted, or DER; required: the
  /// server is always verified, its name against the host dialed), and optionally a client
  /// certificate and its key (nullptr: none). Errors as init(); kInvalidState: Mbed TLS was
  /// built without its client (the boards' configuration needs EMCP_MBEDTLS_CLIENT=1), as
  /// init() is without its server.
  Status init_client(const Platform& platform, const uint8_t* ca, size_t ca_len, const uint8_t* cert = nullptr,
                     size_t cert_len = 0, const uint8_t* key = nullptr, size_t key_len = 0,
                     const TlsOptions& options = TlsOptions());
  /// init_client() made it: the layer dials rather than accepts.
  bool client() const { return client_; }
  bool ready() const { return ready_; }
  const TlsOptions& options() const { return options_; }
  /// The last Mbed TLS error code (negative) init() or a connection met; 0: none.
  int last_error() const { return last_error_; }
  /// A short text for an Mbed TLS error code (the common ones; "TLS error" otherwise).
  static const char* error_text(int code);

  mbedtls_ssl_config* config() { return &conf_; }
  /// Session tickets that parsed (each lets a client resume its session).
  uint32_t tickets_accepted() const { return tickets_accepted_; }
  void note_error(int code) { last_error_ = code; }
  const Platform& platform() const { return platform_; }

 private:
  static int entropy(void* ctx, unsigned char* out, size_t n);
  static int ticket_parse(void* ctx, mbedtls_ssl_session* session, unsigned char* buf, size_t len);
  static int ticket_write(void* ctx, const mbedtls_ssl_session* session, unsigned char* start,
                          const unsigned char* end, size_t* tlen, uint32_t* lifetime);
  void init_parts();
  void release();
  Status start(const Platform& platform, const TlsOptions& options);
  Status configure(int endpoint);

  Platform platform_;
  TlsOptions options_;
  mbedtls_ssl_config conf_;
  mbedtls_ctr_drbg_context drbg_;
  mbedtls_x509_crt cert_;
  mbedtls_x509_crt ca_;
  mbedtls_pk_context key_;
  mbedtls_ssl_ticket_context ticket_;
  bool ready_ = false;
  bool client_ = false;
  int last_error_ = 0;
  uint32_t tickets_accepted_ = 0;
};

class TlsLayer;

/// Per-connection state of the layer (declare through StaticTlsLayer<>).
struct TlsConn {
  /// Plaintext decrypted but not yet taken by the engine.
  static constexpr size_t kCarry = 512;
  mbedtls_ssl_context ssl;
  TlsLayer* owner = nullptr;
  uint64_t opened_ms = 0;
  const uint8_t* in = nullptr;  ///< ciphertext being offered (during receive())
  size_t in_len = 0;
  size_t in_used = 0;
  uint32_t in_flight = 0;       ///< engine bytes in the record still going out
  uint16_t carry_off = 0;
  uint16_t carry_len = 0;
  bool used = false;
  bool started = false;         ///< its first bytes came in
  bool established = false;     ///< the handshake is done
  bool engine_waits = false;    ///< the engine was told "fewer taken": writable() owed
  bool resumed = false;         ///< the handshake resumed a session (ticket)
  bool measured = false;        ///< its handshake is the one the pool measures
  uint32_t pool_base = 0;       ///< pool bytes in use before it opened
  uint16_t inner_conn = 0;      ///< the engine's number for it (the slot's own when accepted)
  uint8_t carry[kCarry];
};

/// Counters for diagnostics and tests.
struct TlsStats {
  uint32_t handshakes = 0;          ///< completed
  uint32_t resumed = 0;             ///< ... of them resumed from a session ticket
  uint32_t failed = 0;              ///< handshakes that failed (bad input, wrong protocol)
  uint32_t timed_out = 0;           ///< handshakes dropped at handshake_timeout_ms
  uint32_t refused_memory = 0;      ///< connections refused: their buffers did not fit
  uint32_t record_errors = 0;       ///< established connections ended by a bad record
  /// The most Mbed TLS memory (emcp/mbedtls/pool.h) a connection took from its open to the end
  /// of its handshake, beyond what was in use before: its record buffers and the handshake's
  /// state (measured only when no other connection opened or ended meanwhile: nothing of
  /// another's is counted in; 0 without the pool).
  uint32_t handshake_peak = 0;
  /// What an established connection keeps (its record buffers, session and keys).
  uint32_t established_size = 0;
};

class TlsLayer {
 public:
  /// `conns` must have as many entries as the engine has connection slots; `outer` is the
  /// listener's port_interface().
  TlsLayer(TlsContext& context, const transport::HttpPort& outer, Span<TlsConn> conns);
  ~TlsLayer();
  TlsLayer(const TlsLayer&) = delete;
  TlsLayer& operator=(const TlsLayer&) = delete;

  /// The port the engine writes through (for HttpServer's constructor).
  transport::HttpPort port_interface();
  /// What the listener drives (for its attach()).
  transport::ConnectionHandler handler();
  /// The engine (or another layer) behind this one.
  void attach(transport::ConnectionHandler inner) { inner_ = inner; }
  /// With a client context (TlsContext::init_client): what an engine dials through, TLS over
  /// `outer` (the listener's dialer, whose port must be the `outer` port this layer was made
  /// with). dial() verifies the server's certificate against the context's CAs and its name
  /// against the host dialed, or TlsOptions::server_name (SNI too); the engine hears writable() once the handshake is done,
  /// closed() when it fails (the reason in the Platform's log). Errors of dial(): kInvalidState
  /// (not a client context), kNoSpace (no free slot, or no memory for its buffers),
  /// kInvalidArgument (a host name Mbed TLS refuses), and the outer dialer's.
  transport::Dialer dialer(const transport::Dialer& outer);

  const TlsStats& stats() const { return stats_; }
  /// Whether connection `conn` resumed its session with a ticket (tests, diagnostics).
  bool resumed(uint16_t conn) const;

 private:
  // The HttpPort this object offers (port_interface(): HttpPort::of).
  friend struct transport::HttpPort;
  Status port_write(uint16_t conn, const char* data, size_t n, size_t* taken);
  Status port_wait_writable(uint16_t conn, uint32_t timeout_ms);
  void port_close(uint16_t conn);
  static int bio_send(void* ctx, const unsigned char* buf, size_t len);
  static int bio_recv(void* ctx, unsigned char* buf, size_t len);

  int open(const transport::PeerAddress& peer);
  size_t receive(uint16_t conn, const void* data, size_t n);
  bool wants_input(uint16_t conn) const;
  void writable(uint16_t conn);
  void closed(uint16_t conn);
  void poll();

  uint16_t index(const TlsConn& t) const { return static_cast<uint16_t>(&t - conns_.data()); }
  TlsConn* by_inner(uint16_t conn);  // the slot the engine's `conn` names
  Status dial(const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler engine);
  bool live(uint16_t conn) const { return conn < conns_.size() && conns_[conn].used; }
  /// Starts the pool's figures for `t`'s handshake (TlsStats::handshake_peak).
  void start_measuring(TlsConn& t);
  /// Runs the handshake, then hands decrypted bytes to the engine while it takes them.
  void step(TlsConn& t);
  void deliver(TlsConn& t);
  /// Sends what Mbed TLS holds of a record: 0 when nothing is left, MBEDTLS_ERR_SSL_WANT_WRITE
  /// when some still is, or the Mbed TLS error.
  int flush(TlsConn& t);
  /// Ends a connection for a TLS reason: the listener closes it, the engine hears closed().
  void fail(TlsConn& t, int code);
  void release(TlsConn& t);

  static const transport::ConnectionHandler::Ops kOps;

  TlsContext& context_;
  transport::HttpPort outer_;
  Span<TlsConn> conns_;
  transport::ConnectionHandler inner_;
  transport::Dialer outer_dialer_;
  TlsStats stats_;
};

/// A layer for an engine of N connections.
template <size_t N>
class StaticTlsLayer : public TlsLayer {
 public:
  StaticTlsLayer(TlsContext& context, const transport::HttpPort& outer)
      : TlsLayer(context, outer, Span<TlsConn>(conns_, N)) {}

 private:
  TlsConn conns_[N];
};

}  // namespace mbedtls
EMCP_NS_END

#endif  // EMCP_MBEDTLS_TLS_H
