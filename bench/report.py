#!/usr/bin/env python3
"""Writes the benchmark figures of the documents from one run of scripts/bench.

  bench/report.py RESULTS_DIR [--root DIR] [--print]
  bench/report.py --stale [--root DIR]

RESULTS_DIR is build/bench/results after `scripts/bench` (which runs this last). Every figure
goes into a marked region (tools/docgen.py, prefix `bench`) of the files in REGIONS, each
stamped with the commit and date it was measured at; the regions that hold wall-clock figures
also say how busy the machine was. Nothing outside the regions is touched, and either every
region is written or, on any error (a region missing, a result file missing), none is.
--print shows the regions instead of writing them. tests/readme/check_generated.py checks
the regions' markers and stamps and that no figure of this kind stands outside them.
--stale warns (and only warns) about the stamps whose commit's measured code (MEASURED: core/,
ports/, examples/, bench/, boards/) differs from the working tree's, i.e. figures that may be stale;
scripts/bench runs it first.
"""
import argparse
import datetime
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True  # no __pycache__ in the checkout
sys.path.insert(0, os.path.join(HERE, "..", "tools"))
import docgen  # noqa: E402

PREFIX = "bench"
# Every region this program writes, per file (relative to the repository's root).
REGIONS = {
    "README.md": ["speed"],
    "docs/memory.md": ["memory"],
    "examples/sensors/README.md": ["rss"],
    "bench/README.md": ["duration", "json-inputs", "machine", "json-plan", "json-results",
                        "json-reading", "json-annotate", "stdio", "http", "rtos", "mqtt-fleet", "target"],
    "docs/concurrency.md": ["inbox-latency"],
    "docs/mqtt.md": ["fleet"],
}
# The regions with wall-clock figures: their stamp also gives the load (checked too).
WALL_CLOCK = {("README.md", "speed"), ("bench/README.md", "duration"),
              ("bench/README.md", "json-results"), ("bench/README.md", "json-reading"),
              ("bench/README.md", "stdio"), ("bench/README.md", "http"), ("bench/README.md", "rtos"),
              ("bench/README.md", "mqtt-fleet"), ("docs/concurrency.md", "inbox-latency"),
              ("docs/mqtt.md", "fleet")}
# What every stamp holds (the check looks for these).
STAMP_RE = r"`scripts/bench` at commit [0-9a-f]{7,40}\b[^\n]*? on \d{4}-\d{2}-\d{2}\b"
LOAD_RE = r"load average"
# A run on a tree that differs from its commit says so in its stamp; such figures belong to no
# commit, and tests/readme/check_generated.py refuses them in a committed document.
DIRTY = "(+ uncommitted changes)"
# The commit of a stamp (group 1), and whether it says DIRTY (group 2).
STAMP_COMMIT_RE = r"`scripts/bench` at commit ([0-9a-f]{7,40})\b( " + re.escape(DIRTY) + r")?"
# What scripts/bench measures: when these differ from a stamp's commit, that stamp's figures may
# be stale (the documents themselves, *.md, do not count). boards/: the RTOS benchmark's images;
# tests/mcp/lib: the MQTT fleet's client and broker harness.
MEASURED = ["core", "ports", "examples", "bench", "boards", "tests/mcp/lib", ":(exclude)*.md"]


class Missing(Exception):
    pass


# ---- formatting --------------------------------------------------------------------------------

def thou(n):
    return f"{int(round(n)):,}"


def sig3(x):
    """Three significant digits, with thousands separators: 491067 -> 491,000."""
    if x <= 0:
        return "0"
    digits = len(str(int(x)))
    if digits <= 3:
        return f"{x:.3g}"
    q = 10 ** (digits - 3)
    return thou(round(x / q) * q)


def mib(kib):
    return f"{kib / 1024:.1f} MiB"


def ms(us):
    return f"{us / 1000:.2f} ms" if us < 10000 else f"{us / 1000:.1f} ms"


def duration(s):
    s = int(round(s))
    if s < 1:
        return "under 1 s"
    return f"{s // 60} min {s % 60} s" if s >= 60 else f"{s} s"


# ---- reading the results -----------------------------------------------------------------------

class Results:
    def __init__(self, d):
        self.d = d

    def path(self, name):
        p = os.path.join(self.d, name)
        if not os.path.exists(p):
            raise Missing(f"{p} is missing: run scripts/bench (all of it) first")
        return p

    def text(self, name):
        with open(self.path(name), encoding="utf-8") as fh:
            return fh.read()

    def rows(self, name):
        return [line.split() for line in self.text(name).splitlines()
                if line.strip() and not line.startswith("#")]

    def busy(self, stage):
        others, l1, l5, l15, secs = self.rows(f"{stage}-busy.txt")[0]
        return {"others": float(others), "load": f"{l1} {l5} {l15}", "seconds": float(secs)}


