// lwIP options for the host tests of ports/lwip (tests/lwip, tests/fuzz/fuzz_lwip_http.cpp),
// included first by ports/lwip/include/lwipopts.h (EMCP_LWIPOPTS_EXTRA). One stack holds both
// ends of every connection: the server (LwipHttpListener on port 80) and the test's clients,
// raw TCP pcbs connecting to 127.0.0.1 through lwIP's loopback netif.
#ifndef EMCP_TESTS_LWIPOPTS_HOST_H
#define EMCP_TESTS_LWIPOPTS_HOST_H

// This 64-bit host: lwIP's pools and heap hand out structs holding pointers (8-byte aligned).
#define MEM_ALIGNMENT 8

// The loopback netif (127.0.0.1): netif_poll_all() delivers what was sent.
#define LWIP_NETIF_LOOPBACK 1
#define LWIP_HAVE_LOOPIF 1
// Two pcbs per connection (client and server), for up to 6 connections at once.
#define MEMP_NUM_TCP_PCB 12
// Segments and heap for both ends: every packet on the loopback netif is a PBUF_RAM copy from
// the heap until it is delivered.
#define MEMP_NUM_TCP_SEG 64
#define MEM_SIZE (64 * 1024)
// TIME_WAIT lasts 2 * TCP_MSL: 2 s instead of 2 min, so a test's pcbs are free soon after it.
#define TCP_MSL 1000UL

// Every looped packet passes the world first (tests/lwip/lwip_world.cpp): it counts data
// segments and breaks the zero-window ACK storms of two lwIP ends (lwip_world.h), then goes
// through ports/lwip's own hook (emcp_lwip_ip4_input: a newer SYN reopens TIME_WAIT). lwIP
// sends a packet for 127.0.0.1 straight to netif_loop_output(), past netif->output, so input
// is where it can be seen. Non-zero: the packet was dropped (and freed).
#ifdef __cplusplus
extern "C" {
#endif
struct pbuf;
struct netif;
int emcp_lwip_test_ip4_input(struct pbuf* p, struct netif* inp);
#ifdef __cplusplus
}
#endif
#define LWIP_HOOK_IP4_INPUT(p, inp) emcp_lwip_test_ip4_input((p), (inp))

#endif
