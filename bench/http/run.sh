#!/usr/bin/env bash
# The HTTP benchmark (scripts/bench runs it): emcp-sensors --http, the official MCP TypeScript
# SDK server (StreamableHTTPServerTransport) with an equivalent echo tool, and an HTTP responder
# that does no MCP work, side by side, each on its own loopback port.
#   bench/http/run.sh BIN_DIR RESULTS_DIR
# Then the instructions per tools/call through each of emcp's ports: the posix socket port
# (emcp-sensors --http) and ports/lwip on lwIP built for the host (emcp_lwip_http_calls), and
# what a connection holds in RAM.
# BIN_DIR holds emcp-sensors, emcp_http_bench, emcp_http_null_responder and emcp_lwip_http_calls. Writes http.md (the
# Markdown printed, which scripts/bench puts into bench/README.md), http.txt and http-busy.txt
# (how busy the machine was meanwhile: bench/lib.sh).
set -euo pipefail
bin=$1
results=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
mkdir -p "$results"
drv="$bin/emcp_http_bench"
clients=${EMCP_BENCH_HTTP_CLIENTS:-8}
base=${EMCP_BENCH_HTTP_PORT:-18700}

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

# The requests of each run (after the warm-up), the runs per server (the best counts), the
# throughput the issue that set the goal quoted for the TypeScript server on this machine.
n_emcp=40000 n_ts=4000 n_null=60000
reps=3
warmup=500
quoted_ts_rps=3400

