// emcp/lwip/tcp.h - what ports/lwip adds to lwIP's TCP: a new connection that meets an old one
// in TIME_WAIT reopens it, and the figures that show a stack's TCP state at a glance.
//
// Reopening from TIME_WAIT (RFC 1122 4.2.2.13, what Linux and the BSDs do): a server that closes
// first keeps each closed connection in TIME_WAIT for 2 MSL (lwIP: 2 min). lwIP 2.1.3 answers a
// SYN for that same address and port pair with the old connection's ACK, and ignores the RST the
// client's stack sends back (RFC 1337), so the client's new connection waits until its SYN
// retransmissions outlast TIME_WAIT or lwIP frees the pcb for another one: minutes, or never
// within any client's timeout. A client that reuses a port does that: a NAT that keeps source
// ports (QEMU's user network keeps the host's port and gives every host address the same one,
// 10.0.2.2, so two host clients whose kernels picked the same port meet; issue 28), or a
// client's kernel picking the port again once its own side is closed. Here, a SYN (without ACK)
// whose sequence number lies beyond what the TIME_WAIT connection received frees that pcb
// before lwIP sees the SYN, which then reaches the listener as any new connection; the next
// initial sequence number is moved past what the old connection sent (+64 KiB), as the RFC asks.
// A SYN that is not newer is left to lwIP (an old duplicate: the ACK, as before). The RFC's
// second condition, back to TIME_WAIT should a newer SYN turn out an old duplicate, is not kept
// (nor by Linux): that connection ends at the peer's RST, and the old one's segments fall
// outside the new one's windows, both initial sequence numbers being beyond them.
//
// Wiring: ports/lwip's lwipopts.h sets lwIP's LWIP_HOOK_IP4_INPUT to emcp_lwip_ip4_input (a
// host or board that has its own hook calls it first: tests/lwip) and LWIP_HOOK_TCP_ISN to
// emcp_lwip_tcp_isn (lwIP's own sequence: 6510, then + tcp_ticks per connection), and
// cmake/EmcpLwip.cmake builds src/tcp.cpp into the lwIP library itself (with emcp's warnings),
// so whatever links that lwIP links the hooks. A C interface: the library is built without an
// application's emcp_config.h. ESP-IDF's lwIP has its own options: there the hooks are not set
// and only the figures are used (boards/esp32/emcp_net compiles src/tcp.cpp for them).
//
// Context: lwIP's (NO_SYS: the loop; otherwise with the core lock held). Zero heap.
#ifndef EMCP_LWIP_TCP_H
#define EMCP_LWIP_TCP_H

#include <stdint.h>

struct pbuf;
struct netif;

#ifdef __cplusplus
extern "C" {
#endif

/// LWIP_HOOK_IP4_INPUT: frees a TIME_WAIT pcb that a newer SYN asks for again; never eats the
/// packet (0: lwIP goes on with it).
int emcp_lwip_ip4_input(struct pbuf* p, struct netif* inp);
/// LWIP_HOOK_TCP_ISN: the next initial sequence number.
uint32_t emcp_lwip_tcp_isn(void);

/// lwIP's TCP pcbs per state, indexed by lwIP's enum tcp_state: CLOSED (bound, not listening),
/// LISTEN, SYN_SENT, SYN_RCVD, ESTABLISHED, FIN_WAIT_1, FIN_WAIT_2, CLOSE_WAIT, CLOSING,
/// LAST_ACK, TIME_WAIT; counted over lwIP's lists now.
#define EMCP_LWIP_TCP_STATES 11
void emcp_lwip_tcp_states(uint16_t count[EMCP_LWIP_TCP_STATES]);

/// TIME_WAIT connections a newer SYN reopened since start (wraps at 2^32).
uint32_t emcp_lwip_time_wait_reopened(void);

#ifdef __cplusplus
}
#endif

#endif