def tool_version(cmd):
    try:
        out = subprocess.run(cmd, capture_output=True, text=True)
    except OSError:
        return "not found"
    return (out.stdout or out.stderr).strip().splitlines()[0] if (out.stdout or out.stderr).strip() else "?"


class Run:
    """Everything one run measured, and its stamp."""

    def __init__(self, results_dir, root):
        r = self.r = Results(results_dir)
        self.root = root
        meta = dict(line.split(" ", 1) for line in r.text("meta.txt").splitlines() if " " in line)
        self.commit = meta["commit"]
        self.dirty = meta.get("dirty") == "yes"
        self.date = meta["date"]
        self.cpu = meta["cpu"]
        self.cores = int(meta["cores"])
        # The JSON program's facts (--data).
        self.parsers, self.inputs, self.arena, self.mbps = {}, {}, {}, {}
        for f in r.rows("json-data.txt"):
            if f[0] == "parser":
                self.parsers[f[1]] = {"emcp": f[2] == "1", "dom": f[3] == "1", "utf8": f[4] == "1",
                                      "label": " ".join(f[5:])}
            elif f[0] == "input":
                self.inputs[f[1]] = {"bytes": int(f[2]), "scalars": int(f[3]),
                                     "containers": int(f[4]), "keys": int(f[5])}
            elif f[0] == "arena":
                self.arena[(f[1], f[2])] = (int(f[3]), int(f[4]))
            elif f[0] == "mbps":
                self.mbps[(f[1], f[2])] = float(f[3])
        self.ir, self.ir_raw = {}, {}
        for p, inp, ipb, a, b, n, size in r.rows("ir.tsv"):
            self.ir[(p, inp)] = float(ipb)
            self.ir_raw[(p, inp)] = (int(a), int(b), int(n), int(size))
        self.stdio = {f[0]: {"pipelined": int(f[1]), "serial": int(f[2]), "p50": float(f[3]),
                             "p99": float(f[4]), "rss": int(f[5]), "anon": int(f[6])}
                      for f in r.rows("stdio-wall.txt")}
        self.stdio_ir = {(f[0], f[1]): int(f[2]) for f in r.rows("stdio-ir.txt")}
        self.http = {f[0]: {"rps": int(f[1]), "p50": float(f[2]), "p99": float(f[3]),
                            "rss": int(f[4]), "anon": int(f[5])} for f in r.rows("http.txt")}
        # The RTOS benchmark (bench/rtos/run.sh): key=value lines.
        def kv(name, key):
            out = {}
            for line in r.text(name).splitlines():
                f = dict(x.split("=", 1) for x in line.split() if "=" in x)
                if key in f:
                    out[(f[key], f.get("icount", ""))] = f
            return out
        self.rtos_host = {k[0]: v for k, v in kv("rtos-host.txt", "mode").items()}
        self.rtos_guest = kv("rtos-guest.txt", "source")
        self.rtos_net = {(f[0], int(f[1])): {"rps": int(f[2]), "p50": float(f[3]), "p99": float(f[4])}
                         for f in r.rows("rtos-net.txt")}
        # The MQTT fleet (bench/mqtt_fleet/run.sh): fleet.mjs's figures, and those of its run with
        # Mosquitto's default Nagle.
        self.fleet = json.loads(r.text("mqtt-fleet.json"))
        self.fleet_nagle = json.loads(r.text("mqtt-fleet-nagle.json"))
        self.busy = {s: r.busy(s) for s in ("json", "stdio", "http", "rtos", "mqtt-fleet")}
        self.durations = {f[0]: float(f[1]) for f in r.rows("durations.txt")}
        self.cg_runs = int(meta["cg_runs"])

    # -- stamps --

    def at(self):
        c = f"commit {self.commit}" + (f" {DIRTY}" if self.dirty else "")
        return f"`scripts/bench` at {c} on {self.date}"

    def machine(self):
        return f"{self.cpu}, {self.cores} cores"

    def load_note(self, stages):
        b = [self.busy[s] for s in stages]
        names = {"json": "JSON", "stdio": "stdio", "http": "HTTP", "rtos": "RTOS", "mqtt-fleet": "MQTT fleet"}
        if len(stages) == 1:
            during = f"other processes kept {b[0]['others']:.1f} of {self.cores} cores busy on average " \
                     f"during the timing, load average {b[0]['load']} at its end"
        else:
            during = ("other processes kept " + " / ".join(f"{x['others']:.1f}" for x in b)
                      + f" of {self.cores} cores busy on average during the "
                      + " / ".join(names[s] for s in stages) + " timings, load average "
                      + " / ".join(x["load"].split()[0] for x in b) + " (1 min) at their ends")
        return during + ": wall-clock figures move with that (tens of percent on a busy machine), instruction counts do not"

    def stamp(self, stages=()):
        s = f"_Written by {self.at()} ({self.machine()})"
        if stages:
            s += "; " + self.load_note(stages)
        return s + "._"

    # -- helpers --

    def ipb(self, parser, inp):
        v = self.ir.get((parser, inp))
        if v is None:
            raise Missing(f"no instructions per byte for {parser} on {inp} in ir.tsv")
        return v

    def peers(self):
        return [p for p, a in self.parsers.items() if not a["emcp"]]


