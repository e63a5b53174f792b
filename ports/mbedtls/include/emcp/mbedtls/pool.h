// emcp/mbedtls/pool.h - the fixed memory Mbed TLS allocates from on the boards: a static
// buffer the application declares, never malloc.
//
// Mbed TLS asks for memory through its platform calloc/free (MBEDTLS_PLATFORM_MEMORY, set to
// emcp_mbedtls_calloc/emcp_mbedtls_free by emcp's board configuration,
// ports/mbedtls/config/emcp_mbedtls_config.h): a connection's record buffers while it is open,
// the handshake's state while it runs, the parsed certificate and key for as long as they are
// loaded. The pool is a first-fit list of blocks with neighbours merged when freed; 8-byte
// aligned, 8 bytes of header a block. The search starts at the first free block, and a free
// block's bytes are kept zero (cleared when freed: they may have held keys), so an allocation
// clears nothing: a TLS handshake makes thousands (bench/README.md, section 6). When it cannot
// serve a request, Mbed TLS gets nullptr and fails that operation with its ALLOC_FAILED code (a
// connection: refused; the others go on).
//
// The figures (in use, the most ever in use, failures) go to docs/footprint.md and the
// device_stats tool; mark() and peak_since_mark() measure one operation (a handshake).
//
// Context: the loop that runs TLS (Mbed TLS is not called from anywhere else).
//
// Example:
//   alignas(8) static uint8_t tls_memory[40 * 1024];
//   emcp::mbedtls::pool_init(tls_memory, sizeof tls_memory);   // before TlsContext::init()
#ifndef EMCP_MBEDTLS_POOL_H
#define EMCP_MBEDTLS_POOL_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/opt.h"
#include "emcp/platform.h"

EMCP_NS_BEGIN
namespace mbedtls {

struct PoolStats {
  size_t size = 0;          ///< the buffer
  size_t in_use = 0;        ///< bytes of blocks handed out now, headers included
  size_t high_water = 0;    ///< the most ever in use
  uint32_t blocks = 0;      ///< blocks handed out now
  uint32_t failures = 0;    ///< requests that did not fit
};

/// Hands `buf` (8-byte aligned, at least 64 bytes) to the pool; what was allocated before is
/// forgotten. Without it every request fails.
void pool_init(void* buf, size_t n);
const PoolStats& pool_stats();
/// Starts a measurement: peak_since_mark() is the most in use since, less what was in use now.
void pool_mark();
size_t pool_peak_since_mark();

/// Mbed TLS's clock on the boards (session tickets' ages): the Platform's wall clock when it
/// knows one, else its monotonic clock (TlsContext::init() sets it).
void pool_set_clock(const Platform& platform);
uint64_t pool_clock_s();

/// The allocator itself (Mbed TLS's platform calloc and free on the boards).
void* pool_calloc(size_t count, size_t size);
void pool_free(void* p);

}  // namespace mbedtls
EMCP_NS_END

#endif  // EMCP_MBEDTLS_POOL_H
