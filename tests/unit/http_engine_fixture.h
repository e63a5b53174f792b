// The HTTP engine's test fixture: a fake port and clock, a small application, an HTTP/1.1
// reader written from RFC 9112 and an SSE reader from the HTML event-stream format,
// independently of the engine's writer. Included by the engine's test files (each has its own
// copy, in an anonymous namespace).
#ifndef EMCP_TESTS_UNIT_HTTP_ENGINE_FIXTURE_H
#define EMCP_TESTS_UNIT_HTTP_ENGINE_FIXTURE_H

#include <gtest/gtest.h>
#include <string.h>

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "emcp/crypto/sha1.h"
#include "emcp/transport/http_server.h"
#include "heap_guard.h"
#include "http_responses.h"
#include "no_heap_util.h"

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;
using emcp::transport::HttpOptions;
using emcp::transport::HttpPort;
using namespace std::string_view_literals;

namespace {

using http_test::Response;
using http_test::lower;
using http_test::parse;

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
  // A connection's window: how many more bytes write() takes (unlimited unless a test sets
  // it), and what each wait_writable() call opens (0: the wait times out, the clock moves on).
  size_t window[kMaxConns];
  size_t grant_per_wait[kMaxConns] = {};
  int waits = 0;
  FakePort() {
    for (size_t& w : window) w = SIZE_MAX;
  }
  static bool check(uint16_t c) {
    if (c < kMaxConns) return true;
    ADD_FAILURE() << "connection " << c << " beyond kMaxConns";
    return false;
  }
  static Status write(void* ctx, uint16_t c, const char* d, size_t n, size_t* taken) {
    auto* self = static_cast<FakePort*>(ctx);
    *taken = 0;
    if (!check(c)) return Status::kIoError;
    if (self->closed[c]) ADD_FAILURE() << "write to closed connection " << c;
    if (self->fail_sends) return Status::kIoError;
    const size_t k = n < self->window[c] ? n : self->window[c];
    if (!self->out[c].append(d, k)) return Status::kNoSpace;
    if (self->window[c] != SIZE_MAX) self->window[c] -= k;
    *taken = k;
    return Status::kOk;
  }
  static Status wait_writable(void* ctx, uint16_t c, uint32_t timeout_ms) {
    auto* self = static_cast<FakePort*>(ctx);
    if (!check(c)) return Status::kIoError;
    ++self->waits;
    if (self->grant_per_wait[c] == 0) {
      g_now += timeout_ms;
      return Status::kWouldBlock;
    }
    self->window[c] += self->grant_per_wait[c];
    return Status::kOk;
  }
  static void close(void* ctx, uint16_t c) {
    if (check(c)) static_cast<FakePort*>(ctx)->closed[c] = true;
  }
  HttpPort port() {
    HttpPort p;
    p.write = &write;
    p.wait_writable = &wait_writable;
    p.close = &close;
    p.ctx = this;
    return p;
  }
};

// ---- The application ------------------------------------------------------------------------

Server* g_server = nullptr;
std::vector<Pending> g_slow;  // its capacity is reserved before the engine runs (SetUp)

int g_echo_calls = 0;
void echo(ToolCall& c) {
  ++g_echo_calls;
  c.text(c.str("text"));
}
void slow(ToolCall& c) {
  const Pending p = c.defer();
  if (p.valid()) g_slow.push_back(p);
}
void progress(ToolCall& c) {
  (void)c.progress(1, 2);
  c.text("done");
}
int g_big_calls = 0;
void big(ToolCall& c) {
  ++g_big_calls;
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

struct Event {
  std::string id, event, data, retry;
};

// Splits an event stream (HTML "text/event-stream") into events; comments are skipped.
[[maybe_unused]] std::vector<Event> events(const std::string& stream) {
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

// A masked client frame (RFC 6455).
[[maybe_unused]] std::string ws_frame(uint8_t first, const std::string& payload) {
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
[[maybe_unused]] std::vector<std::pair<int, std::string>> ws_messages(const std::string& in) {
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

const char* kPostHeaders = "Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n";

std::string post(const std::string& body, const std::string& extra = "") {
  return "POST /mcp HTTP/1.1\r\nHost: localhost:8080\r\n" + std::string(kPostHeaders) + extra +
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

std::string init_body(const char* version = "2025-11-25", const char* caps = "{}") {
  return std::string(R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":")") + version +
         R"(","capabilities":)" + caps + R"(,"clientInfo":{"name":"t","version":"1"}}})";
}

[[maybe_unused]] std::string call(int id, const char* tool, const char* args = "{}") {
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
    options_.sha1 = &emcp::crypto::sha1;
  }

  // The calls into the server and the engine, each inside a NoHeapScope (their string
  // arguments are built before it opens).

  // A new connection (from `peer`; none: not known); what the fake port kept of an earlier one
  // in the slot is forgotten.
  int open_conn(const emcp::transport::PeerAddress& peer = emcp::transport::PeerAddress()) {
    emcp_test::NoHeapScope no_heap;
    const int c = http_.open(peer);
    if (c >= 0) {
      port_.out[static_cast<uint16_t>(c)].clear();
      port_.closed[static_cast<uint16_t>(c)] = false;
      port_.window[static_cast<uint16_t>(c)] = SIZE_MAX;
      port_.grant_per_wait[static_cast<uint16_t>(c)] = 0;
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
  // The port took fewer bytes than offered and now has room again.
  void writable(int c) {
    emcp_test::NoHeapScope no_heap;
    http_.writable(static_cast<uint16_t>(c));
  }
  bool output_pending(int c) {
    emcp_test::NoHeapScope no_heap;
    return http_.output_pending(static_cast<uint16_t>(c));
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

  // A GET on /sse: its connection, and the data of its first event, an `endpoint` (checked).
  std::pair<int, std::string> open_sse() {
    const int s = open_conn();
    feed(s, "GET /sse HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n");
    auto rs = responses(s);
    EXPECT_EQ(rs.size(), 1u);
    if (rs.size() != 1) return {s, ""};
    auto ev = events(rs[0].body);
    EXPECT_EQ(ev.size(), 1u);
    if (ev.size() != 1) return {s, ""};
    EXPECT_EQ(ev[0].event, "endpoint");
    return {s, ev[0].data};
  }

  // A session at `version`, initialized (from `peer`); returns its id.
  std::string session(const char* version = "2025-11-25",
                      const emcp::transport::PeerAddress& peer = emcp::transport::PeerAddress()) {
    const int c = open_conn(peer);
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

  const emcp::Platform platform_{&now_ms, &fake_random};
  Server server_{kInfo, platform_};
  HttpOptions options_;
  FakePort port_;
  emcp::transport::StaticHttpServer<4, 2, 4096, 512, 1024> http_{server_, options_, port_.port()};
};

}  // namespace

#endif  // EMCP_TESTS_UNIT_HTTP_ENGINE_FIXTURE_H