# ---- the regions -------------------------------------------------------------------------------

def region_speed(run):
    """README.md's two speed figures: tools/call over stdio and over Streamable HTTP, each beside
    the official TypeScript SDK's server (bench/README.md has every figure)."""
    s, h = run.stdio, run.http
    clients = run.r.text("http-clients.txt").strip()
    return "\n".join([
        f"- `tools/call` over stdio: {sig3(s['emcp']['pipelined'])} requests/s pipelined (the official "
        f"TypeScript SDK server: {sig3(s['ts']['pipelined'])});",
        f"- over Streamable HTTP with {clients} keep-alive clients: {sig3(h['emcp']['rps'])} requests/s, p99 "
        f"{ms(h['emcp']['p99'])} (the TypeScript SDK: {sig3(h['ts']['rps'])}, p99 {ms(h['ts']['p99'])}).",
        "",
        run.stamp(("stdio", "http")),
    ])


def slots(run):
    """The HTTP engine's slots in emcp-sensors (ports/posix/src/serve/serve.cpp)."""
    with open(os.path.join(run.root, "ports/posix/src/serve/serve.cpp"), encoding="utf-8") as fh:
        src = fh.read()
    c = re.search(r"constexpr size_t kConnections = (\d+);", src)
    # With both eras (the default build, which the bench measures): "EMCP_LEGACY_ERA ? N : 0".
    s = re.search(r"constexpr size_t kSessions = (?:EMCP_LEGACY_ERA \? )?(\d+)", src)
    if not c or not s:
        raise Missing("ports/posix/src/serve/serve.cpp: kConnections / kSessions not found")
    return c.group(1), s.group(1)


def region_memory(run):
    conns, sessions = slots(run)
    s, h = run.stdio["emcp"], run.http["emcp"]
    return (f"Linux: `emcp-sensors` runs in {mib(s['rss'])} of resident memory over stdio and "
            f"{mib(h['rss'])} serving HTTP with {conns} connection and {sessions} session slots "
            f"(peak RSS under load), of which {mib(s['anon'])} / {mib(h['anon'])} is anonymous memory "
            f"(stack, static data, the libraries' written pages) and the rest mapped code and "
            f"read-only data of the program and its shared libraries. Measured by {run.at()} "
            f"([bench/README.md](../bench/README.md#2-stdio-emcp-sensors-against-the-official-typescript-sdk-server)).")


def region_rss(run):
    return (f"{mib(run.stdio['emcp']['rss'])} over stdio, {mib(run.http['emcp']['rss'])} serving "
            f"HTTP (peak RSS, {run.at()})")


def region_duration(run):
    d = run.durations
    parts = [f"setup and build {duration(d['build'])}", f"cross-check and callgrind ({run.cg_runs} runs, "
             f"{run.cores} at a time) {duration(d['callgrind'])}", f"JSON timing {duration(d['timing'])}",
             f"the annotation {duration(d['annotate'])}", f"stdio {duration(d['stdio'])}",
             f"HTTP {duration(d['http'])}", f"RTOS {duration(d['rtos'])}", f"MQTT fleet {duration(d['fleet'])}",
             f"the target's instructions {duration(d['target'])}"]
    return "\n".join([
        f"The last run took {duration(d['total'])}: " + ", ".join(parts) + " (the build is quicker "
        "when it is up to date).",
        "",
        run.stamp(("json", "stdio", "http", "rtos", "mqtt-fleet")),
    ])


