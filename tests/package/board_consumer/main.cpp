// The consumer's server as firmware: the same three tools (../consumer/tools.h) on the board's
// UART, with the project's emcp_config.h.
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "tools.h"

emcp::mcp::Server g_server(kInfo, emcp::board::platform());
emcp::transport::StaticLineTransport<2048, 64> g_link(g_server, &emcp::board::uart_flush, nullptr);

int main() {
  emcp::board::init();
  g_server.set_tools(kTools);
  emcp::board::serve_uart(g_server, g_link, "consumer", emcp::board::Loop{});
}
