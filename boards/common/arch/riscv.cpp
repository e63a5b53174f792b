// RISC-V start-up (RV32, machine mode only): the first instructions (global and stack pointer,
// the trap vector, interrupts on; then reset in common/startup.cpp), and the trap handler:
// mtvec in direct mode, one entry for every interrupt and exception, which hands the machine
// software, timer and external interrupts to MachineSoftware_Handler, MachineTimer_Handler and
// MachineExternal_Handler (weak aliases a board overrides; an external interrupt controller,
// the PLIC on SiFive's chips, is the board's) and stops on an exception.
//
// mstatus.MIE is set before reset runs; nothing interrupts until the board's init() enables a
// source in mie (as on Cortex-M, where interrupts are on and the board enables its lines).
//
// Under FreeRTOS (EMCP_BOARD_RTOS, ports/freertos) mtvec is the kernel's trap entry instead
// (freertos_risc_v_trap_handler, its RISC-V port's portASM.S): it saves the interrupted task's
// registers on the task's stack, switches to the interrupt stack (the linker's stack region,
// __freertos_irq_stack_top in the board's linker script), handles the machine timer (its tick)
// and ecall (a task's yield) itself, and calls freertos_risc_v_application_interrupt_handler
// below for every other interrupt, which hands it to the same handlers; an exception stops the
// core as here. mstatus.MIE stays clear until the kernel starts the first task.
#include <stdint.h>

#include "board/arch.h"

extern "C" {
void Reset_Handler();  // common/startup.cpp
void Trap_Handler();
void Default_Handler();
void Fault_Handler(uint32_t cause);
void MachineSoftware_Handler() __attribute__((weak, alias("Default_Handler")));
void MachineTimer_Handler() __attribute__((weak, alias("Default_Handler")));
void MachineExternal_Handler() __attribute__((weak, alias("Default_Handler")));

// The image's first instructions (.vectors: the linker script puts them at the start of flash,
// where the chip's boot code jumps). gp is set without relaxation (relaxed, `la gp` would be
// computed from gp itself); the linker script defines __global_pointer$ when it relaxes
// accesses to small data through gp.
__asm__(
    ".pushsection .vectors, \"ax\", @progbits\n"
    ".globl _start\n"
    ".type _start, @function\n"
    "_start:\n"
    ".option push\n"
    ".option norelax\n"
    "  la gp, __global_pointer$\n"
    ".option pop\n"
    "  la sp, __stack_top__\n"
    "  andi sp, sp, -16\n"  // the ABI's 16-byte alignment
#if EMCP_BOARD_RTOS
    "  la t0, freertos_risc_v_trap_handler\n"
    "  csrw mtvec, t0\n"  // direct mode: the kernel aligns its entry to 256 bytes
    "  csrw mie, zero\n"  // MIE stays clear: the kernel sets it when the first task starts
#else
    "  la t0, Trap_Handler\n"
    "  csrw mtvec, t0\n"  // direct mode: Trap_Handler is 4-byte aligned
    "  csrw mie, zero\n"
    "  csrsi mstatus, 8\n"  // MIE
#endif
    "  j Reset_Handler\n"
    ".size _start, . - _start\n"
    ".popsection\n");

// The fault loop: interrupts off for good, the core asleep. Reached from a trap, so the
// exception's mcause, mepc and mtval are still in their registers for a debugger.
__attribute__((noreturn)) void Fault_Handler(uint32_t) {
  __asm__ volatile("csrw mie, zero");
  for (;;) emcp::board::arch::wait_for_interrupt();
}

void Default_Handler() { Fault_Handler(0); }

// An interrupt's handler by its cause (mcause without the interrupt bit).
static void dispatch(uint32_t cause) {
  switch (cause & 0x3FFu) {
    case 3:
      MachineSoftware_Handler();
      break;
    case 7:
      MachineTimer_Handler();
      break;
    case 11:
      MachineExternal_Handler();
      break;
    default:
      Default_Handler();
  }
}

#if EMCP_BOARD_RTOS
// Called by the kernel's trap entry (assembly: kept whatever the link-time optimizer sees),
// with mcause, on the interrupt stack, for every interrupt but the machine timer's (the tick):
// the board's handlers, as on bare metal. The kernel's weak definitions of both are loops.
__attribute__((used)) void freertos_risc_v_application_interrupt_handler(uint32_t cause) { dispatch(cause); }
// An exception but ecall (which the kernel's tasks use to yield): the fault loop.
__attribute__((used)) void freertos_risc_v_application_exception_handler(uint32_t cause) { Fault_Handler(cause); }
#else
// Every trap. The interrupt attribute saves the registers it and its callees may change (the
// caller-saved ones) and returns with mret; machine mode takes no second trap meanwhile
// (mstatus.MIE is clear until mret), so interrupts do not nest.
__attribute__((interrupt("machine"), aligned(4), used)) void Trap_Handler() {
  uint32_t cause;
  __asm__ volatile("csrr %0, mcause" : "=r"(cause));
  if ((cause & 0x80000000u) == 0) Fault_Handler(cause);  // an exception (ebreak: abort())
  dispatch(cause);
}
#endif
}  // extern "C"
