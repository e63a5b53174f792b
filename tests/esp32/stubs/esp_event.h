// ESP-IDF v5 esp_event.h (component esp_event): the default event loop and handler
// registration, as boards/esp32/examples/sensors_net uses them (compile-only, see driver/uart.h).
#pragma once
#include <stdint.h>

#include "esp_err.h"

typedef const char* esp_event_base_t;
typedef void* esp_event_handler_instance_t;
typedef void (*esp_event_handler_t)(void* event_handler_arg, esp_event_base_t event_base, int32_t event_id,
                                    void* event_data);
#define ESP_EVENT_ANY_ID -1
#define ESP_EVENT_DECLARE_BASE(id) extern esp_event_base_t const id

#ifdef __cplusplus
extern "C" {
#endif
esp_err_t esp_event_loop_create_default(void);
esp_err_t esp_event_handler_instance_register(esp_event_base_t event_base, int32_t event_id,
                                              esp_event_handler_t event_handler, void* event_handler_arg,
                                              esp_event_handler_instance_t* instance);
#ifdef __cplusplus
}
#endif
