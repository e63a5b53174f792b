# Toolchain file for an embedded Linux on 64-bit Arm: Debian's cross compiler
# (g++-aarch64-linux-gnu) and the target's C library in /usr/aarch64-linux-gnu
# (libc6-dev-arm64-cross). Without EMCP_BOARD emcp builds what it builds on the host, for the
# target: emcp::core, emcp::posix, emcp::posix_serve and the examples (the linux-aarch64 preset).
# The target's sysroot has no Mbed TLS: the preset builds it from Debian's source
# (EMCP_MBEDTLS_FROM_SOURCE, ports/mbedtls). A program built here runs on this machine under
# qemu-user (Debian's qemu-user), which ctest and the tests use (CMAKE_CROSSCOMPILING_EMULATOR).
set(CMAKE_SYSTEM_NAME Linux)
set(CMAKE_SYSTEM_PROCESSOR aarch64)
set(CMAKE_C_COMPILER aarch64-linux-gnu-gcc)
set(CMAKE_CXX_COMPILER aarch64-linux-gnu-g++)
set(EMCP_TARGET_SYSROOT /usr/aarch64-linux-gnu)
set(CMAKE_FIND_ROOT_PATH ${EMCP_TARGET_SYSROOT})
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_PACKAGE ONLY)
# The target's dynamic loader and libraries are under the sysroot (-L), not in /lib.
find_program(EMCP_QEMU_AARCH64 qemu-aarch64)
if(EMCP_QEMU_AARCH64)
  set(CMAKE_CROSSCOMPILING_EMULATOR ${EMCP_QEMU_AARCH64} -L ${EMCP_TARGET_SYSROOT})
endif()
