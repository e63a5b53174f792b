// ESP-IDF v5's lwIP OS layer (components/lwip/port/freertos/include/arch/sys_arch.h), the
// types and the core-lock bookkeeping ESP-IDF's LOCK_TCPIP_CORE() uses (compile-only, see
// lwipopts.h beside it).
#pragma once
#include <stdbool.h>
#include <stdint.h>

#include "freertos/FreeRTOS.h"
#include "freertos/queue.h"
#include "freertos/semphr.h"
#include "freertos/task.h"

#ifdef __cplusplus
extern "C" {
#endif

typedef SemaphoreHandle_t sys_sem_t;
typedef SemaphoreHandle_t sys_mutex_t;
typedef TaskHandle_t sys_thread_t;
typedef struct sys_mbox_s* sys_mbox_t;

#define LWIP_COMPAT_MUTEX 0
#define sys_mutex_valid_val(mutex) ((mutex) != NULL)
#define sys_mutex_valid(mutex) (((mutex) != NULL) && sys_mutex_valid_val(*(mutex)))
#define sys_mutex_set_invalid(mutex) ((*(mutex)) = NULL)
#define sys_mbox_valid(mbox) (*(mbox) != NULL)
#define sys_mbox_set_invalid(mbox) (*(mbox) = NULL)
#define sys_sem_valid(sema) ((sema) != NULL && *(sema) != NULL)
#define sys_sem_set_invalid(sema) (*(sema) = NULL)

void sys_delay_ms(uint32_t ms);
sys_sem_t* sys_thread_sem_init(void);
void sys_thread_sem_deinit(void);
sys_sem_t* sys_thread_sem_get(void);

typedef enum {
  LWIP_CORE_LOCK_QUERY_HOLDER,
  LWIP_CORE_LOCK_MARK_HOLDER,
  LWIP_CORE_LOCK_UNMARK_HOLDER,
  LWIP_CORE_MARK_TCPIP_TASK,
  LWIP_CORE_IS_TCPIP_INITIALIZED,
} sys_thread_core_lock_t;

bool sys_thread_tcpip(sys_thread_core_lock_t type);

#ifdef __cplusplus
}
#endif
