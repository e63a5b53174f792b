#!/usr/bin/env bash
# The stdio benchmark (scripts/bench runs it): emcp-sensors, the official MCP TypeScript SDK
# server with an equivalent echo tool, and a responder that does no MCP work, side by side.
#   bench/stdio/run.sh BIN_DIR RESULTS_DIR
# BIN_DIR holds emcp-sensors, emcp_stdio_bench and emcp_null_responder. Writes stdio.md (the
# Markdown printed, which scripts/bench puts into bench/README.md), stdio-wall.txt, stdio-ir.txt
# and stdio-busy.txt (how busy the machine was during the wall-clock runs: bench/lib.sh).
set -euo pipefail
bin=$1
results=$2
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../lib.sh"
mkdir -p "$results"
drv="$bin/emcp_stdio_bench"
ts=(node "$here/../ts-server/server.mjs")
emcp=("$bin/emcp-sensors" --simulate)
null=("$bin/emcp_null_responder")

field() { sed -n "s/.*$1=\([^ ]*\).*/\1/p"; }

# Wall clock: pipelined and one at a time (each the best of $reps runs); the server's peak RSS
# and anonymous RSS (KiB) from the fastest pipelined run.
reps=3
warmup=500
n=20000 n_serial=5000          # calls per run (pipelined, one at a time)
n_ts=5000 n_ts_serial=2000     # the same for the TypeScript server (slower)
cg_n=1000 cg_serial=500 cg_ts=200  # callgrind's N (see instructions below)
measure() {
  local name=$1 n=$2 serial_n=$3
  shift 3
  local best_p=0 best_s=0 line p50 p99 rss anon
  for _ in $(seq 1 $reps); do
    line=$("$drv" --mode pipelined --requests "$n" --warmup $warmup -- "$@")
    local r; r=$(echo "$line" | field rps)
    if ((r > best_p)); then best_p=$r; rss=$(echo "$line" | field hwm_kb); anon=$(echo "$line" | field anon_kb); fi
    line=$("$drv" --mode serial --requests "$serial_n" --warmup $warmup -- "$@")
    r=$(echo "$line" | field rps)
    if ((r > best_s)); then best_s=$r; p50=$(echo "$line" | field p50_us); p99=$(echo "$line" | field p99_us); fi
  done
  echo "$name $best_p $best_s $p50 $p99 $rss $anon" >>"$results/stdio-wall.txt"
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
busy_start
measure emcp $n $n_serial "${emcp[@]}"
measure ts $n_ts $n_ts_serial "${ts[@]}"
measure null $n $n_serial "${null[@]}"
busy_end "$results/stdio-busy.txt"
echo "stdio: callgrind (the TypeScript server takes about a minute)..." >&2
instructions emcp $cg_n pipelined "${emcp[@]}" &
instructions null $cg_n pipelined "${null[@]}" &
wait
instructions emcp $cg_serial serial "${emcp[@]}" &
instructions ts $cg_ts pipelined "${ts[@]}" &
wait

w() { awk -v n="$1" -v c="$2" '$1 == n { print $c }' "$results/stdio-wall.txt"; }
ir() { awk -v n="$1" -v m="$2" '$1 == n && $2 == m { print $3 }' "$results/stdio-ir.txt"; }
mib() { awk -v k="$1" 'BEGIN { printf "%.1f MiB", k / 1024 }'; }
row() {
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(w "$2" 2)" "$(w "$2" 3)" "$(w "$2" 4)" "$(w "$2" 5)" \
    "$(mib "$(w "$2" 6)")" "$(mib "$(w "$2" 7)")" "$(ir "$2" pipelined)"
}
thou() { echo "$1" | sed ':a; s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.0f", a / b }'; }
read -r others load1 load5 load15 _ <"$results/stdio-busy.txt"
{
  echo
  echo "## stdio: tools/call of an echo tool, $(nproc) cores, load $load1 $load5 $load15, other processes $others cores"
  echo
  echo "| server | pipelined req/s | one at a time req/s | p50 µs | p99 µs | peak RSS | anonymous RSS | instructions per tools/call |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  row "emcp-sensors (C++, emcp)" emcp
  row "official TypeScript SDK server (Node $(node --version))" ts
  row "null responder (no MCP work)" null
  echo
  echo "- pipelined throughput, emcp / TypeScript SDK: **$(ratio "$(w emcp 2)" "$(w ts 2)")x** (goal: at least 10x);" \
    "one at a time: $(ratio "$(w emcp 3)" "$(w ts 3)")x, where every server waits for the pipe round trip (two context switches), as the null responder shows"
  echo "- instructions per tools/call round trip, emcp: **$(thou "$(ir emcp pipelined)")** pipelined, **$(thou "$(ir emcp serial)")** one at a time" \
    "(goal: at most 10,000); the TypeScript SDK server: $(thou "$(ir ts pipelined)"); the null responder, which parses nothing: $(thou "$(ir null pipelined)")," \
    "so emcp's MCP work (parsing, validating the arguments against the tool's schema, writing the answer) is $(thou $(($(ir emcp pipelined) - $(ir null pipelined))))"
  echo "- peak RSS, emcp / TypeScript SDK: $(mib "$(w emcp 6)") / $(mib "$(w ts 6)"); anonymous (stack, static data, heap, the libraries' written pages):" \
    "$(mib "$(w emcp 7)") / $(mib "$(w ts 7)"); the rest is mapped code and read-only data"
  echo "- settings (\`bench/stdio/run.sh\`): best of $reps runs after $warmup warm-up calls; pipelined N = $(thou $n) calls (the TypeScript server $(thou $n_ts))," \
    "one at a time $(thou $n_serial) ($(thou $n_ts_serial)); callgrind N = $(thou $cg_n) pipelined ($(thou $cg_serial) one at a time," \
    "$(thou $cg_ts) for the TypeScript server, whose JIT is then still warming up: more calls would lower its figure somewhat)"
} | tee "$results/stdio.md"
