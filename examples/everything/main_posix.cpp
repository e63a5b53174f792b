// emcp-everything on Linux: every fixture the official MCP conformance suite's server scenarios
// expect (@modelcontextprotocol/conformance, the application in everything.cpp), served by emcp.
//
//   emcp-everything --http PORT [--ws] [--bind ADDR] [--tls-cert FILE --tls-key FILE]
//                                                        Streamable HTTP on /mcp (+ /sse, /ws)
//   emcp-everything --stdio                              one JSON-RPC message per line
#include <string.h>

#include "emcp/posix/platform.h"
#include "everything.h"
#include "emcp/posix/serve.h"

namespace serve = emcp::posix::serve;

namespace {

void usage() {
  serve::say({"usage: emcp-everything (--stdio | --http PORT [--ws] [--bind ADDR] [--tls-cert FILE --tls-key FILE] ...)\n"
              "  The MCP conformance suite's reference fixtures, served by emcp.\n"
              "  --stdio            one JSON-RPC message per line on stdin/stdout\n",
              serve::kHttpUsage});
}

}  // namespace

emcp::mcp::Server g_everything(everything::kInfo, emcp::posix::platform());

int main(int argc, char** argv) {
  serve::HttpConfig http;
  http.program = "emcp-everything";
  bool use_stdio = false;
  for (int i = 1; i < argc; ++i) {
    const int net = serve::parse_http_option(argc, argv, &i, &http);
    if (net < 0) return 2;
    if (net > 0) continue;
    if (strcmp(argv[i], "--stdio") == 0) {
      use_stdio = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage();
      return 0;
    } else {
      usage();
      return 2;
    }
  }
  if (http.enabled == use_stdio) {
    usage();
    return 2;
  }
  if (!serve::check_http_options(http)) return 2;
  everything::install(g_everything);
  serve::Loop loop;
  loop.tick = &everything::tick;
  loop.next_tick_ms = &everything::next_tick_ms;
  if (http.enabled) return serve::http(g_everything, http, loop);
  return serve::stdio(g_everything, "emcp-everything", loop);
}
