"""Where an image's flash goes: its bytes by part (core, board, lwIP, Mbed TLS, the application...).

Code by the source file of each instruction (the DWARF line table), read-only data by where it
is defined (or its namespace), string literals by the part that refers to them first. The
labels (PARTS, LIBRARY_PARTS, DATA_PARTS) are the report's "flash_parts" keys, part of the
report format (tools/footprint/__init__.py): the document's rows are in the order of LABELS,
and its notes and regions name KERNEL_PART, PORT_PART, LWIP_SYS_PART and MQTT_PART.
"""
import bisect
import os
import re
import sys
import tempfile

from .elf import ROOT, arch, checkout_roots, run, tool

MQTT_PART = "core: MQTT 5 client, MCP over MQTT"
PORT_PART = "FreeRTOS port: the owner task's wait, clock, wake, idle task memory (ports/freertos)"
LWIP_SYS_PART = "lwIP's sys_arch on FreeRTOS: static mailboxes, semaphores, mutexes, the core lock (ports/freertos/lwip)"
PARTS = [  # (label, pattern on a source path relative to the checkout), first match wins
    ("core: JSON reader, writer, tree, numbers", r"^core/(src|include/emcp)/json/"),
    ("core: JSON-RPC decoder and encoder", r"^core/(src|include/emcp)/jsonrpc/"),
    ("core: MCP server, content, schemas", r"^core/(src|include/emcp)/mcp/"),
    ("core: HTTP engine, WebSocket", r"^core/(src|include/emcp)/transport/(http|websocket)"),
    ("core: authorization (bearer tokens, JWT, metadata)", r"^core/(src|include/emcp)/auth/"),
    (MQTT_PART, r"^core/(src|include/emcp)/mqtt/"),
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
    ("Mbed TLS (Debian's source): TLS 1.2, X.509, ECP/RSA, AES-GCM, ChaCha20-Poly1305",
     r"^(build/third_party/mbedtls/|ports/mbedtls/)"),
]
KERNEL_PART = "FreeRTOS kernel: scheduler, lists, queues, notifications, its port (EMCP_FREERTOS_KERNEL_DIR)"
LIBRARY_PARTS = [  # (label, pattern on a path outside the checkout, or on a name without one)
    (KERNEL_PART, r"/FreeRTOS-Kernel[^/]*/"),  # without --kernel-dir: the kernel's own folder name
    ("lwIP (Debian's source): TCP, IPv4, ARP, DHCP, pools", r"/lwip[^/]*/src/"),
    ("Mbed TLS (Debian's source): TLS 1.2, X.509, ECP/RSA, AES-GCM, ChaCha20-Poly1305",
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
    (MQTT_PART, r"^emcp::[^:]+::mqtt::"),
    ("board: start-up, UART, loop, mem*/str*", r"^(emcp::board::|g_vectors$)"),  # before emcp::
    ("core: transports, utilities", r"^emcp::"),
    ("lwIP (Debian's source): TCP, IPv4, ARP, DHCP, pools",
     r"^(memp_|lwip_|tcp_|udp_|ip4?_|ip_addr_|netif_|etharp|dhcp|pbuf_|ethbroadcast|ethzero)"),
    ("Mbed TLS (Debian's source): TLS 1.2, X.509, ECP/RSA, AES-GCM, ChaCha20-Poly1305",
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
