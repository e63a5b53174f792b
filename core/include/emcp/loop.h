// emcp/loop.h - the application's periodic work, as every serving loop runs it: the POSIX
// loops (emcp/posix/loop.h, emcp/posix/serve.h), the boards' bare-metal loop (board/serve.h)
// and the FreeRTOS owner task's (board/freertos.h) all take this one struct.
//
// A loop round: the input that arrived (stdin, a UART, sockets), then `tick`, then the server's
// timeouts (mcp::Server::poll), then a wait for more input of at most `next_tick_ms()`
// milliseconds. The boards wait for their next interrupt, and their clock interrupts every
// millisecond, so any `next_tick_ms` is met there; on Linux the wait is a poll() timeout.
//
// Context: header only. `tick` runs in the loop's thread (the task that owns the server).
#ifndef EMCP_LOOP_H
#define EMCP_LOOP_H

#include <stdint.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN

struct Loop {
  /// The application's periodic work, every round (nullptr: none).
  void (*tick)() = nullptr;
  /// How long the loop may sleep before the next round, in milliseconds (nullptr: the loop's own
  /// cap, 1 s over stdio, 100 ms over HTTP, an interrupt on a board).
  uint32_t (*next_tick_ms)() = nullptr;

  /// How long a loop whose own cap is `cap_ms` may sleep now: next_tick_ms(), at most the cap.
  uint32_t wait_ms(uint32_t cap_ms) const {
    const uint32_t wait = next_tick_ms != nullptr ? next_tick_ms() : cap_ms;
    return wait > cap_ms ? cap_ms : wait;
  }
};

EMCP_NS_END

#endif  // EMCP_LOOP_H
