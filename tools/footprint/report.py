"""Reading the reports (tools/footprint/__init__.py says their fields): what the document
(doc.py) and the regions (regions.py) both use."""
import json
import re
import sys

def kib(n, unit=True):
    return f"{n / 1024:.1f}" + (" KiB" if unit else "")


def load_reports(paths):
    reports = []
    for path in paths:
        try:
            with open(path, encoding="utf-8") as fh:
                reports.append(json.load(fh))
        except OSError as e:
            sys.exit(f"footprint: no report {path} ({e.strerror}): build the board first")
    return reports


def base_name(r):
    """The image's name without its board: emcp-minimal-strings-mps2-an385 -> emcp-minimal-strings."""
    suffix = "-" + r["board"]
    return r["name"][:-len(suffix)] if r["name"].endswith(suffix) else r["name"]



def options_text(r, none="the default options"):
    return ", ".join(f"`{o}`" for o in r.get("options", [])) or none


def budgets_met(r):
    """True when the image is within its flash and static RAM budgets (those it has)."""
    fb, rb = r.get("flash_budget") or 0, r.get("ram_budget") or 0
    return (not fb or r["flash"] <= fb) and (not rb or r["ram"] <= rb)


def core_bytes(r):
    return sum(n for l, n in r["flash_parts"] if l.startswith(("core:", "static constructors")))



def changed_options(r, other):
    """The options `r` sets to another value than `other` does, as text ("" when none): what,
    beside the kernel and its tasks, makes an RTOS image's RAM differ from its bare-metal one's."""
    theirs = dict(o.partition("=")[::2] for o in other.get("options", []))
    changed = [(n, v, theirs[n]) for n, _, v in (o.partition("=") for o in r.get("options", []))
               if n in theirs and theirs[n] != v]
    return ", ".join(f"`{n}={v}` where {other['name']} has `{n}={was}`" for n, v, was in changed)



def by_board(reports):
    boards = {}
    for r in reports:
        boards.setdefault(r["board"], []).append(r)
    return boards


def documented(reports):
    """The reports docs/footprint.md describes (not those of --not-documented images)."""
    return [r for r in reports if r.get("documented", True)]



def core_name(report):
    """The CPU an image is built for, from its -mcpu flag: "Cortex-M3"."""
    m = re.search(r"-mcpu=cortex-([a-z]\d+\+?)", report["cpu_flags"])
    return f"Cortex-{m.group(1).upper()}" if m else report["cpu_flags"]

