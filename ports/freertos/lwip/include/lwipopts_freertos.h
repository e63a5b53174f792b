/* lwIP under FreeRTOS (ports/freertos/lwip): what changes from ports/lwip's lwipopts.h, which
 * includes this first (EMCP_LWIPOPTS_EXTRA) when lwIP is built for an RTOS image. lwIP runs in
 * its own thread (tcpip_thread: timers and the frames the driver posts with tcpip_input); the
 * task that owns the server calls the raw/altcp API directly under the core lock (docs/porting.md
 * "With an RTOS"). Static allocation only, as without an OS: the pools are unchanged, and the OS
 * objects come from sys_arch.cpp's fixed pools, sized here. */
#ifndef EMCP_LWIPOPTS_FREERTOS_H
#define EMCP_LWIPOPTS_FREERTOS_H

#define NO_SYS 0
/* The raw API alone: no sockets, no netconn (so no per-connection mailboxes). */
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
/* Pools and pbufs are shared between tasks (the driver's receive task allocates pool pbufs):
 * SYS_ARCH_PROTECT guards them (sys_arch_protect: the kernel's nesting critical section). */
#define SYS_LIGHTWEIGHT_PROT 1

/* The core lock: the owner task holds it except while it waits (emcp::board::idle()), tcpip_thread
 * while it works; the holder is recorded so that every raw API call checks it is the caller
 * (LWIP_ASSERT_CORE_LOCKED, sys_arch.cpp). Received frames go through the mailbox
 * (tcpip_input posts them), not through the lock. */
#define LWIP_TCPIP_CORE_LOCKING 1
#define LWIP_TCPIP_CORE_LOCKING_INPUT 0
#define LOCK_TCPIP_CORE() emcp_lwip_lock_core()
#define UNLOCK_TCPIP_CORE() emcp_lwip_unlock_core()
#define LWIP_ASSERT_CORE_LOCKED() emcp_lwip_assert_core_locked()
#define LWIP_MARK_TCPIP_THREAD() emcp_lwip_mark_tcpip_thread()

/* tcpip_thread: its stack in bytes (a static array, checked by the footprint report as the task
 * "tcpip"), its priority (the highest of configMAX_PRIORITIES 4, with the NIC's receive task:
 * frames and timers are served before the server's loop). With the mDNS responder it builds
 * mDNS's answers too (a query's names, known answers and the answer: 2,384 B deep on the
 * Cortex-M3, where 2 KiB served until then): 512 B more. */
#ifndef TCPIP_THREAD_STACKSIZE
#define TCPIP_THREAD_STACKSIZE (2048 + 512 * LWIP_MDNS_RESPONDER)
#endif
#ifndef TCPIP_THREAD_PRIO
#define TCPIP_THREAD_PRIO 3
#endif
#define TCPIP_THREAD_NAME "tcpip"
/* Messages to tcpip_thread: one per received frame, and a few callbacks; its mailbox holds them
 * all. A frame's message lives from tcpip_input until tcpip_thread has run the frame through
 * lwIP, so every message but one holds a pool pbuf: the one tcpip_thread is finishing may have
 * freed its pbuf already (tcp_input frees it before tcpip_thread frees the message), and a
 * tick's time slice can hand that pbuf to the NIC's receive task (same priority) before the
 * message is back. Hence one message more than the pool has pbufs: with as many, the eighth
 * frame of a full pool found no message now and then (tcpip_input's ERR_MEM, the frame dropped
 * and counted in rx_dropped; seen in a clean-clone run's limits soak, and in 3 of 9 runs when
 * a test build made tcpip_thread wait a tick after each frame; 0 of 12 with the spare). A post
 * so never fails while a pbuf could be had: a frame waits in the NIC when the pool is empty. */
#ifndef MEMP_NUM_TCPIP_MSG_INPKT
#define MEMP_NUM_TCPIP_MSG_INPKT (PBUF_POOL_SIZE + 1)
#endif
#define MEMP_NUM_TCPIP_MSG_API 2
#define TCPIP_MBOX_SIZE (MEMP_NUM_TCPIP_MSG_INPKT + MEMP_NUM_TCPIP_MSG_API)
/* netconn's mailboxes (none here: LWIP_NETCONN 0); a slot holds the largest mailbox asked for. */
#define DEFAULT_RAW_RECVMBOX_SIZE 0
#define DEFAULT_UDP_RECVMBOX_SIZE 0
#define DEFAULT_TCP_RECVMBOX_SIZE 0
#define DEFAULT_ACCEPTMBOX_SIZE 0

/* What this lwIP creates (lwIP 2.1.3 with the options above), the sizes of sys_arch.cpp's
 * pools: one mailbox (tcpip_init's tcpip_mbox); two mutexes (tcpip_init's lock_tcpip_core, and
 * mem_init's mem_mutex guarding lwIP's heap); semaphores: none (only sys_msleep and, without
 * core locking, tcpip_api_call would take one), one spare. A pool too small is ERR_MEM from
 * sys_*_new, which tcpip_init and mem_init turn into an assertion at start. */
#define EMCP_LWIP_SYS_MBOXES 1
#define EMCP_LWIP_SYS_MUTEXES 2
#define EMCP_LWIP_SYS_SEMS 1
/* One thread: tcpip_thread. */
#define EMCP_LWIP_SYS_THREADS 1

#ifndef __ASSEMBLER__
#include "arch/sys_arch.h"
#endif

#endif /* EMCP_LWIPOPTS_FREERTOS_H */
