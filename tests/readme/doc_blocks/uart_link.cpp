// docs/porting.md: the stdio transport over a UART.
#include <stddef.h>
#include <stdint.h>

#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"

emcp::Status uart_flush(void* ctx, const char* data, size_t n);  // sends all n bytes

// The server as a parameter: a global named `server` would be shadowed by the transport's
// constructor parameter (-Wshadow).
void doc_block(emcp::mcp::Server& server, const uint8_t* bytes, size_t n) {
// @BLOCK@
}
