// The TLS layer (emcp::mbedtls::TlsLayer) between a fake listener and the HTTP engine, with real
// Mbed TLS clients (tests/tls/tls_world.h): the handshake and MCP over it; a listener that takes
// a few bytes at a time (every record split: the engine hears its bytes were taken only once
// their record is out) or nothing until it calls writable(); answers of many records;
// pipelined requests (plaintext the engine cannot take yet waits in the layer); resumption with
// a session ticket; the handshake timeout; plain HTTP and garbage on the TLS port; the client's
// close_notify; a connection whose Mbed TLS context cannot be set up; TlsContext::init's
// refusals. The credentials are made by the test with Mbed TLS (nothing is committed).
//
// In every test the world checks that the listener is only called for connections it holds,
// that the engine's connections are the listener's, and that what each client decrypts is
// byte for byte what the engine was told went out (TearDown).
//
// (Mbed TLS allocates on the host: these tests open no NoHeapScope.)
#include <dlfcn.h>
#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "../tls/tls_world.h"
#include "http_responses.h"
#include "mcp_fixture_app.h"
#include "emcp/mbedtls/sha1.h"
#include "mbedtls/error.h"
#include "mbedtls/ssl_internal.h"

// mbedtls_ssl_setup, as the layer and the clients call it; g_fail_ssl_setup > 0 makes the
// next calls fail as when a connection's record buffers do not fit (the boards' pool, or
// malloc). The program's own definition takes the place of libmbedtls's (dynamic linking).
namespace {
int g_fail_ssl_setup = 0;
}  // namespace
extern "C" int mbedtls_ssl_setup(mbedtls_ssl_context* ssl, const mbedtls_ssl_config* conf) {
  using Fn = int (*)(mbedtls_ssl_context*, const mbedtls_ssl_config*);
  static const Fn real = reinterpret_cast<Fn>(dlsym(RTLD_NEXT, "mbedtls_ssl_setup"));
  if (g_fail_ssl_setup > 0) {
    --g_fail_ssl_setup;
    return MBEDTLS_ERR_SSL_ALLOC_FAILED;
  }
  if (real == nullptr) abort();
  return real(ssl, conf);
}

namespace {

using emcp::Status;
using tls_world::kUnlimited;
using tls_world::World;

// ---- HTTP, written and read from RFC 9112 ----------------------------------------------------

std::string post(const std::string& body, const std::string& extra = "") {
  return "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
         "Accept: application/json, text/event-stream\r\n" +
         extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string init_body() {
  return R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
         R"("capabilities":{},"clientInfo":{"name":"tls-test","version":"1"}}})";
}

std::string call(int id, const char* tool, const char* args = "{}") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + args + "}}";
}

using http_test::Response;
// Only complete responses: a request's answer is checked once all of it came through TLS.
std::vector<Response> parse(std::string& in) { return http_test::parse_complete(in); }

std::string tls_error(int code) {
  char text[160];
  mbedtls_strerror(code, text, sizeof text);
  return std::to_string(code) + " " + text;
}

// ---- The fixture: a world per test, in static storage -----------------------------------------

std::optional<World> g_world;

class TlsLayer : public ::testing::Test {
 protected:
  void TearDown() override {
    if (g_world) {
      EXPECT_EQ(w().faults(), 0u) << w().fault();
      const char* wrong = w().check_transcripts(true);
      EXPECT_EQ(wrong, nullptr) << wrong;
      g_world.reset();
    }
    g_fail_ssl_setup = 0;
  }

  World& make(const tls_world::WorldOptions& options = tls_world::WorldOptions()) {
    tls_world::reset_random();
    g_world.emplace(options);
    EXPECT_EQ(w().init_status(), Status::kOk) << emcp::mbedtls::TlsContext::error_text(w().context.last_error());
    return w();
  }
  static World& w() { return *g_world; }
  static tls_world::Client& client(size_t i) { return w().client(i); }
  static const emcp::mbedtls::TlsStats& stats() { return w().tls.stats(); }

