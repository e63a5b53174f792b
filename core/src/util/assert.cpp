#include "emcp/util/assert.h"

#include <stdlib.h>

// Weak so that a board or application can replace it. abort() is freestanding-safe on newlib
// as long as the board provides it (boards/ do, without malloc).
extern "C" __attribute__((weak, noreturn)) void emcp_assert_failed(const char* file, int line) {
  (void)file;
  (void)line;
  abort();
}
