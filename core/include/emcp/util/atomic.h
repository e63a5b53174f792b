// emcp/util/atomic.h - a 32-bit word shared between contexts (threads, tasks, interrupts), on
// the compiler's __atomic builtins: the toolchains emcp supports for RISC-V have no C++ standard
// library (no <atomic>), and GCC and Clang compile these alike (ThreadSanitizer sees them).
// load/store are single instructions everywhere; compare_exchange and fetch_add need atomic
// read-modify-write (EMCP_ATOMIC_RMW 1, emcp/mcp/inbox.h): without it (Cortex-M0) they would
// call libatomic, which firmware does not link, so code uses them only where EMCP_ATOMIC_RMW.
//
// Context: any.
#ifndef EMCP_UTIL_ATOMIC_H
#define EMCP_UTIL_ATOMIC_H

#include <stdint.h>

#include "emcp/opt.h"

/// 1 where the CPU has atomic compare-and-swap on 32-bit words (lock-free inbox); 0 where it has
/// not (Cortex-M0/M0+: the inbox takes Platform::critical_enter/exit).
#ifndef EMCP_ATOMIC_RMW
#if defined(__GCC_ATOMIC_INT_LOCK_FREE) && __GCC_ATOMIC_INT_LOCK_FREE == 2
#define EMCP_ATOMIC_RMW 1
#else
#define EMCP_ATOMIC_RMW 0
#endif
#endif

EMCP_NS_BEGIN

class Atomic32 {
 public:
  enum Order : int { kRelaxed = __ATOMIC_RELAXED, kAcquire = __ATOMIC_ACQUIRE, kRelease = __ATOMIC_RELEASE };
  constexpr Atomic32() = default;
  constexpr explicit Atomic32(uint32_t v) : v_(v) {}
  Atomic32(const Atomic32&) = delete;
  Atomic32& operator=(const Atomic32&) = delete;

  uint32_t load(Order o = kRelaxed) const { return __atomic_load_n(&v_, o); }
  void store(uint32_t v, Order o = kRelaxed) { __atomic_store_n(&v_, v, o); }
#if EMCP_ATOMIC_RMW
  /// Sets `desired` when the value is *expected (true); else *expected gets the value (false).
  bool compare_exchange(uint32_t* expected, uint32_t desired) {
    return __atomic_compare_exchange_n(&v_, expected, desired, true, __ATOMIC_RELAXED, __ATOMIC_RELAXED);
  }
  void add(uint32_t n) { (void)__atomic_fetch_add(&v_, n, __ATOMIC_RELAXED); }
#endif

 private:
  uint32_t v_ = 0;
};

EMCP_NS_END

#endif  // EMCP_UTIL_ATOMIC_H
