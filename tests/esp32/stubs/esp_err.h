// ESP-IDF v5 esp_err.h (component esp_common): the error type and ESP_ERROR_CHECK
// (compile-only, see driver/uart.h).
#pragma once
#include <stdint.h>

typedef int esp_err_t;
#define ESP_OK 0
#define ESP_FAIL -1
#define ESP_ERR_INVALID_ARG 0x102
#define ESP_ERR_INVALID_STATE 0x103

#ifdef __cplusplus
extern "C" {
#endif
[[noreturn]] void _esp_error_check_failed(esp_err_t rc, const char* file, int line, const char* function,
                                          const char* expression);
#ifdef __cplusplus
}
#endif

/// Aborts (with a message on the console) when `x` is not ESP_OK.
#define ESP_ERROR_CHECK(x)                                                       \
  do {                                                                           \
    const esp_err_t err_rc_ = (x);                                               \
    if (err_rc_ != ESP_OK) _esp_error_check_failed(err_rc_, __FILE__, __LINE__, __func__, #x); \
  } while (0)
