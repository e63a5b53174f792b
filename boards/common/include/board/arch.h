// board/arch.h - the few instructions the shared board code (common/startup.cpp, common/rx.cpp)
// needs, for the CPU it is compiled for: Cortex-M (Thumb), RISC-V (RV32, machine mode) or Xtensa
// (the call0 ABI of the lx106, the exception architecture XEA2: PS.INTLEVEL masks). The
// rest of an architecture's start-up (the vector table or trap entry, the fault handlers, the
// first instructions) is in common/arch/<arch>.cpp, the one board.cmake names (EMCP_BOARD_ARCH).
//
// Context: any (each is one instruction or two).
#ifndef EMCP_BOARD_ARCH_H
#define EMCP_BOARD_ARCH_H

#include <stdint.h>

#if defined(__arm__)
/// Stops at a breakpoint (a debugger shows where; without one the core faults and stays in the
/// fault handler's loop).
#define EMCP_ARCH_HALT(n) __asm__ volatile("bkpt #" #n)
#elif defined(__riscv)
/// Stops at a breakpoint (a debugger shows where; without one the trap handler's fault loop
/// keeps the core there). One ebreak for every n: RISC-V's carries no number.
#define EMCP_ARCH_HALT(n) __asm__ volatile("ebreak")
#elif defined(__XTENSA__)
/// Stops at a breakpoint (a debugger shows where; without one the debug vector's loop keeps
/// the core there: common/arch/xtensa.cpp).
#define EMCP_ARCH_HALT(n) __asm__ volatile("break 1, " #n)
#else
#error "board/arch.h: a Cortex-M, RISC-V or Xtensa target"
#endif

namespace emcp {
namespace board {
namespace arch {

/// The stack pointer.
inline uint32_t* stack_pointer() {
  uint32_t* sp;
#if defined(__arm__)
  __asm__ volatile("mov %0, sp" : "=r"(sp));
#elif defined(__XTENSA__)
  __asm__ volatile("mov %0, a1" : "=a"(sp));
#else
  __asm__ volatile("mv %0, sp" : "=r"(sp));
#endif
  return sp;
}

/// Masks every interrupt (an interrupt that comes meanwhile stays pending, and still ends a
/// wait_for_interrupt()).
inline void interrupts_off() {
#if defined(__arm__)
  __asm__ volatile("cpsid i" ::: "memory");
#elif defined(__XTENSA__)
  uint32_t ps;  // PS.INTLEVEL 1: the level-1 interrupts (every one but the NMI) masked
  __asm__ volatile("rsil %0, 1" : "=a"(ps)::"memory");
  (void)ps;
#else
  __asm__ volatile("csrci mstatus, 8" ::: "memory");  // mstatus.MIE
#endif
}

inline void interrupts_on() {
#if defined(__arm__)
  __asm__ volatile("cpsie i" ::: "memory");
#elif defined(__XTENSA__)
  uint32_t ps;
  __asm__ volatile("rsil %0, 0" : "=a"(ps)::"memory");
  (void)ps;
#else
  __asm__ volatile("csrsi mstatus, 8" ::: "memory");
#endif
}

/// Masks every interrupt and returns what interrupts_restore() needs to put the mask back as it
/// was (nestable: a critical section inside another leaves them masked).
inline uint32_t interrupts_save_off() {
  uint32_t was;
#if defined(__arm__)
  __asm__ volatile("mrs %0, primask\n\tcpsid i" : "=r"(was) : : "memory");  // PRIMASK 1: masked
  return was & 1u;
#elif defined(__XTENSA__)
  __asm__ volatile("rsil %0, 1" : "=a"(was) : : "memory");  // the old PS
  return (was & 0xFu) != 0 ? 1u : 0u;                       // 1: they were masked
#else
  __asm__ volatile("csrrci %0, mstatus, 8" : "=r"(was) : : "memory");  // the old mstatus
  return (was & 8u) != 0 ? 0u : 1u;                                    // 1: they were masked
#endif
}

inline void interrupts_restore(uint32_t was_masked) {
  if (was_masked == 0) interrupts_on();
}

/// Sleeps until an interrupt is pending, masked or not (Cortex-M: PRIMASK; RISC-V: mstatus.MIE
/// clear, the interrupt enabled in mie). Xtensa's waiti unmasks them as it waits (PS.INTLEVEL 0):
/// one pending meanwhile is taken at once, before waiti returns; interrupts_on() follows it in
/// every caller.
inline void wait_for_interrupt() {
#if defined(__XTENSA__)
  __asm__ volatile("waiti 0" ::: "memory");
#else
  __asm__ volatile("wfi");
#endif
}

#if defined(__arm__)
/// Cortex-M's NVIC (the same registers from ARMv6-M to ARMv8-M): one bit per interrupt line in
/// each of its set-enable, clear-enable, set-pending and clear-pending registers.
inline volatile uint32_t& nvic_word(uintptr_t base, uint32_t irq) {
  return *reinterpret_cast<volatile uint32_t*>(base + 4u * (irq / 32u));
}
inline void nvic_enable(uint32_t irq) { nvic_word(0xE000E100u, irq) = 1u << (irq % 32u); }
/// Takes effect before the next instruction (a handler turning its own line off returns
/// without being entered again).
inline void nvic_disable(uint32_t irq) {
  nvic_word(0xE000E180u, irq) = 1u << (irq % 32u);
  __asm__ volatile("dsb\n\tisb" ::: "memory");
}
/// Makes the handler run once, whatever the line says (a peripheral whose request was cleared
/// while its data waited raises none by itself).
inline void nvic_pend(uint32_t irq) { nvic_word(0xE000E200u, irq) = 1u << (irq % 32u); }
inline void nvic_unpend(uint32_t irq) { nvic_word(0xE000E280u, irq) = 1u << (irq % 32u); }
/// Sets an interrupt's priority, in the NVIC's 8-bit form (0 highest; a chip implements the top
/// bits only). ARMv7-M (byte access to its priority registers).
inline void nvic_set_priority(uint32_t irq, uint8_t priority) {
  *reinterpret_cast<volatile uint8_t*>(0xE000E400u + irq) = priority;
}
#endif

}  // namespace arch
}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_ARCH_H
