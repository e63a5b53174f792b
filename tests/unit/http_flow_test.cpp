// The HTTP engine's output when the port cannot take it all (HttpPort::write takes part, a
// full window takes nothing): answers wait in the connection's buffer and resume on
// writable(), a handler's output waits for the window through wait_writable() within
// send_timeout_ms, a client that stops reading is dropped and the others are served, and no
// handler runs twice. The fake port's window (http_engine_fixture.h) plays the peer's TCP
// window; the answers are read with the fixture's RFC 9112 and SSE readers.
#include "http_engine_fixture.h"

namespace {

class HttpFlow : public HttpEngine {
 protected:
  void SetUp() override {
    HttpEngine::SetUp();
    g_echo_calls = 0;
    g_big_calls = 0;
  }
  std::string echo_request(int id, const std::string& sid, const std::string& extra = "") {
    return post(call(id, "echo", R"({"text":"hello"})"), "Mcp-Session-Id: " + sid + "\r\n" + extra);
  }
  // Opens the window a few bytes at a time, as a slow reader would, until nothing waits.
  void drain_slowly(int c, size_t step) {
    for (int round = 0; round < 100000 && output_pending(c); ++round) {
      port_.window[c] = step;
      writable(c);
    }
    port_.window[c] = SIZE_MAX;
  }
};

TEST_F(HttpFlow, AnswerTheWindowCannotTakeWaitsInTheBufferAndResumes) {
  const std::string sid = session();
  const int c = open_conn();
  port_.window[c] = 10;
  const std::string first = echo_request(2, sid);
  EXPECT_EQ(feed(c, first), first.size());
  EXPECT_EQ(port_.out[c].size(), 10u) << "the port took what its window allowed";
  EXPECT_TRUE(output_pending(c));
  EXPECT_FALSE(wants_input(c)) << "no new request is read while the last answer waits";
  EXPECT_EQ(receive(c, echo_request(3, sid)), 0u);
  EXPECT_EQ(g_echo_calls, 1);
  drain_slowly(c, 7);
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete);
  EXPECT_FALSE(rs[0].chunked) << "a whole answer keeps its Content-Length";
  EXPECT_NE(rs[0].body.find(R"("id":2,"result")"), std::string::npos);
  EXPECT_NE(rs[0].body.find("hello"), std::string::npos);
  EXPECT_TRUE(wants_input(c));
  const std::string second = echo_request(3, sid);
  EXPECT_EQ(feed(c, second), second.size());
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find(R"("id":3,"result")"), std::string::npos);
  EXPECT_EQ(g_echo_calls, 2) << "each handler ran once";
}

