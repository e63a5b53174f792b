// board/serve.h - the firmware's main loop: an MCP server on the board's UART (and whatever
// else a Service adds: board/serve_net.h's HTTP over lwIP).
//
// Prints a banner line (not JSON-RPC: the host bridge waits for it and reports it), then feeds
// every received byte to the stdio transport and runs the application's periodic work and the
// server's timeouts, sleeping until the next interrupt when there is nothing to do.
#ifndef EMCP_BOARD_SERVE_H
#define EMCP_BOARD_SERVE_H

#include <stdint.h>

#include "emcp/loop.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"

namespace emcp {
namespace board {

/// json::FlushingSink callback writing to the UART (ctx unused).
emcp::Status uart_flush(void* ctx, const char* data, size_t n);

/// The application's periodic work (emcp/loop.h: one struct for every serving loop). `tick`
/// runs every round; the loop sleeps until the next interrupt, and the board's clock interrupts
/// every millisecond (under FreeRTOS the owner waits at most a tick), so `next_tick_ms` is met.
using Loop = emcp::Loop;

/// Something else the loop runs (a network stack and its HTTP port, board/serve_net.h).
struct Service {
  const char* banner = nullptr;       ///< added to the banner line ("; HTTP on port 80")
  void (*step)(void* ctx) = nullptr;  ///< every round, after the UART's input, before the tick
  void* ctx = nullptr;
};

/// Serves forever: the UART, and `service` when not nullptr.
[[noreturn]] void serve(emcp::mcp::Server& server, emcp::transport::LineTransport& link, const char* program,
                        const Loop& loop, const Service* service);

/// Serves forever on the UART alone.
[[noreturn]] inline void serve_uart(emcp::mcp::Server& server, emcp::transport::LineTransport& link,
                                    const char* program, const Loop& loop) {
  serve(server, link, program, loop, nullptr);
}

/// The transport being served (for diagnostics), or nullptr before serve_uart().
emcp::transport::LineTransport* served_link();

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_SERVE_H
