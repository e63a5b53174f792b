"""The footprint regions: the figures of README.md and other documents (DOC_REGIONS), each in a
marked region (<!-- footprint:begin NAME --> ... <!-- footprint:end NAME -->, tools/docgen.py's
one region mechanism), each written from one board's reports (by the images' names without the
board) and checked by that board's footprint_doc_is_current."""
import os
import sys

from .parts import KERNEL_PART, LWIP_SYS_PART, MQTT_PART, PORT_PART
from .report import base_name, budgets_met, changed_options, core_bytes, core_name, kib

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
import docgen  # noqa: E402 (tools/docgen.py: the generated regions of the docs)


# The footprint regions' texts (DOC_REGIONS below), each from one board's reports by base name.
def _status_minimal(r):
    m = r["emcp-minimal"]

    def one(what, key):
        # The goal is the target; the budget a ceiling the build enforces meanwhile.
        value, target, budget = m[key], m.get(f"{key}_target") or 0, m.get(f"{key}_budget") or 0
        if target and value > target:
            ceiling = f"; the build enforces a {kib(budget)} ceiling" if budget else ""
            return f"{what} target {kib(target)} not met: {kib(value)} ({value - target:,} B over{ceiling})"
        return f"{what} {'met' if not budget or value <= budget else 'not met'}: {kib(value)}"

    return f"{one('flash', 'flash')}, {one('RAM', 'ram')}"


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


# Issue 32's target for the MQTT client and the MCP-over-MQTT binding together (the part
# MQTT_PART of an image's flash).
MQTT_TARGET = 12 * 1024


def _mqtt_board(r):
    m, n, t = r["emcp-sensors-mqtt"], r["emcp-sensors-mqtt-net"], r["emcp-sensors-mqtt-tls"]
    ft, rt = m.get("flash_target") or 0, m.get("ram_target") or 0
    if not ft or not rt:
        sys.exit("footprint: emcp-sensors-mqtt has no flash and RAM target (FLASH_TARGET, RAM_TARGET)")
    part = dict(m["flash_parts"]).get(MQTT_PART, 0)
    objs = {name: size for name, size in m["ram_objects"]}

    def met(value, target):
        return "met" if value <= target else f"not met, {value - target:,} B over"
    return (f"without HTTP (`emcp-sensors-mqtt`) {kib(m['flash'])} of flash and {kib(m['ram'])} of static RAM "
            f"(the targets {kib(ft)} and {kib(rt)}: flash {met(m['flash'], ft)}, RAM {met(m['ram'], rt)}), "
            f"of which the MQTT client and the binding take {part:,} B of flash (the target {kib(MQTT_TARGET)}: "
            f"{met(part, MQTT_TARGET)}) and `g_mqtt` {objs['g_mqtt']:,} B of RAM; with HTTP as well "
            f"(`emcp-sensors-mqtt-net`) {kib(n['flash'])} and {kib(n['ram'])}; dialing the broker over TLS "
            f"(`emcp-sensors-mqtt-tls`) {kib(t['flash'])} and {kib(t['ram'])} ({t['flash'] - m['flash']:,} B of "
            f"flash more than without: Mbed TLS as a TLS 1.2 client and emcp's TLS layer; "
            f"`g_tls_pool` {dict(t['ram_objects'])['g_tls_pool']:,} B of RAM)")


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
    "examples/sensors/README.md": {"net": ("mps2-an385", _sensors_net),
                                   "mqtt": ("mps2-an385", _mqtt_board)},
    "docs/mqtt.md": {"board": ("mps2-an385", _mqtt_board)},
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