  // Client i connects and the world runs until the handshake is done.
  void handshake(size_t i, const mbedtls_ssl_session* resume = nullptr) {
    ASSERT_GE(w().connect(i, true, resume), 0);
    w().run();
    ASSERT_TRUE(client(i).established) << "client error " << tls_error(client(i).error);
  }
  void send(size_t i, const std::string& bytes, size_t record = 0) {
    ASSERT_TRUE(w().send(i, bytes.data(), bytes.size(), record));
  }
  // The complete responses client i decrypted so far.
  std::vector<Response> responses(size_t i) {
    const char* p = nullptr;
    const size_t n = client(i).unread(&p);
    pending_[i].append(p, n);
    return parse(pending_[i]);
  }
  // initialize and notifications/initialized over client i; the session id.
  std::string initialize(size_t i) {
    send(i, post(init_body()));
    w().run();
    auto rs = responses(i);
    EXPECT_EQ(rs.size(), 1u);
    if (rs.size() != 1) return "";
    EXPECT_EQ(rs[0].status, 200);
    EXPECT_NE(rs[0].body.find("\"protocolVersion\":\"2025-11-25\""), std::string::npos) << rs[0].body;
    const std::string sid = rs[0].headers["mcp-session-id"];
    EXPECT_EQ(sid.size(), 32u);
    send(i, post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "Mcp-Session-Id: " + sid + "\r\n"));
    w().run();
    rs = responses(i);
    EXPECT_EQ(rs.size(), 1u);
    if (!rs.empty()) {
      EXPECT_EQ(rs[0].status, 202);
    }
    return sid;
  }
  // A tools/call on client i, answered in full; its response.
  Response tool_call(size_t i, const std::string& sid, int id, const char* tool, const char* args = "{}") {
    send(i, post(call(id, tool, args), "Mcp-Session-Id: " + sid + "\r\n"));
    w().run();
    auto rs = responses(i);
    EXPECT_EQ(rs.size(), 1u);
    return rs.empty() ? Response() : rs[0];
  }

  std::string pending_[tls_world::kClients];  // what each client decrypted, not yet parsed
};

std::string echo_args(const char* text) { return std::string(R"({"text":")") + text + "\"}"; }

// ---- Tests ----------------------------------------------------------------------------------------

TEST_F(TlsLayer, HandshakeInitializeAndToolCallRoundTrip) {
  make();
  handshake(0);
  EXPECT_EQ(stats().handshakes, 1u);
  EXPECT_EQ(stats().resumed, 0u);
  EXPECT_EQ(stats().failed, 0u);
  EXPECT_EQ(w().http.connections_in_use(), 1u);
  const std::string sid = initialize(0);
  const Response r = tool_call(0, sid, 2, "echo", echo_args("over TLS").c_str());
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(R"("id":2,"result")"), std::string::npos) << r.body;
  EXPECT_NE(r.body.find("over TLS"), std::string::npos) << r.body;
  EXPECT_EQ(client(0).error, 0);
  EXPECT_FALSE(client(0).ended());
  EXPECT_EQ(client(0).pipe.short_writes, 0u) << "an open window takes every record whole";
}

// Every record the layer offers is split: the listener takes 7 bytes, then nothing until it
// calls writable(). Handshake flights, answers and their records go out 7 bytes per round; the
// engine hears its bytes were taken only once their record is out, and re-offers them.
TEST_F(TlsLayer, SevenByteWindowSplitsEveryRecordAndTheAnswersArriveIntact) {
  make();
  ASSERT_GE(w().connect(0), 0);
  client(0).pipe.window = 7;
  client(0).pipe.grant = 7;
  w().run();
  ASSERT_TRUE(client(0).established) << "client: " << tls_error(client(0).error) << "; server: "
                                     << tls_world::last_log() << " (" << tls_error(w().context.last_error()) << ")";
  EXPECT_GT(client(0).pipe.short_writes, 20u);
  const std::string sid = initialize(0);
  const uint32_t before = client(0).pipe.writable_calls;
  const Response r = tool_call(0, sid, 2, "echo", echo_args("seven at a time").c_str());
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find("seven at a time"), std::string::npos) << r.body;
  EXPECT_GT(client(0).pipe.writable_calls - before, 30u) << "the answer went out 7 bytes per writable()";
  const Response big = tool_call(0, sid, 3, "big");
  EXPECT_EQ(big.status, 200);
  EXPECT_NE(big.body.find("block 199: "), std::string::npos);
  EXPECT_EQ(stats().failed, 0u);
  EXPECT_EQ(stats().record_errors, 0u);
  EXPECT_EQ(client(0).error, 0) << tls_error(client(0).error);
}

