#!/bin/sh
# stdio_call.sh TOOL EXPECTED PROGRAM [ARG...]
# Smoke test of an MCP server on stdio: initialize, notifications/initialized and a tools/call
# of TOOL (no arguments) on its standard input, then end of input. Passes only when the answer
# to the call (id 2) contains the text EXPECTED and the program then exits with status 0 and
# leaves no sanitizer report on stderr (server_end.sh: a crash or a report after answering fails
# it).
set -u
tool=$1
expected=$2
shift 2
out=$(mktemp)
err=$(mktemp)
trap 'rm -f "$out" "$err"' EXIT
printf '%s\n' \
  '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' \
  '{"jsonrpc":"2.0","method":"notifications/initialized"}' \
  "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"$tool\"}}" |
  "$@" >"$out" 2>"$err"
status=$?
if ! "$(dirname "$0")/server_end.sh" "$* (after its input ended)" "$status" "$err"; then
  echo "it wrote:"
  cat "$out"
  exit 1
fi
if ! grep -F '"id":2,' "$out" | grep -q -F -e "$expected"; then
  echo "FAILED: the answer to tools/call $tool does not contain: $expected; the program wrote:"
  cat "$out"
  exit 1
fi
echo "ok: tools/call $tool answered with \"$expected\", exit status 0, no sanitizer report"
