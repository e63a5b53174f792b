// The smallest emcp server on a board with a network: the same tool as main_board.cpp, served on
// the UART and over HTTP (Streamable HTTP on /mcp, HTTP+SSE on /sse, port 80) at once.
#include "board/net_mcp.h"

using namespace emcp::mcp;

int read_decicelsius() { return 215; }  // your sensor driver here (tenths of a degree)

void read_temperature(ToolCall& call) {
  call.text({"Temperature: ", TextPiece::fixed(read_decicelsius(), 1), " \xC2\xB0" "C"});
}

constexpr Tool kTools[] = {
    Tool::make("read_temperature", &read_temperature).describe("Reads the board's temperature").read_only(),
};
constexpr ServerInfo kInfo = {"minimal", "1.0"};
emcp::board::NetMcp<> g_mcp(kInfo, kTools);  // the server, the UART, lwIP and the HTTP engine

int main() { g_mcp.run(); }
