# Toolchain file for RV32 boards (boards/hifive1): Debian's riscv64-unknown-elf-gcc, which builds
# for 32-bit cores too (its rv32imac/ilp32 multilib: libgcc), with picolibc (Debian's
# picolibc-riscv64-unknown-elf: the C headers and, for what the firmware does not define
# itself, libc.a). The board (EMCP_BOARD) adds its -march/-mabi flags; see boards/CMakeLists.txt.
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(EMCP_GCC_PREFIX riscv64-unknown-elf-)
set(EMCP_PICOLIBC_SPECS picolibc.specs)
include(${CMAKE_CURRENT_LIST_DIR}/EmcpPicolibcToolchain.cmake)
