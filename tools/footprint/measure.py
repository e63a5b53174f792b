"""Measures one firmware image: its report (tools/footprint/__init__.py says every field) and
whether it is within its budgets.

Flash is what the image stores: .text (code and read-only data, vector table included),
.ARM.exidx and the initial values of .data. Static RAM is .data + .bss, the stack region not
included (it is reported on its own). The biggest RAM objects are listed (the arena and the
buffers live inside the transport object). The worst-case stack is stack.py's, the flash by
part parts.py's. What the image is (its description, the image it is a variant of, the feature
it measures) and the board's title and note come from where the image and the board are
declared (emcp_add_firmware() in boards/CMakeLists.txt, board.cmake), for the document.
"""
import json
import re
import sys

from .elf import demangle, object_sizes, sections, symbols
from .parts import flash_parts
from .stack import worst_stack

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
    # What the image and its board are, as declared (the document's prose): one line each.
    prose = lambda text: " ".join((text or "").split())
    report["board_title"], report["board_note"] = prose(args.board_title), prose(args.board_note)
    if args.description:
        report["description"] = prose(args.description)
    if args.variant_of:
        report["variant_of"] = args.variant_of
    if bool(args.feature) != bool(args.feature_base):
        sys.exit("footprint: --feature and --feature-base go together (what the image measures, against which image)")
    if args.feature:
        report["feature"] = {"what": prose(args.feature), "base": args.feature_base}
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

