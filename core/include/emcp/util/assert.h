// emcp/util/assert.h - checks for programmer errors (never for untrusted input).
//
// EMCP_ASSERT(cond) calls emcp_assert_failed(file, line) when cond is false and
// EMCP_ENABLE_ASSERT is 1. The default handler (core/src/util/assert.cpp) is a weak symbol that
// spins forever on bare metal and calls abort() on a hosted build; define your own
// `extern "C" void emcp_assert_failed(const char*, int)` to log, reset or halt.
//
// Context: any.
#ifndef EMCP_UTIL_ASSERT_H
#define EMCP_UTIL_ASSERT_H

#include "emcp/opt.h"

extern "C" [[noreturn]] void emcp_assert_failed(const char* file, int line);

// The file's name without its directory where the compiler offers it (GCC 12+, clang 9+):
// shorter strings in flash, and images that do not depend on where the tree was checked out.
#ifdef __FILE_NAME__
#define EMCP_ASSERT_FILE __FILE_NAME__
#else
#define EMCP_ASSERT_FILE __FILE__
#endif

#if EMCP_ENABLE_ASSERT
#define EMCP_ASSERT(cond) ((cond) ? static_cast<void>(0) : emcp_assert_failed(EMCP_ASSERT_FILE, __LINE__))
#else
#define EMCP_ASSERT(cond) static_cast<void>(0)
#endif

#endif  // EMCP_UTIL_ASSERT_H
