#!/usr/bin/env python3
"""Footprint of a firmware image: flash, static RAM, worst-case stack; budgets.

  footprint.py image --elf X.elf --ci-dir BUILD --name NAME --board BOARD [--root CHECKOUT]
               [--flash-budget BYTES] [--ram-budget BYTES] [--flash-target BYTES] [--ram-target BYTES]
               [--option NAME=VALUE]... [--compiler TEXT] [--cpu-flags=TEXT] [--json OUT.json]
      Measures one image and exits 1 when it is over a budget.
  footprint.py write-doc [--doc docs/footprint.md] [--readme README.md] REPORT.json...
      Writes the document and the footprint regions of README.md and the other files of
      DOC_REGIONS (beside README.md) from every board's reports.
  footprint.py check-doc --board BOARD [--doc ...] [--readme ...] REPORT.json...
      Exits 1, saying what differs, when the document's header or BOARD's section, or one of
      the footprint regions of BOARD (DOC_REGIONS), is not what write-doc writes from these reports.
  footprint.py table REPORT.json...      prints the sections of these reports' boards
  footprint.py boards                    the boards the document has a section for
A REPORT.json argument may be @LIST, a file naming one report a line (a build's
footprint-reports.txt). A report made with --not-documented (bring-up firmware) is left out of
the document; a region may still quote it.

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
import difflib
import glob
import json
import os
import re
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import docgen  # noqa: E402 (tools/docgen.py: the generated regions of the docs)

NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
FRAME = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)")
EXC_FRAME = 32  # r0-r3, r12, lr, pc, xpsr pushed by the hardware (no FPU context: soft float)
# The image's architecture, by its ELF header's machine: (binutils prefix, bytes an interrupt
# adds besides its handlers' frames). A RISC-V core pushes nothing (the trap handler saves the
# registers in its own frame, which -fstack-usage counts), but the handler's frame starts at
# sp, which the ABI keeps 16-byte aligned: up to 12 bytes below the interrupted function's
# last stored word (its frame's padding). Counting them, the figure bounds what an interrupt
# adds to the painted stack's high-water mark too, as Arm's 32 bytes do there.
# Xtensa (the lx106, call0 ABI) pushes nothing either: its level-1 interrupt entry
# (boards/common/arch/xtensa.cpp, assembly, outside the call graph) saves what a C function may
# change in a frame of 64 bytes, then calls Level1_Handler, whose frame the call graph has.
ARCHES = {40: ("arm-none-eabi-", EXC_FRAME), 243: ("riscv64-unknown-elf-", 12), 94: ("xtensa-lx106-elf-", 64)}
LIBRARY_FRAME = 64  # a library function without a frame record (libgcc, newlib): charged this much


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def arch(elf):
    """ARCHES' entry for the image (Arm, RISC-V or Xtensa)."""
    with open(elf, "rb") as fh:
        header = fh.read(20)
    if header[:4] != b"\x7fELF":
        sys.exit(f"footprint: {elf} is not an ELF file")
    machine = int.from_bytes(header[18:20], "little" if header[5] == 1 else "big")
    if machine not in ARCHES:
        sys.exit(f"footprint: {elf}: ELF machine {machine} is none of Arm, RISC-V, Xtensa")
    return ARCHES[machine]


def tool(elf, name):
    """The binutils program `name` (nm, objdump, ...) for the image's architecture."""
    return arch(elf)[0] + name


def sections(elf):
    sizes = {}
    for line in run([tool(elf, "size"), "-A", elf]).splitlines():
        parts = line.split()
        if len(parts) >= 2 and parts[0].startswith(".") and parts[1].isdigit():
            sizes[parts[0]] = int(parts[1])
    return sizes


def symbols(elf):
    """(name, size, type) of every sized symbol, mangled."""
    out = []
    for line in run([tool(elf, "nm"), "-S", elf]).splitlines():
        parts = line.split()
        if len(parts) == 4:
            out.append((parts[3], int(parts[1], 16), parts[2]))
    return out


def init_array_functions(elf):
    """The (mangled) names of the functions the image's .init_array lists, its static
    constructors: the words between the linker script's __init_array_start__ and
    __init_array_end__ (boards/common/sections.ld)."""
    at, bounds = {}, {}
    for line in run([tool(elf, "nm"), elf]).splitlines():
        parts = line.split()
        if len(parts) == 3 and parts[2] in ("__init_array_start__", "__init_array_end__"):
            bounds[parts[2]] = int(parts[0], 16)
        elif len(parts) == 3 and parts[1] in "tTwW":
            at.setdefault(int(parts[0], 16), parts[2])
    start, end = bounds.get("__init_array_start__"), bounds.get("__init_array_end__")
    if start is None or end is None:
        sys.exit("footprint: .init_array: the image has no __init_array_start__ and __init_array_end__")
    words = []
    if end > start:
        dump = run([tool(elf, "objdump"), "-s", f"--start-address={start:#x}", f"--stop-address={end:#x}", elf])
        for line in dump.splitlines():
            m = re.match(r"^ ([0-9a-f]+) ((?:[0-9a-f]{8} ?){1,4})", line)
            if m:
                words += [int.from_bytes(bytes.fromhex(w), "little") for w in m.group(2).split()]
    return {at[w & ~1] for w in words if (w & ~1) in at}  # an Arm function's address: bit 0 set (Thumb)


def function_files(elf, root):
    """{function: its source file} from the image's debug info (nm -l: the file of the
    function's own line), by mangled and by demangled name; a file inside the checkout
    (`root`) by its path relative to it, any other by its full path."""
    roots = checkout_roots(root)
    files = {}
    for line in run([tool(elf, "nm"), "-l", elf]).splitlines():
        m = re.match(r"^[0-9a-f]+ [tTwW] (\S+)\t(\S+):\d+$", line)
        if m:
            path = m.group(2)
            path = next((path[len(r):] for r in roots if path.startswith(r)), path)
            files.setdefault(m.group(1), path)
    names = sorted(files)
    for name, plain in zip(names, demangle(names, elf)):
        files.setdefault(plain, files[name])
    return files


def demangle(names, elf):
    if not names:
        return []
    # Xtensa's GCC names its clones with "$" (foo$constprop$0), which c++filt does not read:
    # the "." of the other targets.
    names = [re.sub(r"\$(constprop|isra|part|cold|lto_priv)\$(\d+)", r".\1.\2", n) for n in names]
    res = subprocess.run([tool(elf, "c++filt")], input="\n".join(names), capture_output=True, text=True, check=True)
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


