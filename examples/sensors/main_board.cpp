// emcp-sensors as firmware: the same application (app.cpp) over the board's UART, with the
// deterministic sensor model (sensors_board.cpp) and the board's millisecond clock.
#include "app.h"
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"

emcp::mcp::Server g_server(app::kServerInfo, board::platform());
emcp::transport::StaticLineTransport<> g_link(g_server, &board::uart_flush, nullptr);

namespace {
void board_stats(app::PlatformStats* out) {
  out->platform = board::name();
  out->messages = g_link.messages();
  out->arena_high_water = g_link.arena().high_water();
  out->arena_size = EMCP_ARENA_SIZE;
  out->stack_high_water = board::stack_high_water();
  out->stack_size = board::stack_size();
  out->input_dropped = board::uart_dropped();
  out->input_held = board::uart_held();
}
}  // namespace

/// The firmware; never returns. main() on the Cortex-M boards, a FreeRTOS task on ESP-IDF
/// (boards/esp32/examples/sensors builds this file with EMCP_SENSORS_NO_MAIN).
void sensors_firmware() {
  board::init();
  app::init(g_server, &board::now_ms);
  app::set_stats_source(&board_stats);
  // No command line on a board: lists come in pages of 5 (clients follow nextCursor).
  g_server.set_page_size(5);
  board::Loop loop;
  loop.tick = &app::tick;
  board::serve_uart(g_server, g_link, "emcp-sensors", loop);
}

#ifndef EMCP_SENSORS_NO_MAIN
int main() { sensors_firmware(); }
#endif
