#!/usr/bin/env bash
# The RTOS benchmark (scripts/bench runs it): how long a post to the server's inbox from another
# thread, task or interrupt takes to leave the owner as the first byte of its notification, on
# Linux (emcp_inbox_latency, beside two hand-offs without emcp) and under FreeRTOS in QEMU
# (emcp-inbox-latency-rtos, bench/rtos/guest_latency.py); then requests per second over lwIP on
# the sensors network image under FreeRTOS (lwIP in its own thread) beside the bare-metal one.
#   bench/rtos/run.sh BIN_DIR BOARD_BIN_DIR RESULTS_DIR
# BIN_DIR holds emcp_inbox_latency and emcp_http_bench (the bench preset); BOARD_BIN_DIR the
# mps2-an385 images emcp-inbox-latency-rtos, emcp-sensors-net and emcp-sensors-net-rtos. Writes
# rtos.md (the Markdown printed, which scripts/bench puts into bench/README.md), rtos-host.txt,
# rtos-guest.txt, rtos-net.txt and rtos-busy.txt (how busy the machine was: bench/lib.sh).
set -euo pipefail
bin=$1
board_bin=$2
results=$3
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
. "$here/../lib.sh"
mkdir -p "$results"
port=${EMCP_BENCH_RTOS_PORT:-18720}

field() { sed -n "s/.*\b$1=\([^ ]*\).*/\1/p"; }

# Linux: posts per run, the gap between posts, runs per mode (the quietest counts).
posts=5000 gap_us=200 runs=3
# QEMU: posts per source; the second run's -icount shift (virtual time 2^shift ns per guest
# instruction: 64 ns, so that one count of the 25 MHz timer, 40 ns, is 0.625 instructions).
guest_posts=1000 icount_shift=6
# lwIP: requests per run after the warm-up, runs per image and client count (the best counts);
# clients 1 and 2 (the images have 2 session slots, and each client holds a session).
net_requests=2000 net_warmup=200 net_runs=3

busy_start
echo "rtos: the inbox's latency on Linux ($runs runs of $posts posts per mode)..." >&2
"$bin/emcp_inbox_latency" --posts $posts --gap-us $gap_us --runs $runs >"$results/rtos-host.txt" 2>"$results/rtos-host.log" || {
  cat "$results/rtos-host.log" >&2
  echo "rtos: emcp_inbox_latency failed its checks" >&2
  exit 1
}
echo "rtos: the inbox's latency in QEMU (FreeRTOS on mps2-an385)..." >&2
latency_elf="$board_bin/emcp-inbox-latency-rtos-mps2-an385.elf"
python3 "$here/guest_latency.py" --elf "$latency_elf" --posts $guest_posts >"$results/rtos-guest.txt"
python3 "$here/guest_latency.py" --elf "$latency_elf" --posts $guest_posts --icount $icount_shift >>"$results/rtos-guest.txt"

# net IMAGE PORT: the image in QEMU behind scripts/run-board (the port forwarded to its port 80),
# emcp_http_bench against it, best of $net_runs for 1 and 2 clients; lines into rtos-net.txt.
net() {
  local image=$1 p=$2 fifo="$results/rtos-net-$1.stdin" pid line best r c p50 p99
  rm -f "$fifo"
  mkfifo "$fifo"
  # run-board ends with its input: the fifo stays open (fd 7) while the driver runs.
  "$root/scripts/run-board" mps2-an385 sensors-net --image "$board_bin/emcp-$image-mps2-an385.elf" --http "$p" \
    <"$fifo" >"$results/rtos-net-$image.uart" 2>"$results/rtos-net-$image.log" &
  pid=$!
  exec 7>"$fifo"
  rm -f "$fifo"
  for _ in $(seq 1 600); do
    grep -q "serving MCP on" "$results/rtos-net-$image.log" && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  if ! grep -q "serving MCP on" "$results/rtos-net-$image.log"; then
    cat "$results/rtos-net-$image.log" >&2
    exec 7>&-
    wait "$pid" || true
    echo "rtos: $image did not come up" >&2
    exit 1
  fi
  for c in 1 2; do
    best=0
    for _ in $(seq 1 $net_runs); do
      line=$("$bin/emcp_http_bench" --port "$p" --connections $c --requests $net_requests --warmup $net_warmup)
      r=$(echo "$line" | field rps)
      if ((r > best)); then best=$r; p50=$(echo "$line" | field p50_us); p99=$(echo "$line" | field p99_us); fi
    done
    echo "$image $c $best $p50 $p99" >>"$results/rtos-net.txt"
  done
  exec 7>&-  # the end of run-board's input: it stops QEMU
  wait "$pid"
}
: >"$results/rtos-net.txt"
echo "rtos: requests per second over lwIP in QEMU, bare metal and FreeRTOS..." >&2
net sensors-net "$port"
net sensors-net-rtos $((port + 1))
busy_end "$results/rtos-busy.txt"

