#!/bin/sh
# Builds tests/package/consumer, a project outside emcp's tree with its own emcp_config.h, and
# checks its server: the project's page size (2) holds in the core's tools/list, and a tool
# call is answered. It is built three times, each in its own folder WORK_DIR/consumer-<type>,
# from the same source tree or the same installed package: with no build type (CMake's default,
# what most people build first: no optimization flag, -O0), Debug (-O0 -g) and Release (-O3);
# each server built is checked (and run under the SDK client with NODE). emcp's own checks run in
# each build: the zero-heap check of its libraries (at -O0 GCC calls placement new out of line).
# (A board's firmware is compiled for size, -Os from emcp::board, whatever the build type.)
#   tests/package/run.sh add_subdirectory EMCP_ROOT WORK_DIR
#       the project adds emcp's source tree with add_subdirectory;
#   tests/package/run.sh find_package EMCP_ROOT WORK_DIR [NODE]
#       emcp is configured and installed (`cmake --install`) into WORK_DIR/prefix first, and the
#       project finds it with find_package; with NODE, the official SDK client then runs the
#       project's server too (tests/mcp/package_consumer.test.mjs).
# With EMCP_PACKAGE_BOARD=<board> and EMCP_PACKAGE_TOOLCHAIN=<file of emcp's cmake/> set, the
# project is firmware (tests/package/board_consumer) built against the installed package with
# that toolchain file (from the package) for that board, and NODE runs it in QEMU through
# emcp-bridge (EMCP_QEMU_MACHINE, EMCP_BRIDGE) under the same SDK client test.
#   tests/package/run.sh readme_board EMCP_ROOT WORK_DIR NODE
#       the README's board example ("## A tool on a board": its main_board.cpp and its
#       CMakeLists.txt, tests/readme/board_example.py) taken into an empty folder and built
#       against the installed package for EMCP_PACKAGE_BOARD with EMCP_PACKAGE_TOOLCHAIN, as the
#       README says; NODE runs the image in QEMU under the SDK client's test of the minimal
#       server (tests/mcp/minimal.test.mjs).
set -eu
mode=$1
root=$2
work=$3
node=${4:-}
rm -rf "$work"
mkdir -p "$work"
case "$mode" in
  add_subdirectory) how="-DEMCP_ROOT=$root" ;;
  find_package | readme_board)
    # Installing needs no tests and no examples (nor what they need: the shared test data).
    cmake -S "$root" -B "$work/emcp-build" -G Ninja -DCMAKE_INSTALL_PREFIX="$work/prefix" \
      -DEMCP_BUILD_TESTS=OFF -DEMCP_BUILD_EXAMPLES=OFF >/dev/null
    cmake --install "$work/emcp-build" >/dev/null
    # What a user's machine has: the installed package, not the tree it came from.
    rm -rf "$work/emcp-build"
    test -f "$work/prefix/share/emcp/cmake/emcpConfig.cmake"
    how="-DCMAKE_PREFIX_PATH=$work/prefix" ;;
  *) echo "usage: $0 add_subdirectory|find_package|readme_board EMCP_ROOT WORK_DIR [NODE]" >&2; exit 2 ;;
