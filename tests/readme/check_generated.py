#!/usr/bin/env python3
"""The benchmark figures of the documents are written by scripts/bench, never typed by hand.

  check_generated.py [--root REPO]

scripts/bench (bench/report.py) writes every benchmark figure into regions marked
<!-- bench:begin NAME --> ... <!-- bench:end NAME --> (tools/docgen.py). This fails when

- a file's markers are malformed, unbalanced, nested or duplicated, or a file has a region
  bench/report.py does not write, or lacks one it writes (REGIONS there), or a Markdown file
  bench/report.py does not know has bench markers;
- a region lacks its stamp ("`scripts/bench` at commit HASH ... on YYYY-MM-DD"), or, for a
  region with wall-clock figures, the load average;
- a stamp says "(+ uncommitted changes)": its figures were measured on a tree that differs
  from its commit, so they belong to no commit (scripts/bench warns when it writes one);
- a figure of the benchmarks' kind stands outside the regions: requests or megabytes per second, instruction counts, instructions per byte, MiB
  in a sentence about RSS or resident memory, and ratios such as "62x" in the README, the sensors example's
  README, docs/concurrency.md and bench/README.md (a ratio after "goal", "target", "within", "at least" or "at
  most" is a goal, not a measurement); in bench/README.md also times (µs, ms, s, min),
  percentages, "N = 9,523", "high water 680", table cells that are only a figure, and numbers
  in code blocks (program output pasted by hand);
- any digit in the README's "Footprint and speed" section outside its bench and footprint
  regions.

It measures nothing (no timings in tests): it only makes a hand-typed figure hard to add by
mistake. Figures that are settings or goals are written without a unit of measurement, or in
the settings line scripts/bench writes.
"""
import argparse
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))

NUM = r"(?<![\w.,^])[~≈+±-]?\d[\d,]*(?:\.\d+)?(?:\s*[-–]\s*\d[\d,]*(?:\.\d+)?)?"
# In all three documents, outside the regions.
ANYWHERE = [
    ("a rate", NUM + r"\s*(?:k|K|M|thousand|million)?\s*(?:req(?:uests)?/s|requests? (?:per|a) second|"
     r"calls?/s|[KMG]B/s|[KMG]iB/s)"),
    ("an instruction count", NUM + r"\s*(?:k|M|thousand|million)?\s*(?:instructions|instr\b|instr/)"),
    ("a ratio", NUM + r"(?:x|×)(?![\w])"),  # 62x, 0.91x, 3-5x (not "8 x 96 B")
    ("a ratio", NUM + r"\s+times\s+(?:more|less|fewer|faster|slower|as)\b"),
]
# In bench/README.md only.
BENCH_ONLY = [
    ("a time", NUM + r"\s*(?:µs|us|ms|s|sec|seconds?|min|minutes?)(?![\w/])"),
    ("a size", NUM + r"\s*(?:MiB|GiB|MB|GB)(?![\w/])"),
    ("a percentage", NUM + r"\s*%"),
    ("a run count", r"\bN\s*=\s*\d"),
    ("an arena figure", r"high[ -]water(?: mark)?\s+(?:of\s+)?\d"),
    # A table cell that is only a figure (| 583 |, | 1.1 MiB |): a results table typed by hand.
    ("a figure in a table", r"(?m)(?<=\|)[ \t]*[~≈]?\d[\d,]*(?:\.\d+)?[ \t]*(?:[^\s|]{1,5})?[ \t]*(?=\|)"),
]
# The README's section of figures: nothing in it but what scripts/bench and scripts/footprint write.
README_FIGURES = "## Footprint and speed"
GOAL = re.compile(r"(?:goal|target|within|at least|at most|up to)\W{0,3}$", re.I)
RSS = re.compile(r"\bRSS\b|resident", re.I)
SIZE = re.compile(NUM + r"\s*(?:[KMG]iB|[KMG]B)\b")


def load():
    """tools/docgen.py and bench/report.py of this checkout (the documents may be elsewhere)."""
    sys.dont_write_bytecode = True  # no __pycache__ in the checkout
    sys.path.insert(0, os.path.join(DEFAULT_ROOT, "tools"))
    sys.path.insert(0, os.path.join(DEFAULT_ROOT, "bench"))
    import docgen
    import report
    return docgen, report


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def section(text, heading):
    """(start, end) of a '## ' section, heading included; None when there is none."""
    m = re.search(r"^" + re.escape(heading) + r"[ \t]*$", text, re.M)
    if not m:
        return None
    n = re.search(r"^## ", text[m.end():], re.M)
    return m.start(), (m.end() + n.start()) if n else len(text)


def strip_code(text):
    """Inline code and links' targets blanked (keeping offsets): `1.2.3` or (docs/x.md#a-1)
    are not figures."""
    text = re.sub(r"`[^`\n]*`", lambda m: " " * len(m.group(0)), text)
    return re.sub(r"\]\([^)\s]*\)", lambda m: "]" + " " * (len(m.group(0)) - 1), text)


def figures(text, patterns):
    for what, pat in patterns:
        for m in re.finditer(pat, text):
            before = text[max(0, m.start() - 20):m.start()]
            if what == "a ratio" and GOAL.search(before):
                continue
            yield m.start(), what, m.group(0).strip()


