// The smallest emcp server, over the network: the same tool as main.cpp, served by
// `emcp-minimal-http --http 8080` (Streamable HTTP on /mcp, HTTP+SSE on /sse; --ws, --tls-cert
// and --tls-key, --auth-token: see --help), or over stdio without --http.
#include "emcp/posix/http_mcp.h"

using namespace emcp::mcp;

int read_decicelsius() { return 215; }  // your sensor driver here (tenths of a degree)

void read_temperature(ToolCall& call) {
  call.text({"Temperature: ", TextPiece::fixed(read_decicelsius(), 1), " \xC2\xB0" "C"});
}

constexpr Tool kTools[] = {
    Tool::make("read_temperature", &read_temperature).describe("Reads the board's temperature").read_only(),
};
constexpr ServerInfo kInfo = {"minimal", "1.0"};
emcp::posix::HttpMcp g_mcp(kInfo, kTools);  // the server and the command line that serves it

int main(int argc, char** argv) { return g_mcp.run(argc, argv); }