// The listener takes nothing, and calls writable() only when the test says: during the
// handshake and during an answer.
TEST_F(TlsLayer, ListenerThatTakesNothingThenCallsWritable) {
  make();
  ASSERT_GE(w().connect(0), 0);
  tls_world::Pipe& pipe = client(0).pipe;
  pipe.window = 0;
  pipe.hold = true;
  w().run();
  EXPECT_FALSE(client(0).established);
  EXPECT_TRUE(pipe.to_client.empty()) << "the window is shut";
  EXPECT_TRUE(pipe.owes_writable);
  EXPECT_FALSE(pipe.server_closed);
  pipe.hold = false;
  w().writable(0, kUnlimited);
  w().run();
  ASSERT_TRUE(client(0).established) << "client: " << tls_error(client(0).error) << "; server: "
                                     << tls_world::last_log() << " (" << tls_error(w().context.last_error()) << ")";
  const std::string sid = initialize(0);
  // Now an answer meets the shut window.
  pipe.window = 0;
  pipe.hold = true;
  send(0, post(call(2, "echo", echo_args("held back").c_str()), "Mcp-Session-Id: " + sid + "\r\n"));
  w().run();
  EXPECT_TRUE(responses(0).empty());
  EXPECT_TRUE(w().http.output_pending(static_cast<uint16_t>(pipe.conn))) << "the engine holds its answer";
  EXPECT_TRUE(pipe.owes_writable);
  pipe.hold = false;
  w().writable(0, kUnlimited);
  w().run();
  const auto rs = responses(0);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("held back"), std::string::npos);
  EXPECT_EQ(stats().failed, 0u);
}

// 20 KB of text (the fixture's `big` tool) through the engine's 512-byte output buffer: many
// records, read intact; once more through a 100-byte window, where the handler's output waits
// for the window (wait_writable through the layer).
TEST_F(TlsLayer, LongAnswerOfManyRecordsArrivesIntact) {
  make();
  handshake(0);
  const std::string sid = initialize(0);
  const uint32_t records_before = client(0).pipe.records;
  const Response r = tool_call(0, sid, 2, "big");
  EXPECT_EQ(r.status, 200);
  EXPECT_GT(r.body.size(), 16384u);
  EXPECT_GT(r.chunk_sizes.size(), 10u);
  for (int i = 0; i < 200; i += 37)
    EXPECT_NE(r.body.find("block " + std::to_string(i) + ": 0123456789"), std::string::npos) << i;
  EXPECT_NE(r.body.find("block 199: "), std::string::npos);
  EXPECT_GT(client(0).pipe.records - records_before, 30u);

  client(0).pipe.window = 100;
  client(0).pipe.grant = 100;
  const Response slow = tool_call(0, sid, 3, "big");
  EXPECT_EQ(slow.body, r.body.substr(0, r.body.find(R"("id":2)")) + R"("id":3)" +
                           r.body.substr(r.body.find(R"("id":2)") + 6))
      << "the same answer";
  EXPECT_GT(client(0).pipe.waits, 0u) << "the handler's output waited for the window";
  EXPECT_EQ(client(0).error, 0) << tls_error(client(0).error);
}

// Two requests in one TLS record. The first answer meets a small window: the engine takes no
// more input meanwhile, and the second request's plaintext waits in the layer (it was
// decrypted already) until the engine wants it. Both are answered, in order.
TEST_F(TlsLayer, TwoPipelinedRequestsInOneRecordAreAnsweredInOrder) {
  make();
  handshake(0);
  const std::string sid = initialize(0);
  const std::string both = post(call(2, "echo", echo_args("first").c_str()), "Mcp-Session-Id: " + sid + "\r\n") +
                           post(call(3, "echo", echo_args("second").c_str()), "Mcp-Session-Id: " + sid + "\r\n");
  tls_world::Pipe& pipe = client(0).pipe;
  const uint16_t conn = static_cast<uint16_t>(pipe.conn);
  pipe.window = 40;
  pipe.hold = true;  // the listener calls writable() when the test says
  const uint32_t records = client(0).pipe.records;
  send(0, both);
  w().run();
  EXPECT_EQ(client(0).pipe.records, records) << "nothing whole went out yet";
  EXPECT_TRUE(w().http.output_pending(conn));
  EXPECT_FALSE(w().tls.handler().wants_input(conn)) << "the second request waits in the layer";
  pipe.hold = false;
  pipe.grant = 40;
  w().writable(0, 40);
  w().run();
  auto rs = responses(0);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_NE(rs[0].body.find(R"("id":2,"result")"), std::string::npos) << rs[0].body;
  EXPECT_NE(rs[0].body.find("first"), std::string::npos);
  EXPECT_NE(rs[1].body.find(R"("id":3,"result")"), std::string::npos) << rs[1].body;
  EXPECT_NE(rs[1].body.find("second"), std::string::npos);
  EXPECT_TRUE(w().tls.handler().wants_input(conn));
}

// The same without the listener's poll(): the layer itself must hand the waiting plaintext to
// the engine once the engine's answer is out (writable()).
TEST_F(TlsLayer, PipelinedRequestGoesOnFromWritableWithoutPoll) {
  make();
  handshake(0);
  const std::string sid = initialize(0);
  const std::string both = post(call(2, "echo", echo_args("first").c_str()), "Mcp-Session-Id: " + sid + "\r\n") +
                           post(call(3, "echo", echo_args("second").c_str()), "Mcp-Session-Id: " + sid + "\r\n");
  w().poll_each_round = false;
  client(0).pipe.window = 40;
  client(0).pipe.grant = 40;
  send(0, both);
  w().run();
  auto rs = responses(0);
  ASSERT_EQ(rs.size(), 2u);
  EXPECT_NE(rs[0].body.find("first"), std::string::npos);
  EXPECT_NE(rs[1].body.find("second"), std::string::npos);
}

