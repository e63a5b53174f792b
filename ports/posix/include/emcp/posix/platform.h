// emcp/posix/platform.h - the POSIX platform (emcp/platform.h): a monotonic clock, the
// kernel's random bytes, diagnostics on stderr.
//
// Context: any thread.
//
// Example:
//   emcp::mcp::Server server(kInfo, emcp::posix::platform());
#ifndef EMCP_POSIX_PLATFORM_H
#define EMCP_POSIX_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/platform.h"

EMCP_NS_BEGIN
namespace posix {

/// Milliseconds of a monotonic clock (CLOCK_MONOTONIC): for timeouts, never for dates.
uint64_t now_ms();

/// Fills `buf` with `n` bytes from the kernel's cryptographic random source (getrandom(2)).
/// False if the source fails (never falls back to a weak generator).
bool random_bytes(void* buf, size_t n);

/// Writes one line of diagnostics to stderr (the text, then a newline).
void log_line(const char* text, size_t n);
/// The system's wall clock (CLOCK_REALTIME), seconds since 1970.
uint64_t unix_time_s();

/// now_ms, random_bytes, log_line and unix_time_s as one Platform.
const Platform& platform();

}  // namespace posix
EMCP_NS_END

#endif
