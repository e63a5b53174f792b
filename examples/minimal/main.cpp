// The smallest emcp server: one tool, over stdio (on a board, over its UART).
#include <unistd.h>

#include "emcp/mcp/server.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/platform.h"
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
int g_out = 1;  // stdout: the port's write callback gets it
Server g_server(kInfo, emcp::posix::platform());  // clock, random source, log
emcp::transport::StaticStdioTransport<2048> g_link(g_server, &emcp::posix::fd_flush, &g_out);

int main() {
  g_server.set_tools(kTools);
  char buf[256];
  for (ssize_t n; (n = read(0, buf, sizeof buf)) > 0;) (void)g_link.feed(buf, static_cast<size_t>(n));
  return 0;
}
