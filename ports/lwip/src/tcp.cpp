#include "emcp/lwip/tcp.h"

#include <stddef.h>
#include <string.h>

#include "lwip/ip_addr.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/tcp.h"

namespace {

uint32_t g_reopened = 0;
// lwIP's own initial sequence numbers (tcp_next_iss without LWIP_HOOK_TCP_ISN): 6510, then
// + tcp_ticks per connection; moved on past a reopened connection (reopen()).
u32_t g_iss = 6510;

// A new connection's first segment: SYN alone (no ACK, RST or FIN).
constexpr uint8_t kFlags = TCP_SYN | TCP_ACK | TCP_RST | TCP_FIN;

u32_t load32(const uint8_t* b) {
  return static_cast<u32_t>(b[0]) << 24 | static_cast<u32_t>(b[1]) << 16 | static_cast<u32_t>(b[2]) << 8 | b[3];
}
u16_t load16(const uint8_t* b) { return static_cast<u16_t>(b[0] << 8 | b[1]); }

// The IPv4 packet `p` (before lwIP's own checks: each length is checked here) is a SYN for a
// connection lwIP holds in TIME_WAIT, beyond what that connection received: the pcb is freed
// (tcp_abort frees a TIME_WAIT pcb without a RST or a callback), and the next initial sequence
// number is moved past what it sent.
void reopen(const pbuf* p) {
#if LWIP_IPV4 && LWIP_TCP
  const auto* ip = static_cast<const uint8_t*>(p->payload);
  if (p->len < IP_HLEN) return;
  const size_t ihl = (ip[0] & 0x0Fu) * 4u;
  if ((ip[0] >> 4) != 4 || ihl < IP_HLEN || ip[9] != IP_PROTO_TCP || p->len < ihl + TCP_HLEN) return;
  if ((load16(ip + 6) & (IP_MF | IP_OFFMASK)) != 0) return;  // a fragment: lwIP drops it (IP_REASSEMBLY 0)
  const uint8_t* tcp = ip + ihl;
  if ((tcp[13] & kFlags) != TCP_SYN) return;
  ip4_addr_t src, dst;
  memcpy(&src.addr, ip + 12, 4);  // network order, as lwIP keeps addresses
  memcpy(&dst.addr, ip + 16, 4);
  const u16_t sport = load16(tcp), dport = load16(tcp + 2);
  const u32_t seq = load32(tcp + 4);
  for (tcp_pcb* pcb = tcp_tw_pcbs; pcb != nullptr; pcb = pcb->next) {
    if (pcb->remote_port != sport || pcb->local_port != dport || !IP_IS_V4_VAL(pcb->remote_ip) ||
        !ip4_addr_cmp(ip_2_ip4(&pcb->remote_ip), &src) || !ip4_addr_cmp(ip_2_ip4(&pcb->local_ip), &dst))
      continue;
    if (!TCP_SEQ_GT(seq, pcb->rcv_nxt)) return;  // not newer: lwIP answers it (the old ACK)
    const u32_t floor = pcb->snd_nxt + 0x10000u;
    if (TCP_SEQ_LT(g_iss + tcp_ticks, floor)) g_iss = floor;
    ++g_reopened;
    tcp_abort(pcb);
    return;
  }
#else
  (void)p;
#endif
}

}  // namespace

extern "C" int emcp_lwip_ip4_input(struct pbuf* p, struct netif*) {
  reopen(p);
  return 0;
}

extern "C" uint32_t emcp_lwip_tcp_isn(void) {
#if LWIP_TCP
  g_iss += tcp_ticks;
#endif
  return g_iss;
}

extern "C" void emcp_lwip_tcp_states(uint16_t count[EMCP_LWIP_TCP_STATES]) {
  for (size_t i = 0; i < EMCP_LWIP_TCP_STATES; ++i) count[i] = 0;
#if LWIP_TCP
  const auto add = [count](const tcp_pcb* list) {
    for (const tcp_pcb* pcb = list; pcb != nullptr; pcb = pcb->next)
      if (static_cast<size_t>(pcb->state) < EMCP_LWIP_TCP_STATES) ++count[pcb->state];
  };
  add(tcp_bound_pcbs);
  add(tcp_active_pcbs);
  add(tcp_tw_pcbs);
  for (const tcp_pcb_listen* l = tcp_listen_pcbs.listen_pcbs; l != nullptr; l = l->next) ++count[LISTEN];
#endif
}

extern "C" uint32_t emcp_lwip_time_wait_reopened(void) { return g_reopened; }
