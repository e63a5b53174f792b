#!/usr/bin/env python3
"""The README's server listing must be the program that is built and tested.

check_snippet.py README.md HEADING SOURCE: the first ```cpp block after the line starting with
HEADING equals SOURCE, comment-only and blank lines aside."""
import sys


def lines(text):
    return [l.rstrip() for l in text.splitlines() if l.strip() and not l.strip().startswith("//")]


def main():
    readme, heading, source = sys.argv[1:4]
    text = open(readme, encoding="utf-8").read()
    start = text.find("\n" + heading)
    if start < 0:
        sys.exit(f"{readme}: no heading {heading!r}")
    begin = text.find("```cpp\n", start)
    end = text.find("```", begin + 7)
    if begin < 0 or end < 0:
        sys.exit(f"{readme}: no cpp block after {heading!r}")
    snippet = lines(text[begin + 7:end])
    program = lines(open(source, encoding="utf-8").read())
    if snippet != program:
        import difflib
        print("\n".join(difflib.unified_diff(program, snippet, source, readme, lineterm="")))
        sys.exit(f"{readme}: the listing under {heading!r} differs from {source}")
    print(f"{readme}: the listing under {heading!r} is {source} ({len(program)} lines)")


if __name__ == "__main__":
    main()
