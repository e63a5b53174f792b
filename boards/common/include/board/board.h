// board/board.h - what a board provides to the firmware: a millisecond clock, a UART whose
// receive interrupt fills a ring buffer, sleep until the next interrupt, and the painted-stack
// high-water mark. Each board folder implements it with its own registers (no vendor HAL).
//
// Context: main loop, except where a function says it runs in an interrupt.
#ifndef EMCP_BOARD_BOARD_H
#define EMCP_BOARD_BOARD_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/platform.h"

namespace emcp {
namespace board {

/// Clocks, the UART (115200 8N1 on real hardware; RX interrupt on), a 1 kHz tick (SysTick, or
/// a timer on chips without it).
void init();
/// The board's name ("mps2-an385", "stm32f4", "microbit", "hifive1").
const char* name();

/// Milliseconds since init() (the tick).
uint64_t now_ms();
/// The board as emcp's platform (emcp/platform.h): now_ms; no random source (UART images need
/// none; a network image adds its own); no log (the UART carries MCP).
const emcp::Platform& platform();

/// Sends `n` bytes, waiting for the transmitter (polled: the UART is the only output).
void uart_write(const char* data, size_t n);
/// Takes up to `cap` received bytes from the RX ring (filled by the interrupt); 0 when none,
/// and 0 at a place where bytes went missing, until uart_take_loss() has taken it.
size_t uart_read(uint8_t* buf, size_t cap);
/// True once for each gap in the input, when every byte before it has been read: tell the
/// transport (LineTransport::input_lost()) before feeding what uart_read() returns next.
bool uart_take_loss();
/// Bytes lost because the RX ring had no room (a UART that cannot hold them back) or the UART
/// overran (board/rx.h).
uint32_t uart_dropped();
/// Times the ring was full and the receive interrupt held the UART back (its FIFO, flow control
/// or emulation kept the bytes): 0 while the host sends no more than the ring holds.
uint32_t uart_held();

/// Sleeps until an interrupt (a UART byte or the tick) when no received byte is waiting and
/// no wake() came since the last idle(). Under FreeRTOS (board/freertos.h) the task that owns
/// the server waits for its notification instead, at most a tick.
void idle();
/// Ends the loop's current or next idle() (work was handed to it: the inbox). Context: any
/// task or interrupt. Bare metal: sets a flag idle() checks with interrupts masked before its
/// WFI, so a wake() between the loop's last look and the WFI is never lost; FreeRTOS: gives the
/// owner task's notification (from an interrupt: the FromISR call, and a switch to the owner
/// when it now outranks the interrupted task).
void wake();
/// A critical section for the server's inbox on a CPU without atomic read-modify-write
/// (Cortex-M0): masks every interrupt, nestable; platform() names them there.
uint32_t critical_enter();
void critical_exit(uint32_t state);

/// The main stack: its size, and the most of it ever used (painted at reset, scanned now).
size_t stack_size();
size_t stack_high_water();

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_BOARD_H
