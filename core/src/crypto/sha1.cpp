#include "emcp/crypto/sha1.h"

#include <string.h>

#include "emcp/util/assert.h"

EMCP_NS_BEGIN
namespace crypto {

namespace {

inline uint32_t rotl(uint32_t x, unsigned n) { return (x << n) | (x >> (32u - n)); }

// FIPS 180-4 6.1.2: one 64-byte block at `p` (any alignment) into `h`. The message schedule is
// a ring of 16 words; one round per iteration, the variables shifted by moves (the form that
// is smallest on the Cortex-M0 and M3: Mbed TLS's unrolled one is 3.7 KB there).
void compress(uint32_t h[5], const uint8_t* p) {
  uint32_t w[16];
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4];
  for (unsigned t = 0; t < 80; ++t) {
    uint32_t x;
    if (t < 16) {
      // Big-endian, byte by byte: no unaligned word access (Cortex-M0 faults on one).
      const uint8_t* q = p + 4 * t;
      x = (static_cast<uint32_t>(q[0]) << 24) | (static_cast<uint32_t>(q[1]) << 16) |
          (static_cast<uint32_t>(q[2]) << 8) | static_cast<uint32_t>(q[3]);
    } else {
      x = rotl(w[(t - 3) & 15] ^ w[(t - 8) & 15] ^ w[(t - 14) & 15] ^ w[t & 15], 1);
    }
    w[t & 15] = x;
    uint32_t f, k;
    if (t < 20) {
      f = (b & c) | (~b & d);
      k = 0x5a827999u;
    } else if (t < 40) {
      f = b ^ c ^ d;
      k = 0x6ed9eba1u;
    } else if (t < 60) {
      f = (b & c) | (b & d) | (c & d);
      k = 0x8f1bbcdcu;
    } else {
      f = b ^ c ^ d;
      k = 0xca62c1d6u;
    }
    const uint32_t tmp = rotl(a, 5) + f + e + k + x;
    e = d;
    d = c;
    c = rotl(b, 30);
    b = a;
    a = tmp;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
}

}  // namespace

void sha1(const void* data, size_t n, uint8_t out[kSha1Size]) {
  EMCP_ASSERT(data != nullptr || n == 0);
  EMCP_ASSERT(out != nullptr);
  // FIPS 180-4 5.3.1.
  uint32_t h[5] = {0x67452301u, 0xefcdab89u, 0x98badcfeu, 0x10325476u, 0xc3d2e1f0u};
  const uint8_t* p = static_cast<const uint8_t*>(data);
  const uint64_t bits = static_cast<uint64_t>(n) << 3;
  // Whole blocks straight from the caller's buffer.
  for (; n >= 64; n -= 64, p += 64) compress(h, p);
  // FIPS 180-4 5.1.1: the rest, a 1 bit, zeros up to 56 mod 64 bytes, the length in bits
  // (64, big-endian): one block, or two when the rest leaves no room for the length.
  uint8_t block[64];
  if (n != 0) memcpy(block, p, n);
  block[n++] = 0x80;
  if (n > 56) {
    memset(block + n, 0, 64 - n);
    compress(h, block);
    n = 0;
  }
  memset(block + n, 0, 56 - n);
  for (unsigned i = 0; i < 8; ++i) block[56 + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  compress(h, block);
  for (unsigned i = 0; i < 5; ++i) {
    out[4 * i] = static_cast<uint8_t>(h[i] >> 24);
    out[4 * i + 1] = static_cast<uint8_t>(h[i] >> 16);
    out[4 * i + 2] = static_cast<uint8_t>(h[i] >> 8);
    out[4 * i + 3] = static_cast<uint8_t>(h[i]);
  }
}

}  // namespace crypto
EMCP_NS_END
