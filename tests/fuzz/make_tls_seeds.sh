#!/bin/sh
# Seeds for fuzz_tls_http, written with printf (no binary files kept). Each is two bytes of
# choices (see fuzz_tls_http.cpp: byte 0 = mode | window << 2 | piece << 5, byte 1 = run after
# every piece 1, no poll 2, two connections 4, close_notify 8, pause << 5), then the payload:
# plaintext HTTP a TLS client sends (modes 0, 1), or raw bytes for the layer (modes 2, 3).
# Usage: make_tls_seeds.sh OUT_DIR
set -eu
out=$1
rm -rf "$out"
mkdir -p "$out"

choices() { printf "\\$(printf '%03o' "$1")\\$(printf '%03o' "$2")"; }

. "$(dirname "$0")/http_seed_lib.sh"

session() { post "$INIT"; post "$INITIALIZED" "$SID"; }

# An open window, all at once.
{ choices 0 1; post "$INIT"; } > "$out/initialize"
{ choices 0 1; session; post "$(call 2 echo '{"text":"hi"}')" "$SID"; post "$(call 3 big '{}')" "$SID"
  post '{"jsonrpc":"2.0","id":4,"method":"ping"}' "$SID"
  printf 'DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: %s\r\n\r\n' "$SID"; } > "$out/session"
# A 7-byte window (every record split), 16-byte records.
{ choices $((2 * 4 + 3 * 32)) 1; session; post "$(call 2 big '{}')" "$SID"; } > "$out/window7"
# A window that opens only at the fuzzer's pauses.
{ choices $((7 * 4)) 1; session; post "$(call 2 echo '{"text":"held"}')" "$SID"; } > "$out/window0"
# Pipelined: everything in one record, the world runs once; a 31-byte window.
{ choices $((3 * 4)) 8; session; post "$(call 2 echo '{"text":"one"}')" "$SID"
  post "$(call 3 echo '{"text":"two"}')" "$SID" 'Connection: close'; } > "$out/pipelined"
# Two connections (each gets every 200-byte record, in turn), a 100-byte window.
{ choices $((4 * 4 + 5 * 32)) 5; session; post "$(call 2 progress '{}')" "$SID"
  printf 'GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: %s\r\n\r\n' "$SID"; } > "$out/two"
# Time passes between 5-byte records (head and body timeouts).
{ choices $((2 * 32)) $((1 + 5 * 32)); post "$INIT"; } > "$out/slow_client"
{ choices 0 1; session; post "$(call 2 slow '{}')" "$SID"; } > "$out/deferred"
# WebSocket over TLS.
{ choices 0 1
  printf 'GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n'
  printf '\201\205\067\372\041\075\177\237\115\121\130'; } > "$out/websocket"
# Hostile: plain HTTP to the TLS port; a ClientHello record header with nonsense; garbage.
{ choices 2 1; post "$INIT"; } > "$out/plain_http"
{ choices 2 1; printf '\026\003\001\000\055\001\000\000\051\003\003'; head -c 40 /dev/zero; } > "$out/bad_hello"
{ choices $((2 + 1 * 32)) 1; printf '\200\001\002\003\377\376\000\000\025\003\003\000\002\002\050'; } > "$out/garbage"
# Hostile records on an established connection: application data, an alert, a handshake.
{ choices 3 1; printf '\027\003\003\000\040'; head -c 32 /dev/zero
  printf '\025\003\003\000\002\001\000\026\003\003\000\004\000\000\000\000'; } > "$out/bad_records"
# Zero-length records before every 64-byte record.
{ choices $((4 * 32)) $((1 + 16)); session; post "$(call 2 echo '{"text":"empty"}')" "$SID"; } > "$out/empty_records"
