# Toolchain file for the Xtensa lx106 (boards/lx106-sim): Debian's xtensa-lx106-elf-gcc (GCC 12,
# the call0 ABI: no register windows) with picolibc (Debian's picolibc-xtensa-lx106-elf: the C
# headers and, for what the firmware does not define itself, libc.a). Debian's libgcc for this
# target lacks 32-bit division, 64-bit multiplication and division and most soft-float routines;
# the board builds them from Debian's gcc-12-source (cmake/EmcpXtensaLibgcc.cmake).
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(EMCP_GCC_PREFIX xtensa-lx106-elf-)
# picolibc's specs by their full path: Debian's compiler for this target looks for files under
# /usr/xtensa-lx106-elf, where picolibc's package installs nothing (its files are in
# /usr/lib/xtensa-lx106-elf, which its specs name).
set(EMCP_PICOLIBC_SPECS /usr/lib/xtensa-lx106-elf/picolibc.specs)
if(NOT EXISTS ${EMCP_PICOLIBC_SPECS})
  message(FATAL_ERROR "${EMCP_PICOLIBC_SPECS} is missing: apt-get install picolibc-xtensa-lx106-elf (scripts/test does)")
endif()
include(${CMAKE_CURRENT_LIST_DIR}/EmcpPicolibcToolchain.cmake)
