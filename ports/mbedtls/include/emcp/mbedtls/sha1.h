// emcp/mbedtls/sha1.h - SHA-1 from Mbed TLS, for the WebSocket handshake (Sec-WebSocket-Accept).
//
// Mbed TLS comes from the system: Debian's libmbedtls-dev on the host, ESP-IDF's on the ESP32
// (whose SHA-1 may run in hardware). emcp's boards built from Debian's source configure Mbed TLS's
// server without SHA-1 (a TLS client keeps it, for certificates) and take core's for WebSocket
// (emcp/crypto/sha1.h, the same bytes). Nothing of Mbed TLS is copied into this repository.
//
// Context: any thread (no state).
//
// Example:
//   options.sha1 = &emcp::mbedtls::sha1;   // emcp::transport::HttpOptions
#ifndef EMCP_MBEDTLS_SHA1_H
#define EMCP_MBEDTLS_SHA1_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN
namespace mbedtls {

/// SHA-1 of `n` bytes at `data` into `out` (matches emcp::ws::Sha1Fn).
void sha1(const void* data, size_t n, uint8_t out[20]);

}  // namespace mbedtls
EMCP_NS_END

#endif  // EMCP_MBEDTLS_SHA1_H
