#!/usr/bin/env python3
"""Every C and C++ code block of the documents compiles.

  check_code_blocks.py --cxx CXX [-I DIR]... [--root REPO] [FILE.md...]

Finds each fenced block whose language is `cpp`, `c++` or `c` in README.md and docs/*.md (or
the FILEs given) and compiles it as C++17 with emcp's language rules and warnings as errors
(-fsyntax-only: templates are instantiated, nothing is linked), with the include folders given
(the core's, the posix port's, the board layer's, the Mbed TLS port's: tests/CMakeLists.txt).

A block that is a whole translation unit is compiled as it stands. A fragment says what it needs
in an HTML comment on the line just above its fence (invisible on GitHub):

  <!-- compile: wrap NAME -->

tests/readme/doc_blocks/NAME.cpp is then compiled with the block in place of its line
`// @BLOCK@`: the declarations the fragment uses come before it, checks on what it declares
after it. The block keeps its document's name and line numbers (#line), so the compiler's
errors point into the Markdown file.

Fails, naming FILE:LINE, for a block that does not compile, a `compile:` comment that is not
`wrap NAME` or stands above no C/C++ block, a wrapper that is missing or has no `// @BLOCK@`
line, and when the documents hold no block at all (nothing checked is no pass).
"""
import argparse
import concurrent.futures
import glob
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
WRAPPERS = os.path.join(HERE, "doc_blocks")
LANGS = {"cpp", "c++", "c"}
FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})\s*([A-Za-z0-9_+-]*)\s*$")
DIRECTIVE = re.compile(r"^\s*<!--\s*compile:(.*?)-->\s*$")
# emcp's application rules (cmake/EmcpFlags.cmake): no exceptions, no RTTI, its warnings as
# errors. A fragment may declare what the text goes on to use: unused variables are allowed.
FLAGS = ["-std=c++17", "-fsyntax-only", "-fno-exceptions", "-fno-rtti", "-Wall", "-Wextra",
         "-Wconversion", "-Wshadow", "-Wold-style-cast", "-Werror", "-Wno-unused-variable",
         "-Wno-unused-but-set-variable"]


class Block:
    def __init__(self, path, rel, fence_line, lang, lines, wrap):
        self.path, self.rel, self.fence_line, self.lang, self.lines, self.wrap = path, rel, fence_line, lang, lines, wrap

    @property
    def first_line(self):
        return self.fence_line + 1

    def where(self):
        return f"{self.rel}:{self.fence_line}"


def blocks(path, rel, problems):
    """The C/C++ blocks of one Markdown file; malformed compile comments go to `problems`."""
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    out = []
    i = 0
    pending = None  # (line number, directive text) of a compile comment waiting for its block
    while i < len(lines):
        d = DIRECTIVE.match(lines[i])
        if d:
            if pending:
                problems.append(f"{rel}:{pending[0]}: a `compile:` comment above no C/C++ block")
            pending = (i + 1, d.group(1).strip())
            i += 1
            continue
        m = FENCE.match(lines[i])
        if not m:
            if pending and lines[i].strip():
                problems.append(f"{rel}:{pending[0]}: a `compile:` comment must stand on the line just above its block")
                pending = None
            i += 1
            continue
        indent, fence, lang = m.group(1), m.group(2), m.group(3).lower()
        start = i
        body = []
        i += 1
        while i < len(lines):
            c = re.match(r"^\s*(`{3,}|~{3,})\s*$", lines[i])
            if c and c.group(1)[0] == fence[0] and len(c.group(1)) >= len(fence):
                break
            line = lines[i]
            body.append(line[len(indent):] if line.startswith(indent) else line.lstrip())
            i += 1
        else:
            problems.append(f"{rel}:{start + 1}: a code block that is never closed")
        i += 1
        wrap = None
        if pending:
            words = pending[1].split()
            if lang not in LANGS:
                problems.append(f"{rel}:{pending[0]}: a `compile:` comment above a ```{lang or '(no language)'} block")
            elif len(words) != 2 or words[0] != "wrap" or not re.fullmatch(r"[A-Za-z0-9_-]+", words[1]):
                problems.append(f"{rel}:{pending[0]}: `compile: {pending[1]}`: the one form is `compile: wrap NAME`")
            else:
                wrap = words[1]
            pending = None
        if lang in LANGS:
            out.append(Block(path, rel, start + 1, lang, body, wrap))
    if pending:
        problems.append(f"{rel}:{pending[0]}: a `compile:` comment above no C/C++ block")
    return out


