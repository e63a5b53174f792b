// board/net.h - a board's Ethernet interface as one lwIP netif (ports/lwip's options: NO_SYS,
// static pools): the NIC driver, DHCP with a static fallback, lwIP's timers, and the platform
// functions lwIP needs (sys_now, emcp_lwip_assert, emcp_lwip_rand). A board with a NIC
// implements it in its own folder (mps2-an385: net.cpp over the LAN9118 driver); the
// application then uses lwIP's raw/altcp API directly for its connections.
//
// Context: main loop only, after emcp::board::init(). lwIP runs entirely inside net_poll() (frames
// in, timers), so the application's lwIP calls and its lwIP callbacks share that one context;
// an application callback must not call net_poll().
//
//   emcp::board::NetConfig config;               // DHCP, static 10.0.2.15/24 after 10 s without
//   if (!emcp::board::net_init(config)) ...      // no NIC
//   for (;;) { emcp::board::net_poll(); ... emcp::board::idle(); }
#ifndef EMCP_BOARD_NET_H
#define EMCP_BOARD_NET_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/platform.h"

struct netif;

namespace emcp {
namespace board {

/// An IPv4 address, most significant octet first (10.0.2.15 is {10, 0, 2, 15}).
struct Ipv4 {
  uint8_t octets[4];
};

/// Where the interface's address came from.
enum class NetSource : uint8_t { kNone, kDhcp, kStatic };

/// What the interface is: link, address and where it came from.
struct NetState {
  bool link_up;
  bool bound;  ///< has an address (then `address`, `netmask`, `gateway` are valid)
  NetSource source;
  Ipv4 address, netmask, gateway;
  uint8_t mac[6];
};

/// Frame counters of the NIC driver (each wraps at 2^32).
struct NetCounters {
  uint32_t rx_frames;   ///< frames handed to lwIP
  uint32_t rx_dropped;  ///< frames dropped for want of a pbuf (the pool was empty) or refused by lwIP
  uint32_t rx_errors;   ///< frames the NIC flagged bad
  uint32_t rx_overrun;  ///< frames the NIC itself dropped: its receive buffer was full (0 where it cannot tell)
  uint32_t tx_frames;   ///< frames sent
  uint32_t tx_dropped;  ///< frames not sent (no room in the NIC in time)
  uint32_t tx_errors;   ///< frames the NIC reported failed
};

struct NetConfig {
  /// Ask a DHCP server for the address; false: use the static one at once.
  bool dhcp = true;
  /// Without a lease after this long, stop asking and use the static address (0: ask forever).
  uint32_t dhcp_timeout_ms = 10000;
  /// The static address (QEMU's user network: the guest is 10.0.2.15, the gateway 10.0.2.2).
  Ipv4 static_address{{10, 0, 2, 15}};
  Ipv4 static_netmask{{255, 255, 255, 0}};
  Ipv4 static_gateway{{10, 0, 2, 2}};
  /// The MAC address when the NIC has none of its own (locally administered by default).
  uint8_t fallback_mac[6] = {0x02, 0x45, 0x4d, 0x43, 0x50, 0x01};
  /// Called from net_poll(), outside lwIP's processing (so it may call lwIP), each time the
  /// address changes (bound, or lost); nullptr: none. `state` is valid during the call.
  void (*on_address)(const NetState& state) = nullptr;
};

/// Starts lwIP (lwip_init) and the NIC, adds the interface as lwIP's default and starts DHCP
/// (or sets the static address). `config` is copied. False when the NIC does not answer; then
/// the other calls do nothing. Call once.
bool net_init(const NetConfig& config);

/// Moves received frames into lwIP, runs its timers (sys_check_timeouts), follows the PHY's
/// link (every 500 ms) and the DHCP fallback, then calls on_address if the address changed.
/// Call it from the loop at least every few milliseconds while traffic flows.
void net_poll();

/// The interface's state now.
NetState net_state();

/// The NIC driver's counters.
NetCounters net_counters();

/// The lwIP interface (for an application that binds to it), or nullptr before net_init().
struct netif* net_netif();

/// Random bytes for the HTTP engine's session ids, from the board's random generator. A board
/// without one (mps2-an385, in QEMU) mixes timing and its MAC address: NOT cryptographic, and
/// its README says so.
bool net_random(void* out, size_t n);
/// True when net_random is a cryptographic source (a TRNG). False on QEMU's MPS2, whose source is
/// for tests only: TLS images say so in their banner, since keys made from it are guessable.
bool net_random_is_cryptographic();
/// Wall-clock time (seconds since 1970; 0 until set): the application sets it from an RTC, from
/// SNTP, or in QEMU from semihosting's clock (board/credentials.h), for JWT lifetimes and
/// session tickets. net_platform() reports it as its unix_time_s.
void set_unix_time(uint64_t seconds_now);
uint64_t unix_time_s();
/// The host's clock through Arm semihosting (SYS_TIME), seconds since 1970. Only when the
/// emulator enables semihosting (QEMU: -semihosting-config enable=on,target=native): without it
/// the call faults.
uint64_t semihosting_time();
/// emcp::board::platform() with net_random as its random source (a network image's platform).
const emcp::Platform& net_platform();

/// Formats `ip` as dotted decimal into `out` (at least 16 bytes), NUL-terminated; returns the
/// length (7 to 15).
unsigned format_ipv4(const Ipv4& ip, char* out);

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_NET_H
