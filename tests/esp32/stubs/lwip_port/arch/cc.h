// ESP-IDF v5's lwIP compiler definitions (components/lwip/port/esp32xx/include/arch/cc.h), as
// far as the headers emcp includes need them: little-endian, the C library's errno, assertions
// that stop (compile-only, see lwipopts.h beside it).
#pragma once
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>

#ifndef BYTE_ORDER
#define BYTE_ORDER LITTLE_ENDIAN
#endif
typedef int sys_prot_t;  // SYS_LIGHTWEIGHT_PROT's critical sections
#define LWIP_ERRNO_STDINCLUDE 1
#define LWIP_PLATFORM_DIAG(x) \
  do {                        \
  } while (0)
#define LWIP_PLATFORM_ASSERT(message) abort()
#define LWIP_NO_STDINT_H 0
#define LWIP_NO_INTTYPES_H 0