def worst_stack(elf, ci_dir, bounded_recursion=None, tasks=(), asm_calls=(), pointer_calls=None,
                interrupt_entries=(), root=None):
    """The worst-case stack from reset (bare metal: main() and the request path, plus the
    deepest interrupt), or, with `tasks` ((label, entry) of an RTOS image's tasks), each task's
    from its entry (the scheduler enters it, never a call) and the main stack's, which serves
    main() until the scheduler starts and then the interrupts, each of which may nest on the
    others (their sum). `asm_calls` ((caller, callee, bytes)) are calls made from assembly,
    which the call graph does not show, with the bytes the caller pushes before the call.
    `pointer_calls` ({where: regex}): what calls through pointers may reach, the functions whose
    demangled name the regex finds (or, for the regex ".init_array", the functions that section
    lists: the static constructors the reset code calls; for "file:REGEX", the functions whose
    source file REGEX finds, by its path relative to the checkout `root` if it is inside), where
    by default any function only a pointer reaches may be; `where` is a function (its own pointer calls: the inbox's post
    reaches the platform's wake and critical section) or "task:LABEL" (every pointer call of that
    task's tree but those a function's rule names: lwIP's thread reaches lwIP's own functions
    and the port's callbacks, never the engine).
    `interrupt_entries`: the functions every interrupt comes in by, which do not nest (the one
    trap entry of FreeRTOS's RISC-V port), where by default every *_Handler is an interrupt's and
    each may nest on the others."""
    raw_frames, raw_dynamic, raw_edges = load_callgraph(ci_dir)
    code = [name for name, _, t in symbols(elf) if t in "tTwW"]
    # File-local functions are known by their demangled name in the call graph.
    in_image = set(code) | set(demangle(code, elf))
    canon = lambda t: canonical(t, in_image)
    frames, dynamic, edges = {}, set(), {}
    for t, fr in raw_frames.items():
        frames[canon(t)] = max(frames.get(canon(t), 0), fr)
    dynamic = {canon(t) for t in raw_dynamic}
    for src, dsts in raw_edges.items():
        edges.setdefault(canon(src), set()).update(canon(d) if d != "__indirect_call" else d for d in dsts)
    # An assembly function need not have a size (the kernel's RISC-V trap entry has none).
    unsized = {p[2] for p in (line.split() for line in run([tool(elf, "nm"), elf]).splitlines())
               if len(p) == 3 and p[1] in "tTwW"}
    in_image |= {caller for caller, _, _ in asm_calls if caller in unsized}
    for caller, callee, extra in asm_calls:
        if caller not in in_image or callee not in in_image:
            sys.exit(f"footprint: the assembly call {caller} -> {callee} names a function the image does not have")
        frames[caller] = frames.get(caller, 0) + extra
        edges.setdefault(caller, set()).add(callee)
    funcs = {f for f in frames if f in in_image}
    entries = {entry for _, entry in tasks}
    missing = sorted(entries - funcs)
    if missing:
        sys.exit("footprint: no task entry " + ", ".join(missing) + " in the image's call graph")
    called = {t for s in edges for t in edges[s] if s in funcs}
    roots_irq = [f for f in funcs if f.endswith("_Handler") and f != "Reset_Handler"]
    if interrupt_entries:
        missing = sorted(set(interrupt_entries) - funcs)
        if missing:
            sys.exit("footprint: no interrupt entry " + ", ".join(missing) + " in the image (give its calls: --asm-call)")
        roots_irq = sorted(interrupt_entries)
    # What only a function pointer (or the vector table) can reach; a task's entry is reached
    # by the scheduler alone.
    indirect = [f for f in sorted(funcs) if f not in called and f != "main" and not f.endswith("_Handler")
                and not f.startswith("_GLOBAL__sub_I") and f not in entries]
    notes = []
    memo = {}

    bounded_recursion = bounded_recursion or {}
    names = dict(zip(sorted(funcs), demangle(sorted(funcs), elf)))

    shorts = {}

    def short_name(f):
        # GCC's clones (foo.constprop.0, foo.isra.0, foo.part.0) are the function they clone.
        if f not in shorts:
            shorts[f] = re.sub(r"([.$](constprop|isra|part|cold|lto_priv)[.$]\d+)+$", "", short(names.get(f, f)))
        return shorts[f]

    def recursion_bound(f):
        return bounded_recursion.get(short_name(f).split("::")[-1], 0)

    # --pointer-call: what a function's calls through pointers, or a task's, can reach (the
    # platform's hooks, say), instead of every function only a pointer reaches. A target the
    # image does not link is not called. ".init_array": the functions that section lists (the
    # static constructors, which the reset code calls through pointers).
    pointer_calls = pointer_calls or {}
    constructors = init_array_functions(elf) if ".init_array" in pointer_calls.values() else set()
    files = function_files(elf, root or ROOT) if any(r.startswith("file:") for r in pointer_calls.values()) else {}

    def reach(regex):
        if regex == ".init_array":
            return [f for f in sorted(funcs) if f in constructors]
        if regex.startswith("file:"):
            return [f for f in sorted(funcs) if re.search(regex[len("file:"):], files.get(f, ""))]
        return [f for f in sorted(funcs) if re.search(regex, names.get(f, f))]
    pointer_targets = {where: reach(regex) for where, regex in pointer_calls.items() if not where.startswith("task:")}
    task_calls = {where[len("task:"):]: regex for where, regex in pointer_calls.items() if where.startswith("task:")}
    unknown = sorted(set(task_calls) - {label for label, _ in tasks})
    if unknown:
        sys.exit("footprint: --pointer-call names no --task " + ", ".join(unknown))

    # Returns (bytes, path, bounded, heads): heads, the functions at which a recursion of known
    # depth was cut below f, on the path above or at f. One above f makes the figure depend on
    # the path that reached f (then it is not memoized); f's own recursion does not, and f's
    # figure is then reused wherever f is called: a path that enters a cycle at another of its
    # functions and reaches f counts f's levels in full after its own (each function at most N
    # times deep, as --recursion says, where recounting path by path cut the cycle at the first
    # repeat; and recounting took 13 million calls for a TLS image, 25 s a link).
    def depth(f, path, allow_indirect=True, order=()):
        if f in path:
            n = recursion_bound(f)
            if n:
                # A recursion over constant tables of known depth (schemas): the cycle's frames
                # again for every further level.
                cycle = order[order.index(f):]
                return sum(frames.get(x, 0) for x in cycle) * (n - 1), [], True, frozenset((f,))
            notes.append("recursion through " + f)
            return 0, [f], False, frozenset()
        key = (f, allow_indirect)
        if key in memo:
            return memo[key]
        bounded = f not in dynamic
        heads = frozenset()
        best, best_path = 0, []
        path = path | {f}
        order = order + (f,)
        for callee in sorted(edges.get(f, ())):  # ties: the same path in every run
            if callee == "__indirect_call":
                if not allow_indirect:
                    continue
                for target in pointer_targets.get(short_name(f), indirect):
                    # A callback makes no pointer call of its own; its depth is its direct-call
                    # tree alone, whatever path reached the pointer call (a fresh path, so the
                    # memo, keyed by function and allow_indirect only, holds one true value).
                    d, p, b, c = depth(target, frozenset(), False, ())
                    bounded = bounded and b
                    heads = heads | c
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
            heads = heads | c
            if d > best:
                best, best_path = d, p
        heads = heads - {f}
        result = (frames.get(f, 0) + best, [f] + best_path, bounded, heads)
        if not heads:
            memo[key] = result
        return result

    root = "Reset_Handler" if "Reset_Handler" in funcs else "main"
    main_depth, main_path, main_bounded, _ = depth(root, set())
    exc_frame = arch(elf)[1]
    irq = [(depth(h, set())[0] + exc_frame, h) for h in roots_irq]
    irq_bounded = all(depth(h, set())[2] for h in roots_irq)
    irq_worst = max(irq) if irq else (0, "")
    out = {
        "main": main_depth,
        "main_path": demangle(main_path[:14], elf),
        "interrupt": irq_worst[0],
        "interrupt_handler": irq_worst[1],
        "total": main_depth + exc_frame + irq_worst[0] if irq else main_depth,
        "bounded": main_bounded and irq_bounded and not notes,
        "notes": sorted(set(notes)),
        "indirect_targets": len(indirect),
    }
    if tasks:
        # The main stack: main() until the scheduler starts (interrupts stay masked until
        # then), then the interrupts alone, every handler nested on the others at its
        # deepest (a bound: a handler never preempts itself), or, with entries that do not
        # nest, the deepest.
        nested = max((d for d, _ in irq), default=0) if interrupt_entries else sum(d for d, _ in irq)
        out["interrupts_nest"] = not interrupt_entries
        out["interrupt"] = nested
        out["interrupt_handler"] = "+".join(sorted(h for _, h in irq))
        out["total"] = max(main_depth, nested)
        out["tasks"] = []
        every_target = indirect
        for label, entry in tasks:
            calls = task_calls.get(label)
            if calls is not None:  # this task's pointer calls reach fewer functions: a fresh memo
                reached = set(reach(calls))
                indirect = [f for f in every_target if f in reached]
                memo.clear()
            d, p, b, _ = depth(entry, set())
            if calls is not None:
                indirect = every_target
                memo.clear()
            out["tasks"].append({"label": label, "entry": entry, "depth": d, "path": demangle(p[:14], elf),
                                 "bounded": b, **({"calls": calls} if calls is not None else {})})
    return out


ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))  # the checkout (tools/..)

PORT_PART = "FreeRTOS port: the owner task's wait, clock, wake, idle task memory (ports/freertos)"
LWIP_SYS_PART = "lwIP's sys_arch on FreeRTOS: static mailboxes, semaphores, mutexes, the core lock (ports/freertos/lwip)"
PARTS = [  # (label, pattern on a source path relative to the checkout), first match wins
    ("core: JSON reader, writer, tree, numbers", r"^core/(src|include/emcp)/json/"),
    ("core: JSON-RPC decoder and encoder", r"^core/(src|include/emcp)/jsonrpc/"),
    ("core: MCP server, content, schemas", r"^core/(src|include/emcp)/mcp/"),
    ("core: HTTP engine, WebSocket", r"^core/(src|include/emcp)/transport/(http|websocket)"),
    ("core: authorization (bearer tokens, JWT, metadata)", r"^core/(src|include/emcp)/auth/"),
    ("core: transports, utilities", r"^core/"),
    ("network: lwIP's HTTP port, NIC driver, board/net.h", r"^(ports/lwip/|boards/common/serve_net|boards/[^/]+/(lan9118|net)\.)"),
    ("board: start-up, UART, loop, mem*/str*", r"^boards/"),
    (LWIP_SYS_PART, r"^ports/freertos/lwip/"),
    (PORT_PART, r"^ports/freertos/"),
    ("application", r"^examples/"),
    ("TLS: emcp's layer, pool, credentials (ports/mbedtls)", r"^(ports/mbedtls/src/(tls|pool|jwt_key)|boards/common/credentials)"),
    ("lwIP (Debian's source): TCP, IPv4, ARP, DHCP, pools", r"^build/third_party/lwip/"),
    # Xtensa: the routines Debian's libgcc lacks, from GCC's source (cmake/EmcpXtensaLibgcc.cmake).
    ("libgcc: soft float, 64-bit arithmetic", r"^build/third_party/gcc/libgcc/"),
    ("Mbed TLS (Debian's source): SHA-1; TLS 1.2, X.509, ECP/RSA, AES-GCM, ChaCha20-Poly1305",
     r"^(build/third_party/mbedtls/|ports/mbedtls/)"),
]
KERNEL_PART = "FreeRTOS kernel: scheduler, lists, queues, notifications, its port (EMCP_FREERTOS_KERNEL_DIR)"
LIBRARY_PARTS = [  # (label, pattern on a path outside the checkout, or on a name without one)
    (KERNEL_PART, r"/FreeRTOS-Kernel[^/]*/"),  # without --kernel-dir: the kernel's own folder name
    ("lwIP (Debian's source): TCP, IPv4, ARP, DHCP, pools", r"/lwip[^/]*/src/"),
    ("Mbed TLS (Debian's source): SHA-1; TLS 1.2, X.509, ECP/RSA, AES-GCM, ChaCha20-Poly1305",
     r"/mbedtls[^/]*/library/"),
    # (Xtensa's assembly routines name their file without a folder in the line table.)
    ("libgcc: soft float, 64-bit arithmetic", r"libgcc|^(lib1funcs|ieee754-[sd]f)\.S$"),
    ("newlib: mem*, str*", r"newlib|libc"),
    ("static constructors (the server, transport and ring objects)", r"^_sub_I_"),
]
LABELS = list(dict.fromkeys(label for label, _ in PARTS + LIBRARY_PARTS))  # in order, once each


