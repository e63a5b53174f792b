#!/usr/bin/env python3
"""The README's board example, as a user would take it: board_example.py README.md DIR writes
the first ```cpp block under "## A tool on a board" to DIR/<file> (the file the ```cmake block's
emcp_add_firmware() names) and the first ```cmake block to DIR/CMakeLists.txt, and checks the
line count the section states ("N lines") against the listing. DIR must be empty or new."""
import os
import re
import sys

HEADING = "## A tool on a board"


def block(text, lang, start):
    begin = text.find(f"```{lang}\n", start)
    end = text.find("```", begin + len(lang) + 4)
    if begin < 0 or end < 0:
        sys.exit(f"board_example: no ```{lang} block under {HEADING!r}")
    return text[begin + len(lang) + 4:end]


def main():
    readme, out = sys.argv[1:3]
    text = open(readme, encoding="utf-8").read()
    start = text.find("\n" + HEADING + "\n")
    if start < 0:
        sys.exit(f"board_example: {readme} has no heading {HEADING!r}")
    stop = text.find("\n## ", start + 1)
    section = text[start:stop if stop > 0 else len(text)]
    cpp, cmake = block(section, "cpp", 0), block(section, "cmake", 0)
    m = re.search(r"\bemcp_add_firmware\((\S+) (\S+)\)", cmake)
    if not m:
        sys.exit("board_example: the cmake block calls no emcp_add_firmware(TARGET SOURCE)")
    stated = re.search(r"\b(\d+) lines\b", section)
    lines = cpp.count("\n")
    if not stated or int(stated.group(1)) != lines:
        sys.exit(f"board_example: the section says {stated.group(0) if stated else 'no line count'}; "
                 f"its listing has {lines} lines")
    os.makedirs(out, exist_ok=True)
    if os.listdir(out):
        sys.exit(f"board_example: {out} is not empty")
    with open(os.path.join(out, m.group(2)), "w", encoding="utf-8") as fh:
        fh.write(cpp)
    with open(os.path.join(out, "CMakeLists.txt"), "w", encoding="utf-8") as fh:
        fh.write(cmake)
    print(f"board_example: {m.group(2)} ({lines} lines) and CMakeLists.txt (target {m.group(1)}) in {out}")
    print(m.group(1))


if __name__ == "__main__":
    main()
