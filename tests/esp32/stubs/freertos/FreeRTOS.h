// The FreeRTOS types of ESP-IDF v5 that boards/esp32 uses (compile-only, see driver/uart.h).
// On ESP-IDF, StackType_t is uint8_t: stack sizes and high-water marks are in bytes.
#pragma once
#include <stdint.h>
#define CONFIG_IDF_TARGET "esp32"  // from sdkconfig.h, which FreeRTOS.h includes on ESP-IDF
typedef int esp_err_t;
#define ESP_OK 0
typedef uint32_t TickType_t;
typedef uint8_t StackType_t;
typedef unsigned int UBaseType_t;
typedef int BaseType_t;
typedef struct QueueDefinition* QueueHandle_t;
typedef struct tskTaskControlBlock* TaskHandle_t;