def part_of(path, roots, kernel_roots=()):
    """The part a source file (or, without one, a symbol name) belongs to. A file of the
    checkout is matched by its path relative to the checkout, so the checkout's own location
    (a folder named core/ or examples/ above it, say) never decides a part; libstdc++ headers
    belong to no part (their code counts for the function using them). A file under the RTOS
    kernel's folder (--kernel-dir), wherever that is, is the kernel's."""
    if any(path.startswith(k) for k in kernel_roots):
        return KERNEL_PART
    for root in roots:
        if path.startswith(root):
            rel = path[len(root):]
            return next((label for label, pattern in PARTS if re.search(pattern, rel)), None)
    if re.search(r"/c\+\+/\d", path):
        return None
    return next((label for label, pattern in LIBRARY_PARTS if re.search(pattern, path)), None)


def checkout_roots(root):
    """The checkout folder as the compiler may have recorded it: as given, and resolved."""
    roots = []
    for r in (os.path.abspath(root), os.path.realpath(root)):
        if r.rstrip("/") + "/" not in roots:
            roots.append(r.rstrip("/") + "/")
    return roots


def line_rows(elf):
    """(address, source path) of every row of the image's DWARF line table, sorted: the file
    each instruction comes from, inlined code included (it keeps its own file and line)."""
    rows, cur, full = [], None, {}
    for line in run([tool(elf, "objdump"), "--dwarf=decodedline", elf]).splitlines():
        m = re.match(r"^(/\S+):$", line)  # the file the following rows are in
        if m:
            cur = m.group(1)
            full[os.path.basename(cur)] = cur
            continue
        m = re.match(r"^(\S+)\s+\d+\s+(0x[0-9a-f]+)", line)
        if m and cur:  # a row names its file by base name; the full path came with a header
            path = cur if cur.endswith("/" + m.group(1)) else full.get(m.group(1), m.group(1))
            rows.append((int(m.group(2), 16), path))
    # By address alone: rows at one address keep the line table's order, where the last one is
    # the instruction's (the others cover no byte). Sorted by path too, the row that won
    # depended on where the checkout is (/work/main sorts before /work/shared, the kernel's
    # folder, /work/wt-x after it).
    rows.sort(key=lambda row: row[0])
    return rows


