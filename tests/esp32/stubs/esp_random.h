// ESP-IDF v5 esp_random.h (component esp_hw_support), the call boards/esp32 uses
// (compile-only, see driver/uart.h).
#pragma once
#include <stddef.h>
#include <stdint.h>
void esp_fill_random(void* buf, size_t len);
uint32_t esp_random(void);  // lwIP's LWIP_RAND on ESP-IDF
