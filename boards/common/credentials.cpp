#include "board/credentials.h"

#include <string.h>

#ifndef EMCP_BOARD_CREDENTIALS_ADDR
#error "EMCP_BOARD_CREDENTIALS_ADDR: the board's credentials region (board.cmake)"
#endif
#ifndef EMCP_BOARD_CREDENTIALS_SIZE
#define EMCP_BOARD_CREDENTIALS_SIZE 16384
#endif

namespace emcp {
namespace board {

namespace {
uint32_t le32(const uint8_t* p) {
  return static_cast<uint32_t>(p[0]) | static_cast<uint32_t>(p[1]) << 8 | static_cast<uint32_t>(p[2]) << 16 |
         static_cast<uint32_t>(p[3]) << 24;
}

// The region's certificate and key (both empty in a region of entries only): false when it
// holds no region.
bool read_region(Credentials* out) {
  *out = Credentials();
  // The region's address is the board's (an integer from board.cmake).
  const auto* region = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(EMCP_BOARD_CREDENTIALS_ADDR));
  constexpr size_t kHead = 16;
  if (memcmp(region, "EMCPCRED", 8) != 0) return false;
  const uint32_t cert_len = le32(region + 8), key_len = le32(region + 12);
  if ((cert_len == 0) != (key_len == 0) || cert_len > EMCP_BOARD_CREDENTIALS_SIZE - kHead ||
      key_len > EMCP_BOARD_CREDENTIALS_SIZE - kHead - cert_len)
    return false;
  const uint8_t* cert = region + kHead;
  const uint8_t* key = cert + cert_len;
  if (cert_len != 0 && (cert[cert_len - 1] != 0 || key[key_len - 1] != 0)) return false;
  *out = Credentials{cert, cert_len, key, key_len};
  return true;
}

}  // namespace

bool credentials(Credentials* out) {
  if (read_region(out) && out->cert_len != 0) return true;
  *out = Credentials();
  return false;
}

const char* credential_entry(Entry type, unsigned index) {
  Credentials c;
  if (!read_region(&c)) return nullptr;
  const auto* region = reinterpret_cast<const uint8_t*>(static_cast<uintptr_t>(EMCP_BOARD_CREDENTIALS_ADDR));
  const uint8_t* const end = region + EMCP_BOARD_CREDENTIALS_SIZE;
  const uint8_t* p = c.key + c.key_len;
  if (end - p < 8 || memcmp(p, "AUTH", 4) != 0) return nullptr;
  uint32_t count = le32(p + 4);
  p += 8;
  for (; count != 0 && end - p >= 8; --count) {
    const uint32_t t = le32(p), len = le32(p + 4);
    p += 8;
    if (len == 0 || len > static_cast<size_t>(end - p) || p[len - 1] != 0) return nullptr;
    if (t == static_cast<uint32_t>(type)) {
      if (index == 0) return reinterpret_cast<const char*>(p);
      --index;
    }
    p += len;
  }
  return nullptr;
}

}  // namespace board
}  // namespace emcp
