"""The instruction ceilings of the benchmarks (bench/target/ceilings.tsv): the most instructions
each case of each bench image may take, enforced by the board tests (bench_target_calls,
bench_target_tls, bench_target_net run the scripts with --ceilings), and the host's per
tools/call on stdio (bench_stdio_instructions, bench/stdio/check_instructions.py: callgrind).
The counts are exact (QEMU's -icount, no host timing in them), so a case over its ceiling is
code that got slower, never a slow machine. A ceiling is the measured count with a margin of
CEILING_MARGIN for what moves counts without a change of the code measured (the image's layout:
the word-at-a-time memcpy takes other paths at other alignments); lowered as counts fall, never
raised (bench/README.md, section 6).

  ceilings.tsv: IMAGE <tab> CASE <tab> INSTRUCTIONS (comment lines start with #)

Rewritten from scripts/bench's results (lowering only):
  python3 bench/target/ceilings.py --calls build/bench/results/target-{mps2-an385,microbit,hifive1}.json \
      --cases build/bench/results/target-{tls,net}.json \
      --images emcp-bench-calls-{mps2-an385,microbit,hifive1} emcp-bench-{tls,net}-mps2-an385
"""
import json
import math
import os
import sys

CEILING_MARGIN = 0.03
DEFAULT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "ceilings.tsv")


def ceiling_for(count):
    """The ceiling written for a measured count: the margin added, rounded up to three
    significant digits (to hundreds below 100,000)."""
    step = 10 ** max(2, int(math.log10(max(count, 1))) - 2)
    return int(math.ceil(count * (1 + CEILING_MARGIN) / step) * step)


def load(path):
    table = {}
    with open(path) as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            image, case, limit = line.split("\t")
            table[(image, case)] = int(limit)
    return table


def check(path, image, counts):
    """Errors (strings) for the cases of `image` ({case: highest count}) over their ceiling or
    without one; notes for ceilings that could come down (the count below twice its margin)."""
    table = load(path)
    errors, notes = [], []
    for case, n in counts.items():
        limit = table.get((image, case))
        if limit is None:
            errors.append(f"{image}: {case}: {n:,} instructions, and no ceiling in {os.path.basename(path)} "
                          f"(add: {image}\\t{case}\\t{ceiling_for(n)})")
        elif n > limit:
            errors.append(f"{image}: {case}: {n:,} instructions, over its ceiling of {limit:,} "
                          f"({os.path.basename(path)}: ceilings are never raised; find what got slower)")
        elif n * (1 + 2 * CEILING_MARGIN) < limit:  # (a range's top differs a little with the repeats)
            notes.append(f"{image}: {case}: {n:,} instructions; its ceiling {limit:,} can come down to {ceiling_for(n):,}")
    for (im, case), _ in table.items():
        if im == image and case not in counts:
            errors.append(f"{image}: {case}: has a ceiling but was not measured")
    return errors, notes


def write(path, calls_jsons, cases_jsons, images):
    """Rewrites `path` from bench results: guest_calls.py --json outputs (one per board: image
    emcp-bench-calls-BOARD, by its machine) and guest_cases.py --json outputs, for the images
    named in `images` (the ones a test checks). A ceiling only comes down: where the new count's
    ceiling is above the old one, the old one stays (and the test will say the count is over)."""
    old = load(path) if os.path.exists(path) else {}
    boards = {"mps2-an385": "mps2-an385", "microbit": "microbit", "sifive_e": "hifive1"}
    rows = []
    for p in calls_jsons:
        with open(p) as f:
            d = json.load(f)
        image = f"emcp-bench-calls-{boards[d['machine']]}"
        rows += [(image, name, hi) for name, _, hi, *_ in d["rows"]]
    for p in cases_jsons:
        with open(p) as f:
            rows += [(im["image"], c[0], c[1]) for im in json.load(f) for c in im["cases"]]
    lines = [line.rstrip("\n") for line in open(path) if line.startswith("#")] if os.path.exists(path) else []
    # The ceilings of images these results do not cover stay as they are (the host's line).
    kept = [f"{image}\t{case}\t{limit}" for (image, case), limit in old.items() if image not in images]
    for image, case, n in rows:
        if image not in images:
            continue
        limit = ceiling_for(n)
        if (image, case) in old and old[(image, case)] < limit:
            print(f"ceilings: {image}: {case}: {n:,} instructions would make its ceiling {limit:,}, above the "
                  f"{old[(image, case)]:,} it has: kept", file=sys.stderr)
            limit = old[(image, case)]
        kept.append(f"{image}\t{case}\t{limit}")
    with open(path, "w") as f:
        f.write("\n".join(lines + kept) + "\n")


if __name__ == "__main__":
    import argparse
    ap = argparse.ArgumentParser(description="Rewrites ceilings.tsv from scripts/bench's results "
                                             "(build/bench/results/target-*.json).")
    ap.add_argument("--calls", nargs="+", required=True, help="guest_calls.py --json outputs")
    ap.add_argument("--cases", nargs="+", required=True, help="guest_cases.py --json outputs")
    ap.add_argument("--images", nargs="+", required=True, help="the images whose ceilings a test checks")
    ap.add_argument("--out", default=DEFAULT)
    a = ap.parse_args()
    write(a.out, a.calls, a.cases, set(a.images))
