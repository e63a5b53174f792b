#!/usr/bin/env python3
"""Footprint of a firmware image: flash, static RAM, worst-case stack; budgets.

  footprint.py image --elf X.elf --ci-dir BUILD --name NAME --board BOARD
               [--flash-budget BYTES] [--ram-budget BYTES] [--json OUT.json]
      Measures one image and exits 1 when it is over a budget.
  footprint.py table REPORT.json...
      Prints the Markdown table of docs/footprint.md from the images' reports.
  footprint.py check-doc docs/footprint.md REPORT.json...
      Exits 1 when the document's rows for these images are not what `table` prints now.

Flash is what the image stores: .text (code and read-only data, vector table included),
.ARM.exidx and the initial values of .data. Static RAM is .data + .bss, the stack region not
included (it is reported on its own). The biggest RAM objects are listed (the arena and the
buffers live inside the transport object).

Worst-case stack: GCC's -fcallgraph-info=su gives each function's frame and its calls. The
request path starts at main(); interrupt handlers (SysTick, the UART) can preempt it at its
deepest point, each with an 8-word exception frame. A call through a function pointer (a tool
handler, a channel's open/close, a sink's flush) is charged with the deepest function the
image never calls directly, which are the only ones that can be called that way: an upper
bound, not a guess. Recursion, or a frame of dynamic size, makes the figure unbounded and is
reported as such.
"""
import argparse
import bisect
import contextlib
import glob
import io
import json
import os
import re
import subprocess
import sys

NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
FRAME = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)")
EXC_FRAME = 32  # r0-r3, r12, lr, pc, xpsr pushed by the hardware (no FPU context: soft float)
LIBRARY_FRAME = 64  # a library function without a frame record (libgcc, newlib): charged this much


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def sections(elf):
    sizes = {}
    for line in run(["arm-none-eabi-size", "-A", elf]).splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes


def symbols(elf):
    """(name, size, type) of every sized symbol, mangled."""
    out = []
    for line in run(["arm-none-eabi-nm", "-S", elf]).splitlines():
        parts = line.split()
        if len(parts) == 4:
            out.append((parts[3], int(parts[1], 16), parts[2]))
    return out


def demangle(names):
    if not names:
        return []
    res = subprocess.run(["arm-none-eabi-c++filt"], input="\n".join(names), capture_output=True, text=True, check=True)
    return res.stdout.splitlines()


def ci_files(ci_dir):
    """The call-graph files: every .ci under a folder, or those a glob names (an LTO image's
    own ltrans files, e.g. bin/NAME.elf.ltrans*.ci)."""
    if any(c in ci_dir for c in "*?["):
        return sorted(glob.glob(ci_dir))
    found = []
    for root, _, files in os.walk(ci_dir):
        found.extend(os.path.join(root, f) for f in files if f.endswith(".ci"))
    return found


