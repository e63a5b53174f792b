# What the toolchain files of a bare-metal GCC with picolibc share (cmake/riscv32-unknown-elf.cmake,
# cmake/xtensa-lx106-elf.cmake; not a toolchain file itself). Set first:
#   EMCP_GCC_PREFIX       the programs' prefix ("riscv64-unknown-elf-")
#   EMCP_PICOLIBC_SPECS   picolibc's specs as the compiler takes them (a name it finds, or a path)
# Sets the compilers, the binutils (the gcc- wrappers of ar and ranlib index LTO objects in
# archives: EMCP_BOARD_LTO), picolibc's specs on every compile and link line (its include folder;
# its library folder, libc and libgcc), and boards/common/cxx for the two C++ headers the firmware
# includes, <new> and <initializer_list> (Debian has no libstdc++ for these targets). g++ would
# link libstdc++, which is not there: the default libraries off (EMCP_TOOLCHAIN_LINK_OPTIONS,
# instead of arm-none-eabi's newlib-nano), picolibc's libc and libgcc after every program's objects.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_C_COMPILER ${EMCP_GCC_PREFIX}gcc)
set(CMAKE_CXX_COMPILER ${EMCP_GCC_PREFIX}g++)
set(CMAKE_ASM_COMPILER ${EMCP_GCC_PREFIX}gcc)
set(CMAKE_AR ${EMCP_GCC_PREFIX}gcc-ar)
set(CMAKE_RANLIB ${EMCP_GCC_PREFIX}gcc-ranlib)
set(CMAKE_NM ${EMCP_GCC_PREFIX}nm)
set(CMAKE_OBJCOPY ${EMCP_GCC_PREFIX}objcopy)
set(CMAKE_SIZE ${EMCP_GCC_PREFIX}size)
get_filename_component(emcp_picolibc_cxx "${CMAKE_CURRENT_LIST_DIR}/../boards/common/cxx" ABSOLUTE)
set(CMAKE_C_FLAGS_INIT "--specs=${EMCP_PICOLIBC_SPECS}")
set(CMAKE_CXX_FLAGS_INIT "--specs=${EMCP_PICOLIBC_SPECS} -isystem ${emcp_picolibc_cxx}")
set(EMCP_TOOLCHAIN_LINK_OPTIONS -nodefaultlibs)
set(CMAKE_C_STANDARD_LIBRARIES_INIT "-Wl,--start-group -lc -lgcc -Wl,--end-group")
set(CMAKE_CXX_STANDARD_LIBRARIES_INIT "-Wl,--start-group -lc -lgcc -Wl,--end-group")
# Test programs cannot link without a board's startup and linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
