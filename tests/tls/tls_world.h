// tls_world.h - an in-memory world for the TLS layer's tests and fuzz target (no sockets, no
// threads): a fake listener, the TLS layer (emcp::mbedtls::TlsLayer), the HTTP engine serving
// the fixture application (tests/unit/mcp_fixture_app.h), and Mbed TLS *clients*, connected
// through memory pipes.
//
//   Client (mbedtls_ssl_context, client side) --Pipe--> fake listener --ConnectionHandler-->
//   TlsLayer --ConnectionHandler--> HttpServer; and back through the HttpPorts, with a tap
//   between the engine and the layer that keeps what the engine was told went out.
//
// The fake listener plays a TCP connection's send window: HttpPort::write takes at most
// Pipe::window bytes; a write that took fewer than offered makes the listener owe a writable()
// call, which it makes at its next round with the window reopened to Pipe::grant bytes (unless
// Pipe::hold: then the test opens it). wait_writable() opens `grant` more bytes at once (0: the
// wait times out and the clock moves on, as a peer that does not read).
//
// Credentials are made at run time with Mbed TLS (tls_common.h: P-256 keys, a self-signed CA,
// a server certificate for "localhost" signed by it): nothing secret is committed. All
// randomness (the keys, the clients, the server's Platform::random, hence the TLS context's
// generator) comes from one CTR-DRBG seeded from a fixed string (reset_random()), so runs
// repeat. (The TLS hellos also carry Mbed TLS's wall-clock time: ciphertext bytes differ from
// run to run, what the layer and the engine do does not.)
//
// Oracles: every call of the listener's port is checked against the slot's state (a write or
// close for a connection the listener does not hold is a fault), and what each client decrypts
// must be what the engine was told went out, byte for byte (check_transcripts()).
//
// Context: one thread; everything runs inside World::run()/step() or the test's own calls.
#ifndef EMCP_TESTS_TLS_WORLD_H
#define EMCP_TESTS_TLS_WORLD_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"

#include "emcp/mbedtls/tls.h"
#include "emcp/transport/http_server.h"
#include "tls_common.h"

namespace tls_world {

constexpr uint16_t kConns = 4;            ///< the listener's, the layer's and the engine's slots
constexpr size_t kClients = 6;
constexpr size_t kPipeBytes = 1u << 16;   ///< each direction of a connection, and each transcript
constexpr size_t kUnlimited = SIZE_MAX;

// ---- A connection ------------------------------------------------------------------------------

/// One TCP connection as both ends see it; the records the listener took (RecordCount).
struct Pipe : RecordCount {
  Bytes<kPipeBytes> to_server;   ///< sent by the client, not yet consumed by the layer
  Bytes<kPipeBytes> to_client;   ///< taken by the listener, not yet read by the client
  Bytes<kPipeBytes> engine_out;  ///< what the engine was told went out (HttpPort::write's *taken)
  int conn = -1;                 ///< the listener slot it is on, -1: none (not yet, or no longer)
  bool refused = false;          ///< open() refused it: to_client holds the refusal, then the end
  bool server_closed = false;    ///< the layer closed it (HttpPort::close) or refused it
  bool engine_closed = false;    ///< ... because the engine closed it (its HttpPort::close)
  bool client_closed = false;    ///< the client's FIN: closed() once its bytes are consumed
  size_t window = kUnlimited;    ///< what write() still takes before the next writable()
  size_t grant = kUnlimited;     ///< the window writable()/wait_writable() open (0: none)
  bool hold = false;             ///< the listener does not call writable(): the test does
  bool fail_writes = false;      ///< write() fails (kIoError), as a socket the peer reset
  bool owes_writable = false;    ///< a write took fewer bytes than offered
  uint32_t writes = 0;           ///< HttpPort::write calls
  uint32_t short_writes = 0;     ///< ... that took fewer bytes than offered
  uint32_t writable_calls = 0;   ///< ConnectionHandler::writable calls made for it
  uint32_t waits = 0;            ///< HttpPort::wait_writable calls
  void reset();
};

/// A client: an Mbed TLS client context over its pipe, or raw bytes (no TLS).
class Client {
 public:
  Client();
  ~Client();
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  Pipe pipe;
  Bytes<kPipeBytes> received;   ///< all the plaintext (or raw bytes, raw clients) read so far
  size_t read_cursor = 0;       ///< for tests: how much of `received` they looked at
  bool tls = false;
  bool paused = false;          ///< the world does not step its TLS state (a stalled client)
  bool established = false;
  bool peer_closed = false;     ///< close_notify from the server
  bool eof = false;             ///< the connection ended (the listener closed it)
  bool failed = false;          ///< a TLS error ended it (error)
  int error = 0;
  mbedtls_ssl_context ssl;
  mbedtls_ssl_session session;  ///< after the handshake: its session (to resume with)
  bool has_session = false;
  /// The alerts this client's Mbed TLS received, as it decoded them (WorldOptions::client_alerts):
  /// how many, and the last one's level and description (RFC 5246 7.2).
  uint32_t alerts = 0;
  uint8_t alert_level = 0;
  uint8_t alert_description = 0;

  bool ended() const { return peer_closed || eof || failed; }
  /// The plaintext not looked at yet; moves the cursor.
  size_t unread(const char** p);