def region_inputs(run):
    out = []
    for inp, title in (("call", "tools/call"), ("list", "tools/list")):
        i = run.inputs[inp]
        out.append(f"{title} {thou(i['bytes'])} bytes, {thou(i['scalars'] + i['containers'])} values "
                   f"({thou(i['scalars'])} scalars and {thou(i['containers'])} containers) and "
                   f"{thou(i['keys'])} keys")
    return ("Sizes and counts, as the cross-check finds them: " + "; ".join(out) + ". "
            + run.stamp())


def region_machine(run, root):
    def lscpu(field):
        out = subprocess.run(["lscpu"], capture_output=True, text=True).stdout
        m = re.search(r"^" + re.escape(field) + r":\s*(.+)$", out, re.M)
        return m.group(1).strip() if m else "?"

    os_name = "?"
    if os.path.exists("/etc/os-release"):
        with open("/etc/os-release") as fh:
            m = re.search(r'^PRETTY_NAME="?([^"\n]+)', fh.read(), re.M)
            os_name = m.group(1) if m else "?"
    if os.path.exists("/etc/debian_version"):
        with open("/etc/debian_version") as fh:
            os_name += f" ({fh.read().strip()})"
    kernel = os.uname().release
    hv = lscpu("Hypervisor vendor")
    cpu = (f"`lscpu`: {lscpu('Model name')}, {lscpu('CPU(s)')} CPUs, {lscpu('Thread(s) per core')} "
           f"thread(s) per core, L2 {lscpu('L2 cache')}, L3 {lscpu('L3 cache')}"
           + (f", a {hv} guest" if hv != "?" else ""))
    pk = ["rapidjson-dev", "libyajl-dev", "libcjson-dev", "nlohmann-json3-dev"]
    vers = subprocess.run(["dpkg-query", "-W", "-f", "${Package} ${Version}\\n", *pk],
                          capture_output=True, text=True).stdout.strip().splitlines()
    def npm(folder, pkg):
        try:
            with open(os.path.join(root, folder, "node_modules", pkg, "package.json")) as fh:
                return f"{pkg} {json.load(fh)['version']}"
        except OSError:
            return f"{pkg} ?"
    ts = [npm("bench/ts-server", pkg) for pkg in ("@modelcontextprotocol/sdk", "zod")]
    mosquitto = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", "mosquitto"],
                               capture_output=True, text=True).stdout.strip() or "?"
    rows = [
        ("CPU", cpu),
        ("OS", f"{os_name}, Linux {kernel}"),
        ("compilers", f"{tool_version(['g++', '--version'])}, {tool_version(['cmake', '--version'])}, "
                      f"Ninja {tool_version(['ninja', '--version'])}"),
        ("valgrind", tool_version(["valgrind", "--version"])),
        ("peers", ", ".join(vers)),
        ("TypeScript peer", f"Node {tool_version(['node', '--version'])}, " + ", ".join(ts)
         + " (`bench/ts-server`, `npm ci` from its `package-lock.json`)"),
        ("MQTT fleet", f"Debian's mosquitto {mosquitto}; the client on Node with " + npm("tests/mcp", "mqtt")
         + " (`tests/mcp`, `npm ci` from its `package-lock.json`)"),
    ]
    return "\n".join([run.stamp(), "", "| | |", "|---|---|"] + [f"| {a} | {b} |" for a, b in rows])


def region_plan(run):
    parts, startup = [], []
    for inp, title in (("call", "tools/call"), ("list", "tools/list")):
        n = run.ir_raw[("emcp-reader", inp)][2]
        parts.append(f"{thou(n)} for {title}")
    for (p, inp), (a, b, n, size) in run.ir_raw.items():
        startup.append(2 * a - b)  # Ir(N) - N parses
    return (f"N = " + ", ".join(parts) + f". In this run the {run.cg_runs} runs took "
            f"{duration(run.durations['callgrind'])} ({run.cores} at a time, with the cross-check), and "
            f"what cancels (start-up, input generation, setup: Ir(N) less N parses) was "
            f"{min(startup) / 1e6:.1f}-{max(startup) / 1e6:.1f} M instructions per run. " + run.stamp())


def program_sections(text):
    """The JSON program's output by its '## ' headings."""
    out, name = {}, "head"
    for line in text.splitlines():
        if line.startswith("## "):
            name = line[3:].strip()
            out[name] = []
            continue
        out.setdefault(name, []).append(line)
    return {k: "\n".join(v).strip("\n") for k, v in out.items()}


