#!/usr/bin/env python3
"""Checks the object sizes the documentation quotes against the compiler's sizeof.

  check_memory.py --cxx arm-none-eabi-g++ --flags "-mcpu=cortex-m3 -mthumb -Os" --root REPO

docs/memory.md's and docs/http.md's memory tables and the examples' READMEs name objects
and give their sizes on the Cortex-M3; this compiles one translation unit with the cross
compiler that holds sizeof of each, reads the numbers back from the object file, and fails when
a row or sentence disagrees, printing it and the measured sizes.
"""
import argparse
import os
import re
import subprocess
import sys
import tempfile

# (document, text that starts the row's first cell, the types whose sizes the row gives, in order)
ROWS = [
    ("docs/memory.md", "| `mcp::Server`", ["emcp::mcp::Server"]),
    ("docs/memory.md", "| `mcp::Session`", ["emcp::mcp::Session"]),
    ("docs/memory.md", "| `mcp::StaticInputBridge<2, 512>`", ["emcp::mcp::StaticInputBridge<2, 512>"]),
    ("docs/memory.md", "| `mcp::StaticInbox<8, 64>`", ["emcp::mcp::StaticInbox<8, 64>"]),
    ("docs/memory.md", "| `transport::StaticLineTransport<2048>`", ["emcp::transport::StaticLineTransport<2048>"]),
    ("docs/memory.md", "| `json::StaticReader<>` / `jsonrpc::Decoder` / `json::Writer`",
     ["emcp::json::StaticReader<>", "emcp::jsonrpc::Decoder", "emcp::json::Writer"]),
    ("docs/memory.md", "| `transport::StaticHttpServer<2, 1, 2048, 768, 1024>`",
     ["emcp::transport::StaticHttpServer<2, 1, 2048, 768, 1024>"]),
    ("docs/http.md", "| per connection: HTTP parser", ["emcp::http::RequestParser"]),
    ("docs/http.md", "| per connection: WebSocket frame parser", ["emcp::ws::FrameParser"]),
    ("docs/http.md", "| `StaticHttpServer<2, 1, 2048, 768, 1024>` (a small device)",
     ["emcp::transport::StaticHttpServer<2, 1, 2048, 768, 1024>"]),
]
# (document, a regular expression whose groups are the sizes a sentence gives, the types): every
# match in the document is checked, and there must be one at least.
SENTENCES = [
    ("examples/echo/README.md", r"reader ([\d,]+) B, decoder ([\d,]+) B",
     ["emcp::json::StaticReader<>", "emcp::jsonrpc::Decoder"]),
    ("docs/memory.md", r"a tree node is ([\d,]+) B", ["emcp::json::Node"]),
    ("docs/memory.md", r"through `input\(\)` at once, ([\d,]+) B each", ["emcp::mcp::BridgeSlot"]),
    ("docs/mcp.md", r"A slot is ([\d,]+) B plus its arena on Cortex-M", ["emcp::mcp::BridgeSlot"]),
    ("docs/mcp.md", r"a node is ([\d,]+) B on a 32-bit target", ["emcp::json::Node"]),
    ("docs/mcp.md", r"32-bit target: ([\d,]+) B per slot plus `ResultBytes`", ["emcp::mcp::TaskSlot"]),
    ("docs/mcp.md", r"the default\s+store: ([\d,]+) B on Cortex-M3", ["emcp::mcp::StaticTaskStore<>"]),
    ("docs/mcp.md", r"declares \(([\d,]+) B on Cortex-M3", ["emcp::mcp::Session"]),
    ("docs/json.md", r"message\s+record in the arena \(([\d,]+) B on 32-bit targets\)", ["emcp::jsonrpc::Message"]),
]


def measure(cxx, flags, root, types):
    src = ['#include "emcp/mcp/server.h"', '#include "emcp/mcp/input_bridge.h"', '#include "emcp/mcp/tasks.h"',
           '#include "emcp/transport/line.h"',
           '#include "emcp/transport/http_server.h"', '#include "emcp/http/websocket.h"',
           '__attribute__((section(".emcp_sizes"), used)) extern const unsigned kSizes[] = {']
    src += [f"    sizeof({t})," for t in types]
    src.append("};")
    with tempfile.TemporaryDirectory() as tmp:
        cpp, obj = os.path.join(tmp, "sizes.cpp"), os.path.join(tmp, "sizes.o")
        with open(cpp, "w", encoding="utf-8") as fh:
            fh.write("\n".join(src) + "\n")
        subprocess.run([cxx, "-std=c++17", "-fno-exceptions", "-fno-rtti", *flags.split(),
                        "-I", os.path.join(root, "core/include"), "-c", cpp, "-o", obj], check=True)
        readelf = re.sub(r"g\+\+$", "readelf", cxx) if cxx.endswith("g++") else "readelf"
        dump = subprocess.run([readelf, "-x", ".emcp_sizes", obj], check=True, capture_output=True,
                              text=True).stdout
    data = b""
    for line in dump.splitlines():
        m = re.match(r"\s+0x[0-9a-f]+ ((?:[0-9a-f]{2,8} ){1,4})", line)
        if m:
            data += bytes.fromhex("".join(m.group(1).split()))
    return [int.from_bytes(data[i * 4:i * 4 + 4], "little") for i in range(len(types))]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--cxx", required=True)
    ap.add_argument("--flags", default="")
    ap.add_argument("--root", required=True)
    args = ap.parse_args()
    types = sorted({t for _, _, ts in ROWS + SENTENCES for t in ts})
    sizes = dict(zip(types, measure(args.cxx, args.flags, args.root, types)))
    bad = 0
    for doc, start, ts in ROWS:
        with open(os.path.join(args.root, doc), encoding="utf-8") as fh:
            row = next((l for l in fh if l.startswith(start)), None)
        want = [sizes[t] for t in ts]
        if row is None:
            print(f"{doc}: no row starting with {start!r}")
            bad += 1
            continue
        cells = row.rstrip().rstrip("|").split("|")
        got = [int(n.replace(",", "")) for n in re.findall(r"\d[\d,]*", cells[-1])][:len(ts)]
        status = "ok" if got == want else "WRONG"
        print(f"{status}: {doc}: {start.strip('| ')} says {got}, sizeof gives {want}")
        bad += got != want
    for doc, pattern, ts in SENTENCES:
        with open(os.path.join(args.root, doc), encoding="utf-8") as fh:
            found = list(re.finditer(pattern, fh.read()))
        want = [sizes[t] for t in ts]
        if not found:
            print(f"{doc}: no sentence matching {pattern!r}")
            bad += 1
            continue
        for m in found:
            got = [int(g.replace(",", "")) for g in m.groups()]
            status = "ok" if got == want else "WRONG"
            print(f"{status}: {doc}: {m.group(0)!r} says {got}, sizeof gives {want}")
            bad += got != want
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
