// The FreeRTOS task calls of ESP-IDF v5 that boards/esp32 uses (compile-only, see
// driver/uart.h). ESP-IDF's xTaskCreate takes the stack depth in bytes.
#pragma once
#include <stdint.h>

#include "freertos/FreeRTOS.h"

typedef void (*TaskFunction_t)(void*);
BaseType_t xTaskCreate(TaskFunction_t pvTaskCode, const char* const pcName,
                       const uint32_t usStackDepth, void* const pvParameters,
                       UBaseType_t uxPriority, TaskHandle_t* const pvCreatedTask);
void vTaskDelay(const TickType_t xTicksToDelay);
UBaseType_t uxTaskGetStackHighWaterMark(TaskHandle_t xTask);