TEST_F(HttpFlow, HandlerOutputWaitsForTheWindowWithinTheSendTimeout) {
  const std::string sid = session();
  const int c = open_conn();
  port_.window[c] = 100;
  port_.grant_per_wait[c] = 64;  // each wait: an acknowledgement opens 64 bytes
  const uint64_t before = g_now;
  feed(c, post(call(2, "big"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_GT(port_.waits, 10);
  EXPECT_EQ(g_now, before) << "no wait timed out";
  drain_slowly(c, 64);  // the end of the answer waits in the buffer, like any answer's end
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].chunked);
  EXPECT_TRUE(rs[0].complete);
  EXPECT_NE(rs[0].body.find("block 99 "), std::string::npos);
  EXPECT_EQ(rs[0].body.back(), '}');
  EXPECT_EQ(g_big_calls, 1);
  EXPECT_FALSE(port_.closed[c]);
}

TEST_F(HttpFlow, ClientThatStopsReadingDuringALargeAnswerIsDroppedAndOthersAreServed) {
  const std::string sid = session();
  const int c = open_conn();
  port_.window[c] = 300;  // then the window stays shut
  const uint64_t before = g_now;
  feed(c, post(call(2, "big"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_TRUE(port_.closed[c]) << "dropped once the wait ran out";
  EXPECT_EQ(g_now - before, options_.send_timeout_ms) << "one bounded wait";
  EXPECT_EQ(http_.stats().timeout_send, 1u) << "counted as a peer that stopped reading";
  EXPECT_EQ(g_big_calls, 1);
  EXPECT_EQ(connections_in_use(), 0u);
  const int d = open_conn();
  feed(d, echo_request(3, sid));
  auto rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("hello"), std::string::npos);
}

TEST_F(HttpFlow, AnswerNobodyReadsIsDroppedAfterTheSendTimeout) {
  const std::string sid = session();
  const int c = open_conn();
  const int d = open_conn();
  port_.window[c] = 0;
  feed(c, echo_request(2, sid));
  EXPECT_TRUE(output_pending(c));
  g_now += options_.send_timeout_ms - 1;
  poll();
  EXPECT_FALSE(port_.closed[c]) << "kept until its timeout";
  feed(d, echo_request(3, sid));  // meanwhile another connection is served
  EXPECT_EQ(responses(d).size(), 1u);
  g_now += 2;
  poll();
  EXPECT_TRUE(port_.closed[c]);
  EXPECT_EQ(connections_in_use(), 1u) << "its slot is free";
}

// A client that pipelines requests and reads no answer: the request behind the waiting answer
// stays with the port (receive() takes only the first), so the engine never waits for this
// window inside a handler; the others are served while the connection is held, and it is then
// dropped by poll() after the send timeout, counted as such.
TEST_F(HttpFlow, PipelinedRequestBehindAWaitingAnswerStaysWithThePort) {
  const std::string sid = session();
  const int c = open_conn();
  const int d = open_conn();
  port_.window[c] = 0;
  const std::string first = echo_request(2, sid);
  const uint64_t before = g_now;
  const int waits = port_.waits;
  EXPECT_EQ(receive(c, first + echo_request(3, sid) + echo_request(4, sid)), first.size())
      << "only the first request is taken";
  EXPECT_EQ(port_.waits, waits) << "the engine did not wait for the window";
  EXPECT_EQ(g_now, before);
  EXPECT_EQ(g_echo_calls, 1);
  EXPECT_TRUE(output_pending(c));
  feed(d, echo_request(5, sid));  // served while c is held
  ASSERT_EQ(responses(d).size(), 1u);
  EXPECT_EQ(connections_in_use(), 2u);
  EXPECT_EQ(http_.stats().timeout_send, 0u);
  g_now += options_.send_timeout_ms + 1;
  poll();
  EXPECT_TRUE(port_.closed[c]);
  EXPECT_EQ(connections_in_use(), 1u);
  EXPECT_EQ(http_.stats().timeout_send, 1u);
  EXPECT_EQ(g_echo_calls, 2) << "no handler ran for the requests left with the port";
}

TEST_F(HttpFlow, ConnectionCloseEndsOnlyOnceItsLastAnswerIsOut) {
  const std::string sid = session();
  const int c = open_conn();
  port_.window[c] = 5;
  feed(c, echo_request(2, sid, "Connection: close\r\n"));
  EXPECT_FALSE(port_.closed[c]) << "not before the answer is out";
  EXPECT_EQ(connections_in_use(), 1u);
  drain_slowly(c, 100);
  EXPECT_TRUE(port_.closed[c]);
  EXPECT_EQ(connections_in_use(), 0u);
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete);
  EXPECT_EQ(rs[0].headers["connection"], "close");
}

TEST_F(HttpFlow, StalledEventStreamIsDroppedAndItsEventsCanBeResumed) {
  const std::string sid = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  auto rs = responses(g);
  ASSERT_EQ(rs.size(), 1u);
  const auto primed = events(rs[0].body);
  ASSERT_EQ(primed.size(), 1u);
  port_.window[g] = 0;  // the client stops reading
  log("first while stalled");
  EXPECT_TRUE(output_pending(g));
  log("second while stalled");  // waits for the first (bounded), then the stream is dropped
  poll();
  EXPECT_TRUE(port_.closed[g]);
  log("third, while away");
  // The client comes back on a new connection and resumes after the priming event.
  const int r = open_conn();
  feed(r, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + primed[0].id + "\r\n\r\n");
  rs = responses(r);
  ASSERT_EQ(rs.size(), 1u);
  const auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 3u) << rs[0].body;
  EXPECT_NE(ev[0].data.find("first while stalled"), std::string::npos);
  EXPECT_NE(ev[1].data.find("second while stalled"), std::string::npos);
  EXPECT_NE(ev[2].data.find("third, while away"), std::string::npos);
}

TEST_F(HttpFlow, ReplayThatMeetsAFullWindowGoesOnWhenItOpens) {
  const std::string sid = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  const auto primed = events(responses(g)[0].body);
  ASSERT_EQ(primed.size(), 1u);
  closed(g);
  for (int i = 0; i < 4; ++i) log(("kept, number " + std::to_string(i)).c_str());  // the 1 KiB buffer holds 5
  // The client comes back on a connection whose window takes 100 bytes at a time.
  const int r = open_conn();
  port_.window[r] = 60;
  feed(r, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + primed[0].id + "\r\n\r\n");
  EXPECT_TRUE(output_pending(r)) << "the replay stopped at the full window";
  log("kept during the replay");  // joins the replay
  drain_slowly(r, 60);
  EXPECT_EQ(port_.waits, 0) << "a replay never waits: it goes on from writable()";
  auto rs = responses(r);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_FALSE(rs[0].complete) << "the stream goes on live";
  const auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 5u) << rs[0].body;
  for (int i = 0; i < 4; ++i) EXPECT_NE(ev[i].data.find("number " + std::to_string(i)), std::string::npos);
  EXPECT_NE(ev[4].data.find("kept during the replay"), std::string::npos);
  log("live again");
  EXPECT_NE(port_.out[r].view().find("live again"), std::string_view::npos);
}

