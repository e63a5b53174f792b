# lx106-sim: the Xtensa lx106 core (the ESP8266's: call0 ABI, no register windows, no FPU, no
# division instruction), QEMU -M sim -cpu lx106. Built with cmake/xtensa-lx106-elf.cmake.
# -mtext-section-literals: each function's literals (the words l32r loads, which must precede
# it within 256 KiB) in its own .text section, before it: the linker script needs no .literal
# placement and --gc-sections drops them with their function. -mlongcalls: every call can reach
# 1 GiB (call0 reaches 512 KiB), as ESP-IDF and the ESP8266 SDKs build; the linker turns those
# within reach back into direct calls.
set(EMCP_BOARD_ARCH xtensa)
set(EMCP_BOARD_CPU_FLAGS -mtext-section-literals -mlongcalls)
set(EMCP_BOARD_QEMU_MACHINE sim)
set(EMCP_BOARD_QEMU_PROGRAM qemu-system-xtensa)
# CCOUNT's rate: 40 MHz in QEMU's lx106; an ESP8266 at 80 or 160 MHz.
set(EMCP_LX106_CCOUNT_HZ 40000000 CACHE STRING "CCOUNT's rate: 40000000 in QEMU's lx106")
set(EMCP_BOARD_DEFINES EMCP_LX106_CCOUNT_HZ=${EMCP_LX106_CCOUNT_HZ})
# Budgets: the measured flash (bin/*.footprint.json), rounded up to the KiB: the minimal server
# 25,480 B (the Cortex-M3's 20,460 B: Xtensa's 24-bit instructions, the literal pools, and
# libgcc's division and 64-bit multiplication, which Thumb-2 does in hardware), the sensors
# image 92,276 B, 91,164 B since StrView's constructor from a C string is always inlined (its
# literals' lengths constants). The sensors image runs with the default options: the lx106's
# 80 KiB of data RAM hold it and its 8 KiB stack region (linker.ld).
set(EMCP_BOARD_MINIMAL_FLASH_BUDGET 25600)
set(EMCP_BOARD_SENSORS_FLASH_BUDGET 92160)
# Its section of docs/footprint.md: the heading, and what the section says of its budgets and
# options beside the figures of its images' reports (tools/footprint/doc.py).
set(EMCP_BOARD_TITLE "Xtensa lx106, the ESP8266's core (QEMU `-M sim -cpu lx106`)")
set(EMCP_BOARD_FOOTPRINT_NOTE
  "Xtensa code (call0 ABI, 16- and 24-bit instructions, literal pools before each function,
   `-mlongcalls` as ESP-IDF builds) with the soft-float and division routines built from GCC's
   source (Debian's libgcc for the target lacks them). The budgets are the measured sizes
   rounded up to the KiB.")
