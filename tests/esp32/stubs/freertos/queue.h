// The FreeRTOS queue call boards/esp32 uses (compile-only, see driver/uart.h).
#pragma once
#include "freertos/FreeRTOS.h"
BaseType_t xQueueReceive(QueueHandle_t queue, void* buffer, TickType_t ticks_to_wait);
