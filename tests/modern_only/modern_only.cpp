// Built with EMCP_LEGACY_ERA=0 (tests/CMakeLists.txt): a server of MCP 2026-07-28 only. Over
// stdio and over the HTTP engine (with no session slots), 2026-07-28 requests are served
// (server/discover, tools/call, subscriptions/listen) and what only the legacy era has is
// refused with the codes the spec gives: initialize -32022 naming the revision served
// (basic/versioning.mdx, "Backward Compatibility with Initialization-Based Versions"), a request
// without `_meta` -32602 (basic/index.mdx, "Per-request protocol fields"), the legacy methods
// -32601, a batch -32600; over HTTP with statuses 400/404/405 (streamable-http.mdx). Requests to
// the client fail. Prints each failed check; exit 0 when all hold.
#include <stdio.h>
#include <string.h>

#include <new>

#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"
#include "emcp/transport/line.h"

using namespace emcp::mcp;
using emcp::Status;
using emcp::StrView;

namespace {

static_assert(EMCP_LEGACY_ERA == 0 && EMCP_MODERN_ERA == 1, "this test is built with EMCP_LEGACY_ERA=0");
static_assert(EMCP_MAX_OUTGOING == 0, "no requests to clients: EMCP_MAX_OUTGOING defaults to 0");
static_assert(EMCP_NOTIFY_QUEUE == 256, "listens (EMCP_MAX_LISTENS 4) still hold notifications");

int g_failures = 0;

void check(bool ok, const char* what, StrView seen) {
  if (ok) return;
  ++g_failures;
  fprintf(stderr, "modern_only: FAILED: %s\n  seen: %.*s\n", what, static_cast<int>(seen.size()), seen.data());
}

bool has(StrView hay, const char* needle) {
  const size_t n = strlen(needle);
  for (size_t i = 0; i + n <= hay.size(); ++i)
    if (memcmp(hay.data() + i, needle, n) == 0) return true;
  return false;
}

// ---- The application ----------------------------------------------------------------------------

void echo(ToolCall& c) {
  (void)c.log(LogLevel::kInfo, "echoing");
  c.text({"echo: ", c.str("text")});
}
constexpr Param kEchoParams[] = {Param::string("text").required()};
constexpr Tool kTools[] = {Tool::make("echo", &echo).with_params(kEchoParams)};
constexpr Tool kMoreTools[] = {Tool::make("echo", &echo).with_params(kEchoParams), Tool::make("echo2", &echo)};
void read_led(ResourceRead& r) { r.text("on"); }
constexpr Resource kResources[] = {Resource::make("device://led", "led", &read_led)};
constexpr ServerInfo kInfo = {"modern-only", "1"};

uint64_t g_now = 1000;
uint64_t now_ms() { return g_now; }
uint8_t g_seed = 0;
bool random_bytes(void* out, size_t n) {
  for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(out)[i] = ++g_seed;
  return true;
}
constexpr emcp::Platform kPlatform{&now_ms, &random_bytes};

constexpr const char* kMeta =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";

// ---- stdio --------------------------------------------------------------------------------------

char g_out[16384];
size_t g_len = 0;
Status write_out(void*, const char* p, size_t n) {
  if (g_len + n > sizeof g_out) return Status::kNoSpace;
  memcpy(g_out + g_len, p, n);
  g_len += n;
  return Status::kOk;
}

// Feeds one line (a newline is added) and returns what the server wrote for it.
StrView exchange(emcp::transport::LineTransport& t, const char* line) {
  g_len = 0;
  (void)t.feed(line, strlen(line));
  (void)t.feed("\n", 1);
  return StrView(g_out, g_len);
}

void over_stdio(Server& server) {
  emcp::transport::StaticLineTransport<> t(server, &write_out, nullptr);
  char line[1024];

  StrView out = exchange(t, R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
                            R"("capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}})");
  check(has(out, R"("id":1,"error":{"code":-32022)"), "initialize of a legacy client: -32022", out);
  check(has(out, R"("data":{"supported":["2026-07-28"],"requested":"2025-06-18"})"),
        "initialize: data.supported names 2026-07-28, data.requested the client's revision", out);
  check(!t.session().initialized(), "initialize opened no session", out);

  out = exchange(t, R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  check(out.empty(), "notifications/initialized: no answer", out);
  out = exchange(t, R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  check(has(out, R"("id":2,"error":{"code":-32602)"), "ping without _meta: -32602", out);
  out = exchange(t, R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  check(has(out, R"("id":3,"error":{"code":-32602)"), "tools/list without _meta: -32602", out);
  out = exchange(t, R"([{"jsonrpc":"2.0","id":4,"method":"tools/list"}])");
  check(has(out, R"("error":{"code":-32600)") && !has(out, R"("result")"), "a batch: -32600", out);

  snprintf(line, sizeof line, R"({"jsonrpc":"2.0","id":5,"method":"server/discover","params":{%s}})", kMeta);
  out = exchange(t, line);
  check(has(out, R"("id":5,"result":{"resultType":"complete")") && has(out, R"("supportedVersions":["2026-07-28"])"),
        "server/discover is served", out);
  check(has(out, R"("tools":{"listChanged":true})"), "server/discover offers list changes (listens)", out);

  snprintf(line, sizeof line,
           R"({"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},)"
           R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},)"
           R"("io.modelcontextprotocol/logLevel":"info"}}})");
  out = exchange(t, line);
  check(has(out, R"("method":"notifications/message")") && has(out, R"("data":"echoing")"),
        "tools/call: the log its _meta asked for goes first", out);
  check(has(out, R"("id":6,"result":{"resultType":"complete")") && has(out, R"("text":"echo: hi")"),
        "tools/call is served", out);

  for (const char* method : {"initialize", "ping", "logging/setLevel", "resources/subscribe", "resources/unsubscribe"}) {
    snprintf(line, sizeof line, R"({"jsonrpc":"2.0","id":7,"method":"%s","params":{"uri":"device://led","level":"debug",)"
                                R"("protocolVersion":"2025-11-25",%s}})", method, kMeta);
    out = exchange(t, line);
    check(has(out, R"("id":7,"error":{"code":-32601)"), "a legacy method with modern _meta: -32601", out);
  }

  // A listen: acknowledged first; a list change goes to it, tagged; notifications/cancelled ends it.
  snprintf(line, sizeof line,
           R"({"jsonrpc":"2.0","id":"L1","method":"subscriptions/listen","params":{"notifications":{"toolsListChanged":true,)"
           R"("resourceSubscriptions":["device://led"]},%s}})", kMeta);
  out = exchange(t, line);
  check(has(out, R"("method":"notifications/subscriptions/acknowledged")") &&
            has(out, R"("io.modelcontextprotocol/subscriptionId":"L1")"),
        "subscriptions/listen is acknowledged with its subscriptionId", out);
  check(server.listens() == 1, "the listen stays open", out);
  g_len = 0;
  server.set_tools(kMoreTools);
  server.resource_updated("device://led");
  out = StrView(g_out, g_len);
  check(has(out, R"("method":"notifications/tools/list_changed")") && has(out, R"("method":"notifications/resources/updated")") &&
            has(out, R"(/subscriptionId":"L1")"),
        "a list change and a resource update go to the listen, tagged", out);
  g_len = 0;
  server.log(LogLevel::kError, "to nobody");
  check(g_len == 0, "Server::log() has no session to go to", StrView(g_out, g_len));
  out = exchange(t, R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"L1"}})");
  check(server.listens() == 0 && out.empty(), "notifications/cancelled ends the listen", out);

  // Requests to the client do not exist at this revision.
  auto done = [](const Response&, void*) {};
  check(server.ping(t.session(), done, nullptr) == Status::kInvalidState, "ping() to the client fails", StrView());
  check(server.request(t.session(), "roots/list", nullptr, nullptr, done, nullptr) == Status::kInvalidState,
        "request() to the client fails", StrView());
  check(server.list_roots(t.session(), done, nullptr) != Status::kOk, "list_roots() fails", StrView());
  server.set_tools(kTools);
  (void)t.finish();
}

