// emcp-sensors on Linux: the sensors example served over stdio, or over the network.
//
//   emcp-sensors [--simulate] [--page-size N]                  stdio
//   emcp-sensors --http PORT [--ws] [--bind ADDR] [--allow-host NAME]... [--timeout-ms N]
//
// stdio: stdout carries only JSON-RPC; diagnostics go to stderr; the process ends at the end of
// stdin. HTTP: Streamable HTTP on /mcp, the 2024-11-05 HTTP+SSE transport on /sse, and with
// --ws WebSocket on /ws, all on PORT of ADDR (default 127.0.0.1); runs until SIGINT/SIGTERM.
#include <stdlib.h>
#include <string.h>

#include "app.h"
#include "emcp/mcp/server.h"
#include "emcp/posix/platform.h"
#include "sensors.h"
#include "emcp/posix/serve.h"

namespace serve = emcp::posix::serve;

namespace {

void usage() {
  serve::say({"usage: emcp-sensors [--simulate] [--page-size N] [--http PORT [--ws] [--bind ADDR] [--allow-host NAME]...]\n"
              "  MCP server over stdio (one JSON-RPC message per line), or over HTTP with --http.\n"
              "  --simulate        use the deterministic sensor model instead of /sys and /proc\n"
              "  --page-size N     entries per page of tools/list, resources/list, ... (default 16)\n"
              "  --http PORT       serve Streamable HTTP on /mcp and HTTP+SSE (2024-11-05) on /sse\n"
              "                    (PORT 0: any free port, printed on stderr)\n"
              "  --ws              also serve WebSocket on /ws (subprotocol mcp)\n"
              "  --bind ADDR       address to listen on (default 127.0.0.1; IPv6 literals work)\n"
              "  --allow-host NAME a Host/Origin name to accept besides localhost (repeatable, * for any)\n"
              "  --timeout-ms N    longest wait for a request's head, and between body bytes (default 10000)\n"});
}

const char* g_allowed[8];
size_t g_allowed_count = 0;

void linux_stats(app::PlatformStats* out) {
  const serve::Figures f = serve::figures();
  out->platform = "linux";
  out->messages = f.messages;
  out->arena_high_water = f.arena_high_water;
  out->arena_size = f.arena_size;
}

}  // namespace

// At namespace scope: no function-local statics (their guards pull in the C++ runtime's locking).
emcp::mcp::Server g_server(app::kServerInfo, emcp::posix::platform());

int main(int argc, char** argv) {
  serve::HttpConfig http;
  http.program = "emcp-sensors";
  bool use_http = false;
  for (int i = 1; i < argc; ++i) {
    const bool has_value = i + 1 < argc;
    if (strcmp(argv[i], "--http") == 0 && has_value) {
      if (!serve::parse_port(argv[++i], &http.port)) {
        serve::say({"emcp-sensors: --http needs a port 0..65535\n"});
        return 2;
      }
      use_http = true;
    } else if (strcmp(argv[i], "--timeout-ms") == 0 && has_value) {
      const long n = strtol(argv[++i], nullptr, 10);
      if (n < 100 || n > 600000) {
        serve::say({"emcp-sensors: --timeout-ms must be 100..600000\n"});
        return 2;
      }
      http.timeout_ms = static_cast<uint32_t>(n);
    } else if (strcmp(argv[i], "--ws") == 0) {
      http.websocket = true;
    } else if (strcmp(argv[i], "--bind") == 0 && has_value) {
      http.address = argv[++i];
    } else if (strcmp(argv[i], "--allow-host") == 0 && has_value) {
      if (g_allowed_count == sizeof g_allowed / sizeof g_allowed[0]) {
        serve::say({"emcp-sensors: at most 8 --allow-host\n"});
        return 2;
      }
      g_allowed[g_allowed_count++] = argv[++i];
    } else if (strcmp(argv[i], "--simulate") == 0) {
      sensors::force_simulation(true);
    } else if (strcmp(argv[i], "--page-size") == 0 && has_value) {
      const long n = strtol(argv[++i], nullptr, 10);
      if (n < 1 || n > 1000) {
        serve::say({"emcp-sensors: --page-size must be 1..1000\n"});
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
  if (!use_http && (http.websocket || g_allowed_count != 0 || http.timeout_ms != 0)) {
    serve::say({"emcp-sensors: --ws, --bind, --allow-host and --timeout-ms need --http PORT\n"});
    return 2;
  }
  app::init(g_server, &emcp::posix::now_ms);
  app::set_stats_source(&linux_stats);
  serve::Loop loop;
  loop.tick = &app::tick;
  loop.next_tick_ms = &app::next_tick_ms;
  if (use_http) {
    http.allowed_hosts = emcp::Span<const char* const>(g_allowed, g_allowed_count);
    return serve::http(g_server, http, loop);
  }
  serve::say({"emcp-sensors: serving MCP on stdio (protocol revisions 2024-11-05 to 2025-11-25)\n"});
  return serve::stdio(g_server, "emcp-sensors", loop);
}
