// Declarations of the ESP-IDF v5 UART driver API that boards/esp32 uses, as ESP-IDF documents
// them (driver/uart.h). Compile-only: tests/esp32 type-checks the adapter against them; nothing
// here is linked or run.
#pragma once
#include <stddef.h>
#include <stdint.h>

#include "freertos/FreeRTOS.h"

typedef int uart_port_t;
#define UART_NUM_0 (0)
typedef enum { UART_DATA_5_BITS, UART_DATA_6_BITS, UART_DATA_7_BITS, UART_DATA_8_BITS } uart_word_length_t;
typedef enum { UART_PARITY_DISABLE = 0, UART_PARITY_EVEN = 2, UART_PARITY_ODD = 3 } uart_parity_t;
typedef enum { UART_STOP_BITS_1 = 1, UART_STOP_BITS_1_5 = 2, UART_STOP_BITS_2 = 3 } uart_stop_bits_t;
typedef enum { UART_HW_FLOWCTRL_DISABLE = 0, UART_HW_FLOWCTRL_RTS = 1 } uart_hw_flowcontrol_t;
typedef enum { UART_SCLK_DEFAULT = 0 } uart_sclk_t;
typedef struct {
  int baud_rate;
  uart_word_length_t data_bits;
  uart_parity_t parity;
  uart_stop_bits_t stop_bits;
  uart_hw_flowcontrol_t flow_ctrl;
  uint8_t rx_flow_ctrl_thresh;
  uart_sclk_t source_clk;
} uart_config_t;

typedef enum {
  UART_DATA,
  UART_BREAK,
  UART_BUFFER_FULL,
  UART_FIFO_OVF,
  UART_FRAME_ERR,
  UART_PARITY_ERR,
  UART_DATA_BREAK,
  UART_PATTERN_DET,
  UART_EVENT_MAX,
} uart_event_type_t;
typedef struct {
  uart_event_type_t type;
  size_t size;
  bool timeout_flag;
} uart_event_t;

esp_err_t uart_driver_install(uart_port_t uart_num, int rx_buffer_size, int tx_buffer_size,
                              int queue_size, QueueHandle_t* uart_queue, int intr_alloc_flags);
esp_err_t uart_param_config(uart_port_t uart_num, const uart_config_t* uart_config);
int uart_write_bytes(uart_port_t uart_num, const void* src, size_t size);
int uart_read_bytes(uart_port_t uart_num, void* buf, uint32_t length, TickType_t ticks_to_wait);
