#!/usr/bin/env python3
"""Prints the N slowest tests of a ctest JUnit report (scripts/test, after each configuration):
where a configuration's time goes, so that the full run's duration can be kept in hand."""
import sys
import xml.etree.ElementTree as ET


def main() -> int:
    if len(sys.argv) != 3:
        print("usage: slowest_tests.py REPORT.xml N", file=sys.stderr)
        return 2
    root = ET.parse(sys.argv[1]).getroot()
    cases = sorted(((float(c.get("time", 0)), c.get("name", "?")) for c in root.iter("testcase")),
                   reverse=True)
    total = sum(t for t, _ in cases)
    shown = ", ".join(f"{name} {t:.0f} s" for t, name in cases[: int(sys.argv[2])])
    print(f"slowest (of {total:.0f} s of tests in all): {shown}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