 private:
  friend class World;
  bool ssl_ready_ = false;
  void release();
  static int bio_send(void* ctx, const unsigned char* buf, size_t len);
  static int bio_recv(void* ctx, unsigned char* buf, size_t len);
};

struct WorldOptions {
  emcp::mbedtls::TlsOptions tls;
  /// A context to share (already init()ed; the world neither inits nor frees it). nullptr: the
  /// world's own, init()ed with credentials() and `tls` (unless !init_tls).
  emcp::mbedtls::TlsContext* context = nullptr;
  /// The engine's Platform::random (session ids); nullptr: random() above. (The TLS context's
  /// is always random() above.)
  bool (*engine_random)(void* out, size_t n) = nullptr;
  emcp::ws::Sha1Fn sha1 = nullptr;  ///< WebSocket (nullptr: /ws off)
  bool init_tls = true;                        ///< TlsContext::init with credentials()
  bool client_renegotiation = false;           ///< the clients may ask to renegotiate
  /// The clients note the alerts they receive (Client::alerts): through Mbed TLS's debug
  /// callback, its threshold raised for the world's life (off by default: it costs a format).
  bool client_alerts = false;
};

class World {
 private:
  // Declared first: the members below use them while they are built.
  emcp::Platform engine_platform_;
  emcp::Platform tls_platform_;
  emcp::mbedtls::TlsContext own_context_;

 public:
  explicit World(const WorldOptions& options = WorldOptions());
  ~World();
  World(const World&) = delete;
  World& operator=(const World&) = delete;

  // ---- The clients' side
  Client& client(size_t i) { return clients_[i]; }
  /// Client i opens a new connection (the listener accepts it: ConnectionHandler::open); its
  /// earlier one, if any, is reset first. TLS: set up the client context (resuming `resume`
  /// when given); the ClientHello goes at the next step. Returns the slot, -1 when refused
  /// (the client then reads the refusal, then the end).
  int connect(size_t i, bool tls = true, const mbedtls_ssl_session* resume = nullptr);
  /// Client i sends `n` bytes: TLS, as records of at most `record` bytes (0: as large as Mbed
  /// TLS makes them); raw, as they are. False when not all could be sent.
  bool send(size_t i, const void* data, size_t n, size_t record = 0);
  bool send(size_t i, const char* text) { return send(i, text, strlen(text)); }
  /// Client i sends close_notify.
  void close_notify(size_t i);
  /// Client i half-closes (FIN): the listener reports closed() once its bytes are consumed.
  void shutdown(size_t i);
  /// Client i resets its connection: the listener reports closed() at once.
  void abort(size_t i);

  // ---- Running
  /// One round: the clients step (handshake, reading), the listener offers the bytes it holds
  /// while the layer wants them, makes the writable() calls it owes, and polls (unless
  /// poll_each_round is false). True when anything moved.
  bool step();
  /// Steps until nothing moves (at most max_rounds rounds); returns the rounds run.
  int run(int max_rounds = 20000);
  /// The listener's writable() for client i's connection now, with the window reopened to
  /// `window` bytes (the test plays the listener).
  void writable(size_t i, size_t window);
  /// The listener's periodic poll().
  void poll() { handler_.poll(); }
  bool poll_each_round = true;

  // ---- Observation
  size_t slots_in_use() const;
  /// Checks every client's decrypted stream against what the engine was told went out: equal
  /// over their common length, and (`final`) of the same length for clients still reading.
  /// nullptr when fine, else what is wrong.
  const char* check_transcripts(bool final);
  /// A fault of the world's contract checks (nullptr: none): a call for a connection the
  /// listener does not hold, a slot given twice, ...
  const char* fault() const { return fault_; }
  uint32_t faults() const { return faults_; }
  emcp::Status init_status() const { return init_status_; }

  emcp::mcp::Server server;
  emcp::transport::HttpOptions http_options;
  emcp::mbedtls::TlsContext& context;
  emcp::mbedtls::StaticTlsLayer<kConns> tls;
  emcp::transport::StaticHttpServer<kConns, 2, 4096, 512, 1024> http;

 private:
  Pipe* slot(uint16_t conn);
  void note_fault(const char* what);
  void detach(Client& c);
  bool step_client(Client& c);
  uint64_t signature() const;

  // The listener's HttpPort (what the layer writes through).
  static emcp::Status net_write(void* ctx, uint16_t conn, const char* data, size_t n, size_t* taken);
  static emcp::Status net_wait(void* ctx, uint16_t conn, uint32_t timeout_ms);
  static void net_close(void* ctx, uint16_t conn);
  // The tap between the engine and the layer.
  static emcp::Status tap_write(void* ctx, uint16_t conn, const char* data, size_t n, size_t* taken);
  static emcp::Status tap_wait(void* ctx, uint16_t conn, uint32_t timeout_ms);
  static void tap_close(void* ctx, uint16_t conn);
  emcp::transport::HttpPort net_port();
  emcp::transport::HttpPort tap_port();

  emcp::transport::HttpPort layer_port_;
  emcp::transport::ConnectionHandler handler_;
  Pipe* slots_[kConns] = {};
  Client clients_[kClients];
  mbedtls_ssl_config client_conf_;
  mbedtls_x509_crt ca_;
  emcp::Status init_status_ = emcp::Status::kOk;
  const char* fault_ = nullptr;
  uint32_t faults_ = 0;
  bool debug_raised_ = false;
};

/// The last line the platform logged (the layer's "tls: connection ended: ..."), NUL-ended.
const char* last_log();
void clear_log();

}  // namespace tls_world

#endif  // EMCP_TESTS_TLS_WORLD_H