def region_results(run):
    secs = program_sections(run.r.text("results.md"))
    check = next((v for k, v in secs.items() if k.startswith("Cross-check")), None)
    ratios = next((v for k, v in secs.items() if k.startswith("Ratios")), None)
    if check is None or "Results" not in secs or ratios is None:
        raise Missing("results.md lacks the Cross-check, Results or Ratios section")
    a, b, n, size = run.ir_raw[("emcp-reader", "call")]
    return "\n".join([
        run.stamp(("json",)),
        "",
        secs["Results"],
        "",
        "Ratios in instructions per byte (printed by the program; target: emcp within 2x of the best peer):",
        "",
        ratios,
        "",
        "Cross-check (every row must accept both inputs and find what RapidJSON's SAX reader finds):",
        "",
        "```",
        check,
        "```",
        "",
        f"callgrind's raw figures are in `build/bench/results/ir.tsv` (Ir(N), Ir(2N), N, bytes). For "
        f"example the emcp reader on tools/call: Ir({thou(n)}) = {thou(a)}, Ir({thou(2 * n)}) = {thou(b)}, "
        f"so ({thou(b)} - {thou(a)}) / ({thou(n)} × {size}) = {(b - a) / (n * size):.1f} instructions "
        f"per byte, {thou((b - a) / n)} per message.",
    ])


def region_reading(run):
    secs = program_sections(run.r.text("results.md"))
    ratios = [line for line in next(v for k, v in secs.items() if k.startswith("Ratios")).splitlines()
              if line.startswith("- ")]
    missed = [line[2:] for line in ratios if "within the 2x target" not in line]
    if not ratios:
        raise Missing("results.md has no ratios")
    verdict = ("**The target is met on both inputs**, for the reader and for the decoder (the ratios "
               "above)." if not missed else
               "**The target is missed** here: " + "; ".join(missed) + ".")
    ins = ("call", "list")
    peers = run.peers()
    label = {p: run.parsers[p]["label"] for p in run.parsers}

    def worse(me, among):
        """Peers among `among` needing fewer instructions per byte than `me` on some input."""
        return sorted({label[p] for p in among for i in ins if run.ipb(p, i) <= run.ipb(me, i)})

    def pair(me, other):
        return " / ".join(f"{run.ipb(me, i) / run.ipb(other, i):.2f}x" for i in ins)

    def best(pred):
        out = []
        for i in ins:
            c = [p for p in peers if pred(run.parsers[p])]
            out.append(min(c, key=lambda p: run.ipb(p, i)))
        return out

    lines = [verdict, ""]
    beaten = worse("emcp-reader", peers)
    b_utf8 = best(lambda a: a["utf8"])
    lines.append(
        "- The emcp reader executes " + ("fewer instructions per byte than every peer on both inputs"
                                         if not beaten else "more instructions per byte than "
                                         + ", ".join(beaten) + " on at least one input")
        + f" (against RapidJSON's SAX reader with its default flags, which does not check UTF-8: "
        f"{pair('emcp-reader', 'rapidjson-sax')}, tools/call / tools/list). Against the best peer that "
        f"checks UTF-8 as emcp does: " + " / ".join(
            f"{run.ipb('emcp-reader', i) / run.ipb(p, i):.2f}x ({label[p]})" for i, p in zip(ins, b_utf8)) + ".")
    wall = []
    for other in ("rapidjson-sax", "yajl"):
        if all((other, i) in run.mbps and ("emcp-reader", i) in run.mbps for i in ins):
            r = " / ".join(f"{run.mbps[('emcp-reader', i)] / run.mbps[(other, i)]:.2f}x" for i in ins)
            wall.append(f"{r} {label[other]}'s")
    lines.append("- Wall clock in this run (noisy, see the load above): the emcp reader's MB/s is "
                 + " and ".join(wall) + " (tools/call / tools/list).")
    doms = [p for p in peers if run.parsers[p]["dom"]]
    builders_beaten = worse("emcp-decoder", doms)
    others = [p for p in peers if not run.parsers[p]["dom"]]
    others_beaten = worse("emcp-decoder", others)
    others_not = sorted({label[p] for p in others} - set(others_beaten))
    lines.append(
        "- The JSON-RPC decoder, which classifies the message and builds the whole params/result "
        "tree in the arena, needs " + ("fewer instructions per byte than every DOM peer on both inputs"
                                       if not builders_beaten else "more instructions per byte than "
                                       + ", ".join(builders_beaten) + " on at least one input")
        + f": against RapidJSON's DOM {pair('emcp-decoder', 'rapidjson-dom')}, against RapidJSON's DOM "
        f"with UTF-8 validation {pair('emcp-decoder', 'rapidjson-dom-utf8')} (tools/call / tools/list). "
        "Of the SAX and streaming peers, which build nothing, "
        + (("it needs fewer than " + ", ".join(others_not) + " on both inputs") if others_not else "")
        + ("; " if others_not and others_beaten else "")
        + (("more than " + ", ".join(others_beaten) + " on at least one input") if others_beaten else "")
        + f". On tools/list the reader is {100 * run.ipb('emcp-reader', 'list') / run.ipb('emcp-decoder', 'list'):.0f} % "
        f"of the decoder's instructions.")
    lines.append(
        f"- Fed in 256-byte chunks (strings and keys cut at chunk boundaries), tools/list costs the "
        f"reader {run.ipb('emcp-reader-256', 'list') - run.ipb('emcp-reader', 'list'):+.1f} instructions "
        f"per byte ({100 * (run.ipb('emcp-reader-256', 'list') / run.ipb('emcp-reader', 'list') - 1):+.0f} %) "
        f"and the decoder {run.ipb('emcp-decoder-256', 'list') - run.ipb('emcp-decoder', 'list'):+.1f} "
        f"({100 * (run.ipb('emcp-decoder-256', 'list') / run.ipb('emcp-decoder', 'list') - 1):+.0f} %).")
    call = run.inputs["call"]["bytes"]
    lines.append(
        f"- Per tools/call message ({call} bytes): {run.ipb('emcp-reader', 'call') * call / 1000:.1f} k "
        f"instructions for the emcp reader, {run.ipb('emcp-decoder', 'call') * call / 1000:.1f} k for the "
        f"decoder; small messages cost more per byte for every parser (per-message setup).")
    arena = []
    for i, title in zip(ins, ("tools/call", "tools/list")):
        hw, cap = run.arena[("emcp-decoder", i)]
        arena.append(f"{thou(hw)} bytes for {title}")
    hw_list = run.arena[("emcp-decoder", "list")][0]
    lines.append(
        "- The arena the decoder needs (its high-water mark): " + ", ".join(arena)
        + f" ({hw_list / run.inputs['list']['bytes']:.1f} bytes per input byte on tools/list: tree "
        f"nodes on x86-64 plus the text).")
    li = run.inputs["list"]
    events = li["scalars"] + 2 * li["containers"] + li["keys"]
    lines.append(
        f"- tools/list is {thou(events)} reader events ({thou(li['scalars'])} scalars, "
        f"{thou(li['containers'])} containers opened and closed, {thou(li['keys'])} keys): "
        f"{run.ipb('emcp-reader', 'list') * li['bytes'] / events:.0f} instructions per event for the emcp "
        f"reader, consumer included.")
    lines += ["", run.stamp(("json",))]
    return "\n".join(lines)


