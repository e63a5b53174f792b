// emcp-inbox-stress-rtos: tests/threads/inbox_stress.cpp's stress of the server's inbox
// (emcp/mcp/inbox.h) as firmware under FreeRTOS on mps2-an385, served on the UART for
// tests/mcp/inbox_stress.test.mjs and its SDK client (board_rtos_inbox_stress).
//
// The same tools, resources and posting pattern (inbox_stress.h) as on Linux, with tasks and a
// hardware interrupt instead of threads and a signal: four producer tasks, each at its own
// priority (below), post log lines with their sequence numbers and resource changes, with a
// burst that fills the inbox every 50th round; the CMSDK APB timer TIMER0 (IRQ 8) interrupts at
// EMCP_STRESS_ISR_HZ and its handler posts log lines as logger "isr". The tool `work` defers; a worker task finishes it
// through the inbox (complete_text: "<n * 2>"). `start` starts the producers and the timer
// (once the client has subscribed and set its log level); `stats` answers what has been posted
// so far, with every task's stack high-water mark, while they run; `stop` stops them and
// answers, once they have ended (the worker posts the answer after their last posts), with the
// same figures.
//
// Priorities (configMAX_PRIORITIES 4): p0 3, above the owner; p1 2, the owner's, sharing the
// CPU with it by time slices; p2 1, below it; p3 0, the idle task's level; the worker 3 (its
// completions must not wait for the owner to idle). Writing every notification to the UART
// keeps the owner busy whenever the inbox holds work, which under this load is nearly always:
// p2 and p3 run only in the owner's idle moments (p3 seldom: p2 goes first), with the
// inbox drained, so they are seldom refused; p0 and p1 meet it full.
// TIMER0's interrupt is one the kernel masks (FromISR calls are allowed there), below the
// UART's receive interrupt.
//
// No heap, no std::string: the answers are written by hand into a static buffer on the owner.
#include <stdint.h>

#include "FreeRTOS.h"
#include "board/arch.h"
#include "board/board.h"
#include "board/freertos.h"
#include "board/serve.h"
#include "emcp/mcp/inbox.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "inbox_stress.h"
#include "queue.h"
#include "task.h"

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;

// The timer interrupt's rate.
#ifndef EMCP_STRESS_ISR_HZ
#define EMCP_STRESS_ISR_HZ 1000
#endif
// Stack sizes, in bytes (checked after the link against each task's worst case: TASKS in
// tests/threads/firmware.cmake).
#ifndef EMCP_STRESS_OWNER_STACK
#define EMCP_STRESS_OWNER_STACK 4096
#endif
#ifndef EMCP_STRESS_TASK_STACK
#define EMCP_STRESS_TASK_STACK 1536
#endif

namespace {

using stress::kLoggers;
using stress::kProducers;
constexpr ServerInfo kInfo{"emcp-inbox-stress", "1.0.0"};

uint64_t now_ms() { return emcp::board::now_ms(); }
void wake() { emcp::board::wake(); }
// The board's platform with emcp::board::wake(): a post wakes the owner task at once.
constexpr emcp::Platform kPlatform{&now_ms, nullptr, nullptr, nullptr, &wake};

}  // namespace

Server g_server(kInfo, kPlatform);
emcp::transport::StaticLineTransport<> g_link(g_server, &emcp::board::uart_flush, nullptr);
StaticInbox<16, 64> g_inbox;

// The tasks' memory, by the names tests/threads/firmware.cmake gives the footprint check.
StackType_t g_owner_stack[EMCP_STRESS_OWNER_STACK / sizeof(StackType_t)];
StackType_t g_p0_stack[EMCP_STRESS_TASK_STACK / sizeof(StackType_t)];
StackType_t g_p1_stack[EMCP_STRESS_TASK_STACK / sizeof(StackType_t)];
StackType_t g_p2_stack[EMCP_STRESS_TASK_STACK / sizeof(StackType_t)];
StackType_t g_p3_stack[EMCP_STRESS_TASK_STACK / sizeof(StackType_t)];
StackType_t g_worker_stack[EMCP_STRESS_TASK_STACK / sizeof(StackType_t)];

