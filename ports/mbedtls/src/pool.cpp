#include "emcp/mbedtls/pool.h"

#include <string.h>

EMCP_NS_BEGIN
namespace mbedtls {

namespace {

// A block: its header, then its bytes. `size` counts the whole block (header included) and is a
// multiple of 8; the blocks lie end to end over the buffer, so the next one is at +size.
//
// Two things keep an allocation short (Mbed TLS's big numbers allocate and free all the time: a
// handshake makes thousands of calls): every byte of a free block but its header is zero
// (the buffer is cleared once, a block when it is freed, a header when its block merges into
// the one before), so calloc has nothing to clear; and the search starts at the first free
// block (g_first), not at the buffer's start, past the long-lived blocks (contexts, records,
// the certificate) that sit there. The blocks chosen are the same as a search from the start
// would choose: first fit.
struct Header {
  uint32_t size;
  uint32_t used;  // 0: free
};
constexpr size_t kHeader = sizeof(Header);
static_assert(kHeader == 8, "block header is 8 bytes");

uint8_t* g_base = nullptr;
size_t g_size = 0;
PoolStats g_stats;
size_t g_mark_base = 0;
size_t g_mark_peak = 0;
size_t g_first = 0;  // no free block starts before this offset

Header* at(size_t off) { return reinterpret_cast<Header*>(static_cast<void*>(g_base + off)); }

// Merges the free blocks that follow the free block at `off` into it, their headers cleared
// (they become free bytes of it).
void merge_following(size_t off) {
  Header* h = at(off);
  while (off + h->size < g_size && at(off + h->size)->used == 0) {
    Header* next = at(off + h->size);
    h->size += next->size;
    memset(next, 0, kHeader);
  }
}

}  // namespace

void pool_init(void* buf, size_t n) {
  const uintptr_t addr = reinterpret_cast<uintptr_t>(buf);
  const size_t skip = (8 - (addr & 7)) & 7;
  g_stats = PoolStats();
  g_base = nullptr;
  g_size = 0;
  if (buf == nullptr || n < skip + 64) return;
  g_base = static_cast<uint8_t*>(buf) + skip;
  g_size = (n - skip) & ~static_cast<size_t>(7);
  if (g_size > 0xFFFFFFF8u) g_size = 0xFFFFFFF8u;
  memset(g_base, 0, g_size);
  g_first = 0;
  at(0)->size = static_cast<uint32_t>(g_size);
  at(0)->used = 0;
  g_stats.size = g_size;
}

const PoolStats& pool_stats() { return g_stats; }

void pool_mark() {
  g_mark_base = g_stats.in_use;
  g_mark_peak = g_stats.in_use;
}

size_t pool_peak_since_mark() { return g_mark_peak - g_mark_base; }

namespace {
const Platform* g_clock = nullptr;
}  // namespace

void pool_set_clock(const Platform& platform) { g_clock = &platform; }

uint64_t pool_clock_s() {
  if (g_clock == nullptr) return 0;
  if (g_clock->unix_time_s != nullptr) {
    const uint64_t t = g_clock->unix_time_s();
    if (t != 0) return t;
  }
  return g_clock->now_ms != nullptr ? g_clock->now_ms() / 1000u : 0;
}

void* pool_calloc(size_t count, size_t size) {
  if (g_base == nullptr || count == 0 || size == 0) return nullptr;
  if (count > (g_size / size)) {
    ++g_stats.failures;
    return nullptr;
  }
  const size_t want = (count * size + kHeader + 7) & ~static_cast<size_t>(7);
  for (size_t off = g_first; off < g_size; off += at(off)->size) {
    Header* h = at(off);
    if (h->used != 0) continue;
    // Merge the free blocks that follow (frees merge too; this catches what they could not).
    merge_following(off);
    if (h->size < want) continue;
    if (h->size - want >= kHeader + 8) {
      Header* rest = at(off + want);
      rest->size = static_cast<uint32_t>(h->size - want);
      rest->used = 0;
      h->size = static_cast<uint32_t>(want);
    }
    h->used = 1;
    if (off == g_first) {  // the first free block is now further on
      while (g_first < g_size && at(g_first)->used != 0) g_first += at(g_first)->size;
    }
    g_stats.in_use += h->size;
    ++g_stats.blocks;
    if (g_stats.in_use > g_stats.high_water) g_stats.high_water = g_stats.in_use;
    if (g_stats.in_use > g_mark_peak) g_mark_peak = g_stats.in_use;
    return g_base + off + kHeader;  // zero already: a free block's bytes are
  }
  ++g_stats.failures;
  return nullptr;
}

void pool_free(void* p) {
  if (p == nullptr || g_base == nullptr) return;
  uint8_t* const b = static_cast<uint8_t*>(p);
  if (b < g_base + kHeader || b >= g_base + g_size) return;  // not ours: ignored
  const size_t off = static_cast<size_t>(b - g_base) - kHeader;
  Header* h = at(off);
  if (h->used == 0) return;  // freed twice: ignored
  // Freed memory may have held keys: cleared before anyone else gets it.
  memset(b, 0, h->size - kHeader);
  h->used = 0;
  g_stats.in_use -= h->size;
  --g_stats.blocks;
  merge_following(off);
  if (off < g_first) g_first = off;
}

}  // namespace mbedtls
EMCP_NS_END

// Mbed TLS's platform calloc/free on the boards (MBEDTLS_PLATFORM_CALLOC_MACRO and
// MBEDTLS_PLATFORM_FREE_MACRO in emcp_mbedtls_config.h name these).
extern "C" void* emcp_mbedtls_calloc(size_t count, size_t size) {
  return emcp::mbedtls::pool_calloc(count, size);
}
extern "C" void emcp_mbedtls_free(void* p) { emcp::mbedtls::pool_free(p); }

// Mbed TLS's clock on the boards (MBEDTLS_PLATFORM_TIME_MACRO): session tickets' ages.
extern "C" long long emcp_mbedtls_time(long long* t) {
  const long long now = static_cast<long long>(emcp::mbedtls::pool_clock_s());
  if (t != nullptr) *t = now;
  return now;
}
