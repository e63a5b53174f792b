// lwIP's sys_arch on FreeRTOS (include/arch/sys_arch.h): mailboxes, semaphores and mutexes as
// FreeRTOS queues created with their *Static() calls over fixed pools, tcpip_thread's task over
// a static stack, the tick as sys_now(), the kernel's critical section as SYS_ARCH_PROTECT, and
// the core lock with its holder recorded for LWIP_ASSERT_CORE_LOCKED. No heap: the kernel is
// built without one (configSUPPORT_DYNAMIC_ALLOCATION 0) and nothing here allocates.
#include <stddef.h>
#include <stdint.h>

#include "FreeRTOS.h"
#include "board/freertos.h"
#include "lwip/opt.h"
#include "lwip/sys.h"
#include "lwip/tcpip.h"
#include "queue.h"
#include "semphr.h"
#include "task.h"

static_assert(!NO_SYS && LWIP_TCPIP_CORE_LOCKING, "ports/freertos/lwip is lwIP's sys_arch with NO_SYS 0 and the core lock");
static_assert(configSUPPORT_STATIC_ALLOCATION && !configSUPPORT_DYNAMIC_ALLOCATION,
              "lwIP's OS objects come from static pools (ports/freertos/lwip/sys_arch.cpp)");
static_assert(configTICK_RATE_HZ == 1000, "sys_now() and the timeouts count ticks as milliseconds");

namespace {

// The largest mailbox lwIP may ask for: tcpip_thread's, or netconn's (none in emcp's images).
template <typename T>
constexpr T larger(T a, T b) {
  return a > b ? a : b;
}
constexpr int kMboxCapacity =
    larger(larger(larger(TCPIP_MBOX_SIZE, DEFAULT_RAW_RECVMBOX_SIZE), larger(DEFAULT_UDP_RECVMBOX_SIZE, DEFAULT_TCP_RECVMBOX_SIZE)),
           DEFAULT_ACCEPTMBOX_SIZE);
static_assert(kMboxCapacity > 0, "TCPIP_MBOX_SIZE: tcpip_thread's mailbox holds at least one message");

struct MboxSlot {
  StaticQueue_t queue;
  uint8_t storage[static_cast<size_t>(kMboxCapacity) * sizeof(void*)];
};
// A pool of `N` slots of T, each taken or free; the most ever taken, for the report.
template <typename T, size_t N>
struct Pool {
  T slots[N];
  bool taken[N];
  uint16_t in_use, high_water;

  int take() {
    for (size_t i = 0; i < N; ++i) {
      if (!taken[i]) {
        taken[i] = true;
        if (++in_use > high_water) high_water = in_use;
        return static_cast<int>(i);
      }
    }
    return -1;
  }
  void give(int i) {
    if (i < 0 || static_cast<size_t>(i) >= N || !taken[i]) return;
    taken[i] = false;
    --in_use;
  }
};

Pool<MboxSlot, EMCP_LWIP_SYS_MBOXES> g_mboxes;
Pool<StaticSemaphore_t, EMCP_LWIP_SYS_SEMS> g_sems;
Pool<StaticSemaphore_t, EMCP_LWIP_SYS_MUTEXES> g_mutexes;
uint16_t g_refused = 0;

TaskHandle_t g_tcpip_thread = nullptr;  // set by tcpip_thread itself (LWIP_MARK_TCPIP_THREAD)
TaskHandle_t g_core_holder = nullptr;   // the task holding lock_tcpip_core, else null

// Pools are taken and given back by tasks only, inside the kernel's critical section.
template <typename P>
int take(P& pool) {
  taskENTER_CRITICAL();
  const int slot = pool.take();
  if (slot < 0) ++g_refused;
  taskEXIT_CRITICAL();
  return slot;
}
template <typename P>
void give(P& pool, int slot) {
  taskENTER_CRITICAL();
  pool.give(slot);
  taskEXIT_CRITICAL();
}

QueueHandle_t queue(const emcp_sys_object* o) { return static_cast<QueueHandle_t>(o->handle); }

// Deletes the object (a static queue: the kernel frees nothing) and gives its slot back.
template <typename P>
void release(P& pool, emcp_sys_object* o) {
  if (o->handle == nullptr) return;
  vQueueDelete(queue(o));
  give(pool, o->slot);
  o->handle = nullptr;
  o->slot = -1;
}

// A semaphore or mutex from `pool`, made by `create` over the slot's memory.
template <typename P, typename Create>
err_t make(P& pool, emcp_sys_object* o, Create create) {
  o->handle = nullptr;
  o->slot = -1;
  const int slot = take(pool);
  if (slot < 0) return ERR_MEM;
  o->handle = create(&pool.slots[slot]);
  o->slot = static_cast<int16_t>(slot);
  return ERR_OK;
}

// Waits for `take` up to `timeout_ms` (0: for ever); the milliseconds waited, or SYS_ARCH_TIMEOUT.
template <typename Take>
u32_t timed(u32_t timeout_ms, Take take) {
  const TickType_t start = xTaskGetTickCount();
  if (timeout_ms == 0) {
    while (take(portMAX_DELAY) != pdTRUE) {
    }
  } else if (take(pdMS_TO_TICKS(timeout_ms)) != pdTRUE) {
    return SYS_ARCH_TIMEOUT;
  }
  return static_cast<u32_t>((xTaskGetTickCount() - start) * portTICK_PERIOD_MS);
}

// tcpip_thread's stack and control block (the footprint check names the stack: the task "tcpip").
bool g_thread_started = false;

}  // namespace

