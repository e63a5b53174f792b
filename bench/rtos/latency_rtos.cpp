// emcp-inbox-latency-rtos: firmware for scripts/bench (bench/rtos/guest_latency.py drives it in
// QEMU): how long a post to the server's inbox (emcp/mcp/inbox.h) takes, under FreeRTOS on
// mps2-an385, to leave the owner task as the first byte of its notification on the UART; from a
// task and from an interrupt.
//
// The owner task serves the UART with the library's loop (emcp::board::serve_uart, as the sensors
// image's owner, at its priority 1); the stdio transport's output goes through timed_flush(),
// which takes the time before it hands a message's bytes to the UART. The CMSDK APB timer
// TIMER0 (IRQ 8) interrupts at pseudo-random intervals of 0.5 to 1.5 ms (never in step with the
// kernel's 1 kHz tick, which wakes the owner on its own); at each, depending on the run:
//   isr   its handler takes the time and posts a log line carrying the post's number
//         (Inbox::log(kInfo, "<n>", "bench"));
//   task  its handler gives the producer task (priority 2, above the owner: as the sensors
//         image's sensor task) its notification; the task takes the time and posts the same.
// The clock is TIMER1, free running (no interrupt) at the 25 MHz peripheral clock, which on the
// AN385 is the CPU's clock: one count is a CPU cycle of the modelled 25 MHz Cortex-M3, read from
// one register in any context.
//
// Tools: run {source: "task"|"isr", posts: N} starts N posts (at most kMaxPosts) and answers at
// once; results answers, once every post has been written, one line of text:
//   source=S posts=N refused=R bad=B ticks=T cycles=C samples=L1,L2,...
// refused: posts the inbox refused (a full inbox: each counted, the number posted again next
// time); bad: notifications timed_flush saw out of order (the driver fails on any); ticks and
// cycles: the kernel's ticks and TIMER1's counts over the run (cycles per tick says what one
// count is worth in the kernel's time); L: each post's latency in TIMER1 counts.
//
// QEMU does not model cycles: both timers count on its virtual clock, which follows the host's
// time while the guest runs (or, with -icount, the guest's instructions). Its figures are QEMU's.
#include <stdint.h>

#include "FreeRTOS.h"
#include "board/arch.h"
#include "board/board.h"
#include "board/freertos.h"
#include "board/serve.h"
#include "emcp/json/number.h"
#include "emcp/mcp/inbox.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "task.h"

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;

#ifndef EMCP_LATENCY_OWNER_STACK
#define EMCP_LATENCY_OWNER_STACK 4096
#endif
#ifndef EMCP_LATENCY_PRODUCER_STACK
#define EMCP_LATENCY_PRODUCER_STACK 1536
#endif