def region_annotate(run):
    return "\n".join([run.stamp(), "", run.r.text("annotate.md").strip("\n")])


def table_part(md):
    """run.sh's Markdown without its heading (the stamp says when and how busy)."""
    return "\n".join(line for line in md.strip("\n").splitlines() if not line.startswith("## ")).strip("\n")


def region_stdio(run):
    return run.stamp(("stdio",)) + "\n\n" + table_part(run.r.text("stdio.md"))


def region_http(run):
    return run.stamp(("http",)) + "\n\n" + table_part(run.r.text("http.md"))


def region_rtos(run):
    return run.stamp(("rtos",)) + "\n\n" + table_part(run.r.text("rtos.md"))


def region_fleet(run):
    return run.stamp(("mqtt-fleet",)) + "\n\n" + table_part(run.r.text("mqtt-fleet.md"))


def region_target(run):
    # Instruction counts on an emulated board: no wall clock, no load note.
    return run.stamp() + "\n\n" + table_part(run.r.text("target.md"))


def region_fleet_doc(run):
    """docs/mqtt.md: the fleet in a few figures (bench/README.md has them all)."""
    f, n = run.fleet, run.fleet_nagle
    b, d, c = f["broker"], f["device"], f["calls"]
    devices = f["devices"]

    def t(v):
        return f"{v:.0f} ms" if v >= 10 else f"{v:.1f} ms"

    def kib(k):
        return f"{int(k + 0.5):,} KiB"  # halves up, as fleet.mjs's table rounds them

    return "\n".join([
        f"{devices} `emcp-sensors --mqtt` processes on one Mosquitto {f['mosquitto']} and one client (Node, "
        f"MQTT.js), all on this machine: the watcher had every presence {t(f['discovery']['all_ms'])} after the "
        f"first device started (starting {devices} processes took {t(f['discovery']['spawn_ms'])} of that; a "
        f"device's start to its presence p50 {t(f['discovery']['p50_ms'])}, p99 {t(f['discovery']['p99_ms'])}), and "
        f"a client joining the fleet had the {devices} retained presences {t(f['join']['all_ms'])} after its "
        f"SUBSCRIBE. A session with every device, each on an MQTT connection of its own, {f['concurrency']} at a "
        f"time: {t(f['sessions']['all_ms'])} for all (initialize p50 {t(f['sessions']['init_p50_ms'])}); then "
        f"{sig3(c['per_s'])} `tools/call` per second with {f['concurrency']} in flight, p50 {t(c['p50_ms'])}, p99 "
        f"{t(c['p99_ms'])}, of processor time per call {c['broker_us']:.0f} µs in the broker, "
        f"{c['devices_us']:.0f} µs in the device and {c['client_us']:.0f} µs in the client; one call to every "
        f"device at once: the last answer after {t(f['burst']['all_ms'])}. Mosquitto's resident memory: "
        f"{mib(b['rss0_kib'])} with no device, {mib(b['rss_devices_kib'])} with {devices} "
        f"({kib((b['rss_devices_kib'] - b['rss0_kib']) / devices)} per device), {mib(b['rss_sessions_kib'])} with "
        f"their {devices} sessions too ({kib((b['rss_sessions_kib'] - b['rss_devices_kib']) / devices)} per "
        f"session); one `emcp-sensors` {mib(d['rss_median_kib'])} (median), of which {kib(d['anon_median_kib'])} "
        f"anonymous, {kib(d['pss_median_kib'])} proportional (Pss). With Mosquitto's default "
        f"`set_tcp_nodelay false`: {sig3(n['calls']['per_s'])} calls per second, p50 {t(n['calls']['p50_ms'])} "
        f"(Nagle's algorithm against the client's delayed acknowledgement). All of it, with the method: "
        f"[bench/README.md](../bench/README.md#5-mqtt-fleet).",
        "",
        run.stamp(("mqtt-fleet",)),
    ])


