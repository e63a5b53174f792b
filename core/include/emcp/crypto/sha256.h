// emcp/crypto/sha256.h - SHA-256 and HMAC-SHA256, portable and without dependencies.
//
// What it is for: integrity-protecting state that a server hands to a client and gets back
// later, such as the opaque `requestState` of MCP 2026-07-28 multi round-trip requests. The
// server MACs the state with a key only it knows, sends state and tag, and on its return
// recomputes the tag and compares with equal_ct(); a state whose tag does not match is refused.
// It lives in core, with no dependency, so that boards without Mbed TLS have it; a port with
// a hardware hash or Mbed TLS may still use this one (the results are the same bytes).
//
// Standards: SHA-256 is FIPS 180-4 (messages of up to 2^61 - 1 bytes); HMAC is RFC 2104 with
// SHA-256 (RFC 4231 test vectors): a key longer than the 64-byte block is hashed first, a
// shorter one zero-padded. Tested against the NIST and RFC 4231 vectors and, at test time,
// against Mbed TLS and openssl (tests/unit/crypto_sha256_test.cpp).
//
// Security notes:
//   - HMAC-SHA256 is a MAC: it proves that whoever made the tag had the key. It does not hide
//     the state (the client can read it: put nothing secret in it, or encrypt it as well) and
//     does not stop a replay of an old, validly tagged state (put an expiry or a nonce inside).
//   - The key: 32 random bytes from the Platform's random source (Platform::random), made at
//     start-up or kept in protected storage; never a constant in the firmware, never derived
//     from a device serial. Anyone with the key can forge states.
//   - Compare tags with equal_ct(), never memcmp(): memcmp stops at the first differing byte and
//     lets a client find a valid tag byte by byte from response times.
//   - Not for passwords: SHA-256 is fast on purpose; hashing passwords needs a slow, salted
//     function (PBKDF2, scrypt, Argon2), which emcp does not provide.
//   - Timing: the hash itself has no branch and no table index that depends on the data, so its
//     time depends only on the lengths.
//   - Wiping: finish() and the destructors zero the buffered message bytes, the HMAC key state
//     and the inner hash (volatile stores the compiler keeps). The 64-byte message schedule on
//     the stack of the compression function is not wiped.
//
// Memory: no heap, no recursion, no state outside the objects. sizeof(Sha256) is 104 bytes
// (8 state words, a 64-bit length, a 64-byte block buffer), sizeof(HmacSha256) 144 (a Sha256,
// the 32-byte outer state after the key, a flag, alignment). The only table is the 64 round
// constants (256 bytes of flash). Input of any alignment and any split; the output is written
// byte by byte (no alignment needed); the byte order of the host does not matter.
// Stack, the deepest call of each function (its own frame in brackets), arm-none-eabi-gcc 12.2
// -Os for Cortex-M0 (-fstack-usage and the call graph): Sha256::update() 192 (8), finish() 192
// (40), Sha256::hash() 312 (120: the object); HmacSha256::init() 272 (80: the padded key),
// update() 200 (8), finish() 248 (56), HmacSha256::mac() 440 (168: the object); equal_ct() 16.
// All but equal_ct() include the compression function's 152 (the 16-word schedule, spills).
// Flash: 1,711 bytes on Cortex-M0 (-Os, all of it: the compression function 412, the round
// constants 256); 2.3 KiB on RV32IMAC. An image links only the functions it calls.
// Speed: on the x86-64 host (AMD EPYC, one core, g++ 12 -O2) about 250 MB/s (clang 14: 235);
// an HMAC of 200 bytes with its own init() takes 1.9 us. Cortex-M0: about 10,000 cycles per
// 64-byte block, i.e. some 100 KB/s at 16 MHz (an estimate: the instructions of a run under
// QEMU weighted with the M0's cycle counts, no flash wait states; not measured on a board). An
// HMAC of n bytes hashes ceil((n + 9) / 64) + 3 blocks: 200 bytes, 7 blocks, about 4.5 ms at
// 16 MHz; copying a keyed object instead of calling init() saves 2 of them.
//
// Context: any task, or an ISR, on objects the caller owns; one object must not be used by two
// contexts at once. The functions keep no static state. None can fail: a null pointer with a
// non-zero length, and an HmacSha256 used without a key, are programmer errors (EMCP_ASSERT).
//
// Example (tag a state, then check what comes back):
//   uint8_t tag[emcp::crypto::kSha256Size];
//   emcp::crypto::HmacSha256::mac(key, sizeof(key), state, state_len, tag);
//   ...
//   uint8_t expect[emcp::crypto::kSha256Size];
//   emcp::crypto::HmacSha256::mac(key, sizeof(key), back, back_len, expect);
//   if (!emcp::crypto::equal_ct(expect, back_tag, sizeof(expect))) { /* refuse the state */ }
#ifndef EMCP_CRYPTO_SHA256_H
#define EMCP_CRYPTO_SHA256_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN
namespace crypto {

/// Bytes of a SHA-256 digest and of an HMAC-SHA256 tag.
constexpr size_t kSha256Size = 32;
/// Bytes of a SHA-256 block (HMAC pads the key to this).
constexpr size_t kSha256BlockSize = 64;

/// Streaming SHA-256. update() any number of times with any split of the message, then
/// finish(); the digest is the same as for the whole message at once.
///   emcp::crypto::Sha256 s;
///   s.update("ab", 2); s.update("c", 1);
///   uint8_t d[emcp::crypto::kSha256Size]; s.finish(d);   // ba7816bf...
class Sha256 {
 public:
  /// Ready for a message.
  Sha256();
  /// Zeroes the whole object.
  ~Sha256();
  Sha256(const Sha256&) = default;             ///< copies a hash in progress (to fork it)
  Sha256& operator=(const Sha256&) = default;

