// emcp-sensors on an ESP32: the same main as the Cortex-M boards (examples/sensors/
// main_board.cpp), started as a FreeRTOS task with a known stack size.
#include "app.h"
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/stdio.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"

extern "C" void emcp_board_set_stack_size(uint32_t bytes);

namespace {

constexpr emcp::mcp::ServerInfo kInfo = [] {
  emcp::mcp::ServerInfo i;
  i.name = "emcp-sensors";
  i.version = "0.1.0";
  i.title = "emcp sensors demo";
  return i;
}();
constexpr uint32_t kStack = 8192;

emcp::mcp::Server g_server(kInfo, &board::now_ms);
emcp::transport::StaticStdioTransport<> g_link(g_server, &board::uart_flush, nullptr);

void board_stats(app::PlatformStats* out) {
  out->platform = board::name();
  out->messages = g_link.messages();
  out->arena_high_water = g_link.arena().high_water();
  out->arena_size = EMCP_ARENA_SIZE;
  out->stack_high_water = board::stack_high_water();
  out->stack_size = board::stack_size();
}

void serve(void*) {
  board::init();
  app::init(g_server, &board::now_ms);
  app::set_stats_source(&board_stats);
  g_server.set_page_size(5);
  board::Loop loop;
  loop.tick = &app::tick;
  board::serve_uart(g_server, g_link, "emcp-sensors", loop);
}

}  // namespace

extern "C" void app_main() {
  emcp_board_set_stack_size(kStack);
  xTaskCreate(&serve, "emcp", kStack / sizeof(StackType_t), nullptr, 5, nullptr);
}