// The server's first flight meets a shut window while more bytes from the client wait: the
// layer cannot read on before its flight is out, so it must not say it wants input (a listener
// would offer the bytes again and again: ports/posix polls without a timeout then).
TEST_F(TlsLayer, HandshakeFlightHeldByAShutWindowAsksForNoInput) {
  make();
  ASSERT_GE(w().connect(0), 0);
  tls_world::Pipe& pipe = client(0).pipe;
  pipe.window = 0;
  pipe.hold = true;
  (void)w().step();  // the ClientHello goes in; the server's flight cannot go out
  const uint16_t conn = static_cast<uint16_t>(pipe.conn);
  ASSERT_TRUE(pipe.owes_writable);
  client(0).paused = true;
  const uint8_t more[] = {0x16, 0x03, 0x03, 0x00, 0x01, 0x00};  // whatever the client sends next
  ASSERT_TRUE(pipe.to_server.append(more, sizeof more));
  EXPECT_FALSE(w().tls.handler().wants_input(conn)) << "its flight is still going out";
  w().run();
  EXPECT_EQ(w().faults(), 0u) << w().fault();
  EXPECT_EQ(pipe.to_server.size(), sizeof more) << "offered again once the layer wants it";
  pipe.hold = false;
  w().writable(0, kUnlimited);
  EXPECT_TRUE(w().tls.handler().wants_input(conn));
  w().run();
  EXPECT_TRUE(pipe.server_closed) << "the bytes were read: not the client's next flight";
  EXPECT_EQ(stats().failed, 1u);
}

// Every slot holds a connection (two still in their handshake): a new one takes the place of
// the one idle the longest (the engine closes it through the layer).
TEST_F(TlsLayer, NewConnectionWhenEverySlotIsTakenReplacesTheOldestSilentOne) {
  make();
  handshake(0);
  fixture::advance_ms(10);
  handshake(1);
  fixture::advance_ms(10);
  ASSERT_GE(w().connect(2), 0);
  ASSERT_GE(w().connect(3), 0);
  fixture::advance_ms(10);
  EXPECT_EQ(w().http.connections_in_use(), 4u);
  // None has sent a request yet: beyond the engine's reclaim grace (docs/http.md, "Under
  // attack") the one accepted first gives way, handshake done or not.
  fixture::advance_ms(1000);
  handshake(4);
  EXPECT_EQ(w().http.connections_in_use(), 4u);
  EXPECT_EQ(w().slots_in_use(), 4u);
  EXPECT_TRUE(client(0).pipe.server_closed) << "the idlest went";
  EXPECT_TRUE(client(0).ended());
  EXPECT_FALSE(client(1).pipe.server_closed);
  const std::string sid = initialize(4);
  EXPECT_EQ(sid.size(), 32u);
}

