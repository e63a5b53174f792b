// The FreeRTOS types and port macros of ESP-IDF v5 that boards/esp32 and what it builds of
// ports/freertos (src/owner.cpp) use (compile-only, see driver/uart.h). Written from ESP-IDF's
// documentation: the Programming Guide's "FreeRTOS (IDF)" page (api-reference/system/
// freertos_idf.html: its Task API, and "Critical Sections": spinlocks of type portMUX_TYPE,
// initialized with portMUX_INITIALIZER_UNLOCKED), and for xPortInIsrContext() and
// portYIELD_FROM_ISR() the documentation comments of the freertos component's port header
// (FreeRTOS-Kernel/portable/xtensa/include/freertos/portmacro.h; the RISC-V port's alike), which
// the guide does not list. On ESP-IDF, StackType_t is uint8_t: stack sizes and high-water marks
// are in bytes.
#pragma once
#include <stdint.h>

#include "sdkconfig.h"  // which FreeRTOS.h includes on ESP-IDF (its FreeRTOSConfig.h, its portmacro.h)
typedef int esp_err_t;
#define ESP_OK 0
typedef uint32_t TickType_t;
typedef uint8_t StackType_t;
typedef unsigned int UBaseType_t;
typedef int BaseType_t;
typedef struct QueueDefinition* QueueHandle_t;
typedef struct tskTaskControlBlock* TaskHandle_t;
// A task's control block for xTaskCreateStatic(): opaque, its size the kernel's (not this one).
typedef struct xSTATIC_TCB {
  void* dummy[32];
} StaticTask_t;

// The values of ESP-IDF's projdefs.h, without its C casts (emcp's -Wold-style-cast would flag
// them here, where the stubs are not system headers).
#define pdFALSE 0
#define pdTRUE 1
#define configTICK_RATE_HZ CONFIG_FREERTOS_HZ
#define pdMS_TO_TICKS(ms) ((ms) * configTICK_RATE_HZ / 1000U)

// The port (portmacro.h). A spinlock: the core that holds it, and its nesting count.
typedef struct {
  uint32_t owner;
  uint32_t count;
} portMUX_TYPE;
#define portMUX_INITIALIZER_UNLOCKED {0xB33FFFFFu, 0}
#ifdef __cplusplus
extern "C" {
#endif
// pdTRUE when the current core runs an interrupt handler (low or medium priority, or the tick).
BaseType_t xPortInIsrContext(void);
void vPortEnterCritical(portMUX_TYPE* mux);
void vPortExitCritical(portMUX_TYPE* mux);
void _frxt_setup_switch(void);
#ifdef __cplusplus
}
#endif
#define portENTER_CRITICAL(mux) vPortEnterCritical(mux)
#define portEXIT_CRITICAL(mux) vPortExitCritical(mux)
#define portENTER_CRITICAL_ISR(mux) vPortEnterCritical(mux)
#define portEXIT_CRITICAL_ISR(mux) vPortExitCritical(mux)
// With an argument: a switch when it is pdTRUE, at the interrupt's end.
#define portYIELD_FROM_ISR(woken)   \
  do {                              \
    if ((woken) == pdTRUE) {        \
      _frxt_setup_switch();         \
    }                               \
  } while (0)
