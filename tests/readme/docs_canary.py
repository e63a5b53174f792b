#!/usr/bin/env python3
"""Canaries of the documents' checks: a copy they must refuse, for its reason.

  docs_canary.py docs|layers|boards-preset|boards-folder

docs: check_docs.py on a small tree of its own: a README.md with a link to a file that does not
exist and one to a heading that does not exist, and a docs/status.md naming a test no
configuration pins (three tests run it, each wanting its own reason). layers: tools/layers.py
check on a copy of the checkout's sources and docs/architecture.md whose layers table lost a
row. boards-preset: check_boards.py on a copy of the files that name the boards where
CMakePresets.json alone has one more (a configure, build and test preset); boards-folder: where
boards/ alone has one more (a folder with a board.cmake). Each mode prints the check's output and passes its exit status on; run through
expect_failure.sh, which wants the failure and the reason.
"""
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))


def write(root, rel, text):
    path = os.path.join(root, rel)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as fh:
        fh.write(text)


def docs_tree(tmp):
    write(tmp, "README.md", "# Canary\n\n"
          "[a file that exists](docs/status.md) and [one that does not](docs/missing.md)\n\n"
          "[a heading that exists](docs/status.md#a-feature), [one that does not](docs/status.md#no-such-heading)\n")
    write(tmp, "docs/status.md", "# Status\n\n## A feature\n\n**Tests:** `real_test`, `no_such_test`\n")
    write(tmp, "tests/expected/native.txt", "# pinned\nreal_test\n")
    return [sys.executable, os.path.join(HERE, "check_docs.py"), "--root", tmp]


def layers_tree(tmp):
    for d in ("core", "ports", os.path.join("boards", "common")):
        shutil.copytree(os.path.join(ROOT, d), os.path.join(tmp, d),
                        ignore=shutil.ignore_patterns("*.md", "config", "test", "tests"))
    with open(os.path.join(ROOT, "docs", "architecture.md"), encoding="utf-8") as fh:
        text = fh.read()
    text, n = re.subn(r"(?m)^\| `jsonrpc` \|.*\n", "", text)
    if n != 1:
        sys.exit("docs_canary: docs/architecture.md has no row for `jsonrpc` to drop")
    write(tmp, "docs/architecture.md", text)
    return [sys.executable, os.path.join(ROOT, "tools", "layers.py"), "check", "--root", tmp]


BOARD_FILES = ["CMakePresets.json", "scripts/test", "boards/README.md", "docs/footprint.md"]


def boards_tree(tmp, where):
    """A copy of every file check_boards.py reads, with a board added in one place only."""
    for rel in BOARD_FILES:
        with open(os.path.join(ROOT, rel), encoding="utf-8") as fh:
            write(tmp, rel, fh.read())
    for d in os.listdir(os.path.join(ROOT, "boards")):
        if os.path.isdir(os.path.join(ROOT, "boards", d)):
            os.makedirs(os.path.join(tmp, "boards", d), exist_ok=True)
            if os.path.isfile(os.path.join(ROOT, "boards", d, "board.cmake")):
                shutil.copy(os.path.join(ROOT, "boards", d, "board.cmake"), os.path.join(tmp, "boards", d))
    shutil.copytree(os.path.join(ROOT, "tests", "expected"), os.path.join(tmp, "tests", "expected"))
    if where == "preset":
        with open(os.path.join(tmp, "CMakePresets.json"), encoding="utf-8") as fh:
            presets = json.load(fh)
        presets["configurePresets"].append({"name": "canary-board", "cacheVariables": {"EMCP_BOARD": "canary-board"}})
        presets["buildPresets"].append({"name": "canary-board", "configurePreset": "canary-board"})
        presets["testPresets"].append({"name": "canary-board", "configurePreset": "canary-board"})
        write(tmp, "CMakePresets.json", json.dumps(presets, indent=2))
    else:
        write(tmp, "boards/canary-board/board.cmake", 'set(EMCP_BOARD_TITLE "a board in one place only")\n')
    return [sys.executable, os.path.join(HERE, "check_boards.py"), "--root", tmp]


def main():
    modes = ("docs", "layers", "boards-preset", "boards-folder")
    if len(sys.argv) != 2 or sys.argv[1] not in modes:
        print(__doc__.strip(), file=sys.stderr)
        return 2
    sys.dont_write_bytecode = True
    with tempfile.TemporaryDirectory() as tmp:
        if sys.argv[1].startswith("boards-"):
            cmd = boards_tree(tmp, sys.argv[1][len("boards-"):])
        else:
            cmd = layers_tree(tmp) if sys.argv[1] == "layers" else docs_tree(tmp)
        r = subprocess.run(cmd, capture_output=True, text=True)
    print(r.stdout + r.stderr, end="")
    return r.returncode


if __name__ == "__main__":
    sys.exit(main())