DATA_PARTS = [  # (label, pattern on a data object's name) when no line info says its file
    ("core: JSON reader, writer, tree, numbers", r"^emcp::[^:]+::json::"),
    ("core: JSON-RPC decoder and encoder", r"^emcp::[^:]+::jsonrpc::"),
    ("core: MCP server, content, schemas", r"^emcp::[^:]+::mcp::"),
    ("board: start-up, UART, loop, mem*/str*", r"^(emcp::board::|g_vectors$)"),  # before emcp::
    ("core: transports, utilities", r"^emcp::"),
    ("lwIP (Debian's source): TCP, IPv4, ARP, DHCP, pools",
     r"^(memp_|lwip_|tcp_|udp_|ip4?_|ip_addr_|netif_|etharp|dhcp|pbuf_|ethbroadcast|ethzero)"),
    ("Mbed TLS (Debian's source): SHA-1; TLS 1.2, X.509, ECP/RSA, AES-GCM, ChaCha20-Poly1305",
     r"^(mbedtls_|FSb|RSb|FT[0-3]|RT[0-3]|secp256r1_|oid_|ciphersuite|x509_|ecp_|base64_|last_error)"),
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


def flash_parts(elf, flash, root=ROOT, kernel_dir=""):
    """Flash by part. Code by the source file of each instruction (the line table: code that
    link-time optimization inlined into another file's function still counts for its own
    file); read-only data objects by the file that defines them (-g symbol info), else by
    their namespace (emcp::json, emcp::board::, the application's own names); string literals by
    the part that refers to them (string_literals); compiler tables and padding remain. Files
    are told apart by their path inside the checkout (`root`), wherever it is."""
    roots = checkout_roots(root)
    kernel_roots = checkout_roots(kernel_dir) if kernel_dir else []

    def part_of_path(path):
        return part_of(path, roots, kernel_roots)

    sums = {label: 0 for label in LABELS}
    rows = line_rows(elf)
    if not any(path.startswith(r) for _, path in rows for r in roots):
        sys.exit(f"footprint: no code of {elf} comes from a file under {root}: "
                 "--root must name the checkout the image was built from")
    addrs = [a for a, _ in rows]
    seen = set()
    funcs = set()
    spans = []  # (start, size, part) of every function and named object
    for line in run([tool(elf, "readelf"), "-sW", elf]).splitlines():
        parts = line.split()
        if len(parts) >= 8 and parts[3] == "FUNC" and parts[6] != "UND":
            funcs.add(int(parts[1], 16) & ~1)  # Thumb functions have bit 0 set
    unsized = {}  # code symbols without a size (assembly): start -> the part of their file
    for line in run([tool(elf, "nm"), "-S", "-l", "-C", elf]).splitlines():  # demangled
        parts = line.split(None, 3)
        if len(parts) == 4 and len(parts[1]) == 1 and parts[1] in "Tt":
            m = re.search(r"\t(\S+):\d+$", line)
            if m:
                unsized.setdefault(int(parts[0], 16), part_of_path(m.group(1)))
        if len(parts) < 4 or parts[2] not in "TtRrWV" or parts[0] in seen:
            continue
        seen.add(parts[0])
        start, size = int(parts[0], 16), int(parts[1], 16)
        m = re.search(r"\t(\S+):\d+$", parts[3])
        own = part_of_path(m.group(1) if m else m_name(parts[3]))  # no line info: by its name
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
            label = part_of_path(rows[i][1]) or own
        j = bisect.bisect_right(addrs, start)
        while j < len(rows) and rows[j][0] < end:
            if label:
                sums[label] += rows[j][0] - pos
            pos, label = rows[j][0], part_of_path(rows[j][1]) or own
            j += 1
        if label:
            sums[label] += end - pos

    def part_at(addr):  # the part of the line row an instruction belongs to
        i = bisect.bisect_right(addrs, addr) - 1
        return part_of_path(rows[i][1]) if i >= 0 else None

    # Code symbols without a size, outside every sized function (assembly: the RISC-V port's
    # trap entry), by the file nm gives them (the assembler's line table may name a file
    # without its folder: binutils 2.40 and GAS's DWARF 5): from the symbol to the next one or
    # to the end of its line-table sequence, whichever comes first (alignment padding after
    # the code is not its).
    covered = sorted((start, start + size) for start, size, _ in spans)
    starts = sorted({start for start, _, _ in spans} | set(unsized))
    ends = sequence_ends(elf) if unsized else []
    for start, label in sorted(unsized.items()):
        i = bisect.bisect_right(covered, (start, float("inf"))) - 1
        if not label or (i >= 0 and covered[i][0] <= start < covered[i][1]):
            continue
        k = bisect.bisect_right(starts, start)
        e = bisect.bisect_right(ends, start)
        stop = min(starts[k] if k < len(starts) else start, ends[e] if e < len(ends) else start)
        sums[label] += max(stop - start, 0)

    for label, n in string_literals(elf, spans, part_at, funcs).items():
        sums[label] += n
    rest = flash - sum(sums.values())
    out = [[label, n] for label, n in sums.items() if n]
    out.append(["other unnamed data: compiler tables, padding", rest])
    return out


def sequence_ends(elf):
    """The addresses where the image's line-table sequences end (past their last instruction),
    sorted."""
    out = run([tool(elf, "objdump"), "--dwarf=decodedline", elf])
    return sorted({int(m.group(1), 16) for m in re.finditer(r"^\S+\s+-\s+(0x[0-9a-f]+)", out, re.M)})


def string_literals(elf, spans, part_at, funcs=frozenset()):
    """Bytes of the string literals each part refers to. A literal is unnamed read-only data
    that a word of a function (its literal pool) or of a named object (a table's pointer)
    points at: a NUL-terminated run counted once, for the first part that refers to it."""
    text = None
    for line in run([tool(elf, "readelf"), "-SW", elf]).splitlines():
        m = re.match(r"\s*\[\s*\d+\]\s+\.text\s+\S+\s+([0-9a-f]+)\s+[0-9a-f]+\s+([0-9a-f]+)", line)
        if m:
            text = (int(m.group(1), 16), int(m.group(2), 16))
    if text is None:
        return {}
    base, size = text
    # Into a file of its own: objcopy writes a temporary file and renames it over its output,
    # which, run as root with /dev/stdout as the output, replaces the system's /dev/stdout.
    with tempfile.TemporaryDirectory() as tmp:
        out = os.path.join(tmp, "text.bin")
        run([tool(elf, "objcopy"), "-O", "binary", "-j", ".text", elf, out])
        with open(out, "rb") as fh:
            data = fh.read()
    named = sorted((a, a + n) for a, n, _ in spans)
    starts = [a for a, _ in named]

    def unnamed(addr):
        i = bisect.bisect_right(starts, addr) - 1
        return i < 0 or addr >= named[i][1]

    # A literal-pool word belongs to the part of the instruction that loads it (with
    # link-time optimization a function's pool serves code inlined from several files).
    # RISC-V code has no literal pools: an instruction pair (lui or auipc, then addi) makes the
    # literal's address itself, which objdump resolves ("# address"); such an instruction
    # refers to the literal for its part, and only named objects are read for pointers.
    # Xtensa's literal pools (-mtext-section-literals) precede their function, outside any named
    # span: each l32r names its literal's address, whose word is then the reference.
    riscv = arch(elf)[0].startswith("riscv")
    xtensa = arch(elf)[0].startswith("xtensa")
    loader, direct = {}, []
    for line in run([tool(elf, "objdump"), "-d", elf]).splitlines():
        if xtensa:
            m = re.match(r"^\s*([0-9a-f]+):.*\sl32r\s+a\d+, ([0-9a-f]+)", line)
            if m and 0 <= int(m.group(2), 16) - base <= size - 4:
                off = int(m.group(2), 16) - base
                direct.append((int(m.group(1), 16), int.from_bytes(data[off:off + 4], "little")))
            continue
        if riscv:
            m = re.match(r"^\s*([0-9a-f]+):\s.*\sadd\S*\s.*# ([0-9a-f]+)", line)
            if m:
                direct.append((int(m.group(1), 16), int(m.group(2), 16)))
            continue
        m = re.match(r"^\s*([0-9a-f]+):.*\s(?:ldr|adr|add)\S*\s.*@ \(([0-9a-f]+)", line)
        if m:
            loader.setdefault(int(m.group(2), 16), part_at(int(m.group(1), 16)))

    def words():  # (where, the word, its part) of every aligned word of a function or object
        for start, n, own in sorted(spans):
            if (riscv or xtensa) and start in funcs:
                continue
            for off in range(start - base + (-start) % 4, start - base + n - 3, 4):
                label = loader.get(base + off) or own
                if label:
                    yield base + off, int.from_bytes(data[off:off + 4], "little"), label

    refs = words()
    if riscv or xtensa:
        refs = sorted(list(refs) + [(a, t, part_at(a)) for a, t in direct if part_at(a)], key=lambda r: r[0])
    out, taken = {}, set()
    for _, target, label in refs:
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


# configCHECK_FOR_STACK_OVERFLOW 2 (ports/freertos/config/emcp_freertos_config.h): the kernel
# halts the image when a task's lowest 16 stack bytes lose their paint, so a task's worst case
# must leave them.
TASK_GUARD = 16


def parse_triples(items, form, last=r"[^=:]+"):
    """Option values of the form A=B:C -> [(a, b, c)]: --task LABEL=ENTRY:STACK_SYMBOL (the
    task's label, its entry function, its static stack), --asm-call CALLER=CALLEE:BYTES."""
    out = []
    for item in items or []:
        m = re.match(rf"^([^=:]+)=([^=:]+):({last})$", item)
        if not m:
            sys.exit(f"footprint: {item}: expected {form}")
        out.append(m.groups())
    return out


def object_sizes(elf):
    """{name: size} of the image's sized symbols, by mangled and by short demangled name."""
    syms = symbols(elf)
    sizes = {n: sz for n, sz, _ in syms}
    for (_, sz, _), d in zip(syms, demangle([n for n, _, _ in syms], elf)):
        sizes.setdefault(short(d), sz)
    return sizes


def interrupts_how(main_stack):
    """How an RTOS image's main stack counts its interrupts (reports made before the key: nested)."""
    return "nested" if main_stack.get("interrupts_nest", True) else "(they do not nest)"


def rtos_stacks(args, stack, stack_region, tasks, problems):
    """An RTOS image's stacks: each task's (its static stack against its entry's worst case,
    the context a switched-out task keeps and the overflow check's guard), and the main
    stack's (main() until the scheduler starts, then every interrupt nested). Returns the
    report's "rtos" object; the report's "stack" becomes the first task's (the request path)."""
    if args.task_context <= 0:
        sys.exit("footprint: --task needs --task-context (what a switched-out task keeps on its stack)")
    sizes = object_sizes(args.elf)
    out = {"kernel_dir": args.kernel_dir or "", "task_context": args.task_context, "guard": TASK_GUARD, "tasks": []}
    for (label, entry, symbol), t in zip(tasks, stack.pop("tasks")):
        if symbol not in sizes:
            sys.exit(f"footprint: the stack {symbol} of the task {label} is not an object of the image")
        need = t["depth"] + args.task_context + TASK_GUARD
        out["tasks"].append(dict(t, stack_symbol=symbol, stack=sizes[symbol], need=need))
        if not t["bounded"]:
            problems.append(f"the task {label}'s worst-case stack is unbounded: " + "; ".join(stack["notes"] or ["a dynamic frame"]))
        elif need > sizes[symbol]:
            problems.append(f"the task {label}'s worst case {need} B ({entry} {t['depth']} + its context {args.task_context} "
                            f"+ the overflow guard {TASK_GUARD}) does not fit its stack {symbol} of {sizes[symbol]} B")
    out["main_stack"] = {"region": stack_region, "main": stack["main"], "main_path": stack["main_path"],
                         "interrupts": stack["interrupt"], "handlers": stack["interrupt_handler"], "total": stack["total"],
                         "interrupts_nest": stack.pop("interrupts_nest")}
    if not stack["bounded"]:
        problems.append("the main stack's worst case is unbounded: " + "; ".join(stack["notes"] or ["a dynamic frame"]))
    elif stack["total"] > stack_region:
        problems.append(f"the main stack's worst case {stack['total']} B (main() {stack['main']}, the interrupts "
                        f"{interrupts_how(out['main_stack'])} {stack['interrupt']}) does not fit its region of {stack_region} B")
    owner = out["tasks"][0]
    stack.update({"main": owner["depth"], "main_path": owner["path"], "path_skip": 1, "interrupt": args.task_context,
                  "interrupt_handler": "the context a switched-out task keeps", "total": owner["depth"] + args.task_context,
                  "bounded": owner["bounded"]})
    return out


def image(args):
    sec = sections(args.elf)
    flash = sec.get(".text", 0) + sec.get(".ARM.exidx", 0) + sec.get(".data", 0)
    ram = sec.get(".data", 0) + sec.get(".bss", 0)
    stack_region = sec.get(".stack", 0)
    syms = [s for s in symbols(args.elf) if s[2] in "bBdD"]
    syms.sort(key=lambda s: -s[1])
    # The six biggest, and every other of 256 bytes or more (a network image's pools and
    # buffers are named one by one).
    top = [x for i, x in enumerate(syms) if i < 6 or x[1] >= 256]
    names = demangle([s[0] for s in top], args.elf)
    bounds = {}
    for item in args.recursion or []:
        name, _, n = item.partition("=")
        bounds[name] = int(n)
    tasks = parse_triples(args.task, "--task LABEL=ENTRY:STACK_SYMBOL")
    asm_calls = [(caller, callee, int(n))
                 for caller, callee, n in parse_triples(args.asm_call, "--asm-call CALLER=CALLEE:BYTES", r"\d+")]
    pointer_calls = {}
    for item in args.pointer_call or []:
        where, _, regex = item.partition("=")
        if not where or not regex or where in pointer_calls:
            sys.exit(f"footprint: --pointer-call {item}: expected one WHERE=REGEX per function or task:LABEL")
        pointer_calls[where] = regex
    stack = worst_stack(args.elf, args.ci_dir, bounds, [(label, entry) for label, entry, _ in tasks], asm_calls,
                        pointer_calls, args.interrupt_entry or (), args.root)
    problems = []
    rtos = None
    if tasks:
        rtos = rtos_stacks(args, stack, stack_region, tasks, problems)
        stack_region = rtos["tasks"][0]["stack"]
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
        "flash_target": args.flash_target,
        "ram_target": args.ram_target,
        "options": args.option or [],
        "compiler": args.compiler,
        "cpu_flags": args.cpu_flags,
        "flash_parts": flash_parts(args.elf, flash, args.root, args.kernel_dir),
        "documented": not args.not_documented,
    }
    if rtos:
        report["rtos"] = rtos
    if args.flash_budget and flash > args.flash_budget:
        problems.append(f"flash {flash} B is over its budget of {args.flash_budget} B")
    if args.ram_budget and ram > args.ram_budget:
        problems.append(f"static RAM {ram} B is over its budget of {args.ram_budget} B")
    # (An RTOS image's stacks, every task's and the main stack, were checked by rtos_stacks().)
    if not rtos and not stack["bounded"]:
        problems.append("the worst-case stack is unbounded: " + "; ".join(stack["notes"] or ["a dynamic frame"]))
    elif not rtos and stack["total"] > stack_region:
        problems.append(f"worst-case stack {stack['total']} B does not fit the stack region of {stack_region} B")
    report["problems"] = problems
    if args.json:
        with open(args.json, "w", encoding="utf-8") as fh:
            json.dump(report, fh, indent=1)
    kib = lambda n: f"{n / 1024:.1f} KiB"
    print(f"{args.name} ({args.board}): flash {flash} B ({kib(flash)}), static RAM {ram} B ({kib(ram)}), "
          f"worst-case stack {stack['total']} B (main {stack['main']} + interrupt {stack['interrupt']}) of {stack_region} B")
    for t in (rtos or {}).get("tasks", []):
        print(f"  task {t['label']} ({t['entry']}): worst case {t['need']} B of its stack {t['stack_symbol']}, {t['stack']} B")
    if rtos:
        m = rtos["main_stack"]
        print(f"  main stack: worst case {m['total']} B (main() {m['main']}, the interrupts {interrupts_how(m)} "
              f"{m['interrupts']}) of {m['region']} B")
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


