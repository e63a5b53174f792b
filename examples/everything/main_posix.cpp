// emcp-everything on Linux: every fixture the official MCP conformance suite's server scenarios
// expect (@modelcontextprotocol/conformance, the application in everything.cpp), served by emcp.
//
//   emcp-everything --http PORT [--ws] [--bind ADDR]     Streamable HTTP on /mcp (+ /sse, /ws)
//   emcp-everything --stdio                              one JSON-RPC message per line
#include <string.h>

#include "emcp/posix/platform.h"
#include "everything.h"
#include "emcp/posix/serve.h"

namespace serve = emcp::posix::serve;

namespace {

void usage() {
  serve::say({"usage: emcp-everything (--stdio | --http PORT [--ws] [--bind ADDR])\n"
              "  The MCP conformance suite's reference fixtures, served by emcp.\n"
              "  --stdio       one JSON-RPC message per line on stdin/stdout\n"
              "  --http PORT   Streamable HTTP on /mcp, HTTP+SSE on /sse (PORT 0: any free port)\n"
              "  --ws          also WebSocket on /ws\n"
              "  --bind ADDR   address to listen on (default 127.0.0.1)\n"});
}

}  // namespace

emcp::mcp::Server g_everything(everything::kInfo, emcp::posix::platform());

int main(int argc, char** argv) {
  serve::HttpConfig http;
  http.program = "emcp-everything";
  bool use_http = false, use_stdio = false;
  for (int i = 1; i < argc; ++i) {
    if (strcmp(argv[i], "--http") == 0 && i + 1 < argc) {
      if (!serve::parse_port(argv[++i], &http.port)) {
        serve::say({"emcp-everything: --http needs a port 0..65535\n"});
        return 2;
      }
      use_http = true;
    } else if (strcmp(argv[i], "--stdio") == 0) {
      use_stdio = true;
    } else if (strcmp(argv[i], "--ws") == 0) {
      http.websocket = true;
    } else if (strcmp(argv[i], "--bind") == 0 && i + 1 < argc) {
      http.address = argv[++i];
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  if (use_http == use_stdio) {
    usage();
    return 2;
  }
  everything::install(g_everything);
  serve::Loop loop;
  loop.tick = &everything::tick;
  loop.next_tick_ms = &everything::next_tick_ms;
  if (use_http) return serve::http(g_everything, http, loop);
  return serve::stdio(g_everything, "emcp-everything", loop);
}
