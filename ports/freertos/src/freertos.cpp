// The board layer's functions under FreeRTOS (board/freertos.h says what changes from bare
// metal), the static memory of the kernel's idle task, and the hooks the configuration turns
// on (emcp_freertos_config.h): the idle hook's WFI, a stack overflow and a failed assertion
// halting the image.
#include <stdint.h>

#include "FreeRTOS.h"
#include "board/arch.h"
#include "board/board.h"
#include "board/freertos.h"
#include "task.h"

static_assert(configTICK_RATE_HZ == 1000, "board::now_ms() counts ticks as milliseconds");

// The longest the owner task waits in idle() without a notification, in ticks: one, so that
// the loop runs the application's tick() every millisecond, as bare metal's WFI wakes at each
// SysTick. (portMAX_DELAY: it waits for notifications alone, the wake path's test.)
#ifndef EMCP_FREERTOS_IDLE_TICKS
#define EMCP_FREERTOS_IDLE_TICKS 1
#endif
static_assert(configSUPPORT_DYNAMIC_ALLOCATION == 0, "emcp images allocate nothing (static allocation only)");

#if defined(__riscv)
extern "C" uint32_t __stack_limit__, __stack_top__;  // the linker's stack region
#endif

namespace {

TaskHandle_t g_owner = nullptr;
size_t g_owner_stack_bytes = 0;
void (*g_release)() = nullptr;  // set_idle_lock(): what idle() gives back while it waits
void (*g_take)() = nullptr;

// Whether the caller is an interrupt handler (the ...FromISR calls are for those only).
bool in_interrupt() {
#if defined(__arm__)
  return xPortIsInsideInterrupt() != pdFALSE;
#elif defined(__riscv)
  // The RISC-V port's trap entry switches to the interrupt stack, the linker's stack region
  // (__freertos_irq_stack_top, the board's linker script), and traps do not nest; every task's
  // stack is a static array elsewhere: once the scheduler runs, code on that region is an
  // interrupt's. (Before, main() runs there: a wake() from it gives the notification as an
  // interrupt does, which the kernel allows before it starts.)
  const uint32_t* sp = board::arch::stack_pointer();
  return sp >= &__stack_limit__ && sp <= &__stack_top__;
#else
#error "ports/freertos: in_interrupt() for this architecture (the kernel's port says whether an interrupt runs)"
#endif
}

}  // namespace

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
void vApplicationIdleHook() { board::arch::wait_for_interrupt(); }

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

namespace board {

void set_owner(TaskHandle_t task, size_t stack_bytes) {
  g_owner = task;
  g_owner_stack_bytes = stack_bytes;
}

// The kernel's tick count and its count of the count's wraps, read together in a critical
// section: exact, whenever the last call was. From a task (or main() before the scheduler).
uint64_t now_ms() {
  TimeOut_t t;
  vTaskSetTimeOutState(&t);
  return (static_cast<uint64_t>(static_cast<uint32_t>(t.xOverflowCount)) << 32) | t.xTimeOnEntering;
}

// A notification given meanwhile (a byte received, a wake()) ends the wait at once, even one
// given before the wait began: none is lost between the loop's last look and the wait.
// With a lock set (lwIP's core), the owner holds it all the time but here.
void idle() {
  void (*release)() = g_release;
  if (release != nullptr) release();
  (void)ulTaskNotifyTake(pdTRUE, EMCP_FREERTOS_IDLE_TICKS);
  if (release != nullptr) g_take();
}

void set_idle_lock(void (*release)(), void (*take)()) {
  g_release = release;
  g_take = take;
}

void wake() {
  TaskHandle_t owner = g_owner;
  if (owner == nullptr) return;
  if (in_interrupt()) {
    BaseType_t woken = pdFALSE;
    vTaskNotifyGiveFromISR(owner, &woken);
    portYIELD_FROM_ISR(woken);
  } else {
    (void)xTaskNotifyGive(owner);
  }
}

size_t stack_size() { return g_owner_stack_bytes; }

size_t stack_high_water() {
  if (g_owner == nullptr) return 0;
  const size_t unused = uxTaskGetStackHighWaterMark(g_owner) * sizeof(StackType_t);
  return g_owner_stack_bytes > unused ? g_owner_stack_bytes - unused : 0;
}

}  // namespace board
