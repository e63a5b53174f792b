// emcp/posix/fd.h - moving bytes through POSIX file descriptors (stdio, pipes, serial ports).
//
// The posix port only moves bytes; all protocol work stays in core/.
//
// Context: the thread that owns the descriptor. Blocking or non-blocking descriptors both work.
//
// Example (stdout as the sink of a JSON writer, through a 256-byte buffer):
//   int fd = 1;
//   char buf[256];
//   emcp::json::FlushingSink out(buf, sizeof buf, &emcp::posix::fd_flush, &fd);
#ifndef EMCP_POSIX_FD_H
#define EMCP_POSIX_FD_H

#include <stddef.h>

#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace posix {

/// Writes all `n` bytes to `fd`, retrying after EINTR, partial writes and (by polling) EAGAIN.
/// Returns kOk, kClosed (the reader went away: EPIPE) or kIoError.
Status write_all(int fd, const void* data, size_t n);

/// Reads up to `cap` bytes into `buf`; `*got` is the count. Returns kOk (with *got > 0),
/// kClosed at end of file, kWouldBlock when a non-blocking descriptor has nothing, or kIoError.
/// Retries after EINTR.
Status read_some(int fd, void* buf, size_t cap, size_t* got);

/// json::FlushingSink callback: `ctx` points to an int holding the descriptor.
Status fd_flush(void* ctx, const char* data, size_t n);

}  // namespace posix
EMCP_NS_END

#endif  // EMCP_POSIX_FD_H