def load_callgraph(ci_dir):
    frames, dynamic, edges = {}, set(), {}
    files = ci_files(ci_dir)
    if not files:
        sys.exit("footprint: no call-graph (.ci) files at " + ci_dir)
    for path in files:
        with open(path, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
        for m in NODE.finditer(text):
            fr = FRAME.search(m.group(2))
            if fr:
                frames[m.group(1)] = max(frames.get(m.group(1), 0), int(fr.group(1)))
                if "dynamic" in fr.group(2) and "bounded" not in fr.group(2):
                    dynamic.add(m.group(1))
        for m in EDGE.finditer(text):
            edges.setdefault(m.group(1), set()).add(m.group(2))
    return frames, dynamic, edges


def canonical(title, known):
    """A call-graph title as the image's symbol: file-local functions appear as
    "path/file.cpp:demangled(args)", the others by their mangled name."""
    if title in known:
        return title
    m = re.match(r"^(/[^:]+|[A-Za-z]:[^:]+|[^/:][^:]*\.(?:c|cc|cpp|cxx)):(.+)$", title)
    return m.group(2) if m else title


def worst_stack(elf, ci_dir, bounded_recursion=None):
    raw_frames, raw_dynamic, raw_edges = load_callgraph(ci_dir)
    code = [name for name, _, t in symbols(elf) if t in "tTwW"]
    # File-local functions are known by their demangled name in the call graph.
    in_image = set(code) | set(demangle(code))
    canon = lambda t: canonical(t, in_image)
    frames, dynamic, edges = {}, set(), {}
    for t, fr in raw_frames.items():
        frames[canon(t)] = max(frames.get(canon(t), 0), fr)
    dynamic = {canon(t) for t in raw_dynamic}
    for src, dsts in raw_edges.items():
        edges.setdefault(canon(src), set()).update(canon(d) if d != "__indirect_call" else d for d in dsts)
    funcs = {f for f in frames if f in in_image}
    called = {t for s in edges for t in edges[s] if s in funcs}
    roots_irq = [f for f in funcs if f.endswith("_Handler") and f != "Reset_Handler"]
    # What only a function pointer (or the vector table) can reach.
    indirect = [f for f in sorted(funcs) if f not in called and f != "main" and not f.endswith("_Handler")
                and not f.startswith("_GLOBAL__sub_I")]
    notes = []
    memo = {}

    bounded_recursion = bounded_recursion or {}
    names = dict(zip(sorted(funcs), demangle(sorted(funcs))))

    def recursion_bound(f):
        short_name = short(names.get(f, f)).split("::")[-1]
        return bounded_recursion.get(short_name, 0)

    # Returns (bytes, path, bounded, cut): cut when a cycle was cut (through a pointer call,
    # or a recursion of known depth), which makes the figure depend on the path (then it is
    # not memoized).
    def depth(f, path, allow_indirect=True, order=()):
        if f in path:
            n = recursion_bound(f)
            if n:
                # A recursion over constant tables of known depth (schemas): the cycle's frames
                # again for every further level.
                cycle = order[order.index(f):]
                return sum(frames.get(x, 0) for x in cycle) * (n - 1), [], True, True
            notes.append("recursion through " + f)
            return 0, [f], False, False
        key = (f, allow_indirect)
        if key in memo:
            return memo[key]
        bounded = f not in dynamic
        cut = False
        best, best_path = 0, []
        path = path | {f}
        order = order + (f,)
        for callee in sorted(edges.get(f, ())):  # ties: the same path in every run
            if callee == "__indirect_call":
                if not allow_indirect:
                    continue
                for target in indirect:
                    # A callback makes no pointer call of its own; its depth is its direct-call
                    # tree alone, whatever path reached the pointer call (a fresh path, so the
                    # memo, keyed by function and allow_indirect only, holds one true value).
                    d, p, b, c = depth(target, frozenset(), False, ())
                    bounded = bounded and b
                    cut = cut or c
                    if d > best:
                        best, best_path = d, ["(indirect) " + target] + p[1:]
                continue
            if callee not in funcs:
                if callee in in_image and callee not in frames:
                    # A library function (libgcc, newlib) without a frame record.
                    if LIBRARY_FRAME > best:
                        best, best_path = LIBRARY_FRAME, [callee]
                continue  # otherwise gone from the image (--gc-sections)
            d, p, b, c = depth(callee, path, allow_indirect, order)
            bounded = bounded and b
            cut = cut or c
            if d > best:
                best, best_path = d, p
        result = (frames.get(f, 0) + best, [f] + best_path, bounded, cut)
        if not cut:
            memo[key] = result
        return result

    root = "Reset_Handler" if "Reset_Handler" in funcs else "main"
    main_depth, main_path, main_bounded, _ = depth(root, set())
    irq = [(depth(h, set())[0] + EXC_FRAME, h) for h in roots_irq]
    irq_worst = max(irq) if irq else (0, "")
    total = main_depth + EXC_FRAME + irq_worst[0] if irq else main_depth
    return {
        "main": main_depth,
        "main_path": demangle(main_path[:14]),
        "interrupt": irq_worst[0],
        "interrupt_handler": irq_worst[1],
        "total": total,
        "bounded": main_bounded and not notes,
        "notes": sorted(set(notes)),
        "indirect_targets": len(indirect),
    }


PARTS = [  # (label, pattern on the symbol's source path), first match wins
    ("core: JSON reader, writer, tree, numbers", r"/core/(src|include/emcp)/json/"),
    ("core: JSON-RPC decoder and encoder", r"/core/(src|include/emcp)/jsonrpc/"),
    ("core: MCP server, content, schemas", r"/core/(src|include/emcp)/mcp/"),
    ("core: transports, utilities", r"/core/"),
    ("board: start-up, UART, loop, mem*/str*", r"/boards/"),
    ("application", r"/examples/"),
    ("libgcc: soft float, 64-bit arithmetic", r"libgcc"),
    ("newlib: mem*, str*", r"newlib|libc"),
    ("static constructors (the server, transport and ring objects)", r"^_sub_I_"),
]


def line_rows(elf):
    """(address, source path) of every row of the image's DWARF line table, sorted: the file
    each instruction comes from, inlined code included (it keeps its own file and line)."""
    rows, cur, full = [], None, {}
    for line in run(["arm-none-eabi-objdump", "--dwarf=decodedline", elf]).splitlines():
        m = re.match(r"^(/\S+):$", line)  # the file the following rows are in
        if m:
            cur = m.group(1)
            full[os.path.basename(cur)] = cur
            continue
        m = re.match(r"^(\S+)\s+\d+\s+(0x[0-9a-f]+)", line)
        if m and cur:  # a row names its file by base name; the full path came with a header
            path = cur if cur.endswith("/" + m.group(1)) else full.get(m.group(1), m.group(1))
            rows.append((int(m.group(2), 16), path))
    rows.sort()
    return rows


DATA_PARTS = [  # (label, pattern on a data object's name) when no line info says its file
    ("core: JSON reader, writer, tree, numbers", r"^emcp::[^:]+::json::"),
    ("core: JSON-RPC decoder and encoder", r"^emcp::[^:]+::jsonrpc::"),
    ("core: MCP server, content, schemas", r"^emcp::[^:]+::mcp::"),
    ("core: transports, utilities", r"^emcp::"),
    ("board: start-up, UART, loop, mem*/str*", r"^(board::|g_vectors$)"),
    ("application", r"^[A-Za-z]"),  # the image's own tables (compiler tables start with _ or CSWTCH)
]


def data_part(name):
    if name.startswith("CSWTCH"):
        return None
    for label, pattern in DATA_PARTS:
        if re.search(pattern, name):
            return label
    return None


def m_name(field):
    return field.split("\t")[0].strip()


def flash_parts(elf, flash):
    """Flash by part. Code by the source file of each instruction (the line table: code that
    link-time optimization inlined into another file's function still counts for its own
    file); read-only data objects by the file that defines them (-g symbol info), else by
    their namespace (emcp::json, board::, the application's own names); string literals by
    the part that refers to them (string_literals); compiler tables and padding remain."""
    def part_of(path):
        if re.search(r"/c\+\+/\d", path):  # libstdc++ headers: code of the function using them
            return None
        for label, pattern in PARTS:
            if re.search(pattern, path):
                return label
        return None

    sums = {label: 0 for label, _ in PARTS}
    rows = line_rows(elf)
    addrs = [a for a, _ in rows]
    seen = set()
    funcs = set()
    spans = []  # (start, size, part) of every function and named object
    for line in run(["arm-none-eabi-readelf", "-sW", elf]).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "FUNC" and parts[6] != "UND":
            funcs.add(int(parts[1], 16) & ~1)  # Thumb functions have bit 0 set
    for line in run(["arm-none-eabi-nm", "-S", "-l", "-C", elf]).splitlines():  # demangled
        parts = line.split(None, 3)
        if len(parts) < 4 or parts[2] not in "TtRrWV" or parts[0] in seen:
            continue
        seen.add(parts[0])
        start, size = int(parts[0], 16), int(parts[1], 16)
        m = re.search(r"\t(\S+):\d+$", parts[3])
        own = part_of(m.group(1) if m else m_name(parts[3]))  # no line info: by its name
        if start not in funcs:  # a data object: where it is defined, else by its namespace
            label = own or data_part(m_name(parts[3]))
            spans.append((start, size, label))
            if label:
                sums[label] += size
            continue
        spans.append((start, size, own))
        # A function: each stretch between two line rows belongs to the first row's file;
        # bytes before the first row (or without any) to the function's own file.
        end = start + size
        i = bisect.bisect_right(addrs, start) - 1
        pos, label = start, own
        if i >= 0 and rows[i][0] == start:
            label = part_of(rows[i][1]) or own
        j = bisect.bisect_right(addrs, start)
        while j < len(rows) and rows[j][0] < end:
            if label:
                sums[label] += rows[j][0] - pos
            pos, label = rows[j][0], part_of(rows[j][1]) or own
            j += 1
        if label:
            sums[label] += end - pos

    def part_at(addr):  # the part of the line row an instruction belongs to
        i = bisect.bisect_right(addrs, addr) - 1
        return part_of(rows[i][1]) if i >= 0 else None

    for label, n in string_literals(elf, spans, part_at).items():
        sums[label] += n
    rest = flash - sum(sums.values())
    out = [[label, n] for label, n in sums.items() if n]
    out.append(["other unnamed data: compiler tables, padding", rest])
    return out


def string_literals(elf, spans, part_at):
    """Bytes of the string literals each part refers to. A literal is unnamed read-only data
    that a word of a function (its literal pool) or of a named object (a table's pointer)
    points at: a NUL-terminated run counted once, for the first part that refers to it."""
    text = None
    for line in run(["arm-none-eabi-readelf", "-SW", elf]).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            text = (int(m.group(1), 16), int(m.group(2), 16))
    if text is None:
        return {}
    base, size = text
    with subprocess.Popen(["arm-none-eabi-objcopy", "-O", "binary", "-j", ".text", elf, "/dev/stdout"],
                          stdout=subprocess.PIPE) as proc:
        data = proc.stdout.read()
    named = sorted((a, a + n) for a, n, _ in spans)
    starts = [a for a, _ in named]

    def unnamed(addr):
        i = bisect.bisect_right(starts, addr) - 1
        return i < 0 or addr >= named[i][1]

    # A literal-pool word belongs to the part of the instruction that loads it (with
    # link-time optimization a function's pool serves code inlined from several files).
    loader = {}
    for line in run(["arm-none-eabi-objdump", "-d", elf]).splitlines():
        m = re.match(r"^\s*([0-9a-f]+):.*\s(?:ldr|adr|add)\S*\s.*@ \(([0-9a-f]+)", line)
        if m:
            loader.setdefault(int(m.group(2), 16), part_at(int(m.group(1), 16)))

    out, taken = {}, set()
    for start, n, own in sorted(spans):
        for off in range(start - base + (-start) % 4, start - base + n - 3, 4):
            label = loader.get(base + off) or own
            if not label:
                continue
            target = int.from_bytes(data[off:off + 4], "little")
            if not base <= target < base + size or target in taken or not unnamed(target):
                continue
            end = data.find(b"\0", target - base)
            run_ = data[target - base:end]
            if end < 0 or not run_ or any(c < 0x20 and c not in (9, 10, 13) for c in run_):
                continue
            fresh = [a for a in range(target, target + len(run_) + 1) if a not in taken]
            taken.update(fresh)
            out[label] = out.get(label, 0) + len(fresh)
    return out


def image(args):
    sec = sections(args.elf)
    flash = sec.get(".text", 0) + sec.get(".ARM.exidx", 0) + sec.get(".data", 0)
    ram = sec.get(".data", 0) + sec.get(".bss", 0)
    stack_region = sec.get(".stack", 0)
    syms = [s for s in symbols(args.elf) if s[2] in "bBdD"]
    syms.sort(key=lambda s: -s[1])
    top = syms[:6]
    names = demangle([s[0] for s in top])
    bounds = {}
    for item in args.recursion or []:
        name, _, n = item.partition("=")
        bounds[name] = int(n)
    stack = worst_stack(args.elf, args.ci_dir, bounds)
    report = {
        "name": args.name,
        "board": args.board,
        "flash": flash,
        "ram": ram,
        "ram_objects": [[n, s[1]] for n, s in zip(names, top)],
        "stack_region": stack_region,
        "stack": stack,
        "flash_budget": args.flash_budget,
        "ram_budget": args.ram_budget,
        "flash_parts": flash_parts(args.elf, flash),
    }
    problems = []
    if args.flash_budget and flash > args.flash_budget:
        problems.append(f"flash {flash} B is over its budget of {args.flash_budget} B")
    if args.ram_budget and ram > args.ram_budget:
        problems.append(f"static RAM {ram} B is over its budget of {args.ram_budget} B")
    if not stack["bounded"]:
        problems.append("the worst-case stack is unbounded: " + "; ".join(stack["notes"] or ["a dynamic frame"]))
    elif stack["total"] > stack_region:
        problems.append(f"worst-case stack {stack['total']} B does not fit the stack region of {stack_region} B")
    report["problems"] = problems
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1)
    kib = lambda n: f"{n / 1024:.1f} KiB"
    print(f"{args.name} ({args.board}): flash {flash} B ({kib(flash)}), static RAM {ram} B ({kib(ram)}), "
          f"worst-case stack {stack['total']} B (main {stack['main']} + interrupt {stack['interrupt']}) of {stack_region} B")
    for p in problems:
        print(f"FOOTPRINT: {args.name} on {args.board}: {p}", file=sys.stderr)
    return 1 if problems else 0


