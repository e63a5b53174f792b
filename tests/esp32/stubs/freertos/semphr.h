// The FreeRTOS semaphore type of ESP-IDF v5 that lwIP's port uses (compile-only, see
// driver/uart.h).
#pragma once
#include "freertos/FreeRTOS.h"
typedef QueueHandle_t SemaphoreHandle_t;
