"""write-doc, check-doc and table: the document (doc.py) and the regions (regions.py) written
from the reports, or compared with what is there."""
import difflib
import sys

from .boards import board_list
from .doc import HEADER, board_section, document, split_doc
from .regions import DOC_REGIONS, doc_path, docgen, readme_regions, region_text
from .report import by_board, documented, load_reports


def write_doc(args):
    reports = load_reports(args.reports)
    text = document(reports)
    with open(args.doc, "w", encoding="utf-8") as fh:
        fh.write(text)
    for rel, table in DOC_REGIONS.items():
        path = doc_path(args.readme, rel)
        with open(path, encoding="utf-8") as fh:
            regions = readme_regions(fh.read(), path)
        missing = [n for n in table if n not in regions]
        unknown = [n for n in regions if n not in table]
        if missing or unknown:
            sys.exit(f"{path}: footprint regions missing: {missing or 'none'}; unknown: {unknown or 'none'}")
        try:
            docgen.rewrite(path, "footprint", {n: region_text(rel, n, reports) for n in table})
        except docgen.RegionError as e:
            sys.exit(f"footprint: {e}")
    print(f"{args.doc} and the footprint regions of {', '.join(DOC_REGIONS)} rewritten", file=sys.stderr)
    return 0


def diff(was, now, what):
    lines = list(difflib.unified_diff(was.splitlines(), now.splitlines(), f"{what} (as it is)",
                                      f"{what} (what the build gives)", lineterm="", n=1))
    return "\n".join(lines[:60] + (["..."] if len(lines) > 60 else []))


def check_doc(args):
    """docs/footprint.md's header and this board's section must be what write-doc writes from
    this board's reports, every line, and its sections those of the board list in order; README.md's
    regions of this board must be what write-doc puts there, and every region known."""
    reports = load_reports(args.reports)
    others = sorted({r["name"] for r in reports if r["board"] != args.board})
    if others:
        sys.exit(f"footprint: reports of other boards given to the check of {args.board}: {', '.join(others)}")
    problems = []
    with open(args.doc, encoding="utf-8") as fh:
        header, sections = split_doc(fh.read())
    if header != HEADER + "\n":
        problems.append(f"{args.doc}: its header (the text before the first section) is not what "
                        f"tools/footprint/doc.py writes:\n" + diff(header, HEADER + "\n", "header"))
    names = board_list()
    if args.board not in names:
        sys.exit(f"footprint: {args.board} is not a board of CMakePresets.json (tools/footprint/boards.py)")
    have = [h[3:].partition(":")[0] for h, _ in sections]
    if have != names:
        problems.append(f"{args.doc}: its sections are those of\n  " + "\n  ".join(have or ["(none)"])
                        + "\nbut should be, in this order (CMakePresets.json's boards),\n  " + "\n  ".join(names))
    now = board_section(args.board, documented(reports))
    if args.board in names[:-1]:
        now += "\n"  # the blank line before the next section
    section = next((text for h, text in sections if h.startswith(f"## {args.board}: ")), None)
    if section is None:
        problems.append(f"{args.doc}: no section for {args.board}")
    elif section != now:
        problems.append(f"{args.doc}: the section of {args.board} is not what this build measures:\n"
                        + diff(section, now, args.board))
    checked = []
    for rel, table in DOC_REGIONS.items():
        path = doc_path(args.readme, rel)
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        regions = readme_regions(text, path)
        for name in regions:
            if name not in table:
                problems.append(f"{path}: unknown footprint region {name} (DOC_REGIONS of tools/footprint/regions.py)")
        for name, (board, _) in table.items():
            if name not in regions:
                problems.append(f"{path}: the footprint region {name} is missing")
            elif board == args.board:
                checked.append(f"{rel} {name}")
                start, end = regions[name]
                was, now_text = text[start:end], region_text(rel, name, reports)
                # What write-doc writes (a block region's content between newlines of its own).
                if docgen.replace(text, "footprint", {name: now_text}, path) != text:
                    problems.append(f"{path}: the footprint region {name} says\n  {was.strip()}\nthe build gives\n  {now_text}")
    for p in problems:
        print(p)
    if problems:
        print(f"FOOTPRINT DOCS OUT OF DATE for {args.board}: run scripts/footprint (it rewrites "
              f"{args.doc} and the footprint regions of {', '.join(DOC_REGIONS)} from every board's build)")
        return 1
    print(f"{args.doc}: the header and the section of {args.board} ({len(now.splitlines())} lines) are "
          f"current; footprint regions of {args.board} current: {', '.join(checked) or 'none'}")
    return 0


def table(args):
    """Prints the sections of the boards these reports are from."""
    boards = by_board(documented(load_reports(args.reports)))
    print("\n".join(board_section(b, boards[b]) for b in board_list() if b in boards), end="")
    return 0

