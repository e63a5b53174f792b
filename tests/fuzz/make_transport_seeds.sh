#!/bin/sh
# Seeds for fuzz_http_server and fuzz_ws_framer, written with printf (no binary files kept).
# fuzz_http_server reads a script: op byte (bits 0-1 connection, bits 2-4 action: 0 open,
# 1 peer close, 2 time passes, 3 answer a deferred call (with bit 7: sends on that connection
# start or stop failing; bits 5-6 = 2: its window shuts, 3: it reads 64 bytes), 4-7 bytes: a
# length byte follows, then that many bytes).
# Usage: make_transport_seeds.sh OUT_DIR
set -eu
out=$1
rm -rf "$out"
mkdir -p "$out/engine" "$out/ws"

# bytes CONN: stdin in pieces of at most 200 bytes, each as a bytes step.
bytes() {
  tmp=$(mktemp)
  cat > "$tmp"
  size=$(wc -c < "$tmp")
  off=0
  while [ "$off" -lt "$size" ]; do
    len=$((size - off))
    [ "$len" -gt 200 ] && len=200
    printf "\\$(printf '%03o' $((16 + $1)))\\$(printf '%03o' "$len")"
    tail -c +$((off + 1)) "$tmp" | head -c "$len"
    off=$((off + len))
  done
  rm -f "$tmp"
}
open() { printf "\\$(printf '%03o' "$1")"; }

. "$(dirname "$0")/http_seed_lib.sh"
# These seeds' client offers sampling and elicitation (the fixture's tools ask for them).
INIT='{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{},"elicitation":{}},"clientInfo":{"name":"f","version":"1"}}}'

{ open 0; post "$INIT" | bytes 0; } > "$out/engine/initialize"
{ open 0; post "$INIT" | bytes 0; post '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$SID" | bytes 0;
  post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big"}}' "$SID" | bytes 0;
  post '{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":1}}}' "$SID" | bytes 0;
  post '{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}' "$SID" | bytes 0;
  printf '\014'; open 1
  printf 'GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n%s\r\n' "$SID" | bytes 1
  printf 'DELETE /mcp HTTP/1.1\r\nHost: localhost\r\n%s\r\n' "$SID" | bytes 0; } > "$out/engine/session"
# A client that stops reading, then reads a little at a time, then stops for good.
{ open 0; post "$INIT" | bytes 0; post '{"jsonrpc":"2.0","method":"notifications/initialized"}' "$SID" | bytes 0;
  printf '\114'; post '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big"}}' "$SID" | bytes 0;
  printf '\154\154\154\154'; post '{"jsonrpc":"2.0","id":3,"method":"ping"}' "$SID" | bytes 0;
  printf '\154\114\050\050'; } > "$out/engine/window"
{ open 0; printf 'GET /sse HTTP/1.1\r\nHost: localhost\r\n\r\n' | bytes 0; open 1
  printf 'POST /messages?sessionId=%s HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: %s\r\n\r\n%s' "$SID" "$(printf '%s' "$INIT" | wc -c)" "$INIT" | bytes 1; } > "$out/engine/legacy"
{ open 0; printf 'GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n' | bytes 0
  printf '\020\013\201\205\067\372\041\075\177\237\115\121\130'; } > "$out/engine/websocket"
{ open 0; printf 'POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nTransfer-Encoding: chunked\r\n\r\n5\r\n{"jso\r\n0\r\n\r\n' | bytes 0; printf '\050'; } > "$out/engine/chunked_timeout"

# WebSocket frames (RFC 6455 5.7 examples and a close).
printf '\201\205\067\372\041\075\177\237\115\121\130' > "$out/ws/hello"
printf '\001\203\067\372\041\075\177\237\115\200\202\067\372\041\075\133\225' > "$out/ws/fragments"
printf '\211\205\067\372\041\075\177\237\115\121\130\210\202\067\372\041\075\064\022' > "$out/ws/ping_close"
echo "transport seeds: $(ls "$out/engine" | wc -l) engine, $(ls "$out/ws" | wc -l) ws in $out"
