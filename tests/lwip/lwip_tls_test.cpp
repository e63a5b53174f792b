// HTTPS over lwIP on the host, in one process: the lwIP port (emcp::lwip::LwipHttpListener) on
// port 443 with the TLS layer (emcp::mbedtls::TlsLayer) between it and the HTTP engine, wired as
// the board images wire them (examples/sensors/main_board_net.cpp: the layer's handler in
// front of the listener, the engine writing through the layer's port), and clients that speak
// real TLS: Mbed TLS client contexts over raw lwIP TCP pcbs of the same stack (lwip_world.h).
//
// Mbed TLS is the boards' own: built from Debian's source with emcp's board configuration
// (ports/mbedtls/config/emcp_mbedtls_config.h; the client side and certificate writing added
// for the test), so all of its memory comes from emcp's static pool (emcp/mbedtls/pool.h),
// never malloc: every step of the world, the handshakes included, runs inside a NoHeapScope.
// Server and clients share that pool; every client call into Mbed TLS is measured, so the
// server's share is known at any time (server_pool()). The credentials are made in the test
// with Mbed TLS (tests/tls/tls_common.h), as in the in-memory TLS world.
//
// What lwIP adds over tests/tls/tls_world.h's fake listener, and what these tests are about:
// TLS records cut into TCP segments of any size in both directions, windows that close in the
// middle of a record, FIN and RST arriving as segments (in the middle of a handshake or a
// record, or while a handler waits for the window), the listener's own refusal path, and the
// accounting of lwIP's pools and of Mbed TLS's pool. After each test every client is gone,
// every lwIP pool is back to what it held after listen() and the server holds no TLS memory
// beyond its context (TearDown); the next test starts with none at all.
#include <gtest/gtest.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <string_view>

#include "../tls/tls_common.h"
#include "../unit/heap_guard.h"
#include "../unit/mcp_fixture_app.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/mbedtls/pool.h"
#include "emcp/mbedtls/tls.h"
#include "emcp/transport/http_server.h"
#include "lwip/tcp.h"
#include "lwip_fixture.h"
#include "lwip_http_util.h"
#include "lwip_world.h"
#include "mbedtls/net_sockets.h"  // MBEDTLS_ERR_NET_CONN_RESET (no sockets used)

namespace {

using emcp::Status;
using emcp::mbedtls::pool_stats;

constexpr uint16_t kPort = 443;
constexpr uint32_t kPollMs = 100;  // the listener's poll() interval (run_once's argument)

void on_lwip_assert(const char* message, const char* file, int line) {
  fprintf(stderr, "lwIP assertion in a test: %s (%s:%d)\n", message, file, line);
}

// The last line the platform logged (the layer's "tls: connection ended: ...").
char g_log[128];
void log_line(const char* text, size_t n) {
  if (n >= sizeof g_log) n = sizeof g_log - 1;
  memcpy(g_log, text, n);
  g_log[n] = '\0';
}

// Mbed TLS's error code in its own notation (the boards' configuration has no
// mbedtls_strerror, MBEDTLS_ERROR_C).
std::string tls_error(int code) {
  char text[16];
  snprintf(text, sizeof text, "%s0x%04x", code < 0 ? "-" : "", static_cast<unsigned>(code < 0 ? -code : code));
  return text;
}

// ---- Mbed TLS's memory: the boards' pool, shared by the server and the clients -------------------

alignas(8) uint8_t g_pool[192 * 1024];
int64_t g_client_bytes = 0;  // pool bytes (block headers included) the clients hold
int64_t g_held_bytes = 0;    // ... the test holds (hold_pool())

// Measures what the client-side calls made during its life took from the pool (or gave back).
class ClientSide {
 public:
  ClientSide() : before_(static_cast<int64_t>(pool_stats().in_use)) {}
  ~ClientSide() { g_client_bytes += static_cast<int64_t>(pool_stats().in_use) - before_; }
  ClientSide(const ClientSide&) = delete;
  ClientSide& operator=(const ClientSide&) = delete;

 private:
  int64_t before_;
};

// What the server (the TLS context and the layer's connections) holds of the pool.
int64_t server_pool() { return static_cast<int64_t>(pool_stats().in_use) - g_client_bytes - g_held_bytes; }

// All of the pool the test can take, in blocks of 16 KiB down to 8 bytes, until release_pool().
void* g_held[512];
size_t g_held_count = 0;
void hold_pool() {
  const int64_t before = static_cast<int64_t>(pool_stats().in_use);
  for (size_t size = 16384; size >= 8; size /= 2) {
    while (g_held_count < sizeof g_held / sizeof g_held[0]) {
      void* p = emcp::mbedtls::pool_calloc(1, size);
      if (p == nullptr) break;
      g_held[g_held_count++] = p;
    }
  }
  g_held_bytes += static_cast<int64_t>(pool_stats().in_use) - before;
}
void release_pool() {
  const int64_t before = static_cast<int64_t>(pool_stats().in_use);
  while (g_held_count != 0) emcp::mbedtls::pool_free(g_held[--g_held_count]);
  g_held_bytes += static_cast<int64_t>(pool_stats().in_use) - before;
}

// The clients' configuration: made once (the CA chain stays parsed, counted as theirs).
mbedtls_ssl_config g_client_conf;
mbedtls_x509_crt g_ca;

// ---- A TLS client over a raw lwIP pcb -------------------------------------------------------------

// Client i of lwip_world with an Mbed TLS client context over it. Its step() runs the handshake
// and reads what arrived (from lwip_world::Client's buffer, which the pcb's window policy,
// set_read(), is independent of); what Mbed TLS writes is queued on the pcb (set_segment()
// cuts it into segments). It touches lwIP only through that queue, so it may run from the
// listener's pump. Allocates nothing from the heap.
class TlsClient {
 public:
  TlsClient() {
    mbedtls_ssl_init(&ssl);
    mbedtls_ssl_session_init(&session);
  }

  lwip_world::Client& tcp() const { return lwip_world::client(index_); }

  // Sets up a fresh TLS context (resuming `resume` when given) and connects; the handshake
  // runs in step(). Keeps the session it had (a later client may resume it).
  bool connect(size_t index, const mbedtls_ssl_session* resume = nullptr) {
    index_ = index;
    release_context();
    established = peer_closed = eof = failed = paused = false;
    flip_at = SIZE_MAX;
    error = 0;
    plain.clear();
    in.reset_records();
    split_records = 0;
    waited_mid_record_ = false;
    raw_in = handshake_in = 0;
    raw_head_len = 0;
    {
      ClientSide measure;
      if (mbedtls_ssl_setup(&ssl, &g_client_conf) != 0 || mbedtls_ssl_set_hostname(&ssl, "localhost") != 0 ||
          (resume != nullptr && mbedtls_ssl_set_session(&ssl, resume) != 0)) {
        mbedtls_ssl_free(&ssl);
        mbedtls_ssl_init(&ssl);
        return false;
      }
    }
    ready_ = true;
    mbedtls_ssl_set_bio(&ssl, this, &TlsClient::bio_send, &TlsClient::bio_recv, nullptr);
    return tcp().connect(kPort);
  }

