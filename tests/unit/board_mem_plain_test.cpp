// The boards' C library functions (boards/common/mem.cpp) as the cores without unaligned word
// access build them (the Cortex-M0, RISC-V: words only between equally aligned addresses, none
// of EMCP_MEM_FAST's paths), on the host, against the host's C library: board_mem_test.cpp's
// tests again, as suite BoardMemPlain.
#define EMCP_MEM_UNALIGNED 0
#define EMCP_MEM_FAST 0
#define BOARD_MEM_SUITE BoardMemPlain
#define BOARD_FN(f) board_plain_##f
#include "board_mem_test.cpp"  // NOLINT(bugprone-suspicious-include)
