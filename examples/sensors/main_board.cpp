// emcp-sensors as firmware: the same application (app.cpp) over the board's UART, with the
// deterministic sensor model (sensors_board.cpp) and the SysTick clock.
#include "app.h"
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/stdio.h"

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

void board_stats(app::PlatformStats* out);

}  // namespace

emcp::mcp::Server g_server(kInfo, &board::now_ms);
emcp::transport::StaticStdioTransport<> g_link(g_server, &board::uart_flush, nullptr);

namespace {
void board_stats(app::PlatformStats* out) {
  out->platform = board::name();
  out->messages = g_link.messages();
  out->arena_high_water = g_link.arena().high_water();
  out->arena_size = EMCP_ARENA_SIZE;
  out->stack_high_water = board::stack_high_water();
  out->stack_size = board::stack_size();
  out->input_dropped = board::uart_dropped();
}
}  // namespace

int main() {
  board::init();
  app::init(g_server, &board::now_ms);
  app::set_stats_source(&board_stats);
  // No command line on a board: lists come in pages of 5 (clients follow nextCursor).
  g_server.set_page_size(5);
  board::Loop loop;
  loop.tick = &app::tick;
  board::serve_uart(g_server, g_link, "emcp-sensors", loop);
}