  // Frees its TLS context (and with `all` its saved session); the pcb stays as it is.
  void release(bool all) {
    release_context();
    if (all) {
      ClientSide measure;
      mbedtls_ssl_session_free(&session);
      mbedtls_ssl_session_init(&session);
      has_session = false;
    }
  }

  bool ended() const { return peer_closed || eof || failed; }

  void step() {
    if (!ready_ || paused || ended()) return;
    ClientSide measure;
    if (!established) {
      const int ret = mbedtls_ssl_handshake(&ssl);
      if (tls_world::would_block(ret)) return;
      if (ret != 0) {
        failed = true;
        error = ret;
        return;
      }
      established = true;
      handshake_in = raw_in;
      has_session = mbedtls_ssl_get_session(&ssl, &session) == 0;
    }
    unsigned char buf[1024];
    for (;;) {
      const int ret = mbedtls_ssl_read(&ssl, buf, sizeof buf);
      if (ret > 0) {
        (void)plain.append(buf, static_cast<size_t>(ret));
        continue;
      }
      if (tls_world::would_block(ret)) return;
      if (ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) {
        peer_closed = true;
      } else if (ret == 0 || ret == MBEDTLS_ERR_SSL_CONN_EOF) {
        eof = true;
      } else {
        failed = true;
        error = ret;
      }
      return;
    }
  }

  // Sends `bytes` as TLS records of at most `record` plaintext bytes (0: as large as Mbed TLS
  // makes them).
  bool send(std::string_view bytes, size_t record = 0) {
    if (!established || ended()) return false;
    ClientSide measure;
    while (!bytes.empty()) {
      const size_t piece = record == 0 || record > bytes.size() ? bytes.size() : record;
      const int ret = mbedtls_ssl_write(&ssl, reinterpret_cast<const unsigned char*>(bytes.data()), piece);
      if (ret <= 0) return false;
      bytes.remove_prefix(static_cast<size_t>(ret));
    }
    return true;
  }

  // A fatal alert of the client's (RFC 5246 7.2: it ends the connection on both sides).
  void fatal_alert(unsigned char description) {
    ClientSide measure;
    if (established && !ended())
      (void)mbedtls_ssl_send_alert_message(&ssl, MBEDTLS_SSL_ALERT_LEVEL_FATAL, description);
  }

  void close_notify() {
    ClientSide measure;
    if (established && !ended()) (void)mbedtls_ssl_close_notify(&ssl);
  }

  std::string_view text() const { return std::string_view(plain.chars(), plain.size()); }

  mbedtls_ssl_context ssl;
  mbedtls_ssl_session session;  // after the handshake: its session (to resume with)
  bool has_session = false;
  bool established = false;
  bool peer_closed = false;  // close_notify from the server
  bool eof = false;          // the connection ended (FIN) without close_notify
  bool failed = false;       // a TLS error (or a reset) ended it
  bool paused = false;       // step() does nothing (a client that stalls)
  size_t flip_at = SIZE_MAX;  // the next write's byte at this offset goes out with a bit flipped
  int error = 0;
  tls_world::Bytes<1 << 16> plain;  // the plaintext read, not consumed by the test
  tls_world::RecordCount in;        // the server's records, as read off the wire
  uint32_t split_records = 0;       // ... whose bytes came in more than one delivery
  uint64_t raw_in = 0;              // ciphertext bytes read
  uint64_t handshake_in = 0;        // ... until the handshake was done
  uint8_t raw_head[16] = {};        // the first bytes read
  size_t raw_head_len = 0;

 private:
  void release_context() {
    if (!ready_) return;
    ClientSide measure;
    mbedtls_ssl_free(&ssl);
    mbedtls_ssl_init(&ssl);
    ready_ = false;
  }

  static int bio_send(void* ctx, const unsigned char* buf, size_t len) {
    TlsClient& c = *static_cast<TlsClient*>(ctx);
    lwip_world::Client& t = c.tcp();
    if (!t.open()) return MBEDTLS_ERR_NET_CONN_RESET;
    if (c.flip_at < len) {  // a copy with one bit changed goes out instead
      unsigned char spoiled[2048];
      if (len > sizeof spoiled) return MBEDTLS_ERR_NET_SEND_FAILED;
      memcpy(spoiled, buf, len);
      spoiled[c.flip_at] ^= 0x01;
      if (!t.send(spoiled, len)) return MBEDTLS_ERR_SSL_WANT_WRITE;
      c.flip_at = SIZE_MAX;
      return static_cast<int>(len);
    }
    if (!t.send(buf, len)) return MBEDTLS_ERR_SSL_WANT_WRITE;  // the queue is full: later
    return static_cast<int>(len);
  }

  static int bio_recv(void* ctx, unsigned char* buf, size_t len) {
    TlsClient& c = *static_cast<TlsClient*>(ctx);
    lwip_world::Client& t = c.tcp();
    const size_t k = t.size() < len ? t.size() : len;
    if (k == 0) {
      // Mbed TLS reads a record's header, then exactly its body: asking again in the middle
      // of one means the rest is still on its way.
      if (!c.in.at_boundary()) c.waited_mid_record_ = true;
      if (t.reset_seen()) return MBEDTLS_ERR_NET_CONN_RESET;
      if (t.fin()) return 0;
      return MBEDTLS_ERR_SSL_WANT_READ;
    }
    memcpy(buf, t.data(), k);
    t.consume(k);
    for (size_t i = 0; i < k && c.raw_head_len < sizeof c.raw_head; ++i) c.raw_head[c.raw_head_len++] = buf[i];
    c.raw_in += k;
    const uint32_t records = c.in.records;
    c.in.count_records(buf, k);
    if (c.in.records != records && c.waited_mid_record_) {
      ++c.split_records;
      c.waited_mid_record_ = false;
    }
    return static_cast<int>(k);
  }