// A client asks to renegotiate (a ClientHello on the established connection): refused, as
// docs/http.md says. Mbed TLS 2.28's server answers one warning no_renegotiation alert (RFC 5246
// 7.2.2: "At that point, the original requester can decide whether to proceed with the
// connection"; RFC 5746 makes renegotiation safe, it does not oblige a server to accept one)
// and keeps the connection: no ServerHello, no new handshake. Seen on the wire (a record's type
// is in clear) and by the client's Mbed TLS (the alert it decoded); the client then gives its
// renegotiation up, as the RFC lets it, and the same connection still serves.
TEST_F(TlsLayer, RenegotiationIsRefused) {
  tls_world::WorldOptions options;
  options.client_renegotiation = true;
  options.client_alerts = true;
  make(options);
  handshake(0);
  const std::string sid = initialize(0);
  tls_world::Client& c = client(0);
  uint32_t types[4];
  memcpy(types, c.pipe.records_of_type, sizeof types);
  const uint64_t to_server = c.pipe.to_server.total();
  ASSERT_EQ(mbedtls_ssl_renegotiate(&c.ssl), MBEDTLS_ERR_SSL_WANT_READ) << "the ClientHello went, the answer waits";
  EXPECT_GT(c.pipe.to_server.total(), to_server) << "the client's new ClientHello";
  w().run();
  // The server's records since the ClientHello: exactly one, an alert, of the size of a 2-byte
  // alert under the connection's AEAD (the expansion counts the 5-byte header: not in a record's
  // length); no handshake record (ServerHello...), no cipher change.
  EXPECT_EQ(c.pipe.records_of_type[1] - types[1], 1u) << "alert records";
  EXPECT_EQ(c.pipe.records_of_type[2] - types[2], 0u) << "handshake records: the server renegotiated";
  EXPECT_EQ(c.pipe.records_of_type[0] - types[0], 0u) << "change_cipher_spec records";
  EXPECT_EQ(c.pipe.records_of_type[3] - types[3], 0u) << "application data records";
  EXPECT_EQ(c.pipe.last_alert_length, 2u + static_cast<uint32_t>(mbedtls_ssl_get_record_expansion(&c.ssl)) - 5u);
  EXPECT_EQ(c.alerts, 1u) << "alerts the client decoded";
  EXPECT_EQ(c.alert_level, MBEDTLS_SSL_ALERT_LEVEL_WARNING);
  EXPECT_EQ(c.alert_description, MBEDTLS_SSL_ALERT_MSG_NO_RENEGOTIATION);
  // The client's renegotiation did not complete: it still waits for a ServerHello.
  EXPECT_EQ(c.ssl.renego_status, MBEDTLS_SSL_RENEGOTIATION_IN_PROGRESS);
  EXPECT_NE(c.ssl.state, MBEDTLS_SSL_HANDSHAKE_OVER);
  EXPECT_EQ(stats().handshakes, 1u);
  EXPECT_EQ(stats().record_errors + stats().failed, 0u) << tls_world::last_log();
  ASSERT_FALSE(c.pipe.server_closed) << tls_world::last_log();
  ASSERT_FALSE(c.ended()) << tls_error(c.error);
  // The client gives its renegotiation up (Mbed TLS has no call for it: its state goes back to
  // the established session's, whose keys both ends still use) and asks again.
  c.ssl.state = MBEDTLS_SSL_HANDSHAKE_OVER;
  c.ssl.renego_status = MBEDTLS_SSL_RENEGOTIATION_DONE;  // "done or aborted" (ssl_internal.h)
  const Response r = tool_call(0, sid, 2, "echo", echo_args("after the refusal").c_str());
  EXPECT_NE(r.body.find("after the refusal"), std::string::npos) << r.body;
  EXPECT_FALSE(c.pipe.server_closed) << tls_world::last_log();
  EXPECT_EQ(stats().record_errors + stats().failed, 0u) << tls_world::last_log();
}

// TLS 1.2 allows zero-length application data records (a traffic analysis countermeasure;
// Mbed TLS takes up to three in a row): they carry nothing, and the connection goes on.
TEST_F(TlsLayer, EmptyRecordsAreNoEndOfStream) {
  make();
  handshake(0);
  const std::string sid = initialize(0);
  for (int empties = 1; empties <= 3; ++empties) {
    for (int i = 0; i < empties; ++i) ASSERT_EQ(mbedtls_ssl_write(&client(0).ssl, nullptr, 0), 0);
    const Response r = tool_call(0, sid, 10 + empties, "echo", echo_args("after empty records").c_str());
    EXPECT_NE(r.body.find("after empty records"), std::string::npos) << empties << " empty records";
    ASSERT_FALSE(client(0).pipe.server_closed) << "closed after " << empties << " empty records";
  }
  EXPECT_EQ(stats().record_errors, 0u);
}

// A second connection resumes the first one's session with its ticket: no certificate, no key
// exchange.
TEST_F(TlsLayer, SecondConnectionResumesWithTheSessionTicket) {
  make();
  handshake(0);
  const uint64_t full_bytes = client(0).pipe.to_client.total();  // the server's full handshake
  ASSERT_TRUE(client(0).has_session);
  ASSERT_GT(client(0).session.ticket_len, 0u) << "the server issued a ticket";
  EXPECT_FALSE(w().tls.resumed(static_cast<uint16_t>(client(0).pipe.conn)));
  const std::string sid = initialize(0);
  w().close_notify(0);
  w().run();
  EXPECT_EQ(w().http.connections_in_use(), 0u);

  handshake(1, &client(0).session);
  EXPECT_EQ(stats().handshakes, 2u);
  EXPECT_EQ(stats().resumed, 1u);
  EXPECT_TRUE(w().tls.resumed(static_cast<uint16_t>(client(1).pipe.conn)));
  EXPECT_LT(client(1).pipe.to_client.total(), 600u) << "no certificate sent";
  EXPECT_GT(full_bytes, client(1).pipe.to_client.total() + 400u) << "the full one sent the certificate, " << full_bytes << " bytes";
  const Response r = tool_call(1, sid, 2, "echo", echo_args("resumed").c_str());
  EXPECT_NE(r.body.find("resumed"), std::string::npos) << r.body;
}

