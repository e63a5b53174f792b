// The HTTP engine (Streamable HTTP, HTTP+SSE, WebSocket) driven through a fake port: bytes in,
// bytes out, a fake clock. Responses are parsed by a small HTTP/1.1 reader written here from
// RFC 9112 (status line, headers, Content-Length, chunked) and SSE events from the HTML
// event-stream format, independently of the engine's writer. Every call into the server and
// the engine, from their construction to their destruction, runs inside a NoHeapScope; the
// fake port keeps what it is sent in fixed buffers, and the test's own string building and
// parsing run between the scopes.
#include <gtest/gtest.h>
#include <string.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "emcp/mbedtls/sha1.h"
#include "emcp/transport/http_server.h"
#include "heap_guard.h"
#include "no_heap_util.h"

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;
using emcp::transport::HttpOptions;
using emcp::transport::HttpPort;
using namespace std::string_view_literals;

namespace {

// ---- Fake platform --------------------------------------------------------------------------

uint64_t g_now = 1000;
uint64_t now_ms() { return g_now; }
uint8_t g_random = 0;
bool fake_random(void* out, size_t n) {
  for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(out)[i] = ++g_random;
  return true;
}

// Connection slots of the largest engine here (TooManyRequestsInFlightInASession...).
constexpr uint16_t kMaxConns = EMCP_HTTP_STREAMS + 3;
using Received = emcp_test::FixedText<1 << 16>;

struct FakePort {
  Received out[kMaxConns];  // sent on each connection, not read yet
  bool closed[kMaxConns] = {};
  bool fail_sends = false;
  static Status send(void* ctx, uint16_t c, const char* d, size_t n) {
    auto* self = static_cast<FakePort*>(ctx);
    if (c >= kMaxConns) {
      ADD_FAILURE() << "connection " << c << " beyond kMaxConns";
      return Status::kIoError;
    }
    if (self->fail_sends) return Status::kIoError;
    return self->out[c].append(d, n) ? Status::kOk : Status::kNoSpace;
  }
  static void close(void* ctx, uint16_t c) {
    if (c < kMaxConns) static_cast<FakePort*>(ctx)->closed[c] = true;
    else ADD_FAILURE() << "connection " << c << " beyond kMaxConns";
  }
  HttpPort port() {
    HttpPort p;
    p.send = &send;
    p.close = &close;
    p.ctx = this;
    return p;
  }
};

// ---- The application ------------------------------------------------------------------------

Server* g_server = nullptr;
std::vector<Pending> g_slow;  // its capacity is reserved before the engine runs (SetUp)

void echo(ToolCall& c) { c.text(c.str("text")); }
void slow(ToolCall& c) {
  const Pending p = c.defer();
  if (p.valid()) g_slow.push_back(p);
}
void progress(ToolCall& c) {
  (void)c.progress(1, 2);
  c.text("done");
}
void big(ToolCall& c) {
  for (int i = 0; i < 100; ++i) c.text({"block ", i, " 0123456789012345678901234567890123456789"});
}
// SEP-1699: ends its stream, answers later.
Status g_close_status = Status::kOk;
void detach(ToolCall& c) {
  g_close_status = c.close_stream(100);
  slow(c);
}
void finish_slow(ToolCall& c, void*) { c.text("slow done"); }
// Answers the oldest slow call from inside another call.
void finish_now(ToolCall& c) {
  if (!g_slow.empty()) (void)g_server->complete(g_slow[0], &finish_slow, nullptr);
  c.text("finished it");
}

// Pings the client from inside a call; records how the ping ended.
int g_pings_ended = 0;
emcp::mcp::Response::Outcome g_ping_outcome = emcp::mcp::Response::Outcome::kResult;
emcp_test::FixedText<256> g_ping_message;
void on_ping(const emcp::mcp::Response& r, void*) {
  ++g_pings_ended;
  g_ping_outcome = r.outcome;
  g_ping_message.assign(r.message.data(), r.message.size());
}
void ask(ToolCall& c) {
  (void)g_server->ping(c.session(), &on_ping, nullptr);
  c.text("asked");
}

constexpr Param kEchoParams[] = {Param::string("text").required()};
constexpr Tool kTools[] = {
    Tool::make("echo", &echo).with_params(kEchoParams),
    Tool::make("slow", &slow),
    Tool::make("progress", &progress),
    Tool::make("big", &big),
    Tool::make("detach", &detach),
    Tool::make("finish_now", &finish_now),
    Tool::make("ask", &ask),
};
constexpr ServerInfo kInfo = ServerInfo("http-test", "1.0.0");

// ---- HTTP reading (RFC 9112) ------------------------------------------------------------------

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool chunked = false;
  bool complete = false;
  std::vector<size_t> chunk_sizes;
};