  size_t index_ = 0;
  bool ready_ = false;
  bool waited_mid_record_ = false;
};

TlsClient g_tls[lwip_world::kClients];

void step_clients() {
  for (TlsClient& c : g_tls) c.step();
}

// The listener's pump: the network and the clients (the other machines) go on.
bool g_in_pump = false;
void pump(void*) {
  g_in_pump = true;
  lwip_world::pump(nullptr);
  step_clients();
  g_in_pump = false;
}

// Hooks (lwip_world::set_hook: they run first in every step, the pump's too, so they act while
// a handler waits for the window as well).

// A client that stops reading (its window shuts) once it decrypted more than `after` bytes, for
// `length_ms`, then reads `read` bytes a step again. What it received meanwhile is bounded by
// what it had acknowledged (tcp_recved) when it stopped, plus one window (RFC 9293 3.8.6: the
// sender keeps within the window offered; lwIP's receiver may announce less, holding window
// updates below its threshold). lwIP's sender fills what is left of the window when its
// persist timer fires (tcp_split_unsent_seg), seconds in: nothing is assumed of when.
struct Stall {
  TlsClient* c;
  size_t after;
  uint64_t length_ms;
  size_t read;
  uint64_t from = 0;
  size_t total_from = 0;  // received when it stopped reading
  size_t acked_from = 0;  // ... of which acknowledged to lwIP (its window's left edge)
  size_t total_end = 0;   // received when it reads again
  bool done = false;
};
void stall(void* ctx) {
  auto* s = static_cast<Stall*>(ctx);
  lwip_world::Client& t = s->c->tcp();
  const uint64_t now = fixture::now_ms();
  if (s->done) return;
  if (s->from == 0) {
    if (s->c->plain.size() <= s->after) return;
    s->from = now;
    s->total_from = t.received_total();
    s->acked_from = t.received_total() - t.unread();
    t.set_read(0);
    return;
  }
  if (now - s->from >= s->length_ms) {
    s->total_end = t.received_total();
    t.set_read(s->read);
    s->done = true;
  }
}

// When the engine's first connection opened (the clock of the run_once() that opened it).
struct OpenedAt {
  const emcp::transport::HttpServer* http;
  uint64_t at = 0;
};
void note_open(void* ctx) {
  auto* o = static_cast<OpenedAt*>(ctx);
  if (o->at == 0 && o->http->connections_in_use() == 1) o->at = fixture::now_ms();
}

// A client that resets while a handler waits for its window (inside the listener's pump),
// with a record of the server's half read.
struct ResetInPump {
  TlsClient* c;
  bool done = false;
};
void reset_in_pump(void* ctx) {
  auto* r = static_cast<ResetInPump*>(ctx);
  if (r->done || !g_in_pump || r->c->in.at_boundary()) return;
  r->c->tcp().abort();
  r->done = true;
}

using namespace lwip_http;  // requests, and responses read from RFC 9112 (lwip_http_util.h)

// ---- The fixture ---------------------------------------------------------------------------------

constexpr size_t kConns = 3;  // the engine's and the layer's connections (the listener: one more)

class LwipTls : public lwip_fixture::LwipFixture {
 protected:

  static void SetUpTestSuite() {
    emcp_test::NoHeapScope no_heap;
    emcp::mbedtls::pool_init(g_pool, sizeof g_pool);
    ClientSide measure;  // the credentials' making leaves nothing; the clients' CA chain stays
    mbedtls_ssl_config_init(&g_client_conf);
    mbedtls_x509_crt_init(&g_ca);
    ASSERT_TRUE(tls_world::client_config(&g_client_conf, &g_ca));
  }
  static void TearDownTestSuite() {
    emcp_test::NoHeapScope no_heap;
    for (TlsClient& c : g_tls) c.release(true);
    ClientSide measure;
    mbedtls_x509_crt_free(&g_ca);
    mbedtls_ssl_config_free(&g_client_conf);
  }

  void set_up() override {
    lwip_world::init(&on_lwip_assert);
    emcp_test::NoHeapScope no_heap;
    ASSERT_EQ(server_pool(), 0) << "TLS memory left by the previous test's server";
    lwip_world::set_tick(2);
    lwip_world::set_hook(nullptr, nullptr);
    for (size_t i = 0; i < lwip_world::kClients; ++i) lwip_world::client(i).reset();
    g_log[0] = '\0';
    tls_world::reset_random();
    init_context(emcp::mbedtls::TlsOptions());
    fixture::install(server_);
    tls_.attach(http_.handler());
    net_.attach(tls_.handler());
    net_.set_pump(&pump, nullptr);
    ASSERT_EQ(net_.listen(kPort), Status::kOk);
    listening_ = lwip_world::pools();
  }

  void init_context(const emcp::mbedtls::TlsOptions& options) {
    const tls_world::Credentials& cred = tls_world::credentials();
    ASSERT_TRUE(cred.ok);
    ASSERT_EQ(context_.init(platform_, cred.cert.data, cred.cert.len, cred.key.data, cred.key.len, options),
              Status::kOk)
        << emcp::mbedtls::TlsContext::error_text(context_.last_error());
    context_bytes_ = server_pool();
  }

  void tear_down() override {
    {
      emcp_test::NoHeapScope no_heap;
      lwip_world::set_hook(nullptr, nullptr);
      lwip_world::release_held();
      release_pool();
      for (TlsClient& c : g_tls) c.release(true);
      lwip_world::abort_clients();
      (void)lwip_world::abort_strays(kPort);
    }
    expect_released_then_stop();
    EXPECT_EQ(server_pool(), context_bytes_) << "TLS memory the server kept after its connections";
  }

  // One step of the world (lwIP, the TLS clients) and the listener (run_until repeats it).
  void step_once() override {
    lwip_world::step();
    step_clients();
    net_.run_once(kPollMs);
  }
  bool released() override { return http_.connections_in_use() == 0 && net_.slots_in_use() == 0; }
  void stop_listener() override { net_.stop(); }

  // Client i connects (TLS) and the handshake runs to its end on both sides: a resumed
  // handshake ends with the client's Finished (RFC 5246 7.3), which the server reads after the
  // client is done.
  TlsClient& handshake(size_t i, const mbedtls_ssl_session* resume = nullptr) {
    TlsClient& c = g_tls[i];
    const uint32_t handshakes = stats().handshakes;
    bool set_up = false;
    {
      emcp_test::NoHeapScope no_heap;
      set_up = c.connect(i, resume);
    }
    EXPECT_TRUE(set_up);
    EXPECT_TRUE(run_until([&] { return c.established || c.ended(); }));
    EXPECT_TRUE(c.established) << "client: " << tls_error(c.error) << "; server: " << g_log;
    EXPECT_TRUE(run_until([&] { return stats().handshakes != handshakes || c.ended(); }))
        << "the server did not finish the handshake";
    return c;
  }
  void send(TlsClient& c, const std::string& bytes, size_t record = 0) {
    bool sent = false;
    {
      emcp_test::NoHeapScope no_heap;
      sent = c.send(bytes, record);
    }
    ASSERT_TRUE(sent);
  }

  // The next complete response client c decrypted.
  Response next_response(TlsClient& c, int max_steps = 40000) {
    const bool ok = run_until([&] { return frame(c.text()).length != 0 || c.ended(); }, max_steps) &&
                    frame(c.text()).length != 0;
    EXPECT_TRUE(ok) << "no complete response; " << (c.ended() ? "ended: " + tls_error(c.error) : "") << "; read "
                    << std::string(c.text().substr(0, 300));
    if (!ok) return Response();
    const Framing f = frame(c.text());
    Response r = decode(c.text(), f);
    c.plain.consume(f.length);
    return r;
  }