// A client that stops in the middle of its handshake is dropped at handshake_timeout_ms: the
// listener is told to close, the engine's slot is free.
TEST_F(TlsLayer, HandshakeTimeoutClosesAndFreesTheEngineSlot) {
  tls_world::WorldOptions options;
  options.tls.handshake_timeout_ms = 3000;
  make(options);
  ASSERT_GE(w().connect(0), 0);
  (void)w().step();  // the ClientHello goes, the server's first flight comes
  client(0).paused = true;
  w().run();
  EXPECT_FALSE(client(0).established);
  EXPECT_GT(client(0).pipe.to_client.size(), 0u) << "the server answered the ClientHello";
  EXPECT_EQ(w().http.connections_in_use(), 1u);
  fixture::advance_ms(2999);
  w().poll();
  EXPECT_FALSE(client(0).pipe.server_closed) << "not before the timeout";
  fixture::advance_ms(1);
  w().poll();
  EXPECT_TRUE(client(0).pipe.server_closed);
  EXPECT_EQ(w().slots_in_use(), 0u);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  EXPECT_EQ(stats().timed_out, 1u);
  EXPECT_STREQ(tls_world::last_log(), "tls: connection ended: handshake timed out");
  // A client that never sends a byte, too.
  ASSERT_GE(w().connect(1, false), 0);
  fixture::advance_ms(3000);
  w().run();
  EXPECT_TRUE(client(1).pipe.server_closed);
  EXPECT_EQ(stats().timed_out, 2u);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
}

TEST_F(TlsLayer, PlainHttpIsAnswered400InPlainTextThenClosed) {
  make();
  ASSERT_GE(w().connect(0, false), 0);
  ASSERT_TRUE(w().send(0, post(init_body()).c_str()));
  w().run();
  const tls_world::Pipe& pipe = client(0).pipe;
  const std::string answer(pipe.to_client.chars(), pipe.to_client.size());
  EXPECT_EQ(answer.compare(0, 25, "HTTP/1.1 400 Bad Request\r"), 0) << answer;
  std::string in = answer;
  const auto rs = parse(in);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].body, "this port speaks HTTPS, not HTTP\r\n");
  EXPECT_EQ(rs[0].headers.at("connection"), "close");
  EXPECT_TRUE(pipe.server_closed);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  EXPECT_EQ(stats().failed, 1u);
  EXPECT_EQ(stats().handshakes, 0u);
}

TEST_F(TlsLayer, GarbageEndsTheConnectionAndCountsAFailedHandshake) {
  make();
  ASSERT_GE(w().connect(0, false), 0);
  uint8_t junk[64];
  for (size_t i = 0; i < sizeof junk; ++i) junk[i] = static_cast<uint8_t>(i * 37 + 1);
  ASSERT_TRUE(w().send(0, junk, sizeof junk));
  w().run();
  EXPECT_TRUE(client(0).pipe.server_closed);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  EXPECT_EQ(stats().failed, 1u);
  EXPECT_EQ(stats().handshakes, 0u);
  // A TLS record header with a handshake that is not a ClientHello.
  ASSERT_GE(w().connect(1, false), 0);
  const uint8_t record[] = {0x16, 0x03, 0x01, 0x00, 0x08, 0x02, 0x00, 0x00, 0x04, 0x03, 0x03, 0x00, 0x00};
  ASSERT_TRUE(w().send(1, record, sizeof record));
  w().run();
  EXPECT_TRUE(client(1).pipe.server_closed);
  EXPECT_EQ(stats().failed, 2u);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  // The port goes on serving.
  handshake(2);
  EXPECT_EQ(stats().handshakes, 1u);
}

// A corrupted record on an established connection: bad record MAC, the connection ends.
TEST_F(TlsLayer, CorruptedRecordAfterTheHandshakeEndsTheConnection) {
  make();
  handshake(0);
  const std::string sid = initialize(0);
  client(0).paused = true;  // its bytes stay in the pipe, where the test spoils one
  send(0, post(call(2, "echo", echo_args("spoiled").c_str()), "Mcp-Session-Id: " + sid + "\r\n"));
  tls_world::Pipe& pipe = client(0).pipe;
  ASSERT_GT(pipe.to_server.size(), 40u);
  const_cast<uint8_t*>(pipe.to_server.data())[30] ^= 0x40;
  w().run();
  EXPECT_TRUE(pipe.server_closed);
  EXPECT_EQ(stats().record_errors, 1u);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  EXPECT_EQ(w().http.sessions_in_use(), 1u) << "the session outlives the connection";
}

