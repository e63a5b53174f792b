#!/usr/bin/env python3
"""Generated regions of Markdown documents: text between two markers that a program rewrites.

A region is

    <!-- PREFIX:begin NAME -->CONTENT<!-- PREFIX:end NAME -->

PREFIX names the program that owns the region (bench, footprint, ...), NAME is unique in the
file among that prefix's regions ([A-Za-z0-9_-]+). Two forms:

- block: each marker alone on its line; the content is whole lines between them (it is written
  as "\\n" + content + "\\n", so the caller gives it without surrounding newlines);
- inline: both markers on one line; the content has no newline.

Text outside the regions is never changed. A marker out of place (an end without its begin, a
begin inside a region, a name twice), a misspelt marker (`<!-- bench:begn x -->`, any
`PREFIX:begin`/`PREFIX:end` that is not a whole marker) or a region left open is an error, and
so is writing a region the file does not have: nothing is written then.

Command line:

  tools/docgen.py write PREFIX FILE NAME=CONTENT_FILE...   replace these regions (all or none)
  tools/docgen.py check PREFIX FILE [NAME...]              markers well formed (and these present)
  tools/docgen.py list PREFIX FILE                         the regions' names, one per line

Module (import docgen, with tools/ on sys.path):

  regions(text, prefix, path="")       -> [Region(name, start, end, block, line)] in file order;
                                          start/end delimit the content; raises RegionError
  replace(text, prefix, {name: content}, path="") -> the new text; raises RegionError
  rewrite(path, prefix, {name: content}) -> True when the file changed (written atomically)
  outside(text, prefix, path="")       -> the text with every region's content replaced by
                                          as many newlines as it had (line numbers kept)
"""
import os
import re
import sys
import tempfile
from collections import namedtuple

Region = namedtuple("Region", "name start end block line")
NAME = r"[A-Za-z0-9_-]+"


class RegionError(Exception):
    pass


def _marker(prefix):
    return re.compile(r"<!-- " + re.escape(prefix) + r":(begin|end) (" + NAME + r") -->")


def _line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def regions(text, prefix, path=""):
    """The regions of `prefix` in `text`, in order; RegionError on any marker out of place."""
    where = (path + ":") if path else ""
    marker = _marker(prefix)
    found = list(marker.finditer(text))
    # A misspelt marker: every HTML comment that mentions PREFIX: must be a whole marker.
    whole = {m.start() for m in found}
    for c in re.finditer(r"<!--.*?(?:-->|\Z)", text, re.S):
        if c.start() not in whole and re.search(r"(?<![A-Za-z0-9_])" + re.escape(prefix) + r":", c.group(0)):
            raise RegionError(f"{where}{_line_of(text, c.start())}: malformed {prefix} marker "
                              f"{c.group(0)[:60]!r} (write <!-- {prefix}:begin NAME --> ... "
                              f"<!-- {prefix}:end NAME -->, NAME of [A-Za-z0-9_-])")
    out, seen, open_m = [], set(), None
    for m in found:
        kind, name = m.groups()
        if kind == "begin":
            if open_m is not None:
                raise RegionError(f"{where}{_line_of(text, m.start())}: {m.group(0)} inside region "
                                  f"{open_m.group(2)!r} (begun at line {_line_of(text, open_m.start())})")
            if name in seen:
                raise RegionError(f"{where}{_line_of(text, m.start())}: region {name!r} twice")
            open_m = m
            continue
        if open_m is None or open_m.group(2) != name:
            raise RegionError(f"{where}{_line_of(text, m.start())}: {m.group(0)} without "
                              f"<!-- {prefix}:begin {name} --> before it"
                              + (f" (region {open_m.group(2)!r} is open)" if open_m else ""))
        b, e = open_m, m
        line_b = text[text.rfind("\n", 0, b.start()) + 1:b.start()] + text[b.end():_eol(text, b.end())]
        line_e = text[text.rfind("\n", 0, e.start()) + 1:e.start()] + text[e.end():_eol(text, e.end())]
        same_line = "\n" not in text[b.end():e.start()]
        if same_line:
            block = False
        elif line_b.strip() == "" and line_e.strip() == "":
            block = True
        else:
            raise RegionError(f"{where}{_line_of(text, b.start())}: region {name!r} spans lines, so "
                              f"each of its markers must be alone on its line")
        out.append(Region(name, b.end(), e.start(), block, _line_of(text, b.start())))
        seen.add(name)
        open_m = None
    if open_m is not None:
        raise RegionError(f"{where}{_line_of(text, open_m.start())}: {open_m.group(0)} has no "
                          f"<!-- {prefix}:end {open_m.group(2)} -->")
    return out


