// The smallest emcp server as firmware: one tool, over the board's UART (boards/).
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/stdio.h"

using namespace emcp::mcp;

int read_decicelsius() { return 215; }  // your sensor driver here (tenths of a degree)

void read_temperature(ToolCall& call) {
  call.text({"Temperature: ", TextPiece::fixed(read_decicelsius(), 1), " \xC2\xB0" "C"});
}

constexpr Tool kTools[] = {
    Tool::make("read_temperature", &read_temperature).describe("Reads the board's temperature").read_only(),
};
constexpr ServerInfo kInfo = {"minimal", "1.0"};
Server g_server(kInfo, board::platform());
emcp::transport::StaticStdioTransport<2048, 64> g_link(g_server, &board::uart_flush, nullptr);

int main() {
  board::init();
  g_server.set_tools(kTools);
  board::serve_uart(g_server, g_link, "emcp-minimal", board::Loop{});
}