std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses responses from the front of `in`; consumes what it parsed.
std::vector<Response> parse(std::string& in) {
  std::vector<Response> out;
  for (;;) {
    const size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) break;
    Response r;
    const std::string head = in.substr(0, end);
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (status_line.compare(0, 9, "HTTP/1.1 ") != 0) break;
    r.status = atoi(status_line.c_str() + 9);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      const std::string line = head.substr(pos, e - pos);
      const size_t colon = line.find(':');
      std::string v = line.substr(colon + 1);
      while (!v.empty() && v[0] == ' ') v.erase(0, 1);
      r.headers[lower(line.substr(0, colon))] = v;
      pos = e + 2;
    }
    size_t p = end + 4;
    if (r.status < 200 || r.status == 101) {
      r.complete = true;
      out.push_back(r);
      in.erase(0, p);
      continue;
    }
    if (r.headers.count("content-length")) {
      const size_t n = static_cast<size_t>(atol(r.headers["content-length"].c_str()));
      if (in.size() < p + n) break;
      r.body = in.substr(p, n);
      r.complete = true;
      in.erase(0, p + n);
      out.push_back(r);
      continue;
    }
    if (r.headers["transfer-encoding"] == "chunked") {
      r.chunked = true;
      for (;;) {
        const size_t le = in.find("\r\n", p);
        if (le == std::string::npos) break;
        const size_t size = strtoul(in.substr(p, le - p).c_str(), nullptr, 16);
        if (size == 0) {
          if (in.size() < le + 4) break;
          EXPECT_EQ(in.substr(le + 2, 2), "\r\n");
          p = le + 4;
          r.complete = true;
          break;
        }
        if (in.size() < le + 2 + size + 2) break;
        EXPECT_EQ(in.substr(le + 2 + size, 2), "\r\n") << "chunk data must end with CRLF";
        r.body += in.substr(le + 2, size);
        r.chunk_sizes.push_back(size);
        p = le + 2 + size + 2;
      }
      if (!r.complete) {  // an open stream: report what came so far, keep the bytes
        out.push_back(r);
        break;
      }
      in.erase(0, p);
      out.push_back(r);
      continue;
    }
    r.body = in.substr(p);  // until close
    in.clear();
    out.push_back(r);
  }
  return out;
}

struct Event {
  std::string id, event, data, retry;
};

// Splits an event stream (HTML "text/event-stream") into events; comments are skipped.
std::vector<Event> events(const std::string& stream) {
  std::vector<Event> out;
  Event cur;
  bool any = false;
  size_t pos = 0;
  while (pos < stream.size()) {
    size_t e = stream.find('\n', pos);
    if (e == std::string::npos) break;
    const std::string line = stream.substr(pos, e - pos);
    pos = e + 1;
    if (line.empty()) {
      if (any) out.push_back(cur);
      cur = Event{};
      any = false;
      continue;
    }
    if (line[0] == ':') continue;
    const size_t colon = line.find(':');
    std::string field = line.substr(0, colon), value = colon == std::string::npos ? "" : line.substr(colon + 1);
    if (!value.empty() && value[0] == ' ') value.erase(0, 1);
    any = true;
    if (field == "id") cur.id = value;
    else if (field == "event") cur.event = value;
    else if (field == "data") cur.data += value;
    else if (field == "retry") cur.retry = value;
  }
  return out;
}

const char* kPostHeaders = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

std::string post(const std::string& body, const std::string& extra = "") {
  return "POST /mcp HTTP/1.1\r\nHost: localhost:8080\r\n" + std::string(kPostHeaders) + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string init_body(const char* version = "2025-11-25", const char* caps = "{}") {
  return std::string(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":")") + version +
         R"(","capabilities":)" + caps + R"(,"clientInfo":{"name":"t","version":"1"}}})";
}

std::string call(int id, const char* tool, const char* args = "{}") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + args + "}}";
}

class HttpEngine : public ::testing::Test {
 private:
  // Declared before the server and the engine: open while they are built and destroyed.
  std::optional<emcp_test::NoHeapScope> lifetime_scope_{std::in_place};

 protected:
  HttpEngine() { lifetime_scope_.reset(); }
  ~HttpEngine() override { lifetime_scope_.emplace(); }

