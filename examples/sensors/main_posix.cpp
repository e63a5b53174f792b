// emcp-sensors on Linux: the sensors example served over stdio.
//
//   emcp-sensors [--simulate] [--page-size N]
//
// stdout carries only JSON-RPC; diagnostics go to stderr. The process ends at the end of stdin.
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "app.h"
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

void usage() {
  fprintf(stderr,
          "usage: emcp-sensors [--simulate] [--page-size N]\n"
          "  MCP server over stdio (one JSON-RPC message per line).\n"
          "  --simulate      use the deterministic sensor model instead of /sys and /proc\n"
          "  --page-size N   entries per page of tools/list, resources/list, ... (default %d)\n",
          EMCP_PAGE_SIZE);
}

}  // namespace

int main(int argc, char** argv) {
  static emcp::mcp::Server server(kInfo, &emcp::posix::now_ms);
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--simulate") == 0) {
      sensors::force_simulation(true);
    } else if (strcmp(argv[i], "--page-size") == 0 && i + 1 < argc) {
      const long n = strtol(argv[++i], nullptr, 10);
      if (n < 1 || n > 1000) {
        fprintf(stderr, "emcp-sensors: --page-size must be 1..1000\n");
        return 2;
      }
      server.set_page_size(static_cast<uint16_t>(n));
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  static emcp::transport::StaticStdioTransport<> stdio(server, &emcp::posix::fd_flush, &g_stdout);
  app::init(server, &emcp::posix::now_ms);
  fprintf(stderr, "emcp-sensors: serving MCP on stdio (protocol revisions 2024-11-05 to 2025-11-25)\n");

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
        if (stdio.feed(buf, n) != emcp::Status::kOk) {
          fprintf(stderr, "emcp-sensors: stdout failed: %s\n", emcp::status_str(stdio.status()));
          return 1;
        }
      } else if (s != emcp::Status::kWouldBlock) {
        (void)stdio.finish();
        break;
      }
    }
    app::tick();
    server.poll();
  }
  fprintf(stderr, "emcp-sensors: end of input after %llu messages (%llu over-long lines)\n",
          static_cast<unsigned long long>(stdio.messages()),
          static_cast<unsigned long long>(stdio.too_long()));
  return 0;
}
