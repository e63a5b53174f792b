# Toolchain file for the Xtensa lx106 (boards/lx106-sim): Debian's xtensa-lx106-elf-gcc (GCC 12,
# the call0 ABI: no register windows) with picolibc (Debian's picolibc-xtensa-lx106-elf: the C
# headers and, for what the firmware does not define itself, libc.a). Debian's libgcc for this
# target lacks 32-bit division, 64-bit multiplication and division and most soft-float routines;
# the board builds them from Debian's gcc-12-source (cmake/EmcpXtensaLibgcc.cmake).
# Debian has no libstdc++ for this target: <new> and <initializer_list> come from
# boards/common/cxx, as for RISC-V.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR xtensa)
set(CMAKE_C_COMPILER xtensa-lx106-elf-gcc)
set(CMAKE_CXX_COMPILER xtensa-lx106-elf-g++)
set(CMAKE_ASM_COMPILER xtensa-lx106-elf-gcc)
# The gcc- wrappers index LTO objects in archives (EMCP_BOARD_LTO).
set(CMAKE_AR xtensa-lx106-elf-gcc-ar)
set(CMAKE_RANLIB xtensa-lx106-elf-gcc-ranlib)
set(CMAKE_NM xtensa-lx106-elf-nm)
set(CMAKE_OBJCOPY xtensa-lx106-elf-objcopy)
set(CMAKE_SIZE xtensa-lx106-elf-size)
# picolibc's specs by their full path: Debian's compiler for this target looks for files under
# /usr/xtensa-lx106-elf, where picolibc's package installs nothing (its files are in
# /usr/lib/xtensa-lx106-elf, which its specs name).
set(emcp_xtensa_specs /usr/lib/xtensa-lx106-elf/picolibc.specs)
if(NOT EXISTS ${emcp_xtensa_specs})
  message(FATAL_ERROR "${emcp_xtensa_specs} is missing: apt-get install picolibc-xtensa-lx106-elf (scripts/test does)")
endif()
get_filename_component(emcp_xtensa_cxx "${CMAKE_CURRENT_LIST_DIR}/../boards/common/cxx" ABSOLUTE)
set(CMAKE_C_FLAGS_INIT "--specs=${emcp_xtensa_specs}")
set(CMAKE_CXX_FLAGS_INIT "--specs=${emcp_xtensa_specs} -isystem ${emcp_xtensa_cxx}")
set(CMAKE_ASM_FLAGS_INIT "--specs=${emcp_xtensa_specs}")
set(EMCP_TOOLCHAIN_LINK_OPTIONS -nodefaultlibs)
set(CMAKE_C_STANDARD_LIBRARIES_INIT "-Wl,--start-group -lc -lgcc -Wl,--end-group")
set(CMAKE_CXX_STANDARD_LIBRARIES_INIT "-Wl,--start-group -lc -lgcc -Wl,--end-group")
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