  void SetUp() override {
    g_now = 1000;
    g_slow.clear();
    g_slow.reserve(16);
    emcp_test::NoHeapScope no_heap;
    server_.set_tools(kTools);
    g_server = &server_;
    options_.random = &fake_random;
    options_.sha1 = &emcp::mbedtls::sha1;
  }

  // The calls into the server and the engine, each inside a NoHeapScope (their string
  // arguments are built before it opens).

  // A new connection; what the fake port kept of an earlier one in the slot is forgotten.
  int open_conn() {
    emcp_test::NoHeapScope no_heap;
    const int c = http_.open();
    if (c >= 0) {
      port_.out[static_cast<uint16_t>(c)].clear();
      port_.closed[static_cast<uint16_t>(c)] = false;
    }
    return c;
  }

  // Feeds `bytes` to connection c in pieces of `step` (0: whole).
  size_t feed(int c, const std::string& bytes, size_t step = 0) {
    emcp_test::NoHeapScope no_heap;
    size_t used = 0;
    for (size_t off = 0; off < bytes.size();) {
      const size_t n = step == 0 ? bytes.size() - off : std::min(step, bytes.size() - off);
      const size_t k = http_.receive(static_cast<uint16_t>(c), bytes.data() + off, n);
      used += k;
      if (k < n) return used;  // the engine cannot take more now
      off += n;
    }
    return used;
  }
  // One receive() of all of `bytes`.
  size_t receive(int c, const std::string& bytes) {
    emcp_test::NoHeapScope no_heap;
    return http_.receive(static_cast<uint16_t>(c), bytes.data(), bytes.size());
  }
  bool wants_input(int c) {
    emcp_test::NoHeapScope no_heap;
    return http_.wants_input(static_cast<uint16_t>(c));
  }
  void closed(int c) {
    emcp_test::NoHeapScope no_heap;
    http_.closed(static_cast<uint16_t>(c));
  }
  void poll() {
    emcp_test::NoHeapScope no_heap;
    http_.poll();
  }
  size_t sessions_in_use() {
    emcp_test::NoHeapScope no_heap;
    return http_.sessions_in_use();
  }
  size_t connections_in_use() {
    emcp_test::NoHeapScope no_heap;
    return http_.connections_in_use();
  }
  void log(const char* text) {
    emcp_test::NoHeapScope no_heap;
    server_.log(LogLevel::kError, text);
  }
  // Answers a deferred call of the slow tool.
  Status complete(Pending p) {
    emcp_test::NoHeapScope no_heap;
    return server_.complete(p, &finish_slow, nullptr);
  }

  // The responses connection c got so far (parsed outside any scope); what was parsed leaves
  // the fake port's buffer.
  std::vector<Response> responses(int c) {
    Received& out = port_.out[static_cast<uint16_t>(c)];
    std::string in = out.str();
    std::vector<Response> rs = parse(in);
    out.consume(out.size() - in.size());
    return rs;
  }

  // A session at `version`, initialized; returns its id.
  std::string session(const char* version = "2025-11-25") {
    const int c = open_conn();
    feed(c, post(init_body(version)));
    auto rs = responses(c);
    EXPECT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].status, 200);
    const std::string sid = rs[0].headers["mcp-session-id"];
    EXPECT_EQ(sid.size(), 32u);
    feed(c, post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "Mcp-Session-Id: " + sid + "\r\n"));
    rs = responses(c);
    EXPECT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].status, 202);
    closed(c);
    return sid;
  }

  Server server_{kInfo, &now_ms};
  HttpOptions options_;
  FakePort port_;
  emcp::transport::StaticHttpServer<4, 2, 4096, 512, 1024> http_{server_, options_, port_.port()};
};

TEST_F(HttpEngine, InitializeInAnySplitAnswersWithContentLengthAndSessionId) {
  for (size_t step : {0, 1, 7}) {
    const int c = open_conn();
    ASSERT_GE(c, 0);
    EXPECT_EQ(feed(c, post(init_body()), step), post(init_body()).size());
    auto rs = responses(c);
    ASSERT_EQ(rs.size(), 1u) << step;
    EXPECT_EQ(rs[0].status, 200);
    EXPECT_EQ(rs[0].headers["content-type"], "application/json");
    EXPECT_FALSE(rs[0].chunked);
    EXPECT_EQ(rs[0].headers["mcp-session-id"].size(), 32u);
    EXPECT_NE(rs[0].body.find(R"("protocolVersion":"2025-11-25")"), std::string::npos);
    closed(c);
  }
  EXPECT_EQ(connections_in_use(), 0u);
}

