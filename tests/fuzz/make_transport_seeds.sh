#!/bin/sh
# Seeds for fuzz_http_server and fuzz_ws_framer, written with printf (no binary files kept).
# fuzz_http_server reads a script: op byte (bits 0-1 connection, bits 2-4 action: 0 open,
# 1 peer close, 2 time passes, 3 answer a deferred call (with bit 7: sends on that connection
# start or stop failing; bits 5-6 = 2: its window shuts, 3: it reads 64 bytes), 4-7 bytes: a
# length byte follows, then that many bytes).
# With MODERN_FIXTURE (tests/fixtures/mcp/rev-2026-07-28.jsonl), the requests its client sends
# become 2026-07-28 POSTs with their headers (engine/modern_*, and as raw requests for
# fuzz_http_parser in http/), with the headers against the body besides.
# Usage: make_transport_seeds.sh OUT_DIR [MODERN_FIXTURE]
set -eu
out=$1
modern=${2:-}
rm -rf "$out"
mkdir -p "$out/engine" "$out/ws" "$out/http"

# bytes CONN: stdin (text: no NUL byte) in pieces of at most 200 bytes, each as a bytes step.
bytes() {
  LC_ALL=C awk -v conn="$1" 'BEGIN { RS = "\001"; ORS = "" }
    { t = t (NR > 1 ? RS : "") $0 }
    END { for (off = 1; off <= length(t); off += 200) { p = substr(t, off, 200); printf "%c%c%s", 16 + conn, length(p), p } }'
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
# CORS: a browser page's preflight, then its POST with Origin (the answer's head grows).
{ open 0; printf 'OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:5173\r\nAccess-Control-Request-Method: POST\r\n\r\n' | bytes 0
  printf 'POST /mcp HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:5173\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: %s\r\n\r\n%s' "$(printf '%s' "$INIT" | wc -c)" "$INIT" | bytes 0; } > "$out/engine/cors"

# WebSocket frames (RFC 6455 5.7 examples and a close).
printf '\201\205\067\372\041\075\177\237\115\121\130' > "$out/ws/hello"
printf '\001\203\067\372\041\075\177\237\115\200\202\067\372\041\075\133\225' > "$out/ws/fragments"
printf '\211\205\067\372\041\075\177\237\115\121\130\210\202\067\372\041\075\064\022' > "$out/ws/ping_close"
# ---- 2026-07-28 (stateless) from the wire fixture ------------------------------------------------
if [ -n "$modern" ]; then
  [ -f "$modern" ] || { echo "make_transport_seeds.sh: no fixture $modern" >&2; exit 1; }
  close() { printf "\\$(printf '%03o' $((4 + $1)))"; }
  msgs=$(mktemp)
  sed -n 's/^> //p' "$modern" > "$msgs"
  # Each message alone, on a connection of its own (http/ holds the request, engine/ the script).
  n=0
  while IFS= read -r line; do
    n=$((n + 1))
    mpost "$line" > "$out/http/modern_msg_$(printf %03d "$n")"
    { open 0; bytes 0 < "$out/http/modern_msg_$(printf %03d "$n")"; } > "$out/engine/modern_msg_$(printf %03d "$n")"
  done < "$msgs"
  # The fixture's sections (a comment line starts one: errors, input rounds, listens...) as
  # sessions: requests on keep-alive connection 0 (a deferred "slow" call answered after it),
  # each subscriptions/listen on a connection of its own among 1-3 (held open: the oldest is
  # closed to make room), as a client holding its listens open while it goes on would.
  # sections: "PART MESSAGE KIND" per message, KIND listen, slow or plain.
  awk '
    /^#/ { if (n > 0) { part++; n = 0 } next }
    /^> / { m++; n++; kind = "plain"
            if ($0 ~ /"method":"subscriptions\/listen"/) kind = "listen"; else if ($0 ~ /"name":"slow"/) kind = "slow"
            printf "%d %03d %s\n", part, m, kind }
  ' "$modern" > "$msgs.sections"
  part=-1
  while read -r p m kind; do
    if [ "$p" != "$part" ]; then
      part=$p
      seed="$out/engine/modern_part_$(printf %02d "$part")"
      open 0 > "$seed"
      next_listen=1
      held=" "
    fi
    req="$out/http/modern_msg_$m"
    case $kind in
      listen)
        case $held in *" $next_listen "*) close "$next_listen" >> "$seed" ;; *) held="$held$next_listen " ;; esac
        { open "$next_listen"; bytes "$next_listen" < "$req"; } >> "$seed"
        next_listen=$((next_listen % 3 + 1)) ;;
      slow) { bytes 0 < "$req"; printf '\014'; } >> "$seed" ;;
      *) bytes 0 < "$req" >> "$seed" ;;
    esac
  done < "$msgs.sections"
  rm -f "$msgs.sections"
  # The headers against the body (streamable-http.mdx, "Server Validation"): each variant of a
  # tools/call and of a resources/read the fixture sends, alone and all on one connection.
  call=$(grep -m1 '"method":"tools/call"' "$msgs")
  resource=$(grep -m1 '"method":"resources/read"' "$msgs")
  name=$(body_field "$call" 's/.*"params":{"name":"\([^"]*\)".*/\1/p')
  b64=$(printf '%s' "$name" | base64 | tr -d '\n')
  vn=0
  variant() {  # variant COMMAND...: one request, its own seed
    vn=$((vn + 1))
    "$@" > "$out/http/modern_headers_$(printf %02d "$vn")"
  }
  variant mpost "$call" 2025-11-25
  variant mpost "$call" -
  variant mpost "$call" = tools/list
  variant mpost "$call" = -
  variant mpost "$call" = = other_tool
  variant mpost "$call" = = -
  variant mpost "$call" = = "=?base64?$b64?="
  variant mpost "$call" = = "=?base64?$b64"
  variant mpost "$call" = = "  $name  "
  variant mpost "$call" - - - "mcp-protocol-version: 2026-07-28" "mcp-method: tools/call" "mcp-name: $name"
  variant mpost "$call" = = = "Mcp-Param-Text: =?base64?aMOpbGxv?=" "Mcp-Param-Count: 007"
  variant mpost "$call" = = = "Mcp-Session-Id: $SID"
  variant mpost "$call" = = "$(printf '%0300d' 0)"
  variant mpost "$resource" = = test://other
  variant mpost "$resource" = = -
  variant mpost "$INIT" 2026-07-28
  variant printf 'GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\r\n'
  variant printf 'DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMCP-Protocol-Version: 2026-07-28\r\n\r\n'
  for f in "$out"/http/modern_headers_*; do
    { open 0; bytes 0 < "$f"; } > "$out/engine/$(basename "$f")"
  done
  cat "$out"/http/modern_headers_* > "$msgs.all"
  { open 0; bytes 0 < "$msgs.all"; } > "$out/engine/modern_headers_all"
  rm -f "$msgs" "$msgs.all"
  [ "$n" -gt 0 ] && [ "$part" -ge 0 ] || { echo "make_transport_seeds.sh: no messages in $modern" >&2; exit 1; }
fi
echo "transport seeds: $(ls "$out/engine" | wc -l) engine, $(ls "$out/ws" | wc -l) ws, $(ls "$out/http" | wc -l) http in $out"
