// The board interface (board/board.h) on ESP-IDF: UART0 through ESP-IDF's UART driver (its
// interrupt fills the driver's ring; uart_read_bytes() takes from it without waiting), the
// millisecond clock from esp_timer, and FreeRTOS's stack high-water mark of the task that
// serves. No heap after start-up: the driver allocates its ring once, in init().
#include <stdint.h>

#include "board/board.h"
#include "driver/uart.h"
#include "esp_timer.h"
#include "freertos/FreeRTOS.h"
#include "freertos/task.h"

namespace {
constexpr uart_port_t kUart = UART_NUM_0;
constexpr int kRxRing = 2048;
uint32_t g_stack_size = 0;  // bytes, as given to xTaskCreate (0: unknown)
}  // namespace

extern "C" void emcp_board_set_stack_size(uint32_t bytes) { g_stack_size = bytes; }

namespace board {

const char* name() { return CONFIG_IDF_TARGET; }

void init() {
  uart_config_t cfg = {};
  cfg.baud_rate = 115200;
  cfg.data_bits = UART_DATA_8_BITS;
  cfg.parity = UART_PARITY_DISABLE;
  cfg.stop_bits = UART_STOP_BITS_1;
  cfg.flow_ctrl = UART_HW_FLOWCTRL_DISABLE;
  cfg.source_clk = UART_SCLK_DEFAULT;
  uart_driver_install(kUart, kRxRing, 0, 0, nullptr, 0);
  uart_param_config(kUart, &cfg);
}

uint64_t now_ms() { return static_cast<uint64_t>(esp_timer_get_time()) / 1000u; }

void uart_write(const char* data, size_t n) { uart_write_bytes(kUart, data, n); }

size_t uart_read(uint8_t* buf, size_t cap) {
  const int n = uart_read_bytes(kUart, buf, static_cast<uint32_t>(cap), 0);
  return n > 0 ? static_cast<size_t>(n) : 0;
}

uint32_t uart_dropped() { return 0; }  // the driver flushes on overflow (UART_FIFO_OVF event)

void idle() {
  // Sleep until a byte arrives or a tick passes (the loop's periodic work needs the tick).
  size_t waiting = 0;
  if (uart_get_buffered_data_len(kUart, &waiting) == ESP_OK && waiting != 0) return;
  vTaskDelay(1);
}

size_t stack_size() { return g_stack_size; }

size_t stack_high_water() {
  const size_t free_bytes = uxTaskGetStackHighWaterMark(nullptr) * sizeof(StackType_t);
  return g_stack_size > free_bytes ? g_stack_size - free_bytes : 0;
}

}  // namespace board
