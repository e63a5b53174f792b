#!/usr/bin/env bash
# The HTTP benchmark (scripts/bench runs it): emcp-sensors --http, the official MCP TypeScript
# SDK server (StreamableHTTPServerTransport) with an equivalent echo tool, and an HTTP responder
# that does no MCP work, side by side, each on its own loopback port.
#   bench/http/run.sh BIN_DIR RESULTS_DIR
# BIN_DIR holds emcp-sensors, emcp_http_bench and emcp_http_null_responder.
set -euo pipefail
bin=$1
results=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"
drv="$bin/emcp_http_bench"
clients=${EMCP_BENCH_HTTP_CLIENTS:-8}
base=${EMCP_BENCH_HTTP_PORT:-18700}

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

# measure NAME PORT REQUESTS DRIVER_FLAGS -- SERVER COMMAND...: starts the server, waits for
# its port, runs the driver 3 times (best throughput counts), reads the server's peak RSS, stops it.
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
  for _ in 1 2 3; do
    # shellcheck disable=SC2086
    line=$("$drv" --port "$port" --connections "$clients" --requests "$n" --warmup 500 $flags)
    r=$(echo "$line" | field rps)
    if ((r > best)); then best=$r; p50=$(echo "$line" | field p50_us); p99=$(echo "$line" | field p99_us); fi
  done
  local rss
  rss=$(awk '/^VmHWM:/ { print $2 }' "/proc/$pid/status" 2>/dev/null || echo 0)
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  echo "$name $best $p50 $p99 $rss" >>"$results/http.txt"
}

: >"$results/http.txt"
echo "http: $clients clients..." >&2
measure emcp $base 40000 "" -- "$bin/emcp-sensors" --simulate --http "$base"
measure ts $((base + 1)) 4000 "" -- node "$here/../ts-server/http-server.mjs" $((base + 1))
measure null $((base + 2)) 60000 "--raw" -- "$bin/emcp_http_null_responder" $((base + 2))

w() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$results/http.txt"; }
row() {
  printf '| %s | %s | %s | %s | %s MiB |\n' "$1" "$(w "$2" 2)" "$(w "$2" 3)" "$(w "$2" 4)" \
    "$(awk -v k="$(w "$2" 5)" 'BEGIN { printf "%.1f", k / 1024 }')"
}
{
  echo
  echo "## HTTP: tools/call of an echo tool, $clients keep-alive clients (one session each), $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| server | req/s | p50 µs | p99 µs | peak RSS |"
  echo "|---|---:|---:|---:|---:|"
  row "emcp-sensors --http (C++, emcp)" emcp
  row "official TypeScript SDK, StreamableHTTPServerTransport (Node $(node --version))" ts
  row "HTTP responder doing no MCP work" null
  echo
  awk -v e="$(w emcp 2)" -v t="$(w ts 2)" 'BEGIN { printf "- throughput, emcp / TypeScript SDK: **%.0fx** (goal: at least 15x)\n", e / t }'
} | tee "$results/http.md"