def short(name):
    """A demangled name without the ABI namespace, anonymous namespaces and parameters."""
    name = re.sub(r"emcp::v0(_[0-9]+)+::", "emcp::", name)
    name = name.replace("(anonymous namespace)::", "")
    depth, out = 0, ""
    for ch in name:  # drop the parameter list (the first top-level parenthesis onwards)
        if ch == "(" and depth == 0 and out:
            break
        depth += ch == "<"
        depth -= ch == ">"
        out += ch
    return out


def table(args):
    reports = []
    for path in args.reports:
        with open(path, encoding="utf-8") as fh:
            reports.append(json.load(fh))
    reports.sort(key=lambda r: (r["board"], r["name"]))
    kib = lambda n: f"{n:,} B ({n / 1024:.1f} KiB)"
    print("| image | board | flash | budget | static RAM | budget | biggest RAM objects | worst-case stack (request path + interrupt) | stack region |")
    print("|---|---|---:|---:|---:|---:|---|---:|---:|")
    for r in reports:
        objs = ", ".join(f"`{short(n)}` {s:,}" for n, s in r["ram_objects"][:4])
        fb = f"{r['flash_budget']:,}" if r["flash_budget"] else "-"
        rb = f"{r['ram_budget']:,}" if r["ram_budget"] else "-"
        st = r["stack"]
        print(f"| {r['name']} | {r['board']} | {kib(r['flash'])} | {fb} | {kib(r['ram'])} | {rb} | {objs} | "
              f"{st['total']:,} B ({st['main']:,} + {st['interrupt']:,}) | {r['stack_region']:,} B |")
    print()
    print("Where the flash goes, in bytes: code by the source file each instruction comes from")
    print("(the DWARF line table, so code that link-time optimization inlined into another file's")
    print("function counts for its own file), named read-only data by where it is defined (or its")
    print("namespace), string literals by the part whose code or table refers to them first;")
    print("compiler tables and padding in the last row:")
    print()
    images = [r for r in reports if "flash_parts" in r]
    print("| part | " + " | ".join(r["name"] for r in images) + " |")
    print("|---|" + "---:|" * len(images))
    labels = []
    for r in images:
        for label, _ in r["flash_parts"]:
            if label not in labels:
                labels.append(label)
    for label in labels:
        cells = []
        for r in images:
            n = dict((l, v) for l, v in r["flash_parts"]).get(label, 0)
            cells.append(f"{n:,}" if n else "-")
        print(f"| {label} | " + " | ".join(cells) + " |")
    core = [sum(n for l, n in r["flash_parts"] if l.startswith(("core:", "static constructors"))) for r in images]
    print("| **core in all** (the core rows and the static constructors) | "
          + " | ".join(f"**{n:,}**" for n in core) + " |")
    by_name = {r["name"]: (r, c) for r, c in zip(images, core)}
    for spec in getattr(args, "target", None) or []:
        name, target, reference = spec.split(":")
        if name not in by_name or reference not in by_name:
            continue
        r, c = by_name[name]
        parts = dict(r["flash_parts"])
        app = parts.get("application", 0)
        lib = parts.get("libgcc: soft float, 64-bit arithmetic", 0)
        rest = r["flash"] - c - app - lib
        k = lambda n: f"{n / 1024:.1f} KiB"
        print()
        print(f"{name} against a {k(int(target))} target: the application takes {k(app)}, the "
              f"soft-float and 64-bit arithmetic it needs {k(lib)}, newlib, the board and compiler "
              f"tables {k(rest)}, which leaves {k(int(target) - app - lib - rest)} for the core; "
              f"the image links {k(c)} of core, and {reference}'s core takes {k(by_name[reference][1])}.")
    print()
    for r in reports:
        st = r["stack"]
        print(f"- {r['name']}: the deepest request path goes "
              + " -> ".join(f"`{short(p)}`" for p in st["main_path"][2:12])
              + f" ...; {st['indirect_targets']} functions are reachable only through pointers")
    return 0


