#!/usr/bin/env python3
"""footprint_reads_only_the_constructors: tools/footprint/stack.py's reading of .init_array, on
built images. For each ELF given: exactly (end - start) / 4 words between __init_array_start__
and __init_array_end__, each the address of a function, each a static constructor (GCC names
them _GLOBAL__sub_I_..., or _sub_I_<priority>... after LTO). Exit status 1 otherwise."""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "tools"))
from footprint.elf import tool  # noqa: E402
from footprint.stack import init_array_functions, init_array_words  # noqa: E402


def bounds(elf):
    found = {}
    for line in subprocess.run([tool(elf, "nm"), elf], check=True, capture_output=True, text=True).stdout.splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in ("__init_array_start__", "__init_array_end__"):
            found[parts[2]] = int(parts[0], 16)
    return found["__init_array_start__"], found["__init_array_end__"]


def main():
    problems = []
    for elf in filter(None, sys.argv[1:]):  # (an image the board does not build: an empty argument)
        start, end = bounds(elf)
        words, at = init_array_words(elf)
        name = os.path.basename(elf)
        if len(words) != (end - start) // 4:
            problems.append(f"{name}: {len(words)} words read for {(end - start) // 4} constructors")
        for w in words:
            if (w & ~1) not in at:
                problems.append(f"{name}: {w:#x} is no function's address")
        for f in sorted(init_array_functions(elf)):
            if not re.match(r"^(_GLOBAL_)?_sub_I", f):
                problems.append(f"{name}: {f} is not a static constructor")
        print(f"{name}: {(end - start) // 4} constructors: {', '.join(sorted(init_array_functions(elf)))}")
    for p in problems:
        print("check_constructors: " + p, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
