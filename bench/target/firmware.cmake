# bench/target: what a request costs on the target, counted by a QEMU plugin (insn_plugin.c,
# built on the host by bench/CMakeLists.txt) in the bench firmware calls.cpp: the sensors
# example's application behind the same line transport, each request counted from its first
# byte to its last answered byte (bench/target/run.sh, scripts/bench). Bench-only: not in
# docs/footprint.md, no budget. On mps2-an385 its message arena takes a 4 KiB argument.
if(EMCP_BOARD STREQUAL "mps2-an385")
  set(sensors_dir ${CMAKE_SOURCE_DIR}/examples/sensors)
  emcp_add_firmware(emcp-bench-calls-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/calls.cpp ${sensors_dir}/app.cpp ${sensors_dir}/media.cpp
            ${sensors_dir}/sensors_common.cpp ${sensors_dir}/sensors_board.cpp
    INCLUDES ${sensors_dir}
    DEFINES EMCP_ARENA_SIZE=16384
    APP_DEFINES EMCP_SENSORS_ECHO_MAX=4096 EMCP_BENCH_LINE_BYTES=8192
    NOT_DOCUMENTED)
endif()
