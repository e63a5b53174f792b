// ESP-IDF v5 esp_timer.h, the one call boards/esp32 uses (compile-only, see driver/uart.h).
#pragma once
#include <stdint.h>
int64_t esp_timer_get_time(void);
