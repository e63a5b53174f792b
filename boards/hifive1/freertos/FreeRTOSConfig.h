/* FreeRTOS on the hifive1 (FE310, RV32IMAC, machine mode; the kernel's RISC-V port with the
 * RISCV_MTIME_CLINT_no_extensions extensions, board.cmake's EMCP_BOARD_FREERTOS_PORT): what is
 * the board's, then what every emcp image shares (ports/freertos/config/emcp_freertos_config.h).
 * Included by the kernel's C sources, by C++ and by the port's assembly (portASM.S). */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

/* The CLINT's machine timer: the kernel programs mtimecmp for its 1 kHz tick and handles the
 * timer interrupt in its trap entry (freertos_risc_v_trap_handler, mtvec). The kernel's port
 * counts the tick in mtime's increments, configCPU_CLOCK_HZ / configTICK_RATE_HZ of them: here
 * the rate mtime counts at, not the core's clock: 10 MHz in QEMU's sifive_e (10,000 a tick),
 * 32,768 Hz on the chip (EMCP_HIFIVE1_MTIME_HZ, board.cmake), where the whole increments make
 * it 32 a tick: 1,024 ticks a second, a clock 2.4% fast (boards/hifive1/README.md). */
#ifndef EMCP_HIFIVE1_MTIME_HZ
#error "EMCP_HIFIVE1_MTIME_HZ: the CLINT's mtime rate (board.cmake)"
#endif
#define configCPU_CLOCK_HZ EMCP_HIFIVE1_MTIME_HZ
#define configMTIME_BASE_ADDRESS 0x0200BFF8UL
#define configMTIMECMP_BASE_ADDRESS 0x02004000UL

/* Interrupts: a trap clears mstatus.MIE and the kernel's port never sets it in a handler, so
 * they do not nest, and the kernel's critical sections mask them all (mstatus.MIE): every
 * interrupt may call the ...FromISR functions. They run on the linker's stack region
 * (__freertos_irq_stack_top, linker.ld): no configISR_STACK_SIZE_WORDS. */

/* The tick hook (in the tick's interrupt): the sensors image raises the CLINT's machine
 * software interrupt from it, whose handler posts a sample (examples/sensors/main_rtos.cpp):
 * QEMU 7.2's sifive_e has no other timer (PWM and the always-on block's are unimplemented). */
#define configUSE_TICK_HOOK 1

/* The idle task's stack, in words: 160 B, its worst case (the context a switched-out task keeps
 * and the stack's alignment, 140 B, and the overflow check's 16 B; checked after every link)
 * where the 256 B of emcp_freertos_config.h's default do not fit the 16 KiB of RAM. */
#define configMINIMAL_STACK_SIZE 40

#include "emcp_freertos_config.h"

#endif /* FREERTOS_CONFIG_H */