# ---- The Markdown ---------------------------------------------------------------------------------
h() { awk -v m="$1" -v k="$2" '{ for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] } if (f["mode"] == m) print f[k] }' "$results/rtos-host.txt"; }
us() { awk -v n="$1" 'BEGIN { printf (n < 100000 ? "%.1f" : "%.0f"), n / 1000 }'; }
host_row() {
  printf '| %s | %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(us "$(h "$2" min_ns)")" "$(us "$(h "$2" p50_ns)")" "$(us "$(h "$2" p99_ns)")" \
    "$(us "$(h "$2" max_ns)")" "$(us "$(h "$2" read_p50_ns)")" "$(us "$(h "$2" read_p99_ns)")" "$(h "$2" refused)"
}
# The guest's lines: plain (QEMU's clock follows the host), then with -icount.
g() { awk -v s="$1" -v ic="$2" -v k="$3" '{ delete f; for (i = 1; i <= NF; i++) { split($i, kv, "="); f[kv[1]] = kv[2] }
      if (f["source"] == s && ((ic == "") == (f["icount"] == ""))) print f[k] }' "$results/rtos-guest.txt"; }
cyc_us() { awk -v n="$1" 'BEGIN { printf "%.1f", n / 25 }'; }            # 25 MHz counts -> µs
cyc_instr() { awk -v n="$1" -v s="$icount_shift" 'BEGIN { printf "%.0f", n * 40 / 2 ^ s }'; }  # -> instructions
guest_row() {
  printf '| %s | %s | %s | %s | %s | %s | %s |\n' "$1" "$(cyc_us "$(g "$2" "" p50)")" "$(cyc_us "$(g "$2" "" p99)")" \
    "$(cyc_us "$(g "$2" "" max)")" "$(cyc_instr "$(g "$2" 1 p50)")" "$(cyc_instr "$(g "$2" 1 p99)")" "$(cyc_instr "$(g "$2" 1 max)")"
}
n() { awk -v i="$1" -v c="$2" -v k="$3" '$1 == i && $2 == c { print $k }' "$results/rtos-net.txt"; }
net_row() {
  printf '| %s | %s | %s | %s | %s |\n' "$1" "$3" "$(n "$2" "$3" 3)" "$(n "$2" "$3" 4)" "$(n "$2" "$3" 5)"
}
thou() { echo "$1" | sed ':a; s/\([0-9]\)\([0-9]\{3\}\)\($\|,\)/\1,\2\3/; ta'; }
read -r others load1 load5 load15 _ <"$results/rtos-busy.txt"
cpt=$(awk -v c="$(g task "" cycles)" -v t="$(g task "" ticks)" 'BEGIN { printf "%.0f", c / t }')
{
  echo
  echo "## RTOS: a post to the inbox until its notification's first byte; lwIP under FreeRTOS; $(nproc) cores, load $load1 $load5 $load15, other processes $others cores"
  echo
  echo "**Linux**: a producer thread's post (\`Inbox::log\`) until the owner hands the notification's first byte to \`write(2)\`, and until the other end of the pipe has read it, µs:"
  echo
  echo "| hand-off | min | p50 | p99 | max | read p50 | read p99 | refused |"
  echo "|---|---:|---:|---:|---:|---:|---:|---:|"
  host_row "emcp, owner idle: \`posix::serve::stdio\` asleep in \`poll(2)\`, woken by the platform's eventfd" idle
  host_row "emcp, owner busy: the same while it answers pipelined \`tools/call\` echo requests ($(thou "$(h busy rps)") a second meanwhile)" busy
  host_row "peer without emcp: the same eventfd wake, an atomic counter, the same notification bytes written (the floor)" eventfd
  host_row "peer without emcp: \`std::deque\` under a \`std::mutex\`, \`std::condition_variable\`, the same bytes written" condvar
  echo
  echo "**QEMU** (mps2-an385, FreeRTOS, \`emcp-inbox-latency-rtos\`): a post until the owner task hands the notification's first byte to the UART; QEMU's own clock (it follows the host's time: QEMU figures, not a Cortex-M3's), µs, and with \`-icount shift=$icount_shift\` (QEMU's clock counts the guest's instructions), instructions:"
  echo
  echo "| post from | p50 µs | p99 µs | max µs | p50 instructions | p99 instructions | max instructions |"
  echo "|---|---:|---:|---:|---:|---:|---:|"
  guest_row "a task at priority 2, above the owner's 1 (as the sensors image's sensor task)" task
  guest_row "TIMER0's interrupt handler" isr
  echo
  echo "**lwIP in QEMU**: \`tools/call\` of the echo tool over Streamable HTTP, keep-alive, each client its own session (\`emcp_http_bench\`):"
  echo
  echo "| image | clients | req/s | p50 µs | p99 µs |"
  echo "|---|---:|---:|---:|---:|"
  net_row "\`emcp-sensors-net\`, bare metal: lwIP (\`NO_SYS\` 1) in the loop" sensors-net 1
  net_row "\`emcp-sensors-net-rtos\`, FreeRTOS: lwIP's \`tcpip_thread\`, the core lock" sensors-net-rtos 1
  net_row "\`emcp-sensors-net\`, bare metal" sensors-net 2
  net_row "\`emcp-sensors-net-rtos\`, FreeRTOS" sensors-net-rtos 2
  echo
  awk -v a="$(n sensors-net-rtos 1 3)" -v b="$(n sensors-net 1 3)" -v c="$(n sensors-net-rtos 2 3)" -v d="$(n sensors-net 2 3)" \
    'BEGIN { printf "- requests per second, FreeRTOS image / bare-metal image: %.2fx with one client, %.2fx with two\n", a / b, c / d }'
  awk -v i="$(h idle p50_ns)" -v e="$(h eventfd p50_ns)" -v c="$(h condvar p50_ns)" \
    -v im="$(h idle min_ns)" -v em="$(h eventfd min_ns)" \
    'BEGIN { printf "- Linux, owner idle: emcp / the eventfd floor %.2fx at the min, %.2fx at p50; emcp / the condition variable %.2fx at p50\n", im / em, i / e, i / c }'
  echo "- QEMU's clocks: TIMER1 (25 MHz, the AN385's CPU clock: one count a modelled CPU cycle) counted $(thou "$cpt") per kernel tick over the task run (the kernel's SysTick at 1 kHz; both on QEMU's virtual clock); one count is 40 ns of QEMU time, and under \`-icount shift=$icount_shift\` 0.625 instructions. QEMU does not model a Cortex-M3's cycles: on hardware the same path takes about as many cycles as instructions, more with flash wait states"
  echo "- settings (\`bench/rtos/run.sh\`): Linux $(thou $posts) posts per mode, one every $gap_us µs, the quietest (lowest p99) of $runs runs of each; QEMU $(thou $guest_posts) posts per source, at intervals of 0.5 to 1.5 ms (TIMER0); lwIP best of $net_runs runs of $(thou $net_requests) requests after $net_warmup warm-up requests"
} | tee "$results/rtos.md"