esac
# The build types: "none" is CMAKE_BUILD_TYPE empty (set so, not left to the environment's
# CMAKE_BUILD_TYPE, which CMake would take as the default).
build_types="none Debug Release"
# build_consumer SOURCE TYPE [CMAKE ARGS...]: configures and builds the project in
# WORK_DIR/consumer-TYPE; a failure shows the end of its log.
build_consumer() {
  src=$1 type=$2
  shift 2
  dir="$work/consumer-$type"
  bt=$type
  [ "$type" != none ] || bt=
  log="$work/consumer-$type.log"
  if ! { cmake -S "$src" -B "$dir" -G Ninja "$how" -DCMAKE_BUILD_TYPE="$bt" "$@" &&
         cmake --build "$dir"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "the project ($mode, build type $type) did not build: $log" >&2
    exit 1
  fi
  grep -q -x "CMAKE_BUILD_TYPE:STRING=$bt" "$dir/CMakeCache.txt" ||
    { echo "the project in $dir was not configured with build type '$bt'" >&2; exit 1; }
}
# The host project's answers over stdio, checked.
check_host_consumer() {
  type=$1
  server="$work/consumer-$type/consumer"
  out=$(printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{"name":"the test"}}}' \
    | "$server")
  page=$(printf '%s\n' "$out" | grep '"id":2,')
  case "$page" in
    *'"name":"hello"'*'"name":"second"'*'"nextCursor"'*) ;;
    *) echo "tools/list is not a page of 2 with a cursor ($type): $page" >&2; exit 1 ;;
  esac
  case "$page" in *'"name":"third"'*) echo "the page holds 3 tools: the project's EMCP_PAGE_SIZE did not reach the core ($type)" >&2; exit 1 ;; esac
  printf '%s\n' "$out" | grep -q '"id":3,"result":{"content":\[{"type":"text","text":"Hello from the test!"}\]}' ||
    { echo "no answer to the tool call ($type): $out" >&2; exit 1; }
  echo "consumer ($mode, build type $type): pages of 2, tool call answered"
}
# The official SDK client against the server just built.
# EMCP_NODE_REPORT: where the TAP report whose todo/skipped counts scripts/test checks goes
# (emcp_node_test in cmake/EmcpTools.cmake says why); each build type's run writes it anew.
run_sdk_client() {
  [ -n "$node" ] || return 0
  (cd "$root/tests/mcp" && "$node" --test --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="${EMCP_NODE_REPORT:-/dev/null}" package_consumer.test.mjs)
}

if [ "$mode" = readme_board ]; then
  project="$work/readme-board"
  target=$(python3 "$root/tests/readme/board_example.py" "$root/README.md" "$project" | tail -n 1)
  log="$work/readme-board.log"
  if ! { cmake -S "$project" -B "$project/build" -G Ninja "$how" -DEMCP_BOARD="$EMCP_PACKAGE_BOARD" \
           -DCMAKE_TOOLCHAIN_FILE="$work/prefix/share/emcp/src/cmake/$EMCP_PACKAGE_TOOLCHAIN" &&
         cmake --build "$project/build"; } >"$log" 2>&1; then
    tail -n 40 "$log" >&2
    echo "the README's board example did not build: $log" >&2
    exit 1
  fi
  test -f "$project/build/$target.map" || { echo "no map file $project/build/$target.map" >&2; exit 1; }
  grep -E '^ +text' "$log" >/dev/null || { echo "emcp_add_firmware printed no size report" >&2; exit 1; }
  echo "the README's board example ($target) built against the installed package for $EMCP_PACKAGE_BOARD"
  (cd "$root/tests/mcp" && EMCP_TRANSPORT=qemu EMCP_FIRMWARE="$project/build/$target.elf" "$node" --test \
    --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="${EMCP_NODE_REPORT:-/dev/null}" minimal.test.mjs)
elif [ -n "${EMCP_PACKAGE_BOARD:-}" ]; then
  [ "$mode" = find_package ] || { echo "a board project is tested with find_package only" >&2; exit 2; }
  for type in $build_types; do
    build_consumer "$root/tests/package/board_consumer" "$type" \
      -DCMAKE_TOOLCHAIN_FILE="$work/prefix/share/emcp/src/cmake/$EMCP_PACKAGE_TOOLCHAIN" \
      -DEMCP_BOARD="$EMCP_PACKAGE_BOARD"
    echo "consumer firmware for $EMCP_PACKAGE_BOARD (build type $type) built against the installed package"
    export EMCP_TRANSPORT=qemu EMCP_FIRMWARE="$work/consumer-$type/consumer.elf"
    run_sdk_client
  done
else
  for type in $build_types; do
    build_consumer "$root/tests/package/consumer" "$type"
    check_host_consumer "$type"
    export EMCP_CONSUMER="$work/consumer-$type/consumer"
    run_sdk_client
  done
fi
