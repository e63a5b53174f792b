// The boards' C library functions (boards/common/mem.cpp), on the host, against the host's C
// library: memcpy, memmove, memset, memchr, memcmp, strlen, strcmp, strcpy, strcat at every
// alignment of source and destination and every length around the word loops' edges, with
// guard bytes around each destination (nothing written outside it). The board's definitions are
// compiled here under other names (board_memcpy...), so that the test binary keeps the host's.
#include <gtest/gtest.h>
#include <string.h>

#include <random>

// This file is built twice: as it is (suite BoardMem: the functions as the Cortex-M3 has them,
// words loaded from any address, EMCP_MEM_FAST), and by board_mem_plain_test.cpp (BoardMemPlain:
// aligned words only, no fast paths: the Cortex-M0's and RISC-V's code).
#ifndef BOARD_MEM_SUITE
#define BOARD_MEM_SUITE BoardMem
#define BOARD_FN(f) board_##f
#endif
#define memcpy BOARD_FN(memcpy)
#define memmove BOARD_FN(memmove)
#define memset BOARD_FN(memset)
#define memcmp BOARD_FN(memcmp)
#define memchr BOARD_FN(memchr)
#define strlen BOARD_FN(strlen)
#define strcmp BOARD_FN(strcmp)
#define strcpy BOARD_FN(strcpy)
#define strcat BOARD_FN(strcat)
#include "../../boards/common/mem.cpp"  // NOLINT(bugprone-suspicious-include)
#undef memcpy
#undef memmove
#undef memset
#undef memcmp
#undef memchr
#undef strlen
#undef strcmp
#undef strcpy
#undef strcat

namespace {

constexpr size_t kMax = 72;    // lengths 0..kMax: the 8-byte threshold, the 16-byte rounds, the tails
constexpr size_t kGuard = 8;   // bytes before and after a destination that must not change

struct Buffers {
  alignas(8) unsigned char src[kMax + 16];
  alignas(8) unsigned char ours[kGuard + kMax + 16 + kGuard];
  alignas(8) unsigned char theirs[kGuard + kMax + 16 + kGuard];
  explicit Buffers(std::mt19937& rng) {
    for (unsigned char& b : src) b = static_cast<unsigned char>(rng());
    for (size_t i = 0; i < sizeof ours; ++i) ours[i] = theirs[i] = static_cast<unsigned char>(rng());
  }
  bool same() const { return ::memcmp(ours, theirs, sizeof ours) == 0; }
};

}  // namespace

TEST(BOARD_MEM_SUITE, CopyAndSetMatchTheHostsAtEveryAlignment) {
  std::mt19937 rng(7);
  for (size_t so = 0; so < 8; ++so) {
    for (size_t dof = 0; dof < 8; ++dof) {
      for (size_t n = 0; n <= kMax; ++n) {
        Buffers b(rng);
        EXPECT_EQ(BOARD_FN(memcpy)(b.ours + kGuard + dof, b.src + so, n), b.ours + kGuard + dof);
        ::memcpy(b.theirs + kGuard + dof, b.src + so, n);
        ASSERT_TRUE(b.same()) << "memcpy src+" << so << " dst+" << dof << " n=" << n;
        const int c = static_cast<int>(rng()) % 512 - 128;  // any int: only its low byte counts
        EXPECT_EQ(BOARD_FN(memset)(b.ours + kGuard + dof, c, n), b.ours + kGuard + dof);
        ::memset(b.theirs + kGuard + dof, c, n);
        ASSERT_TRUE(b.same()) << "memset dst+" << dof << " n=" << n << " c=" << c;
        // Overlapping moves both ways.
        EXPECT_EQ(BOARD_FN(memmove)(b.ours + kGuard + dof, b.ours + kGuard + so, n), b.ours + kGuard + dof);
        ::memmove(b.theirs + kGuard + dof, b.theirs + kGuard + so, n);
        ASSERT_TRUE(b.same()) << "memmove from+" << so << " to+" << dof << " n=" << n;
      }
    }
  }
}

