// The FreeRTOS task calls of ESP-IDF v5 that boards/esp32, what it builds of ports/freertos
// (src/owner.cpp) and the FreeRTOS main it shares with the emulated boards
// (examples/sensors/main_rtos.cpp) use (compile-only, see driver/uart.h). From ESP-IDF's
// "FreeRTOS (IDF)" page (api-reference/system/freertos_idf.html): its Task API, and "Critical
// Sections" for taskENTER_CRITICAL(&spinlock) / taskENTER_CRITICAL_ISR(&spinlock) (a spinlock
// argument where vanilla FreeRTOS takes none). Its "Tasks: Creation": xTaskCreateStatic() is
// xTaskCreateStaticPinnedToCore() with tskNO_AFFINITY, the stack depth in bytes. Some of these
// are macros on ESP-IDF (the notification calls, the critical sections); declared here with the
// signatures the page documents.
#pragma once
#include <stdint.h>

#include "freertos/FreeRTOS.h"

#define tskIDLE_PRIORITY 0U
#define taskENTER_CRITICAL(mux) portENTER_CRITICAL(mux)
#define taskEXIT_CRITICAL(mux) portEXIT_CRITICAL(mux)
#define taskENTER_CRITICAL_ISR(mux) portENTER_CRITICAL_ISR(mux)
#define taskEXIT_CRITICAL_ISR(mux) portEXIT_CRITICAL_ISR(mux)

#ifdef __cplusplus
extern "C" {
#endif
typedef void (*TaskFunction_t)(void*);
TaskHandle_t xTaskCreateStatic(TaskFunction_t pxTaskCode, const char* const pcName, const uint32_t ulStackDepth,
                               void* const pvParameters, UBaseType_t uxPriority, StackType_t* const puxStackBuffer,
                               StaticTask_t* const pxTaskBuffer);
TickType_t xTaskGetTickCount(void);
BaseType_t xTaskDelayUntil(TickType_t* const pxPreviousWakeTime, const TickType_t xTimeIncrement);
uint32_t ulTaskNotifyTake(BaseType_t xClearCountOnExit, TickType_t xTicksToWait);
BaseType_t xTaskNotifyGive(TaskHandle_t xTaskToNotify);
void vTaskNotifyGiveFromISR(TaskHandle_t xTaskToNotify, BaseType_t* pxHigherPriorityTaskWoken);
UBaseType_t uxTaskGetStackHighWaterMark(TaskHandle_t xTask);
char* pcTaskGetName(TaskHandle_t xTaskToQuery);
#ifdef __cplusplus
}
#endif
