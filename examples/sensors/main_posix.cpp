// emcp-sensors on Linux: the sensors example served over stdio.
//
//   emcp-sensors [--simulate] [--page-size N]
//
// stdout carries only JSON-RPC; diagnostics go to stderr. The process ends at the end of stdin.
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "app.h"
#include "emcp/json/number.h"
#include "emcp/mcp/server.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/platform.h"
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
  say({"usage: emcp-sensors [--simulate] [--page-size N]\n"
       "  MCP server over stdio (one JSON-RPC message per line).\n"
       "  --simulate      use the deterministic sensor model instead of /sys and /proc\n"
       "  --page-size N   entries per page of tools/list, resources/list, ... (default 16)\n"});
}

}  // namespace

// Objects live at namespace scope (no function-local statics: their guards pull in the C++
// runtime's locking).
emcp::mcp::Server g_server(kInfo, &emcp::posix::now_ms);
emcp::transport::StaticStdioTransport<> g_stdio(g_server, &emcp::posix::fd_flush, &g_stdout);

int main(int argc, char** argv) {
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--simulate") == 0) {
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
