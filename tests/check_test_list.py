#!/usr/bin/env python3
"""Compares what one ctest run did (its JUnit report, `ctest --output-junit`) with the pinned
list of tests that configuration registers in a full run (tests/expected/<preset>.txt, one name
a line, `#` comments). Fails when a pinned test is not in the run (not registered: a tool or a
group went missing), did not run or was skipped, or when the run has a test the list does not
name (a new test must be pinned, so that losing it later is noticed).

A Node test (node:test, registered with emcp_node_test: cmake/EmcpTools.cmake) also writes a TAP
report, NODE_REPORTS/<name>.tap, whose test points marked `# TODO` and `# SKIP` (tests and
suites, at any depth) are its todo and skipped subtests. Its line in the list pins their counts:
`name todo=N skip=M`. They may only go down:
a count above its pin fails, one below is reported (lower the pin: --update does); a Node test
without pinned counts, or without a report, fails.

  check_test_list.py JUNIT.xml EXPECTED.txt NODE_REPORTS            check
  check_test_list.py JUNIT.xml EXPECTED.txt NODE_REPORTS --update   rewrite EXPECTED.txt from a
      passing run (new tests with the run's counts; a count below its pin is lowered, one above
      it is refused: raise a pin only by hand, with the reason in the commit)
"""
import os
import re
import sys
import xml.etree.ElementTree as ET

COUNTS = ("todo", "skip")


def read_run(path):
    """{name: verdict} with verdict 'passed', 'failed', 'skipped' or 'not run'."""
    with open(path, "rb") as fh:
        text = fh.read().decode("utf-8", errors="replace")
    # A test's captured output may hold bytes XML 1.0 does not allow (a fuzzer's, say).
    text = re.sub("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff]", "?", text)
    root = ET.fromstring(text)
    cases = {}
    for case in root.iter("testcase"):
        name = case.get("name")
        status = case.get("status", "run")
        if case.find("failure") is not None or case.find("error") is not None or status == "fail":
            verdict = "failed"
        elif case.find("skipped") is not None or status in ("notrun", "disabled", "skipped"):
            verdict = "skipped" if status != "notrun" else "not run"
        else:
            verdict = "passed"
        cases[name] = verdict
    return cases


def read_list(path):
    """{name: {count: pinned}} in the list's order ({} for a test without pinned counts)."""
    pins = {}
    if not os.path.exists(path):
        return pins
    with open(path, encoding="utf-8") as fh:
        for number, line in enumerate(fh, 1):
            fields = line.split("#", 1)[0].split()
            if not fields:
                continue
            counts = {}
            for field in fields[1:]:
                m = re.fullmatch(r"(todo|skip)=(\d+)", field)
                if not m:
                    raise SystemExit(f"{path}:{number}: not a count (todo=N or skip=N): {field}")
                counts[m.group(1)] = int(m.group(2))
            if counts and set(counts) != set(COUNTS):
                raise SystemExit(f"{path}:{number}: a Node test pins both todo=N and skip=N")
            pins[fields[0]] = counts
    return pins


# A TAP test point with a directive: `ok 3 - name # SKIP reason`, at any depth (node writes a
# `#` of a test's name as `\#`).
DIRECTIVE = re.compile(r"\s*(?:not )?ok \d+ - (?:[^#\\]|\\.)*# (SKIP|TODO)\b")


def read_counts(reports, name):
    """The todo and skipped tests and suites of a Node test's TAP report ({count: n}), {} when it
    has no report, None when the report is cut short (no closing `# tests N` after its plan).
    Test points are counted, not node's closing counts, which leave skipped suites out."""
    path = os.path.join(reports, name + ".tap")
    if not os.path.exists(path):
        return {}
    with open(path, encoding="utf-8", errors="replace") as fh:
        lines = fh.read().splitlines()
    plans = [i for i, l in enumerate(lines) if re.fullmatch(r"1\.\.\d+", l)]
    if not plans or not any(re.fullmatch(r"# tests \d+", l) for l in lines[plans[-1]:]):
        return None
    counts = {c: 0 for c in COUNTS}
    for line in lines:
        m = DIRECTIVE.match(line)
        if m:
            counts["todo" if m.group(1) == "TODO" else "skip"] += 1
    return counts


