#!/bin/sh
# Builds tests/package/consumer (a project outside emcp's tree that adds emcp with
# add_subdirectory and its own emcp_config.h) and checks its server: the project's page size
# (2) holds in the core's tools/list, and a tool call is answered.
#   tests/package/run.sh EMCP_ROOT WORK_DIR
set -eu
root=$1
work=$2
rm -rf "$work"
cmake -S "$root/tests/package/consumer" -B "$work" -G Ninja -DEMCP_ROOT="$root" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$work" >/dev/null
out=$(printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  '{"jsonrpc":"2.0","id":2,"method":"tools/list"}' \
  '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"hello","arguments":{"name":"the test"}}}' \
  | "$work/consumer")
page=$(printf '%s\n' "$out" | grep '"id":2,')
case "$page" in
  *'"name":"hello"'*'"name":"second"'*'"nextCursor"'*) ;;
  *) echo "tools/list is not a page of 2 with a cursor: $page" >&2; exit 1 ;;
esac
case "$page" in *'"name":"third"'*) echo "the page holds 3 tools: the project's EMCP_PAGE_SIZE did not reach the core" >&2; exit 1 ;; esac
printf '%s\n' "$out" | grep -q '"id":3,"result":{"content":\[{"type":"text","text":"Hello from the test!"}\]}' ||
  { echo "no answer to the tool call: $out" >&2; exit 1; }
echo "consumer: pages of 2, tool call answered"