def check(root):
    docgen, report = load()
    problems = []
    for rel, names in report.REGIONS.items():
        path = os.path.join(root, rel)
        try:
            with open(path, encoding="utf-8") as fh:
                text = fh.read()
        except OSError as e:
            problems.append(f"{rel}: {e}")
            continue
        try:
            regions = docgen.regions(text, report.PREFIX, rel)
        except docgen.RegionError as e:
            problems.append(str(e))
            continue
        have = [r.name for r in regions]
        for name in sorted(set(names) - set(have)):
            problems.append(f"{rel}: no region {name!r} (<!-- bench:begin {name} --> ... "
                            f"<!-- bench:end {name} -->): bench/report.py writes it")
        for name in sorted(set(have) - set(names)):
            problems.append(f"{rel}: region {name!r} is written by nothing (not in REGIONS of bench/report.py)")
        for r in regions:
            content = text[r.start:r.end]
            if not re.search(report.STAMP_RE, content):
                problems.append(f"{rel}:{r.line}: region {r.name!r} lacks its stamp "
                                f"(\"`scripts/bench` at commit HASH ... on YYYY-MM-DD\"): run scripts/bench")
            for m in re.finditer(report.STAMP_COMMIT_RE, content):
                if m.group(2):
                    problems.append(
                        f"{rel}:{line_of(text, r.start + m.start())}: region {r.name!r} is stamped "
                        f"\"commit {m.group(1)} {report.DIRTY}\": measured on a tree that differed from "
                        f"its commit, its figures belong to no commit; commit, then rerun scripts/bench "
                        f"on the clean tree (it writes a clean stamp)")
            if (rel, r.name) in report.WALL_CLOCK and not re.search(report.LOAD_RE, content):
                problems.append(f"{rel}:{r.line}: region {r.name!r} has wall-clock figures but does "
                                f"not say the load average: run scripts/bench")

        out = strip_code(docgen.outside(text, report.PREFIX, rel))
        hits = list(figures(out, ANYWHERE))
        if rel == "bench/README.md":
            hits += figures(out, BENCH_ONLY)
            # Program output pasted into a code block: any number of 3 digits or with a fraction.
            for block in re.finditer(r"(?ms)^```.*?^```", out):
                for m in re.finditer(r"(?<![\w.])\d[\d,]{2,}(?:\.\d+)?|(?<![\w.])\d+\.\d+", block.group(0)):
                    hits.append((block.start() + m.start(), "a figure in a code block", m.group(0)))
        if rel == "README.md":
            # The README's figures section: every figure in it is generated (the speed region
            # here, the footprint regions by tools/footprint.py, checked by the boards' builds).
            figs = strip_code(docgen.outside(docgen.outside(text, report.PREFIX, rel), "footprint", rel))
            sec = section(figs, README_FIGURES)
            if sec is None:
                problems.append(f"README.md: no '{README_FIGURES}' section (its speed figures are the region 'speed')")
            else:
                for m in re.finditer(r"\d[\d,.]*", figs[sec[0]:sec[1]]):
                    problems.append(f"README.md:{line_of(figs, sec[0] + m.start())}: a figure in the "
                                    f"{README_FIGURES[3:]!r} section outside the generated regions: "
                                    f"{m.group(0)!r} (scripts/bench and scripts/footprint write them)")
        # A size in a sentence that speaks of RSS or resident memory.
        for para in re.finditer(r"(?:[^\n.]|\.(?!\s)|\n(?!\s*\n))+", out):
            if RSS.search(para.group(0)):
                for m in SIZE.finditer(para.group(0)):
                    hits.append((para.start() + m.start(), "a resident-memory figure", m.group(0)))
        seen = set()
        for pos, what, fig in sorted(hits):
            if pos in seen:
                continue
            seen.add(pos)
            problems.append(f"{rel}:{line_of(out, pos)}: {what} outside the bench regions: {fig!r} "
                            f"(scripts/bench writes these figures; put it in a region or drop the number)")

    # bench markers in a Markdown file bench/report.py does not write.
    for d, dirs, files in os.walk(root):
        dirs[:] = [x for x in dirs if x not in (".git", "build", "node_modules", ".cache")]
        for f in files:
            if not f.endswith(".md"):
                continue
            rel = os.path.relpath(os.path.join(d, f), root)
            if rel in report.REGIONS:
                continue
            with open(os.path.join(d, f), encoding="utf-8", errors="replace") as fh:
                if re.search(r"<!--\s*bench:", fh.read()):
                    problems.append(f"{rel}: has bench markers, but bench/report.py writes no region there")
    return problems


def main():
    ap = argparse.ArgumentParser(description="The documents' benchmark figures are generated.")
    ap.add_argument("--root", default=DEFAULT_ROOT, help="where the documents are (default: this checkout)")
    a = ap.parse_args()
    problems = check(os.path.abspath(a.root))
    for p in problems:
        print(p)
    if problems:
        print(f"check_generated: {len(problems)} problem(s)")
        return 1
    print("check_generated: the bench regions are well formed and stamped, and no bench figure is typed outside them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
