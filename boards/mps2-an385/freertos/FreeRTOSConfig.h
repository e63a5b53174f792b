/* FreeRTOS on mps2-an385 (Cortex-M3, 25 MHz; the kernel's GCC_ARM_CM3 port, board.cmake's
 * EMCP_BOARD_FREERTOS_PORT): what is the board's, then what every emcp image shares
 * (ports/freertos/config/emcp_freertos_config.h). */
#ifndef FREERTOS_CONFIG_H
#define FREERTOS_CONFIG_H

/* SysTick runs from the processor clock (the kernel sets it up, 1 kHz, and owns it). */
#define configCPU_CLOCK_HZ 25000000

/* Interrupt priorities, in the NVIC's 8-bit form. A Cortex-M3 implements at least the top 3
 * bits: priorities are set in those (the kernel checks at start that the hardware keeps
 * them). The kernel's own interrupts (SysTick, PendSV) run at the lowest priority; an
 * interrupt that calls the API (a ...FromISR function: the UART's receive interrupt waking
 * the owner task) must have a priority numerically at or above
 * configMAX_SYSCALL_INTERRUPT_PRIORITY (board.cpp sets the UART's to it), and is masked in
 * the kernel's critical sections (configASSERT checks each such call). One above it
 * (numerically below) would run even inside them, and must not call the API. */
#define configPRIO_BITS 3
#define configKERNEL_INTERRUPT_PRIORITY (7 << (8 - configPRIO_BITS))
#define configMAX_SYSCALL_INTERRUPT_PRIORITY (5 << (8 - configPRIO_BITS))

/* The kernel's handlers under the names the vector table (boards/common/arch/cortex-m.cpp)
 * gives their slots: the port's strong definitions replace the table's weak defaults. */
#define vPortSVCHandler SVC_Handler
#define xPortPendSVHandler PendSV_Handler
#define xPortSysTickHandler SysTick_Handler

#include "emcp_freertos_config.h"

#endif /* FREERTOS_CONFIG_H */
