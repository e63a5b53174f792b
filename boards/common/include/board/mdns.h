// board/mdns.h - the board's MCP server announced on the LAN over mDNS / DNS-SD, as
// docs/discovery.md describes (there is no MCP standard for it; emcp follows what existing MCP
// devices and tools use): the service type `_mcp._tcp`, an instance named by the application
// (the board's name by default) on the HTTP port, and the TXT records of what the image serves:
//
//   path=/mcp                      HttpOptions::path
//   sse=/sse                       HttpOptions::sse_path, when served (the legacy era)
//   ws=/ws                         HttpOptions::ws_path, when served (the legacy era and sha1)
//   revisions=2024-11-05,...       the revisions this build serves (emcp/mcp/revision.h's served())
//   tls=0                          1: the port speaks HTTPS/WSS (MdnsOptions::tls)
//
// The host is announced as HOST.local with its IPv4 address. lwIP's responder does the work
// (ports/lwip: emcp/lwip/mdns.h); it starts the first time the board has an address and probes
// and announces again at each new one. Boards with ports/lwip's lwIP (mps2-an385); where lwIP
// has no responder (LWIP_MDNS_RESPONDER 0: ESP-IDF's, whose own mdns component announces
// there) announce_over_mdns() returns the configuration as it was.
//
//   emcp::board::MdnsOptions mdns;  mdns.instance = "Greenhouse sensors";
//   serve_uart_and_http(server, link, program, loop, net, announce_over_mdns(NetConfig{}, net, mdns));
// (emcp::board::NetMcp does this itself: NetMcp::mdns().)
//
// Context: main(), before serve_uart_and_http(); the announcement then runs from net_poll()'s
// on_address (outside lwIP's callbacks; under an RTOS with lwIP's core lock held, as net_poll()
// is) and lwIP's own context (its answers).
#ifndef EMCP_BOARD_MDNS_H
#define EMCP_BOARD_MDNS_H

#include <stdint.h>

#include "board/net.h"
#include "board/serve_net.h"
#include "lwip/apps/mdns_opts.h"

namespace emcp {
namespace board {

/// What the board announces besides what its HTTP service says. The strings must outlive the
/// announcement (string literals).
struct MdnsOptions {
  bool enabled = true;            ///< false: no announcement
  const char* instance = nullptr; ///< the instance's name (UTF-8, 1 to 63 bytes); nullptr: emcp::board::name()
  /// The host's name (HOST.local; letters, digits and '-', 1 to 63 bytes); nullptr: the board's
  /// name, '-' and the last three bytes of its MAC address in hex ("mps2-an385-123456"), which
  /// keeps two boards on one LAN apart.
  const char* host = nullptr;
  bool tls = false;               ///< the port speaks TLS (HTTPS, WSS): `tls=1`
};

/// Where the announcement is (diagnostics).
enum class MdnsState : uint8_t {
  kOff,        ///< not asked for (or no responder in this lwIP)
  kWaiting,    ///< asked for: the board has no address yet
  kProbing,    ///< lwIP probes for the names
  kAnnounced,  ///< announced; queries are answered
  kConflict,   ///< another host answered for a name: lwIP no longer answers (a new name is left
               ///< to the application)
  kFailed,     ///< not started: a name or a record too long, lwIP's heap full, the group not joined
};

#if LWIP_MDNS_RESPONDER
/// `config` with its on_address wrapped: the first time the board has an address, `net`'s HTTP
/// port is announced with the TXT records of `net.options` and the build (above) and `options`;
/// each later address is announced again; then config's own on_address runs. `net` and
/// `options` are copied (their options and strings must outlive the announcement). Returns
/// `config` unchanged when options.enabled is false or `net` serves no HTTP (no http or
/// options). One announcement per image.
NetConfig announce_over_mdns(const NetConfig& config, const HttpService& net, const MdnsOptions& options);
MdnsState mdns_state();
#else
inline NetConfig announce_over_mdns(const NetConfig& config, const HttpService&, const MdnsOptions&) { return config; }
inline MdnsState mdns_state() { return MdnsState::kOff; }
#endif

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_MDNS_H
