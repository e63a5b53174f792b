// emcp-sensors as firmware: the same application (app.cpp) over the board's UART, with the
// deterministic sensor model (sensors_board.cpp) and the board's millisecond clock.
#include "app.h"
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"

emcp::mcp::Server g_server(app::kServerInfo, emcp::board::platform());
emcp::transport::StaticLineTransport<> g_link(g_server, &emcp::board::uart_flush, nullptr);

namespace {
void board_stats(app::PlatformStats* out) {
  out->platform = emcp::board::name();
  out->messages = g_link.messages();
  out->arena_high_water = g_link.arena().high_water();
  out->arena_size = EMCP_ARENA_SIZE;
  out->stack_high_water = emcp::board::stack_high_water();
  out->stack_size = emcp::board::stack_size();
  out->input_dropped = emcp::board::uart_dropped();
  out->input_held = emcp::board::uart_held();
}
}  // namespace

/// The firmware; never returns. main() on the Cortex-M boards, a FreeRTOS task on ESP-IDF
/// (boards/esp32/examples/sensors builds this file with EMCP_SENSORS_NO_MAIN).
void sensors_firmware() {
  emcp::board::init();
  app::init(g_server, &emcp::board::now_ms);
  app::set_stats_source(&board_stats);
  // No command line on a board: lists come in pages of 5 (clients follow nextCursor).
  g_server.set_page_size(5);
  emcp::board::Loop loop;
  loop.tick = &app::tick;
  emcp::board::serve_uart(g_server, g_link, "emcp-sensors", loop);
}

#ifndef EMCP_SENSORS_NO_MAIN
int main() { sensors_firmware(); }
#endif