// The client ends with close_notify (no TCP FIN): the engine's slot is free at once, and the
// layer answers with one alert record, its own close_notify, before the listener closes (RFC
// 5246 7.2.1: "The other party MUST respond with a close_notify alert of its own").
TEST_F(TlsLayer, ClientCloseNotifyFreesTheEngineSlot) {
  make();
  handshake(0);
  (void)initialize(0);
  EXPECT_EQ(w().http.connections_in_use(), 1u);
  const uint32_t alerts = client(0).pipe.records_of_type[1];
  w().close_notify(0);
  w().run();
  EXPECT_TRUE(client(0).pipe.server_closed) << "the listener was told to close";
  EXPECT_EQ(client(0).pipe.records_of_type[1] - alerts, 1u) << "the layer's close_notify";
  EXPECT_EQ(w().slots_in_use(), 0u);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  EXPECT_EQ(stats().record_errors, 0u);
  EXPECT_EQ(stats().failed, 0u);
}

// The client hangs up (the listener reports closed()) while an answer waits for the window,
// its record partly out: the layer lets its TLS state go and the engine its slot; the next
// connection is served.
TEST_F(TlsLayer, ClientThatHangsUpMidAnswerFreesTheSlot) {
  make();
  handshake(0);
  const std::string sid = initialize(0);
  tls_world::Pipe& pipe = client(0).pipe;
  pipe.window = 20;
  pipe.hold = true;
  send(0, post(call(2, "echo", echo_args("never read in full").c_str()), "Mcp-Session-Id: " + sid + "\r\n"));
  w().run();
  ASSERT_EQ(w().http.connections_in_use(), 1u);
  EXPECT_TRUE(w().http.output_pending(static_cast<uint16_t>(pipe.conn)));
  EXPECT_TRUE(pipe.owes_writable);
  w().abort(0);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  EXPECT_EQ(w().slots_in_use(), 0u);
  w().run();
  handshake(1);
  const Response r = tool_call(1, sid, 3, "echo", echo_args("next").c_str());
  EXPECT_NE(r.body.find("next"), std::string::npos) << r.body;
}

// The listener's write fails (the peer reset the connection) while the engine answers: the
// engine drops the connection through the layer.
TEST_F(TlsLayer, ListenerWriteFailureEndsTheConnection) {
  make();
  handshake(0);
  const std::string sid = initialize(0);
  client(0).pipe.fail_writes = true;
  send(0, post(call(2, "echo", echo_args("lost").c_str()), "Mcp-Session-Id: " + sid + "\r\n"));
  w().run();
  EXPECT_TRUE(client(0).pipe.server_closed);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  EXPECT_EQ(w().slots_in_use(), 0u);
}

// The engine ends the connection (Connection: close): its answer, then the layer's
// close_notify. Through a 9-byte window the answer still arrives whole; the close_notify is
// best effort there (the layer lets the connection go once the alert is offered, and the
// listener took 9 bytes of it): the client sees the answer, then the end.
TEST_F(TlsLayer, EngineCloseSendsTheAnswerThenCloseNotify) {
  make();
  handshake(0);
  const std::string sid = initialize(0);
  send(0, post(call(2, "echo", echo_args("bye").c_str()), "Mcp-Session-Id: " + sid + "\r\nConnection: close\r\n"));
  w().run();
  auto rs = responses(0);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("bye"), std::string::npos);
  EXPECT_TRUE(client(0).peer_closed) << "close_notify after the answer";
  EXPECT_TRUE(client(0).pipe.server_closed);
  EXPECT_EQ(w().http.connections_in_use(), 0u);

  handshake(1);
  client(1).pipe.window = 9;
  client(1).pipe.grant = 9;
  send(1, post(call(3, "echo", echo_args("bye again").c_str()), "Mcp-Session-Id: " + sid + "\r\nConnection: close\r\n"));
  w().run();
  rs = responses(1);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("bye again"), std::string::npos);
  EXPECT_TRUE(client(1).ended());
  EXPECT_FALSE(client(1).failed) << tls_error(client(1).error);
  EXPECT_TRUE(client(1).pipe.server_closed);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
}

// mbedtls_ssl_setup fails (a connection's record buffers do not fit): open() refuses it, the
// listener sends the layer's refusal (a fatal TLS alert), the engine's slot is given back;
// the next connection is served.
TEST_F(TlsLayer, ConnectionWhoseTlsContextCannotBeSetUpIsRefusedWithAnAlert) {
  make();
  g_fail_ssl_setup = 1;
  EXPECT_EQ(w().connect(0), -1);
  EXPECT_EQ(g_fail_ssl_setup, 0) << "the layer's mbedtls_ssl_setup ran";
  EXPECT_EQ(stats().refused_memory, 1u);
  EXPECT_EQ(w().http.connections_in_use(), 0u);
  EXPECT_EQ(w().context.last_error(), MBEDTLS_ERR_SSL_ALLOC_FAILED);
  const tls_world::Pipe& pipe = client(0).pipe;
  ASSERT_EQ(pipe.to_client.size(), 7u);
  const uint8_t alert[] = {0x15, 0x03, 0x03, 0x00, 0x02, 0x02, 0x50};  // fatal internal_error
  EXPECT_EQ(memcmp(pipe.to_client.data(), alert, sizeof alert), 0);
  w().run();
  EXPECT_TRUE(client(0).failed);
  EXPECT_EQ(client(0).error, MBEDTLS_ERR_SSL_FATAL_ALERT_MESSAGE) << tls_error(client(0).error);
  handshake(1);
  EXPECT_EQ(stats().handshakes, 1u);
}

