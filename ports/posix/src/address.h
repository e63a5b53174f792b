// Internal to ports/posix: a socket address from an IPv4 or IPv6 literal, for listen() and
// dial() (http_listener.h). Parsing only: no resolver, no heap.
#ifndef EMCP_POSIX_SRC_ADDRESS_H
#define EMCP_POSIX_SRC_ADDRESS_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN
namespace posix {

/// An address of either family, in the space of the larger (sockaddr_in fits a sockaddr_in6;
/// sin_port and sin6_port lie at the same offset). len 0: none.
struct SocketAddress {
  sockaddr_in6 addr{};
  uint32_t len = 0;

  const sockaddr* get() const { return reinterpret_cast<const sockaddr*>(&addr); }
  int family() const { return addr.sin6_family; }
  /// Copies `from` (IPv4 or IPv6) and sets the port. False: too large to hold.
  bool set(const sockaddr* from, size_t from_len, uint16_t port) {
    if (from_len > sizeof addr) return false;
    memcpy(&addr, from, from_len);
    addr.sin6_port = htons(port);
    len = static_cast<uint32_t>(from_len);
    return true;
  }
  /// `text` as an IPv4 or IPv6 literal with `port`. False: it is neither.
  bool parse(const char* text, uint16_t port) {
    sockaddr_in v4{};
    if (inet_pton(AF_INET, text, &v4.sin_addr) == 1) {
      v4.sin_family = AF_INET;
      return set(reinterpret_cast<const sockaddr*>(&v4), sizeof v4, port);
    }
    sockaddr_in6 v6{};
    if (inet_pton(AF_INET6, text, &v6.sin6_addr) != 1) return false;
    v6.sin6_family = AF_INET6;
    return set(reinterpret_cast<const sockaddr*>(&v6), sizeof v6, port);
  }
};

}  // namespace posix
EMCP_NS_END

#endif  // EMCP_POSIX_SRC_ADDRESS_H