# ---- docs/footprint.md and README.md's footprint regions ------------------------------------------
#
# The document is a fixed header (below) and one section per board, each written from that
# board's reports alone, so a board's ctest (footprint_doc_is_current) can write again and
# compare the header and its own section, word for word; the three boards' runs together cover
# every line. The figures of README.md and other documents (DOC_REGIONS) sit in marked regions
# (<!-- footprint:begin NAME --> ... <!-- footprint:end NAME -->), each written from one board's
# reports and checked by its run.

BOARDS = [  # (board, what it is): the document's sections in this order; scripts/footprint builds them
    ("mps2-an385", "Arm MPS2 with the AN385 image (QEMU `-M mps2-an385`)"),
    ("stm32f4", "STM32F405/407 (QEMU `-M netduinoplus2`, Discovery and Nucleo boards)"),
    ("microbit", "BBC micro:bit v1, nRF51822 (QEMU `-M microbit`)"),
    ("hifive1", "SiFive HiFive1, FE310, RV32IMAC (QEMU `-M sifive_e`)"),
    ("lx106-sim", "Xtensa lx106, the ESP8266's core (QEMU `-M sim -cpu lx106`)"),
]
BOARD_NOTES = {  # what a board's section says about its budgets and options (no figures: those come from reports)
    "lx106-sim": "Xtensa code (call0 ABI, 16- and 24-bit instructions, literal pools before each "
                 "function, `-mlongcalls` as ESP-IDF builds) with the soft-float and division "
                 "routines built from GCC's source (Debian's libgcc for the target lacks them). The "
                 "budgets are the measured sizes rounded up to the KiB.",
    "mps2-an385": "The budgets of the minimal server are set on this Cortex-M3; the other boards' "
                  "budgets follow from them. What each feature adds to an image is measured here too "
                  "(the last table).",
    "stm32f4": "The minimal image's budget is above the Cortex-M3's by what this chip adds: a "
               "longer vector table and the PLL start-up.",
    "microbit": "Thumb-1 code (ARMv6-M) is larger: fewer registers most instructions reach, no IT "
                "blocks, no hardware divide (libgcc's division); the budgets are higher for it. The "
                "sensors image is built with a smaller message arena (options column) to fit the "
                "chip's RAM beside its stack region.",
    "hifive1": "RV32IMAC code with compressed instructions is larger than Thumb-2 (no load/store "
               "multiple; an address takes two instructions); the budgets are higher for it. The "
               "sensors image has the micro:bit's options (16 KiB of RAM here too).",
}

DESCRIPTIONS = {  # what an image is, when its name does not say it all
    "emcp-sensors-net": "the sensors example, unchanged, on the UART and over HTTP through lwIP at once "
                        "(Streamable HTTP, HTTP+SSE, WebSocket; 4 connections with 2 KiB arenas and 1 KiB "
                        "output buffers, 2 sessions with 1.5 KiB replay buffers; lwIP's pools below as "
                        "`memp_memory_*`, its heap for output segments as `ram_heap`; `g_http` holds the "
                        "connections and sessions)",
    "emcp-sensors-tls": "the sensors example over HTTPS and WSS (TLS 1.2 through the TLS layer over lwIP) "
                        "and its UART: 2 connections, 2 sessions; Mbed TLS's memory is the 24 KiB pool "
                        "`g_tls_pool` (the parsed certificate and P-256 key 2.5 KiB, an established "
                        "connection 7.7 KiB with 4 KiB input and 2 KiB output records, a handshake 2.8 KiB "
                        "more: `device_stats` reports them); the certificate and key, and bearer-token "
                        "authorization (static tokens, a JWT key: Authorization headers up to 1 KiB), are "
                        "provisioned in the board's credentials region, not in the image",
    "emcp-everything": "the conformance suite's fixtures on the UART and over HTTP through lwIP "
                       "(8 connections, 8 sessions: the suite's clients each hold streams; not sized "
                       "for a small device)",
}

VARIANTS = {  # an image built to measure another one differently: (that image, what it is)
    "emcp-sensors-net8": ("emcp-sensors-net", "the same with 8 connections and 8 sessions (the load "
                          "test's 8 clients each hold a session)"),
    "emcp-minimal-strings": ("emcp-minimal", "the minimal server with every error text"),
    "emcp-minimal-dual": ("emcp-minimal", "the minimal server serving MCP 2026-07-28 (stateless) "
                          "requests beside the legacy sessions (EMCP_MODERN_ERA=1, the default)"),
    "emcp-minimal-modern": ("emcp-minimal", "the minimal server serving MCP 2026-07-28 alone "
                            "(EMCP_LEGACY_ERA=0: no initialize, no session state, no requests to the "
                            "client, no notification queue), the mirror of emcp-minimal's legacy sessions"),
    "emcp-sensors-modern": ("emcp-sensors", "the sensors example serving MCP 2026-07-28 alone "
                            "(EMCP_LEGACY_ERA=0: no initialize, no session state, no requests to the "
                            "client; so no InputBridge and no roots hook, which only older clients use)"),
    "emcp-sensors-tls4": ("emcp-sensors-tls", "the same with 4 connections, input records of TLS's full "
                          "16 KiB and an 88 KiB pool (the SDK client's tests: a client sends a 6 KB answer "
                          "as one record)"),
    "emcp-sensors-rtos": ("emcp-sensors", "the sensors example, unchanged, under FreeRTOS (ports/freertos): the "
                          "bare-metal loop in the task that owns the server, a sensor task sampling on the "
                          "kernel's timer beside it"),
    "emcp-sensors-net-rtos": ("emcp-sensors-net", "the sensors network image, unchanged, under FreeRTOS "
                              "(ports/freertos): lwIP in its own thread (tcpip_thread, NO_SYS 0, the core "
                              "lock the owner task holds but while it waits), the NIC's receive task handing "
                              "frames to it, the sensor task beside"),
    "emcp-sensors-tls-rtos": ("emcp-sensors-tls", "the sensors TLS image, unchanged, under FreeRTOS as "
                              "emcp-sensors-net-rtos is (the TLS layer and Mbed TLS in the owner task, "
                              "over lwIP's raw API under the core lock)"),
    "emcp-sensors-tls4-rtos": ("emcp-sensors-tls4", "the 4-connection TLS image, unchanged, under FreeRTOS "
                               "as emcp-sensors-tls-rtos is"),
    "emcp-sensors-lean": ("emcp-sensors", "the sensors example without its four tools that ask the "
                          "client (sampling, elicitation, roots) or send PNG/WAV content, and without "
                          "the roots hook"),
}

HEADER = f"""# Firmware footprint

Generated by `scripts/footprint` (`tools/footprint.py write-doc`) from the reports
`tools/footprint.py` writes after each firmware link (`build/<board>/bin/<image>.footprint.json`);
do not edit by hand. Each board's `footprint_doc_is_current` test (`ctest --preset <board> -R
footprint`) writes this header and the board's section again from its build and fails on any
difference: every line here is checked, the header by every board, a section by its board.

All images: `-Os -ffunction-sections -fdata-sections`, link-time optimization (`-flto`, one
partition), `--gc-sections`; Cortex-M with `arm-none-eabi-g++` and newlib-nano, RV32 with
Debian's `riscv64-unknown-elf-g++` for `rv32imac/ilp32` and picolibc (each section names its
compiler and CPU flags); the options column names what an image sets beyond the defaults of
`emcp/opt.h` and of its example.

- **flash**: `.text` (code, read-only data, the vector table) + `.ARM.exidx` + the initial
  values of `.data`.
- **static RAM**: `.data` + `.bss`; the stack region is not included (last column). The
  transport object (`g_link`) holds the message arena, the JSON reader and decoder and the
  output buffer; `g_rx` is the UART receive ring.
- **worst-case stack**: from GCC's `-fcallgraph-info=su` of the image's own link: the deepest
  call path from reset through the request handling, every call through a function pointer
  charged with the deepest function only a pointer can reach, library functions without a
  frame record charged {LIBRARY_FRAME} bytes, plus the deepest interrupt handler with its exception frame
  ({EXC_FRAME} bytes). **Not a bound**: a function reached through a pointer is charged its
  direct calls only (where `--pointer-call` names no targets), so a pointer call inside a
  callback is not followed. A tool's handler (called through a pointer) whose answer drains
  through an HTTP connection's writer (another pointer) goes deeper: the `snapshot` tool's
  image, base64 through `HttpServer::conn_flush`, takes the owner task of the FreeRTOS network
  image below this figure (the SDK feature test over HTTP prints both). Following every such
  call by type makes the writers reach themselves again (a sink's writer
  writes into a sink of its own) and over-counts by some 4 KiB. What a run uses is measured in
  QEMU, not by the build: the soak of `tests/mcp/board_uart.test.mjs` (`board_uart_noise_soak`)
  prints the painted stack's high-water mark (the `device_stats` tool); the FreeRTOS images
  report every task's (`device_stats`' `tasks`), which the SDK feature tests and the limits
  soak check against the stacks' sizes and print beside this figure.
- **an image under FreeRTOS** (`emcp_add_firmware(... RTOS freertos)`, [ports/freertos](../ports/freertos)):
  each task's stack is a static array, part of its static RAM; each task's worst case is
  computed from its entry function (the scheduler enters it; no call does), with what a
  task the kernel switched out keeps on its stack and the bytes the kernel's overflow check
  keeps painted, and checked against that array after every link. The stack columns are the
  task's that serves requests (its stack for the region); interrupts run on the main stack
  (the linker's stack region), which serves main() until the scheduler starts and then the
  interrupts alone, counted with every handler nested on the others (on RISC-V, where they
  come in by the kernel's one trap entry and do not nest, at that entry's deepest). The
  kernel's code is a part of its own in the flash table.
- **budget**: `FLASH_BUDGET` / `RAM_BUDGET` of `emcp_add_firmware()` where the image is declared (`examples/<name>/firmware.cmake`)
  (per board in `boards/<board>/board.cmake`): an image's link fails when it is over one
  (`footprint_budget_enforced` proves the check fails). A `FLASH_TARGET` is a goal the section
  compares the image with, not enforced.
- **where the flash goes**: code by the source file each instruction comes from (the DWARF
  line table, so code that link-time optimization inlined into another file's function counts
  for its own file; files by their path inside the checkout; assembly without a symbol size,
  by the file the symbol table names), named read-only data by where it is defined (or its
  namespace), string literals by the part whose code or table refers to them first; compiler
  tables and padding in the last row.
- **against a target**: for an image with a target, what its application, the soft-float and
  64-bit arithmetic, newlib, the board and the compiler's tables take, and what that leaves of
  the target for the core, beside the core the image links (for the sensors example over HTTP:
  resources with templates and subscriptions, prompts, completion, sampling, elicitation,
  roots, progress, deferred calls, binary content, numbers both ways, the HTTP engine) and the
  core of the board's minimal image (one tool).
- **what each feature adds**: the minimal server with one feature more per image
  (`examples/features`), each measured against the image it adds to: what to budget for a
  feature before building an image with it.
"""


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


