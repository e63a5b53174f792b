// board/freertos.h - the board layer under FreeRTOS (ports/freertos, an image built with
// emcp_add_firmware(... RTOS freertos), or ESP-IDF's FreeRTOS: boards/esp32): one task owns the
// server and runs the same loop as bare metal (emcp::board::serve(), board/serve.h); what
// board/board.h says of "the main loop" is said of that task. main() creates it
// (xTaskCreateStatic), names it here, and starts the scheduler (on ESP-IDF, app_main() creates
// and names it; the scheduler already runs):
//
//   TaskHandle_t owner = xTaskCreateStatic(&owner_task, "emcp", ..., g_owner_stack, &g_owner_tcb);
//   emcp::board::set_owner(owner, sizeof g_owner_stack);
//   vTaskStartScheduler();
//
// What changes from bare metal (board/board.h's functions, implemented in
// ports/freertos/src/owner.cpp, which ESP-IDF's FreeRTOS builds too, and src/kernel.cpp, for a
// kernel built here only):
// - now_ms(): the kernel's tick count (1 kHz), extended to 64 bits with the kernel's own count
//   of its wraps (kernel.cpp). SysTick (or the board's tick timer) belongs to the kernel. On
//   ESP-IDF: esp_timer (boards/esp32/emcp/board.cpp).
// - idle(): the owner waits for its task notification, at most one tick (the loop runs the
//   application's tick() every millisecond, as bare metal's WFI wakes at each SysTick): the
//   UART's receive interrupt and wake() give it. With a lock set (set_idle_lock()), the owner
//   gives it back for the wait.
// - wake(): gives the owner's notification (vTaskNotifyGiveFromISR and a yield when called
//   from an interrupt); before set_owner() it does nothing.
// - critical_enter(), critical_exit(): the kernel's critical section (the inbox's, on a CPU
//   without atomic read-modify-write), from a task or an interrupt; on ESP-IDF with a spinlock,
//   which also keeps the other core out.
// - stack_size(), stack_high_water(): the owner task's stack (the kernel's high-water mark of
//   it), in bytes; the main stack only serves main() before the scheduler, and interrupts.
//   task_stacks() adds every task watch_stack() named: the image's other tasks (lwIP's
//   tcpip_thread, the NIC's receive task, the application's), each measured the same way.
#ifndef EMCP_BOARD_FREERTOS_H
#define EMCP_BOARD_FREERTOS_H

#include <stddef.h>

// The kernel's headers: ESP-IDF's FreeRTOS component has them under freertos/ (its include
// folders: "freertos/FreeRTOS.h" public, "FreeRTOS.h" private to the component); a kernel built
// here (EMCP_FREERTOS_KERNEL_DIR) has them at its include folder's top. ESP_PLATFORM is what
// ESP-IDF's build system defines for every component.
#if defined(ESP_PLATFORM)
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"
#else
#include "FreeRTOS.h"
#include "task.h"
#endif

namespace emcp {
namespace board {

/// Names the task that owns the server (the one calling emcp::board::serve()) and its stack's size
/// in bytes. Call once, from main() before vTaskStartScheduler(); on ESP-IDF, where the
/// scheduler already runs, right after creating the task (a wake() before it does nothing,
/// which costs at most a tick: the owner's wait ends at the next tick anyway).
void set_owner(TaskHandle_t task, size_t stack_bytes);

/// Creates the task that owns the server, "emcp" at priority 1 (tskIDLE_PRIORITY + 1), running
/// `entry` on the static `stack` and `tcb`, and names it (set_owner()): what main() does before
/// vTaskStartScheduler() (the examples' main_rtos.cpp).
template <size_t N>
TaskHandle_t start_owner(TaskFunction_t entry, StackType_t (&stack)[N], StaticTask_t& tcb) {
  TaskHandle_t task = xTaskCreateStatic(entry, "emcp", N, nullptr, tskIDLE_PRIORITY + 1, stack, &tcb);
  set_owner(task, sizeof stack);
  return task;
}

/// start_owner() and the scheduler: main() of an image whose owner task starts the others (or
/// has none). Never returns (the scheduler returns only when it cannot make the idle task,
/// whose memory is static here).
template <size_t N>
[[noreturn]] void run_owner(TaskFunction_t entry, StackType_t (&stack)[N], StaticTask_t& tcb) {
  (void)start_owner(entry, stack, tcb);
  vTaskStartScheduler();
  for (;;) {
  }
}

/// A lock the owner task holds all the time except while it waits in idle(): idle() calls
/// `release` before its wait and `take` after. The network (lwIP in its own thread,
/// boards/<board>/net.cpp) sets lwIP's core lock here, so that the owner's loop calls lwIP's raw
/// API under it (docs/porting.md "With an RTOS") and lwIP's thread runs while the owner waits.
/// From the owner task, holding the lock already; nullptr, nullptr: none (the default).
void set_idle_lock(void (*release)(), void (*take)());

/// Adds a task to those task_stacks() reports, with its stack's size in bytes (set_owner()
/// adds the owner). From any task, or main() before the scheduler; at most
/// EMCP_FREERTOS_WATCHED_TASKS in all: false when that many are watched already (with 0, a
/// board short of RAM: always, and task_stacks() finds none).
#ifndef EMCP_FREERTOS_WATCHED_TASKS
#define EMCP_FREERTOS_WATCHED_TASKS 6
#endif
bool watch_stack(TaskHandle_t task, size_t stack_bytes);

/// A watched task's stack: its name (the kernel's), size, and most bytes ever used (the
/// kernel's high-water mark: the bytes below it the task never wrote, counted from the end it
/// grows towards).
struct TaskStack {
  const char* name;
  size_t size;
  size_t high_water;
};

/// The watched tasks' stacks, in the order they were added, into `out` (at most `max`);
/// returns how many tasks are watched. From a task.
size_t task_stacks(TaskStack* out, size_t max);

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_FREERTOS_H
