# http_seed_lib.sh - what the fuzz seed scripts share (sourced, POSIX sh): an initialize body,
# a POST /mcp request around a body, the first session's id (the fuzz targets' random sources
# give 01 02 03 ...), the initialized notification and a tools/call body.
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"f","version":"1"}}}'
post() {  # post BODY [SESSION_ID [EXTRA_HEADER]]
  printf 'POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n'
  [ -n "${2:-}" ] && printf 'Mcp-Session-Id: %s\r\n' "$2"
  [ -n "${3:-}" ] && printf '%s\r\n' "$3"
  printf 'Content-Length: %s\r\n\r\n%s' "$(printf '%s' "$1" | wc -c)" "$1"
}
SID='0102030405060708090a0b0c0d0e0f10'
INITIALIZED='{"jsonrpc":"2.0","method":"notifications/initialized"}'
call() { printf '{"jsonrpc":"2.0","id":%s,"method":"tools/call","params":{"name":"%s","arguments":%s}}' "$1" "$2" "$3"; }
