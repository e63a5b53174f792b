// emcp-sensors on Linux: the sensors example served over stdio, or over the network.
//
//   emcp-sensors [--simulate] [--page-size N]                  stdio
//   emcp-sensors --http PORT [--ws] [--bind ADDR] [--allow-host NAME]...
//
// stdio: stdout carries only JSON-RPC; diagnostics go to stderr; the process ends at the end of
// stdin. HTTP: Streamable HTTP on /mcp, the 2024-11-05 HTTP+SSE transport on /sse, and with
// --ws WebSocket on /ws, all on PORT of ADDR (default 127.0.0.1); runs until killed.
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "emcp/json/number.h"
#include "emcp/mcp/server.h"
#include "emcp/mbedtls/sha1.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/http_listener.h"
#include "emcp/posix/platform.h"
#include "emcp/transport/http_server.h"
#include "emcp/transport/stdio.h"
#include "sensors.h"

namespace {

constexpr emcp::mcp::ServerInfo kInfo = [] {
  emcp::mcp::ServerInfo i;
  i.name = "emcp-sensors";
  i.version = "0.1.0";
  i.title = "emcp sensors demo";
  i.description = "A device's sensors, LED, relay and log over MCP, served by emcp (zero heap).";
  i.instructions =
      "This server is a small device. Read its sensors with read_sensor or the sensor:// "
      "resources, switch its LED and relay, sample a sensor over time, and read its log.";
  return i;
}();

int g_stdout = 1;

// Diagnostics on stderr, without stdio (which allocates): pieces of text and numbers.
void say(std::initializer_list<emcp::StrView> parts) {
  for (emcp::StrView s : parts) (void)emcp::posix::write_all(2, s.data(), s.size());
}
emcp::StrView num(uint64_t v, char* buf) { return emcp::StrView(buf, emcp::json::format_uint64(v, buf)); }

void usage() {
  say({"usage: emcp-sensors [--simulate] [--page-size N] [--http PORT [--ws] [--bind ADDR] [--allow-host NAME]...]\n"
       "  MCP server over stdio (one JSON-RPC message per line), or over HTTP with --http.\n"
       "  --simulate        use the deterministic sensor model instead of /sys and /proc\n"
       "  --page-size N     entries per page of tools/list, resources/list, ... (default 16)\n"
       "  --http PORT       serve Streamable HTTP on /mcp and HTTP+SSE (2024-11-05) on /sse\n"
       "  --ws              also serve WebSocket on /ws (subprotocol mcp)\n"
       "  --bind ADDR       address to listen on (default 127.0.0.1; IPv6 literals work)\n"
       "  --allow-host NAME a Host/Origin name to accept besides localhost (repeatable, * for any)\n"});
}

bool random_fill(void* out, size_t n) { return emcp::posix::random_bytes(out, n) == emcp::Status::kOk; }

const char* g_allowed[9] = {"localhost", "127.0.0.1", "[::1]"};
size_t g_allowed_count = 3;

}  // namespace

// Objects live at namespace scope (no function-local statics: their guards pull in the C++
// runtime's locking).
emcp::mcp::Server g_server(kInfo, &emcp::posix::now_ms);
emcp::transport::StaticStdioTransport<> g_stdio(g_server, &emcp::posix::fd_flush, &g_stdout);
emcp::posix::StaticHttpListener<16> g_net;
emcp::transport::HttpOptions g_http_options;
emcp::transport::StaticHttpServer<16, 8> g_http(g_server, g_http_options, g_net.port_interface());

namespace {

int serve_http(const char* address, uint16_t port, bool ws) {
  g_http_options.random = &random_fill;
  g_http_options.allowed_hosts = emcp::Span<const char* const>(g_allowed, g_allowed_count);
  g_http_options.allowed_origins = g_http_options.allowed_hosts;
  if (ws) g_http_options.sha1 = &emcp::mbedtls::sha1;
  if (g_net.listen(address, port) != emcp::Status::kOk) {
    say({"emcp-sensors: cannot listen on ", address, " port ", "(", strerror(errno), ")\n"});
    return 1;
  }
  g_net.attach(g_http);
  char p[24];
  say({"emcp-sensors: serving MCP on http://", address, ":", num(g_net.bound_port(), p),
       "/mcp (Streamable HTTP), /sse (HTTP+SSE)", ws ? ", /ws (WebSocket)" : "", "\n"});
  for (;;) {
    uint32_t wait = app::next_tick_ms();
    if (wait > 100) wait = 100;
    if (g_net.run_once(static_cast<int>(wait)) != emcp::Status::kOk) {
      say({"emcp-sensors: poll failed: ", strerror(errno), "\n"});
      return 1;
    }
    app::tick();
  }
}

}  // namespace

int main(int argc, char** argv) {
  long http_port = -1;
  bool ws = false;
  const char* bind_address = "127.0.0.1";
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--http") == 0 && i + 1 < argc) {
      http_port = strtol(argv[++i], nullptr, 10);
      if (http_port < 0 || http_port > 65535) {
        say({"emcp-sensors: --http needs a port 0..65535\n"});
        return 2;
      }
    } else if (strcmp(argv[i], "--ws") == 0) {
      ws = true;
    } else if (strcmp(argv[i], "--bind") == 0 && i + 1 < argc) {
      bind_address = argv[++i];
    } else if (strcmp(argv[i], "--allow-host") == 0 && i + 1 < argc) {
      if (g_allowed_count == sizeof g_allowed / sizeof g_allowed[0]) {
        say({"emcp-sensors: too many --allow-host\n"});
        return 2;
      }
      g_allowed[g_allowed_count++] = argv[++i];
    } else if (strcmp(argv[i], "--simulate") == 0) {
      sensors::force_simulation(true);
    } else if (strcmp(argv[i], "--page-size") == 0 && i + 1 < argc) {
      const long n = strtol(argv[++i], nullptr, 10);
      if (n < 1 || n > 1000) {
        say({"emcp-sensors: --page-size must be 1..1000\n"});
        return 2;
      }
      g_server.set_page_size(static_cast<uint16_t>(n));
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  app::init(g_server, &emcp::posix::now_ms);
  if (ws && http_port < 0) {
    say({"emcp-sensors: --ws needs --http PORT\n"});
    return 2;
  }
  if (http_port >= 0) return serve_http(bind_address, static_cast<uint16_t>(http_port), ws);
  say({"emcp-sensors: serving MCP on stdio (protocol revisions 2024-11-05 to 2025-11-25)\n"});

  uint8_t buf[1024];
  for (;;) {
    uint32_t wait = app::next_tick_ms();
    if (wait > 1000) wait = 1000;
    pollfd pfd = {0, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(wait));
    if (ready > 0) {
      size_t n = 0;
      const emcp::Status s = emcp::posix::read_some(0, buf, sizeof buf, &n);
      if (s == emcp::Status::kOk) {
        if (g_stdio.feed(buf, n) != emcp::Status::kOk) {
          say({"emcp-sensors: stdout failed: ", emcp::status_str(g_stdio.status()), "\n"});
          return 1;
        }
      } else if (s != emcp::Status::kWouldBlock) {
        (void)g_stdio.finish();
        break;
      }
    }
    app::tick();
    g_server.poll();
  }
  char a[24], b[24], c[24];
  say({"emcp-sensors: end of input after ", num(g_stdio.messages(), a), " messages (",
       num(g_stdio.too_long(), b), " over-long lines), arena high-water ",
       num(g_stdio.arena().high_water(), c), " bytes\n"});
  return 0;
}
