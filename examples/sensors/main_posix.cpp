// emcp-sensors on Linux: the sensors example served over stdio, or over the network, by the
// command line of emcp::posix::HttpMcp (emcp/posix/http_mcp.h) with two options of its own.
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
#include "emcp/posix/http_mcp.h"
#include "emcp/posix/platform.h"
#include "sensors.h"

namespace serve = emcp::posix::serve;

emcp::posix::HttpMcp g_mcp(app::kServerInfo);
emcp::mcp::StaticTaskStore<4, 512> g_tasks;

namespace {

constexpr char kUsage[] =
    "  --simulate         use the deterministic sensor model instead of /sys and /proc\n"
    "  --page-size N      entries per page of tools/list, resources/list, ... (default 16)\n";

// The example's own options (HttpMcp::Option).
int option(int argc, char** argv, int* i) {
  if (strcmp(argv[*i], "--simulate") == 0) {
    sensors::force_simulation(true);
    return 1;
  }
  if (strcmp(argv[*i], "--page-size") != 0) return 0;
  const long n = *i + 1 < argc ? strtol(argv[*i + 1], nullptr, 10) : 0;
  if (n < 1 || n > 1000) {
    serve::say({"emcp-sensors: --page-size must be 1..1000\n"});
    return -1;
  }
  ++*i;
  g_mcp.server().set_page_size(static_cast<uint16_t>(n));
  return 1;
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

int main(int argc, char** argv) {
  // The options first: --simulate decides what the first history sample reads.
  const int exit_code = g_mcp.parse(argc, argv, &option, kUsage);
  if (exit_code >= 0) return exit_code;
  emcp::mcp::Server& server = g_mcp.server();
  app::init(server, &emcp::posix::now_ms);
  server.set_tasks(g_tasks);
  app::set_stats_source(&linux_stats);
  g_mcp.http().scopes = app::kScopes;
  g_mcp.http().required_scope = app::kRequiredScope;
  emcp::Loop loop;
  loop.tick = &app::tick;
  loop.next_tick_ms = &app::next_tick_ms;
  return g_mcp.serve(loop);
}
