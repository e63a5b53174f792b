#!/bin/sh
# Builds tests/package/consumer, a project outside emcp's tree with its own emcp_config.h, and
# checks its server: the project's page size (2) holds in the core's tools/list, and a tool
# call is answered.
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
set -eu
mode=$1
root=$2
work=$3
node=${4:-}
rm -rf "$work"
case "$mode" in
  add_subdirectory) how="-DEMCP_ROOT=$root" ;;
  find_package)
    # Installing needs no tests and no examples (nor what they need: the shared test data).
    cmake -S "$root" -B "$work/emcp-build" -G Ninja -DCMAKE_INSTALL_PREFIX="$work/prefix" \
      -DEMCP_BUILD_TESTS=OFF -DEMCP_BUILD_EXAMPLES=OFF >/dev/null
    cmake --install "$work/emcp-build" >/dev/null
    # What a user's machine has: the installed package, not the tree it came from.
    rm -rf "$work/emcp-build"
    test -f "$work/prefix/share/emcp/cmake/emcpConfig.cmake"
    how="-DCMAKE_PREFIX_PATH=$work/prefix" ;;
  *) echo "usage: $0 add_subdirectory|find_package EMCP_ROOT WORK_DIR [NODE]" >&2; exit 2 ;;
esac
# The host project: built, and its answers over stdio checked.
check_host_consumer() {
  cmake -S "$root/tests/package/consumer" -B "$work/consumer" -G Ninja "$how" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$work/consumer" >/dev/null
  server="$work/consumer/consumer"
  out=$(printf '%s\n' \
    '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
    '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
    '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
    '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{"name":"the test"}}}' \
    | "$server")
  page=$(printf '%s\n' "$out" | grep '"id":2,')
  case "$page" in
    *'"name":"hello"'*'"name":"second"'*'"nextCursor"'*) ;;
    *) echo "tools/list is not a page of 2 with a cursor: $page" >&2; exit 1 ;;
  esac
  case "$page" in *'"name":"third"'*) echo "the page holds 3 tools: the project's EMCP_PAGE_SIZE did not reach the core" >&2; exit 1 ;; esac
  printf '%s\n' "$out" | grep -q '"id":3,"result":{"content":\[{"type":"text","text":"Hello from the test!"}\]}' ||
    { echo "no answer to the tool call: $out" >&2; exit 1; }
  echo "consumer ($mode): pages of 2, tool call answered"
}

if [ -n "${EMCP_PACKAGE_BOARD:-}" ]; then
  [ "$mode" = find_package ] || { echo "a board project is tested with find_package only" >&2; exit 2; }
  cmake -S "$root/tests/package/board_consumer" -B "$work/consumer" -G Ninja "$how" -DCMAKE_BUILD_TYPE=MinSizeRel \
    -DCMAKE_TOOLCHAIN_FILE="$work/prefix/share/emcp/src/cmake/$EMCP_PACKAGE_TOOLCHAIN" \
    -DEMCP_BOARD="$EMCP_PACKAGE_BOARD" >/dev/null
  cmake --build "$work/consumer" >/dev/null
  echo "consumer firmware for $EMCP_PACKAGE_BOARD built against the installed package"
  export EMCP_TRANSPORT=qemu EMCP_FIRMWARE="$work/consumer/consumer.elf"
else
  check_host_consumer
  export EMCP_CONSUMER="$work/consumer/consumer"
fi
if [ -n "$node" ]; then
  cd "$root/tests/mcp"
  # EMCP_NODE_REPORT: where the TAP report whose todo/skipped counts scripts/test checks goes
  # (emcp_node_test in cmake/EmcpTools.cmake says why).
  "$node" --test --test-reporter=spec --test-reporter-destination=stdout \
    --test-reporter=tap --test-reporter-destination="${EMCP_NODE_REPORT:-/dev/null}" package_consumer.test.mjs
fi
