// emcp/posix/platform.h - clock and random bytes on POSIX systems.
//
// Context: any thread.
#ifndef EMCP_POSIX_PLATFORM_H
#define EMCP_POSIX_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace posix {

/// Milliseconds of a monotonic clock (CLOCK_MONOTONIC): for timeouts, never for dates.
uint64_t now_ms();

/// Fills `buf` with `n` bytes from the kernel's cryptographic random source (getrandom(2)).
/// Returns kIoError if the source fails (never falls back to a weak generator).
Status random_bytes(void* buf, size_t n);

}  // namespace posix
EMCP_NS_END

#endif