  // Client c's echo of text, request id, in session sid: the answer holds the text.
  void expect_echo(TlsClient& c, int id, const std::string& sid, const char* text) {
    send(c, echo(id, sid, text));
    EXPECT_NE(next_response(c).body.find(text), std::string::npos) << text;
  }

  // A session, initialized over client i (TLS); the connection stays open.
  std::string session(size_t i) {
    TlsClient& c = handshake(i);
    return open_session([&](const std::string& bytes) { send(c, bytes); }, [&] { return next_response(c); });
  }

  // Client i sends its ClientHello, then nothing more (its TLS state does not move on): the
  // server's first flight arrives and waits, unread, in its pcb's buffer.
  TlsClient& hello_then_stall(size_t i) {
    TlsClient& c = g_tls[i];
    bool set_up = false;
    {
      emcp_test::NoHeapScope no_heap;
      set_up = c.connect(i);
    }
    EXPECT_TRUE(set_up);
    EXPECT_TRUE(run_until([&] {
      return c.tcp().connected() && c.tcp().unsent() == 0 && lwip_world::data_segments_from(c.tcp().port()) != 0;
    }));
    c.paused = true;
    EXPECT_TRUE(run_until([&] { return c.tcp().size() > 500; })) << "the server's first flight";
    EXPECT_EQ(c.raw_in, 0u);
    return c;
  }

  const emcp::mbedtls::TlsStats& stats() const { return tls_.stats(); }

  const emcp::Platform platform_{&fixture::now_ms, &tls_world::random, &log_line};
  emcp::mcp::Server server_{fixture::info(), platform_};
  emcp::transport::HttpOptions options_;
  emcp::lwip::StaticLwipHttpListener<kConns> net_;
  emcp::mbedtls::TlsContext context_;
  emcp::mbedtls::StaticTlsLayer<kConns> tls_{context_, net_.port_interface()};
  emcp::transport::StaticHttpServer<kConns, 2> http_{server_, options_, tls_.port_interface()};
  int64_t context_bytes_ = 0;  // what the server's TLS context holds of the pool
};

// ---- Tests ----------------------------------------------------------------------------------------

// 1. A handshake, then MCP over HTTPS: initialize, the initialized notification, a tool call,
//    and the large answer (many records, more than one TCP window); while the
//    connection is open it holds pool memory, and gives all of it back when it ends.
TEST_F(LwipTls, HandshakeAndMcpOverHttps) {
  TlsClient& c = handshake(0);
  EXPECT_EQ(stats().handshakes, 1u);
  EXPECT_EQ(stats().resumed, 0u);
  EXPECT_EQ(stats().failed, 0u);
  EXPECT_EQ(http_.connections_in_use(), 1u);
  EXPECT_GT(server_pool(), context_bytes_) << "an open connection holds its record buffers";
  const std::string sid =
      open_session([&](const std::string& bytes) { send(c, bytes); }, [&] { return next_response(c); });
  ASSERT_EQ(sid.size(), 32u);
  send(c, echo(2, sid, "over TLS over lwIP"));
  Response r = next_response(c);
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.body.rfind(R"({"jsonrpc":"2.0","id":2,"result":)", 0), 0u) << r.body;
  EXPECT_NE(r.body.find("over TLS over lwIP"), std::string::npos);

  const uint64_t before = c.tcp().received_total();
  const uint32_t records = c.in.records;
  send(c, post(call(3, "big"), sid));
  r = next_response(c);
  EXPECT_EQ(r.status, 200);
  EXPECT_TRUE(r.chunked);
  expect_all_blocks(r.body);
  EXPECT_GT(c.tcp().received_total() - before, size_t{TCP_WND}) << "more than one TCP window";
  EXPECT_GT(c.in.records - records, 10u) << "many records";
  EXPECT_EQ(net_.stats().accepted, 1u) << "one keep-alive connection for all of it";
  EXPECT_FALSE(c.ended()) << tls_error(c.error);

  c.tcp().close();
  EXPECT_TRUE(run_until([&] { return released(); }));
  EXPECT_EQ(server_pool(), context_bytes_) << "the connection's TLS memory is back";
  EXPECT_EQ(stats().record_errors, 0u);
}

// 2. Pipelined requests: three in one TLS record, then four in four records, each batch in one
//    TCP segment. The layer decrypts a record whole while the engine takes one request at a
//    time (the rest waits in the layer, the chain in the listener's queue); every request is
//    answered, in order.
TEST_F(LwipTls, PipelinedRequestsInOneRecordAndInOneSegmentAreAnsweredInOrder) {
  const std::string sid = session(0);
  TlsClient& c = g_tls[0];
  const std::string three = echo(10, sid, "first") + post(call(11, "add", R"({"a":40,"b":2})"), sid) + echo(12, sid, "third");
  ASSERT_LT(three.size() + 29, size_t{TCP_MSS}) << "one record in one segment";
  uint32_t segments = lwip_world::data_segments_from(c.tcp().port());
  send(c, three);
  const char* const texts[] = {"first", R"("sum":42)", "third"};
  for (int i = 0; i < 3; ++i) {
    const Response r = next_response(c);
    EXPECT_EQ(r.body.rfind(R"({"jsonrpc":"2.0","id":)" + std::to_string(10 + i) + ",", 0), 0u) << r.body;
    EXPECT_NE(r.body.find(texts[i]), std::string::npos) << r.body;
  }
  EXPECT_EQ(lwip_world::data_segments_from(c.tcp().port()) - segments, 1u) << "the record came in one segment";

  std::string four;  // (five of them, each with its record's 29 bytes, exceed one segment)
  for (int i = 0; i < 4; ++i) four += echo(20 + i, sid, "one of four");
  const size_t record = four.size() / 4;  // the requests are of equal size: one per record
  ASSERT_EQ(four.size() % 4, 0u);
  ASSERT_LT(four.size() + 4 * 29, size_t{TCP_MSS});
  segments = lwip_world::data_segments_from(c.tcp().port());
  send(c, four, record);
  for (int i = 0; i < 4; ++i) {
    const Response r = next_response(c);
    EXPECT_EQ(r.body.rfind(R"({"jsonrpc":"2.0","id":)" + std::to_string(20 + i) + ",", 0), 0u) << r.body;
  }
  EXPECT_EQ(lwip_world::data_segments_from(c.tcp().port()) - segments, 1u) << "four records in one segment";
  run_steps(100);
  EXPECT_TRUE(c.text().empty()) << "nothing more";
  EXPECT_EQ(stats().record_errors, 0u);
  EXPECT_FALSE(c.ended()) << tls_error(c.error);
}