def source(block):
    """The translation unit: the block alone, or inside its wrapper; #line keeps the document's
    name and line numbers for the block's lines."""
    text = f'#line {block.first_line} "{block.rel}"\n' + "\n".join(block.lines) + "\n"
    if block.wrap is None:
        return text, None
    wrapper = os.path.join(WRAPPERS, block.wrap + ".cpp")
    if not os.path.exists(wrapper):
        return None, f"{block.where()}: its wrapper {os.path.relpath(wrapper, DEFAULT_ROOT)} does not exist"
    with open(wrapper, encoding="utf-8") as fh:
        wlines = fh.read().split("\n")
    at = [n for n, l in enumerate(wlines) if l.strip() == "// @BLOCK@"]
    if len(at) != 1:
        return None, (f"{block.where()}: its wrapper {os.path.relpath(wrapper, DEFAULT_ROOT)} needs one "
                      f"`// @BLOCK@` line (has {len(at)})")
    n = at[0]
    before = f'#line 1 "{wrapper}"\n' + "\n".join(wlines[:n]) + "\n"
    after = f'#line {n + 2} "{wrapper}"\n' + "\n".join(wlines[n + 1:]) + "\n"
    return before + text + after, None


def compile_block(cxx, includes, block):
    text, error = source(block)
    if error:
        return block, False, error
    with tempfile.TemporaryDirectory() as tmp:
        cpp = os.path.join(tmp, "block.cpp")
        with open(cpp, "w", encoding="utf-8") as fh:
            fh.write(text)
        cmd = [cxx, *FLAGS, *[f"-I{d}" for d in includes], cpp]
        r = subprocess.run(cmd, capture_output=True, text=True)
    return block, r.returncode == 0, (r.stdout + r.stderr).strip()


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--cxx", required=True, help="the C++ compiler")
    ap.add_argument("-I", dest="includes", action="append", default=[], help="an include folder")
    ap.add_argument("--root", default=DEFAULT_ROOT)
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("files", nargs="*", help="Markdown files (default: README.md and docs/*.md of --root)")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    files = a.files or [os.path.join(root, "README.md")] + sorted(glob.glob(os.path.join(root, "docs", "*.md")))
    problems, found = [], []
    for f in files:
        path = os.path.abspath(f)
        rel = os.path.relpath(path, root) if path.startswith(root + os.sep) else f
        found += blocks(path, rel, problems)
    if not found:
        problems.append("no ```cpp, ```c++ or ```c block in " + ", ".join(files) + ": nothing was checked")
    with concurrent.futures.ThreadPoolExecutor(max_workers=max(1, a.jobs)) as pool:
        results = list(pool.map(lambda b: compile_block(a.cxx, a.includes, b), found))
    for block, ok, output in results:
        how = f"wrapped in tests/readme/doc_blocks/{block.wrap}.cpp" if block.wrap else "as it stands"
        if ok:
            print(f"ok: {block.where()}: ```{block.lang} block, {len(block.lines)} lines, {how}")
        else:
            problems.append(f"{block.where()}: this ```{block.lang} block does not compile ({how}):\n{output}")
    for p in problems:
        print(f"FAILED: {p}")
    if problems:
        print(f"check_code_blocks: {len(problems)} problem(s) in {len(found)} block(s)")
        return 1
    print(f"check_code_blocks: all {len(found)} C/C++ blocks of {len(files)} documents compile")
    return 0


if __name__ == "__main__":
    sys.exit(main())
