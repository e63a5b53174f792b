/* emcp_freertos_config.h - the FreeRTOS settings every emcp image under FreeRTOS shares
 * (ports/freertos/README.md). A board's FreeRTOSConfig.h (boards/<board>/freertos/) defines its
 * CPU clock, its interrupt priorities and the names of the kernel's handlers first, then
 * includes this file. Included by the kernel's C sources, by C++, and by a port's assembly
 * (RISC-V's portASM.S): C declarations only outside __ASSEMBLER__. */
#ifndef EMCP_FREERTOS_CONFIG_H
#define EMCP_FREERTOS_CONFIG_H

/* Static allocation only: no heap_*.c is linked, xTaskCreateStatic() and the other *Static()
 * calls take their memory from the caller; the zero-heap check after each link proves it. */
#define configSUPPORT_STATIC_ALLOCATION 1
#define configSUPPORT_DYNAMIC_ALLOCATION 0
/* The idle task's (and the timer task's) memory comes from ports/freertos/src/kernel.cpp,
 * named objects the footprint report shows, not from the kernel's own arrays. */
#define configKERNEL_PROVIDED_STATIC_MEMORY 0

/* A 1 kHz tick: emcp::board::now_ms() is the tick count (ports/freertos/src/kernel.cpp checks). */
#define configTICK_RATE_HZ 1000
#define configTICK_TYPE_WIDTH_IN_BITS TICK_TYPE_WIDTH_32_BITS
#define configUSE_PREEMPTION 1
#define configUSE_TIME_SLICING 1
#define configIDLE_SHOULD_YIELD 1
/* Priorities 0 (idle) to 3: the examples' tasks are documented where they are created
 * (examples/sensors/main_rtos.cpp). */
#define configMAX_PRIORITIES 4
#define configMAX_TASK_NAME_LEN 8
/* The idle task's stack, in words: it runs the idle hook (WFI) and nothing else; its worst
 * case is checked after every link (tools/footprint.py, the task "idle"). */
#ifndef configMINIMAL_STACK_SIZE
#define configMINIMAL_STACK_SIZE 64
#endif

/* The idle hook sleeps (WFI) until the next interrupt: an idle core does not spin (QEMU would
 * take a host core for it). */
#define configUSE_IDLE_HOOK 1
/* No tick hook, unless the board's configuration wants one (hifive1's: the sensors image's
 * interrupt source; ports/freertos/src/kernel.cpp has an empty default). */
#ifndef configUSE_TICK_HOOK
#define configUSE_TICK_HOOK 0
#endif
#define configUSE_MALLOC_FAILED_HOOK 0
/* A task whose stack overflowed halts the image (method 2: the stack's lowest 16 bytes stay
 * painted; the footprint check counts them as used). */
#define configCHECK_FOR_STACK_OVERFLOW 2

/* What the owner task's wait and the inbox need: one notification per task (the owner sleeps
 * on it, emcp::board::wake() gives it), mutexes and counting semaphores (for a network stack's
 * sys_arch). No software timers (no timer task), no queue sets, no co-routines. */
#define configUSE_TASK_NOTIFICATIONS 1
#define configTASK_NOTIFICATION_ARRAY_ENTRIES 1
#define configUSE_MUTEXES 1
#define configUSE_RECURSIVE_MUTEXES 0
#define configUSE_COUNTING_SEMAPHORES 1
#define configUSE_QUEUE_SETS 0
#define configUSE_CO_ROUTINES 0
#ifndef configUSE_TIMERS
#define configUSE_TIMERS 0
#endif
#if configUSE_TIMERS
#define configTIMER_TASK_PRIORITY (configMAX_PRIORITIES - 1)
#define configTIMER_QUEUE_LENGTH 4
#define configTIMER_TASK_STACK_DEPTH 128
#endif
#define configQUEUE_REGISTRY_SIZE 0

/* No trace facility, run-time statistics or formatting functions (they would pull in
 * sprintf), no newlib reentrancy structures. */
#define configUSE_TRACE_FACILITY 0
#define configUSE_STATS_FORMATTING_FUNCTIONS 0
#define configGENERATE_RUN_TIME_STATS 0
#define configUSE_NEWLIB_REENTRANT 0
#define configUSE_APPLICATION_TASK_TAG 0
#define configENABLE_BACKWARD_COMPATIBILITY 0

#define INCLUDE_vTaskDelay 1
#define INCLUDE_xTaskDelayUntil 1
#define INCLUDE_vTaskSuspend 1
#define INCLUDE_uxTaskGetStackHighWaterMark 1
#define INCLUDE_xTaskGetCurrentTaskHandle 1
#define INCLUDE_vTaskDelete 0
#define INCLUDE_vTaskPrioritySet 0
#define INCLUDE_uxTaskPriorityGet 0
#define INCLUDE_xTaskGetSchedulerState 0
#define INCLUDE_xTaskGetIdleTaskHandle 0
#define INCLUDE_eTaskGetState 0
#define INCLUDE_xTaskResumeFromISR 0
#define INCLUDE_xTimerPendFunctionCall 0

/* A failed assertion (an interrupt calling the API above configMAX_SYSCALL_INTERRUPT_PRIORITY,
 * a FromISR call from a task, a bad handle) halts the image where a debugger shows it. It
 * also makes the kernel check, at start, that the handlers are installed and the priorities
 * fit the hardware. */
#ifndef __ASSEMBLER__
#ifdef __cplusplus
extern "C" {
#endif
void emcp_freertos_assert_failed(void);
#ifdef __cplusplus
}
#endif
#define configASSERT(x)                               \
  do {                                                \
    if ((x) == 0) emcp_freertos_assert_failed();      \
  } while (0)
#endif

#endif /* EMCP_FREERTOS_CONFIG_H */