def _eol(text, pos):
    n = text.find("\n", pos)
    return len(text) if n < 0 else n


def replace(text, prefix, contents, path=""):
    """`text` with the content of each region named in `contents` replaced."""
    where = (path + ": ") if path else ""
    have = {r.name: r for r in regions(text, prefix, path)}
    missing = sorted(set(contents) - set(have))
    if missing:
        raise RegionError(f"{where}no {prefix} region " + ", ".join(missing)
                          + f" (have: {', '.join(have) or 'none'})")
    for name, content in contents.items():
        if re.search(r"<!--(?:(?!-->).)*?(?<![A-Za-z0-9_])" + re.escape(prefix) + r":", content, re.S):
            raise RegionError(f"{where}the new content of region {name!r} holds a {prefix} marker")
    for r in sorted(have.values(), key=lambda r: -r.start):  # from the end: offsets stay valid
        if r.name not in contents:
            continue
        c = contents[r.name]
        if r.block:
            c = "\n" + c.strip("\n") + "\n"
        elif "\n" in c:
            raise RegionError(f"{where}region {r.name!r} is inline (line {r.line}): its content "
                              f"cannot hold a newline")
        text = text[:r.start] + c + text[r.end:]
    return text


def rewrite(path, prefix, contents):
    """Replaces regions of the file at `path`; writes (atomically) only when something changed."""
    with open(path, encoding="utf-8") as fh:
        was = fh.read()
    now = replace(was, prefix, contents, path)
    if now == was:
        return False
    d = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=".docgen-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as fh:
            fh.write(now)
        os.chmod(tmp, os.stat(path).st_mode & 0o7777)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return True


def outside(text, prefix, path=""):
    """The text outside the regions: each region's content becomes its newlines only."""
    for r in sorted(regions(text, prefix, path), key=lambda r: -r.start):
        text = text[:r.start] + "\n" * text.count("\n", r.start, r.end) + text[r.end:]
    return text


def main(argv):
    if len(argv) >= 3 and argv[0] in ("write", "check", "list"):
        cmd, prefix, path, rest = argv[0], argv[1], argv[2], argv[3:]
        try:
            if cmd == "write":
                contents = {}
                for arg in rest:
                    name, sep, src = arg.partition("=")
                    if not sep or not re.fullmatch(NAME, name):
                        raise RegionError(f"expected NAME=CONTENT_FILE, got {arg!r}")
                    with open(src, encoding="utf-8") as fh:
                        contents[name] = fh.read()
                changed = rewrite(path, prefix, contents)
                print(f"{path}: {len(contents)} {prefix} region(s) {'rewritten' if changed else 'unchanged'}",
                      file=sys.stderr)
            else:
                with open(path, encoding="utf-8") as fh:
                    rs = regions(fh.read(), prefix, path)
                if cmd == "list":
                    for r in rs:
                        print(r.name)
                missing = sorted(set(rest) - {r.name for r in rs}) if cmd == "check" else []
                if missing:
                    raise RegionError(f"{path}: no {prefix} region " + ", ".join(missing))
            return 0
        except (RegionError, OSError) as e:
            print(f"docgen: {e}", file=sys.stderr)
            return 1
    print(__doc__.split("Command line:")[1].split("Module")[0].strip(), file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
