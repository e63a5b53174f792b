#!/usr/bin/env python3
"""docs/configuration.md's option tables, written from core/include/emcp/opt.h.

    tools/optdoc.py write [--root DIR]   rewrite the generated region of docs/configuration.md
    tools/optdoc.py check [--root DIR]   fail unless the region is what `write` would write, and
                                         unless every other option a public header defaults
                                         (#ifndef EMCP_X / #define EMCP_X value in core/include,
                                         boards/common/include, ports/*/include) is named in
                                         the document's text

opt.h is the one source: each option's `///` comment, its default (a conditional default as
its branches), its section (`// ---- Name ----`). An option with no comment of its own shares
the one before it (EMCP_INBOX_PAYLOAD, with EMCP_INBOX_SLOTS). The table goes between
`<!-- optdoc:begin options -->` and `<!-- optdoc:end options -->` (tools/docgen.py).
"""
import argparse
import glob
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docgen  # noqa: E402

OPT_H = "core/include/emcp/opt.h"
DOC = "docs/configuration.md"
HEADERS = ["core/include/**/*.h", "boards/common/include/**/*.h", "ports/*/include/**/*.h"]


def parse(text):
    """[(section, name, default, comment)] in opt.h's order."""
    out = []
    section, comment = "", []
    lines = text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i].strip()
        m = re.match(r"^// ---- (.+?) -+$", line)
        if m:
            section, comment = m.group(1), []
        elif line.startswith("///"):
            comment.append(line[3:].strip())
        elif line.startswith("#ifndef EMCP_") and not line.endswith("_H"):
            name = line.split()[1]
            # The option's block, to its #endif: its #define(s), under #if/#else when conditional.
            depth, branches, cond = 1, [], None
            i += 1
            while depth:
                inner = lines[i].strip()
                if inner.startswith("#if"):
                    depth += 1
                    cond = inner.split(None, 1)[1]
                elif inner.startswith("#else"):
                    cond = "otherwise"
                elif inner.startswith("#endif"):
                    depth -= 1
                else:
                    d = re.match(rf"^#define {name}\s+(.+)$", inner)
                    if d:
                        branches.append((cond, d.group(1).strip()))
                i += 1
            if not branches:
                sys.exit(f"optdoc: {OPT_H}: {name} has no #define")
            if len(branches) == 1:
                default = f"`{branches[0][1]}`"
            else:
                default = "; ".join(f"`{v}`" + (f" if `{c}`" if c != "otherwise" else " otherwise")
                                    for c, v in branches)
            text_ = " ".join(comment) if comment else f"with `{out[-1][1]}`, above" if out else ""
            if not text_:
                sys.exit(f"optdoc: {OPT_H}: {name} has no /// comment")
            out.append((section, name, default, text_))
            comment = []
            continue
        elif not line.startswith("#if") and not line.startswith("#error") and not line.startswith("#endif"):
            if line and not line.startswith("//"):
                comment = []
        i += 1
    return out


def table(options):
    out, section = [], None
    for sec, name, default, text in options:
        if sec != section:
            if out:
                out.append("")
            out += [f"### {sec}", "", "| option | default | what it is |", "|---|---|---|"]
            section = sec
        # A pipe in a cell, even in a code span, is escaped (GitHub's tables).
        out.append(f"| `{name}` | {default.replace('|', chr(92) + '|')} | {text.replace('|', chr(92) + '|')} |")
    return "\n".join(out)


def other_options(root):
    """Options defaulted in public headers other than opt.h: {name: header}."""
    found = {}
    for pattern in HEADERS:
        for path in sorted(glob.glob(os.path.join(root, pattern), recursive=True)):
            rel = os.path.relpath(path, root)
            if rel == OPT_H:
                continue
            with open(path, encoding="utf-8") as fh:
                lines = [l.strip() for l in fh]
            for a, b in zip(lines, lines[1:]):
                m = re.match(r"^#ifndef (EMCP_[A-Z0-9_]+)$", a)
                if m and re.match(rf"^#define {m.group(1)}\s+\S", b):
                    found.setdefault(m.group(1), rel)
    return found


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("mode", choices=["write", "check"])
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    a = ap.parse_args()
    with open(os.path.join(a.root, OPT_H), encoding="utf-8") as fh:
        generated = table(parse(fh.read()))
    doc = os.path.join(a.root, DOC)
    if a.mode == "write":
        docgen.rewrite(doc, "optdoc", {"options": generated})
        print(f"{DOC}: options written from {OPT_H}", file=sys.stderr)
        return 0
    with open(doc, encoding="utf-8") as fh:
        text = fh.read()
    problems = []
    region = next((r for r in docgen.regions(text, "optdoc", doc) if r.name == "options"), None)
    if region is None:
        problems.append(f"{DOC} has no optdoc region 'options'")
    elif text[region.start:region.end].strip("\n") != generated:
        problems.append(f"{DOC}'s option tables are not what {OPT_H} says: run tools/optdoc.py write")
    outside = docgen.outside(text, "optdoc", doc)
    for name, header in sorted(other_options(a.root).items()):
        if f"`{name}`" not in outside:
            problems.append(f"{name} (defaulted in {header}) is not described in {DOC}")
    for p in problems:
        print("optdoc: " + p, file=sys.stderr)
    if not problems:
        print(f"{DOC}: the options of {OPT_H} and of the other headers are described")
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
