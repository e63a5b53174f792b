#!/bin/sh
# Seeds for tests/fuzz/fuzz_lwip_http.cpp, written with printf (no binary files kept). The
# target reads a script: an op byte (bits 0-1 the client, bits 2-4 the action, bits 5-7 its
# argument A): 0 connect; 1 bytes (a length byte, then the bytes, written in segments of at most
# {1,3,16,100,536,1460,4000,any}[A] bytes); 2 time passes ((A+1)*8 steps of 10 ms); 3 reading
# (A: 0 stop, 1 all, 2 16/step, 3 200/step, 4 FIN after the bytes, 5 answer a deferred call,
# 6 hold/free lwIP's heap, 7 hold/free all free pcbs but one); 4 close (FIN); 5 abort (RST);
# 7 the dialed connection (A: 0 dial the peer, 1 the engine writes bytes (a length byte, the
# bytes), 2 the engine closes, 3 the engine stops/starts taking, 4 the peer writes bytes (as 1),
# 5 the peer's FIN, 6 the peer's RST, 7 dial a port nothing listens on).
# Usage: make_fuzz_seeds.sh OUT_DIR
set -eu
out=$1
rm -rf "$out"
mkdir -p "$out"

op() { printf "\\$(printf '%03o' $(( $1 | ($2 << 2) | ($3 << 5) )))"; }
connect() { op "$1" 0 0; }
wait_steps() { op 0 2 "$1"; }  # (A+1)*8 steps
reading() { op "$1" 3 "$2"; }
close_fin() { op "$1" 4 0; }
reset() { op "$1" 5 0; }
dialed() { op 0 7 "$1"; }
# dial_bytes A TEXT: the engine (A 1) or the peer (A 4) writes TEXT (at most 255 bytes).
dial_bytes() { op 0 7 "$1"; printf "\\$(printf '%03o' ${#2})"; printf '%s' "$2"; }
# bytes CLIENT SEGMENT_INDEX: stdin in pieces of at most 200 bytes, each as a bytes op.
bytes() {
  tmp=$(mktemp)
  cat > "$tmp"
  size=$(wc -c < "$tmp")
  off=0
  while [ "$off" -lt "$size" ]; do
    len=$((size - off))
    [ "$len" -gt 200 ] && len=200
    op "$1" 1 "$2"
    printf "\\$(printf '%03o' "$len")"
    tail -c +$((off + 1)) "$tmp" | head -c "$len"
    off=$((off + len))
  done
  rm -f "$tmp"
}

. "$(dirname "$0")/../fuzz/http_seed_lib.sh"
BIG='{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"big"}}'
ECHO='{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}}'
SLOW='{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"name":"slow"}}'

session() {  # on client 0, whole segments
  connect 0; post "$INIT" | bytes 0 7; wait_steps 3
  post "$INITIALIZED" "$SID" | bytes 0 7; wait_steps 3
}

{ connect 0; post "$INIT" | bytes 0 7; wait_steps 7; close_fin 0; wait_steps 7; } > "$out/initialize"
# Tiny segments, then pipelined requests in one write.
{ session; connect 1; post "$ECHO" "$SID" | bytes 1 1; wait_steps 7
  { post "$ECHO" "$SID"; post "$ECHO" "$SID"; } | bytes 1 7; wait_steps 7; } > "$out/segments"
# A client that stops reading during a large answer; another one is served after it.
{ session; connect 1; reading 1 0; post "$BIG" "$SID" | bytes 1 7; connect 2; post "$ECHO" "$SID" | bytes 2 7
  wait_steps 7; wait_steps 7; wait_steps 7; reading 1 1; wait_steps 7; } > "$out/stalled"
# A slow reader.
{ session; reading 0 2; post "$BIG" "$SID" | bytes 0 7; wait_steps 7; wait_steps 7; wait_steps 7; } > "$out/slow_reader"
# A reset in the middle of a body; a FIN during an event stream.
{ session; connect 1; printf 'POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nMcp-Session-Id: %s\r\nContent-Length: 300\r\n\r\n{"jsonrpc":' "$SID" | bytes 1 7
  wait_steps 1; reset 1; connect 2; printf 'GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n' "$SID" | bytes 2 7
  wait_steps 3; close_fin 2; wait_steps 3; } > "$out/reset_fin"
# More clients than slots, the engine's busy with deferred calls.
{ session; for c in 1 2 3; do connect $c; post "$SLOW" "$SID" | bytes $c 7; done; wait_steps 3
  connect 0; post "$ECHO" "$SID" | bytes 0 7; wait_steps 3; reading 0 5; reading 0 5; reading 0 5; wait_steps 7; } > "$out/crowd"
# The heap held while a large answer goes to a slow reader; the pcbs held while a client connects.
{ session; reading 0 2; post "$BIG" "$SID" | bytes 0 7; wait_steps 0; reading 0 6; wait_steps 3; reading 0 6
  reading 0 1; wait_steps 7; reading 0 7; connect 1; wait_steps 3; reading 0 7
  wait_steps 7; wait_steps 7; wait_steps 7; wait_steps 7; wait_steps 7
  post "$ECHO" "$SID" | bytes 1 7; wait_steps 7; } > "$out/exhaustion"
# Connection: close with a pipelined request behind it, and a half-close.
{ session; connect 1; { post "$ECHO" "$SID" "Connection: close"; post "$ECHO" "$SID"; } | bytes 1 7; wait_steps 7
  connect 2; reading 2 4; post "$ECHO" "$SID" | bytes 2 7; wait_steps 7; } > "$out/closing"
# The listener dials the peer while it serves HTTP: bytes both ways, the engine not taking input
# while the peer writes more than a window, then taking it; the engine closes.
LINE=$(printf '%0200d' 0)
{ session; dialed 0; wait_steps 3; dial_bytes 1 "CONNECT as the device"; wait_steps 3
  dial_bytes 4 "CONNACK from the peer"; wait_steps 3; dialed 3
  for k in 1 2 3 4 5 6; do dial_bytes 4 "$LINE"; done; wait_steps 7; dialed 3; wait_steps 7
  post "$ECHO" "$SID" | bytes 0 7; wait_steps 3; dialed 2; wait_steps 3; } > "$out/dial"
# A refused connect, then the peer's FIN and its RST on connections dialed again.
{ dialed 7; wait_steps 7; dialed 0; wait_steps 3; dialed 5; wait_steps 7; dialed 0; wait_steps 3
  dial_bytes 1 "$LINE"; dialed 6; wait_steps 7; } > "$out/dial_ends"
echo "lwip fuzz seeds: $(ls "$out" | wc -l) in $out"
