#include "emcp/crypto/sha256.h"

#include <string.h>

#include "emcp/util/assert.h"

EMCP_NS_BEGIN
namespace crypto {

namespace {

// FIPS 180-4 4.2.2: the first 32 bits of the fractional parts of the cube roots of the first 64
// primes. The only table of this file (256 bytes of .rodata, flash on a microcontroller).
constexpr uint32_t kK[64] = {
    0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
    0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
    0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
    0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
    0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
    0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
    0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
    0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
};

// FIPS 180-4 5.3.3: the initial hash value.
constexpr uint32_t kInit[8] = {0x6a09e667, 0xbb67ae85, 0x3c6ef372, 0xa54ff53a,
                               0x510e527f, 0x9b05688c, 0x1f83d9ab, 0x5be0cd19};

inline uint32_t rotr(uint32_t x, unsigned n) { return (x >> n) | (x << (32u - n)); }

// Big-endian loads and stores byte by byte: independent of the host's byte order, and no
// unaligned word access (Cortex-M0 faults on one).
inline uint32_t load_be32(const uint8_t* p) {
  return (static_cast<uint32_t>(p[0]) << 24) | (static_cast<uint32_t>(p[1]) << 16) |
         (static_cast<uint32_t>(p[2]) << 8) | static_cast<uint32_t>(p[3]);
}

inline void store_be32(uint8_t* p, uint32_t v) {
  p[0] = static_cast<uint8_t>(v >> 24);
  p[1] = static_cast<uint8_t>(v >> 16);
  p[2] = static_cast<uint8_t>(v >> 8);
  p[3] = static_cast<uint8_t>(v);
}

// Compresses the 64-byte block at `p` (any alignment) into `h` (FIPS 180-4 6.2.2). The message
// schedule is a ring of 16 words (64 bytes of stack) instead of 64. One round per iteration,
// the variables shifted by moves: on Cortex-M0 this is both the smallest and the fastest of the
// forms tried (an 8-round unrolled body was 2.8 times larger and about 20% slower there, with
// its variables spilled from the eight low registers); on x86-64 they run at the same speed.
void compress(uint32_t h[8], const uint8_t* p) {
  uint32_t w[16];
  uint32_t a = h[0], b = h[1], c = h[2], d = h[3], e = h[4], f = h[5], g = h[6], hh = h[7];
  for (unsigned t = 0; t < 64; ++t) {
    uint32_t x;
    if (t < 16) {
      x = load_be32(p + 4 * t);
    } else {
      const uint32_t w15 = w[(t - 15) & 15];
      const uint32_t w2 = w[(t - 2) & 15];
      x = w[t & 15] + (rotr(w15, 7) ^ rotr(w15, 18) ^ (w15 >> 3)) + w[(t - 7) & 15] +
          (rotr(w2, 17) ^ rotr(w2, 19) ^ (w2 >> 10));
    }
    w[t & 15] = x;
    const uint32_t t1 =
        hh + (rotr(e, 6) ^ rotr(e, 11) ^ rotr(e, 25)) + ((e & f) ^ (~e & g)) + kK[t] + x;
    const uint32_t t2 = (rotr(a, 2) ^ rotr(a, 13) ^ rotr(a, 22)) + ((a & b) ^ (a & c) ^ (b & c));
    hh = g;
    g = f;
    f = e;
    e = d + t1;
    d = c;
    c = b;
    b = a;
    a = t1 + t2;
  }
  h[0] += a;
  h[1] += b;
  h[2] += c;
  h[3] += d;
  h[4] += e;
  h[5] += f;
  h[6] += g;
  h[7] += hh;
}

// Zeroes `n` bytes at `p` with volatile stores, which the compiler may not drop as dead even
// just before the end of the object's lifetime.
void wipe(void* p, size_t n) {
  volatile uint8_t* v = static_cast<volatile uint8_t*>(p);
  for (size_t i = 0; i < n; ++i) v[i] = 0;
}

}  // namespace

bool equal_ct(const void* a, const void* b, size_t n) {
  EMCP_ASSERT((a != nullptr && b != nullptr) || n == 0);
  // Volatile reads: every byte is read and folded in, whatever the ones before it were.
  const volatile uint8_t* x = static_cast<const volatile uint8_t*>(a);
  const volatile uint8_t* y = static_cast<const volatile uint8_t*>(b);
  uint32_t diff = 0;
  for (size_t i = 0; i < n; ++i) diff |= static_cast<uint32_t>(x[i] ^ y[i]);
  // 1 when diff is 0, without a branch on it: diff - 1 borrows into bit 8 only from 0.
  return (((diff - 1u) >> 8) & 1u) != 0;
}

// ---- Sha256 -------------------------------------------------------------------------------------

Sha256::Sha256() : block_{} { start(); }

Sha256::~Sha256() { wipe(this, sizeof(*this)); }

void Sha256::start() {
  for (unsigned i = 0; i < 8; ++i) h_[i] = kInit[i];
  bytes_ = 0;
}

void Sha256::reset() {
  wipe(block_, sizeof(block_));
  start();
}

void Sha256::update(const void* data, size_t n) {
  EMCP_ASSERT(data != nullptr || n == 0);
  if (n == 0) return;
  const uint8_t* p = static_cast<const uint8_t*>(data);
  size_t used = static_cast<size_t>(bytes_ & 63u);
  bytes_ += n;
  if (used != 0) {
    const size_t take = n < kSha256BlockSize - used ? n : kSha256BlockSize - used;
    memcpy(block_ + used, p, take);
    p += take;
    n -= take;
    used += take;
    if (used < kSha256BlockSize) return;
    compress(h_, block_);
  }
  // Whole blocks straight from the caller's buffer, without a copy.
  for (; n >= kSha256BlockSize; n -= kSha256BlockSize, p += kSha256BlockSize) compress(h_, p);
  if (n != 0) memcpy(block_, p, n);
}

void Sha256::finish(uint8_t out[kSha256Size]) {
  EMCP_ASSERT(out != nullptr);
  // FIPS 180-4 5.1.1: a 1 bit, zeros up to 56 mod 64 bytes, the length in bits (64, big-endian).
  size_t used = static_cast<size_t>(bytes_ & 63u);
  const uint64_t bits = bytes_ << 3;
  block_[used++] = 0x80;
  if (used > 56) {
    memset(block_ + used, 0, kSha256BlockSize - used);
    compress(h_, block_);
    used = 0;
  }
  memset(block_ + used, 0, 56 - used);
  for (unsigned i = 0; i < 8; ++i) block_[56 + i] = static_cast<uint8_t>(bits >> (56 - 8 * i));
  compress(h_, block_);
  for (unsigned i = 0; i < 8; ++i) store_be32(out + 4 * i, h_[i]);
  reset();
}

void Sha256::hash(const void* data, size_t n, uint8_t out[kSha256Size]) {
  Sha256 s;
  s.update(data, n);
  s.finish(out);
}

void Sha256::start_after_block(const uint32_t state[8]) {
  for (unsigned i = 0; i < 8; ++i) h_[i] = state[i];
  bytes_ = kSha256BlockSize;
}

// ---- HmacSha256 ---------------------------------------------------------------------------------

HmacSha256::~HmacSha256() {
  wipe(outer_, sizeof(outer_));
  wipe(&keyed_, sizeof(keyed_));
}

void HmacSha256::init(const uint8_t* key, size_t key_len) {
  EMCP_ASSERT(key != nullptr || key_len == 0);
  // RFC 2104 2: K padded with zeros to the block size, a key longer than a block hashed first.
  uint8_t k[kSha256BlockSize];
  memset(k, 0, sizeof(k));
  inner_.reset();
  if (key_len > kSha256BlockSize) {
    inner_.update(key, key_len);
    inner_.finish(k);  // leaves inner_ reset
  } else if (key_len != 0) {
    memcpy(k, key, key_len);
  }
  // The outer hash after K ^ opad is all finish() needs of the key: 32 bytes of state.
  for (unsigned i = 0; i < kSha256BlockSize; ++i) k[i] = static_cast<uint8_t>(k[i] ^ 0x5c);
  inner_.update(k, sizeof(k));
  for (unsigned i = 0; i < 8; ++i) outer_[i] = inner_.h_[i];
  inner_.start();
  // The inner hash starts with K ^ ipad (0x36 = 0x5c ^ 0x6a).
  for (unsigned i = 0; i < kSha256BlockSize; ++i) k[i] = static_cast<uint8_t>(k[i] ^ 0x6a);
  inner_.update(k, sizeof(k));
  wipe(k, sizeof(k));
  keyed_ = true;
}

void HmacSha256::update(const void* data, size_t n) {
  EMCP_ASSERT(keyed_);
  inner_.update(data, n);
}

void HmacSha256::finish(uint8_t out[kSha256Size]) {
  EMCP_ASSERT(keyed_);
  uint8_t inner_hash[kSha256Size];
  inner_.finish(inner_hash);
  // H(K ^ opad || inner hash), continuing from the state saved by init().
  inner_.start_after_block(outer_);
  inner_.update(inner_hash, sizeof(inner_hash));
  inner_.finish(out);
  wipe(inner_hash, sizeof(inner_hash));
  wipe(outer_, sizeof(outer_));
  keyed_ = false;
}

void HmacSha256::mac(const uint8_t* key, size_t key_len, const void* data, size_t n,
                     uint8_t out[kSha256Size]) {
  HmacSha256 h;
  h.init(key, key_len);
  h.update(data, n);
  h.finish(out);
}

}  // namespace crypto
EMCP_NS_END
