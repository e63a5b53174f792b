// emcp/lwip/mdns.h - one service announced on the LAN with lwIP's mDNS responder (apps/mdns:
// multicast DNS, RFC 6762, and DNS-SD, RFC 6763): the host's name and address (HOST.local, A),
// and one service instance (PTR from the service type, SRV: HOST.local and the port, TXT: the
// "key=value" strings). lwIP probes for the names (three queries, 250 ms apart), announces them,
// then answers queries: multicast ones, and the unicast "legacy" queries of RFC 6762 section 6.7
// (from a port other than 5353: one question, answered to the sender with its id and question).
// The boards announce their MCP server with it (board/mdns.h, docs/discovery.md).
//
// Beyond lwIP's API: a TXT string may be up to 255 bytes (RFC 6763 section 6.1) where lwIP 2.1.3
// takes 63 (it keeps them as DNS labels): a longer one (the `revisions` record with five
// revisions is 64) is written into the record lwIP builds, behind the strings its API added,
// once these are found where lwIP 2.1.3 keeps them (the service's first member); otherwise it is
// left out and emcp_lwip_mdns_txt_cut() says so.
//
// lwIP's options (ports/lwip's lwipopts.h): LWIP_MDNS_RESPONDER 1 (with it LWIP_IGMP), a UDP pcb,
// a netif client-data slot; the netif needs NETIF_FLAG_IGMP and an igmp_mac_filter that lets
// 224.0.0.251's frames in (the board's NIC driver). The host and service records come from
// lwIP's heap (MEM_SIZE), once; each answer is a PBUF_RAM from it while it is sent.
//
// A C interface, as emcp/lwip/tcp.h's: cmake/EmcpLwip.cmake builds src/mdns.cpp into the lwIP
// library, without an application's emcp_config.h.
//
// Context: lwIP's (NO_SYS: the loop, outside lwIP's callbacks; otherwise with the core lock
// held). One announcement per program (the responder's state is static). Zero heap.
//
//   static const char* const kTxt[] = {"path=/mcp", "tls=0"};
//   struct emcp_lwip_mdns_service s = {"board-123456", "My board", "_mcp", 80, kTxt, 2, 0};
//   if (emcp_lwip_mdns_start(netif, &s) != ERR_OK) ...   // once the netif is up
#ifndef EMCP_LWIP_MDNS_H
#define EMCP_LWIP_MDNS_H

#include <stddef.h>
#include <stdint.h>

#include "lwip/err.h"

struct netif;

#ifdef __cplusplus
extern "C" {
#endif

/// What is announced. The strings and the array are the caller's and must stay valid and
/// unchanged while the announcement lasts (the TXT strings are read each time an answer is
/// built, from lwIP's context).
struct emcp_lwip_mdns_service {
  const char* host;      ///< the host's name, announced as HOST.local: 1 to 63 bytes (letters, digits, '-')
  const char* instance;  ///< the service instance's name (UTF-8, what a browser lists): 1 to 63 bytes
  const char* type;      ///< the service type's first label, "_mcp" (the protocol is always _tcp): 1 to 63 bytes
  uint16_t port;         ///< the service's TCP port (SRV)
  const char* const* txt;  ///< the TXT strings, "key=value", each 1 to 255 bytes, the first at most 63
  size_t txt_count;        ///< at least 1
  uint32_t ttl_s;  ///< the records' time to live; 0: 120 s (RFC 6762 section 10's for A and SRV)
};

/// Starts the responder on `netif` (lwIP's mdns_resp_init the first time, then its host and
/// service): it probes once the netif has an address and announces after. Returns ERR_OK;
/// ERR_VAL when a name is empty or over 63 bytes, there is no TXT string, one is empty or over
/// 255 bytes, the first one is over 63, or the TXT record is over 255 bytes with its length bytes; ERR_ALREADY when
/// an announcement was started already; ERR_MEM when lwIP's heap has no room for the records;
/// what igmp_joingroup_netif returns when the group cannot be joined (ERR_VAL: the netif has
/// no NETIF_FLAG_IGMP).
err_t emcp_lwip_mdns_start(struct netif* netif, const struct emcp_lwip_mdns_service* service);

/// The netif's address changed (a new lease, the static fallback): probes and announces again
/// (RFC 6762 section 8). Nothing before emcp_lwip_mdns_start().
void emcp_lwip_mdns_restart(void);

/// Where probing is: 0 not started (or probing), 1 announced, -1 another host on the LAN
/// answered for one of the names (lwIP then stops answering: RFC 6762 section 9; a new name
/// is left to the application).
int emcp_lwip_mdns_probe_result(void);

/// Non-zero when an answer's TXT record left a string out (the note above on strings over 63
/// bytes: this lwIP keeps its service record otherwise than lwIP 2.1.3).
int emcp_lwip_mdns_txt_cut(void);

#ifdef __cplusplus
}
#endif

#endif  // EMCP_LWIP_MDNS_H
