"""The instruction ceilings of the target benchmarks (bench/target/ceilings.tsv): the most
instructions each case of each bench image may take, enforced by the board tests
(bench_target_calls, bench_target_tls, bench_target_net run the scripts with --ceilings).
The counts are exact (QEMU's -icount, no host timing in them), so a case over its ceiling is
code that got slower, never a slow machine. A ceiling is the measured count with a margin of
CEILING_MARGIN for what moves counts without a change of the code measured (the image's layout:
the word-at-a-time memcpy takes other paths at other alignments); lowered as counts fall, never
raised (bench/README.md, section 6).

  ceilings.tsv: IMAGE <tab> CASE <tab> INSTRUCTIONS (comment lines start with #)
"""
import math
import os

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
