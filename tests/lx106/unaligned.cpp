// An unaligned 32-bit load on the lx106 (lx106-sim_fault_reported): the core raises
// LoadStoreAlignment (EXCCAUSE 9) and the board reports it and stops QEMU (boards/lx106-sim's
// Fault_Handler). QEMU models the exception, so the UART tests' passing on this board says
// emcp's code made no unaligned access on their paths.
#include <stdint.h>

#include "board/board.h"

namespace {
alignas(4) uint8_t g_bytes[8] = {1, 2, 3, 4, 5, 6, 7, 8};
}

int main() {
  emcp::board::init();
  uintptr_t at = reinterpret_cast<uintptr_t>(g_bytes) + 1;
  __asm__ volatile("" : "+a"(at));  // the compiler cannot see it is unaligned
  const uint32_t word = *reinterpret_cast<volatile const uint32_t*>(at);
  emcp::board::uart_write("unreached\n", 10);
  return static_cast<int>(word);
}
