#!/usr/bin/env bash
# The target benchmark (scripts/bench runs it): the instructions each MCP request costs on the
# Cortex-M3 (mps2-an385), the Cortex-M0 (micro:bit) and RV32IMAC (hifive1) in QEMU, from its
# first byte to its answer's last, counted by a QEMU plugin of our own
# (bench/target/insn_plugin.c) in the bench firmware emcp-bench-calls (bench/target/calls.cpp:
# the sensors application behind the line transport); then where one request's instructions go
# on the Cortex-M3, by function; then what TLS costs the server there (bench/target/tls.cpp,
# guest_cases.py: handshakes and requests over TLS, with Mbed TLS's ECP options side by side),
# and what a request over lwIP costs it (bench/target/net.cpp: TCP's opening and closing too).
#   bench/target/run.sh BUILD_DIR RESULTS_DIR
# BUILD_DIR holds BOARD/bin/emcp-bench-calls-BOARD.elf for the three boards, and
# mps2-an385/bin/emcp-bench-tls{,-w2,-w6,-nonist}-mps2-an385.elf and emcp-bench-net-mps2-an385.elf.
# Writes target.md
# (the Markdown printed, which scripts/bench puts into bench/README.md) and target-BOARD.json.
set -euo pipefail
build=$1
results=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"
jsons=()
# board, QEMU machine (a request longer than the image's buffer is reported as not measured).
for spec in "mps2-an385 mps2-an385" "microbit microbit" "hifive1 sifive_e"; do
  set -- $spec
  echo "target: instructions per request on $1 in QEMU..." >&2
  # Each request three times in a run, the run twice: a count must be the same in both.
  python3 "$here/guest_calls.py" --elf "$build/$1/bin/emcp-bench-calls-$1.elf" --machine "$2" \
    --repeat 3 --runs 2 --json >"$results/target-$1.json"
  jsons+=("$results/target-$1.json")
done
{
  python3 "$here/guest_calls.py" --table "${jsons[@]}"
  echo
  # Where one request's instructions go (the plugin's per-block counts by function).
  python3 "$here/guest_calls.py" --elf "$build/mps2-an385/bin/emcp-bench-calls-mps2-an385.elf" --machine mps2-an385 \
    --repeat 5 --top 15 --markdown --profile "tools/call echo, 100 characters"
  echo
  # What TLS costs the server on the Cortex-M3, with Mbed TLS's ECP options side by side.
  echo "TLS on the Cortex-M3 (\`emcp-bench-tls\`, both ends in the image; the server's part counted):"
  echo
  tls=()
  for variant in "" -w2 -w6 -nonist; do tls+=(--elf "$build/mps2-an385/bin/emcp-bench-tls$variant-mps2-an385.elf"); done
  python3 "$here/guest_cases.py" "${tls[@]}" --runs 2 --json >"$results/target-tls.json"
  python3 "$here/guest_cases.py" --table "$results/target-tls.json"
  echo
  # What a request over lwIP costs the server (TCP's opening and closing beside).
  echo "HTTP over lwIP on the Cortex-M3 (\`emcp-bench-net\`, both ends in the board's lwIP; the server's part counted):"
  echo
  python3 "$here/guest_cases.py" --elf "$build/mps2-an385/bin/emcp-bench-net-mps2-an385.elf" --runs 2 --json \
    >"$results/target-net.json"
  python3 "$here/guest_cases.py" --table "$results/target-net.json"
} >"$results/target.md"
cat "$results/target.md"
