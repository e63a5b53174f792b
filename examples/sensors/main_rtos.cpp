// emcp-sensors under FreeRTOS: the same firmware as bare metal (main_board.cpp's
// sensors_firmware(), built with EMCP_SENSORS_NO_MAIN: the application over the UART in
// board::serve()'s loop) in the task that owns the server, beside a sensor task sampling on
// a timer. Static allocation only: the tasks' stacks and control blocks are the arrays below.
// emcp-sensors-net-rtos (EMCP_SENSORS_NETWORK): main_board_net.cpp's sensors_net_firmware()
// instead, over the UART and lwIP at once, lwIP in its own thread (tcpip_thread, priority 3)
// beside the NIC's receive task (3): boards/<board>/net.cpp starts both.
//
// Priorities (configMAX_PRIORITIES 4, ports/freertos/config/emcp_freertos_config.h): the
// kernel's idle task 0; the owner task 1, busy while there is input or output; the sensor
// task 2, above it, so that its samples keep their period whatever the server is doing (it
// runs for a few microseconds each time). The UART's receive interrupt outranks both.
#include <stdint.h>

#include "FreeRTOS.h"
#include "board/board.h"
#include "board/freertos.h"
#include "sensors.h"
#include "task.h"

void sensors_firmware();      // main_board.cpp
void sensors_net_firmware();  // main_board_net.cpp (the network image: EMCP_SENSORS_NETWORK)

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
constexpr UBaseType_t kOwnerPriority = tskIDLE_PRIORITY + 1;
constexpr UBaseType_t kSensorPriority = tskIDLE_PRIORITY + 2;

// The sensor task's latest sample and how many it took (no one reads them yet).
volatile double g_temperature = 0;
volatile uint32_t g_samples = 0;
}  // namespace

extern "C" {

// The task that owns the server: board::serve()'s loop, for ever. In the network image it also
// starts lwIP's thread and the NIC's receive task (board::net_init(), boards/<board>/net.cpp) and
// holds lwIP's core lock but while it waits.
void owner_task(void*) {
#if EMCP_SENSORS_NETWORK
  sensors_net_firmware();
#else
  sensors_firmware();
#endif
}

// Samples the temperature every EMCP_SENSORS_SAMPLE_MS, on the kernel's timer.
void sensor_task(void*) {
  TickType_t last = xTaskGetTickCount();
  for (;;) {
    (void)xTaskDelayUntil(&last, pdMS_TO_TICKS(EMCP_SENSORS_SAMPLE_MS));
    const sensors::Reading r = sensors::read(sensors::Id::kTemperature, board::now_ms());
    g_temperature = r.value;
    g_samples = g_samples + 1;
    // INBOX (issue 29): here the task will post the change to the server through the owner's
    // inbox (core/include/emcp/mcp/inbox.h: resource_updated("sensor://temperature") when
    // the reading changed), which wakes the owner (board::wake()). Until that inbox exists,
    // nothing here touches the server: it belongs to the owner task alone.
  }
}

}  // extern "C"

int main() {
  TaskHandle_t owner = xTaskCreateStatic(&owner_task, "emcp", sizeof g_owner_stack / sizeof(StackType_t), nullptr,
                                         kOwnerPriority, g_owner_stack, &g_owner_tcb);
  board::set_owner(owner, sizeof g_owner_stack);
  (void)xTaskCreateStatic(&sensor_task, "sensor", sizeof g_sensor_stack / sizeof(StackType_t), nullptr,
                          kSensorPriority, g_sensor_stack, &g_sensor_tcb);
  vTaskStartScheduler();  // never returns: the idle task's memory is static, nothing can fail
  for (;;) {
  }
}
