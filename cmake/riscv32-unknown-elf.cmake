# Toolchain file for RV32 boards (boards/hifive1): Debian's riscv64-unknown-elf-gcc, which builds
# for 32-bit cores too (its rv32imac/ilp32 multilib: libgcc), with picolibc (Debian's
# picolibc-riscv64-unknown-elf: the C headers and, for what the firmware does not define
# itself, libc.a). The board (EMCP_BOARD) adds its -march/-mabi flags; see boards/CMakeLists.txt.
# Debian has no libstdc++ for this target: the two C++ headers the firmware includes, <new>
# (placement new) and <initializer_list>, come from boards/common/cxx.
set(CMAKE_SYSTEM_NAME Generic)
set(CMAKE_SYSTEM_PROCESSOR riscv32)
set(CMAKE_C_COMPILER riscv64-unknown-elf-gcc)
set(CMAKE_CXX_COMPILER riscv64-unknown-elf-g++)
set(CMAKE_ASM_COMPILER riscv64-unknown-elf-gcc)
# The gcc- wrappers index LTO objects in archives (EMCP_BOARD_LTO).
set(CMAKE_AR riscv64-unknown-elf-gcc-ar)
set(CMAKE_RANLIB riscv64-unknown-elf-gcc-ranlib)
set(CMAKE_NM riscv64-unknown-elf-nm)
set(CMAKE_OBJCOPY riscv64-unknown-elf-objcopy)
set(CMAKE_SIZE riscv64-unknown-elf-size)
# picolibc's specs (compiling: its include folder; linking: its library folder for the
# multilib, libc and libgcc) on every compile and link line, through the language flags.
get_filename_component(emcp_riscv_cxx "${CMAKE_CURRENT_LIST_DIR}/../boards/common/cxx" ABSOLUTE)
set(CMAKE_C_FLAGS_INIT "--specs=picolibc.specs")
set(CMAKE_CXX_FLAGS_INIT "--specs=picolibc.specs -isystem ${emcp_riscv_cxx}")
# g++ links libstdc++, which is not there: the default libraries off (the top level's link
# options, instead of arm-none-eabi's newlib-nano), and picolibc's libc and libgcc after every
# program's objects instead.
set(EMCP_TOOLCHAIN_LINK_OPTIONS -nodefaultlibs)
set(CMAKE_C_STANDARD_LIBRARIES_INIT "-Wl,--start-group -lc -lgcc -Wl,--end-group")
set(CMAKE_CXX_STANDARD_LIBRARIES_INIT "-Wl,--start-group -lc -lgcc -Wl,--end-group")
# Test programs cannot link without a board's startup and linker script.
set(CMAKE_TRY_COMPILE_TARGET_TYPE STATIC_LIBRARY)
set(CMAKE_FIND_ROOT_PATH_MODE_PROGRAM NEVER)
set(CMAKE_FIND_ROOT_PATH_MODE_LIBRARY ONLY)
set(CMAKE_FIND_ROOT_PATH_MODE_INCLUDE ONLY)
