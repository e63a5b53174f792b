// The C library's memory and string functions the firmware calls, written for size: a byte at
// a time. They replace newlib-nano's, which are unrolled for speed (memcpy, strcmp, strcpy:
// about 1.5 KiB together on ARMv7-M). A UART at 115200 baud takes about 87 us a byte; copying
// one costs a few cycles, so the speed is not missed, the flash is (docs/footprint.md).
//
// Built without loop-pattern recognition: GCC would otherwise turn these loops back into calls
// of the very functions they define.
#include <stddef.h>
#include <stdint.h>

#define EMCP_LIBC __attribute__((optimize("no-tree-loop-distribute-patterns"), used))

extern "C" {

EMCP_LIBC void* memcpy(void* __restrict dst, const void* __restrict src, size_t n) {
  auto* d = static_cast<unsigned char*>(dst);
  const auto* s = static_cast<const unsigned char*>(src);
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
  while (n--) *d++ = static_cast<unsigned char>(c);
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
