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

// Cores that load a word from any address (ARMv7-M: LDR and STR, not LDM or LDRD; the host,
// where the unit test builds this file): memcpy copies words between addresses aligned
// differently too, loading each from its unaligned address. The Cortex-M0 and RISC-V cores
// take no unaligned access: a byte at a time there.
// (Set from outside only by the host's unit test, which builds both kinds: BoardMem, BoardMemPlain.)
#ifndef EMCP_MEM_UNALIGNED
#if defined(__ARM_FEATURE_UNALIGNED) || defined(__x86_64__) || defined(__i386__) || defined(__aarch64__)
#define EMCP_MEM_UNALIGNED 1
#else
#define EMCP_MEM_UNALIGNED 0
#endif
#endif
// EMCP_MEM_FAST (docs/configuration.md): memcpy and memset four words a round (two STRD on
// ARMv7-M: a third of the word loop's instructions), memcmp and strlen a word at a time (lists'
// descriptions, session ids): some 150 B of flash on the Cortex-M3 for speed. By default on the
// cores above; the smaller cores' budgets have no room for it, and an image that counts bytes
// before cycles (the minimal server) sets 0.
#ifndef EMCP_MEM_FAST
#define EMCP_MEM_FAST EMCP_MEM_UNALIGNED
#endif
#if EMCP_MEM_FAST && !EMCP_MEM_UNALIGNED
#error "EMCP_MEM_FAST needs a core that loads words from any address (memcmp's word loop does)"
#endif

namespace {
// A word that may alias any object (the bytes these functions are given may be of any type).
typedef uint32_t __attribute__((may_alias)) Word;
// A word at any address: a packed struct's member, which the compiler loads with instructions
// the core takes unaligned (a typedef with aligned(1) is not enough: GCC 12 pairs such loads
// into LDRD, which faults at an unaligned address).
struct __attribute__((packed, may_alias)) UnalignedWord {
  uint32_t v;
};
// The word at `p`: aligned by the caller, or, with EMCP_MEM_UNALIGNED, anywhere.
Word load(const unsigned char* p) {
#if EMCP_MEM_UNALIGNED
  return reinterpret_cast<const UnalignedWord*>(p)->v;
#else
  return *static_cast<const Word*>(static_cast<const void*>(p));
#endif
}
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
  // Words once the destination is aligned: where both addresses are equally aligned (every
  // word access aligned: the Cortex-M0 and RISC-V take no unaligned one), or, on a core that
  // loads words from any address, wherever the source is.
  if (n >= kWordRun && (EMCP_MEM_UNALIGNED || ((reinterpret_cast<uintptr_t>(d) ^ reinterpret_cast<uintptr_t>(s)) & 3u) == 0)) {
    for (; !aligned(d); --n) *d++ = *s++;
#if EMCP_MEM_FAST
    for (; n >= 16; n -= 16, d += 16, s += 16) {
      const Word a = load(s), b = load(s + 4), c = load(s + 8), e = load(s + 12);
      word(d)[0] = a, word(d)[1] = b, word(d)[2] = c, word(d)[3] = e;
    }
#endif
    for (; n >= 4; n -= 4, d += 4, s += 4) *word(d) = load(s);
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
#if EMCP_MEM_FAST
    for (; n >= 16; n -= 16, d += 16) word(d)[0] = w, word(d)[1] = w, word(d)[2] = w, word(d)[3] = w;
#endif
    for (; n >= 4; n -= 4, d += 4) *word(d) = w;
  }
  while (n--) *d++ = b;
  return dst;
}

EMCP_LIBC int memcmp(const void* a, const void* b, size_t n) {
  const auto* p = static_cast<const unsigned char*>(a);
  const auto* q = static_cast<const unsigned char*>(b);
#if EMCP_MEM_FAST
  // Equal words skipped (StrView's == on session ids, versions, header names); the bytes of the
  // first word that differs decide below.
  for (; n >= 4 && load(p) == load(q); n -= 4, p += 4, q += 4) {
  }
#endif
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
#if EMCP_MEM_FAST
  // The texts of tool, resource and prompt definitions (a list's descriptions are C strings):
  // aligned first, then a word at a time until one holds the NUL (the same test as memchr's; a
  // word never crosses into another page, so reading past the NUL within it is safe).
  for (; !aligned(p); ++p)
    if (*p == '\0') return static_cast<size_t>(p - s);
  for (;; p += 4) {
    const uint32_t x = *word(p);
    if (((x - 0x01010101u) & ~x & 0x80808080u) != 0) break;
  }
#endif
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
