// Xtensa start-up (the lx106's configuration: the call0 ABI, no register windows; the exception
// architecture XEA2, one level-1 interrupt vector for every interrupt a board uses): the first
// instructions (_start: the stack pointer, the vector base, PS; then reset in common/startup.cpp),
// the vectors, and the level-1 interrupt entry, which saves what a C function may change and
// calls Level1_Handler (a weak alias the board overrides), then returns with rfe.
//
// PS after _start: user vector mode (PS.UM), no exception (PS.EXCM clear), interrupts unmasked
// (PS.INTLEVEL 0), as RISC-V's mstatus.MIE and Cortex-M's PRIMASK are at reset: nothing
// interrupts until the board's init() enables a source in INTENABLE. An interrupt (or any
// exception) while PS.UM is set enters the user vector; there EXCCAUSE 4 is a level-1
// interrupt, anything else a fault: Fault_Handler with the cause, EPC1 and EXCVADDR still in
// their registers for a debugger. The kernel vector (PS.UM clear: only while the fault loop
// runs), the double exception vector and the debug vector (EMCP_ARCH_HALT's break) loop.
//
// Where the image starts: QEMU's sim machine begins at the core's reset vector (0x50000000 on the
// lx106, its system ROM), not at the ELF's entry: the board's linker script places .reset there,
// a jump to _start.
#include <stdint.h>

#include "board/arch.h"

extern "C" {
void Reset_Handler();  // common/startup.cpp
void Default_Handler();
void Fault_Handler(uint32_t cause);
void Level1_Handler() __attribute__((weak, alias("Default_Handler")));

// The reset vector's jump (the board's linker script puts .reset at the core's reset vector), the
// vectors (.vectors: VECBASE, at the start of .text, which the linker script aligns as VECBASE
// wants) and _start. Literals precede their l32r (the image is compiled with
// -mtext-section-literals; the vectors use none: their offsets are fixed).
__asm__(
    ".pushsection .reset, \"ax\"\n"
    ".global _reset\n"
    "_reset:\n"
    "  j 1f\n"
    "  .balign 4\n"
    "2: .word _start\n"
    "1: l32r a0, 2b\n"
    "  jx a0\n"
    ".popsection\n"

    ".pushsection .vectors, \"ax\"\n"
    ".begin no-transform\n"  // the offsets as written: no relaxation, no literals
    ".balign 4\n"
    ".global _vector_base\n"
    "_vector_base:\n"
    ".org _vector_base + 0x10\n"  // debug (level 2): a break with no debugger attached
    "3: waiti 15\n"
    "  j 3b\n"
    ".org _vector_base + 0x20\n"  // NMI (level 3): none is wired here
    "  rfi 3\n"
    ".org _vector_base + 0x30\n"  // kernel exception (PS.UM clear): only the fault loop runs so
    "4: waiti 15\n"
    "  j 4b\n"
    ".org _vector_base + 0x50\n"  // user exception: a level-1 interrupt, or a fault
    "  wsr a0, excsave1\n"
    "  j emcp_xtensa_user_exception\n"
    ".org _vector_base + 0x70\n"  // double exception
    "5: waiti 15\n"
    "  j 5b\n"
    ".end no-transform\n"
    ".popsection\n"

    // The user exception's body: a0 is in EXCSAVE1. A level-1 interrupt saves what the call0
    // ABI lets a C function change (a0, a2-a11, SAR: 13 words, in a frame of 64 bytes, the
    // ABI's 16-byte alignment), calls Level1_Handler and returns with rfe; a fault calls
    // Fault_Handler(EXCCAUSE), which does not return.
    ".pushsection .text.emcp_xtensa_user_exception, \"ax\"\n"
    ".literal_position\n"
    ".balign 4\n"
    "emcp_xtensa_user_exception:\n"
    "  addi a1, a1, -64\n"
    "  s32i a2, a1, 8\n"
    "  rsr a2, exccause\n"
    "  bnei a2, 4, 6f\n"
    "  s32i a3, a1, 12\n"
    "  s32i a4, a1, 16\n"
    "  s32i a5, a1, 20\n"
    "  s32i a6, a1, 24\n"
    "  s32i a7, a1, 28\n"
    "  s32i a8, a1, 32\n"
    "  s32i a9, a1, 36\n"
    "  s32i a10, a1, 40\n"
    "  s32i a11, a1, 44\n"
    "  rsr a2, sar\n"
    "  s32i a2, a1, 48\n"
    "  rsr a2, excsave1\n"
    "  s32i a2, a1, 0\n"
    "  call0 Level1_Handler\n"
    "  l32i a2, a1, 48\n"
    "  wsr a2, sar\n"
    "  l32i a0, a1, 0\n"
    "  l32i a2, a1, 8\n"
    "  l32i a3, a1, 12\n"
    "  l32i a4, a1, 16\n"
    "  l32i a5, a1, 20\n"
    "  l32i a6, a1, 24\n"
    "  l32i a7, a1, 28\n"
    "  l32i a8, a1, 32\n"
    "  l32i a9, a1, 36\n"
    "  l32i a10, a1, 40\n"
    "  l32i a11, a1, 44\n"
    "  addi a1, a1, 64\n"
    "  rfe\n"
    "6: call0 Fault_Handler\n"  // a2: EXCCAUSE
    ".popsection\n"

    // The first instructions: the stack pointer (16-byte aligned, the ABI's), the vectors,
    // PS (UM, INTLEVEL 0, EXCM clear) and reset.
    ".pushsection .text._start, \"ax\"\n"
    ".literal_position\n"
    ".balign 4\n"
    ".global _start\n"
    ".type _start, @function\n"
    "_start:\n"
    "  movi a0, 0\n"
    "  movi a1, __stack_top__\n"
    "  movi a2, -16\n"
    "  and a1, a1, a2\n"
    "  movi a2, _vector_base\n"
    "  wsr a2, vecbase\n"
    "  movi a2, 0\n"
    "  wsr a2, intenable\n"
    "  movi a2, 0x20\n"  // PS.UM
    "  wsr a2, ps\n"
    "  rsync\n"
    "  call0 Reset_Handler\n"
    ".size _start, . - _start\n"
    ".popsection\n");

// The fault loop: interrupts masked for good (PS.INTLEVEL 15), the core waiting. EXCCAUSE, EPC1
// (the faulting instruction) and EXCVADDR (the address of a bad load or store, an unaligned one
// included: the lx106 has no unaligned access in hardware) stay for a debugger. Weak: a board
// with a host to tell (lx106-sim's semihosting) reports the fault instead.
__attribute__((noreturn, used, weak)) void Fault_Handler(uint32_t) {
  for (;;) __asm__ volatile("waiti 15");
}

void Default_Handler() { Fault_Handler(0); }
}  // extern "C"
