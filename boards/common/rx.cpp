// The boards' receive ring (board/rx.h) and the board.h calls built on it.
#include "board/rx.h"

#include "board/arch.h"
#include "board/board.h"
#include "board/ring.h"

namespace {
board::Ring<1024> g_rx;
volatile uint32_t g_dropped = 0;
}  // namespace

namespace board {

void rx_byte(uint8_t b) {
  if (!g_rx.push(b)) g_dropped = g_dropped + 1;
}

void rx_lost() { g_dropped = g_dropped + 1; }

bool rx_full() { return g_rx.full(); }

size_t uart_read(uint8_t* buf, size_t cap) { return g_rx.pop(buf, cap); }

uint32_t uart_dropped() { return g_dropped; }

// Interrupts off while checking, so a byte arriving between the check and WFI still wakes it
// (WFI ends on a pending interrupt even while they are masked; it is taken once unmasked).
void idle() {
  arch::interrupts_off();
  if (g_rx.empty()) arch::wait_for_interrupt();
  arch::interrupts_on();
}

}  // namespace board