namespace {

constexpr ServerInfo kInfo{"emcp-inbox-latency", "1.0.0"};
uint64_t now_ms() { return emcp::board::now_ms(); }
void wake() { emcp::board::wake(); }
// The board's clock and emcp::board::wake(): a post wakes the owner task at once.
constexpr emcp::Platform kPlatform{&now_ms, nullptr, nullptr, nullptr, &wake};

// ---- The CMSDK APB timers (QEMU's mps2-an385, the AN385 documentation) -------------------------

struct CmsdkTimer {
  volatile uint32_t ctrl;      // bit 0 enable, bit 3 interrupt enable
  volatile uint32_t value;     // counts down at the 25 MHz peripheral clock
  volatile uint32_t reload;
  volatile uint32_t intclear;  // write 1 to clear
};
CmsdkTimer& timer0() { return *reinterpret_cast<CmsdkTimer*>(0x40000000u); }
CmsdkTimer& timer1() { return *reinterpret_cast<CmsdkTimer*>(0x40001000u); }
constexpr uint32_t kIrqTimer0 = 8;

// TIMER1's counts since it started: 25 MHz, wraps after 171 s (differences stay right).
inline uint32_t cycles() { return 0xFFFFFFFFu - timer1().value; }

// ---- The run ---------------------------------------------------------------------------------

constexpr uint32_t kMaxPosts = 2000;
enum Source : uint32_t { kNone, kTask, kIsr };

uint32_t g_post_t[kMaxPosts];  // when post n was made (TIMER1)
uint32_t g_latency[kMaxPosts];  // its latency, counts
volatile uint32_t g_source = kNone;
volatile uint32_t g_posts = 0;    // to make
volatile uint32_t g_posted = 0;   // taken by the inbox (the next number)
volatile uint32_t g_refused = 0;
uint32_t g_written = 0;           // owner: notifications written, in order
uint32_t g_bad = 0;               // owner: notifications out of order
uint32_t g_tick0 = 0, g_cycles0 = 0;
uint32_t g_lcg = 12345u;          // the intervals' generator (the interrupt's)
TaskHandle_t g_producer = nullptr;

// `v` in decimal into `out` (at least 20 bytes): the core's number writer.
size_t format(uint32_t v, char* out) { return emcp::json::format_uint64(v, out); }

StaticInbox<8, 32> g_inbox;

// One post, from the producer task or the interrupt (one of them per run).
void post_next() {
  const uint32_t seq = g_posted;
  char text[20];
  const size_t n = format(seq, text);
  g_post_t[seq] = cycles();
  if (g_inbox.log(LogLevel::kInfo, StrView(text, n), "bench") == Status::kOk) {
    g_posted = seq + 1;
  } else {
    g_refused = g_refused + 1;
  }
}

// The next interval: 0.5 to 1.5 ms of the 25 MHz clock.
uint32_t next_interval() {
  g_lcg = g_lcg * 1664525u + 1013904223u;
  return 12500u + (g_lcg >> 8) % 25000u;
}

bool starts_with(const char* p, size_t n, const char* s) {
  size_t i = 0;
  for (; s[i] != '\0'; ++i)
    if (i >= n || p[i] != s[i]) return false;
  return true;
}

// The stdio transport's output: the time is taken before a message's first byte goes to the UART
// (each notification here is one call: it fits the transport's 256-byte buffer).
Status timed_flush(void*, const char* data, size_t n) {
  const uint32_t t = cycles();
  static const char kHead[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"";
  if (starts_with(data, n, kHead)) {
    // "data":"<n>"
    uint32_t seq = 0;
    bool found = false;
    for (size_t i = 0; i + 8 < n; ++i) {
      if (starts_with(data + i, n - i, "\"data\":\"")) {
        for (size_t j = i + 8; j < n && data[j] >= '0' && data[j] <= '9'; ++j) {
          seq = seq * 10 + static_cast<uint32_t>(data[j] - '0');
          found = true;
        }
        break;
      }
    }
    if (found && seq == g_written && seq < kMaxPosts) {
      g_latency[seq] = t - g_post_t[seq];
      ++g_written;
    } else {
      ++g_bad;
    }
  }
  emcp::board::uart_write(data, n);
  return Status::kOk;
}

}  // namespace

Server g_server(kInfo, kPlatform);
emcp::transport::StaticLineTransport<> g_link(g_server, &timed_flush, nullptr);

// The tasks' memory, by the names bench/rtos/firmware.cmake gives the footprint check.
StackType_t g_owner_stack[EMCP_LATENCY_OWNER_STACK / sizeof(StackType_t)];
StackType_t g_producer_stack[EMCP_LATENCY_PRODUCER_STACK / sizeof(StackType_t)];

namespace {
StaticTask_t g_owner_tcb, g_producer_tcb;
constexpr UBaseType_t kOwnerPriority = 1;
constexpr UBaseType_t kProducerPriority = 2;

void timer_start() {
  CmsdkTimer& t = timer0();
  t.ctrl = 0;
  t.reload = next_interval();
  t.value = t.reload;
  t.intclear = 1u;
  t.ctrl = 1u | 8u;
}
}  // namespace

// TIMER0: one post (isr) or the producer's notification (task) at each; stops after the last.
extern "C" void IRQ8_Handler() {
  CmsdkTimer& t = timer0();
  t.intclear = 1u;
  if (g_posted + g_refused >= g_posts) {
    t.ctrl = 0;
    return;
  }
  t.reload = next_interval();
  t.value = t.reload;
  if (g_source == kIsr) {
    post_next();
  } else {
    BaseType_t woken = pdFALSE;
    vTaskNotifyGiveFromISR(g_producer, &woken);
    portYIELD_FROM_ISR(woken);
  }
}

// The producer task's entry (TASKS: producer): one post per notification from TIMER0.
extern "C" void producer_task(void*) {
  for (;;) {
    (void)ulTaskNotifyTake(pdTRUE, portMAX_DELAY);
    post_next();
  }
}

namespace {

void run(ToolCall& call) {
  const StrView source = call.str("source");
  const int64_t posts = call.integer("posts");
  if (g_source != kNone && (g_written + g_bad < g_posted || g_posted + g_refused < g_posts)) return call.fail("a run is on");
  if (posts < 1 || posts > static_cast<int64_t>(kMaxPosts)) return call.fail("posts: 1 to 2000");
  const Source s = source.equals("task") ? kTask : source.equals("isr") ? kIsr : kNone;
  if (s == kNone) return call.fail("source: task or isr");
  g_written = 0;
  g_bad = 0;
  g_posted = 0;
  g_refused = 0;
  g_posts = static_cast<uint32_t>(posts);
  g_source = s;
  g_tick0 = xTaskGetTickCount();
  g_cycles0 = cycles();
  timer_start();
  call.text("started");
}

char g_text[64 + kMaxPosts * 11];

void results(ToolCall& call) {
  if (g_source == kNone) return call.fail("no run yet");
  if (g_posted + g_refused < g_posts || g_written + g_bad < g_posted) return call.fail("running");
  size_t n = 0;
  auto put = [&](const char* s) {
    while (*s != '\0' && n < sizeof g_text) g_text[n++] = *s++;
  };
  auto num = [&](uint32_t v) {
    if (n + 20 < sizeof g_text) n += format(v, g_text + n);
  };
  put(g_source == kTask ? "source=task" : "source=isr");
  put(" posts=");
  num(g_posted);
  put(" refused=");
  num(g_refused);
  put(" bad=");
  num(g_bad);
  put(" ticks=");
  num(xTaskGetTickCount() - g_tick0);
  put(" cycles=");
  num(cycles() - g_cycles0);
  put(" samples=");
  for (uint32_t i = 0; i < g_written; ++i) {
    if (i != 0) put(",");
    num(g_latency[i]);
  }
  call.text(StrView(g_text, n));
}

const Param kRunParams[] = {Param::string("source", "task or isr").required(),
                            Param::integer("posts", "How many posts").required()};
const Tool kTools[] = {
    Tool::make("run", &run).describe("Starts a run of posts from a task or the timer interrupt").with_params(kRunParams),
    Tool::make("results", &results).describe("Each post's latency, in TIMER1 counts"),
};

}  // namespace

extern "C" void owner_task(void*) {
  emcp::board::init();
  // TIMER1: the clock (free running, no interrupt); TIMER0's interrupt at a priority the kernel
  // masks (FromISR calls allowed), one below the UART's receive interrupt.
  timer1().ctrl = 0;
  timer1().reload = 0xFFFFFFFFu;
  timer1().value = 0xFFFFFFFFu;
  timer1().ctrl = 1u;
  emcp::board::arch::nvic_set_priority(kIrqTimer0, static_cast<uint8_t>(configMAX_SYSCALL_INTERRUPT_PRIORITY + (1u << (8 - configPRIO_BITS))));
  emcp::board::arch::nvic_enable(kIrqTimer0);
  g_server.set_tools(kTools);
  g_server.set_inbox(g_inbox);
  emcp::board::serve_uart(g_server, g_link, "emcp-inbox-latency", emcp::board::Loop());
}

int main() {
  TaskHandle_t owner = xTaskCreateStatic(&owner_task, "emcp", sizeof g_owner_stack / sizeof(StackType_t), nullptr,
                                         kOwnerPriority, g_owner_stack, &g_owner_tcb);
  emcp::board::set_owner(owner, sizeof g_owner_stack);
  g_producer = xTaskCreateStatic(&producer_task, "producer", sizeof g_producer_stack / sizeof(StackType_t), nullptr,
                                 kProducerPriority, g_producer_stack, &g_producer_tcb);
  vTaskStartScheduler();  // never returns: every task's memory is static, nothing can fail
  for (;;) {
  }
}
