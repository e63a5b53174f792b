// emcp-sensors on an ESP32: the Cortex-M boards' firmware (examples/sensors/main_board.cpp,
// built here without its main) started as a FreeRTOS task with a known stack size.
#include <stdint.h>

#include "freertos/FreeRTOS.h"
#include "freertos/task.h"

extern "C" void emcp_board_set_stack_size(uint32_t bytes);
void sensors_firmware();

namespace {
constexpr uint32_t kStack = 8192;
void serve(void*) { sensors_firmware(); }
}  // namespace

extern "C" void app_main() {
  emcp_board_set_stack_size(kStack);
  xTaskCreate(&serve, "emcp", kStack / sizeof(StackType_t), nullptr, 5, nullptr);
}