// ---- HTTP ---------------------------------------------------------------------------------------

constexpr uint16_t kConns = 2;
char g_http[kConns][8192];
size_t g_http_len[kConns];
Status http_write(void*, uint16_t c, const char* d, size_t n, size_t* taken) {
  *taken = 0;
  if (c >= kConns || g_http_len[c] + n > sizeof g_http[c]) return Status::kIoError;
  memcpy(g_http[c] + g_http_len[c], d, n);
  g_http_len[c] += n;
  *taken = n;
  return Status::kOk;
}
void http_close(void*, uint16_t) {}

// One request on a fresh connection; the bytes the engine answered.
StrView http_exchange(emcp::transport::HttpServer& engine, const char* method, const char* path, const char* headers,
                      const char* body) {
  const int c = engine.open();
  if (c < 0) return StrView("no connection slot");
  const uint16_t conn = static_cast<uint16_t>(c);
  g_http_len[conn] = 0;
  char head[1024];
  snprintf(head, sizeof head,
           "%s %s HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
           "Accept: application/json, text/event-stream\r\n%sContent-Length: %zu\r\n\r\n",
           method, path, headers, strlen(body));
  (void)engine.receive(conn, head, strlen(head));
  (void)engine.receive(conn, body, strlen(body));
  engine.closed(conn);
  return StrView(g_http[conn], g_http_len[conn]);
}