def region_inbox_latency(run):
    """docs/concurrency.md: the inbox's latency in a few figures (bench/README.md has them all)."""
    h, g = run.rtos_host, run.rtos_guest

    def us(ns):
        return f"{int(ns) / 1000:.1f} µs"

    def instr(counts, shift):
        return thou(int(counts) * 40 / 2 ** int(shift))

    task, isr = g[("task", "")], g[("isr", "")]
    task_i, isr_i = next(v for (s, ic), v in g.items() if s == "task" and ic), \
        next(v for (s, ic), v in g.items() if s == "isr" and ic)
    shift = task_i["icount"]
    return "\n".join([
        f"From a post to the first byte of its notification leaving the owner: on Linux "
        f"(`emcp_inbox_latency`, a producer thread, `posix::serve::stdio` on a pipe) p50 "
        f"{us(h['idle']['p50_ns'])}, p99 {us(h['idle']['p99_ns'])} and min {us(h['idle']['min_ns'])} with the "
        f"owner asleep in `poll(2)` (the same eventfd wake without emcp: p50 {us(h['eventfd']['p50_ns'])}, min "
        f"{us(h['eventfd']['min_ns'])}), p50 {us(h['busy']['p50_ns'])} "
        f"and p99 {us(h['busy']['p99_ns'])} while it answers pipelined requests; under FreeRTOS on "
        f"mps2-an385 in QEMU (`emcp-inbox-latency-rtos`) {instr(task_i['p50'], shift)} guest instructions "
        f"(p50) from a task's post to the first byte handed to the UART, {instr(isr_i['p50'], shift)} from "
        f"an interrupt's; QEMU's clock, which follows the host's, says p50 {int(task['p50']) / 25:.1f} µs and "
        f"{int(isr['p50']) / 25:.1f} µs (QEMU does not model the Cortex-M3's timing). All of it, with the "
        f"peers and the method: [bench/README.md](../bench/README.md#4-rtos-the-inboxs-latency-and-lwip-in-its-own-thread).",
        "",
        run.stamp(("rtos",)),
    ])


# ---- the stamps the documents carry ---------------------------------------------------------------

