// docs/http.md: the TLS layer between a listener and the engine (ports/posix/src/serve/serve.cpp
// has the whole of it).
#include <stddef.h>
#include <stdint.h>

#include "emcp/mbedtls/tls.h"
#include "emcp/posix/http_listener.h"
#include "emcp/transport/http_server.h"

extern const emcp::Platform& platform;
extern const uint8_t cert_pem[];
extern const uint8_t key_pem[];
extern size_t cert_len, key_len;
extern emcp::posix::StaticHttpListener<8> net;

// The application's server and options as parameters: a global named `server` would be shadowed
// by the engine's constructor parameter (-Wshadow).
void doc_block(emcp::mcp::Server& server, const emcp::transport::HttpOptions& options) {
// @BLOCK@
}