namespace {

StaticTask_t g_owner_tcb, g_worker_tcb, g_producer_tcb[kProducers];
StackType_t* const kProducerStacks[kProducers] = {g_p0_stack, g_p1_stack, g_p2_stack, g_p3_stack};
constexpr UBaseType_t kOwnerPriority = 2;
constexpr UBaseType_t kWorkerPriority = 3;
constexpr UBaseType_t kProducerPriority[kProducers] = {3, 2, 1, 0};

stress::Counts g_counts[kProducers + 1];  // the producers, then the interrupt
volatile bool g_stop = false;
volatile bool g_done[kProducers] = {};
volatile uint32_t g_completions_refused = 0;
bool g_started = false;  // owner only

// ---- TIMER0: the CMSDK APB timer at 0x40000000, IRQ 8 (QEMU's mps2-an385, the AN385 doc) ------

struct CmsdkTimer {
  volatile uint32_t ctrl;    // bit 0 enable, bit 3 interrupt enable
  volatile uint32_t value;
  volatile uint32_t reload;  // counts down from it at the 25 MHz peripheral clock
  volatile uint32_t intclear;  // reads the interrupt status; write 1 to clear
};
CmsdkTimer& timer0() { return *reinterpret_cast<CmsdkTimer*>(0x40000000u); }
constexpr uint32_t kIrqTimer0 = 8;

void timer_start() {
  CmsdkTimer& t = timer0();
  t.ctrl = 0;
  t.reload = 25000000u / EMCP_STRESS_ISR_HZ - 1u;
  t.value = t.reload;
  t.intclear = 1u;
  // A priority the kernel masks (numerically at or above configMAX_SYSCALL_INTERRUPT_PRIORITY:
  // FromISR calls are allowed), one below the UART's receive interrupt.
  emcp::board::arch::nvic_set_priority(kIrqTimer0, static_cast<uint8_t>(configMAX_SYSCALL_INTERRUPT_PRIORITY + (1u << (8 - configPRIO_BITS))));
  emcp::board::arch::nvic_enable(kIrqTimer0);
  t.ctrl = 1u | 8u;
}

void timer_stop() {
  timer0().ctrl = 0;
  emcp::board::arch::nvic_disable(kIrqTimer0);  // a request already raised never runs after this
}

}  // namespace

extern "C" void IRQ8_Handler() {
  timer0().intclear = 1u;
  stress::post_log(g_inbox, g_counts[kProducers], kLoggers[kProducers]);
}

namespace {

// ---- Deferred calls finished by a worker task ------------------------------------------------

struct Job {
  Pending p;
  int64_t n;
  bool stop;  // `stop`'s answer: after every producer ended
};
constexpr UBaseType_t kJobs = 4;
StaticQueue_t g_jobs_queue;
uint8_t g_jobs_storage[kJobs * sizeof(Job)];
QueueHandle_t g_jobs = nullptr;

void write_final(ToolCall& call, void*);

}  // namespace

// The worker task's entry (TASKS: worker).
extern "C" void worker_task(void*) {
  for (;;) {
    Job job;
    (void)xQueueReceive(g_jobs, &job, portMAX_DELAY);
    if (job.stop) {
      for (int i = 0; i < kProducers; ++i)
        while (!g_done[i]) vTaskDelay(1);
      while (g_inbox.complete(job.p, &write_final, nullptr) == Status::kNoSpace) vTaskDelay(1);
      continue;
    }
    vTaskDelay(pdMS_TO_TICKS(2));  // the slow part of the work
    char text[12];
    const size_t n = stress::format(static_cast<uint32_t>(job.n * 2), text);
    // A full inbox: the worker tries again (the caller sees the refusal and decides).
    while (g_inbox.complete_text(job.p, StrView(text, n)) == Status::kNoSpace) {
      g_completions_refused = g_completions_refused + 1;
      vTaskDelay(1);
    }
  }
}

namespace {

void send_job(const Job& job) {
  // Never full: the client calls one tool at a time, and a queue of 4 holds them.
  if (xQueueSend(g_jobs, &job, 0) != pdPASS) (void)g_inbox.complete_text(job.p, "the worker's queue is full", true);
}

void work(ToolCall& call) {
  const Job job{call.defer(), call.integer("n"), false};
  if (!job.p.valid()) return;  // answered with an error (all deferred slots taken)
  send_job(job);
}

}  // namespace

// ---- The producers ---------------------------------------------------------------------------

// A producer's entry (TASKS: p0 to p3), `arg` its number.
extern "C" void producer_task(void* arg) {
  const int who = static_cast<int>(reinterpret_cast<intptr_t>(arg));
  TickType_t last = xTaskGetTickCount();
  for (uint32_t round = 0; !g_stop; ++round) {
    stress::round(g_inbox, g_counts[who], who, round);
    (void)xTaskDelayUntil(&last, pdMS_TO_TICKS(2 + who));
  }
  g_done[who] = true;
  vTaskSuspend(nullptr);
}