TEST(BOARD_MEM_SUITE, MemchrFindsTheFirstMatchAtEveryAlignment) {
  std::mt19937 rng(11);
  alignas(8) unsigned char buf[kMax + 16];
  // Every byte value as the one looked for (0x80 and above too: the word test's sign bits),
  // at every position or absent, at every alignment and length.
  for (int c : {0, 1, 0x7f, 0x80, 0x81, 0xfe, 0xff, int{'\n'}, int{'a'}}) {
    for (size_t off = 0; off < 8; ++off) {
      for (size_t n = 0; n <= kMax; ++n) {
        for (size_t at = 0; at <= n; ++at) {
          for (unsigned char& b : buf) {
            b = static_cast<unsigned char>(rng());
            if (b == static_cast<unsigned char>(c)) b ^= 1;  // no match but the planted ones
          }
          // Neighbours that differ from c by one bit and by the borrow pattern (c ^ 0x80, c - 1):
          // what a wrong word test would take for a match.
          for (size_t i = 0; i < n; ++i)
            if (rng() % 3 == 0) buf[off + i] = static_cast<unsigned char>(i % 2 ? c ^ 0x80 : c - 1);
          if (at < n) buf[off + at] = static_cast<unsigned char>(c);
          buf[off + n] = static_cast<unsigned char>(c);  // just past the end: never found
          const void* want = ::memchr(buf + off, c, n);
          ASSERT_EQ(BOARD_FN(memchr)(buf + off, c, n), want) << "c=" << c << " off=" << off << " n=" << n << " at=" << at;
          // Passing an int whose high bits are set finds the same byte.
          ASSERT_EQ(BOARD_FN(memchr)(buf + off, c | 0x100, n), want);
        }
      }
    }
  }
}

// strlen at every alignment and length around the word loop's edges (a word at a time on the
// cores that take it), the bytes after the NUL anything.
TEST(BOARD_MEM_SUITE, StrlenFindsTheNulAtEveryAlignment) {
  std::mt19937 rng(17);
  alignas(8) char buf[64];
  for (size_t at = 0; at < 8; ++at) {
    for (size_t n = 0; at + n + 1 < sizeof buf; ++n) {
      for (char& c : buf) c = static_cast<char>(rng() % 255 + 1);  // no NUL but the one below
      buf[at + n] = '\0';
      ASSERT_EQ(BOARD_FN(strlen)(buf + at), n) << "at " << at;
    }
  }
}

TEST(BOARD_MEM_SUITE, CompareAndStringFunctionsMatchTheHosts) {
  std::mt19937 rng(13);
  for (int round = 0; round < 2000; ++round) {
    unsigned char a[24], b[24];
    for (size_t i = 0; i < sizeof a; ++i) a[i] = b[i] = static_cast<unsigned char>(rng() % 4 + 'a' - 2 + (rng() % 16 == 0 ? 0x80 : 0));
    if (rng() % 2) b[rng() % sizeof b] = static_cast<unsigned char>(rng());
    const size_t n = rng() % sizeof a;
    const auto sign = [](int v) { return (v > 0) - (v < 0); };
    ASSERT_EQ(sign(BOARD_FN(memcmp)(a, b, n)), sign(::memcmp(a, b, n)));
    // At other alignments (the word loop loads from any address on the cores that can).
    const size_t oa = rng() % 4, ob = rng() % 4, m = rng() % (sizeof a - 4);
    ASSERT_EQ(sign(BOARD_FN(memcmp)(a + oa, b + ob, m)), sign(::memcmp(a + oa, b + ob, m))) << oa << " " << ob << " " << m;
    ASSERT_EQ(sign(BOARD_FN(memcmp)(a + oa, a + oa, m)), 0);
    a[rng() % sizeof a] = 0;
    b[sizeof b - 1] = 0;
    a[sizeof a - 1] = 0;
    const char* sa = reinterpret_cast<const char*>(a);
    const char* sb = reinterpret_cast<const char*>(b);
    ASSERT_EQ(BOARD_FN(strlen)(sa), ::strlen(sa));
    ASSERT_EQ(sign(BOARD_FN(strcmp)(sa, sb)), sign(::strcmp(sa, sb)));
    char ours[64] = "x", theirs[64] = "x";
    EXPECT_EQ(BOARD_FN(strcpy)(ours + 1, sa), ours + 1);
    ::strcpy(theirs + 1, sa);
    EXPECT_EQ(BOARD_FN(strcat)(ours, sb), ours);
    ::strcat(theirs, sb);
    ASSERT_EQ(::memcmp(ours, theirs, sizeof ours), 0);
  }
}