TEST_F(TlsLayer, ContextRefusesAKeyThatIsNotTheCertificates) {
  const tls_world::Credentials& cred = tls_world::credentials();
  ASSERT_TRUE(cred.ok);
  static emcp::mbedtls::TlsContext context;
  const emcp::Platform platform(&fixture::now_ms, &tls_world::random);
  EXPECT_EQ(context.init(platform, cred.cert.data, cred.cert.len, cred.other_key.data, cred.other_key.len),
            Status::kInvalidArgument);
  EXPECT_FALSE(context.ready());
  EXPECT_NE(context.last_error(), 0);
  EXPECT_STREQ(emcp::mbedtls::TlsContext::error_text(context.last_error()), "key: not the certificate's key");
  // A certificate that does not parse, a key that does not parse.
  static const uint8_t kNotPem[] = "-----BEGIN CERTIFICATE-----\nnot base64\n-----END CERTIFICATE-----\n";
  static emcp::mbedtls::TlsContext other;
  EXPECT_EQ(other.init(platform, kNotPem, sizeof kNotPem, cred.key.data, cred.key.len), Status::kInvalidArgument);
  static emcp::mbedtls::TlsContext third;
  EXPECT_EQ(third.init(platform, cred.cert.data, cred.cert.len, kNotPem, sizeof kNotPem), Status::kInvalidArgument);
}

TEST_F(TlsLayer, ContextRefusesAPlatformWithoutRandomSource) {
  const tls_world::Credentials& cred = tls_world::credentials();
  static emcp::mbedtls::TlsContext context;
  const emcp::Platform no_random(&fixture::now_ms, nullptr);
  EXPECT_EQ(context.init(no_random, cred.cert.data, cred.cert.len, cred.key.data, cred.key.len),
            Status::kInvalidArgument);
  EXPECT_FALSE(context.ready());
}

// A context whose init() failed (the wrong key) can be given the right one.
TEST_F(TlsLayer, ContextInitAgainAfterAFailedInit) {
  const tls_world::Credentials& cred = tls_world::credentials();
  static emcp::mbedtls::TlsContext context;
  const emcp::Platform platform(&fixture::now_ms, &tls_world::random);
  EXPECT_EQ(context.init(platform, cred.cert.data, cred.cert.len, cred.other_key.data, cred.other_key.len),
            Status::kInvalidArgument);
  EXPECT_EQ(context.init(platform, cred.cert.data, cred.cert.len, cred.key.data, cred.key.len), Status::kOk)
      << emcp::mbedtls::TlsContext::error_text(context.last_error());
  EXPECT_TRUE(context.ready());
}

// WebSocket over TLS (wss): the upgrade and a message both ways.
TEST_F(TlsLayer, WebSocketOverTls) {
  tls_world::WorldOptions options;
  options.sha1 = &emcp::mbedtls::sha1;
  make(options);
  handshake(0);
  send(0, "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
          "Sec-WebSocket-Protocol: mcp\r\n\r\n");
  w().run();
  const char* p = nullptr;
  size_t n = client(0).unread(&p);
  const std::string head(p, n);
  ASSERT_EQ(head.compare(0, 12, "HTTP/1.1 101"), 0) << head;
  EXPECT_NE(head.find("s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), std::string::npos) << head;
  // A masked text frame with initialize.
  const std::string body = init_body();
  std::string frame(1, static_cast<char>(0x81));
  frame += static_cast<char>(0x80 | 126);
  frame += static_cast<char>(body.size() >> 8);
  frame += static_cast<char>(body.size() & 255);
  const char key[4] = {1, 2, 3, 4};
  frame.append(key, 4);
  for (size_t i = 0; i < body.size(); ++i) frame += static_cast<char>(body[i] ^ key[i & 3]);
  send(0, frame, 50);  // several records
  w().run();
  n = client(0).unread(&p);
  const std::string in(p, n);
  ASSERT_GT(in.size(), 4u);
  EXPECT_EQ(in[0] & 0x0F, 1) << "a text message";
  EXPECT_NE(in.find("\"protocolVersion\":\"2025-11-25\""), std::string::npos);
}

}  // namespace
