// emcp-sensors under FreeRTOS: the same firmware as bare metal (main_board.cpp's
// sensors_firmware(), built with EMCP_SENSORS_NO_MAIN: the application over the UART in
// emcp::board::serve()'s loop) in the task that owns the server, beside a sensor task sampling on
// a timer. Static allocation only: the tasks' stacks and control blocks are the arrays below.
// emcp-sensors-net-rtos (EMCP_SENSORS_NETWORK): main_board_net.cpp's sensors_net_firmware()
// instead, over the UART and lwIP at once, lwIP in its own thread (tcpip_thread, priority 3)
// beside the NIC's receive task (3): boards/<board>/net.cpp starts both.
//
// On ESP-IDF (ESP_PLATFORM, boards/esp32/examples/*/main) the same file: there the scheduler
// runs before the application does, and its app_main() (main/main.cpp) calls
// sensors_rtos_start() instead of this file's main(); no interrupt of this file posts there
// (the uptime's timer below is the emulated boards'), the sensor task does.
//
// Priorities (configMAX_PRIORITIES 4, ports/freertos/config/emcp_freertos_config.h): the
// kernel's idle task 0; the owner task 1, busy while there is input or output; the sensor
// task 2, above it, so that its samples keep their period whatever the server is doing (it
// runs for a few microseconds each time). The UART's receive interrupt and the uptime's (timer
// 1's on mps2-an385, the CLINT's software interrupt on the hifive1: below) outrank both. Both
// post their samples to the server's inbox: the owner announces the changes
// (docs/concurrency.md). On ESP-IDF the same 1 and 2 of its 25: level with app_main()'s task,
// which ends once it started these, and below every task of ESP-IDF's own (lwIP's tcpip
// thread 18, esp_timer's 22: esp_task.h), which the owner outranks only while one of them waits
// for lwIP's core lock it holds (priority inheritance).
#include <stdint.h>

#include <string.h>

#include "app.h"
#include "board/board.h"
#include "board/freertos.h"
#include "emcp/mcp/inbox.h"
#include "emcp/mcp/server.h"
#include "sensors.h"
#if !defined(ESP_PLATFORM)
#include "board/arch.h"
#endif

void sensors_firmware();            // main_board.cpp
void sensors_net_firmware();        // main_board_net.cpp (the network image: EMCP_SENSORS_NETWORK)
extern emcp::mcp::Server g_server;  // main_board.cpp or main_board_net.cpp

// The stacks' sizes, in bytes: the footprint check (tools/footprint.py, after every link)
// fails the build when a task's worst case does not fit its stack.
#ifndef EMCP_SENSORS_OWNER_STACK
#define EMCP_SENSORS_OWNER_STACK 5120
#endif
#ifndef EMCP_SENSORS_SENSOR_STACK
#define EMCP_SENSORS_SENSOR_STACK 512
#endif
// The sensor task's period.
#ifndef EMCP_SENSORS_SAMPLE_MS
#define EMCP_SENSORS_SAMPLE_MS 100
#endif

// The tasks' memory, by the names examples/sensors/firmware.cmake gives the footprint check
// (TASKS): the owner's and the sensor task's stacks.
StackType_t g_owner_stack[EMCP_SENSORS_OWNER_STACK / sizeof(StackType_t)];
StaticTask_t g_owner_tcb;
StackType_t g_sensor_stack[EMCP_SENSORS_SENSOR_STACK / sizeof(StackType_t)];
StaticTask_t g_sensor_tcb;

namespace {
constexpr UBaseType_t kSensorPriority = tskIDLE_PRIORITY + 2;

// The server's inbox (emcp/mcp/inbox.h, docs/concurrency.md): how the sensor task and the timer
// interrupt hand their samples to the owner. 8 slots of a double each (the hifive1's 16 KiB of
// RAM: 4, board.cmake).
#ifndef EMCP_SENSORS_INBOX_SLOTS
#define EMCP_SENSORS_INBOX_SLOTS 8
#endif
emcp::mcp::StaticInbox<EMCP_SENSORS_INBOX_SLOTS, 16> g_inbox;
// Samples the inbox refused (full): the poster saw kNoSpace and dropped the sample; counted.
volatile uint32_t g_samples_refused = 0;

// On the owner (the inbox's work, run by the server's poll()): the application announces the
// change (app::sampled()).
template <int kSensor>
emcp::Status sampled(emcp::mcp::Server&, void*, const void* bytes, size_t n) {
  double v = 0;
  if (n == sizeof v) memcpy(&v, bytes, sizeof v);
  app::sampled(kSensor, v);
  return emcp::Status::kOk;
}

template <int kSensor>
void post_sample(double v) {
  if (g_inbox.post(&sampled<kSensor>, nullptr, &v, sizeof v) != emcp::Status::kOk)
    g_samples_refused = g_samples_refused + 1;
}

#if !defined(ESP_PLATFORM)  // the emulated boards' interrupt that posts (ESP-IDF: none here)
constexpr uint32_t kUptimeSamplesPerSecond = 4;

// The uptime sensor is sampled in an interrupt, 4 times a second, and posted from there (a post
// never blocks, lock-free on the Cortex-M3 and on RV32IMAC).
void sample_uptime() {
  const uint64_t ms = static_cast<uint64_t>(xTaskGetTickCountFromISR()) * portTICK_PERIOD_MS;
  post_sample<static_cast<int>(sensors::Id::kUptime)>(sensors::read(sensors::Id::kUptime, ms).value);
}

#if defined(__arm__)
// The MPS2's CMSDK APB timer 1 (0x40001000, IRQ 9, 25 MHz): its interrupt samples the uptime.
// Its priority allows FreeRTOS calls from the handler (emcp::board::wake()).
struct CmsdkTimer {
  volatile uint32_t ctrl, value, reload, intstatus;
};
CmsdkTimer& timer1() { return *reinterpret_cast<CmsdkTimer*>(0x40001000u); }
constexpr uint32_t kTimer1Irq = 9;
constexpr uint32_t kTimerHz = 25000000;

void start_uptime_timer() {
  timer1().ctrl = 0;
  timer1().reload = kTimerHz / kUptimeSamplesPerSecond - 1;
  timer1().value = kTimerHz / kUptimeSamplesPerSecond - 1;
  timer1().intstatus = 1;  // clear
  emcp::board::arch::nvic_set_priority(kTimer1Irq, configMAX_SYSCALL_INTERRUPT_PRIORITY);
  emcp::board::arch::nvic_enable(kTimer1Irq);
  timer1().ctrl = 1u | 8u;  // enable, interrupt enable
}
#elif defined(__riscv)
// The hifive1 (FE310; QEMU 7.2's sifive_e): no timer is free there. The CLINT's machine timer
// is the kernel's tick, and QEMU models neither the PWMs nor the always-on block's RTC and
// watchdog (unimplemented devices). So the tick hook, in the tick's interrupt, raises the
// CLINT's machine software interrupt (msip) every 250 ticks, and that interrupt's handler
// samples the uptime: a handler of its own that posts, as timer 1's on the MPS2. Any interrupt
// may call the kernel's ...FromISR functions here (boards/hifive1/freertos/FreeRTOSConfig.h).
volatile uint32_t& msip() { return *reinterpret_cast<volatile uint32_t*>(0x02000000u); }  // hart 0's
constexpr uint32_t kUptimeTicks = configTICK_RATE_HZ / kUptimeSamplesPerSecond;
uint32_t g_uptime_ticks = 0;

void start_uptime_timer() {
  msip() = 0;
  __asm__ volatile("csrs mie, %0" ::"r"(1u << 3));  // MSIE; mstatus.MIE stays clear until the scheduler runs
}
#endif
#endif  // !ESP_PLATFORM
}  // namespace