  /// Drops the message so far (its buffered bytes are zeroed): ready for a new one.
  void reset();
  /// Adds `n` bytes at `data` (not kept after the call; may be null when `n` is 0).
  void update(const void* data, size_t n);
  /// Writes the 32-byte digest of everything given since construction or the last reset() or
  /// finish() to `out` (caller storage, any alignment), then resets: the object is ready for a
  /// new message, and holds no byte of the old one.
  void finish(uint8_t out[kSha256Size]);

  /// One-shot: the digest of `n` bytes at `data`.
  static void hash(const void* data, size_t n, uint8_t out[kSha256Size]);

 private:
  friend class HmacSha256;
  void start();
  // Continues from a saved chaining value, as if one block had been hashed (HMAC's outer hash).
  void start_after_block(const uint32_t state[8]);

  uint32_t h_[8];                    // chaining value
  uint64_t bytes_;                   // message length so far; bytes_ % 64 of them are in block_
  uint8_t block_[kSha256BlockSize];  // the incomplete block
};

/// Streaming HMAC-SHA256 (RFC 2104). init() with the key, update() with the message in any
/// split, finish() for the tag. finish() forgets the key: init() again for the next message,
/// or init() once and copy the keyed object for each message (saves hashing the key's two
/// blocks each time):
///   emcp::crypto::HmacSha256 keyed;  keyed.init(key, 32);        // once
///   emcp::crypto::HmacSha256 h = keyed;  h.update(msg, n);  h.finish(tag);   // per message
/// update() or finish() before init() (or after finish()) is a programmer error
/// (EMCP_ASSERT).
class HmacSha256 {
 public:
  HmacSha256() = default;
  /// Zeroes the key state and the hash in progress (the inner Sha256 zeroes itself).
  ~HmacSha256();
  HmacSha256(const HmacSha256&) = default;  ///< copies the key state (each copy zeroes its own)
  HmacSha256& operator=(const HmacSha256&) = default;

  /// Starts a MAC with the key of `key_len` bytes at `key` (may be null when `key_len` is 0;
  /// not kept: only the two hash states derived from it are). Any length, but RFC 2104
  /// discourages keys shorter than 32 bytes; a key longer than 64 bytes is hashed to 32 first.
  /// Drops a MAC in progress.
  void init(const uint8_t* key, size_t key_len);
  /// Adds `n` bytes of the message (not kept after the call; may be null when `n` is 0).
  void update(const void* data, size_t n);
  /// Writes the 32-byte tag to `out` (caller storage, any alignment) and zeroes the key state.
  /// To send a shorter tag, send its first bytes (RFC 2104 5: at least 16).
  void finish(uint8_t out[kSha256Size]);

  /// One-shot: the tag of `n` bytes at `data` under the key of `key_len` bytes at `key`.
  static void mac(const uint8_t* key, size_t key_len, const void* data, size_t n,
                  uint8_t out[kSha256Size]);

 private:
  Sha256 inner_;          // H(K ^ ipad || message so far)
  uint32_t outer_[8]{};   // state of H after the block K ^ opad
  bool keyed_ = false;    // init() done and finish() not yet
};

/// True when the `n` bytes at `a` and at `b` are equal, in a time that depends only on `n`
/// (every byte is read, whatever the earlier ones were). For comparing MAC tags. `a` and `b`
/// may be null when `n` is 0 (then true).
[[nodiscard]] bool equal_ct(const void* a, const void* b, size_t n);

}  // namespace crypto
EMCP_NS_END

#endif  // EMCP_CRYPTO_SHA256_H
