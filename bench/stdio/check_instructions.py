#!/usr/bin/env python3
"""bench_stdio_instructions: the host's instructions per tools/call, held to a ceiling.

Runs the stdio driver (bench/stdio/driver.cpp) against the server command after `--` under
callgrind, one call at a time (every call one read and one write: the count is the same on
every run, where pipelined calls batch as the pipe allows), N and 2N calls after the same
warm-up; (Ir(2N) - Ir(N)) / N cancels start-up and warm-up, as scripts/bench's figure does.
The count must not exceed the ceiling of image "emcp-sensors (Linux, stdio)" in
bench/target/ceilings.tsv (bench/target/ceilings.py: lowered as counts fall, never raised).

  check_instructions.py --driver emcp_stdio_bench [--n 200] [--ceilings [TSV]] -- SERVER ARGS...
"""
import argparse
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "target"))
import ceilings  # noqa: E402 (bench/target/ceilings.py)

IMAGE = "emcp-sensors (Linux, stdio)"
CASE = "tools/call echo, one at a time"


def total(driver, n, server, out):
    subprocess.run([driver, "--mode", "serial", "--requests", str(n), "--warmup", "50", "--", "valgrind",
                    "--tool=callgrind", f"--callgrind-out-file={out}", *server],
                   check=True, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    with open(out) as f:
        for line in f:
            if line.startswith("totals:"):
                return int(line.split()[1])
    raise RuntimeError(f"{out}: no totals line")


def main():
    argv = sys.argv[1:]
    if "--" not in argv:
        sys.exit("usage: check_instructions.py --driver DRIVER [--n N] [--ceilings [TSV]] -- SERVER ARGS...")
    cut = argv.index("--")
    ap = argparse.ArgumentParser()
    ap.add_argument("--driver", required=True)
    ap.add_argument("--n", type=int, default=200)
    ap.add_argument("--ceilings", nargs="?", const=ceilings.DEFAULT)
    a = ap.parse_args(argv[:cut])
    server = argv[cut + 1:]
    with tempfile.TemporaryDirectory() as tmp:
        first = total(a.driver, a.n, server, os.path.join(tmp, "n.cg"))
        second = total(a.driver, 2 * a.n, server, os.path.join(tmp, "2n.cg"))
    per_call = (second - first) // a.n
    print(f"image={IMAGE} case={CASE} insns={per_call} (Ir {first:,} for {a.n}, {second:,} for {2 * a.n})")
    if not a.ceilings:
        return 0
    over, notes = ceilings.check(a.ceilings, IMAGE, {CASE: per_call})
    for line in [f"note: {n}" for n in notes] + over:
        print(f"check_instructions: {line}", file=sys.stderr)
    return 1 if over else 0


if __name__ == "__main__":
    sys.exit(main())