def pin_text(name, counts):
    return name + "".join(f" {c}={counts[c]}" for c in COUNTS if counts)


def update(run, path, reports):
    bad = sorted(n for n, v in run.items() if v != "passed")
    if bad or not run:
        print(f"not updating {path}: the run did not pass ({', '.join(bad) or 'no tests'})")
        return 1
    pins = read_list(path)
    lines, refused = [], []
    for name in sorted(run):
        counts = read_counts(reports, name)
        if counts is None:
            refused.append(f"{name}: its report {os.path.join(reports, name + '.tap')} is cut short")
            continue
        old = pins.get(name, {})
        if old and not counts:
            refused.append(f"{name}: pinned with counts, but no Node test report")
        refused += [f"{name}: {c} {counts[c]} is above its pin {old[c]}" for c in COUNTS
                    if counts and old and counts[c] > old[c]]
        lines.append(pin_text(name, counts))
    if refused:
        print(f"not updating {path}: " + "; ".join(refused) + " (a pinned count only goes down: "
              "raise it by hand, with the reason in the commit)")
        return 1
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("# Tests this configuration registers and runs in a full run (scripts/test checks the\n"
                 "# run against it), a Node test with its todo and skipped subtests (they may only go\n"
                 "# down). Rewritten by EMCP_UPDATE_TEST_LISTS=1 scripts/test PRESET.\n")
        for line in lines:
            fh.write(line + "\n")
    print(f"{path}: {len(run)} tests pinned")
    return 0


def main(argv):
    if len(argv) not in (4, 5) or (len(argv) == 5 and argv[4] != "--update"):
        print(__doc__, file=sys.stderr)
        return 2
    run = read_run(argv[1])
    path, reports = argv[2], argv[3]
    if argv[4:] == ["--update"]:
        return update(run, path, reports)
    pins = read_list(path)
    problems, notes = [], []
    totals = {c: 0 for c in COUNTS}
    if not pins:
        problems.append(f"{path} pins no tests")
    for name, pinned in pins.items():
        verdict = run.get(name)
        if verdict is None:
            problems.append(f"{name}: pinned but not in this run (not registered: a missing tool, "
                            f"option or group?)")
            continue
        if verdict in ("skipped", "not run"):
            problems.append(f"{name}: {verdict}")
            continue
        counts = read_counts(reports, name)
        for c in COUNTS:
            totals[c] += (counts or {}).get(c, 0)
        if counts is None:
            problems.append(f"{name}: its Node test report ({name}.tap) is cut short (no plan and closing counts)")
        elif counts and not pinned:
            problems.append(f"{name}: a Node test without pinned counts: pin its line as "
                            f"'{pin_text(name, counts)}'")
        elif pinned and not counts:
            problems.append(f"{name}: pinned with todo/skip counts but wrote no Node test report "
                            f"({os.path.join(reports, name + '.tap')}): is it still run by emcp_node_test?")
        elif counts:
            for c in COUNTS:
                if counts[c] > pinned[c]:
                    problems.append(f"{name}: {counts[c]} {c} subtest(s), more than the {pinned[c]} pinned "
                                    f"(they may only go down)")
                elif counts[c] < pinned[c]:
                    notes.append(f"{name}: {counts[c]} {c} subtest(s), fewer than the {pinned[c]} pinned: "
                                 f"lower the pin in {path}")
    for name in sorted(set(run) - set(pins)):
        problems.append(f"{name}: ran but is not pinned in {path} (a new test? add its name there)")
    for p in problems:
        print("test list: " + p)
    for n in notes:
        print("test list (note): " + n)
    ran = sum(1 for n in pins if run.get(n) in ("passed", "failed"))
    print(f"test list: {ran} of {len(pins)} pinned tests ran ({len(run)} in the run; Node subtests: "
          f"{totals['todo']} todo, {totals['skip']} skipped)"
          + ("" if not problems else f"; {len(problems)} problem(s)")
          + ("" if not notes else f"; {len(notes)} pin(s) to lower"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
