// The boards' receive ring (board/rx.h) and the board.h calls built on it.
#include "board/rx.h"

#include "board/arch.h"
#include "board/board.h"
#include "board/ring.h"

namespace {
emcp::board::Ring<EMCP_BOARD_RX_RING> g_rx;
volatile uint32_t g_dropped = 0;  // bytes the ring lost, and overruns
volatile uint32_t g_holds = 0;    // times the interrupt held the UART back
volatile bool g_held = false;     // it holds it now
#if !EMCP_BOARD_RTOS
volatile bool g_woken = false;    // wake() since the last idle()
#endif

// The loop made room: the board takes the bytes its UART held.
void release_if_room() {
  if (g_held && g_rx.room()) {
    g_held = false;
    emcp::board::rx_release();
  }
}
}  // namespace

namespace emcp {
namespace board {

bool rx_room() { return EMCP_BOARD_RX_HOLD == 0 || g_rx.room(); }

size_t rx_space() {
  const size_t n = g_rx.space();
  return EMCP_BOARD_RX_HOLD == 0 && n == 0 ? 1 : n;
}

// Under FreeRTOS the loop's task sleeps on its notification, not in WFI: each byte (and each
// loss) the interrupt queues gives it (board/freertos.h).
void rx_byte(uint8_t b) {
  if (!g_rx.push(b)) g_dropped = g_dropped + 1;
#if EMCP_BOARD_RTOS
  wake();
#endif
}

void rx_lost() {
  g_rx.lose();
  g_dropped = g_dropped + 1;
#if EMCP_BOARD_RTOS
  wake();
#endif
}

void rx_hold() {
  g_held = true;
  g_holds = g_holds + 1;
}

size_t uart_read(uint8_t* buf, size_t cap) {
  const size_t n = g_rx.pop(buf, cap);
  release_if_room();
  return n;
}

bool uart_take_loss() {
  const bool lost = g_rx.take_loss();
  release_if_room();
  return lost;
}

uint32_t uart_dropped() { return g_dropped; }
uint32_t uart_held() { return g_holds; }

#if !EMCP_BOARD_RTOS  // FreeRTOS: ports/freertos/src/owner.cpp
// Interrupts off while checking, so a byte arriving (or a wake() from an interrupt) between the
// check and WFI still wakes it (WFI ends on a pending interrupt even while they are masked; it
// is taken once unmasked). A wake() is taken here: the loop runs its round again.
void idle() {
  arch::interrupts_off();
  if (g_woken) {
    g_woken = false;
  } else if (g_rx.empty() && !g_rx.loss_waiting()) {
    arch::wait_for_interrupt();
  }
  arch::interrupts_on();
}

void wake() { g_woken = true; }
#endif

}  // namespace board
}  // namespace emcp
