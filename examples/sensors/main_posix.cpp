// emcp-sensors on Linux: the sensors example served over stdio, or over the network.
//
//   emcp-sensors [--simulate] [--page-size N]                  stdio
//   emcp-sensors --http PORT [--ws] [--bind ADDR] [--allow-host NAME]... [--timeout-ms N]
//                [--tls-cert FILE --tls-key FILE]                             HTTPS, WSS
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
  serve::say({"usage: emcp-sensors [--simulate] [--page-size N] [--http PORT [--ws] [--bind ADDR] [--allow-host NAME]...\n"
              "                    [--timeout-ms N] [--keepalive-ms N] [--reclaim-grace-ms N]\n"
              "                    [--tls-cert FILE --tls-key FILE]]\n"
              "  MCP server over stdio (one JSON-RPC message per line), or over HTTP with --http.\n"
              "  --simulate         use the deterministic sensor model instead of /sys and /proc\n"
              "  --page-size N      entries per page of tools/list, resources/list, ... (default 16)\n",
              serve::kHttpUsage});
}

app::PlatformStats::Http g_http_figures;  // read once per device_stats call

void linux_stats(app::PlatformStats* out) {
  const serve::Figures f = serve::figures();
  out->platform = "linux";
  out->messages = f.messages;
  out->arena_high_water = f.arena_high_water;
  out->arena_size = f.arena_size;
  if (f.http != nullptr) {
    g_http_figures = app::PlatformStats::Http{f.connections_in_use, f.connections, f.sessions_in_use, f.sessions, *f.http};
    out->http = &g_http_figures;
  }
}

}  // namespace

// At namespace scope: no function-local statics (their guards pull in the C++ runtime's locking).
emcp::mcp::Server g_server(app::kServerInfo, emcp::posix::platform());
// MCP tasks (emcp/mcp/tasks.h): sample_sensor runs as a task for a client that allows it. Only
// on Linux: the firmware images link none of it (their flash ceilings).
emcp::mcp::StaticTaskStore<4, 512> g_tasks;

int main(int argc, char** argv) {
  serve::HttpConfig http;
  http.program = "emcp-sensors";
  for (int i = 1; i < argc; ++i) {
    const int net = serve::parse_http_option(argc, argv, &i, &http);
    if (net < 0) return 2;
    if (net > 0) continue;
    if (strcmp(argv[i], "--simulate") == 0) {
      sensors::force_simulation(true);
    } else if (strcmp(argv[i], "--page-size") == 0 && i + 1 < argc) {
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
  if (!serve::check_http_options(http)) return 2;
  app::init(g_server, &emcp::posix::now_ms);
  g_server.set_tasks(g_tasks);
  app::set_stats_source(&linux_stats);
  serve::Loop loop;
  loop.tick = &app::tick;
  loop.next_tick_ms = &app::next_tick_ms;
  http.scopes = app::kScopes;
  http.required_scope = app::kRequiredScope;
  if (http.enabled) return serve::http(g_server, http, loop);
  serve::say({EMCP_LEGACY_ERA ? EMCP_MODERN_ERA ? "emcp-sensors: serving MCP on stdio (protocol revisions 2024-11-05 to 2026-07-28)\n"
                                                : "emcp-sensors: serving MCP on stdio (protocol revisions 2024-11-05 to 2025-11-25)\n"
                              : "emcp-sensors: serving MCP on stdio (protocol revision 2026-07-28)\n"});
  return serve::stdio(g_server, "emcp-sensors", loop);
}