// 3. Records cut into segments of any size, both ways, and windows that close in the middle of
//    a record. Each round a new connection: the client writes in segments of `segment` bytes
//    (the ClientHello, its key exchange, every request record cut across them) and reads
//    `read` bytes per 2 ms step, so its window closes and reopens while the server's records
//    are on their way, a piece per window update; once the answer started it stops reading for
//    half of send_timeout_ms (its window shut, the handler waiting for it), then reads on. The
//    handshake completes and the large answer arrives whole.
TEST_F(LwipTls, RecordsSplitAcrossSegmentsAndClosingWindowsArriveWhole) {
  const std::string sid = session(0);
  g_tls[0].tcp().close();
  struct Round {
    size_t segment, read;
  };
  const Round rounds[] = {{7, 100}, {1, 37}, {500, 1000}, {97, 5}};
  for (const Round& round : rounds) {
    SCOPED_TRACE("segments of " + std::to_string(round.segment) + " bytes, reading " + std::to_string(round.read) +
                 " bytes a step");
    TlsClient& c = g_tls[1];
    {
      emcp_test::NoHeapScope no_heap;
      ASSERT_TRUE(c.connect(1));
    }
    c.tcp().set_segment(round.segment);
    c.tcp().set_read(round.read);
    const uint32_t segments = lwip_world::data_segments_from(c.tcp().port());
    ASSERT_TRUE(run_until([&] { return c.established || c.ended(); }, 200000));
    ASSERT_TRUE(c.established) << "client: " << tls_error(c.error) << "; server: " << g_log;
    const std::string request = post(call(2, "big"), sid);
    send(c, request);
    Stall pause{&c, 2000, options_.send_timeout_ms / 2, round.read};
    lwip_world::set_hook(&stall, &pause);
    const uint32_t pumps = lwip_world::pumps();
    const Response r = next_response(c, 400000);
    lwip_world::set_hook(nullptr, nullptr);
    EXPECT_EQ(r.status, 200);
    expect_all_blocks(r.body);
    ASSERT_TRUE(pause.done);
    EXPECT_LE(pause.total_end, pause.acked_from + size_t{TCP_WND})
        << "no more than its window came after it stopped reading (received " << pause.total_from
        << " when it stopped, of which it had acknowledged " << pause.acked_from << ")";
    EXPECT_GT(pause.total_from, pause.acked_from) << "it stopped with bytes unread: its window was closing";
    EXPECT_GT(lwip_world::pumps(), pumps) << "the handler waited for the window";
    EXPECT_GE(lwip_world::data_segments_from(c.tcp().port()) - segments, (request.size() + 200) / round.segment)
        << "the client's records went in " << round.segment << "-byte segments";
    EXPECT_GT(c.split_records, 5u) << "records of the server's that came in pieces, of " << c.in.records;
    EXPECT_FALSE(c.ended()) << tls_error(c.error);
    c.tcp().close();
    ASSERT_TRUE(run_until([&] { return released(); }));
    EXPECT_EQ(server_pool(), context_bytes_);
  }
  EXPECT_EQ(stats().handshakes, 1u + 4u);
  EXPECT_EQ(stats().failed + stats().record_errors + stats().timed_out, 0u) << g_log;
  EXPECT_EQ(http_.stats().timeout_send, 0u);
}

// 4. A second connection resumes the first one's session with its ticket: no certificate, no
//    key exchange; the session (MCP's) goes on over it.
TEST_F(LwipTls, SessionTicketIsResumed) {
  const std::string sid = session(0);
  TlsClient& a = g_tls[0];
  ASSERT_TRUE(a.has_session);
  ASSERT_GT(a.session.ticket_len, 0u) << "the server issued a ticket";
  const uint64_t full = a.handshake_in;
  a.close_notify();
  ASSERT_TRUE(run_until([&] { return released(); }));
  TlsClient& b = handshake(1, &a.session);
  EXPECT_EQ(stats().handshakes, 2u);
  EXPECT_EQ(stats().resumed, 1u);
  EXPECT_EQ(context_.tickets_accepted(), 1u);
  EXPECT_LT(b.handshake_in, 600u) << "no certificate sent";
  EXPECT_GT(full, b.handshake_in + 400u) << "the full handshake sent the certificate, " << full << " bytes";
  send(b, echo(2, sid, "resumed"));
  const Response r = next_response(b);
  EXPECT_NE(r.body.find("resumed"), std::string::npos) << r.body;
}

// 5a. The client ends with close_notify, its TCP side still open: the layer lets the
//     connection go at once (the engine's slot, the listener's slot, the TLS memory), answers
//     with a close_notify of its own (RFC 5246 7.2.1: "The other party MUST respond with a
//     close_notify alert of its own and close down the connection immediately") and FIN.
TEST_F(LwipTls, ClientCloseNotifyIsAnsweredAndFreesEverythingAtOnce) {
  const std::string sid = session(0);
  TlsClient& c = g_tls[0];
  const uint32_t alerts = c.in.records_of_type[1];
  c.close_notify();
  ASSERT_TRUE(run_until([&] { return released(); }));
  EXPECT_EQ(server_pool(), context_bytes_) << "its TLS memory is back while the client's pcb is still open";
  EXPECT_TRUE(c.tcp().open());
  ASSERT_TRUE(run_until([&] { return c.ended() && c.tcp().fin(); }));
  EXPECT_TRUE(c.peer_closed) << "the server's close_notify; client: " << tls_error(c.error);
  EXPECT_EQ(c.in.records_of_type[1] - alerts, 1u) << "one alert record";
  EXPECT_FALSE(c.tcp().reset_seen());
  EXPECT_EQ(stats().record_errors + stats().failed, 0u);
  c.tcp().close();
}

// 5b. The engine ends the connection (Connection: close): the answer, the layer's close_notify,
//     then FIN, never a reset that would cost the client the end of its answer: with an open
//     window, and with a client reading 37 bytes a step, whose window is shut when the
//     close_notify is written.
TEST_F(LwipTls, EngineCloseSendsTheAnswerThenCloseNotifyThenFin) {
  const std::string sid = session(0);
  g_tls[0].tcp().close();
  for (const size_t read : {SIZE_MAX, size_t{37}}) {
    SCOPED_TRACE("reading " + std::to_string(read) + " bytes a step");
    TlsClient& c = handshake(1);
    c.tcp().set_read(read);
    send(c, post(call(2, "big"), sid, "Connection: close\r\n"));
    const Response r = next_response(c, 400000);
    EXPECT_EQ(r.status, 200);
    EXPECT_EQ(r.headers.at("connection"), "close");
    expect_all_blocks(r.body);
    ASSERT_TRUE(run_until([&] { return c.ended() && (c.tcp().fin() || c.tcp().reset_seen()); }, 400000));
    EXPECT_TRUE(c.peer_closed) << "close_notify after the answer; client: " << tls_error(c.error);
    EXPECT_TRUE(c.tcp().fin());
    EXPECT_FALSE(c.tcp().reset_seen()) << "a reset after the answer";
    EXPECT_TRUE(released());
    c.tcp().close();
  }
}

