// emcp/crypto/sha1.h - SHA-1 of one message, portable and without dependencies.
//
// What it is for: the WebSocket handshake (RFC 6455 4.2.2: Sec-WebSocket-Accept is the base64 of
// the SHA-1 of the client's key and a fixed GUID), where SHA-1 is a fingerprint, not a security
// function. Do not use it for anything that needs collision resistance (SHA-1 has none left):
// emcp/crypto/sha256.h is there for that.
//
// Why emcp has its own: a board without TLS would otherwise link Mbed TLS's SHA-1 for this one
// hash, whose compression function is unrolled (3.7 KB on the Cortex-M3); this one is a loop of
// 80 rounds, a few hundred bytes. The boards' Mbed TLS has no SHA-1 of its own (a TLS client's
// has, for certificates); on a system whose Mbed TLS has it (the host, ESP-IDF with its hardware
// hash) emcp::mbedtls::sha1 (emcp/mbedtls/sha1.h) gives the same bytes.
//
// Standard: FIPS 180-4 (messages of up to 2^61 - 1 bytes). Tested against the FIPS 180 examples,
// RFC 6455's handshake example, and at test time against Mbed TLS and openssl (Sha1.* in
// tests/unit/crypto_sha256_test.cpp).
//
// Memory: no heap, no state, no table; 64 bytes of message schedule and a 64-byte block on the
// stack. Input of any alignment; the output written byte by byte; any byte order.
//
// Context: any task, or an ISR. Cannot fail (a null pointer with a non-zero length is a
// programmer error: EMCP_ASSERT).
//
// Example:
//   options.sha1 = &emcp::crypto::sha1;   // emcp::transport::HttpOptions (WebSocket)
#ifndef EMCP_CRYPTO_SHA1_H
#define EMCP_CRYPTO_SHA1_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN
namespace crypto {

/// Bytes of a SHA-1 digest.
constexpr size_t kSha1Size = 20;

/// SHA-1 of `n` bytes at `data` into `out` (matches emcp::ws::Sha1Fn).
void sha1(const void* data, size_t n, uint8_t out[kSha1Size]);

}  // namespace crypto
EMCP_NS_END

#endif  // EMCP_CRYPTO_SHA1_H
