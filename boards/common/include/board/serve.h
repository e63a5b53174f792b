// board/serve.h - the firmware's main loop: an MCP server on the board's UART.
//
// Prints a banner line (not JSON-RPC: the host bridge waits for it and reports it), then feeds
// every received byte to the stdio transport and runs the application's periodic work and the
// server's timeouts, sleeping until the next interrupt when there is nothing to do.
#ifndef EMCP_BOARD_SERVE_H
#define EMCP_BOARD_SERVE_H

#include <stdint.h>

#include "emcp/mcp/server.h"
#include "emcp/transport/stdio.h"

namespace board {

/// json::FlushingSink callback writing to the UART (ctx unused).
emcp::Status uart_flush(void* ctx, const char* data, size_t n);

struct Loop {
  void (*tick)() = nullptr;  ///< the application's periodic work (may be nullptr)
};

/// Serves forever.
[[noreturn]] void serve_uart(emcp::mcp::Server& server, emcp::transport::StdioTransport& link,
                             const char* program, const Loop& loop);

/// The transport being served (for diagnostics), or nullptr before serve_uart().
emcp::transport::StdioTransport* served_link();

}  // namespace board

#endif  // EMCP_BOARD_SERVE_H