// 6a. A client that resets in the middle of its handshake (its ClientHello sent, the server's
//     first flight in and unanswered; then again half-way through its key exchange record, sent
//     in 7-byte segments): the server lets go of the pcb, the slots and the handshake's TLS
//     memory, and counts no failed handshake.
TEST_F(LwipTls, ResetInTheMiddleOfAHandshakeFreesItsPcbAndTlsMemory) {
  TlsClient& c = hello_then_stall(0);
  ASSERT_FALSE(c.established);
  EXPECT_EQ(http_.connections_in_use(), 1u);
  EXPECT_GT(server_pool(), context_bytes_) << "the handshake holds TLS memory";
  const uint32_t errors = net_.stats().errors;
  c.tcp().abort();
  ASSERT_TRUE(run_until([&] { return released(); }));
  EXPECT_FALSE(lwip_world::server_pcb_for(c.tcp().port(), kPort)) << "the reset freed the server's pcb";
  EXPECT_EQ(server_pool(), context_bytes_) << "the handshake's TLS memory is back";
  EXPECT_EQ(net_.stats().errors - errors, 1u);

  // Half-way through a record: the client's second flight goes in 7-byte segments; it resets
  // after four of them reached the server.
  TlsClient& d = g_tls[1];
  {
    emcp_test::NoHeapScope no_heap;
    ASSERT_TRUE(d.connect(1));
  }
  d.tcp().set_segment(7);
  uint32_t segments = 0;
  ASSERT_TRUE(run_until([&] {
    // Its second flight is queued in the step that read the server's ServerHelloDone.
    if (segments == 0 && d.in.records_of_type[2] >= 4 && d.tcp().unsent() != 0)
      segments = lwip_world::data_segments_from(d.tcp().port());
    return segments != 0 && lwip_world::data_segments_from(d.tcp().port()) >= segments + 4;
  }));
  EXPECT_NE(d.tcp().unsent(), 0u);
  EXPECT_FALSE(d.established);
  d.tcp().abort();
  ASSERT_TRUE(run_until([&] { return released(); }));
  EXPECT_FALSE(lwip_world::server_pcb_for(d.tcp().port(), kPort));
  EXPECT_EQ(server_pool(), context_bytes_);
  EXPECT_EQ(stats().failed + stats().handshakes, 0u);
  // The port goes on serving.
  EXPECT_TRUE(handshake(2).established);
}

// 6b. Resets in the middle of a record once established: a request record half sent (7-byte
//     segments); and an answer's record half out, the client's window shut and the handler
//     waiting for it (the reset arrives inside the listener's pump). Slots, pcbs and TLS memory
//     are all back each time, and the next client is served.
TEST_F(LwipTls, ResetInTheMiddleOfARecordFreesEverything) {
  const std::string sid = session(0);
  TlsClient& c = g_tls[0];
  c.tcp().set_segment(7);
  const uint32_t segments = lwip_world::data_segments_from(c.tcp().port());
  send(c, echo(2, sid, "never finished"));
  ASSERT_TRUE(run_until([&] { return lwip_world::data_segments_from(c.tcp().port()) >= segments + 10; }));
  ASSERT_NE(c.tcp().unsent(), 0u) << "the record is not all out";
  EXPECT_EQ(http_.connections_in_use(), 1u);
  c.tcp().abort();
  ASSERT_TRUE(run_until([&] { return released(); }));
  EXPECT_FALSE(lwip_world::server_pcb_for(c.tcp().port(), kPort));
  EXPECT_EQ(server_pool(), context_bytes_);
  EXPECT_TRUE(g_tls[0].text().empty()) << "no answer to half a record";

  TlsClient& b = handshake(1);
  b.tcp().set_read(37);
  ResetInPump reset{&b};
  lwip_world::set_hook(&reset_in_pump, &reset);
  send(b, post(call(3, "big"), sid));
  ASSERT_TRUE(run_until([&] { return reset.done; }, 200000));
  lwip_world::set_hook(nullptr, nullptr);
  EXPECT_GT(b.plain.size(), 0u) << "the answer had begun";
  ASSERT_TRUE(run_until([&] { return released(); }));
  EXPECT_FALSE(lwip_world::server_pcb_for(b.tcp().port(), kPort));
  EXPECT_EQ(server_pool(), context_bytes_);
  EXPECT_EQ(stats().record_errors, 0u);

  TlsClient& d = handshake(2);
  expect_echo(d, 4, sid, "after the resets");
}

// 7. A handshake that stalls (the client read the server's first flight, then sends nothing)
//    is dropped at handshake_timeout_ms, measured on the server's side from the connection's
//    open to its end: not before, and at the latest one poll() interval and a step later. So
//    is a client that never sends a byte. The server's TLS memory is back each time; the
//    stalled client gets FIN.
TEST_F(LwipTls, HandshakeThatStallsIsDroppedAtTheHandshakeTimeout) {
  emcp::mbedtls::TlsOptions options;
  options.handshake_timeout_ms = 3000;
  init_context(options);
  OpenedAt opened{&http_};
  lwip_world::set_hook(&note_open, &opened);
  TlsClient& c = hello_then_stall(0);
  ASSERT_NE(opened.at, 0u);
  ASSERT_TRUE(run_until([&] { return http_.connections_in_use() == 0; }));
  const uint64_t closed = fixture::now_ms();
  EXPECT_GE(closed - opened.at, options.handshake_timeout_ms);
  EXPECT_LE(closed - opened.at, options.handshake_timeout_ms + kPollMs + lwip_world::tick());
  EXPECT_EQ(stats().timed_out, 1u);
  EXPECT_STREQ(g_log, "tls: connection ended: handshake timed out");
  EXPECT_EQ(server_pool(), context_bytes_);
  ASSERT_TRUE(run_until([&] { return c.tcp().fin() || c.tcp().reset_seen(); }));
  EXPECT_TRUE(c.tcp().fin());
  EXPECT_FALSE(c.tcp().reset_seen());
  c.tcp().close();

  // A client that connects and never sends a byte.
  lwip_world::Client& raw = lwip_world::client(1);
  ASSERT_TRUE(raw.connect(kPort));
  opened.at = 0;
  ASSERT_TRUE(run_until([&] { return opened.at != 0 && http_.connections_in_use() == 0; }));
  EXPECT_GE(fixture::now_ms() - opened.at, options.handshake_timeout_ms);
  EXPECT_LE(fixture::now_ms() - opened.at, options.handshake_timeout_ms + kPollMs + lwip_world::tick());
  EXPECT_EQ(stats().timed_out, 2u);
  ASSERT_TRUE(run_until([&] { return raw.fin(); }));
  EXPECT_EQ(raw.size(), 0u) << "nothing was sent to it";
  EXPECT_EQ(stats().handshakes + stats().failed, 0u);
}

