# The libgcc routines Debian's libgcc for xtensa-lx106-elf lacks (its package leaves out 32-bit
# division, 64-bit multiplication and division, and most of the soft-float routines, which GCC
# calls for `/`, `%`, `*` on 64-bit integers and for float and double arithmetic), built from
# GCC's own source, Debian's gcc-12-source (scripts/third-party unpacks the parts needed into
# build/third_party/gcc; nothing of it is committed): the lx106's assembly routines
# (libgcc/config/xtensa/lib1funcs.S, ieee754-sf.S, ieee754-df.S, each routine an object of its own
# as libgcc builds them: lib1funcs.S with L_<routine> defined) and libgcc2.c's 64-bit ones, with
# the lx106's xtensa-config.h (the compiler's plugin headers) and GCC's libgcc flags.
#
#   EMCP_GCC_SOURCE_DIR   the unpacked parts (default build/third_party/gcc)
#
# emcp_xtensa_libgcc(NAME): a static library NAME of every routine of that list that the
# compiler's libgcc.a does not define (read with nm at configure time, so a libgcc that has them
# is used as it is), which an image links before libgcc.
enable_language(ASM)
set(EMCP_GCC_SOURCE_DIR "${emcp_SOURCE_DIR}/build/third_party/gcc" CACHE PATH
    "GCC's libgcc sources (Debian's gcc-12-source, from scripts/third-party)")

function(emcp_xtensa_libgcc name)
  set(dir ${EMCP_GCC_SOURCE_DIR})
  if(NOT EXISTS ${dir}/libgcc/config/xtensa/lib1funcs.S OR NOT EXISTS ${dir}/libgcc/libgcc2.c)
    message(FATAL_ERROR "libgcc's Xtensa sources are not in EMCP_GCC_SOURCE_DIR=${dir}: run scripts/third-party "
                        "(scripts/test does; it needs apt-get install gcc-12-source), or pass "
                        "-DEMCP_GCC_SOURCE_DIR=/path/to/gcc-source")
  endif()
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-libgcc-file-name OUTPUT_VARIABLE libgcc
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  execute_process(COMMAND ${CMAKE_C_COMPILER} -print-file-name=plugin OUTPUT_VARIABLE plugin
                  OUTPUT_STRIP_TRAILING_WHITESPACE COMMAND_ERROR_IS_FATAL ANY)
  if(NOT EXISTS ${plugin}/include/xtensa-config.h)
    message(FATAL_ERROR "${CMAKE_C_COMPILER} has no plugin/include/xtensa-config.h (the core's configuration)")
  endif()
  execute_process(COMMAND ${CMAKE_NM} -g --defined-only ${libgcc} OUTPUT_VARIABLE defined COMMAND_ERROR_IS_FATAL ANY)
  # Routine (libgcc's L_ name, t-xtensa's LIB1ASMFUNCS and libgcc2.c's) : one symbol it defines.
  set(asm_routines _mulsi3:__mulsi3 _divsi3:__divsi3 _modsi3:__modsi3 _udivsi3:__udivsi3
      _umodsi3:__umodsi3 _umulsidi3:__umulsidi3 _negsf2:__negsf2 _addsubsf3:__addsf3 _mulsf3:__mulsf3
      _divsf3:__divsf3 _cmpsf2:__eqsf2 _fixsfsi:__fixsfsi _fixsfdi:__fixsfdi _fixunssfsi:__fixunssfsi
      _fixunssfdi:__fixunssfdi _floatsisf:__floatsisf _floatunsisf:__floatunsisf _floatdisf:__floatdisf
      _floatundisf:__floatundisf _negdf2:__negdf2 _addsubdf3:__adddf3 _muldf3:__muldf3 _divdf3:__divdf3
      _cmpdf2:__eqdf2 _fixdfsi:__fixdfsi _fixdfdi:__fixdfdi _fixunsdfsi:__fixunsdfsi
      _fixunsdfdi:__fixunsdfdi _floatsidf:__floatsidf _floatunsidf:__floatunsidf _floatdidf:__floatdidf
      _floatundidf:__floatundidf _truncdfsf2:__truncdfsf2 _extendsfdf2:__extendsfdf2)
  set(c_routines _muldi3:__muldi3 _divdi3:__divdi3 _moddi3:__moddi3 _udivdi3:__udivdi3
      _umoddi3:__umoddi3)
  set(gen ${CMAKE_CURRENT_BINARY_DIR}/${name})
  # libgcc2.c's build headers: GCC's build generates them; libgcc2.c needs only the word size
  # (the lx106's: 4 bytes) and size_t of them. -fbuilding-libgcc gives the __LIBGCC_* macros.
  file(WRITE ${gen}/stub/tconfig.h "")
  file(WRITE ${gen}/stub/coretypes.h "")
  file(WRITE ${gen}/stub/libgcc_tm.h "")
  file(WRITE ${gen}/stub/tsystem.h "#include <stddef.h>\n")
  file(WRITE ${gen}/stub/tm.h "#define MIN_UNITS_PER_WORD 4\n#define UNITS_PER_WORD 4\n")
  set(sources)
  set(built)
  foreach(entry ${asm_routines} ${c_routines})
    string(REPLACE ":" ";" pair ${entry})
    list(GET pair 0 routine)
    list(GET pair 1 symbol)
    if(defined MATCHES " T ${symbol}\n")
      continue()
    endif()
    if(entry IN_LIST asm_routines)
      set(file ${gen}/L${routine}.S)
      file(WRITE ${file}.new "#define L${routine}\n#include \"${dir}/libgcc/config/xtensa/lib1funcs.S\"\n")
    else()
      set(file ${gen}/L${routine}.c)
      file(WRITE ${file}.new "#define L${routine}\n#include \"${dir}/libgcc/libgcc2.c\"\n")
    endif()
    file(COPY_FILE ${file}.new ${file} ONLY_IF_DIFFERENT)
    list(APPEND sources ${file})
    list(APPEND built ${symbol})
  endforeach()
  if(NOT sources)
    add_library(${name} INTERFACE)
    return()
  endif()
  string(REPLACE ";" " " built "${built}")
  message(STATUS "${name}: libgcc routines built from ${dir}: ${built}")
  add_library(${name} STATIC ${sources})
  target_include_directories(${name} PRIVATE ${gen}/stub ${dir}/libgcc ${dir}/include ${plugin}/include)
  # As libgcc is built (libgcc/Makefile.in, t-xtensa): IN_LIBGCC2, long calls, no link-time
  # optimization (the compiler's calls to these routines are made after it: they must be
  # ordinary objects), GCC's code as it is (no warnings of ours).
  target_compile_definitions(${name} PRIVATE IN_LIBGCC2)
  target_compile_options(${name} PRIVATE -fno-lto -mlongcalls -fbuilding-libgcc -w)
  set_target_properties(${name} PROPERTIES LINKER_LANGUAGE C)
endfunction()