TEST_F(HttpEngine, AnswerLargerThanTheBufferIsChunked) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(2, "big"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].chunked);
  EXPECT_TRUE(rs[0].complete);
  EXPECT_GT(rs[0].chunk_sizes.size(), 5u);
  for (size_t n : rs[0].chunk_sizes) EXPECT_LE(n, 512u);
  EXPECT_EQ(rs[0].body.rfind(R"({"jsonrpc":"2.0","id":2,"result":{"content":[)", 0), 0u);
  EXPECT_NE(rs[0].body.find("block 99 "), std::string::npos);
  EXPECT_EQ(rs[0].body.back(), '}');
  // Keep-alive: the connection takes the next request.
  feed(c, post(call(3, "echo", R"({"text":"again"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("again"), std::string::npos);
}

TEST_F(HttpEngine, ProgressTurnsTheAnswerIntoAnEventStreamWithIds) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p"}}})",
               "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].headers["content-type"], "text/event-stream");
  EXPECT_TRUE(rs[0].complete);
  const auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 3u);
  // Priming event (2025-11-25): an id and empty data, with the retry time.
  EXPECT_EQ(ev[0].data, "");
  EXPECT_FALSE(ev[0].id.empty());
  EXPECT_EQ(ev[0].retry, "2000");
  EXPECT_NE(ev[1].data.find("notifications/progress"), std::string::npos);
  EXPECT_NE(ev[2].data.find(R"("id":5,"result")"), std::string::npos);
  EXPECT_NE(ev[1].id, ev[2].id);
  EXPECT_EQ(ev[2].event, "message");
}

TEST_F(HttpEngine, DeferredAnswerHoldsTheConnectionAndPipelinedInputWaits) {
  const std::string sid = session();
  const int c = open_conn();
  const std::string first = post(call(7, "slow"), "Mcp-Session-Id: " + sid + "\r\n");
  const std::string second = post(call(8, "echo", R"({"text":"next"})"), "Mcp-Session-Id: " + sid + "\r\n");
  const std::string both = first + second;
  const size_t used = receive(c, both);
  EXPECT_EQ(used, first.size()) << "the second request waits until the first is answered";
  EXPECT_FALSE(wants_input(c));
  EXPECT_TRUE(responses(c).empty());
  ASSERT_EQ(g_slow.size(), 1u);
  ASSERT_EQ(complete(g_slow[0]), Status::kOk);
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("slow done"), std::string::npos);
  EXPECT_TRUE(wants_input(c));
  EXPECT_EQ(receive(c, second), second.size());
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("next"), std::string::npos);
}

TEST_F(HttpEngine, ClosedStreamIsResumedFromTheReplayBuffer) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(9, "detach"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete) << "the stream ends before the answer";
  auto ev = events(rs[0].body);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().retry, "100");
  const std::string last_id = ev[0].id;
  // The answer comes while the client is away.
  ASSERT_EQ(g_slow.size(), 1u);
  ASSERT_EQ(complete(g_slow[0]), Status::kOk);
  // The client comes back with Last-Event-ID on the same connection (keep-alive).
  feed(c, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + last_id + "\r\n\r\n");
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete) << "the stream ends after its last answer";
  ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].data.find(R"("id":9,"result")"), std::string::npos);
  EXPECT_NE(ev[0].data.find("slow done"), std::string::npos);
}

