// board/freertos.h - the board layer under FreeRTOS (ports/freertos, an image built with
// emcp_firmware(... RTOS freertos)): one task owns the server and runs the same loop as bare
// metal (board::serve(), board/serve.h); what board/board.h says of "the main loop" is said of
// that task. main() creates it (xTaskCreateStatic), names it here, and starts the scheduler:
//
//   TaskHandle_t owner = xTaskCreateStatic(&owner_task, "emcp", ..., g_owner_stack, &g_owner_tcb);
//   board::set_owner(owner, sizeof g_owner_stack);
//   vTaskStartScheduler();
//
// What changes from bare metal (board/board.h's functions, implemented in
// ports/freertos/src/freertos.cpp):
// - now_ms(): the kernel's tick count (1 kHz), extended to 64 bits with the kernel's own count
//   of its wraps. SysTick (or the board's tick timer) belongs to the kernel.
// - idle(): the owner waits for its task notification, at most one tick (the loop runs the
//   application's tick() every millisecond, as bare metal's WFI wakes at each SysTick): the
//   UART's receive interrupt and wake() give it. With a lock set (set_idle_lock()), the owner
//   gives it back for the wait.
// - wake(): gives the owner's notification (vTaskNotifyGiveFromISR and a yield when called
//   from an interrupt); before set_owner() it does nothing.
// - stack_size(), stack_high_water(): the owner task's stack (the kernel's high-water mark of
//   it), in bytes; the main stack only serves main() before the scheduler, and interrupts.
#ifndef EMCP_BOARD_FREERTOS_H
#define EMCP_BOARD_FREERTOS_H

#include <stddef.h>

#include "FreeRTOS.h"
#include "task.h"

namespace board {

/// Names the task that owns the server (the one calling board::serve()) and its stack's size
/// in bytes. Call once, from main() before vTaskStartScheduler().
void set_owner(TaskHandle_t task, size_t stack_bytes);

/// A lock the owner task holds all the time except while it waits in idle(): idle() calls
/// `release` before its wait and `take` after. The network (lwIP in its own thread,
/// boards/<board>/net.cpp) sets lwIP's core lock here, so that the owner's loop calls lwIP's raw
/// API under it (docs/porting.md "With an RTOS") and lwIP's thread runs while the owner waits.
/// From the owner task, holding the lock already; nullptr, nullptr: none (the default).
void set_idle_lock(void (*release)(), void (*take)());

}  // namespace board

#endif  // EMCP_BOARD_FREERTOS_H
