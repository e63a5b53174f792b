// emcp/platform.h - what emcp needs from the platform it runs on, in one place.
//
// A platform (ports/posix, a board, ports/template for a new one) fills one Platform and
// passes it to the mcp::Server; every engine reads it from there. The functions are checked
// when the server is built: a missing clock is a start-up failure (EMCP_ASSERT, which names
// the file and line), never a silent "no timeouts"; the HTTP engine checks the random source
// the same way when it is built. docs/porting.md walks a new platform through all of it.
//
// Context: any (the functions are called from the loop that owns the server).
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

  constexpr Platform() = default;
  constexpr Platform(uint64_t (*now)(), bool (*rnd)(void*, size_t), void (*lg)(const char*, size_t) = nullptr,
                     uint64_t (*unix_time)() = nullptr)
      : now_ms(now), random(rnd), log(lg), unix_time_s(unix_time) {}
};

EMCP_NS_END

#endif  // EMCP_PLATFORM_H