void over_http(Server& server) {
  static const emcp::transport::HttpOptions options;
  const emcp::transport::HttpPort port{&http_write, nullptr, &http_close, nullptr};
  // No session slots: a server of 2026-07-28 only opens none.
  static emcp::transport::StaticHttpServer<kConns, 0, 2048, 1024, 0> engine(server, options, port);
  char body[512];

  StrView out = http_exchange(engine, "POST", "/mcp", "",
                              R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-03-26",)"
                              R"("capabilities":{},"clientInfo":{"name":"legacy","version":"1"}}})");
  check(has(out, "HTTP/1.1 400") && has(out, R"("code":-32022)") && has(out, R"("supported":["2026-07-28"])"),
        "POST initialize: 400 with -32022 naming 2026-07-28", out);
  check(!has(out, "Mcp-Session-Id"), "no session id is minted", out);

  snprintf(body, sizeof body, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"},%s}})",
           kMeta);
  out = http_exchange(engine, "POST", "/mcp", "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\n", body);
  check(has(out, "HTTP/1.1 200") && has(out, R"("text":"echo: hi")") && !has(out, "Mcp-Session-Id"),
        "POST tools/call at 2026-07-28: 200 with the result, no session", out);

  out = http_exchange(engine, "POST", "/mcp", "Mcp-Session-Id: 0123\r\n", R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})");
  check(has(out, "HTTP/1.1 400") && has(out, R"("code":-32602)"), "POST without _meta: 400 with -32602", out);
  out = http_exchange(engine, "POST", "/mcp", "", R"([{"jsonrpc":"2.0","id":4,"method":"tools/list"}])");
  check(has(out, "HTTP/1.1 400") && has(out, R"("code":-32600)"), "POST of a batch: 400 with -32600", out);
  out = http_exchange(engine, "POST", "/mcp", "", R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
  check(has(out, "HTTP/1.1 202"), "POST of a notification: 202", out);

  out = http_exchange(engine, "GET", "/mcp", "Mcp-Session-Id: 0123\r\n", "");
  check(has(out, "HTTP/1.1 405") && has(out, "Allow: POST\r\n"), "GET on the endpoint: 405, Allow: POST", out);
  out = http_exchange(engine, "DELETE", "/mcp", "Mcp-Session-Id: 0123\r\n", "");
  check(has(out, "HTTP/1.1 405"), "DELETE on the endpoint: 405", out);
  out = http_exchange(engine, "GET", "/sse", "", "");
  check(has(out, "HTTP/1.1 404"), "HTTP+SSE's GET /sse: 404", out);
  out = http_exchange(engine, "POST", "/messages?sessionId=0123", "", R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})");
  check(has(out, "HTTP/1.1 404"), "HTTP+SSE's POST /messages: 404", out);
  out = http_exchange(engine, "GET", "/ws", "Upgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n"
                                            "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n", "");
  check(has(out, "HTTP/1.1 404"), "WebSocket's GET /ws: 404", out);
  check(engine.sessions_in_use() == 0 && engine.connections_in_use() == 0, "no session, no connection left", StrView());
}

}  // namespace

int main() {
  // Static, as over_http()'s engine is: constructed first, it is destroyed after the engine,
  // whose destructor detaches its sessions from it (a local server would be gone by then).
  static Server server(kInfo, kPlatform);
  server.set_tools(kTools);
  server.set_resources(kResources);
  over_stdio(server);
  over_http(server);
  if (g_failures != 0) {
    fprintf(stderr, "modern_only: %d check(s) failed\n", g_failures);
    return 1;
  }
  printf("modern_only: every check holds\n");
  return 0;
}