TEST_F(HttpEngine, ServerMessagesGoToTheGetStreamAndDeleteEndsIt) {
  const std::string sid = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  log("something happened");
  auto rs = responses(g);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_FALSE(rs[0].complete);
  auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 2u);  // priming, then the log message
  EXPECT_NE(ev[1].data.find("something happened"), std::string::npos);
  // Heartbeat comments on a quiet stream.
  g_now += 20000;
  poll();
  EXPECT_NE(port_.out[static_cast<uint16_t>(g)].view().find(":\n\n"), std::string_view::npos);
  const int d = open_conn();
  feed(d, "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  EXPECT_EQ(responses(d)[0].status, 200);
  rs = responses(g);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete) << "the GET stream ended with the session";
  EXPECT_EQ(sessions_in_use(), 0u);
  feed(d, post(call(3, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(responses(d)[0].status, 404);
}

TEST_F(HttpEngine, LeastRecentlyUsedIdleSessionMakesRoom) {
  const std::string a = session();
  g_now += 10;
  const std::string b = session();
  g_now += 10;
  const std::string c3 = session();  // two slots: a goes
  EXPECT_EQ(sessions_in_use(), 2u);
  const int c = open_conn();
  feed(c, post(call(1, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + a + "\r\n"));
  EXPECT_EQ(responses(c)[0].status, 404);
  feed(c, post(call(1, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + b + "\r\n"));
  EXPECT_EQ(responses(c)[0].status, 200);
}

TEST_F(HttpEngine, SlotsFullAndTimeouts) {
  int c[4];
  for (int& x : c) x = open_conn();
  EXPECT_EQ(open_conn(), -1);
  feed(c[0], "POST /mcp HTTP/1.1\r\nHost: localhost\r\n");  // head never finishes
  feed(c[1], post(init_body()).substr(0, 200));             // body stalls
  g_now += 11000;
  poll();
  EXPECT_EQ(responses(c[0])[0].status, 408);
  EXPECT_EQ(responses(c[1])[0].status, 408);
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(c[0])]);
  g_now += 61000;
  poll();  // idle keep-alive connections end
  EXPECT_EQ(connections_in_use(), 0u);
}

TEST_F(HttpEngine, LegacySseAnswersOnTheStream) {
  const int s = open_conn();
  feed(s, "GET /sse HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n");
  auto rs = responses(s);
  ASSERT_EQ(rs.size(), 1u);
  auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].event, "endpoint");
  ASSERT_EQ(ev[0].data.rfind("/messages?sessionId=", 0), 0u);
  const std::string endpoint = ev[0].data;
  const int p = open_conn();
  feed(p, "POST " + endpoint + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " +
              std::to_string(init_body("2024-11-05").size()) + "\r\n\r\n" + init_body("2024-11-05"));
  EXPECT_EQ(responses(p)[0].status, 202);
  rs = responses(s);
  ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].event, "message");
  EXPECT_NE(ev[1].data.find(R"("protocolVersion":"2024-11-05")"), std::string::npos);
  // The session lives with its stream.
  closed(s);
  EXPECT_EQ(sessions_in_use(), 0u);
}

std::string ws_frame(uint8_t first, const std::string& payload) {
  std::string f(1, static_cast<char>(first));
  const uint8_t key[4] = {9, 8, 7, 6};
  if (payload.size() < 126) {
    f += static_cast<char>(0x80 | payload.size());
  } else {
    f += static_cast<char>(0x80 | 126);
    f += static_cast<char>(payload.size() >> 8);
    f += static_cast<char>(payload.size() & 255);
  }
  f.append(reinterpret_cast<const char*>(key), 4);
  for (size_t i = 0; i < payload.size(); ++i) f += static_cast<char>(payload[i] ^ key[i & 3]);
  return f;
}

// Server frames (unmasked) into messages: {opcode of the first frame, text}.
std::vector<std::pair<int, std::string>> ws_messages(const std::string& in) {
  std::vector<std::pair<int, std::string>> out;
  size_t p = 0;
  std::string cur;
  int op = -1;
  while (p + 2 <= in.size()) {
    const uint8_t b0 = static_cast<uint8_t>(in[p]), b1 = static_cast<uint8_t>(in[p + 1]);
    EXPECT_EQ(b1 & 0x80, 0) << "server frames are not masked";
    size_t n = b1 & 0x7F, h = 2;
    if (n == 126) {
      n = (static_cast<uint8_t>(in[p + 2]) << 8) | static_cast<uint8_t>(in[p + 3]);
      h = 4;
    }
    if (p + h + n > in.size()) break;
    if (op < 0) op = b0 & 0x0F;
    else EXPECT_EQ(b0 & 0x0F, 0) << "continuation frames after the first";
    cur += in.substr(p + h, n);
    p += h + n;
    if (b0 & 0x80) {
      out.emplace_back(op, cur);
      cur.clear();
      op = -1;
    }
  }
  return out;
}

TEST_F(HttpEngine, WebSocketCarriesOneMessagePerTextMessage) {
  const int c = open_conn();
  feed(c, "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  Received& out = port_.out[static_cast<uint16_t>(c)];
  ASSERT_EQ(out.view().rfind("HTTP/1.1 101 Switching Protocols\r\n", 0), 0u);
  EXPECT_NE(out.view().find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), std::string_view::npos);
  out.consume(out.view().find("\r\n\r\n") + 4);
  feed(c, ws_frame(0x81, init_body()) + ws_frame(0x81, R"({"jsonrpc":"2.0","method":"notifications/initialized"})") +
              ws_frame(0x81, call(2, "big")), 3);
  const auto msgs = ws_messages(out.str());
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].first, 1);
  EXPECT_NE(msgs[0].second.find("protocolVersion"), std::string::npos);
  EXPECT_EQ(msgs[1].first, 1);
  EXPECT_NE(msgs[1].second.find("block 99 "), std::string::npos);
  EXPECT_EQ(msgs[1].second.back(), '}');
  EXPECT_EQ(sessions_in_use(), 1u);
  closed(c);
  EXPECT_EQ(sessions_in_use(), 0u);
}

