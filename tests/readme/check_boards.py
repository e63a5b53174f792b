#!/usr/bin/env python3
"""The boards are one list: every place that names them names the same ones.

  check_boards.py --root CHECKOUT

The list is CMakePresets.json's configure presets that set EMCP_BOARD, in the file's order
(tools/footprint/boards.py; `tools/footprint.py boards` prints it, scripts/footprint builds it,
docs/footprint.md has a section per board in its order). Exits 1, naming each place, when a
board of the list lacks one of these, or one of these names a board the list does not have:
  - its configure preset named as the board, and its build and test presets;
  - boards/<board>/board.cmake with the board's EMCP_BOARD_TITLE (its docs/footprint.md
    heading); a folder of boards/ with a board.cmake is a board;
  - tests/expected/<board>.txt, the tests its configuration runs;
  - scripts/test's all_presets (every name there is a configure preset);
  - a row of boards/README.md's folder table;
  - its section of docs/footprint.md, in the list's order.
(docs_canary.py boards-preset and boards-folder: a board added in one place only is refused.)
"""
import argparse
import json
import os
import re
import sys


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8") as fh:
        return fh.read()


def check(root):
    problems = []
    presets = json.loads(read(root, "CMakePresets.json"))
    configure = presets.get("configurePresets", [])
    boards = [p["cacheVariables"]["EMCP_BOARD"] for p in configure
              if (p.get("cacheVariables") or {}).get("EMCP_BOARD")]
    if not boards:
        return ["CMakePresets.json: no configure preset sets EMCP_BOARD"], []
    names = [p["name"] for p in configure]
    for p in configure:
        board = (p.get("cacheVariables") or {}).get("EMCP_BOARD")
        if board and p["name"] != board:
            problems.append(f"CMakePresets.json: the configure preset {p['name']} builds {board}: "
                            "a board's preset is named as the board")
    for kind in ("buildPresets", "testPresets"):
        have = {p.get("configurePreset") for p in presets.get(kind, [])}
        problems += [f"CMakePresets.json: {b}: no entry in {kind}" for b in boards if b not in have]

    folders = sorted(d for d in os.listdir(os.path.join(root, "boards"))
                     if os.path.isfile(os.path.join(root, "boards", d, "board.cmake")))
    for b in boards:
        rel = f"boards/{b}/board.cmake"
        if b not in folders:
            problems.append(f"{b}: no {rel}")
        elif not re.search(r"^set\(EMCP_BOARD_TITLE\s+\"[^\"]+\"", read(root, rel), re.M):
            problems.append(f"{rel}: no EMCP_BOARD_TITLE (the board's heading in docs/footprint.md)")
        if not os.path.isfile(os.path.join(root, "tests", "expected", f"{b}.txt")):
            problems.append(f"{b}: no tests/expected/{b}.txt (the tests its configuration runs)")
    problems += [f"boards/{d}/board.cmake: {d} is no board of CMakePresets.json (a configure preset "
                 "setting EMCP_BOARD)" for d in folders if d not in boards]

    m = re.search(r"^all_presets=\(([^)]*)\)", read(root, "scripts/test"), re.M)
    if not m:
        problems.append("scripts/test: no all_presets=(...) line")
    else:
        listed = m.group(1).split()
        problems += [f"scripts/test: {b} is not in all_presets" for b in boards if b not in listed]
        problems += [f"scripts/test: all_presets names {p}, which is no configure preset of CMakePresets.json"
                     for p in listed if p not in names]

    rows = re.findall(r"^\| `([^`/]+)/` \|", read(root, "boards/README.md"), re.M)
    problems += [f"boards/README.md: no row for `{b}/` in its folder table" for b in boards if b not in rows]
    problems += [f"boards/README.md: the row `{r}/` is no folder of boards/" for r in rows
                 if not os.path.isdir(os.path.join(root, "boards", r))]

    sections = re.findall(r"^## ([^:\n]+):", read(root, "docs/footprint.md"), re.M)
    if sections != boards:
        problems.append("docs/footprint.md: its sections are those of " + (", ".join(sections) or "no board")
                        + "; the boards are, in this order, " + ", ".join(boards)
                        + " (scripts/footprint writes a section per board)")
    return problems, boards


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    problems, boards = check(args.root)
    for p in problems:
        print(p)
    if problems:
        print("BOARD LISTS DISAGREE: a board is added or removed in CMakePresets.json (the list) and every place above")
        return 1
    print(f"the boards, {', '.join(boards)}, are the same in every place that names them")
    return 0


if __name__ == "__main__":
    sys.exit(main())
