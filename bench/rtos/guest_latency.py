#!/usr/bin/env python3
"""Runs emcp-inbox-latency-rtos (bench/rtos/latency_rtos.cpp) in QEMU and prints, per source of
posts, how long a post took to leave the owner task as the first byte of its notification on
the UART, in TIMER1 counts (the modelled 25 MHz CPU clock), for bench/rtos/run.sh.

  guest_latency.py --elf IMAGE [--posts N] [--sources task,isr] [--icount SHIFT]

Speaks JSON-RPC over the board's UART (QEMU's -serial stdio): initialize, logging/setLevel,
then per source the tool `run`, every notification read and its number checked (in order, no
gap, none twice), then the tool `results` (each post's latency, as the firmware measured it).
One line per source: source=S posts=N refused=R min= p50= p99= max= (counts) ticks= cycles=
(the run's kernel ticks and TIMER1 counts: TIMER1 counts per tick). Exit status 1 when a check
fails (a notification out of order or missing, the firmware's own count of those, a sample
missing); timings are never judged. --icount SHIFT runs QEMU with -icount shift=SHIFT: its
virtual clock then advances 2^SHIFT ns per guest instruction instead of following the host.
QEMU always stops (the end of this program kills it).
"""
import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
from qemu_board import QemuBoard  # noqa: E402 (bench/qemu_board.py)


class Board(QemuBoard):
    def __init__(self, elf, icount):
        cmd = ["qemu-system-arm", "-M", "mps2-an385", "-display", "none", "-monitor", "none",
               "-serial", "stdio", "-nic", "none", "-kernel", elf]
        if icount is not None:
            cmd += ["-icount", f"shift={icount}"]
        super().__init__(cmd)
        self.next_id = 1

    def send(self, msg):
        self.write((json.dumps(msg, separators=(",", ":")) + "\n").encode())

    def request(self, method, params, on_notification=None, timeout=30):
        rid = self.next_id
        self.next_id += 1
        self.send({"jsonrpc": "2.0", "id": rid, "method": method, "params": params})
        while True:
            m = json.loads(self.line(timeout))
            if m.get("id") == rid:
                if "error" in m:
                    raise RuntimeError(f"{method}: {m['error']}")
                return m["result"]
            if on_notification is not None:
                on_notification(m)

    def stop(self):
        if self.p.poll() is None:
            self.p.kill()
        self.p.wait()


def percentile(sorted_v, q):
    """The sample at q (0..1) of sorted samples, as emcp_inbox_latency picks it (index n*q)."""
    return sorted_v[min(len(sorted_v) - 1, int(len(sorted_v) * q))]


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--elf", required=True)
    ap.add_argument("--posts", type=int, default=1000)
    ap.add_argument("--sources", default="task,isr")
    ap.add_argument("--icount", type=int)
    a = ap.parse_args()
    board = Board(a.elf, a.icount)
    errors = []
    try:
        banner = board.line(30)
        if "emcp-inbox-latency" not in banner:
            raise RuntimeError(f"unexpected banner: {banner!r}")
        board.request("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                     "clientInfo": {"name": "bench", "version": "1"}})
        board.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
        board.request("logging/setLevel", {"level": "debug"})
        for source in a.sources.split(","):
            seen = []

            def note(m):
                if m.get("method") == "notifications/message" and m["params"].get("logger") == "bench":
                    seen.append(int(m["params"]["data"]))

            r = board.request("tools/call", {"name": "run", "arguments": {"source": source, "posts": a.posts}}, note)
            if r.get("isError"):
                raise RuntimeError(f"run {source}: {r['content'][0]['text']}")
            deadline = time.monotonic() + 120
            while len(seen) < a.posts and time.monotonic() < deadline:
                note(json.loads(board.line(deadline - time.monotonic())))
            # The notifications the client read: 0, 1, 2 ... in order (a refused post's number is
            # posted again, so no gap either).
            if seen != list(range(len(seen))):
                errors.append(f"{source}: notifications out of order or repeated")
            text = None
            for _ in range(100):
                r = board.request("tools/call", {"name": "results", "arguments": {}}, note)
                text = r["content"][0]["text"]
                if not r.get("isError"):
                    break
                time.sleep(0.1)
            if r.get("isError"):
                raise RuntimeError(f"results {source}: {text}")
            f = dict(kv.split("=", 1) for kv in text.split(" "))
            samples = [int(x) for x in f["samples"].split(",") if x]
            if f["source"] != source:
                errors.append(f"{source}: the results are of {f['source']}")
            if int(f["bad"]) != 0:
                errors.append(f"{source}: the firmware saw {f['bad']} notification(s) out of order")
            if len(samples) != int(f["posts"]) or len(seen) != int(f["posts"]):
                errors.append(f"{source}: {f['posts']} posts taken, {len(samples)} samples, {len(seen)} notifications read")
            if int(f["posts"]) + int(f["refused"]) != a.posts:
                errors.append(f"{source}: {f['posts']} posts taken and {f['refused']} refused of {a.posts}")
            s = sorted(samples) or [0]
            print(f"source={source} posts={f['posts']} refused={f['refused']} min={s[0]} p50={percentile(s, 0.5)} "
                  f"p99={percentile(s, 0.99)} max={s[-1]} ticks={f['ticks']} cycles={f['cycles']}"
                  + (f" icount={a.icount}" if a.icount is not None else ""), flush=True)
    except (RuntimeError, ValueError, KeyError) as e:
        errors.append(str(e))
    finally:
        board.stop()
    for e in errors:
        print(f"guest_latency.py: MISMATCH: {e}", file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
