/* lwIP's sys_arch on FreeRTOS (ports/freertos/lwip), for lwIP with NO_SYS 0: its tcpip_thread,
 * the core lock, the tcpip mailbox. Static allocation only: every mailbox, semaphore and mutex
 * is a FreeRTOS object created with its *Static() call over a slot of a fixed pool in
 * sys_arch.cpp, sized in lwipopts_freertos.h (EMCP_LWIP_SYS_MBOXES, _SEMS, _MUTEXES: what this
 * lwIP creates, counted there); a pool found empty is ERR_MEM from sys_*_new, never a malloc.
 * The one thread lwIP starts (tcpip_thread) gets its stack from a static array of
 * TCPIP_THREAD_STACKSIZE bytes. ports/freertos/README.md says which tasks run, at which
 * priorities, with which stacks. */
#ifndef EMCP_LWIP_FREERTOS_SYS_ARCH_H
#define EMCP_LWIP_FREERTOS_SYS_ARCH_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Each lwIP object is the handle of a FreeRTOS queue (a mailbox, a semaphore, a mutex are all
 * queues to the kernel) and the pool slot it came from; a null handle is "invalid". */
struct emcp_sys_object {
  void* handle; /* QueueHandle_t / SemaphoreHandle_t */
  int16_t slot; /* index in its pool, -1 when invalid */
};
typedef struct emcp_sys_object sys_mbox_t;
typedef struct emcp_sys_object sys_sem_t;
typedef struct emcp_sys_object sys_mutex_t;
typedef void* sys_thread_t; /* TaskHandle_t */
typedef uint32_t sys_prot_t;

#define sys_mbox_valid(m) ((m)->handle != NULL)
#define sys_mbox_set_invalid(m) ((m)->handle = NULL, (m)->slot = -1)
#define sys_sem_valid(s) ((s)->handle != NULL)
#define sys_sem_set_invalid(s) ((s)->handle = NULL, (s)->slot = -1)
#define sys_mutex_valid(m) ((m)->handle != NULL)
#define sys_mutex_set_invalid(m) ((m)->handle = NULL, (m)->slot = -1)

/* The core lock with its holder recorded (LOCK_TCPIP_CORE / UNLOCK_TCPIP_CORE, lwipopts_freertos.h),
 * and the check lwIP makes in every raw API call (LWIP_ASSERT_CORE_LOCKED): once tcpip_thread
 * runs, the caller must be the task that holds the core lock, never an interrupt. */
void emcp_lwip_lock_core(void);
void emcp_lwip_unlock_core(void);
void emcp_lwip_assert_core_locked(void);
void emcp_lwip_mark_tcpip_thread(void);

/* The pools' use, for a report: objects in use now and the most ever in use, per kind. */
struct emcp_lwip_sys_stats {
  uint16_t mboxes, mboxes_max, sems, sems_max, mutexes, mutexes_max;
  uint16_t refused; /* sys_*_new calls refused: a pool empty, or a mailbox larger than a slot */
};
struct emcp_lwip_sys_stats emcp_lwip_sys_stats(void);

#ifdef __cplusplus
}
#endif

#endif /* EMCP_LWIP_FREERTOS_SYS_ARCH_H */
