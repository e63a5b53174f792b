// emcp/platform.h - what emcp needs from the platform it runs on, in one place.
//
// A platform (ports/posix, a board, ports/template for a new one) fills one Platform and
// passes it to the mcp::Server; every engine reads it from there. The functions are checked
// when the server is built: a missing clock is a start-up failure (EMCP_ASSERT, which names
// the file and line), never a silent "no timeouts"; the HTTP engine checks the random source
// the same way when it is built. docs/porting.md walks a new platform through all of it.
//
// Context: the loop that owns the server calls the functions, but for wake and the critical
// section, which any thread, task or interrupt may call.
//
// Example:
//   bool my_random(void* out, size_t n) { return trng_read(out, n); }
//   constexpr emcp::Platform kPlatform{&board_now_ms, &my_random, &board_log};
//   emcp::mcp::Server server(kInfo, kPlatform);
#ifndef EMCP_PLATFORM_H
#define EMCP_PLATFORM_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN

struct Platform {
  /// Milliseconds from a monotonic clock (never goes back; wraps only after 2^64 ms). Required:
  /// timeouts of requests to the client, HTTP request and send timeouts, heartbeats, session
  /// expiry.
  uint64_t (*now_ms)() = nullptr;
  /// Fills `out` with `n` cryptographically random bytes; false on failure. Required by the
  /// HTTP engine (session ids must not be guessable); nullptr is fine for stdio/UART only.
  bool (*random)(void* out, size_t n) = nullptr;
  /// Optional: one line of diagnostics (no newline, not NUL-terminated), e.g. why the HTTP
  /// engine dropped a connection. nullptr: nothing is logged.
  void (*log)(const char* text, size_t n) = nullptr;
  /// Optional: wall-clock time, seconds since 1970-01-01 UTC (0: not known yet). Required to
  /// check the lifetime of JWT access tokens (emcp/auth/resource_server.h). Linux: the system
  /// clock; a board: an RTC, or a time the application set from SNTP.
  uint64_t (*unix_time_s)() = nullptr;
  /// Optional: wakes the loop that owns the server from wherever it sleeps, so that what another
  /// thread, task or interrupt posted to the server's inbox (emcp/mcp/inbox.h) is run without
  /// waiting for the loop's next timeout. Called from any thread, task or interrupt, after each
  /// post: it must not block, and must not lose a wake that lands between the loop's last look
  /// and its sleep. POSIX: an eventfd the loop polls; FreeRTOS: a task notification to the owner
  /// (the FromISR form in an interrupt); bare metal: a flag the loop checks with interrupts
  /// masked before WFI. nullptr: posts wait for the loop's next round.
  void (*wake)() = nullptr;
  /// Required by the inbox on a CPU without atomic read-modify-write (EMCP_ATOMIC_RMW 0:
  /// Cortex-M0/M0+), unused elsewhere: masks every interrupt that may post (and, under an RTOS,
  /// the scheduler) and returns what critical_exit() restores; nestable, from any context.
  /// Cortex-M: save PRIMASK, cpsid i; restore it.
  uint32_t (*critical_enter)() = nullptr;
  void (*critical_exit)(uint32_t state) = nullptr;

  constexpr Platform() = default;
  constexpr Platform(uint64_t (*now)(), bool (*rnd)(void*, size_t), void (*lg)(const char*, size_t) = nullptr,
                     uint64_t (*unix_time)() = nullptr, void (*wk)() = nullptr,
                     uint32_t (*crit_enter)() = nullptr, void (*crit_exit)(uint32_t) = nullptr)
      : now_ms(now), random(rnd), log(lg), unix_time_s(unix_time), wake(wk), critical_enter(crit_enter),
        critical_exit(crit_exit) {}
};

EMCP_NS_END

#endif  // EMCP_PLATFORM_H
