// lwIP's options as ESP-IDF v5 sets them (components/lwip/port/include/lwipopts.h), reduced to
// those that decide what emcp's lwIP code compiles against: lwIP in its own thread (NO_SYS 0)
// with the core lock (CONFIG_LWIP_TCPIP_CORE_LOCKING), ESP-IDF's lock macros that mark the
// holder, lwIP's memory from the C heap (MEM_LIBC_MALLOC, MEMP_MEM_MALLOC: no static pools),
// sockets and netconn on, statistics only with CONFIG_LWIP_STATS, and no LWIP_ALTCP (ESP-IDF
// neither sets it nor builds lwIP's altcp*.c: altcp.h then maps altcp_* onto tcp_*).
// Compile-only (tests/esp32/net_check.cmake); written for this check, not copied from ESP-IDF.
#pragma once

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arch/sys_arch.h"
#include "esp_random.h"
#include "sdkconfig.h"

#ifdef CONFIG_LWIP_TCPIP_CORE_LOCKING
#define LWIP_TCPIP_CORE_LOCKING 1
#define LWIP_TCPIP_CORE_LOCKING_INPUT 0
#define LOCK_TCPIP_CORE()                                 \
  do {                                                    \
    sys_mutex_lock(&lock_tcpip_core);                     \
    sys_thread_tcpip(LWIP_CORE_LOCK_MARK_HOLDER);         \
  } while (0)
#define UNLOCK_TCPIP_CORE()                               \
  do {                                                    \
    sys_thread_tcpip(LWIP_CORE_LOCK_UNMARK_HOLDER);       \
    sys_mutex_unlock(&lock_tcpip_core);                   \
  } while (0)
#ifdef CONFIG_LWIP_CHECK_THREAD_SAFETY
#define LWIP_ASSERT_CORE_LOCKED()                                                          \
  do {                                                                                     \
    LWIP_ASSERT("Required to lock TCPIP core functionality!",                              \
                sys_thread_tcpip(LWIP_CORE_LOCK_QUERY_HOLDER));                            \
  } while (0)
#endif
#else
#define LWIP_TCPIP_CORE_LOCKING 0
#define LWIP_TCPIP_CORE_LOCKING_INPUT 0
#endif

#define NO_SYS 0
#define SYS_LIGHTWEIGHT_PROT 1
#define LWIP_RAND esp_random
#define MEM_LIBC_MALLOC 1
#define MEMP_MEM_MALLOC 1
#define MEM_ALIGNMENT 4
#define MEMP_NUM_NETCONN CONFIG_LWIP_MAX_SOCKETS
#define MEMP_NUM_RAW_PCB CONFIG_LWIP_MAX_RAW_PCBS
#define MEMP_NUM_TCP_PCB CONFIG_LWIP_MAX_ACTIVE_TCP
#define MEMP_NUM_TCP_PCB_LISTEN CONFIG_LWIP_MAX_LISTENING_TCP
#define MEMP_NUM_UDP_PCB CONFIG_LWIP_MAX_UDP_PCBS
#define ARP_QUEUEING 1
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_RAW 1
#define LWIP_DHCP 1
#define LWIP_IGMP 1
#define LWIP_DNS 1
#define LWIP_UDP 1
#define LWIP_TCP 1
#define TCP_MSS CONFIG_LWIP_TCP_MSS
#define TCP_WND CONFIG_LWIP_TCP_WND_DEFAULT
#define TCP_SND_BUF CONFIG_LWIP_TCP_SND_BUF_DEFAULT
#define TCP_LISTEN_BACKLOG 1
#define TCP_OVERSIZE TCP_MSS
#define LWIP_EVENT_API 0
#define LWIP_CALLBACK_API 1
#define LWIP_NETIF_HOSTNAME 1
#define LWIP_NETIF_EXT_STATUS_CALLBACK 1
#define LWIP_NETIF_TX_SINGLE_PBUF 1
#define TCPIP_MBOX_SIZE CONFIG_LWIP_TCPIP_RECVMBOX_SIZE
#define LWIP_NETCONN 1
#define LWIP_NETCONN_SEM_PER_THREAD 1
#define LWIP_NETCONN_FULLDUPLEX 1
#define LWIP_SOCKET 1
#define LWIP_COMPAT_SOCKETS 0
#define LWIP_POSIX_SOCKETS_IO_NAMES 0
#define LWIP_SO_SNDTIMEO 1
#define LWIP_SO_RCVTIMEO 1
#define LWIP_TCP_KEEPALIVE 1
#define LWIP_TIMEVAL_PRIVATE 0
#ifdef CONFIG_LWIP_STATS
#define LWIP_STATS 1
#define LWIP_STATS_DISPLAY 1
#else
#define LWIP_STATS 0
#endif
#define LWIP_SUPPORT_CUSTOM_PBUF 1
#define ESP_LWIP 1