def stamps(root):
    """[(file, region, line, commit, dirty)] of every stamp in the regions of REGIONS' files
    (a region without a stamp is left out: check_generated.py reports it)."""
    out = []
    for rel in REGIONS:
        with open(os.path.join(root, rel), encoding="utf-8") as fh:
            text = fh.read()
        for r in docgen.regions(text, PREFIX, rel):
            for m in re.finditer(STAMP_COMMIT_RE, text[r.start:r.end]):
                out.append((rel, r.name, r.line, m.group(1), bool(m.group(2))))
    return out


def stale(root):
    """[(commit, [(file, region)], why)] for each stamp commit whose measured code (MEASURED)
    differs from the working tree's, or that git does not know; [] when every stamp is current
    or there is no git."""
    by_commit = {}
    for rel, name, _, commit, _ in stamps(root):
        by_commit.setdefault(commit, [])
        if (rel, name) not in by_commit[commit]:
            by_commit[commit].append((rel, name))
    out = []
    for commit, where in by_commit.items():
        try:
            diff = subprocess.run(["git", "-C", root, "diff", "--name-only", commit, "--", *MEASURED],
                                  capture_output=True, text=True)
        except OSError:
            return []  # no git: nothing to compare with
        if diff.returncode != 0:
            out.append((commit, where, f"git does not know commit {commit} ({diff.stderr.strip()})"))
        elif diff.stdout.strip():
            files = diff.stdout.split()
            out.append((commit, where, f"{len(files)} file(s) of {', '.join(m for m in MEASURED if not m.startswith(':'))} "
                                       f"changed since (e.g. {', '.join(files[:3])})"))
    return out


def warn_stale(root):
    """Prints a warning for each stale stamp (stale()); returns how many."""
    found = stale(root)
    for commit, where, why in found:
        files = {}
        for f, n in where:
            files.setdefault(f, []).append(n)
        regions = "; ".join(f"{f}: {', '.join(ns)}" for f, ns in files.items())
        print(f"bench: WARNING: the figures stamped with commit {commit} ({regions}) may be stale: "
              f"{why}; a complete scripts/bench run on a clean tree rewrites them", file=sys.stderr)
    return len(found)


def build(run, root):
    return {
        "README.md": {"speed": region_speed(run)},
        "docs/memory.md": {"memory": region_memory(run)},
        "examples/sensors/README.md": {"rss": region_rss(run)},
        "bench/README.md": {
            "duration": region_duration(run), "json-inputs": region_inputs(run),
            "machine": region_machine(run, root), "json-plan": region_plan(run),
            "json-results": region_results(run), "json-reading": region_reading(run),
            "json-annotate": region_annotate(run), "stdio": region_stdio(run), "http": region_http(run),
            "rtos": region_rtos(run), "mqtt-fleet": region_fleet(run), "target": region_target(run),
        },
        "docs/concurrency.md": {"inbox-latency": region_inbox_latency(run)},
        "docs/mqtt.md": {"fleet": region_fleet_doc(run)},
    }


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("results", nargs="?")
    ap.add_argument("--root", default=os.path.normpath(os.path.join(HERE, "..")))
    ap.add_argument("--print", action="store_true", help="print the regions instead of writing them")
    ap.add_argument("--stale", action="store_true",
                    help="only warn about the regions whose measured code changed since their stamp's commit")
    a = ap.parse_args()
    if a.stale:
        try:
            warn_stale(a.root)
        except (docgen.RegionError, OSError) as e:
            print(f"bench/report.py: {e}", file=sys.stderr)
            return 1
        return 0
    if a.results is None:
        ap.error("RESULTS_DIR is required (unless --stale)")
    try:
        run = Run(a.results, a.root)
        regions = build(run, a.root)
        for f, names in REGIONS.items():
            assert sorted(regions[f]) == sorted(names), f
        if a.print:
            for f, rs in regions.items():
                for name, text in rs.items():
                    print(f"==== {f} {name}\n{text}\n")
            return 0
        # All files' new texts first, so an error leaves every file as it was.
        new = {}
        for f, rs in regions.items():
            path = os.path.join(a.root, f)
            with open(path, encoding="utf-8") as fh:
                new[path] = (fh.read(), rs)
            docgen.replace(new[path][0], PREFIX, rs, f)
        for path, (_, rs) in new.items():
            changed = docgen.rewrite(path, PREFIX, rs)
            print(f"bench: {os.path.relpath(path, a.root)}: {len(rs)} region(s) "
                  f"{'rewritten' if changed else 'unchanged'}", file=sys.stderr)
    except (Missing, docgen.RegionError, KeyError, ValueError, IndexError) as e:
        print(f"bench/report.py: {e}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