def image_order(r):
    """Each image, then the variants measured against it."""
    base = base_name(r)
    family = VARIANTS.get(base, (base,))[0]
    return (family, base != family, r["name"])


def options_text(r, none="the default options"):
    return ", ".join(f"`{o}`" for o in r.get("options", [])) or none


def budgets_met(r):
    """True when the image is within its flash and static RAM budgets (those it has)."""
    fb, rb = r.get("flash_budget") or 0, r.get("ram_budget") or 0
    return (not fb or r["flash"] <= fb) and (not rb or r["ram"] <= rb)


def core_bytes(r):
    return sum(n for l, n in r["flash_parts"] if l.startswith(("core:", "static constructors")))


def image_notes(r, by_base):
    """What the section says about one image: what a variant measures, its budgets, its target."""
    notes = []
    base = base_name(r)
    if base in VARIANTS and VARIANTS[base][0] in by_base:
        of, what = VARIANTS[base]
        other = by_base[of]
        delta = r["flash"] - other["flash"]
        notes.append(f"{what}, built with {options_text(r)} where {other['name']} has "
                     f"{options_text(other)}: {r['flash']:,} B ({kib(r['flash'])}) of flash, "
                     f"{abs(delta):,} B {'more' if delta >= 0 else 'less'}")
    fb, rb = r.get("flash_budget") or 0, r.get("ram_budget") or 0
    if fb or rb:
        bits = []
        if fb:
            bits.append(f"flash {r['flash']:,} B of its {fb:,} B budget")
        if rb:
            bits.append(f"static RAM {r['ram']:,} B of its {rb:,} B")
        notes.append(", ".join(bits) + (": **met**" if budgets_met(r) else ": **over**"))
    if base in DESCRIPTIONS:
        notes.insert(0, DESCRIPTIONS[base])
    for what, key, value in (("flash", "flash_target", r["flash"]), ("static RAM", "ram_target", r["ram"])):
        target = r.get(key) or 0
        if target:
            over = value - target
            notes.append(f"{what} against its target of {target:,} B ({kib(target)}): "
                         + ("**met**" if over <= 0 else f"**not met**, {over:,} B ({kib(over)}) over"))
    if "rtos" in r:
        notes.append(rtos_note(r, by_base.get(VARIANTS.get(base, (None,))[0])))
    if len(r["ram_objects"]) > 6:
        notes.append("its static RAM by object: " + ", ".join(f"`{short(n)}` {sz:,}" for n, sz in r["ram_objects"]))
    return notes


def changed_options(r, other):
    """The options `r` sets to another value than `other` does, as text ("" when none): what,
    beside the kernel and its tasks, makes an RTOS image's RAM differ from its bare-metal one's."""
    theirs = dict(o.partition("=")[::2] for o in other.get("options", []))
    changed = [(n, v, theirs[n]) for n, _, v in (o.partition("=") for o in r.get("options", []))
               if n in theirs and theirs[n] != v]
    return ", ".join(f"`{n}={v}` where {other['name']} has `{n}={was}`" for n, v, was in changed)


def rtos_note(r, other):
    """An RTOS image's kernel, tasks and stacks, and (`other`: the bare-metal image it is
    measured against) where its flash and static RAM beyond that image go."""
    rt, parts = r["rtos"], dict(r["flash_parts"])
    tasks, main = rt["tasks"], rt["main_stack"]
    kernel, port = parts.get(KERNEL_PART, 0), parts.get(PORT_PART, 0)
    stacks = sum(t["stack"] for t in tasks)
    text = (f"under FreeRTOS, the kernel's code takes {kernel:,} B of its flash and ports/freertos's {port:,} B; "
            "its tasks, each with a static stack (its worst case from the task's entry, with the "
            f"{rt['task_context']} B a switched-out task keeps, its context and what the kernel leaves unused at the "
            f"stack's top, and the {rt['guard']} B the overflow check keeps painted): " + ", ".join(f"`{t['label']}` (`{t['entry']}`, `{t['stack_symbol']}` {t['stack']:,} B: worst case "
                                     f"{t['need']:,} B)" for t in tasks)
            + f"; the stack columns are the task `{tasks[0]['label']}`'s, which serves requests; the main stack "
            f"({main['region']:,} B, not static RAM) serves main() until the scheduler starts ({main['main']:,} B) "
            f"and then the interrupts alone ({main['interrupts']:,} B "
            + ("with every handler nested)" if main.get("interrupts_nest", True)
               else "at the deepest: its one trap entry, they do not nest)"))
    if other is not None:
        df, dr = r["flash"] - other["flash"], r["ram"] - other["ram"]
        text += (f"; against {other['name']}: flash {df:+,} B (the kernel and the port {kernel + port:,} B, the rest "
                 f"{df - kernel - port:+,} B: what it does not link, the bare-metal clock and wait, and link-time "
                 f"optimization's other choices around them), static RAM {dr:+,} B (the tasks' stacks {stacks:,} B, "
                 f"the rest {dr - stacks:+,} B: the tasks' control blocks, the kernel's lists and counters"
                 + (f"; and its options: {changed_options(r, other)}" if changed_options(r, other) else "")
                 + f"), RAM with the main stacks {dr + main['region'] - other['stack_region']:+,} B (its main stack "
                 f"{main['region']:,} B, {other['name']}'s {other['stack_region']:,} B)")
    return text


FEATURE_PREFIX = "emcp-feature-"
FEATURES = [  # (image or "image-a - image-b", what it measures, the image it is measured against)
    ("emcp-feature-params", "tools with parameters: one tool with a boolean, an integer and a number "
     "with ranges, and a string of an enumeration, checked against its schema before the handler runs",
     "emcp-feature-base"),
    ("emcp-feature-resources", "resources: two fixed ones and a URI template with a variable "
     "(resources/list, read, templates/list, subscribe)", "emcp-feature-base"),
    ("emcp-feature-prompts", "prompts: one with two arguments (prompts/list, get)", "emcp-feature-base"),
    ("emcp-feature-completion", "completion of a prompt's argument (completion/complete), on top of prompts",
     "emcp-feature-prompts"),
    ("emcp-feature-logging", "logging: the tool sends a log message (notifications/message; logging/setLevel "
     "is in every server)", "emcp-feature-base"),
    ("emcp-feature-client_requests", "requests to the client: a tool that asks the user (elicitation) through "
     "input(), in both eras: input-required results with their signed requestState for 2026-07-28, the "
     "InputBridge (one slot) for older sessions", "emcp-feature-base"),
    ("emcp-feature-http", "HTTP: the same server over Streamable HTTP and HTTP+SSE through lwIP as well as on "
     "the UART (4 connections, 2 sessions: the HTTP engine, lwIP with its pools and heap, the NIC driver, "
     "the listener)", "emcp-feature-base"),
    ("emcp-feature-websocket", "WebSocket (/ws), on top of HTTP: the handshake's SHA-1 from Mbed TLS (the "
     "framing is part of the HTTP engine)", "emcp-feature-http"),
    ("emcp-sensors-tls", "TLS (HTTPS, WSS), from the sensors example over HTTP to the same over HTTPS: Mbed "
     "TLS (TLS 1.2, X.509, ECDSA/RSA, AES-GCM, ChaCha20-Poly1305), emcp's TLS layer, the credentials region, "
     "bearer-token authorization; 2 connections where the HTTP image has 4", "emcp-sensors-net"),
]


def part_short(label):
    """A part's label to its first words: "core: MCP server", "lwIP"."""
    head, _, rest = label.partition(": ")
    name = f"core: {rest}" if head == "core" else head
    return name.split(" (")[0].split(",")[0]


