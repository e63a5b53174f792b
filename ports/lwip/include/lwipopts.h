// lwIP's options for emcp (ports/lwip): the raw/altcp TCP API without an OS (NO_SYS=1), static
// pools only. lwIP never calls malloc: its pools (MEMP) and its own heap region (MEM_SIZE, used
// for PBUF_RAM output buffers) are static arrays that the footprint report counts, and the
// firmware's heap check still bans malloc/free/_sbrk in every image.
//
// An application or board may set any of these before (EMCP_LWIPOPTS_EXTRA names a header
// included first).
#ifndef EMCP_LWIPOPTS_H
#define EMCP_LWIPOPTS_H

#ifdef EMCP_LWIPOPTS_EXTRA
#include EMCP_LWIPOPTS_EXTRA
#endif

// ---- No OS: the application's loop calls sys_check_timeouts() and the netif's input. (Under
// FreeRTOS, ports/freertos/lwip/include/lwipopts_freertos.h, given as EMCP_LWIPOPTS_EXTRA, sets
// NO_SYS 0 and what goes with it: lwIP in its own thread, the core lock.)
#ifndef NO_SYS
#define NO_SYS 1
#define LWIP_SOCKET 0
#define LWIP_NETCONN 0
#define SYS_LIGHTWEIGHT_PROT 0
#endif

// ---- Memory: static only
#define MEM_LIBC_MALLOC 0
#define MEMP_MEM_MALLOC 0
#ifndef MEM_ALIGNMENT
#define MEM_ALIGNMENT 4  // 32-bit targets; a 64-bit host sets 8 (tests/lwip/lwipopts_host.h)
#endif
#ifndef MEM_SIZE
#define MEM_SIZE (16 * 1024)
#endif
#ifndef MEMP_NUM_TCP_PCB
#define MEMP_NUM_TCP_PCB 6
#endif
#ifndef MEMP_NUM_TCP_PCB_LISTEN
#define MEMP_NUM_TCP_PCB_LISTEN 2
#endif
#ifndef MEMP_NUM_TCP_SEG
#define MEMP_NUM_TCP_SEG 32
#endif
#ifndef PBUF_POOL_SIZE
#define PBUF_POOL_SIZE 16
#endif
#ifndef MEMP_NUM_PBUF
#define MEMP_NUM_PBUF 16
#endif
// ---- mDNS / DNS-SD: lwIP's responder (apps/mdns, RFC 6762/6763), with which the boards announce
// their MCP server as `_mcp._tcp` (emcp/lwip/mdns.h, board/mdns.h, docs/discovery.md). It needs
// IGMP (the group 224.0.0.251; the NIC's driver filters multicast frames through the netif's
// igmp_mac_filter), a UDP pcb, a netif client-data slot and a timeout for its probes; its host
// and service records (about 500 B) come from lwIP's heap (MEM_SIZE), once. An lwIP for an image
// that announces nothing may set LWIP_MDNS_RESPONDER 0: IGMP goes with it.
#ifndef LWIP_MDNS_RESPONDER
#define LWIP_MDNS_RESPONDER 1
#endif
#define MDNS_MAX_SERVICES 1
#if LWIP_MDNS_RESPONDER
#define LWIP_NUM_NETIF_CLIENT_DATA 1
#endif
#ifndef MEMP_NUM_IGMP_GROUP
#define MEMP_NUM_IGMP_GROUP 2  // all-systems (224.0.0.1) and mDNS's
#endif

#define MEMP_NUM_UDP_PCB (4 + LWIP_MDNS_RESPONDER)
#define MEMP_NUM_SYS_TIMEOUT (LWIP_NUM_SYS_TIMEOUT_INTERNAL + 2 + LWIP_MDNS_RESPONDER)

// ---- Protocols: IPv4, ARP, ICMP, DHCP, TCP through altcp (TLS layers on it later); IGMP for mDNS
#define LWIP_IPV4 1
#define LWIP_IPV6 0
#define LWIP_ARP 1
#define LWIP_ETHERNET 1
#define LWIP_ICMP 1
#define LWIP_DHCP 1
#define LWIP_UDP 1
#define LWIP_TCP 1
#define LWIP_ALTCP 1
#define LWIP_DNS 0
#define LWIP_IGMP LWIP_MDNS_RESPONDER
#define LWIP_AUTOIP 0
#define LWIP_RAW 0
// No IP fragments: TCP keeps its segments within the MSS and DHCP's packets are small, so
// reassembly (its code and its pbufs held for a fragment's siblings) and fragmentation go.
#define IP_REASSEMBLY 0
#define IP_FRAG 0
#define TCP_MSS 1460
// The Internet checksum of every segment sent and received: lwIP's version 3 sums two 32-bit
// words a round (version 2, its default, sums 16 bits a step: bench/target's lwIP profile had
// it among the largest items of a request).
#ifndef LWIP_CHKSUM_ALGORITHM
#define LWIP_CHKSUM_ALGORITHM 3
#endif
#ifndef TCP_WND
#define TCP_WND (4 * TCP_MSS)
#endif
#ifndef TCP_SND_BUF
#define TCP_SND_BUF (4 * TCP_MSS)
#endif
#define TCP_SND_QUEUELEN ((4 * TCP_SND_BUF + TCP_MSS - 1) / TCP_MSS)
#define LWIP_NETIF_STATUS_CALLBACK 1
#define LWIP_NETIF_LINK_CALLBACK 1

// ---- A newer SYN reopens a connection in TIME_WAIT (RFC 1122 4.2.2.13), which lwIP 2.1.3
// refuses: ports/lwip/src/tcp.cpp (emcp/lwip/tcp.h), built into this lwIP's library
// (cmake/EmcpLwip.cmake). A host or board with an input hook of its own calls
// emcp_lwip_ip4_input first (tests/lwip).
#include "emcp/lwip/tcp.h"
#ifndef LWIP_HOOK_IP4_INPUT
#define LWIP_HOOK_IP4_INPUT(p, inp) emcp_lwip_ip4_input((p), (inp))
#endif
#define LWIP_HOOK_TCP_ISN(local_ip, local_port, remote_ip, remote_port) emcp_lwip_tcp_isn()

// ---- Statistics: the pools' high-water marks (reported by the firmware)
#define LWIP_STATS 1
#define MEM_STATS 1
#define MEMP_STATS 1
#define LWIP_STATS_DISPLAY 0
#define LINK_STATS 0
#define IP_STATS 0
#define ICMP_STATS 0
#define UDP_STATS 0
#define TCP_STATS 0
#define ETHARP_STATS 0
#define IPFRAG_STATS 0
#define SYS_STATS 0

// ---- Checks
#define LWIP_DEBUG 0
#define LWIP_NOASSERT_ON_ERROR 0

#endif