TEST_F(HttpFlow, WebSocketFramesWaitForTheWindow) {
  const int c = open_conn();
  port_.window[c] = 20;  // even the handshake's answer waits
  feed(c, "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  EXPECT_TRUE(output_pending(c));
  drain_slowly(c, 33);
  Received& out = port_.out[c];
  ASSERT_EQ(out.view().rfind("HTTP/1.1 101 Switching Protocols\r\n", 0), 0u);
  out.consume(out.view().find("\r\n\r\n") + 4);
  feed(c, ws_frame(0x81, init_body()) + ws_frame(0x81, R"({"jsonrpc":"2.0","method":"notifications/initialized"})"));
  port_.window[c] = 50;
  port_.grant_per_wait[c] = 40;
  const std::string rest = ws_frame(0x81, call(2, "big")) + ws_frame(0x89, "ping!");
  size_t used = feed(c, rest);
  for (int round = 0; round < 1000 && used < rest.size(); ++round) {
    drain_slowly(c, 40);
    used += receive(c, rest.substr(used));
  }
  drain_slowly(c, 40);
  const auto msgs = ws_messages(out.str());
  ASSERT_EQ(msgs.size(), 3u);
  EXPECT_NE(msgs[0].second.find("protocolVersion"), std::string::npos);
  EXPECT_NE(msgs[1].second.find("block 99 "), std::string::npos);
  EXPECT_EQ(msgs[1].second.back(), '}');
  EXPECT_EQ(msgs[2].first, 0xA) << "the pong, after the answer";
  EXPECT_EQ(msgs[2].second, "ping!");
  EXPECT_EQ(g_big_calls, 1);
}

}  // namespace

namespace {
// The HTTP engine needs the platform's random source (session ids) and a port that writes:
// without them it refuses to be built (EMCP_ASSERT), not to serve guessable sessions.
TEST(PlatformDeathTest, HttpEngineWithoutARandomSourceIsAStartUpFailure) {
  static const emcp::Platform clock_only{&now_ms, nullptr};
  using Small = emcp::transport::StaticHttpServer<1, 1>;
  static HttpOptions options;
  FakePort port;
  Server server(kInfo, clock_only);
  EXPECT_DEATH({ Small http(server, options, port.port()); }, "");
  static const emcp::Platform full{&now_ms, &fake_random};
  Server good(kInfo, full);
  HttpPort no_write = port.port();
  no_write.write = nullptr;
  EXPECT_DEATH({ Small http(good, options, no_write); }, "");
}
}  // namespace
