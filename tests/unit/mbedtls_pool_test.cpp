// The boards' memory for Mbed TLS (emcp/mbedtls/pool.h), on the host: every allocation is zeroed,
// aligned and inside the buffer, no two overlap, freed memory is cleared, neighbours merge, the
// choice is first fit (checked against a model of the blocks that searches from the start, in
// random sequences of allocations and frees of the sizes Mbed TLS asks for), and what does not
// fit fails and is counted.
#include "emcp/mbedtls/pool.h"

#include <gtest/gtest.h>
#include <string.h>

#include <map>
#include <random>
#include <vector>

namespace {

using emcp::mbedtls::pool_calloc;
using emcp::mbedtls::pool_free;
using emcp::mbedtls::pool_init;
using emcp::mbedtls::pool_stats;

constexpr size_t kPool = 16 * 1024;
alignas(8) uint8_t g_buf[kPool];

bool all(const uint8_t* p, size_t n, uint8_t v) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != v) return false;
  return true;
}

// The model: the blocks as [offset, size, used], end to end, first fit from the start, merged as
// the pool merges them (a block's size rounded up to 8 with its 8-byte header; a rest of 16
// bytes or more split off).
struct Model {
  std::map<size_t, std::pair<size_t, bool>> blocks{{0, {kPool, false}}};
  void merge(size_t off) {
    auto it = blocks.find(off);
    for (auto next = std::next(it); next != blocks.end() && !next->second.second; next = blocks.erase(next))
      it->second.first += next->second.first;
  }
  long alloc(size_t n) {
    const size_t want = (n + 8 + 7) & ~size_t{7};
    for (auto& [off, b] : blocks) {
      if (b.second) continue;
      merge(off);
      if (b.first < want) continue;
      if (b.first - want >= 16) {
        blocks[off + want] = {b.first - want, false};
        b.first = want;
      }
      b.second = true;
      return long(off + 8);
    }
    return -1;
  }
  void free(size_t payload) {
    blocks[payload - 8].second = false;
    merge(payload - 8);
  }
};

}  // namespace

TEST(MbedtlsPool, AllocationsAreZeroedAlignedAndFreedMemoryIsCleared) {
  memset(g_buf, 0xA5, sizeof g_buf);  // the pool clears what it is given
  pool_init(g_buf, sizeof g_buf);
  auto* a = static_cast<uint8_t*>(pool_calloc(10, 7));
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(a) % 8, 0u);
  EXPECT_TRUE(all(a, 70, 0));
  memset(a, 0x5A, 70);  // a secret
  auto* b = static_cast<uint8_t*>(pool_calloc(1, 100));
  ASSERT_NE(b, nullptr);
  memset(b, 0x77, 100);
  pool_free(a);
  EXPECT_TRUE(all(a, 70, 0)) << "freed memory keeps its secret";
  // The next allocation takes the freed block again (first fit), zeroed.
  auto* c = static_cast<uint8_t*>(pool_calloc(1, 64));
  EXPECT_EQ(c, a);
  EXPECT_TRUE(all(c, 64, 0));
  pool_free(b);
  pool_free(c);
  EXPECT_EQ(pool_stats().in_use, 0u);
  EXPECT_EQ(pool_stats().blocks, 0u);
  // Everything merged back: the whole pool in one allocation, all of it zero (the headers of
  // the merged blocks too).
  auto* whole = static_cast<uint8_t*>(pool_calloc(1, kPool - 8));
  ASSERT_NE(whole, nullptr);
  EXPECT_TRUE(all(whole, kPool - 8, 0));
  pool_free(whole);
}

TEST(MbedtlsPool, WhatDoesNotFitFailsAndIsCounted) {
  pool_init(g_buf, sizeof g_buf);
  EXPECT_EQ(pool_calloc(1, kPool), nullptr);
  EXPECT_EQ(pool_calloc(SIZE_MAX / 2, 4), nullptr);  // count * size overflows
  EXPECT_EQ(pool_calloc(0, 8), nullptr);
  EXPECT_EQ(pool_stats().failures, 2u);
  int outside = 0;
  pool_free(&outside);  // not the pool's: ignored
  void* p = pool_calloc(1, 8);
  pool_free(p);
  pool_free(p);  // twice: ignored
  EXPECT_EQ(pool_stats().in_use, 0u);
}

// Random sequences of Mbed TLS's kind of requests (many small big-number limbs, some buffers of
// kilobytes, long-lived blocks among them): the pool's choices are the model's, and no two live
// allocations overlap.
TEST(MbedtlsPool, ChoosesTheFirstFitAsASearchFromTheStartWould) {
  std::mt19937 rng(33);
  for (int round = 0; round < 20; ++round) {
    pool_init(g_buf, sizeof g_buf);
    Model model;
    std::vector<std::pair<uint8_t*, size_t>> live;
    for (int step = 0; step < 3000; ++step) {
      if (live.empty() || rng() % 100 < 55) {
        const size_t n = rng() % 10 == 0 ? 200 + rng() % 3000 : 4 + rng() % 64;
        auto* p = static_cast<uint8_t*>(pool_calloc(1, n));
        const long expect = model.alloc(n);
        if (expect < 0) {
          ASSERT_EQ(p, nullptr) << "round " << round << " step " << step;
          continue;
        }
        ASSERT_EQ(p, g_buf + expect) << "round " << round << " step " << step << " size " << n;
        ASSERT_TRUE(all(p, n, 0));
        memset(p, 0xEE, n);
        live.emplace_back(p, n);
      } else {
        const size_t i = rng() % live.size();
        pool_free(live[i].first);
        model.free(size_t(live[i].first - g_buf));
        live.erase(live.begin() + long(i));
      }
      size_t in_use = 0;
      for (const auto& [off, b] : model.blocks)
        if (b.second) in_use += b.first;
      ASSERT_EQ(pool_stats().in_use, in_use);
    }
    for (size_t i = 0; i < live.size(); ++i)
      for (size_t j = i + 1; j < live.size(); ++j)
        ASSERT_TRUE(live[i].first + live[i].second <= live[j].first || live[j].first + live[j].second <= live[i].first);
  }
}