// 8. Garbage instead of a ClientHello, and plain HTTP to the TLS port: the first ends the
//    connection (a failed handshake, FIN), the second is answered 400 in plain text, then FIN;
//    its request body, still arriving in segments, is read and dropped meanwhile, not answered
//    with a reset that could cost the client the 400.
TEST_F(LwipTls, GarbageOrPlainHttpInsteadOfAClientHello) {
  lwip_world::Client& g = lwip_world::client(0);
  ASSERT_TRUE(g.connect(kPort));
  uint8_t junk[64];
  for (size_t i = 0; i < sizeof junk; ++i) junk[i] = static_cast<uint8_t>(i * 37 + 1);
  ASSERT_TRUE(g.send(junk, sizeof junk));
  ASSERT_TRUE(run_until([&] { return g.fin() || g.reset_seen(); }));
  EXPECT_TRUE(g.fin());
  EXPECT_FALSE(g.reset_seen());
  EXPECT_EQ(g.size(), 0u) << "nothing but the end";
  EXPECT_EQ(stats().failed, 1u);
  EXPECT_TRUE(released());
  EXPECT_EQ(server_pool(), context_bytes_);
  g.close();

  lwip_world::Client& h = lwip_world::client(1);
  ASSERT_TRUE(h.connect(kPort));
  h.set_segment(100);
  const std::string request = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                              "Content-Length: 4000\r\n\r\n" + std::string(4000, ' ');
  ASSERT_TRUE(h.send(request.data(), request.size()));
  ASSERT_TRUE(run_until([&] { return h.fin() || h.reset_seen(); }));
  ASSERT_TRUE(run_until([&] { return h.unsent() == 0; }));
  run_steps(100);
  EXPECT_TRUE(h.fin());
  EXPECT_FALSE(h.reset_seen()) << "the rest of the body was answered with a reset";
  const std::string_view in(h.data(), h.size());
  const Framing f = frame(in);
  ASSERT_NE(f.length, 0u) << std::string(in);
  EXPECT_EQ(f.status, 400);
  const Response r = decode(in, f);
  EXPECT_EQ(r.body, "this port speaks HTTPS, not HTTP\r\n");
  EXPECT_EQ(r.headers.at("connection"), "close");
  EXPECT_EQ(in.size(), f.length) << "nothing after it";
  EXPECT_EQ(stats().failed, 2u);
  h.close();
  // The port goes on serving.
  EXPECT_TRUE(handshake(2).established);
}

// 9. Mbed TLS's pool full: a new connection's record buffers do not fit, so the layer refuses
//    it and the listener sends the refusal, a fatal internal_error alert, whole, then FIN; the
//    established connection goes on meanwhile (it allocates nothing), and once memory is free
//    again a new connection is served.
TEST_F(LwipTls, PoolFullRefusesAConnectionWithAnAlertAndTheOthersGoOn) {
  const std::string sid = session(0);
  TlsClient& a = g_tls[0];
  TlsClient& b = g_tls[1];
  {
    emcp_test::NoHeapScope no_heap;
    ASSERT_TRUE(b.connect(1));  // its own context first: the pool is full from here
    hold_pool();
  }
  const uint32_t failures = static_cast<uint32_t>(pool_stats().failures);
  ASSERT_TRUE(run_until([&] { return b.ended(); }));
  EXPECT_EQ(stats().refused_memory, 1u);
  EXPECT_EQ(net_.stats().refused_busy, 1u) << "the listener sent the layer's refusal";
  EXPECT_GT(pool_stats().failures, failures);
  EXPECT_EQ(context_.last_error(), MBEDTLS_ERR_SSL_ALLOC_FAILED);
  const uint8_t alert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50};  // fatal internal_error
  ASSERT_EQ(b.raw_in, sizeof alert);
  EXPECT_EQ(memcmp(b.raw_head, alert, sizeof alert), 0);
  EXPECT_TRUE(b.failed);
  EXPECT_EQ(b.error, MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) << tls_error(b.error);
  ASSERT_TRUE(run_until([&] { return b.tcp().fin() || b.tcp().reset_seen(); }));
  EXPECT_TRUE(b.tcp().fin());
  EXPECT_FALSE(b.tcp().reset_seen());
  // The established one is served with the pool full.
  expect_echo(a, 2, sid, "while the pool is full");
  EXPECT_EQ(http_.connections_in_use(), 1u);
  b.tcp().close();
  {
    emcp_test::NoHeapScope no_heap;
    release_pool();
  }
  TlsClient& d = handshake(2);
  expect_echo(d, 3, sid, "memory is back");
  EXPECT_EQ(stats().handshakes, 2u);
}

// 10. More TLS clients than slots: the engine's three connections are busy (each waits for a
//     deferred call, so none is idle and none gives way), two more clients connect at once. The
//     listener's spare slot answers with the layer's refusal, a fatal internal_error alert,
//     whole, then FIN (never a reset that could cost the client the alert); the one beyond it
//     is reset at accept. Neither takes TLS memory. The three are answered afterwards, and once
//     a slot is free a new client is served.
TEST_F(LwipTls, MoreTlsClientsThanSlotsGetTheRefusalAlertOrAResetAndTheOthersAreServed) {
  const std::string sid = session(0);
  g_tls[0].tcp().close();
  ASSERT_TRUE(run_until([&] { return released(); }));
  for (size_t i = 1; i <= kConns; ++i) send(handshake(i), post(call(static_cast<int>(10 + i), "slow"), sid));
  ASSERT_TRUE(run_until([&] { return fixture::pending_slow() == static_cast<int>(kConns); }));
  EXPECT_EQ(http_.connections_in_use(), kConns);
  const int64_t busy_pool = server_pool();
  const uint32_t accepted = net_.stats().accepted;
  {
    emcp_test::NoHeapScope no_heap;
    for (size_t i = kConns + 1; i <= kConns + 2; ++i) ASSERT_TRUE(g_tls[i].connect(i));
  }
  ASSERT_TRUE(run_until([&] { return g_tls[kConns + 1].ended() && g_tls[kConns + 2].ended(); }));
  run_steps(200);  // whatever else was coming
  const uint8_t alert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50};  // fatal internal_error
  size_t refused = 0, reset = 0;
  for (size_t i = kConns + 1; i <= kConns + 2; ++i) {
    const TlsClient& c = g_tls[i];
    SCOPED_TRACE("client " + std::to_string(i) + ": " + tls_error(c.error));
    EXPECT_FALSE(c.established);
    if (c.raw_in != 0) {
      ++refused;
      ASSERT_EQ(c.raw_in, sizeof alert) << "the alert and nothing else";
      EXPECT_EQ(memcmp(c.raw_head, alert, sizeof alert), 0);
      EXPECT_EQ(c.error, MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE);
      EXPECT_TRUE(c.tcp().fin()) << "the alert ends with FIN";
      EXPECT_FALSE(c.tcp().reset_seen()) << "not with RST";
    } else {
      ++reset;
      EXPECT_TRUE(c.tcp().reset_seen());
      EXPECT_EQ(c.tcp().error(), ERR_RST);
      EXPECT_EQ(c.error, MBEDTLS_ERR_NET_CONN_RESET);
    }
  }
  EXPECT_EQ(refused, 1u);
  EXPECT_EQ(reset, 1u);
  EXPECT_EQ(net_.stats().accepted - accepted, 0u);
  EXPECT_EQ(net_.stats().refused_busy, 1u);
  EXPECT_EQ(net_.stats().refused_reset, 1u);
  EXPECT_EQ(stats().refused_memory, 0u);
  EXPECT_EQ(stats().failed, 0u);
  EXPECT_EQ(server_pool(), busy_pool) << "the refused took no TLS memory";
  {
    emcp_test::NoHeapScope no_heap;
    for (size_t i = 0; i < kConns; ++i) EXPECT_EQ(fixture::complete_slow(), Status::kOk);
  }
  for (size_t i = 1; i <= kConns; ++i) {
    const Response r = next_response(g_tls[i]);
    EXPECT_EQ(r.status, 200);
    EXPECT_NE(r.body.find("slow done"), std::string::npos) << r.body;
  }
  g_tls[1].close_notify();
  ASSERT_TRUE(run_until([&] { return http_.connections_in_use() == kConns - 1; }));
  TlsClient& late = handshake(kConns + 1);
  expect_echo(late, 20, sid, "room again");
}

