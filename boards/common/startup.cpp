// Start-up shared by the boards: reset (copy .data, zero .bss, paint the stack, run
// constructors, main), the millisecond count the board's tick advances, and the C/C++ runtime
// hooks a heap-free firmware needs (abort, __cxa_atexit, __cxa_pure_virtual) so nothing pulls
// in the C library's allocator. What differs by architecture, the vector table or trap entry,
// the fault handlers and the first instructions, is in arch/<arch>.cpp (board.cmake:
// EMCP_BOARD_ARCH); the instructions this file and rx.cpp need are in board/arch.h.
#include <stdint.h>
#include <string.h>

#include "board/arch.h"
#include "board/board.h"
#include "emcp/util/atomic.h"

extern "C" {
// From the linker script.
extern uint32_t __data_load__, __data_start__, __data_end__, __bss_start__, __bss_end__;
extern uint32_t __stack_limit__, __stack_top__;
extern void (*__init_array_start__[])(), (*__init_array_end__[])();

int main();
void Reset_Handler();

constexpr uint32_t kStackPaint = 0xA5A5A5A5u;
// Milliseconds since reset: the board's tick (SysTick, or a timer interrupt) counts them.
volatile uint64_t g_board_ms = 0;

// Entered with the stack set: by the core from the vector table (Cortex-M), by the first
// instructions (arch/riscv.cpp). Kept when nothing in C refers to it (RISC-V's entry is asm).
__attribute__((used)) void Reset_Handler() {
  uint32_t* src = &__data_load__;
  for (uint32_t* dst = &__data_start__; dst < &__data_end__;) *dst++ = *src++;
  for (uint32_t* dst = &__bss_start__; dst < &__bss_end__;) *dst++ = 0;
  // Paint the stack below the current frame for the high-water mark.
  uint32_t* sp = emcp::board::arch::stack_pointer();
  for (uint32_t* p = &__stack_limit__; p < sp - 16; ++p) *p = kStackPaint;
  for (auto* f = __init_array_start__; f < __init_array_end__; ++f) (*f)();
  (void)main();
  for (;;) emcp::board::arch::wait_for_interrupt();
}

// ---- runtime hooks: no exceptions, no exit, no allocator -------------------------------------
void abort() {
  for (;;) EMCP_ARCH_HALT(2);
}
void _exit(int) { abort(); }
void* __dso_handle = nullptr;
// Static destructors are never run on a device that never exits: registering them would pull
// in the C library's atexit tables.
int __cxa_atexit(void (*)(void*), void*, void*) { return 0; }
void __cxa_pure_virtual() { abort(); }
}  // extern "C"

namespace emcp {
namespace board {

#if !EMCP_BOARD_RTOS  // FreeRTOS: the kernel's critical section (ports/freertos/src/owner.cpp)
uint32_t critical_enter() { return arch::interrupts_save_off(); }
void critical_exit(uint32_t state) { arch::interrupts_restore(state); }
#endif

const emcp::Platform& platform() {
  // The server's inbox (emcp/mcp/inbox.h) wakes the loop with emcp::board::wake(); without atomic
  // read-modify-write (Cortex-M0) it posts with interrupts masked.
  static constexpr emcp::Platform kBoard{&now_ms, nullptr, nullptr, nullptr, &wake,
                                         EMCP_ATOMIC_RMW ? nullptr : &critical_enter,
                                         EMCP_ATOMIC_RMW ? nullptr : &critical_exit};
  return kBoard;
}

#if !EMCP_BOARD_RTOS  // FreeRTOS: the tick count and the owner task's stack (ports/freertos)
uint64_t now_ms() {
  // 64-bit reads are not atomic on a 32-bit core: read until two reads agree.
  uint64_t a, b;
  do {
    a = g_board_ms;
    b = g_board_ms;
  } while (a != b);
  return a;
}

size_t stack_size() {
  return static_cast<size_t>(reinterpret_cast<uintptr_t>(&__stack_top__) -
                             reinterpret_cast<uintptr_t>(&__stack_limit__));
}

size_t stack_high_water() {
  const uint32_t* p = &__stack_limit__;
  while (p < &__stack_top__ && *p == kStackPaint) ++p;
  return static_cast<size_t>(reinterpret_cast<uintptr_t>(&__stack_top__) - reinterpret_cast<uintptr_t>(p));
}

#endif

}  // namespace board
}  // namespace emcp
