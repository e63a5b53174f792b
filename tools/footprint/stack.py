"""The worst-case stack of an image, from GCC's call graphs (-fcallgraph-info=su: the .ci files).

The request path starts at main(); interrupt handlers (SysTick, the UART) can preempt it at its
deepest point, each with its exception frame (elf.ARCHES). A call through a function pointer (a
tool handler, a channel's open/close, a sink's flush) is charged with the deepest function the
image never calls directly, which are the only ones that can be called that way: an upper
bound, not a guess. Recursion, or a frame of dynamic size, makes the figure unbounded and is
reported as such. worst_stack() returns the "stack" object of the report (tools/footprint/__init__.py).
"""
import glob
import os
import re
import sys

from .elf import ROOT, arch, checkout_roots, demangle, run, short, symbols, tool

NODE = re.compile(r'node: \{ title: "([^"]+)" label: "([^"]*)"')
EDGE = re.compile(r'edge: \{ sourcename: "([^"]+)" targetname: "([^"]+)"')
FRAME = re.compile(r"\\n(\d+) bytes \(([a-z,]+)\)")
LIBRARY_FRAME = 64  # a library function without a frame record (libgcc, newlib): charged this much


def init_array_functions(elf):
    """The (mangled) names of the functions the image's .init_array lists, its static
    constructors: the words between the linker script's __init_array_start__ and
    __init_array_end__ (boards/common/sections.ld)."""
    words, at = init_array_words(elf)
    return {at[w & ~1] for w in words if (w & ~1) in at}  # an Arm function's address: bit 0 set (Thumb)


def init_array_words(elf):
    """The words of the image's .init_array (one per constructor: (end - start) / 4 of them),
    and {address: name} of its functions."""
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
        # Only the sections loaded into the image: objdump dumps the same address range of the
        # debug sections too (their addresses start at 0), whose bytes are no function pointers
        # (a .debug_line that had grown past the range once listed mbedtls' ecdsa_verify_wrap as
        # a constructor).
        header = run([tool(elf, "objdump"), "-h", elf]).splitlines()
        loaded = set()
        for i, line in enumerate(header[:-1]):
            m = re.match(r"^\s*\d+\s+(\S+)\s", line)
            if m and "ALLOC" in header[i + 1]:
                loaded.add(m.group(1))
        dump = run([tool(elf, "objdump"), "-s", f"--start-address={start:#x}", f"--stop-address={end:#x}", elf])
        section = None
        for line in dump.splitlines():
            head = re.match(r"^Contents of section (\S+):", line)
            if head:
                section = head.group(1)
                continue
            m = re.match(r"^ ([0-9a-f]+) ((?:[0-9a-f]{8} ?){1,4})", line)
            if m and section in loaded:
                words += [int.from_bytes(bytes.fromhex(w), "little") for w in m.group(2).split()]
    return words, at


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