def feature_section(by_base):
    """The table of what each feature adds, from the feature images (examples/features) and,
    for TLS, the sensors example's HTTP and HTTPS images."""
    base = by_base.get("emcp-feature-base")
    if base is None:
        return []
    out = ["", "### What each feature adds", "",
           f"Each `{FEATURE_PREFIX}*` image is the minimal server (one tool without parameters, on the UART) "
           "built with the default options, with one feature more ([examples/features](../examples/features)); "
           "each row is measured against the image it adds to. Features share code (the schema writer and "
           "the JSON tree, say), so two features together cost less than the sum of their rows: the rows "
           "are an upper bound for a budget, the build of your own image is the figure. Static RAM here "
           "is what the feature itself declares (buffers, pools, slots); the message arena and the output "
           "buffer are the transport's, set by the application.", "",
           "| feature | measured as | flash | flash added | static RAM added | worst-case stack | "
           "where the added flash goes |",
           "|---|---|---:|---:|---:|---:|---|",
           f"| the minimal server, default options | {base['name']} | {base['flash']:,} B | - | - | "
           f"{base['stack']['total']:,} B | {base['ram']:,} B of static RAM in all |"]
    for image, what, against in FEATURES:
        r, o = by_base.get(image), by_base.get(against)
        if r is None or o is None:
            continue
        parts, other = dict(r["flash_parts"]), dict(o["flash_parts"])
        grew = sorted(((parts.get(l, 0) - other.get(l, 0), l) for l in set(parts) | set(other)),
                      key=lambda d: (-d[0], d[1]))
        where = ", ".join(f"{part_short(l)} {d:+,}" for d, l in grew if d >= 256)
        df, dr = r["flash"] - o["flash"], r["ram"] - o["ram"]
        out.append(f"| {what} | {r['name']} against {o['name']} | {r['flash']:,} B | **{df:+,} B** "
                   f"({kib(df)}) | {dr:+,} B | {r['stack']['total']:,} B | {where} |")
    return out


def board_section(board, reports):
    """The document's section for one board, from that board's reports alone."""
    heading = dict(BOARDS).get(board)
    if heading is None:
        sys.exit(f"footprint: board {board} has no section: add it to BOARDS in tools/footprint.py "
                 "and run scripts/footprint")
    reports = sorted(reports, key=image_order)
    by_base = {base_name(r): r for r in reports}
    reports = [r for r in reports if not base_name(r).startswith(FEATURE_PREFIX)]
    out = [f"## {board}: {heading}", ""]
    tools = sorted({(r.get("compiler") or "?", r.get("cpu_flags") or "?") for r in reports})
    out.append("Built with " + "; ".join(f"`{c}`, `{f}`" for c, f in tools) + ". " + BOARD_NOTES.get(board, ""))
    out.append("")
    out.append("| image | options | flash | budget | static RAM | budget | biggest RAM objects | "
               "worst-case stack (request path + interrupt) | stack region |")
    out.append("|---|---|---:|---:|---:|---:|---|---:|---:|")
    size = lambda n: f"{n:,} B ({kib(n)})"
    for r in reports:
        objs = ", ".join(f"`{short(n)}` {s:,}" for n, s in r["ram_objects"][:4])
        fb = f"{r['flash_budget']:,}" if r.get("flash_budget") else "-"
        rb = f"{r['ram_budget']:,}" if r.get("ram_budget") else "-"
        st = r["stack"]
        out.append(f"| {r['name']} | {options_text(r, '-')} | {size(r['flash'])} | {fb} | {size(r['ram'])} | {rb} | "
                   f"{objs} | {st['total']:,} B ({st['main']:,} + {st['interrupt']:,}) | {r['stack_region']:,} B |")
    out.append("")
    for r in reports:
        notes = image_notes(r, by_base)
        if notes:
            out.append(f"- {r['name']}: " + "; ".join(notes) + ".")
    out.append("")
    out.append("Where the flash goes, in bytes:")
    out.append("")
    out.append("| part | " + " | ".join(r["name"] for r in reports) + " |")
    out.append("|---|" + "---:|" * len(reports))
    present = {label for r in reports for label, _ in r["flash_parts"]}
    rest = [label for label in sorted(present) if label not in LABELS]  # the last row: padding
    for label in [label for label in LABELS if label in present] + rest:
        cells = []
        for r in reports:
            n = dict(r["flash_parts"]).get(label, 0)
            cells.append(f"{n:,}" if n else "-")
        out.append(f"| {label} | " + " | ".join(cells) + " |")
    out.append("| **core in all** (the core rows and the static constructors) | "
               + " | ".join(f"**{core_bytes(r):,}**" for r in reports) + " |")
    reference = by_base.get("emcp-minimal")
    for r in reports:
        target = r.get("flash_target") or 0
        if not target:
            continue
        parts = dict(r["flash_parts"])
        app = parts.get("application", 0)
        lib = parts.get("libgcc: soft float, 64-bit arithmetic", 0)
        core = core_bytes(r)
        rest = r["flash"] - core - app - lib
        left = target - app - lib - rest
        than = f" ({core / left:.1f} times that)" if left > 0 else ""
        ref = (f", and {reference['name']}'s core takes {kib(core_bytes(reference))}"
               if reference and reference is not r else "")
        out.append("")
        out.append(f"{r['name']} against its {kib(target)} target: the application takes {kib(app)}, the "
                   f"soft-float and 64-bit arithmetic it needs {kib(lib)}, newlib, the board and compiler "
                   f"tables {kib(rest)}, which leaves {kib(left)} for the core; the image links "
                   f"{kib(core)} of core{than}{ref}.")
    out.append("")
    for r in reports:
        st = r["stack"]
        out.append(f"- {r['name']}: the deepest request path goes "
                   + " -> ".join(f"`{short(p)}`" for p in st["main_path"][st.get("path_skip", 2):12])
                   + f" ...; {st['indirect_targets']} functions are reachable only through pointers")
    out += feature_section(by_base)
    return "\n".join(out) + "\n"


def by_board(reports):
    boards = {}
    for r in reports:
        boards.setdefault(r["board"], []).append(r)
    return boards


def documented(reports):
    """The reports docs/footprint.md describes (not those of --not-documented images)."""
    return [r for r in reports if r.get("documented", True)]


def document(reports):
    """The whole of docs/footprint.md, from the reports of every board of BOARDS."""
    boards = by_board(documented(reports))
    missing = [b for b, _ in BOARDS if b not in boards]
    if missing:
        sys.exit("footprint: no reports for " + ", ".join(missing) + ": build every board (scripts/footprint)")
    unknown = [b for b in boards if b not in dict(BOARDS)]
    if unknown:
        sys.exit("footprint: " + ", ".join(unknown) + " not in BOARDS of tools/footprint.py")
    return HEADER + "\n" + "\n".join(board_section(b, boards[b]) for b, _ in BOARDS)


def split_doc(text):
    """(header, [(heading line, text)]): a section runs from its "## " line to the next one."""
    header, sections = [], []
    for line in text.splitlines(keepends=True):
        if line.startswith("## "):
            sections.append([line.rstrip("\n"), line])
        elif sections:
            sections[-1][1] += line
        else:
            header.append(line)
    return "".join(header), [tuple(s) for s in sections]


# The footprint regions' texts (DOC_REGIONS below), each from one board's reports by base name.
def _status_minimal(r):
    m = r["emcp-minimal"]
    target = m.get("flash_target") or 0
    if target and m["flash"] > target:
        # The goal is the target; the budget a ceiling the build enforces meanwhile.
        return (f"flash target {kib(target)} not met: {kib(m['flash'])} ({m['flash'] - target:,} B over; "
                f"the build enforces a {kib(m['flash_budget'])} ceiling), RAM "
                f"{'met' if m['ram'] <= (m.get('ram_budget') or m['ram']) else 'not met'}: {kib(m['ram'])}")
    return f"{'met' if budgets_met(m) else 'not met'}: {kib(m['flash'])}, {kib(m['ram'])}"


def _status_sensors(r):
    s = r["emcp-sensors"]
    app = dict(s["flash_parts"]).get("application", 0)
    return (f"{kib(s['flash'])} of its {kib(s['flash_budget'])} ceiling, of which its application code, "
            f"tables and texts {kib(app)} and the core it links {kib(core_bytes(s))}")


def _memory_m3(r):
    m, t, s = r["emcp-minimal"], r["emcp-minimal-strings"], r["emcp-sensors"]
    return (f"the README's one-tool server {kib(m['flash'])} with {kib(m['ram'])} of static RAM "
            f"({kib(t['flash'])} with every error text), the sensors example {kib(s['flash'])}, the "
            f"worst-case stack of their request paths {kib(m['stack']['total'], False)} / "
            f"{kib(s['stack']['total'])}")


def _memory_m0(r):
    return f"the one-tool server {kib(r['emcp-minimal']['flash'])} and the sensors example {kib(r['emcp-sensors']['flash'])}"


def _status_tls(r):
    t = r["emcp-sensors-tls"]
    ft, rt = t.get("flash_target") or 0, t.get("ram_target") or 0
    if not ft or not rt:
        sys.exit("footprint: emcp-sensors-tls has no flash and RAM target (FLASH_TARGET, RAM_TARGET)")
    met = t["flash"] <= ft and t["ram"] <= rt
    return (f"the sensors TLS image {'meets' if met else 'does not meet'} its {kib(ft)} / {kib(rt)} "
            f"target: {kib(t['flash'])} of flash, {kib(t['ram'])} of static RAM")


