// The receive ring of the Cortex-M boards (board/rx.h) and the board.h calls built on it.
#include "board/rx.h"

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

size_t uart_read(uint8_t* buf, size_t cap) { return g_rx.pop(buf, cap); }

uint32_t uart_dropped() { return g_dropped; }

// Interrupts off while checking, so a byte arriving between the check and WFI still wakes it.
void idle() {
  __asm__ volatile("cpsid i" ::: "memory");
  if (g_rx.empty()) __asm__ volatile("wfi");
  __asm__ volatile("cpsie i" ::: "memory");
}

}  // namespace board