TEST_F(HttpEngine, FailedSendDropsTheConnectionAndTheServerGoesOn) {
  const std::string sid = session();
  const int c = open_conn();
  port_.fail_sends = true;
  feed(c, post(call(2, "big"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(c)]);
  port_.fail_sends = false;
  const int d = open_conn();
  feed(d, post(call(3, "echo", R"({"text":"fine"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("fine"), std::string::npos);
}

}  // namespace

namespace {

int g_auth_status = 0;
int authorize(void*, const emcp::http::Request& r) {
  if (r.authorization.view() == "Bearer good") return 0;
  return g_auth_status;
}

TEST_F(HttpEngine, AuthorizeHookAnswers401Or403) {
  options_.authorize = &authorize;
  g_auth_status = 401;
  const int c = open_conn();
  feed(c, post(init_body()));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 401);
  EXPECT_EQ(rs[0].headers["www-authenticate"], "Bearer");
  g_auth_status = 403;
  feed(c, post(init_body()));
  EXPECT_EQ(responses(c)[0].status, 403);
  feed(c, post(init_body(), "Authorization: Bearer good\r\n"));
  EXPECT_EQ(responses(c)[0].status, 200);
  EXPECT_EQ(sessions_in_use(), 1u);
  options_.authorize = nullptr;
}

TEST_F(HttpEngine, IdleSessionsExpire) {
  options_.session_idle_ms = 60000;
  const std::string sid = session();
  g_now += 30000;
  poll();
  EXPECT_EQ(sessions_in_use(), 1u);
  g_now += 31000;
  poll();
  EXPECT_EQ(sessions_in_use(), 0u);
  const int c = open_conn();
  feed(c, post(call(1, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(responses(c)[0].status, 404);
}

TEST_F(HttpEngine, ResumingReplaysOnlyThatStreamsMissedEvents) {
  const std::string sid = session();
  // The GET stream gets a log message; then the client drops it.
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  log("on the GET stream");
  const auto get_events = events(responses(g)[0].body);
  ASSERT_EQ(get_events.size(), 2u);
  closed(g);
  // Meanwhile a POST stream ends early (detach) and its answer arrives, and another log goes to
  // the now detached GET stream.
  const int c = open_conn();
  feed(c, post(call(4, "detach"), "Mcp-Session-Id: " + sid + "\r\n"));
  const std::string post_id = events(responses(c)[0].body)[0].id;
  log("while away");
  ASSERT_EQ(complete(g_slow[0]), Status::kOk);
  // Resuming the GET stream gives its missed log only, and the stream goes on.
  feed(c, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + get_events[1].id + "\r\n\r\n");
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_FALSE(rs[0].complete);
  auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].data.find("while away"), std::string::npos);
  // Resuming the POST stream from its priming event gives its answer only.
  const int d = open_conn();
  feed(d, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + post_id + "\r\n\r\n");
  rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].data.find("slow done"), std::string::npos);
  // Event ids are unique in the session.
  EXPECT_NE(ev[0].id, get_events[1].id);
}

TEST_F(HttpEngine, ReplayBufferKeepsTheNewestEventsThatFit) {
  const std::string sid = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  const std::string first = events(responses(g)[0].body)[0].id;  // the priming event
  closed(g);
  // 1 KiB of replay buffer: twenty messages of ~130 bytes do not all fit: the newest stay.
  for (int i = 0; i < 20; ++i) log(std::string("message number " + std::to_string(i)).c_str());
  const int c = open_conn();
  const std::string resume = "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " +
                             sid + "\r\nLast-Event-ID: " + first + "\r\n\r\n";
  feed(c, resume);
  auto ev = events(responses(c)[0].body);
  ASSERT_GE(ev.size(), 3u);
  ASSERT_LT(ev.size(), 20u);
  EXPECT_NE(ev.back().data.find("message number 19"), std::string::npos);
  EXPECT_EQ(ev[0].data.find("message number 0\""), std::string::npos);
  closed(c);
  // An event larger than the whole buffer cannot be kept; what comes after it is.
  log(std::string(2000, 'x').c_str());
  log("after the big one");
  const int d = open_conn();
  feed(d, resume);
  ev = events(responses(d)[0].body);
  ASSERT_FALSE(ev.empty());
  EXPECT_NE(ev.back().data.find("after the big one"), std::string::npos);
  for (const Event& e : ev) EXPECT_EQ(e.data.find("xxxx"), std::string::npos);
}

}  // namespace

namespace {

TEST_F(HttpEngine, CancelledDeferredCallEndsItsPostWithoutAnAnswer) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(11, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_TRUE(responses(c).empty());
  const int d = open_conn();
  feed(d, post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":11,"reason":"no"}})",
               "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(responses(d)[0].status, 202);
  poll();
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].headers["content-type"], "text/event-stream");
  EXPECT_TRUE(rs[0].complete);
  EXPECT_EQ(rs[0].body.find("\"id\":11"), std::string::npos) << "a cancelled request is never answered";
  EXPECT_TRUE(wants_input(c));
  ASSERT_EQ(g_slow.size(), 1u);
  EXPECT_EQ(complete(g_slow[0]), Status::kClosed);
}

}  // namespace

