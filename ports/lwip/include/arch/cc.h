// lwIP's compiler and platform definitions for emcp (ports/lwip): no stdio (assertions and
// diagnostics go to the port's emcp_lwip_assert, which a board or host implements), random
// numbers from the port (TCP's initial sequence numbers, DHCP's transaction ids).
#ifndef EMCP_LWIP_ARCH_CC_H
#define EMCP_LWIP_ARCH_CC_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif
/// Called by LWIP_ASSERT with the message and where; must not return.
void emcp_lwip_assert(const char* message, const char* file, int line);
/// A random 32-bit number (LWIP_RAND).
uint32_t emcp_lwip_rand(void);
#ifdef __cplusplus
}
#endif

// The file's name without its folder where the compiler offers it (GCC 12+, clang 9+): shorter
// strings in flash, and images whose size does not depend on where the tree was checked out.
#ifdef __FILE_NAME__
#define EMCP_LWIP_ASSERT_FILE __FILE_NAME__
#else
#define EMCP_LWIP_ASSERT_FILE __FILE__
#endif
// EMCP_LWIP_ASSERT_TEXT 0 (the boards' lwIP libraries, boards/CMakeLists.txt): every assertion is still
// checked and still stops the board with its file and line, but its message is not in flash
// (lwIP's are some 4.7 KB on the Cortex-M3; file and line find it in Debian's source). 1 (the
// host's default): the message too.
#ifndef EMCP_LWIP_ASSERT_TEXT
#define EMCP_LWIP_ASSERT_TEXT 1
#endif
#if EMCP_LWIP_ASSERT_TEXT
#define LWIP_PLATFORM_ASSERT(x) emcp_lwip_assert((x), EMCP_LWIP_ASSERT_FILE, __LINE__)
#else
#define LWIP_PLATFORM_ASSERT(x) emcp_lwip_assert("", EMCP_LWIP_ASSERT_FILE, __LINE__)
#endif
#define LWIP_PLATFORM_DIAG(x) \
  do {                        \
  } while (0)
#define LWIP_RAND() emcp_lwip_rand()
#define LWIP_NO_STDINT_H 0
#define LWIP_NO_INTTYPES_H 0
#define LWIP_PROVIDE_ERRNO 1

#endif
