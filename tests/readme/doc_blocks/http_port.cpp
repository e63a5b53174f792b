// docs/porting.md: the network side of the HTTP engine, as a port drives it.
#include <stddef.h>
#include <stdint.h>

#include "emcp/transport/http_server.h"

// The server and options as parameters: a global named `server` would be shadowed by the
// engine's constructor parameter (-Wshadow).
void doc_block(emcp::mcp::Server& server, const emcp::transport::HttpOptions& options,
               const emcp::transport::PeerAddress& peer, const uint8_t* data, size_t n) {
// @BLOCK@
}
