# bench/target: what a request costs on the target, counted by a QEMU plugin (insn_plugin.c,
# built on the host by guest_calls.py) in the bench firmware calls.cpp: the sensors example's
# application behind the same line transport, each request counted from its first byte to its
# last answered byte (bench/target/run.sh, scripts/bench). Bench-only: not in docs/footprint.md,
# no budget. One application on every board: the sensors example without the tools that ask
# the client (EMCP_SENSORS_CLIENT_TOOLS=0: their static buffers would leave no room on the
# 16 KiB boards), with the board's own options for the sensors image
# (EMCP_BOARD_SENSORS_DEFINES), and an echo that takes 4 KiB (EMCP_SENSORS_ECHO_MAX) with a
# message arena that holds it. On mps2-an385 a request is fed in one window (8 KiB buffer);
# on the 16 KiB boards (micro:bit, hifive1) a line longer than 256 B is fed 256 B a window, and
# the arena is 4.5 KiB instead of their sensors image's 2 KiB: the 4 KiB argument is parsed into
# it whole (the echo's text), which is what a 16 KiB board taking such a request needs.
# The issue's three cores: Cortex-M3, Cortex-M0 (Thumb-1), RV32IMAC.
if(EMCP_BOARD MATCHES "^(mps2-an385|microbit|hifive1)$")
  set(sensors_dir ${CMAKE_SOURCE_DIR}/examples/sensors)
  if(EMCP_BOARD STREQUAL "mps2-an385")
    set(bench_defines EMCP_ARENA_SIZE=16384)
    set(bench_line 8192)
  else()
    set(bench_defines ${EMCP_BOARD_SENSORS_DEFINES})
    list(FILTER bench_defines EXCLUDE REGEX "^EMCP_ARENA_SIZE=")
    list(APPEND bench_defines EMCP_ARENA_SIZE=4608)
    set(bench_line 256)
  endif()
  emcp_add_firmware(emcp-bench-calls-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/calls.cpp ${CMAKE_CURRENT_LIST_DIR}/common.cpp ${sensors_dir}/app.cpp
            ${sensors_dir}/media.cpp ${sensors_dir}/sensors_common.cpp ${sensors_dir}/sensors_board.cpp
    INCLUDES ${sensors_dir}
    DEFINES ${bench_defines}
    APP_DEFINES EMCP_SENSORS_CLIENT_TOOLS=0 EMCP_BENCH_LINE_BYTES=${bench_line} EMCP_SENSORS_ECHO_MAX=4096
    NOT_DOCUMENTED)
endif()
# What TLS costs the server (bench/target/tls.cpp, bench/target/guest_cases.py): both ends in one
# image on the Cortex-M3 (the board with a credentials region), Mbed TLS built with both roles.
# emcp-bench-tls: Mbed TLS's ECP options as emcp's configuration has them, which are Mbed TLS's
# defaults (the NIST curves' fast reduction, a window of 4 bits, the fixed-point speed-up); built
# with the board (bench_target_tls runs it). The variants scripts/bench builds and compares:
# -w2 the smallest (a window of 2, no fixed-point tables), -w6 a wider window, -nonist without
# the NIST curves' fast reduction.
if(EMCP_BOARD_TLS_BENCH_SOURCES)
  set(sensors_dir ${CMAKE_SOURCE_DIR}/examples/sensors)
  # NAME:DEFINE,DEFINE...
  foreach(spec "default:" "w2:MBEDTLS_ECP_WINDOW_SIZE=2,MBEDTLS_ECP_FIXED_POINT_OPTIM=0"
               "w6:MBEDTLS_ECP_WINDOW_SIZE=6" "nonist:EMCP_MBEDTLS_NO_NIST_OPTIM=1")
    string(REGEX REPLACE ":.*" "" variant "${spec}")
    string(REGEX REPLACE "^[^:]*:" "" defines "${spec}")
    string(REPLACE "," ";" defines "${defines}")
    set(suffix "")
    if(NOT variant STREQUAL "default")
      set(suffix "-${variant}")
    endif()
    emcp_bench_mbedtls(emcp_mbedtls_bench${suffix} ${defines})
    set(excluded "")
    if(suffix)
      set(excluded EXCLUDE_FROM_ALL)  # scripts/bench builds them by name
    endif()
    emcp_add_firmware(emcp-bench-tls${suffix}-${EMCP_BOARD} ${excluded}
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/tls.cpp ${CMAKE_CURRENT_LIST_DIR}/common.cpp ${sensors_dir}/app.cpp ${sensors_dir}/media.cpp
              ${sensors_dir}/sensors_common.cpp ${sensors_dir}/sensors_board.cpp ${EMCP_BOARD_TLS_BENCH_SOURCES}
      INCLUDES ${sensors_dir}
      DEFINES EMCP_ARENA_SIZE=4096
      APP_DEFINES EMCP_SENSORS_CLIENT_TOOLS=0
      LIBS emcp_mbedtls_bench${suffix}
      NOT_DOCUMENTED)
  endforeach()
endif()
# What an HTTP request over lwIP costs the server (bench/target/net.cpp, guest_cases.py): both
# ends in one lwIP stack, the board's (emcp_lwip_board), on an interface of the firmware's own;
# the engine sized as emcp-bench-tls's. On the board with a NIC driver and lwIP (mps2-an385).
if(EMCP_BOARD STREQUAL "mps2-an385" AND EMCP_BOARD_NET)
  set(sensors_dir ${CMAKE_SOURCE_DIR}/examples/sensors)
  emcp_add_firmware(emcp-bench-net-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/net.cpp ${CMAKE_CURRENT_LIST_DIR}/common.cpp ${sensors_dir}/app.cpp
            ${sensors_dir}/media.cpp ${sensors_dir}/sensors_common.cpp ${sensors_dir}/sensors_board.cpp
            ${CMAKE_SOURCE_DIR}/ports/lwip/src/http_listener.cpp
    INCLUDES ${sensors_dir}
    DEFINES EMCP_ARENA_SIZE=4096
    APP_DEFINES EMCP_SENSORS_CLIENT_TOOLS=0
    LIBS emcp_lwip_board
    NOT_DOCUMENTED)
endif()
