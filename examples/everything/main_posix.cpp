// emcp-everything on Linux: every fixture the official MCP conformance suite's server scenarios
// expect (@modelcontextprotocol/conformance, the application in everything.cpp), served by emcp
// through the command line of emcp::posix::HttpMcp (emcp/posix/http_mcp.h).
//
//   emcp-everything --http PORT [--ws] [--bind ADDR] [--tls-cert FILE --tls-key FILE]
//                                                        Streamable HTTP on /mcp (+ /sse, /ws)
//   emcp-everything [--stdio]                            one JSON-RPC message per line
#include "emcp/posix/http_mcp.h"
#include "everything.h"

emcp::posix::HttpMcp g_everything(everything::kInfo);

int main(int argc, char** argv) {
  const int exit_code = g_everything.parse(argc, argv);
  if (exit_code >= 0) return exit_code;
  everything::install(g_everything.server());
  emcp::Loop loop;
  loop.tick = &everything::tick;
  loop.next_tick_ms = &everything::next_tick_ms;
  return g_everything.serve(loop);
}
