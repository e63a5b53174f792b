#include "emcp/posix/platform.h"

#include <errno.h>
#include <sys/random.h>
#include <time.h>

EMCP_NS_BEGIN
namespace posix {

uint64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

Status random_bytes(void* buf, size_t n) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n != 0) {
    const ssize_t k = getrandom(p, n, 0);
    if (k < 0) {
      if (errno == EINTR) continue;
      return Status::kIoError;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return Status::kOk;
}

}  // namespace posix
EMCP_NS_END