namespace {

// Review findings, each pinned.

TEST_F(HttpEngine, RequestOfAnEndedSessionDoesNotRunInTheSessionThatTookItsSlot) {
  const std::string a = session();
  const int c = open_conn();
  const std::string req = post(call(2, "echo", R"({"text":"mine"})"), "Mcp-Session-Id: " + a + "\r\n");
  feed(c, req.substr(0, req.size() - 5));  // the body is not complete yet
  const int d = open_conn();
  feed(d, "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + a + "\r\n\r\n");
  EXPECT_EQ(responses(d)[0].status, 200);
  const std::string b = session();  // takes the freed slot
  feed(c, req.substr(req.size() - 5));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 404);
  EXPECT_EQ(rs[0].headers.count("mcp-session-id"), 0u) << "another client's session id leaked";
}

TEST_F(HttpEngine, SlowUploadKeepsItsSessionFromEviction) {
  const std::string a = session();
  const int c = open_conn();
  const std::string req = post(call(2, "echo", R"({"text":"mine"})"), "Mcp-Session-Id: " + a + "\r\n");
  feed(c, req.substr(0, req.size() - 5));
  g_now += 10;
  (void)session();
  g_now += 10;
  const int e = open_conn();
  feed(e, post(init_body()));  // takes the idle second session's slot, not the uploading one's
  EXPECT_EQ(responses(e)[0].status, 200);
  feed(c, req.substr(req.size() - 5));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_NE(rs[0].body.find("mine"), std::string::npos);
}

TEST_F(HttpEngine, DeletingASessionEndsItsWaitingPosts) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(3, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  const int d = open_conn();
  feed(d, "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete);
  EXPECT_EQ(rs[0].headers["content-type"], "text/event-stream");
  EXPECT_TRUE(events(rs[0].body).empty());
}

TEST_F(HttpEngine, AnswerToAnotherRequestNeverBecomesTheCurrentAnswer) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(7, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  closed(c);  // the client of request 7 leaves
  const int d = open_conn();
  feed(d, post(call(8, "finish_now"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find(R"("id":8)"), std::string::npos);
  EXPECT_EQ(rs[0].body.find(R"("id":7)"), std::string::npos);
  EXPECT_NE(rs[0].body.find("finished it"), std::string::npos);
}

TEST_F(HttpEngine, FailedSendInsideAStreamLeavesNoStaleStateInTheSlot) {
  const std::string sid = session();
  const int c = open_conn();
  port_.fail_sends = true;
  feed(c, post(call(4, "detach"), "Mcp-Session-Id: " + sid + "\r\n"));
  port_.fail_sends = false;
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(c)]);
  // The next connection in that slot: a deferred call holds it until answered.
  const int d = open_conn();
  EXPECT_EQ(d, c);
  feed(d, post(call(5, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_FALSE(wants_input(d));
  EXPECT_TRUE(responses(d).empty());
  ASSERT_EQ(g_slow.size(), 2u);
  ASSERT_EQ(complete(g_slow[1]), Status::kOk);
  auto rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find(R"("id":5)"), std::string::npos);
}

TEST_F(HttpEngine, EventsOfAFailedConnectionStayWholeForResuming) {
  const std::string sid = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  const std::string primed = events(responses(g)[0].body)[0].id;
  port_.fail_sends = true;
  log(std::string(600, 'a').c_str());  // fails in the middle
  log("second");                       // before any poll
  port_.fail_sends = false;
  poll();
  const int c = open_conn();
  feed(c, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + primed + "\r\n\r\n");
  const auto ev = events(responses(c)[0].body);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_NE(ev[0].data.find(std::string(600, 'a')), std::string::npos);
  EXPECT_EQ(ev[0].data.back(), '}');
  EXPECT_NE(ev[1].data.find("second"), std::string::npos);
}

TEST_F(HttpEngine, CloseStreamNeedsARevisionThatCanResume) {
  const std::string sid = session("2025-06-18");
  const int c = open_conn();
  feed(c, post(call(4, "detach"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(g_close_status, Status::kInvalidState);
  EXPECT_TRUE(responses(c).empty()) << "the stream stays open";
  ASSERT_EQ(complete(g_slow[0]), Status::kOk);
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("slow done"), std::string::npos);
}

}  // namespace

namespace {
// The id of the ping request an event stream carries ("" if none).
std::string ping_id(const std::string& stream) {
  for (const Event& e : events(stream)) {
    if (e.data.find(R"("method":"ping")") == std::string::npos) continue;
    const size_t at = e.data.find(R"("id":)");
    return e.data.substr(at + 5, e.data.find(',', at) - at - 5);
  }
  return "";
}
}  // namespace

TEST_F(HttpEngine, ResponseTooLargeToKeepIs400AndEndsTheRequestItAnswers) {
  // MCP: input the server cannot accept gets an HTTP error status; the server's request it
  // answers ends at once, with the reason, instead of by its timeout.
  g_pings_ended = 0;
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(2, "ask"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  const std::string id = ping_id(rs[0].body);
  ASSERT_FALSE(id.empty()) << rs[0].body;
  const std::string big = R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"t":")" + std::string(5000, 'a') + R"("}})";
  feed(c, post(big, "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 400);
  EXPECT_EQ(rs[0].body,
            R"x({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: response too large for the arena (EMCP_ARENA_SIZE)"}})x");
  EXPECT_EQ(g_pings_ended, 1);
  EXPECT_EQ(g_ping_outcome, emcp::mcp::Response::Outcome::kError);
  EXPECT_EQ(g_ping_message.view(), "response too large for the arena (EMCP_ARENA_SIZE)"sv);
  // An answer that fits is accepted as before.
  feed(c, post(call(3, "ask"), "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  const std::string id2 = ping_id(rs[0].body);
  feed(c, post(R"({"jsonrpc":"2.0","id":)" + id2 + R"(,"result":{}})", "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 202);
  EXPECT_EQ(g_pings_ended, 2);
  EXPECT_EQ(g_ping_outcome, emcp::mcp::Response::Outcome::kResult);
}

TEST_F(HttpEngine, NoSessionSlotIs503WithRetryAfter) {
  // Both session slots hold a live connection (a call waiting for its deferred answer): a new
  // initialize finds no slot it may take.
  const std::string a = session(), b = session();
  const int ca = open_conn(), cb = open_conn();
  feed(ca, post(call(2, "slow"), "Mcp-Session-Id: " + a + "\r\n"));
  feed(cb, post(call(2, "slow"), "Mcp-Session-Id: " + b + "\r\n"));
  const int c = open_conn();
  feed(c, post(init_body()));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 503);
  EXPECT_FALSE(rs[0].headers["retry-after"].empty());
  EXPECT_EQ(sessions_in_use(), 2u);
}

TEST_F(HttpEngine, TooManyRequestsInFlightInASessionIs503WithRetryAfter) {
  // One session with EMCP_HTTP_STREAMS requests in flight (deferred calls holding their
  // streams): the next request is refused (a bigger engine, so that connections are not the
  // limit).
  // Built and destroyed inside a scope (or outside one after a failed ASSERT).
  std::optional<emcp::transport::StaticHttpServer<EMCP_HTTP_STREAMS + 3, 1, 4096, 512, 1024>> big;
  {
    emcp_test::NoHeapScope no_heap;
    big.emplace(server_, options_, port_.port());
  }
  auto send = [&](const std::string& bytes) {
    emcp_test::NoHeapScope no_heap;
    const int k = big->open();
    port_.out[static_cast<uint16_t>(k)].clear();
    EXPECT_EQ(big->receive(static_cast<uint16_t>(k), bytes.data(), bytes.size()), bytes.size());
    return k;
  };
  const int init = send(post(init_body()));
  auto rs = responses(init);
  ASSERT_EQ(rs.size(), 1u);
  const std::string sid = rs[0].headers["mcp-session-id"];
  send(post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "Mcp-Session-Id: " + sid + "\r\n"));
  for (int i = 0; i < EMCP_HTTP_STREAMS; ++i) send(post(call(10 + i, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  const int extra = send(post(call(99, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(extra);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 503);
  EXPECT_FALSE(rs[0].headers["retry-after"].empty());
  emcp_test::NoHeapScope no_heap;
  big.reset();
}
