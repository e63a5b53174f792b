#include "emcp/posix/platform.h"

#include <errno.h>

#include <atomic>
#include <sys/eventfd.h>
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

namespace {
std::atomic<int> g_wake_fd{-1};
}  // namespace

int wake_fd() {
  int fd = g_wake_fd.load(std::memory_order_acquire);
  if (fd >= 0) return fd;
  // The first caller creates it; a thread that loses the race closes its own.
  const int mine = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (mine < 0) return -1;
  int expected = -1;
  if (g_wake_fd.compare_exchange_strong(expected, mine, std::memory_order_acq_rel)) return mine;
  ::close(mine);
  return expected;
}

void wake() {
  const int fd = wake_fd();
  const uint64_t one = 1;
  // EAGAIN: the counter is full, the loop is awake anyway.
  if (fd >= 0) (void)!::write(fd, &one, sizeof one);
}

void clear_wake() {
  const int fd = g_wake_fd.load(std::memory_order_acquire);
  uint64_t count;
  if (fd >= 0) (void)!::read(fd, &count, sizeof count);
}

const Platform& platform() {
  static constexpr Platform kPosix{&now_ms, &random_bytes, &log_line, &unix_time_s, &wake};
  return kPosix;
}

}  // namespace posix
EMCP_NS_END
