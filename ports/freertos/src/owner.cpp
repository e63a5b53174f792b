// The task that owns the server under FreeRTOS (board/freertos.h says what changes from bare
// metal): its wait, its wake from any task or interrupt, the kernel's critical section, its
// stack's figures. The one file of this port that ESP-IDF's FreeRTOS builds too
// (boards/esp32/emcp), beside its own kernel and start-up: it calls nothing a kernel built here
// alone has, nothing of its configuration (emcp_freertos_config.h) but the API both kernels
// document. What only a kernel built here needs (its clock, the idle task's memory, the hooks)
// is kernel.cpp.
#include <stdint.h>

#include "board/board.h"
#include "board/freertos.h"

#if defined(__riscv) && !defined(ESP_PLATFORM)
#include "board/arch.h"
extern "C" uint32_t __stack_limit__, __stack_top__;  // the linker's stack region
#endif

// The longest the owner task waits in idle() without a notification, in ticks: one, so that
// the loop runs the application's tick() every millisecond, as bare metal's WFI wakes at each
// SysTick. (portMAX_DELAY: it waits for notifications alone, the wake path's test.)
#ifndef EMCP_FREERTOS_IDLE_TICKS
#define EMCP_FREERTOS_IDLE_TICKS 1
#endif

namespace {

TaskHandle_t g_owner = nullptr;
size_t g_owner_stack_bytes = 0;

// The tasks whose stacks task_stacks() reports (watch_stack()); none with
// EMCP_FREERTOS_WATCHED_TASKS 0 (board/freertos.h).
#if EMCP_FREERTOS_WATCHED_TASKS > 0
struct Watched {
  TaskHandle_t task;
  size_t bytes;
};
Watched g_watched[EMCP_FREERTOS_WATCHED_TASKS];
size_t g_watched_count = 0;
#endif

// The most bytes of its stack `task` has used: uxTaskGetStackHighWaterMark counts StackType_t,
// words on a kernel built here, bytes on ESP-IDF (its StackType_t is uint8_t).
size_t used(TaskHandle_t task, size_t bytes) {
  const size_t unused = uxTaskGetStackHighWaterMark(task) * sizeof(StackType_t);
  return bytes > unused ? bytes - unused : 0;
}
void (*g_release)() = nullptr;  // set_idle_lock(): what idle() gives back while it waits
void (*g_take)() = nullptr;

#if defined(ESP_PLATFORM)
// ESP-IDF's FreeRTOS is SMP: masking one core's interrupts keeps nothing out of the other, so
// its critical sections take a spinlock besides (ESP-IDF's "FreeRTOS (IDF)" guide, "Critical
// Sections"): one for the inbox's posts.
portMUX_TYPE g_critical = portMUX_INITIALIZER_UNLOCKED;
#endif

// Whether the caller is an interrupt handler (the ...FromISR calls are for those only).
bool in_interrupt() {
#if defined(ESP_PLATFORM)
  return xPortInIsrContext() != pdFALSE;  // the core's own nesting count of interrupts
#elif defined(__arm__)
  return xPortIsInsideInterrupt() != pdFALSE;
#elif defined(__riscv)
  // The RISC-V port's trap entry switches to the interrupt stack, the linker's stack region
  // (__freertos_irq_stack_top, the board's linker script), and traps do not nest; every task's
  // stack is a static array elsewhere: once the scheduler runs, code on that region is an
  // interrupt's. (Before, main() runs there: a wake() from it gives the notification as an
  // interrupt does, which the kernel allows before it starts.)
  const uint32_t* sp = emcp::board::arch::stack_pointer();
  return sp >= &__stack_limit__ && sp <= &__stack_top__;
#else
#error "ports/freertos: in_interrupt() for this architecture (the kernel's port says whether an interrupt runs)"
#endif
}

}  // namespace

namespace emcp {
namespace board {

void set_owner(TaskHandle_t task, size_t stack_bytes) {
  g_owner = task;
  g_owner_stack_bytes = stack_bytes;
  (void)watch_stack(task, stack_bytes);
}

#if EMCP_FREERTOS_WATCHED_TASKS > 0
bool watch_stack(TaskHandle_t task, size_t stack_bytes) {
  if (task == nullptr) return false;
  const uint32_t state = critical_enter();
  const bool room = g_watched_count < EMCP_FREERTOS_WATCHED_TASKS;
  if (room) g_watched[g_watched_count++] = Watched{task, stack_bytes};
  critical_exit(state);
  return room;
}

size_t task_stacks(TaskStack* out, size_t max) {
  const uint32_t state = critical_enter();  // the count only grows: its entries are written
  const size_t n = g_watched_count;
  critical_exit(state);
  for (size_t i = 0; i < n && i < max; ++i) {
    const Watched& w = g_watched[i];
    out[i] = TaskStack{pcTaskGetName(w.task), w.bytes, used(w.task, w.bytes)};
  }
  return n;
}
#else
bool watch_stack(TaskHandle_t, size_t) { return false; }
size_t task_stacks(TaskStack*, size_t) { return 0; }
#endif

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

// The kernel's critical section, nestable, from a task or an interrupt (each takes its own
// form; the same context enters and exits). Only the inbox of a CPU without atomic
// read-modify-write uses it (platform(): EMCP_ATOMIC_RMW 0, as the ESP32-C3's RV32IMC).
uint32_t critical_enter() {
#if defined(ESP_PLATFORM)
  if (in_interrupt()) {
    taskENTER_CRITICAL_ISR(&g_critical);
  } else {
    taskENTER_CRITICAL(&g_critical);
  }
  return 0;
#else
  if (in_interrupt()) return static_cast<uint32_t>(taskENTER_CRITICAL_FROM_ISR());
  taskENTER_CRITICAL();
  return 0;
#endif
}

void critical_exit(uint32_t state) {
#if defined(ESP_PLATFORM)
  (void)state;
  if (in_interrupt()) {
    taskEXIT_CRITICAL_ISR(&g_critical);
  } else {
    taskEXIT_CRITICAL(&g_critical);
  }
#else
  if (in_interrupt()) {
    taskEXIT_CRITICAL_FROM_ISR(static_cast<UBaseType_t>(state));
  } else {
    taskEXIT_CRITICAL();
  }
#endif
}

size_t stack_size() { return g_owner_stack_bytes; }

size_t stack_high_water() { return g_owner == nullptr ? 0 : used(g_owner, g_owner_stack_bytes); }

}  // namespace board
}  // namespace emcp
