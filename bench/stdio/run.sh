#!/usr/bin/env bash
# The stdio benchmark (scripts/bench runs it): emcp-sensors, the official MCP TypeScript SDK
# server with an equivalent echo tool, and a responder that does no MCP work, side by side.
#   bench/stdio/run.sh BIN_DIR RESULTS_DIR
# BIN_DIR holds emcp-sensors, emcp_stdio_bench and emcp_null_responder.
set -euo pipefail
bin=$1
results=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"
drv="$bin/emcp_stdio_bench"
ts=(node "$here/../ts-server/server.mjs")
emcp=("$bin/emcp-sensors" --simulate)
null=("$bin/emcp_null_responder")

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

# Wall clock: pipelined and one at a time (each the best of 3 runs).
measure() {
  local name=$1 n=$2 serial_n=$3
  shift 3
  local best_p=0 best_s=0 line p50 p99 rss
  for _ in 1 2 3; do
    line=$("$drv" --mode pipelined --requests "$n" --warmup 500 -- "$@")
    local r; r=$(echo "$line" | field rps)
    if ((r > best_p)); then best_p=$r; rss=$(echo "$line" | field maxrss_kb); fi
    line=$("$drv" --mode serial --requests "$serial_n" --warmup 500 -- "$@")
    r=$(echo "$line" | field rps)
    if ((r > best_s)); then best_s=$r; p50=$(echo "$line" | field p50_us); p99=$(echo "$line" | field p99_us); fi
  done
  echo "$name $best_p $best_s $p50 $p99 $rss" >>"$results/stdio-wall.txt"
}

# Instructions per tools/call: callgrind over the whole server process, N and 2N pipelined
# calls after the same warm-up; (Ir(2N) - Ir(N)) / N cancels start-up and warm-up.
instructions() {
  local name=$1 n=$2 mode=$3
  shift 3
  local a b
  "$drv" --mode "$mode" --requests "$n" --warmup 50 -- valgrind --tool=callgrind \
    --callgrind-out-file="$results/$name.$mode.$n.cg" "$@" >/dev/null
  "$drv" --mode "$mode" --requests $((2 * n)) --warmup 50 -- valgrind --tool=callgrind \
    --callgrind-out-file="$results/$name.$mode.$((2 * n)).cg" "$@" >/dev/null
  a=$(awk '/^totals:/ {print $2}' "$results/$name.$mode.$n.cg")
  b=$(awk '/^totals:/ {print $2}' "$results/$name.$mode.$((2 * n)).cg")
  echo "$name $mode $(((b - a) / n))" >>"$results/stdio-ir.txt"
}

: >"$results/stdio-wall.txt"
: >"$results/stdio-ir.txt"
echo "stdio: wall clock..." >&2
measure emcp 20000 5000 "${emcp[@]}"
measure ts 5000 2000 "${ts[@]}"
measure null 20000 5000 "${null[@]}"
echo "stdio: callgrind (the TypeScript server takes about a minute)..." >&2
instructions emcp 1000 pipelined "${emcp[@]}" &
instructions null 1000 pipelined "${null[@]}" &
wait
instructions emcp 500 serial "${emcp[@]}" &
instructions ts 200 pipelined "${ts[@]}" &
wait

w() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$results/stdio-wall.txt"; }
ir() { awk -v n="$1" -v m="$2" '$1 == n && $2 == m { print $3 }' "$results/stdio-ir.txt"; }
row() {
  printf '| %s | %s | %s | %s | %s | %s MiB | %s |\n' "$1" "$(w "$2" 2)" "$(w "$2" 3)" "$(w "$2" 4)" "$(w "$2" 5)" \
    "$(awk -v k="$(w "$2" 6)" 'BEGIN { printf "%.1f", k / 1024 }')" "$(ir "$2" pipelined)"
}
{
  echo
  echo "## stdio: tools/call of an echo tool, $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)"
  echo
  echo "| server | pipelined req/s | one at a time req/s | p50 µs | p99 µs | peak RSS | instructions per tools/call |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  row "emcp-sensors (C++, emcp)" emcp
  row "official TypeScript SDK server (Node $(node --version))" ts
  row "null responder (no MCP work)" null
  echo
  awk -v e="$(w emcp 2)" -v t="$(w ts 2)" 'BEGIN { printf "- pipelined throughput, emcp / TypeScript SDK: **%.0fx** (goal: at least 10x)\n", e / t }'
  echo "- instructions per tools/call round trip, emcp: **$(ir emcp pipelined)** pipelined, **$(ir emcp serial)** one at a time (goal: at most 10,000)"
  echo "- one-at-a-time figures are bound by the pipe round trip (two context switches), which the null responder shows"
} | tee "$results/stdio.md"
