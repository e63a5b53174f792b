#!/usr/bin/env bash
# The target benchmark (scripts/bench runs it): the instructions each MCP request costs on the
# Cortex-M3 (mps2-an385 in QEMU), from its first byte to its answer's last, counted by a QEMU
# plugin of our own (bench/target/insn_plugin.c) in the bench firmware emcp-bench-calls
# (bench/target/calls.cpp: the sensors application behind the line transport).
#   bench/target/run.sh BOARD_BIN_DIR RESULTS_DIR
# BOARD_BIN_DIR holds emcp-bench-calls-mps2-an385.elf. Writes target.md (the Markdown printed,
# which scripts/bench puts into bench/README.md) and target.txt (one line per request).
set -euo pipefail
board_bin=$1
results=$2
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$results"
elf="$board_bin/emcp-bench-calls-mps2-an385.elf"
echo "target: instructions per request on mps2-an385 (Cortex-M3) in QEMU..." >&2
# Each request three times in a run, the run twice: a count must be the same in both.
python3 "$here/guest_calls.py" --elf "$elf" --machine mps2-an385 --repeat 3 --runs 2 >"$results/target.txt"
python3 "$here/guest_calls.py" --elf "$elf" --machine mps2-an385 --repeat 3 --runs 1 --markdown >"$results/target.md"
# Where one request's instructions go (the plugin's per-block counts by function).
echo >>"$results/target.md"
python3 "$here/guest_calls.py" --elf "$elf" --machine mps2-an385 --repeat 5 --top 15 --markdown \
  --profile "tools/call echo, 100 characters" >>"$results/target.md"
cat "$results/target.md"
