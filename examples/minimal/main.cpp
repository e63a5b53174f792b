// The smallest emcp server: one tool, over stdio (on a board, over its UART: main_board.cpp).
#include "emcp/posix/mcp.h"

using namespace emcp::mcp;

int read_decicelsius() { return 215; }  // your sensor driver here (tenths of a degree)

void read_temperature(ToolCall& call) {
  call.text({"Temperature: ", TextPiece::fixed(read_decicelsius(), 1), " \xC2\xB0" "C"});
}

constexpr Tool kTools[] = {
    Tool::make("read_temperature", &read_temperature).describe("Reads the board's temperature").read_only(),
};
constexpr ServerInfo kInfo = {"minimal", "1.0"};
emcp::posix::StdioMcp<2048> g_mcp(kInfo, kTools);  // the server, its stdio transport, the loop

int main() { return g_mcp.run(); }
