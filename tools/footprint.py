#!/usr/bin/env python3
"""Footprint of a firmware image: flash, static RAM, worst-case stack; budgets; the documents.

  footprint.py image --elf X.elf --ci-dir BUILD --name NAME --board BOARD [--root CHECKOUT]
               [--flash-budget BYTES] [--ram-budget BYTES] [--flash-target BYTES] [--ram-target BYTES]
               [--option NAME=VALUE]... [--compiler TEXT] [--cpu-flags=TEXT] [--json OUT.json]
               [--description TEXT] [--variant-of IMAGE] [--feature TEXT --feature-base IMAGE]
               [--board-title TEXT] [--board-note TEXT]
      Measures one image and exits 1 when it is over a budget.
  footprint.py write-doc [--doc docs/footprint.md] [--readme README.md] REPORT.json...
      Writes the document and the footprint regions of README.md and the other files of
      DOC_REGIONS (beside README.md) from every board's reports.
  footprint.py check-doc --board BOARD [--doc ...] [--readme ...] REPORT.json...
      Exits 1, saying what differs, when the document's header or BOARD's section, or one of
      the footprint regions of BOARD (DOC_REGIONS), is not what write-doc writes from these reports.
  footprint.py table REPORT.json...      prints the sections of these reports' boards
  footprint.py boards                    the boards (CMakePresets.json's), the document's sections
A REPORT.json argument may be @LIST, a file naming one report a line (a build's
footprint-reports.txt). A report made with --not-documented (bring-up firmware) is left out of
the document; a region may still quote it.

This file is the command line only. The work is in tools/footprint/: measuring an image into
its report (measure.py, stack.py, parts.py, elf.py) apart from writing the documents from the
reports (doc.py, regions.py, write.py); the report, whose fields tools/footprint/__init__.py
lists, is the one interface between them.
"""
import argparse
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from footprint.boards import board_list  # noqa: E402 (tools/footprint/)
from footprint.elf import ROOT  # noqa: E402
from footprint.measure import image  # noqa: E402
from footprint.write import check_doc, table, write_doc  # noqa: E402


def main():
    ap = argparse.ArgumentParser(fromfile_prefix_chars="@")
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("image")
    a.add_argument("--elf", required=True)
    a.add_argument("--ci-dir", required=True)
    a.add_argument("--name", required=True)
    a.add_argument("--board", required=True)
    a.add_argument("--flash-budget", type=int, default=0)
    a.add_argument("--ram-budget", type=int, default=0)
    a.add_argument("--flash-target", type=int, default=0, help="a goal the document compares the image with")
    a.add_argument("--ram-target", type=int, default=0, help="a static RAM goal the document compares the image with")
    a.add_argument("--option", action="append", help="NAME=VALUE the image is built with (for the document)")
    a.add_argument("--compiler", default="")
    a.add_argument("--cpu-flags", default="")
    a.add_argument("--root", default=ROOT, help="the checkout, whose files are told apart by their path in it")
    a.add_argument("--json")
    a.add_argument("--not-documented", action="store_true",
                   help="docs/footprint.md does not describe the image (its report may feed a region)")
    a.add_argument("--recursion", action="append",
                   help="NAME=N: a function recursing over constant data at most N levels deep")
    a.add_argument("--task", action="append",
                   help="LABEL=ENTRY:STACK: an RTOS task, its entry function and its static stack (the first one "
                        "serves requests)")
    a.add_argument("--task-context", type=int, default=0,
                   help="bytes a switched-out task keeps on its stack beyond its frames, with those the kernel leaves "
                        "unused at its top (the kernel's port)")
    a.add_argument("--pointer-call", action="append",
                   help="WHERE=REGEX: what calls through pointers may reach, the functions whose demangled name "
                        "REGEX finds, or for REGEX .init_array the functions that section lists, the static "
                        "constructors, or for file:REGEX the functions whose source file (relative to --root if "
                        "inside it) REGEX finds (default: any function only a pointer reaches); WHERE is a function, by its "
                        "name without the ABI namespace and parameters (its own pointer calls, e.g. "
                        "emcp::mcp::Inbox::put), or task:LABEL (every pointer call of that --task's tree)")
    a.add_argument("--asm-call", action="append",
                   help="CALLER=CALLEE:BYTES: a call from assembly the call graph does not show, after BYTES pushed")
    a.add_argument("--interrupt-entry", action="append",
                   help="FUNCTION: the interrupts come in by it alone and do not nest (an RTOS's trap entry; its "
                        "calls by --asm-call), where by default every *_Handler is an interrupt's, nested")
    a.add_argument("--kernel-dir", default="", help="the RTOS kernel's source folder (its code is a part of its own)")
    a.add_argument("--description", default="", help="what the image is (emcp_add_firmware()'s DESCRIPTION)")
    a.add_argument("--variant-of", default="", help="the image (its name without the board) this one measures "
                   "differently (VARIANT_OF): the document compares them")
    a.add_argument("--feature", default="", help="the feature this image measures (FEATURE): a row of the table "
                   "of what each feature adds")
    a.add_argument("--feature-base", default="", help="the image the feature adds to (FEATURE_BASE)")
    a.add_argument("--board-title", default="", help="the board's section heading (board.cmake's EMCP_BOARD_TITLE)")
    a.add_argument("--board-note", default="", help="the board's note (board.cmake's EMCP_BOARD_FOOTPRINT_NOTE)")
    doc = os.path.join(ROOT, "docs", "footprint.md")
    readme = os.path.join(ROOT, "README.md")
    t = sub.add_parser("table")
    t.add_argument("reports", nargs="+")
    w = sub.add_parser("write-doc")
    w.add_argument("--doc", default=doc)
    w.add_argument("--readme", default=readme)
    w.add_argument("reports", nargs="+")
    c = sub.add_parser("check-doc")
    c.add_argument("--board", required=True)
    c.add_argument("--doc", default=doc)
    c.add_argument("--readme", default=readme)
    c.add_argument("reports", nargs="+")
    sub.add_parser("boards")
    args = ap.parse_args()
    if args.cmd == "boards":
        print("\n".join(board_list()))
        return 0
    return {"image": image, "table": table, "write-doc": write_doc, "check-doc": check_doc}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
