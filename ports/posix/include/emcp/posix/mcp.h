// emcp/posix/mcp.h - an MCP server on stdin/stdout in one object: the server (with the POSIX
// platform: clock, random bytes, log), its line transport (a per-message arena, an output buffer
// flushed to stdout) and the loop.
//
//   constexpr emcp::mcp::ServerInfo kInfo = {"minimal", "1.0"};
//   emcp::posix::StdioMcp<2048> g_mcp(kInfo, kTools);  // static: no heap, nothing on the stack
//   int main() { return g_mcp.run(); }                  // serves until the end of stdin
//
// The same shape as emcp::board::UartMcp (board/mcp.h). What it wires is the explicit form: mcp::Server
// with posix::platform(), StaticLineTransport<ArenaSize, OutSize> writing through fd_flush to
// descriptor 1, and serve_stdio() (emcp/posix/loop.h). For HTTP: emcp/posix/serve.h.
//
// Context: the object is a static; run() from main().
#ifndef EMCP_POSIX_MCP_H
#define EMCP_POSIX_MCP_H

#include <stddef.h>

#include "emcp/loop.h"
#include "emcp/mcp/server.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/loop.h"
#include "emcp/posix/platform.h"
#include "emcp/transport/line.h"

EMCP_NS_BEGIN
namespace posix {

/// ArenaSize: bytes of the per-message arena (what one request's parsed tree may take);
/// OutSize: the output buffer the answers stream through to stdout.
template <size_t ArenaSize = EMCP_ARENA_SIZE, size_t OutSize = 256>
class StdioMcp : public transport::StreamMcp<ArenaSize, OutSize> {
  using Base = transport::StreamMcp<ArenaSize, OutSize>;

 public:
  explicit StdioMcp(const mcp::ServerInfo& info) : Base(info, platform(), &fd_flush, &stdout_fd_) {}
  template <size_t N>
  StdioMcp(const mcp::ServerInfo& info, const mcp::Tool (&tools)[N]) : StdioMcp(info) {
    this->server().set_tools(tools);
  }
  StdioMcp(const mcp::ServerInfo&&) = delete;  // a temporary would not outlive the server
  template <size_t N>
  StdioMcp(const mcp::ServerInfo&&, const mcp::Tool (&)[N]) = delete;

  /// Serves stdin/stdout until the end of stdin or SIGINT/SIGTERM; the process exit code.
  int run() { return run(Loop{}); }
  /// The same, with the application's periodic work.
  int run(const Loop& loop) { return serve_stdio(this->server(), this->link(), this->server().info().name, loop); }

 private:
  static int stdout_fd_;
};

template <size_t ArenaSize, size_t OutSize>
int StdioMcp<ArenaSize, OutSize>::stdout_fd_ = 1;

}  // namespace posix
EMCP_NS_END

#endif  // EMCP_POSIX_MCP_H