# measure NAME PORT REQUESTS DRIVER_FLAGS -- SERVER COMMAND...: starts the server, waits for
# its port, runs the driver $reps times (best throughput counts), reads the server's peak RSS
# (VmHWM) and anonymous RSS (RssAnon, KiB), stops it; one line into $results/${table:-http}.txt.
measure() {
  local name=$1 port=$2 n=$3 flags=$4
  shift 5
  "$@" >/dev/null 2>"$results/http-$name.log" &
  local pid=$!
  for _ in $(seq 1 100); do
    (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break
    sleep 0.1
  done
  local best=0 line p50="" p99="" r
  for _ in $(seq 1 $reps); do
    # shellcheck disable=SC2086
    line=$("$drv" --port "$port" --connections "$clients" --requests "$n" --warmup $warmup $flags)
    r=$(echo "$line" | field rps)
    if ((r > best)); then best=$r; p50=$(echo "$line" | field p50_us); p99=$(echo "$line" | field p99_us); fi
  done
  local rss anon
  rss=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
  anon=$(awk '/^RssAnon:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "$name $best $p50 $p99 $rss $anon" >>"$results/${table:-http}.txt"
}

: >"$results/http.txt"
echo "$clients" >"$results/http-clients.txt"
echo "http: $clients clients..." >&2
busy_start
measure emcp $base $n_emcp "" -- "$bin/emcp-sensors" --simulate --http "$base"
measure ts $((base + 1)) $n_ts "" -- node "$here/../ts-server/http-server.mjs" $((base + 1))
measure null $((base + 2)) $n_null "--raw" -- "$bin/emcp_http_null_responder" $((base + 2))
busy_end "$results/http-busy.txt"

w() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$results/http.txt"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
row() {
  printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$(w "$2" 2)" "$(w "$2" 3)" "$(w "$2" 4)" \
    "$(mib "$(w "$2" 5)")" "$(mib "$(w "$2" 6)")"
}
thou() { echo "$1" | sed ':a; s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a / b }'; }
read -r others load1 load5 load15 _ <"$results/http-busy.txt"
{
  echo
  echo "## HTTP: tools/call of an echo tool, $clients keep-alive clients (one session each), $(nproc) cores, load $load1 $load5 $load15, other processes $others cores"
  echo
  echo "| server | req/s | p50 µs | p99 µs | peak RSS | anonymous RSS |"
  echo "|---|---:|---:|---:|---:|---:|"
  row "emcp-sensors --http (C++, emcp)" emcp
  row "official TypeScript SDK, StreamableHTTPServerTransport (Node $(node --version))" ts
  row "HTTP responder doing no MCP work" null
  echo
  echo "- throughput, emcp / TypeScript SDK: **$(ratio "$(w emcp 2)" "$(w ts 2)")x** (goal: at least 15x); against the $(thou $quoted_ts_rps) req/s" \
    "the issue that set the goal quoted for the TypeScript server on this machine: $(ratio "$(w emcp 2)" $quoted_ts_rps)x"
  awk -v e="$(w emcp 2)" -v f="$(w null 2)" 'BEGIN { printf "- time per request of the responder that does no MCP work (HTTP parsing and the socket round trips) / emcp'"'"'s: %.0f %%; the rest of emcp'"'"'s is the MCP work (decoding into the arena, schema validation, writing and framing the answer)\n", 100 * e / f }'
  echo "- peak RSS, emcp / TypeScript SDK: $(mib "$(w emcp 5)") / $(mib "$(w ts 5)"); anonymous (stack, static data, heap, the libraries' written pages):" \
    "$(mib "$(w emcp 6)") / $(mib "$(w ts 6)")"
  echo "- settings (\`bench/http/run.sh\`): best of $reps runs of N requests after $warmup warm-up requests, N = $(thou $n_emcp) for emcp," \
    "$(thou $n_ts) for the TypeScript server, $(thou $n_null) for the responder; $clients clients (\`EMCP_BENCH_HTTP_CLIENTS\`)"
} | tee "$results/http.md"

# ---- Instructions per tools/call through each port (callgrind) ----------------------------------
# One keep-alive connection, one request at a time, N and 2N calls after the same start:
# (Ir(2N) - Ir(N)) / N cancels start-up and the session's set-up. Two counts each: the port's
# run_once() with everything it calls (the HTTP engine and the MCP server; posix: the socket
# calls' user-space side; lwIP: the port and lwIP's output path) via --toggle-collect, and the
# whole process (posix: the server process, the kernel's TCP not counted; lwIP: the one process
# holding both TCP ends, the loopback netif and the client).
cg_n=2000
cg_total() { awk '/^totals:/ { print $2 }' "$1"; }
cg_posix() {  # N TOGGLE(or "") OUT
  local port=$((base + 3)) toggle=()
  [[ -n "$2" ]] && toggle=("--toggle-collect=$2")
  valgrind --tool=callgrind "${toggle[@]}" --callgrind-out-file="$3" \
    "$bin/emcp-sensors" --simulate --http "$port" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 200); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  "$drv" --port "$port" --connections 1 --requests "$1" --warmup 10 >/dev/null
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
cg_lwip() {  # N TOGGLE(or "") OUT
  local toggle=()
  [[ -n "$2" ]] && toggle=("--toggle-collect=$2")
  valgrind --tool=callgrind "${toggle[@]}" --callgrind-out-file="$3" "$bin/emcp_lwip_http_calls" "$1" >/dev/null 2>&1
}
per_call() {  # KIND TOGGLE -> instructions per call
  local kind=$1 a b
  "cg_$kind" $cg_n "$2" "$results/http-$kind.$cg_n.cg"
  "cg_$kind" $((2 * cg_n)) "$2" "$results/http-$kind.$((2 * cg_n)).cg"
  a=$(cg_total "$results/http-$kind.$cg_n.cg")
  b=$(cg_total "$results/http-$kind.$((2 * cg_n)).cg")
  echo $(((b - a) / cg_n))
}
echo "http: callgrind through the posix and lwIP ports..." >&2
posix_port=$(per_call posix '*posix::HttpListener::run_once*')
posix_all=$(per_call posix "")
lwip_port=$(per_call lwip '*lwip::LwipHttpListener::run_once*')
lwip_all=$(per_call lwip "")
echo "posix $posix_port $posix_all" >"$results/http-ports.txt"
echo "lwip $lwip_port $lwip_all" >>"$results/http-ports.txt"
ram=$("$bin/emcp_lwip_http_calls" --ram)
r() { echo "$ram" | tr ' ' '\n' | awk -F= -v k="$1" '$1 == k { print $2 }'; }
{
  echo
  echo "## HTTP through each port: instructions per tools/call (callgrind), one keep-alive connection, one request at a time"
  echo
  echo "| port | the port's run_once (HTTP engine, MCP server, port; lwIP: its output path) | whole process |"
  echo "|---|---:|---:|"
  echo "| posix sockets (\`emcp-sensors --http\`, poll) | $(thou "$posix_port") | $(thou "$posix_all") (the kernel's TCP not counted) |"
  echo "| lwIP 2.1.3 on the host (\`ports/lwip\`, NO_SYS, loopback netif) | $(thou "$lwip_port") | $(thou "$lwip_all") (both TCP ends, the loopback netif and the client) |"
  echo
  echo "- RAM per connection: the engine's slot $(thou "$(r engine_connection)") B (HTTP parser, WebSocket frame parser, decoder, sink)" \
    "+ JSON reader $(r reader) B + arena (\`ArenaSize\`, here $(thou "$(r arena)") B) + output buffer (\`OutSize\`, here $(thou "$(r out)") B);" \
    "the lwIP port's slot $(r listener_slot) B; lwIP's TCP pcb $(r tcp_pcb) B and altcp pcb $(r altcp_pcb) B (pools), with its segments ($(r tcp_seg) B each)" \
    "and send-buffer copies in lwIP's heap (at most \`TCP_SND_BUF\` per connection); per session $(r session) B + replay buffer (here $(thou "$(r replay)") B)." \
    "On the Cortex-M3 (32-bit) these are smaller: [docs/footprint.md](../docs/footprint.md) names every buffer of the board images."
  echo "- settings: N = $(thou $cg_n) and $(thou $((2 * cg_n))) calls of the sensors example's echo tool, the same request bytes through both ports (\`bench/http/run.sh\`)"
} | tee -a "$results/http.md"

# ---- HTTPS: the same server behind emcp's TLS layer (ports/mbedtls), in the same run --------------
# A test PKI made now (tests/tls/make_certs.sh: EC P-256 server key), then: keep-alive tools/call
# requests/s over HTTPS beside plain HTTP (the same driver, the same clients); the server's
# instructions per full and per resumed handshake (callgrind, N and 2N sequential connections,
# each a handshake and one short request: the difference over N cancels start-up).
pki="$results/pki"
"$here/../../tests/tls/make_certs.sh" "$pki" >/dev/null
tls_args=(--tls-cert "$pki/server.pem" --tls-key "$pki/server.key")
echo "http: HTTPS beside HTTP..." >&2
: >"$results/https.txt"
busy_start
table=https measure plain $((base + 4)) $n_emcp "" -- "$bin/emcp-sensors" --simulate --http $((base + 4))
table=https measure tls $((base + 5)) $n_emcp "--tls $pki/ca.pem" -- \
  "$bin/emcp-sensors" --simulate --http $((base + 5)) "${tls_args[@]}"
# Handshakes per second (wall clock), full and resumed.
hs_rate() {  # PORT RESUME_FLAG
  "$bin/emcp-sensors" --simulate --http "$1" "${tls_args[@]}" >/dev/null 2>&1 &
  local pid=$!
  for _ in $(seq 1 100); do (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null && break; sleep 0.1; done
  # shellcheck disable=SC2086
  "$drv" --port "$1" --tls "$pki/ca.pem" --handshakes 400 $2 | field handshakes_per_s
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
}
full_rate=$(hs_rate $((base + 6)) "")
resumed_rate=$(hs_rate $((base + 7)) "--resume")
busy_end "$results/https-busy.txt"
# Instructions per handshake, the server's whole process (callgrind).
hs_n=100
cg_hs() {  # N RESUME_FLAG OUT
  local port=$((base + 8))
  valgrind --tool=callgrind --callgrind-out-file="$3" "$bin/emcp-sensors" --simulate --http "$port" \
    "${tls_args[@]}" >/dev/null 2>"$3.log" &
  local pid=$!
  for _ in $(seq 1 300); do (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null && break; sleep 0.1; done
  # shellcheck disable=SC2086
  "$drv" --port "$port" --tls "$pki/ca.pem" --handshakes "$1" $2 >/dev/null
  kill "$pid"; wait "$pid" 2>/dev/null || true
}
per_handshake() {  # RESUME_FLAG -> instructions per handshake (and its request)
  cg_hs $hs_n "$1" "$results/https-hs$1.$hs_n.cg"
  cg_hs $((2 * hs_n)) "$1" "$results/https-hs$1.$((2 * hs_n)).cg"
  local a b
  a=$(cg_total "$results/https-hs$1.$hs_n.cg")
  b=$(cg_total "$results/https-hs$1.$((2 * hs_n)).cg")
  echo $(((b - a) / hs_n))
}
echo "http: callgrind of full and resumed handshakes..." >&2
full_ir=$(per_handshake "")
resumed_ir=$(per_handshake "--resume")
# The server says how many handshakes resumed (its TLS line at stop): every one after the first.
resumed_seen=$(sed -n 's/.*TLS: \([0-9]*\) handshakes (\([0-9]*\) resumed).*/\2 of \1/p' "$results/https-hs--resume.$((2 * hs_n)).cg.log")
tw() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$results/https.txt"; }
read -r others load1 load5 load15 _ <"$results/https-busy.txt"
{
  echo
  echo "**HTTPS**: the same tools/call over TLS 1.2 (ECDHE-ECDSA P-256, AES-128-GCM), $clients keep-alive clients; load during these timings $load1 $load5 $load15, other processes $others cores."
  echo
  echo "| emcp-sensors | req/s | p50 µs | p99 µs | peak RSS | anonymous RSS |"
  echo "|---|---:|---:|---:|---:|---:|"
  echo "| plain HTTP | $(tw plain 2) | $(tw plain 3) | $(tw plain 4) | $(mib "$(tw plain 5)") | $(mib "$(tw plain 6)") |"
  echo "| HTTPS (\`--tls-cert\`, \`--tls-key\`: the TLS layer over Debian's libmbedtls) | $(tw tls 2) | $(tw tls 3) | $(tw tls 4) | $(mib "$(tw tls 5)") | $(mib "$(tw tls 6)") |"
  echo
  awk -v t="$(tw tls 2)" -v p="$(tw plain 2)" 'BEGIN { printf "- keep-alive throughput over TLS: %.0f %% of plain HTTP'"'"'s\n", 100 * t / p }'
  echo "- a connection's handshake, the server's whole process (callgrind, $hs_n and $((2 * hs_n)) sequential connections, each with one short request): full $(thou "$full_ir") instructions, resumed with a session ticket $(thou "$resumed_ir") ($resumed_seen resumed, as the server counted); wall clock: $full_rate full and $resumed_rate resumed handshakes per second, one client"
  awk -v t="$(tw tls 6)" -v p="$(tw plain 6)" -v c="$clients" 'BEGIN { printf "- RAM per TLS connection on the host: (anonymous RSS over HTTPS - over HTTP) / %d connections = %.0f KiB (Debian'"'"'s libmbedtls allocates 16 KiB input and 16 KiB output record buffers a connection with malloc, and the certificate, key and random generator once); on the board, from emcp'"'"'s static pool, [docs/http.md](../docs/http.md#tls-https-wss) gives the figures `device_stats` measures in QEMU\n", c, (t - p) / c }'
} | tee -a "$results/http.md"
