// Mbed TLS's configuration for emcp's board builds (MBEDTLS_CONFIG_FILE): only what the
// firmware uses, no heap, no file system, no standard output. The host links the system's
// libmbedcrypto instead (libmbedtls-dev, Debian's defaults).
#ifndef EMCP_MBEDTLS_CONFIG_H
#define EMCP_MBEDTLS_CONFIG_H

// SHA-1: the WebSocket handshake's Sec-WebSocket-Accept (RFC 6455), not a security function.
#define MBEDTLS_SHA1_C

#include "mbedtls/check_config.h"

#endif
