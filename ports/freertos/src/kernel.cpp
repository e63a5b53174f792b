// What an image whose FreeRTOS kernel is built here (EMCP_FREERTOS_KERNEL_DIR,
// emcp_freertos_config.h) needs besides the owner task's functions (owner.cpp): the clock from
// the tick, the static memory of the kernel's idle task, and the hooks the configuration turns
// on: the idle hook's WFI, a stack overflow and a failed assertion halting the image. ESP-IDF
// provides all of it itself (its esp_timer, its idle tasks and hooks): boards/esp32 does not
// build this file.
#include <stdint.h>

#include "board/arch.h"
#include "board/board.h"
#include "board/freertos.h"

static_assert(configTICK_RATE_HZ == 1000, "emcp::board::now_ms() counts ticks as milliseconds");
static_assert(configSUPPORT_DYNAMIC_ALLOCATION == 0, "emcp images allocate nothing (static allocation only)");

// The idle task's memory (the kernel asks for it when the scheduler starts); its stack's
// worst case is checked after the link (tools/footprint.py, the task "idle").
StaticTask_t g_idle_tcb;
StackType_t g_idle_stack[configMINIMAL_STACK_SIZE];
#if configUSE_TIMERS
StaticTask_t g_timer_tcb;
StackType_t g_timer_stack[configTIMER_TASK_STACK_DEPTH];
#endif

extern "C" {

void vApplicationGetIdleTaskMemory(StaticTask_t** tcb, StackType_t** stack, configSTACK_DEPTH_TYPE* words) {
  *tcb = &g_idle_tcb;
  *stack = g_idle_stack;
  *words = configMINIMAL_STACK_SIZE;
}

#if configUSE_TIMERS
void vApplicationGetTimerTaskMemory(StaticTask_t** tcb, StackType_t** stack, configSTACK_DEPTH_TYPE* words) {
  *tcb = &g_timer_tcb;
  *stack = g_timer_stack;
  *words = configTIMER_TASK_STACK_DEPTH;
}
#endif

// Nothing is ready: sleep until an interrupt (the tick, the UART) makes something ready.
void vApplicationIdleHook() { emcp::board::arch::wait_for_interrupt(); }

#if configUSE_TICK_HOOK
// The tick hook, where the board's configuration turns it on (hifive1's) and the image defines
// none: nothing.
__attribute__((weak)) void vApplicationTickHook() {}
#endif

void vApplicationStackOverflowHook(TaskHandle_t, char*) {
  portDISABLE_INTERRUPTS();
  for (;;) EMCP_ARCH_HALT(4);
}

void emcp_freertos_assert_failed() {
  portDISABLE_INTERRUPTS();
  for (;;) EMCP_ARCH_HALT(3);
}

}  // extern "C"

namespace emcp {
namespace board {

// The kernel's tick count and its count of the count's wraps, read together in a critical
// section: exact, whenever the last call was. From a task (or main() before the scheduler).
uint64_t now_ms() {
  TimeOut_t t;
  vTaskSetTimeOutState(&t);
  return (static_cast<uint64_t>(static_cast<uint32_t>(t.xOverflowCount)) << 32) | t.xTimeOnEntering;
}

}  // namespace board
}  // namespace emcp