// 11. A bad record and a fatal alert on established connections, each ending that connection
//     only: a request record with one bit of its ciphertext flipped (bad record MAC: counted as
//     a record error; the boards' configuration sends no bad_record_mac alert unless built with
//     MBEDTLS_SSL_ALL_ALERT_MESSAGES), then a client's fatal alert (RFC 5246 7.2: both sides
//     close at once, the server sends nothing more). Each time the engine's slot, the
//     listener's, the server's pcb and the connection's TLS memory are all back, the client
//     gets FIN, the MCP session outlives its connection, and another connection is served.
TEST_F(LwipTls, BadRecordOrFatalAlertEndsOnlyThatConnection) {
  const std::string sid = session(0);
  const int64_t one = server_pool() - context_bytes_;  // what an established connection holds
  TlsClient& other = handshake(1);
  EXPECT_EQ(server_pool(), context_bytes_ + 2 * one);

  TlsClient& c = g_tls[0];
  const uint32_t alerts = c.in.records_of_type[1];
  c.flip_at = 30;  // in the ciphertext (after the header and the explicit nonce)
  send(c, echo(2, sid, "spoiled"));
  ASSERT_TRUE(run_until([&] { return c.ended(); }));
  EXPECT_EQ(stats().record_errors, 1u);
  EXPECT_STREQ(g_log, "tls: connection ended: bad record MAC");
  EXPECT_TRUE(c.text().empty()) << "no answer to the spoiled request";
#if defined(MBEDTLS_SSL_ALL_ALERT_MESSAGES)
  EXPECT_EQ(c.in.records_of_type[1] - alerts, 1u) << "a bad_record_mac alert";
#else
  EXPECT_EQ(c.in.records_of_type[1] - alerts, 0u) << "no alert without MBEDTLS_SSL_ALL_ALERT_MESSAGES";
#endif
  EXPECT_TRUE(c.eof) << "the connection ended with FIN; client: " << tls_error(c.error);
  EXPECT_TRUE(c.tcp().fin());
  EXPECT_FALSE(c.tcp().reset_seen());
  ASSERT_TRUE(run_until([&] { return http_.connections_in_use() == 1 && net_.slots_in_use() == 1; }));
  EXPECT_EQ(server_pool(), context_bytes_ + one) << "its TLS memory is back, the other's kept";
  c.tcp().close();

  const uint32_t other_alerts = other.in.records_of_type[1];
  other.fatal_alert(MBEDTLS_SSL_ALERT_MSG_ACCESS_DENIED);
  ASSERT_TRUE(run_until([&] { return released(); }));
  EXPECT_EQ(stats().record_errors, 2u);
  EXPECT_STREQ(g_log, "tls: connection ended: the peer sent a fatal alert");
  EXPECT_EQ(server_pool(), context_bytes_);
  ASSERT_TRUE(run_until([&] { return other.tcp().fin() || other.tcp().reset_seen(); }));
  EXPECT_TRUE(other.tcp().fin());
  EXPECT_FALSE(other.tcp().reset_seen());
  EXPECT_EQ(other.in.records_of_type[1] - other_alerts, 0u) << "nothing after a fatal alert";
  EXPECT_EQ(other.tcp().size(), 0u) << "nothing at all";
  EXPECT_EQ(http_.sessions_in_use(), 1u) << "the session outlives its connections";

  TlsClient& d = handshake(2);
  expect_echo(d, 3, sid, "after the bad record");
  EXPECT_EQ(stats().failed, 0u);
}

// 12. A client that sends many requests and reads none of the answers, then resets: its window
//     shuts, the answers wait, the layer takes no more input while the engine's output waits,
//     so the listener's queue fills with the client's records and lwIP keeps the rest (its
//     window does the rest). The reset lets all of it go: the queued pbufs (lwIP's pools are
//     checked at the end), the slots, the pcb, the TLS memory; another client is served.
TEST_F(LwipTls, ResetWithRecordsQueuedInTheListenerFreesThem) {
  const std::string sid = session(0);
  TlsClient& c = g_tls[0];
  c.tcp().set_read(0);
  std::string many;
  for (int i = 0; i < 80; ++i) many += echo(100 + i, sid, "unread answer 0123456789012345678901234567890123456789");
  c.tcp().set_segment(300);  // small segments: more chains than the listener's queue holds
  send(c, many);
  const uint32_t deferred = net_.stats().rx_deferred;
  ASSERT_TRUE(run_until([&] { return net_.stats().rx_deferred != deferred; }))
      << "the listener's queue filled (" << c.tcp().unsent() << " bytes not sent yet)";
  EXPECT_EQ(http_.connections_in_use(), 1u);
  EXPECT_NE(c.tcp().unsent(), 0u) << "lwIP's window held the rest back";
  c.tcp().abort();
  ASSERT_TRUE(run_until([&] { return released(); }));
  EXPECT_FALSE(lwip_world::server_pcb_for(c.tcp().port(), kPort));
  EXPECT_EQ(server_pool(), context_bytes_);
  EXPECT_EQ(stats().record_errors, 0u);
  TlsClient& d = handshake(1);
  expect_echo(d, 2, sid, "after the flood");
}

}  // namespace
