#include "emcp/posix/platform.h"

#include <errno.h>
#include <sys/random.h>
#include <sys/uio.h>
#include <time.h>
#include <unistd.h>

EMCP_NS_BEGIN
namespace posix {

uint64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

bool random_bytes(void* buf, size_t n) {
  auto* p = static_cast<uint8_t*>(buf);
  while (n != 0) {
    const ssize_t k = getrandom(p, n, 0);
    if (k < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += k;
    n -= static_cast<size_t>(k);
  }
  return true;
}

void log_line(const char* text, size_t n) {
  iovec parts[2] = {{const_cast<char*>(text), n}, {const_cast<char*>("\n"), 1}};
  (void)::writev(2, parts, 2);
}

uint64_t unix_time_s() {
  timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  return ts.tv_sec > 0 ? static_cast<uint64_t>(ts.tv_sec) : 0;
}

const Platform& platform() {
  static constexpr Platform kPosix{&now_ms, &random_bytes, &log_line, &unix_time_s};
  return kPosix;
}

}  // namespace posix
EMCP_NS_END
