#!/usr/bin/env python3
"""Compares what one ctest run did (its JUnit report, `ctest --output-junit`) with the pinned
list of tests that configuration registers in a full run (tests/expected/<preset>.txt, one name
a line, `#` comments). Fails when a pinned test is not in the run (not registered: a tool or a
group went missing), did not run or was skipped, or when the run has a test the list does not
name (a new test must be pinned, so that losing it later is noticed).

  check_test_list.py JUNIT.xml EXPECTED.txt            check
  check_test_list.py JUNIT.xml EXPECTED.txt --update   rewrite EXPECTED.txt from a passing run
"""
import os
import re
import sys
import xml.etree.ElementTree as ET


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
    names = []
    if not os.path.exists(path):
        return names
    with open(path, encoding="utf-8") as fh:
        for line in fh:
            line = line.split("#", 1)[0].strip()
            if line:
                names.append(line)
    return names


def main(argv):
    if len(argv) not in (3, 4) or (len(argv) == 4 and argv[3] != "--update"):
        print(__doc__, file=sys.stderr)
        return 2
    run = read_run(argv[1])
    if argv[3:] == ["--update"]:
        bad = sorted(n for n, v in run.items() if v != "passed")
        if bad or not run:
            print(f"not updating {argv[2]}: the run did not pass ({', '.join(bad) or 'no tests'})")
            return 1
        with open(argv[2], "w", encoding="utf-8") as fh:
            fh.write("# Tests this configuration registers and runs in a full run (scripts/test checks the\n"
                     "# run against it). Rewritten by EMCP_UPDATE_TEST_LISTS=1 scripts/test PRESET.\n")
            for name in sorted(run):
                fh.write(name + "\n")
        print(f"{argv[2]}: {len(run)} tests pinned")
        return 0
    pinned = read_list(argv[2])
    problems = []
    if not pinned:
        problems.append(f"{argv[2]} pins no tests")
    for name in pinned:
        verdict = run.get(name)
        if verdict is None:
            problems.append(f"{name}: pinned but not in this run (not registered: a missing tool, "
                            f"option or group?)")
        elif verdict in ("skipped", "not run"):
            problems.append(f"{name}: {verdict}")
    for name in sorted(set(run) - set(pinned)):
        problems.append(f"{name}: ran but is not pinned in {argv[2]} (a new test? add its name there)")
    for p in problems:
        print("test list: " + p)
    ran = sum(1 for n in pinned if run.get(n) in ("passed", "failed"))
    print(f"test list: {ran} of {len(pinned)} pinned tests ran ({len(run)} in the run)"
          + ("" if not problems else f"; {len(problems)} problem(s)"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