StackType_t g_tcpip_stack[TCPIP_THREAD_STACKSIZE / sizeof(StackType_t)];
StaticTask_t g_tcpip_tcb;

extern "C" {

void sys_init(void) {}

u32_t sys_now(void) { return static_cast<u32_t>(xTaskGetTickCount() * portTICK_PERIOD_MS); }

// The kernel's critical section nests (it counts), so one SYS_ARCH_PROTECT inside another is
// safe; tasks only (the driver's interrupt calls no lwIP).
sys_prot_t sys_arch_protect(void) {
  taskENTER_CRITICAL();
  return 0;
}

void sys_arch_unprotect(sys_prot_t) { taskEXIT_CRITICAL(); }

// ---- mailboxes
err_t sys_mbox_new(sys_mbox_t* mbox, int size) {
  sys_mbox_set_invalid(mbox);
  if (size <= 0 || size > kMboxCapacity) {  // larger than a slot: lwipopts' sizes disagree
    taskENTER_CRITICAL();
    ++g_refused;
    taskEXIT_CRITICAL();
    return ERR_MEM;
  }
  const int slot = take(g_mboxes);
  if (slot < 0) return ERR_MEM;
  MboxSlot& s = g_mboxes.slots[slot];
  mbox->handle = xQueueCreateStatic(static_cast<UBaseType_t>(size), sizeof(void*), s.storage, &s.queue);
  mbox->slot = static_cast<int16_t>(slot);
  return ERR_OK;
}

void sys_mbox_free(sys_mbox_t* mbox) { release(g_mboxes, mbox); }

void sys_mbox_post(sys_mbox_t* mbox, void* msg) {
  while (xQueueSendToBack(queue(mbox), &msg, portMAX_DELAY) != pdTRUE) {
  }
}

err_t sys_mbox_trypost(sys_mbox_t* mbox, void* msg) {
  return xQueueSendToBack(queue(mbox), &msg, 0) == pdTRUE ? ERR_OK : ERR_MEM;
}

err_t sys_mbox_trypost_fromisr(sys_mbox_t* mbox, void* msg) {
  BaseType_t woken = pdFALSE;
  const BaseType_t sent = xQueueSendToBackFromISR(queue(mbox), &msg, &woken);
  portYIELD_FROM_ISR(woken);
  return sent == pdTRUE ? ERR_OK : ERR_MEM;
}

u32_t sys_arch_mbox_fetch(sys_mbox_t* mbox, void** msg, u32_t timeout_ms) {
  void* got = nullptr;
  const u32_t waited = timed(timeout_ms, [&](TickType_t ticks) { return xQueueReceive(queue(mbox), &got, ticks); });
  if (msg != nullptr) *msg = waited == SYS_ARCH_TIMEOUT ? nullptr : got;
  return waited;
}

u32_t sys_arch_mbox_tryfetch(sys_mbox_t* mbox, void** msg) {
  void* got = nullptr;
  if (xQueueReceive(queue(mbox), &got, 0) != pdTRUE) return SYS_MBOX_EMPTY;
  if (msg != nullptr) *msg = got;
  return 0;
}

// ---- semaphores (binary, as lwIP uses them)
err_t sys_sem_new(sys_sem_t* sem, u8_t count) {
  const err_t made = make(g_sems, sem, [](StaticSemaphore_t* m) { return xSemaphoreCreateBinaryStatic(m); });
  if (made == ERR_OK && count != 0) (void)xSemaphoreGive(queue(sem));
  return made;
}

void sys_sem_free(sys_sem_t* sem) { release(g_sems, sem); }

void sys_sem_signal(sys_sem_t* sem) { (void)xSemaphoreGive(queue(sem)); }

u32_t sys_arch_sem_wait(sys_sem_t* sem, u32_t timeout_ms) {
  return timed(timeout_ms, [&](TickType_t ticks) { return xSemaphoreTake(queue(sem), ticks); });
}

// ---- mutexes (priority inheritance: a low-priority holder of the core lock runs at its
// waiter's priority until it gives the lock back)
err_t sys_mutex_new(sys_mutex_t* mutex) {
  return make(g_mutexes, mutex, [](StaticSemaphore_t* m) { return xSemaphoreCreateMutexStatic(m); });
}

void sys_mutex_free(sys_mutex_t* mutex) { release(g_mutexes, mutex); }

void sys_mutex_lock(sys_mutex_t* mutex) {
  while (xSemaphoreTake(queue(mutex), portMAX_DELAY) != pdTRUE) {
  }
}

void sys_mutex_unlock(sys_mutex_t* mutex) { (void)xSemaphoreGive(queue(mutex)); }

// ---- the one thread lwIP starts: tcpip_thread, on g_tcpip_stack. A second thread, or a stack
// larger than the array, is a configuration error: lwIP's assertion says so at start.
sys_thread_t sys_thread_new(const char* name, lwip_thread_fn thread, void* arg, int stacksize, int prio) {
  LWIP_ASSERT("sys_thread_new: one thread only (tcpip_thread), on g_tcpip_stack", !g_thread_started);
  LWIP_ASSERT("sys_thread_new: a stack larger than TCPIP_THREAD_STACKSIZE",
              stacksize > 0 && static_cast<size_t>(stacksize) <= sizeof g_tcpip_stack);
  g_thread_started = true;
  TaskHandle_t task = xTaskCreateStatic(thread, name, sizeof g_tcpip_stack / sizeof(StackType_t), arg,
                                        static_cast<UBaseType_t>(prio), g_tcpip_stack, &g_tcpip_tcb);
  (void)emcp::board::watch_stack(task, sizeof g_tcpip_stack);  // device_stats' "tasks"
  return task;
}

// ---- the core lock and its check
void emcp_lwip_lock_core(void) {
  sys_mutex_lock(&lock_tcpip_core);
  g_core_holder = xTaskGetCurrentTaskHandle();
}

void emcp_lwip_unlock_core(void) {
  g_core_holder = nullptr;
  sys_mutex_unlock(&lock_tcpip_core);
}

void emcp_lwip_mark_tcpip_thread(void) { g_tcpip_thread = xTaskGetCurrentTaskHandle(); }

// Before tcpip_thread runs, tcpip_init() (lwip_init) is alone in lwIP: nothing to check yet.
// After, a raw API call from an interrupt, or from a task without the core lock, stops here.
void emcp_lwip_assert_core_locked(void) {
  if (g_tcpip_thread == nullptr) return;
  LWIP_ASSERT("lwIP called from an interrupt", xPortIsInsideInterrupt() == pdFALSE);
  LWIP_ASSERT("lwIP called without the core lock (LOCK_TCPIP_CORE)", g_core_holder == xTaskGetCurrentTaskHandle());
}

struct emcp_lwip_sys_stats emcp_lwip_sys_stats(void) {
  struct emcp_lwip_sys_stats s{};
  taskENTER_CRITICAL();
  s.mboxes = g_mboxes.in_use, s.mboxes_max = g_mboxes.high_water;
  s.sems = g_sems.in_use, s.sems_max = g_sems.high_water;
  s.mutexes = g_mutexes.in_use, s.mutexes_max = g_mutexes.high_water;
  s.refused = g_refused;
  taskEXIT_CRITICAL();
  return s;
}

}  // extern "C"
