#include "emcp/posix/fd.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

EMCP_NS_BEGIN
namespace posix {

Status write_all(int fd, const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n != 0) {
    const ssize_t k = ::write(fd, p, n);
    if (k > 0) {
      p += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      pollfd pfd = {fd, POLLOUT, 0};
      (void)::poll(&pfd, 1, -1);
      continue;
    }
    return (k < 0 && errno == EPIPE) ? Status::kClosed : Status::kIoError;
  }
  return Status::kOk;
}

Status read_some(int fd, void* buf, size_t cap, size_t* got) {
  *got = 0;
  for (;;) {
    const ssize_t k = ::read(fd, buf, cap);
    if (k > 0) {
      *got = static_cast<size_t>(k);
      return Status::kOk;
    }
    if (k == 0) return Status::kClosed;
    if (errno == EINTR) continue;
    if (errno == EAGAIN || errno == EWOULDBLOCK) return Status::kWouldBlock;
    return Status::kIoError;
  }
}

Status fd_flush(void* ctx, const char* data, size_t n) {
  return write_all(*static_cast<const int*>(ctx), data, n);
}

}  // namespace posix
EMCP_NS_END
