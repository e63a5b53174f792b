#!/usr/bin/env python3
"""Counts the instructions of MCP requests on an emulated board: runs the bench firmware
emcp-bench-calls (bench/target/calls.cpp) in QEMU with the plugin bench/target/insn_plugin.c,
sends each request over the UART, waits for its answer and reads the plugin's count of the
instructions from the request's first byte to its answer's last (interrupts masked meanwhile).

  guest_calls.py --elf IMAGE [--plugin LIB] [--machine mps2-an385] [--repeat N] [--runs N] [--json]
  guest_calls.py --table JSON...
  guest_calls.py --elf IMAGE --profile NAME [--top N] [--markdown]

A request line longer than the image's request buffer (calls.cpp's g_line, its size read from
the image's symbols) is fed to the server a buffer at a time, each in a window of its own: its
count is the sum of its ceil(length / buffer) windows.

--profile NAME runs the session's opening requests and then the request NAME (as in the list
below, e.g. "ping") `--repeat` times, and prints where its instructions went, by function (the
plugin's per-block counts added up with the image's symbols), instead of the table.

Without --plugin the plugin is built from insn_plugin.c beside this file with the host's C
compiler (cc, warnings as errors) into a temporary folder.

Every request is sent `--repeat` times in one QEMU run, and the whole run is made `--runs`
times: a count must be the same every time (QEMU's -icount shift=0,sleep=off: one instruction
per virtual nanosecond, nothing depends on the host), except where the answer itself differs
(a sensor reading's digits): those cases print their range. Exit status 1 when a request fails,
a count is missing, a run's counts differ from the first run's, or (--ceilings) a case takes more
instructions than its ceiling in bench/target/ceilings.tsv (bench/target/ceilings.py). One line per case:
case=NAME insns=MIN[-MAX] in=BYTES out=BYTES per_byte_out=X; with --json the same as JSON, which
--table puts side by side (one column per board) as Markdown.
QEMU always stops (the end of this program kills it).
"""
import argparse
import bisect
import json
import os
import re
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from qemu_board import QemuBoard  # noqa: E402 (bench/qemu_board.py)
import ceilings  # noqa: E402 (bench/target/ceilings.py, beside this file)

# The toolchain's nm, by the ELF's machine (e_machine).
NM = {40: "arm-none-eabi-nm", 243: "riscv64-unknown-elf-nm"}
QEMU = {"mps2-an385": "qemu-system-arm", "microbit": "qemu-system-arm", "sifive_e": "qemu-system-riscv32"}

ECHO_SMALL = "x" * 100
ECHO_4K = "y" * 4096
# (name, message): a message without an id is a notification (counted, no answer).
CASES = [
    ("initialize", {"method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {},
                                                        "clientInfo": {"name": "bench", "version": "1"}}}),
    ("notifications/initialized", {"method": "notifications/initialized"}),
    ("ping", {"method": "ping"}),
    ("tools/list (a page of 5)", {"method": "tools/list"}),
    ("tools/call echo, 100 characters", {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": ECHO_SMALL}}}),
    ("tools/call echo, 4 KiB", {"method": "tools/call", "params": {"name": "echo", "arguments": {"text": ECHO_4K}}}),
    ("tools/call read_sensor", {"method": "tools/call", "params": {"name": "read_sensor", "arguments": {"sensor": "temperature"}}}),
    ("resources/read sensor://temperature", {"method": "resources/read", "params": {"uri": "sensor://temperature"}}),
    ("prompts/get diagnose_device", {"method": "prompts/get", "params": {"name": "diagnose_device", "arguments": {"sensor": "load"}}}),
]
# Cases sent once per run (initialize opens the session; sent again it would be refused).
ONCE = {"initialize", "notifications/initialized"}


def line_of(message, rid):
    """The request line of `message` with id `rid` (none for a notification)."""
    m = {"jsonrpc": "2.0", **message}
    if not m["method"].startswith("notifications/"):
        m["id"] = rid
    return (json.dumps(m, separators=(",", ":")) + "\n").encode()


def image_symbols(elf):
    """[(address, size, type, name)] of the image's sized symbols, names demangled (the
    toolchain's `nm -S -C --defined-only`, chosen by the ELF's machine)."""
    with open(elf, "rb") as f:
        machine = int.from_bytes(f.read(20)[18:20], "little")
    out = subprocess.run([NM[machine], "-S", "-C", "--defined-only", elf], check=True, capture_output=True,
                         text=True).stdout
    syms = []
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) == 4:
            syms.append((int(parts[0], 16), int(parts[1], 16), parts[2], parts[3]))
    return syms


def line_buffer(syms):
    """The size of calls.cpp's request buffer g_line (the bytes one window feeds)."""
    for _, size, _, name in syms:
        if name.endswith("::g_line"):
            return size
    raise RuntimeError("the image has no g_line (not an emcp-bench-calls image?)")


def markers(syms):
    """The addresses of emcp_bench_begin and emcp_bench_end, in hexadecimal."""
    found = {name: f"{at:x}" for at, _, _, name in syms if name in ("emcp_bench_begin", "emcp_bench_end")}
    if len(found) != 2:
        raise RuntimeError("the image has no emcp_bench_begin/emcp_bench_end")
    return found["emcp_bench_begin"], found["emcp_bench_end"]


