// The board-neutral part of board/net.h, for every board with a network.
#include "board/board.h"
#include "board/net.h"
#include "emcp/json/number.h"

namespace board {

const emcp::Platform& net_platform() {
  static constexpr emcp::Platform kNet{&now_ms, &net_random};
  return kNet;
}

unsigned format_ipv4(const Ipv4& ip, char* out) {
  unsigned n = 0;
  for (unsigned i = 0; i < 4; ++i) {
    if (i != 0) out[n++] = '.';
    n += static_cast<unsigned>(emcp::json::format_uint64(ip.octets[i], out + n));
  }
  out[n] = '\0';
  return n;
}

}  // namespace board
