#!/usr/bin/env python3
"""Counts what the network path costs the server on the Cortex-M3: runs a bench firmware that
plays both ends of a connection and reports its cases, in QEMU with the plugin
bench/target/insn_plugin.c, and adds up the plugin's counts of each case's windows (the server's
part). The firmwares:
  - emcp-bench-tls (bench/target/tls.cpp): a TLS 1.2 handshake, full then resumed with a ticket,
    and MCP requests over Streamable HTTP inside the connection (every call into emcp's TLS
    layer up to the last byte of its answer); then the same requests to the HTTP engine alone;
  - emcp-bench-net (bench/target/net.cpp): a TCP connection to the HTTP engine over lwIP, the
    same requests in it, its closing (every IP packet to the server, with the listener's run).

  guest_cases.py --elf IMAGE [--elf IMAGE...] [--plugin LIB] [--runs N] [--json]
  guest_cases.py --table JSON

For the TLS images, a certificate and key (P-256, self-signed) are made by openssl for the run
and provisioned in the board's credentials region; every run of one invocation uses the same
ones. A case's count must be the same in every run (QEMU's -icount, the firmware's fixed random
sequence and clock): exit status 1 otherwise, when the firmware reports a failure, or (--ceilings)
when a case takes more instructions than its ceiling (bench/target/ceilings.py). One line
per case and image: image=NAME case=NAME insns=N windows=K in=BYTES out=BYTES; with --json the
same as JSON, with each image's flash and its network library's part (Mbed TLS's or lwIP's, from
its footprint report), which --table prints as Markdown (the images of one JSON side by side:
they must run the same cases).
QEMU always stops (the end of this program kills it).
"""
import argparse
import json
import os
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, os.path.join(HERE, "..", "..", "tools", "run_board"))
from qemu_board import QemuBoard  # noqa: E402 (bench/qemu_board.py)
from guest_calls import build_plugin, image_symbols, markers  # noqa: E402
import ceilings  # noqa: E402 (bench/target/ceilings.py)
from run_board import BOARDS, credentials_blob  # noqa: E402 (the credentials region's format)

# The network library whose flash an image's table reports: the first part of its footprint
# report starting with one of these.
LIBRARY_PARTS = ("Mbed TLS (Debian's source)", "lwIP (Debian's source)")


def make_credentials(tmp):
    """A P-256 key and a self-signed certificate for localhost, as the region's bytes in a file."""
    key, cert = os.path.join(tmp, "bench.key"), os.path.join(tmp, "bench.pem")
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256", "-nodes",
                    "-keyout", key, "-out", cert, "-days", "3", "-subj", "/CN=localhost"],
                   check=True, capture_output=True)
    blob = os.path.join(tmp, "credentials.bin")
    with open(blob, "wb") as f:
        f.write(credentials_blob(cert, key))
    return blob


def run_once(elf, plugin, blob, tmp):
    """{case: (instructions, windows, bytes in, bytes out)} of one run of image `elf`."""
    begin, end = markers(image_symbols(elf))
    out = os.path.join(tmp, "counts")
    if os.path.exists(out):
        os.remove(out)
    machine, _, cred_addr = BOARDS["mps2-an385"]
    cmd = ["qemu-system-arm", "-M", machine, "-display", "none", "-monitor", "none", "-serial", "stdio", "-nic", "none",
           "-icount", "shift=0,sleep=off", "-kernel", elf, "-plugin", f"{plugin},begin={begin},end={end},out={out}"]
    if "-tls" in os.path.basename(elf):  # the TLS images read their certificate and key
        cmd += ["-device", f"loader,file={blob},addr={cred_addr:#x},force-raw=on"]
    board = QemuBoard(cmd)
    cases = []
    try:
        banner = board.line(60)
        if not banner.startswith(("emcp-bench-tls", "emcp-bench-net")):
            raise RuntimeError(f"unexpected banner: {banner!r}")
        while True:
            line = board.line(300)
            if line.startswith("fail "):
                raise RuntimeError(f"{os.path.basename(elf)}: {line}")
            if line == "end":
                break
            if line.startswith("case "):
                name, fields = line[5:].rsplit(" windows=", 1)
                windows, rest = fields.split(" ", 1)
                kv = dict(f.split("=") for f in rest.split())
                cases.append((name, int(windows), int(kv["in"]), int(kv["out"])))
    finally:
        board.stop()
    with open(out) as f:
        lines = f.read().splitlines()
    counts = [int(l.split()[1]) for l in lines if l.startswith("insns ")]
    unmatched = [l for l in lines if l.startswith("total ") and not l.endswith(" unmatched 0")]
    if unmatched:
        raise RuntimeError(f"a window opened without closing: {unmatched[0]}")
    if len(counts) != sum(c[1] for c in cases):
        raise RuntimeError(f"{len(counts)} counts for {sum(c[1] for c in cases)} windows")
    results, at = {}, 0
    for name, windows, bytes_in, bytes_out in cases:
        results[name] = (sum(counts[at:at + windows]), windows, bytes_in, bytes_out)
        at += windows
    return results


