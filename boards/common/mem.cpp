// The C library's memory and string functions the firmware calls, written for size. They
// replace newlib-nano's, which are unrolled for speed (memcpy, strcmp, strcpy: about 1.5 KiB
// together on ARMv7-M). memcpy, memset and memchr, the three a request's path calls on whole
// buffers (the decoder clears its state, the line framer finds the newline, the arena copies),
// go a word at a time where the addresses allow: a loop of a few instructions more each, and
// on the Cortex-M3 they take 3 to 4 times fewer instructions over a long run of bytes
// (bench/target counts them per request); the rest go a byte at a time.
//
// Built without loop-pattern recognition: GCC would otherwise turn these loops back into calls
// of the very functions they define.
#include <stddef.h>
#include <stdint.h>

#if defined(__clang__)  // (clang builds this file only into the host's unit test: BoardMem.*)
#define EMCP_LIBC __attribute__((used))
#else
#define EMCP_LIBC __attribute__((optimize("no-tree-loop-distribute-patterns"), used))
#endif

namespace {
// A word that may alias any object (the bytes these functions are given may be of any type).
typedef uint32_t __attribute__((may_alias)) Word;
// Below this many bytes the word loop's set-up costs more than it saves.
constexpr size_t kWordRun = 8;
bool aligned(const void* p) { return (reinterpret_cast<uintptr_t>(p) & 3u) == 0; }
// The word at `p`, which the caller has aligned.
Word* word(void* p) { return static_cast<Word*>(p); }
const Word* word(const void* p) { return static_cast<const Word*>(p); }
}  // namespace

extern "C" {

EMCP_LIBC void* memcpy(void* __restrict dst, const void* __restrict src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  // Words where both addresses are equally aligned (every word access aligned: the Cortex-M0
  // and RISC-V take no unaligned one).
  if (n >= kWordRun && ((reinterpret_cast<uintptr_t>(d) ^ reinterpret_cast<uintptr_t>(s)) & 3u) == 0) {
    for (; !aligned(d); --n) *d++ = *s++;
    for (; n >= 4; n -= 4, d += 4, s += 4) *word(d) = *word(s);
  }
  while (n--) *d++ = *s++;
  return dst;
}

EMCP_LIBC void* memmove(void* dst, const void* src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
  if (d < s) {
    while (n--) *d++ = *s++;
  } else {
    while (n--) d[n] = s[n];
  }
  return dst;
}

EMCP_LIBC void* memset(void* dst, int c, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto b = static_cast<unsigned char>(c);
  if (n >= kWordRun) {
    for (; !aligned(d); --n) *d++ = b;
    const uint32_t w = b * 0x01010101u;
    for (; n >= 4; n -= 4, d += 4) *word(d) = w;
  }
  while (n--) *d++ = b;
  return dst;
}

EMCP_LIBC int memcmp(const void* a, const void* b, size_t n) {
  const auto* p = static_cast<const unsigned char*>(a);
  const auto* q = static_cast<const unsigned char*>(b);
  for (; n != 0; --n, ++p, ++q)
    if (*p != *q) return *p - *q;
  return 0;
}

EMCP_LIBC void* memchr(const void* s, int c, size_t n) {
  const auto* p = static_cast<const unsigned char*>(s);
  if (n >= kWordRun) {
    for (; !aligned(p); --n, ++p)
      if (*p == static_cast<unsigned char>(c)) return const_cast<unsigned char*>(p);
    // A word at a time until one holds the byte: x is zero in the bytes that match, and
    // (x - 0x01..) & ~x & 0x80.. is non-zero exactly when x has a zero byte. The bytes of that
    // word are then looked at one by one below.
    const uint32_t pattern = static_cast<unsigned char>(c) * 0x01010101u;
    for (; n >= 4; n -= 4, p += 4) {
      const uint32_t x = *word(p) ^ pattern;
      if (((x - 0x01010101u) & ~x & 0x80808080u) != 0) break;
    }
  }
  for (; n != 0; --n, ++p)
    if (*p == static_cast<unsigned char>(c)) return const_cast<unsigned char*>(p);
  return nullptr;
}

EMCP_LIBC size_t strlen(const char* s) {
  const char* p = s;
  while (*p) ++p;
  return static_cast<size_t>(p - s);
}

EMCP_LIBC int strcmp(const char* a, const char* b) {
  while (*a && *a == *b) ++a, ++b;
  return static_cast<unsigned char>(*a) - static_cast<unsigned char>(*b);
}

EMCP_LIBC char* strcpy(char* __restrict dst, const char* __restrict src) {
  char* d = dst;
  while ((*d++ = *src++) != '\0') {
  }
  return dst;
}

EMCP_LIBC char* strcat(char* __restrict dst, const char* __restrict src) {
  char* d = dst;
  while (*d) ++d;
  while ((*d++ = *src++) != '\0') {
  }
  return dst;
}

}  // extern "C"
