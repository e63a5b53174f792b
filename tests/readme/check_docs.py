#!/usr/bin/env python3
"""The documents' links lead somewhere, and docs/status.md names tests that exist.

  check_docs.py [--root REPO]

Links: every relative link `[text](target)` of every Markdown file of the checkout (build
folders, node_modules and .git aside), outside code, must name a file or folder that exists,
and its `#anchor`, when it points into a Markdown file, one of that file's headings (GitHub's
anchors: lower case, punctuation dropped, spaces as hyphens, `-1`, `-2` for a heading's
repeats) or an `<a name>`/`id` of it. Links to the web (http:, https:, mailto:) are not
followed.

Tests: every `name` on a **Tests:** line of docs/status.md must be a test some configuration
runs, that is, a name of tests/expected/*.txt (`Suite.*` any test of that GoogleTest suite,
`prefix_*` any test of that prefix), and every section of docs/status.md must have such a line.

Fails naming FILE:LINE and what is wrong.
"""
import argparse
import fnmatch
import glob
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_ROOT = os.path.normpath(os.path.join(HERE, "..", ".."))
SKIP_DIRS = {".git", "build", "node_modules", ".cache", "__pycache__"}
LINK = re.compile(r"(?<!\!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
IMAGE = re.compile(r"!\[[^\]]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
FENCE = re.compile(r"^\s*(`{3,}|~{3,})")


def markdown_files(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS)
        for f in sorted(files):
            if f.endswith(".md"):
                yield os.path.join(d, f)


def prose_lines(text):
    """(line number, line) outside fenced code, inline code blanked."""
    fence = None
    for n, line in enumerate(text.split("\n"), 1):
        m = FENCE.match(line)
        if fence is None and m:
            fence = m.group(1)
            continue
        if fence is not None:
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not line.strip()[len(m.group(1)):].strip():
                fence = None
            continue
        yield n, re.sub(r"`[^`]*`", lambda c: " " * len(c.group(0)), line)


def slug(heading):
    """GitHub's anchor of a heading's text."""
    text = re.sub(r"<[^>]+>", "", heading)                    # HTML tags
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", text)    # links: their text
    text = text.replace("`", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)                      # punctuation (Unicode letters stay)
    return text.replace(" ", "-")


def anchors(path, cache={}):
    if path not in cache:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        found, seen = set(), {}
        fence = None
        for line in text.split("\n"):
            m = FENCE.match(line)
            if fence is None and m:
                fence = m.group(1)
                continue
            if fence is not None:
                if m and m.group(1)[0] == fence[0]:
                    fence = None
                continue
            h = re.match(r"^\s{0,3}#{1,6}\s+(.*?)\s*#*\s*$", line)
            if h:
                s = slug(h.group(1))
                k = seen.get(s, 0)
                seen[s] = k + 1
                found.add(s if k == 0 else f"{s}-{k}")
            for a in re.finditer(r"<a\s+(?:name|id)=\"([^\"]+)\"", line):
                found.add(a.group(1))
        cache[path] = found
    return cache[path]


def check_links(root):
    problems, count = [], 0
    for path in markdown_files(root):
        rel = os.path.relpath(path, root)
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for n, line in prose_lines(text):
            for m in list(LINK.finditer(line)) + list(IMAGE.finditer(line)):
                target = m.group(1)
                if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):
                    continue  # http:, https:, mailto:
                count += 1
                file_part, _, anchor = target.partition("#")
                dest = path if not file_part else os.path.normpath(os.path.join(os.path.dirname(path), file_part))
                if file_part.startswith("/"):
                    problems.append(f"{rel}:{n}: link {target!r}: an absolute path (GitHub resolves it elsewhere)")
                    continue
                if not os.path.exists(dest):
                    problems.append(f"{rel}:{n}: link {target!r}: no such file or folder "
                                    f"({os.path.relpath(dest, root)})")
                    continue
                if anchor and dest.endswith(".md") and os.path.isfile(dest) and anchor not in anchors(dest):
                    problems.append(f"{rel}:{n}: link {target!r}: {os.path.relpath(dest, root)} has no heading "
                                    f"whose anchor is #{anchor}")
    return problems, count


def pinned(root):
    names = set()
    for f in glob.glob(os.path.join(root, "tests", "expected", "*.txt")):
        with open(f, encoding="utf-8") as fh:
            for line in fh:
                line = line.strip()
                if line and not line.startswith("#"):
                    names.add(line.split()[0])
    return names


def check_status(root):
    path = os.path.join(root, "docs", "status.md")
    if not os.path.exists(path):
        return ["docs/status.md: missing"], 0
    names = pinned(root)
    if not names:
        return ["tests/expected/*.txt: no pinned test at all"], 0
    with open(path, encoding="utf-8") as fh:
        lines = fh.read().split("\n")
    problems, count = [], 0
    section, has_tests = None, True
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("## "):
            if section and not has_tests:
                problems.append(f"docs/status.md:{section[0]}: the section {section[1]!r} names no tests "
                                f"(a **Tests:** line)")
            section, has_tests = (i + 1, line[3:]), False
        if line.startswith("**Tests:**"):
            has_tests = True
            start = i
            para = []
            while i < len(lines) and lines[i].strip():
                para.append((i + 1, lines[i]))
                i += 1
            for n, text in para:
                for m in re.finditer(r"`([^`]+)`", text):
                    name = m.group(1)
                    count += 1
                    if "*" in name:
                        ok = any(fnmatch.fnmatchcase(x, name) for x in names)
                    else:
                        ok = name in names
                    if not ok:
                        problems.append(f"docs/status.md:{n}: `{name}` is no test any configuration runs "
                                        f"(tests/expected/*.txt)")
            if start == i:
                i += 1
            continue
        i += 1
    if section and not has_tests:
        problems.append(f"docs/status.md:{section[0]}: the section {section[1]!r} names no tests (a **Tests:** line)")
    return problems, count


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=DEFAULT_ROOT)
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    link_problems, links = check_links(root)
    test_problems, tests = check_status(root)
    problems = link_problems + test_problems
    if links == 0:
        problems.append("no relative link found in any Markdown file: nothing was checked")
    for p in problems:
        print(f"FAILED: {p}")
    if problems:
        print(f"check_docs: {len(problems)} problem(s)")
        return 1
    print(f"check_docs: {links} links lead where they say; docs/status.md names {tests} tests, each one pinned")
    return 0


if __name__ == "__main__":
    sys.exit(main())
