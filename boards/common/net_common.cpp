// The board-neutral part of board/net.h, for every board with a network.
#include "board/board.h"
#include "board/net.h"
#include "emcp/json/number.h"
#include "emcp/util/atomic.h"

namespace emcp {
namespace board {

namespace {
uint64_t g_unix_base = 0;  // wall-clock seconds at now_ms() == 0 (0: not set)
}  // namespace

void set_unix_time(uint64_t seconds_now) {
  const uint64_t up = now_ms() / 1000u;
  g_unix_base = seconds_now > up ? seconds_now - up : 0;
}

uint64_t unix_time_s() { return g_unix_base == 0 ? 0 : g_unix_base + now_ms() / 1000u; }

uint64_t semihosting_time() {
#if defined(__arm__)
  // SYS_TIME (0x11): r0 = the operation, r1 = no parameter block; the seconds come back in r0.
  register uint32_t op __asm__("r0") = 0x11;
  register uint32_t arg __asm__("r1") = 0;
  __asm__ volatile("bkpt #0xAB" : "+r"(op) : "r"(arg) : "memory");
  return op;
#else
  return 0;
#endif
}

const emcp::Platform& net_platform() {
  static constexpr emcp::Platform kNet{&now_ms, &net_random, nullptr, &unix_time_s, &wake,
                                       EMCP_ATOMIC_RMW ? nullptr : &critical_enter,
                                       EMCP_ATOMIC_RMW ? nullptr : &critical_exit};
  return kNet;
}

unsigned format_ipv4(const Ipv4& ip, char* out) {
  unsigned n = 0;
  for (unsigned i = 0; i < 4; ++i) {
    if (i != 0) out[n++] = '.';
    n += static_cast<unsigned>(emcp::json::format_uint64(ip.octets[i], out + n));
  }
  out[n] = '\0';
  return n;
}

}  // namespace board
}  // namespace emcp