def functions(syms):
    """[(start, end, name)] of the image's functions, sorted (a Thumb function's low address bit
    cleared)."""
    return sorted((at & ~1, (at & ~1) + size, name) for at, size, kind, name in syms if kind in "tTwW")


class Board(QemuBoard):
    def __init__(self, elf, plugin, machine, out, profile=None):
        begin, end = markers(image_symbols(elf))
        self.out = out
        extra = f",profile={profile},skip={len(ONCE)}" if profile else ""
        cmd = [QEMU[machine], "-M", machine, "-display", "none", "-monitor", "none", "-serial", "stdio",
               "-icount", "shift=0,sleep=off", "-kernel", elf,
               "-plugin", f"{plugin},begin={begin},end={end},out={out}{extra}"]
        if machine == "mps2-an385":
            cmd += ["-nic", "none"]  # (its LAN9118 would warn that it has no peer)
        super().__init__(cmd)
        self.next_id = 100  # three digits in every request of a run: ids of one length
        self.counts_read = 0
        self.chunk = line_buffer(image_symbols(elf))

    def count(self, timeout=30):
        """The plugin's next count (it writes one line per window, flushed)."""
        deadline = time.monotonic() + timeout
        while True:
            with open(self.out) as f:
                # Whole lines only (the plugin may be writing the last one).
                lines = [l for l in f.read().split("\n")[:-1] if l.startswith("insns ")]
            if len(lines) > self.counts_read:
                self.counts_read += 1
                return int(lines[self.counts_read - 1].split()[1])
            if time.monotonic() > deadline:
                raise RuntimeError("the plugin wrote no count")
            time.sleep(0.01)

    def call(self, message):
        """Sends `message` (an id added unless it is a notification); returns (count, bytes in,
        bytes out, answer or None)."""
        data = line_of(message, self.next_id)
        m = json.loads(data)
        if "id" in m:
            self.next_id += 1
        self.write(data)
        answer, out = None, 0
        if "id" in m:
            text = self.line(30)
            out = len(text) + 1
            answer = json.loads(text)
            if answer.get("id") != m["id"] or "error" in answer or answer["result"].get("isError"):
                raise RuntimeError(f"{m['method']}: {text[:300]}")
        windows = -(-len(data) // self.chunk)  # calls.cpp feeds a full buffer at a time
        return sum(self.count() for _ in range(windows)), len(data), out, answer


def build_plugin(tmp):
    here = os.path.dirname(os.path.abspath(__file__))
    lib = os.path.join(tmp, "libemcp_insn_plugin.so")
    subprocess.run(["cc", "-std=c11", "-O2", "-fPIC", "-shared", "-fvisibility=hidden", "-Wall", "-Wextra", "-Werror",
                    "-o", lib, os.path.join(here, "insn_plugin.c")], check=True)
    return lib


def run_once(a):
    with tempfile.TemporaryDirectory() as tmp:
        board = Board(a.elf, a.plugin, a.machine, os.path.join(tmp, "counts"))
        try:
            banner = board.line(60)
            if "emcp-bench-calls" not in banner:
                raise RuntimeError(f"unexpected banner: {banner!r}")
            results = {}
            for name, message in CASES:
                for _ in range(1 if name in ONCE else a.repeat):
                    n, bytes_in, bytes_out, _answer = board.call(message)
                    results.setdefault(name, []).append((n, bytes_in, bytes_out))
            return results
        finally:
            board.stop()


def profile(a):
    """Where request a.profile's instructions go, by function."""
    message = dict(CASES)[a.profile]
    with tempfile.TemporaryDirectory() as tmp:
        prof = os.path.join(tmp, "profile")
        board = Board(a.elf, a.plugin, a.machine, os.path.join(tmp, "counts"), prof)
        counted = 0
        try:
            if "emcp-bench-calls" not in board.line(60):
                raise RuntimeError("unexpected banner")
            for name, m in CASES:
                if name in ONCE:
                    board.call(m)
            for _ in range(a.repeat):
                counted += board.call(message)[0]
        finally:
            board.stop()
        by_func = {}
        funcs = functions(image_symbols(a.elf))
        starts = [f[0] for f in funcs]
        with open(prof) as f:
            for line in f:
                _, addr, insns = line.split()
                at = int(addr, 16)
                i = bisect.bisect_right(starts, at) - 1
                name = funcs[i][2] if i >= 0 and at < funcs[i][1] else f"0x{at:x}"
                by_func[name] = by_func.get(name, 0) + int(insns)
    total = sum(by_func.values())
    top = sorted(by_func.items(), key=lambda kv: -kv[1])[:a.top]

    def short(name):  # emcp's versioned inline namespace and the argument lists left out
        name = re.sub(r"emcp::v0_[0-9_]+::", "emcp::", name).replace("(anonymous namespace)", "{anonymous}")
        depth, out = 0, ""
        for ch in name:
            depth += ch == "("
            if depth == 0:
                out += ch
            depth -= ch == ")"
        return out.replace(" [clone .constprop.0]", "").replace(" [clone .isra.0]", "")

    if a.markdown:
        print(f"Where `{a.profile}`'s {counted / a.repeat:,.0f} instructions go, by function (the "
              f"{a.top} that take most):")
        print()
        print("| function | instructions | share |")
        print("|---|---:|---:|")
        for name, n in top:
            print(f"| `{short(name)}` | {n / a.repeat:,.0f} | {100 * n / total:.1f} % |")
        return
    print(f"{a.profile}: {counted / a.repeat:,.0f} instructions a request ({a.repeat} requests; by block "
          f"{total / a.repeat:,.0f})")
    for name, n in top:
        print(f"{n / a.repeat:10,.0f} {100 * n / total:5.1f}%  {short(name)[:150]}")


# The cores of the machines, for the table's columns.
CORES = {"mps2-an385": "Cortex-M3 (mps2-an385)", "microbit": "Cortex-M0 (micro:bit)", "sifive_e": "RV32IMAC (hifive1)"}


def table(files):
    """The Markdown table of several --json outputs (the first machine's bytes, per byte and times)."""
    boards = []
    for path in files:
        with open(path) as f:
            boards.append(json.load(f))
    mhz = (64, 160, 240)
    first = CORES.get(boards[0]["machine"], boards[0]["machine"]).split(" (")[0]
    print("| request | bytes in | bytes out | " + " | ".join(CORES.get(b["machine"], b["machine"]) for b in boards)
          + f" | per byte out ({first}) | " + " | ".join(f"µs at {f} MHz ({first})" for f in mhz) + " |")
    print("|---|---:|---:|" + "---:|" * len(boards) + "---:|" + "---:|" * len(mhz))

    def cell(row):
        _, lo, hi, _, _, _ = row
        return f"{lo:,}" + (f"-{hi:,}" if hi != lo else "")

    for i, row in enumerate(boards[0]["rows"]):
        name, lo, hi, bi, bo, po = row
        times = " | ".join(f"{hi / f:,.0f}" for f in mhz)  # one instruction a cycle
        print(f"| {name} | {bi:,} | {bo:,} | " + " | ".join(cell(b["rows"][i]) for b in boards) + f" | {po} | {times} |")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--elf")
    ap.add_argument("--json", action="store_true", help="print the counts as JSON (for --table)")
    ap.add_argument("--table", nargs="+", metavar="JSON", help="print the Markdown table of these --json outputs")
    ap.add_argument("--plugin")
    ap.add_argument("--machine", default="mps2-an385")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--markdown", action="store_true")
    ap.add_argument("--profile", metavar="NAME", help="where request NAME's instructions go, by function")
    ap.add_argument("--ceilings", nargs="?", const=ceilings.DEFAULT, metavar="TSV",
                    help="fail when a case takes more than its ceiling (default file: bench/target/ceilings.tsv)")
    ap.add_argument("--top", type=int, default=30, help="--profile: the functions printed")
    a = ap.parse_args()
    if a.table:
        table(a.table)
        return 0
    if a.elf is None:
        ap.error("--elf is required")
    if a.profile is not None:
        if a.profile not in dict(CASES) or a.profile in ONCE:
            ap.error(f"--profile: one of {', '.join(repr(n) for n, _ in CASES if n not in ONCE)}")
        with tempfile.TemporaryDirectory() as tmp:
            if a.plugin is None:
                a.plugin = build_plugin(tmp)
            profile(a)
        return 0
    errors = []
    runs = []
    with tempfile.TemporaryDirectory() as tmp:
        try:
            if a.plugin is None:
                a.plugin = build_plugin(tmp)
            for _ in range(a.runs):
                runs.append(run_once(a))
        except (RuntimeError, ValueError, KeyError, subprocess.CalledProcessError) as e:
            errors.append(str(e))
    if runs:
        first = runs[0]
        for i, r in enumerate(runs[1:], 2):
            if r != first:
                errors.append(f"run {i}'s counts differ from run 1's: {r} vs {first}")
        rows = []
        for name, _ in CASES:
            counts = [n for n, _, _ in first[name]]
            lo, hi = min(counts), max(counts)
            _, bytes_in, bytes_out = first[name][0]
            per_out = f"{lo / bytes_out:.1f}" if bytes_out else "-"
            rows.append((name, lo, hi, bytes_in, bytes_out, per_out))
        if a.json:
            json.dump({"machine": a.machine, "rows": rows}, sys.stdout)
            print()
        else:
            for name, lo, hi, bi, bo, po in rows:
                print(f"case={name.replace(' ', '_')} insns={lo}" + (f"-{hi}" if hi != lo else "")
                      + f" in={bi} out={bo} per_byte_out={po}")
        if a.ceilings:
            image = os.path.basename(a.elf)[:-len(".elf")]
            over, notes = ceilings.check(a.ceilings, image, {name: hi for name, _, hi, _, _, _ in rows})
            errors += over
            for n in notes:
                print(f"guest_calls: note: {n}", file=sys.stderr)
    for e in errors:
        print(f"guest_calls: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
