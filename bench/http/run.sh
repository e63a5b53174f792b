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
# (VmHWM) and anonymous RSS (RssAnon, KiB), stops it.
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
  echo "$name $best $p50 $p99 $rss $anon" >>"$results/http.txt"
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
