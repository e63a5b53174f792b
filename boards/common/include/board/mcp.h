// board/mcp.h - an MCP server on the board's UART in one object: the server, the UART's
// transport (a per-message arena, a small output buffer flushed to the UART) and the loop.
//
//   constexpr emcp::mcp::ServerInfo kInfo = {"minimal", "1.0"};
//   emcp::board::UartMcp<2048> g_mcp(kInfo, kTools);   // static: no heap, nothing on the stack
//   int main() { g_mcp.run(); }                         // emcp::board::init(), banner, serve forever
//
// What it wires is the explicit form (docs/porting.md, examples with their own main loop):
// mcp::Server with emcp::board::platform(), StaticLineTransport<ArenaSize, OutSize> writing through
// emcp::board::uart_flush, emcp::board::init() and emcp::board::serve() (board/serve.h); the same shape as
// posix::StdioMcp (emcp/posix/mcp.h), over transport::StreamMcp. The server's other features are
// set on server() before run(): set_resources(), set_prompts()...
//
// Context: the object is a static (its arena and buffers are its members); run() from main().
#ifndef EMCP_BOARD_MCP_H
#define EMCP_BOARD_MCP_H

#include <stddef.h>

#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"

namespace emcp {
namespace board {

/// ArenaSize: bytes of the per-message arena (EMCP_ARENA_SIZE by default: what one request's
/// parsed tree may take); OutSize: the output buffer the answers stream through to the UART.
template <size_t ArenaSize = EMCP_ARENA_SIZE, size_t OutSize = 64>
class UartMcp : public emcp::transport::StreamMcp<ArenaSize, OutSize> {
  using Base = emcp::transport::StreamMcp<ArenaSize, OutSize>;

 public:
  explicit UartMcp(const emcp::mcp::ServerInfo& info) : Base(info, platform(), &uart_flush, nullptr) {}
  template <size_t N>
  UartMcp(const emcp::mcp::ServerInfo& info, const emcp::mcp::Tool (&tools)[N]) : UartMcp(info) {
    this->server().set_tools(tools);
  }
  UartMcp(const emcp::mcp::ServerInfo&&) = delete;  // a temporary would not outlive the server
  template <size_t N>
  UartMcp(const emcp::mcp::ServerInfo&&, const emcp::mcp::Tool (&)[N]) = delete;

  /// Initializes the board (clock, UART), prints the banner line ("<server name> on <board>:
  /// MCP on this UART...") and serves forever.
  [[noreturn]] void run() { run(Loop{}); }
  /// The same, running `loop.tick` (the application's periodic work) every round.
  [[noreturn]] void run(const Loop& loop) {
    init();
    serve_uart(this->server(), this->link(), this->server().info().name, loop);
  }
};

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_MCP_H