def check_doc(args):
    """The rows of `doc` (docs/footprint.md) for these reports' images must be what `table`
    prints for them now (flash, static RAM, budgets, RAM objects, stack). The breakdown of the
    flash by part is not compared: a few bytes move between parts from one build folder to
    another (line-table boundaries), the totals do not."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        table(args)
    now, doc = parse_tables(out.getvalue()), None
    with open(args.doc, encoding="utf-8") as fh:
        doc = parse_tables(fh.read())
    stale = [(k, v, doc.get(k)) for k, v in now.items() if doc.get(k) != v]
    for (image_name, what), v, was in stale:
        print(f"{args.doc}: {image_name} {what}: says {was!r}, the build gives {v!r}")
    if stale:
        print("docs out of date: run scripts/footprint")
    return 1 if stale else 0


def parse_tables(text):
    """{(image, column): cell} from the image table."""
    cells, header = {}, None
    for line in text.splitlines():
        if not line.startswith("|") or line.startswith("|---"):
            header = header if line.startswith("|---") else None
            continue
        row = [c.strip() for c in line.strip().strip("|").split("|")]
        if header is None:
            header = row
            continue
        if header[0] == "image":
            for i, (name, cell) in enumerate(zip(header[1:], row[1:])):
                cells[(row[0], name if name != "budget" else f"budget {i}")] = cell
    return cells


def main():
    ap = argparse.ArgumentParser()
    sub = ap.add_subparsers(dest="cmd", required=True)
    a = sub.add_parser("image")
    a.add_argument("--elf", required=True)
    a.add_argument("--ci-dir", required=True)
    a.add_argument("--name", required=True)
    a.add_argument("--board", required=True)
    a.add_argument("--flash-budget", type=int, default=0)
    a.add_argument("--ram-budget", type=int, default=0)
    a.add_argument("--json")
    a.add_argument("--recursion", action="append",
                   help="NAME=N: a function recursing over constant data at most N levels deep")
    t = sub.add_parser("table")
    t.add_argument("reports", nargs="+")
    t.add_argument("--target", action="append",
                   help="IMAGE:BYTES:REFERENCE: what IMAGE would leave for its core under BYTES")
    c = sub.add_parser("check-doc")
    c.add_argument("doc")
    c.add_argument("reports", nargs="+")
    args = ap.parse_args()
    if args.cmd == "check-doc":
        return check_doc(args)
    return image(args) if args.cmd == "image" else table(args)


if __name__ == "__main__":
    sys.exit(main())