namespace {

TaskHandle_t g_producers[kProducers] = {};
TaskHandle_t g_owner = nullptr;
TaskHandle_t g_worker = nullptr;

void start(ToolCall& call) {
  if (g_started) return call.fail("started already");
  g_started = true;
  for (int i = 0; i < kProducers; ++i)
    g_producers[i] = xTaskCreateStatic(&producer_task, kLoggers[i], EMCP_STRESS_TASK_STACK / sizeof(StackType_t),
                                       reinterpret_cast<void*>(static_cast<intptr_t>(i)), kProducerPriority[i],
                                       kProducerStacks[i], &g_producer_tcb[i]);
  timer_start();
  call.text("started");
}

// ---- The figures, written by hand (no heap) ------------------------------------------------

stress::Out g_out;

// A task's stack: its size and the most of it ever used (the kernel's high-water mark), bytes.
void task_stack(stress::Out& o, const char* name, TaskHandle_t task, size_t size) {
  const uint32_t unused = task == nullptr ? size : uxTaskGetStackHighWaterMark(task) * sizeof(StackType_t);
  o.put(",\"");
  o.put(name);
  o.put("\":{");
  o.field("size", static_cast<uint32_t>(size), true);
  o.field("used", static_cast<uint32_t>(size - unused));
  o.put("}");
}

extern "C" uint32_t __stack_limit__, __stack_top__;
// The main stack (interrupts, once the scheduler runs): painted at reset (common/startup.cpp).
uint32_t main_stack_used() {
  const uint32_t* p = &__stack_limit__;
  while (p < &__stack_top__ && *p == 0xA5A5A5A5u) ++p;
  return static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&__stack_top__) - reinterpret_cast<uintptr_t>(p));
}

// What each producer posted and had refused, the inbox's counters, the notifications the server
// could not send and every stack's high-water mark: on the owner.
StrView figures(Server& server) {
  stress::Out& o = g_out;
  stress::write_counts(o, g_counts, g_inbox.stats(), g_completions_refused, server.notifications_dropped());
  o.put(",\"stacks\":{");
  o.put("\"main\":{");
  o.field("size", static_cast<uint32_t>(reinterpret_cast<uintptr_t>(&__stack_top__) - reinterpret_cast<uintptr_t>(&__stack_limit__)), true);
  o.field("used", main_stack_used());
  o.put("}");
  task_stack(o, "emcp", g_owner, sizeof g_owner_stack);
  task_stack(o, "worker", g_worker, sizeof g_worker_stack);
  for (int i = 0; i < kProducers; ++i) task_stack(o, kLoggers[i], g_producers[i], EMCP_STRESS_TASK_STACK);
  o.put("}}");
  return StrView(o.buf, o.n);
}

void write_final(ToolCall& call, void*) { call.text(figures(call.server())); }

void stats(ToolCall& call) { call.text(figures(call.server())); }

void stop(ToolCall& call) {
  if (!g_started || g_stop) return call.fail("not running");
  const Job job{call.defer(), 0, true};
  if (!job.p.valid()) return;
  timer_stop();
  g_stop = true;
  // The worker posts the answer once every producer ended: after their last posts.
  send_job(job);
}

void read_stream(ResourceRead& r) { r.text("a producer's stream"); }

const Param kWorkParams[] = {Param::integer("n", "Any number").required()};
const Tool kTools[] = {
    Tool::make("work", &work).describe("Answers n * 2 from a worker task").with_params(kWorkParams),
    Tool::make("start", &start).describe("Starts the producers and the timer interrupt"),
    Tool::make("stats", &stats).describe("What each producer posted so far, the inbox's counters, the stacks' high-water marks"),
    Tool::make("stop", &stop).describe("Stops the producers; answers with what each posted"),
};
const Resource kResources[] = {
    Resource::make("stress://p0", "p0", &read_stream), Resource::make("stress://p1", "p1", &read_stream),
    Resource::make("stress://p2", "p2", &read_stream), Resource::make("stress://p3", "p3", &read_stream)};

}  // namespace

extern "C" void owner_task(void*) {
  emcp::board::init();
  g_server.set_tools(kTools);
  g_server.set_resources(kResources);
  g_server.set_inbox(g_inbox);
  emcp::board::serve_uart(g_server, g_link, "emcp-inbox-stress", emcp::board::Loop());
}

int main() {
  g_jobs = xQueueCreateStatic(kJobs, sizeof(Job), g_jobs_storage, &g_jobs_queue);
  g_owner = xTaskCreateStatic(&owner_task, "emcp", sizeof g_owner_stack / sizeof(StackType_t), nullptr, kOwnerPriority,
                              g_owner_stack, &g_owner_tcb);
  emcp::board::set_owner(g_owner, sizeof g_owner_stack);
  g_worker = xTaskCreateStatic(&worker_task, "worker", sizeof g_worker_stack / sizeof(StackType_t), nullptr,
                               kWorkerPriority, g_worker_stack, &g_worker_tcb);
  vTaskStartScheduler();  // never returns: every task's memory is static, nothing can fail
  for (;;) {
  }
}
