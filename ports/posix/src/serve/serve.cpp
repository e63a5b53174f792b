#include "emcp/posix/serve.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <string.h>

#include <new>

#include "emcp/json/number.h"
#include "emcp/mbedtls/sha1.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/http_listener.h"
#include "emcp/posix/platform.h"
#include "emcp/transport/http_server.h"
#include "emcp/transport/stdio.h"

EMCP_NS_BEGIN
namespace posix {
namespace serve {

using emcp::StrView;

namespace {

constexpr size_t kConnections = 16;
constexpr size_t kSessions = 8;

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

StrView num(uint64_t v, char* buf) { return StrView(buf, emcp::json::format_uint64(v, buf)); }


uint32_t wait_ms(const Loop& loop, uint32_t cap) {
  uint32_t wait = loop.next_tick_ms ? loop.next_tick_ms() : cap;
  return wait > cap ? cap : wait;
}

int g_stdout = 1;
const char* g_hosts[16];

}  // namespace

void say(std::initializer_list<StrView> parts) {
  for (StrView s : parts) (void)emcp::posix::write_all(2, s.data(), s.size());
}

bool parse_port(const char* text, uint16_t* port) {
  uint32_t v = 0;
  if (*text == '\0') return false;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + static_cast<uint32_t>(*p - '0');
    if (v > 65535) return false;
  }
  *port = static_cast<uint16_t>(v);
  return true;
}

// Namespace-scope storage (no function-local statics: their guards pull in runtime locking);
// the transports are built in place once the server is known.
using Engine = emcp::transport::StaticHttpServer<kConnections, kSessions>;
using Stdio = emcp::transport::StaticStdioTransport<>;
emcp::posix::StaticHttpListener<kConnections> g_net;
emcp::transport::HttpOptions g_options;
alignas(Engine) unsigned char g_engine_mem[sizeof(Engine)];
alignas(Stdio) unsigned char g_stdio_mem[sizeof(Stdio)];

Stdio* g_stdio = nullptr;
Engine* g_engine = nullptr;

Figures figures() {
  Figures f;
  f.arena_size = EMCP_ARENA_SIZE;
  if (g_stdio != nullptr) {
    f.messages = g_stdio->messages();
    f.arena_high_water = g_stdio->arena().high_water();
  } else if (g_engine != nullptr) {
    f.arena_high_water = g_engine->arena_high_water();
  }
  return f;
}

int stdio(emcp::mcp::Server& server, const char* program, const Loop& loop) {
  Stdio& transport = *new (g_stdio_mem) Stdio(server, &emcp::posix::fd_flush, &g_stdout);
  g_stdio = &transport;
  uint8_t buf[1024];
  for (;;) {
    pollfd pfd = {0, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(wait_ms(loop, 1000)));
    if (ready > 0) {
      size_t n = 0;
      const emcp::Status s = emcp::posix::read_some(0, buf, sizeof buf, &n);
      if (s == emcp::Status::kOk) {
        if (transport.feed(buf, n) != emcp::Status::kOk) {
          say({program, ": stdout failed: ", emcp::status_str(transport.status()), "\n"});
          return 1;
        }
      } else if (s != emcp::Status::kWouldBlock) {
        (void)transport.finish();
        break;
      }
    }
    if (loop.tick) loop.tick();
    server.poll();
  }
  char a[24], b[24], c[24];
  say({program, ": end of input after ", num(transport.messages(), a), " messages (",
       num(transport.too_long(), b), " over-long lines), arena high-water ",
       num(transport.arena().high_water(), c), " bytes\n"});
  return 0;
}

int http(emcp::mcp::Server& server, const HttpConfig& config, const Loop& loop) {
  Engine& engine = *new (g_engine_mem) Engine(server, g_options, g_net.port_interface());
  g_engine = &engine;
  size_t n = 0;
  for (const char* h : {"localhost", "127.0.0.1", "[::1]"}) g_hosts[n++] = h;
  for (const char* h : config.allowed_hosts)
    if (n < sizeof g_hosts / sizeof g_hosts[0]) g_hosts[n++] = h;
  g_options.allowed_hosts = emcp::Span<const char* const>(g_hosts, n);
  g_options.allowed_origins = g_options.allowed_hosts;
  g_options.sha1 = config.websocket ? &emcp::mbedtls::sha1 : nullptr;
  if (config.timeout_ms != 0) g_options.head_timeout_ms = g_options.body_timeout_ms = config.timeout_ms;
  if (g_net.listen(config.address, config.port) != emcp::Status::kOk) {
    char p[24];
    say({config.program, ": cannot listen on ", config.address, " port ", num(config.port, p), ": ",
         strerror(errno), "\n"});
    return 1;
  }
  g_net.attach(engine);
  struct sigaction sa = {};
  sa.sa_handler = &on_signal;
  (void)sigaction(SIGINT, &sa, nullptr);
  (void)sigaction(SIGTERM, &sa, nullptr);
  char p[24];
  const bool v6 = strchr(config.address, ':') != nullptr;
  say({config.program, ": serving MCP on http://", v6 ? "[" : "", config.address, v6 ? "]" : "", ":",
       num(g_net.bound_port(), p), "/mcp (Streamable HTTP), /sse (HTTP+SSE)",
       config.websocket ? ", /ws (WebSocket)" : "", "\n"});
  while (g_stop == 0) {
    if (g_net.run_once(static_cast<int>(wait_ms(loop, 100))) != emcp::Status::kOk && errno != EINTR) {
      say({config.program, ": poll failed: ", strerror(errno), "\n"});
      return 1;
    }
    if (loop.tick) loop.tick();
  }
  char a[24], b[24], c[24], d[24], e[24];
  say({config.program, ": stopped after ", num(g_net.accepted(), a), " connections (",
       num(g_net.refused(), b), " refused when full), arena high-water ",
       num(engine.arena_high_water(), c), " bytes; in use at stop: ", num(engine.connections_in_use(), d),
       " connections, ", num(engine.sessions_in_use(), e), " sessions\n"});
  return 0;
}

}  // namespace serve
}  // namespace posix
EMCP_NS_END