extern "C" {

// The task that owns the server: emcp::board::serve()'s loop, for ever. In the network image it also
// starts lwIP's thread and the NIC's receive task (emcp::board::net_init(), boards/<board>/net.cpp) and
// holds lwIP's core lock but while it waits.
void owner_task(void*) {
#if EMCP_SENSORS_NETWORK
  sensors_net_firmware();
#else
  sensors_firmware();
#endif
}

// Samples the temperature every EMCP_SENSORS_SAMPLE_MS, on the kernel's timer, and posts each
// sample to the owner (which announces a change of the value the resource shows).
void sensor_task(void*) {
  TickType_t last = xTaskGetTickCount();
  for (;;) {
    (void)xTaskDelayUntil(&last, pdMS_TO_TICKS(EMCP_SENSORS_SAMPLE_MS));
    const sensors::Reading r = sensors::read(sensors::Id::kTemperature, emcp::board::now_ms());
    post_sample<static_cast<int>(sensors::Id::kTemperature)>(r.value);
  }
}

#if defined(ESP_PLATFORM)
// (ESP-IDF: no interrupt of this file's.)
#elif defined(__arm__)
// Timer 1's interrupt: the uptime sensor's sample, posted from the interrupt.
void IRQ9_Handler() {
  timer1().intstatus = 1;
  sample_uptime();
}
#elif defined(__riscv)
// The tick's interrupt (the kernel's xTaskIncrementTick calls it): every 250th raises the
// software interrupt, taken when the tick's handler returns.
void vApplicationTickHook() {
  if (++g_uptime_ticks == kUptimeTicks) {
    g_uptime_ticks = 0;
    msip() = 1;
  }
}

// The CLINT's machine software interrupt (common/arch/riscv.cpp dispatches it from the kernel's
// trap entry): the uptime sensor's sample, posted from the interrupt.
void MachineSoftware_Handler() {
  msip() = 0;
  sample_uptime();
}
#endif

}  // extern "C"

// The server's inbox, the uptime's interrupt and the two tasks: from main() before the scheduler
// starts, or from ESP-IDF's app_main() (the scheduler runs: each task may start at once, the
// owner before set_owner(), which only costs a wake() before it a tick). On ESP-IDF the tasks
// are unpinned (its xTaskCreateStatic is xTaskCreateStaticPinnedToCore with tskNO_AFFINITY) and
// their stacks' sizes are in bytes (its StackType_t is a byte): the same expressions.
void sensors_rtos_start() {
  // The inbox is the server's before any task or interrupt runs (nothing posts before it).
  g_server.set_inbox(g_inbox);
  // The owner's loop announces neither sensor's changes: those a client sees came through the
  // inbox (the SDK test's uptime subscription proves the interrupt's posts arrive).
  app::sampled_elsewhere(static_cast<int>(sensors::Id::kTemperature));
#if !defined(ESP_PLATFORM)
  app::sampled_elsewhere(static_cast<int>(sensors::Id::kUptime));
  start_uptime_timer();  // its interrupts wait for the scheduler (masked until it starts)
#endif
  (void)emcp::board::start_owner(&owner_task, g_owner_stack, g_owner_tcb);  // priority 1
  TaskHandle_t sensor = xTaskCreateStatic(&sensor_task, "sensor", sizeof g_sensor_stack / sizeof(StackType_t), nullptr,
                                          kSensorPriority, g_sensor_stack, &g_sensor_tcb);
  (void)emcp::board::watch_stack(sensor, sizeof g_sensor_stack);  // device_stats' "tasks"
}

#if !defined(ESP_PLATFORM)
int main() {
  sensors_rtos_start();
  vTaskStartScheduler();  // never returns: the idle task's memory is static, nothing can fail
  for (;;) {
  }
}
#endif
