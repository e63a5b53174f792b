// emcp/posix/platform.h - the POSIX platform (emcp/platform.h): a monotonic clock, the
// kernel's random bytes, diagnostics on stderr, and an eventfd that wakes the loop when another
// thread posts to the server's inbox (emcp/mcp/inbox.h).
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

/// Platform::wake: makes the loop's poll() return (an eventfd it watches, wake_fd()). Any
/// thread, and a signal handler: one write(2), nothing else.
void wake();
/// The eventfd wake() writes to (created at the first call of either; -1 if the kernel refused
/// one, and then wake() does nothing). A loop polls it with its own descriptors.
int wake_fd();
/// Empties the eventfd after poll() saw it readable (the loop, before it runs the server's
/// poll(), so that a wake during that poll() is seen by the next poll(2)).
void clear_wake();

/// now_ms, random_bytes, log_line, unix_time_s and wake as one Platform.
const Platform& platform();

}  // namespace posix
EMCP_NS_END

#endif