def _netcheck_memory(r):
    n = r["emcp-netcheck"]
    parts = dict(n["flash_parts"])
    objs = {name: size for name, size in n["ram_objects"]}

    def part(prefix):
        return sum(v for k, v in parts.items() if k.startswith(prefix))
    lwip, net, board, app = part("lwIP"), part("network:"), part("board:"), part("application")
    pool, heap = objs["memp_memory_PBUF_POOL_base"], objs["ram_heap"]
    return (f"{kib(n['flash'])} of flash (lwIP {kib(lwip)}; the NIC driver and board/net.h {kib(net)}; "
            f"the board's start-up, UART, loop and C library functions {kib(board)}; the echo {kib(app)}; "
            f"the rest {kib(n['flash'] - lwip - net - board - app)}) and {kib(n['ram'])} of static RAM, "
            f"{kib(pool + heap)} of it lwIP's pbuf pool ({kib(pool)}) and heap ({kib(heap)}); the "
            f"worst-case stack is {kib(n['stack']['total'])}")


def _sensors_net(r):
    n = r["emcp-sensors-net"]
    ft, rt = n.get("flash_target") or 0, n.get("ram_target") or 0
    fb, rb = n.get("flash_budget") or 0, n.get("ram_budget") or 0
    if not (ft and rt and fb and rb):
        sys.exit("footprint: emcp-sensors-net needs its flash and RAM targets and budgets")
    met = n["flash"] <= ft and n["ram"] <= rt
    return (f"{kib(n['flash'])} of flash and {kib(n['ram'])} of static RAM (its targets, {kib(ft)} and "
            f"{kib(rt)}, {'met' if met else 'not met'}; the build enforces ceilings of {kib(fb)} and {kib(rb)})")


def _budgets(r):
    m, s = r["emcp-minimal"], r["emcp-sensors"]
    if not m.get("flash_budget") or not s.get("flash_budget"):
        sys.exit("footprint: the minimal and sensors images need a flash budget")
    return (f"the minimal image's budget is {kib(m['flash_budget'])} here, the sensors image's ceiling "
            f"{kib(s['flash_budget'])}")


def _memory_modern_only(r):
    m, s = r["emcp-minimal-modern"], r["emcp-sensors-modern"]
    return (f"the one-tool server {kib(m['flash'])} with {kib(m['ram'])} of static RAM, the sensors example "
            f"{kib(s['flash'])} with {kib(s['ram'])}")


# What FreeRTOS may add to the sensors network image (flash, RAM with the main stack): the
# targets for an RTOS image against its bare-metal twin (ports/freertos/README.md).
RTOS_COST_TARGETS = {"sensors-net": (16 * 1024, 8 * 1024)}


def _freertos_image(image, lwip=False):
    """ports/freertos/README.md's figures of emcp-<image>-rtos against emcp-<image>: flash and
    static RAM beyond the bare-metal image, and RAM with each image's main stack (the linker's
    region, not static RAM: the bare-metal request path's stack, under the kernel the
    interrupts' alone)."""
    def region(r):
        t, s = r[f"emcp-{image}-rtos"], r[f"emcp-{image}"]
        parts, bare = dict(t["flash_parts"]), dict(s["flash_parts"])
        lwip_part = "lwIP (Debian's source): TCP, IPv4, ARP, DHCP, pools"
        stacks = ", ".join(f"`{x['label']}` {x['stack']:,} B (worst case {x['need']:,} B)" for x in t["rtos"]["tasks"])
        m = t["rtos"]["main_stack"]
        df, dr = t["flash"] - s["flash"], t["ram"] - s["ram"]
        drs = t["ram"] + m["region"] - s["ram"] - s["stack_region"]
        extra = (f", lwIP's sys_arch {parts.get(LWIP_SYS_PART, 0):,} B, lwIP itself "
                 f"{parts.get(lwip_part, 0) - bare.get(lwip_part, 0):+,} B: its thread, mailbox and core lock") if lwip else ""
        text = (f"{t['flash']:,} B of flash, {df:,} B more than on bare metal (the kernel "
                f"{parts.get(KERNEL_PART, 0):,} B, this port {parts.get(PORT_PART, 0):,} B{extra}), and {t['ram']:,} B of "
                f"static RAM, {dr:,} B more (the tasks' stacks, their control blocks, the kernel's data"
                f"{', lwIP' + chr(39) + 's mailbox and messages' if lwip else ''}"
                + (f"; and its options: {changed_options(t, s)}" if changed_options(t, s) else "")
                + f"); the tasks' stacks: {stacks}; the main "
                f"stack {m['region']:,} B (on bare metal {s['stack_region']:,} B), its worst case, interrupts and main() "
                f"before the scheduler, {m['total']:,} B; RAM with the main stacks {drs:+,} B")
        if image in RTOS_COST_TARGETS:
            ft, rt = RTOS_COST_TARGETS[image]
            text += (f" (the targets: at most {kib(ft)} of flash and {kib(rt)} of RAM more: flash "
                     f"{'met' if df <= ft else 'not met'}, RAM {'met' if drs <= rt else 'not met'})")
        return text
    return region


def core_name(report):
    """The CPU an image is built for, from its -mcpu flag: "Cortex-M3"."""
    m = re.search(r"-mcpu=cortex-([a-z]\d+\+?)", report["cpu_flags"])
    return f"Cortex-{m.group(1).upper()}" if m else report["cpu_flags"]


def _readme_figures(r):
    """README.md's three figures: the board example, every feature, and every feature over HTTPS."""
    m, s, t = r["emcp-minimal"], r["emcp-sensors"], r["emcp-sensors-tls"]
    return "\n".join([
        f"Firmware images with everything they link (core, board, C library), {m['compiler']} "
        f"`{m['cpu_flags']} -Os` with link-time optimization, on {m['board']}'s {core_name(m)}:",
        "",
        f"- the one-tool server above: {kib(m['flash'])} of flash, {kib(m['ram'])} of static RAM;",
        f"- the sensors example (tools with parameters, resources, prompts, completion, logging, "
        f"requests to the client): {kib(s['flash'])} of flash, {kib(s['ram'])} of static RAM;",
        f"- the same over HTTPS on lwIP and Mbed TLS (Streamable HTTP, HTTP+SSE, WebSocket, bearer "
        f"tokens): {kib(t['flash'])} of flash, {kib(t['ram'])} of static RAM.",
    ])


# Every file with footprint regions (relative to the folder of --readme, the checkout's root),
# and its regions: name -> (the board whose reports give it, its text from them by base name).
DOC_REGIONS = {
    "README.md": {"figures": ("mps2-an385", _readme_figures)},
    "docs/status.md": {"status-minimal": ("mps2-an385", _status_minimal),
                       "status-sensors": ("mps2-an385", _status_sensors),
                       "status-tls": ("mps2-an385", _status_tls)},
    "docs/memory.md": {"memory-cortex-m3": ("mps2-an385", _memory_m3),
                       "memory-cortex-m0": ("microbit", _memory_m0),
                       "memory-modern-only": ("mps2-an385", _memory_modern_only)},
    "examples/netcheck/README.md": {"memory": ("mps2-an385", _netcheck_memory)},
    "examples/sensors/README.md": {"net": ("mps2-an385", _sensors_net)},
    "boards/microbit/README.md": {"budgets": ("microbit", _budgets)},
    "boards/hifive1/README.md": {"budgets": ("hifive1", _budgets)},
    "boards/lx106-sim/README.md": {"budgets": ("lx106-sim", _budgets)},
    "ports/freertos/README.md": {"sensors": ("mps2-an385", _freertos_image("sensors")),
                                 "sensors-hifive1": ("hifive1", _freertos_image("sensors")),
                                 "sensors-net": ("mps2-an385", _freertos_image("sensors-net", lwip=True))},
}


def doc_path(readme, rel):
    return readme if rel == "README.md" else os.path.join(os.path.dirname(os.path.abspath(readme)), rel)


def readme_regions(text, path):
    """{name: (start, end) of its content} of the footprint regions (tools/docgen.py, the one
    region mechanism of the docs); exits on a marker out of place."""
    try:
        return {r.name: (r.start, r.end) for r in docgen.regions(text, "footprint", path)}
    except docgen.RegionError as e:
        sys.exit(f"footprint: {e}")


def region_text(rel, name, reports):
    board, make = DOC_REGIONS[rel][name]
    by_base = {base_name(r): r for r in reports if r["board"] == board}
    try:
        return make(by_base)
    except KeyError as e:
        sys.exit(f"footprint: the region {name} of {rel} needs the image {e.args[0]}-{board}")


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
    this board's reports, every line, and its sections those of BOARDS in order; README.md's
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
                        f"tools/footprint.py writes:\n" + diff(header, HEADER + "\n", "header"))
    want = [f"## {b}: {h}" for b, h in BOARDS]
    have = [h for h, _ in sections]
    if have != want:
        problems.append(f"{args.doc}: its sections are\n  " + "\n  ".join(have or ["(none)"])
                        + "\nbut should be, in this order,\n  " + "\n  ".join(want))
    now = board_section(args.board, documented(reports))
    names = [b for b, _ in BOARDS]
    if args.board in names[:-1]:
        now += "\n"  # the blank line before the next section
    section = dict(sections).get(f"## {args.board}: {dict(BOARDS)[args.board]}")
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
                problems.append(f"{path}: unknown footprint region {name} (DOC_REGIONS of tools/footprint.py)")
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
    print("\n".join(board_section(b, boards[b]) for b, _ in BOARDS if b in boards), end="")
    return 0


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
        print("\n".join(b for b, _ in BOARDS))
        return 0
    return {"image": image, "table": table, "write-doc": write_doc, "check-doc": check_doc}[args.cmd](args)


if __name__ == "__main__":
    sys.exit(main())