def image_facts(elf):
    """The image's name, flash and network library's part (its name, bytes), from the footprint
    report beside it."""
    report = elf[:-len(".elf")] + ".footprint.json"
    with open(report) as f:
        r = json.load(f)
    library = next(((label, n) for label, n in r["flash_parts"] if label.startswith(LIBRARY_PARTS)), None)
    if library is None:
        raise RuntimeError(f"{report}: no part of {' or '.join(LIBRARY_PARTS)}")
    return {"image": r["name"], "flash": r["flash"], "library": library[0].split(" (")[0], "library_flash": library[1],
            "options": r.get("options", [])}


def table(paths):
    """Markdown: a row per case, a column per image, the ciphertext each way and the first
    image's time at 64, 160 and 240 MHz (one instruction a cycle); then each image's flash."""
    images = []
    for p in paths:
        with open(p) as f:
            images.extend(json.load(f))
    names = [c[0] for c in images[0]["cases"]]
    mhz = (64, 160, 240)
    label = lambda im: f"`{im['image']}`"  # noqa: E731
    lines = ["| case (the server's instructions) | " + " | ".join(label(im) for im in images) +
             " | bytes in / out (over TLS: ciphertext; over lwIP: IP packets) | " + " | ".join(f"ms at {f} MHz (first image)" for f in mhz) + " |",
             "|---|" + "---:|" * (len(images) + 1 + len(mhz))]
    for i, name in enumerate(names):
        row = [f"{im['cases'][i][1]:,}" for im in images]
        c = images[0]["cases"][i]
        times = [f"{c[1] / (f * 1000):,.2f}" for f in mhz]
        lines.append(f"| {name} | " + " | ".join(row) + f" | {c[3]:,} B / {c[4]:,} B | " + " | ".join(times) + " |")
    lines.append(f"| the image's flash (its {images[0]['library']} part) | " +
                 " | ".join(f"{im['flash']:,} B ({im['library_flash']:,} B)" for im in images) + " |" + " |" * (1 + len(mhz)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--elf", action="append", default=[])
    ap.add_argument("--plugin")
    ap.add_argument("--runs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--table", nargs="+")
    ap.add_argument("--ceilings", nargs="?", const=ceilings.DEFAULT, metavar="TSV",
                    help="fail when a case takes more than its ceiling (default file: bench/target/ceilings.tsv)")
    a = ap.parse_args()
    if a.table:
        print(table(a.table))
        return 0
    if not a.elf:
        ap.error("--elf IMAGE (or --table JSON)")
    with tempfile.TemporaryDirectory() as tmp:
        plugin = a.plugin or build_plugin(tmp)
        blob = make_credentials(tmp)
        images, ok = [], True
        for elf in a.elf:
            first = run_once(elf, plugin, blob, tmp)
            for _ in range(a.runs - 1):
                again = run_once(elf, plugin, blob, tmp)
                if list(again) != list(first):
                    print(f"{os.path.basename(elf)}: the cases differ between runs", file=sys.stderr)
                    ok = False
                for name, c in first.items():
                    if again.get(name, (None,))[0] != c[0]:
                        print(f"{os.path.basename(elf)}: {name}: {c[0]} then {again.get(name)}", file=sys.stderr)
                        ok = False
            facts = image_facts(elf)
            facts["cases"] = [[name, *c] for name, c in first.items()]
            images.append(facts)
            if a.ceilings:
                over, notes = ceilings.check(a.ceilings, facts["image"], {name: c[0] for name, c in first.items()})
                for line in [f"note: {n}" for n in notes] + over:
                    print(f"guest_cases: {line}", file=sys.stderr)
                ok = ok and not over
            if not a.json:
                for name, (n, windows, bytes_in, bytes_out) in first.items():
                    print(f"image={facts['image']} case={name} insns={n} windows={windows} in={bytes_in} out={bytes_out}")
        if a.json:
            print(json.dumps(images))
        return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
