"""The image's ELF file through binutils: its architecture, section sizes, symbols, names.

Every program is the image's own architecture's (arm-none-eabi-, riscv64-unknown-elf-,
xtensa-lx106-elf-), picked by the ELF header's machine.
"""
import os
import re
import subprocess
import sys

# The checkout (tools/footprint/../..), whose files the parts are told apart by.
ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

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



def demangle(names, elf):
    if not names:
        return []
    # Xtensa's GCC names its clones with "$" (foo$constprop$0), which c++filt does not read:
    # the "." of the other targets.
    names = [re.sub(r"\$(constprop|isra|part|cold|lto_priv)\$(\d+)", r".\1.\2", n) for n in names]
    res = subprocess.run([tool(elf, "c++filt")], input="\n".join(names), capture_output=True, text=True, check=True)
    return res.stdout.splitlines()



def checkout_roots(root):
    """The checkout folder as the compiler may have recorded it: as given, and resolved."""
    roots = []
    for r in (os.path.abspath(root), os.path.realpath(root)):
        if r.rstrip("/") + "/" not in roots:
            roots.append(r.rstrip("/") + "/")
    return roots


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



def object_sizes(elf):
    """{name: size} of the image's sized symbols, by mangled and by short demangled name."""
    syms = symbols(elf)
    sizes = {n: sz for n, sz, _ in syms}
    for (_, sz, _), d in zip(syms, demangle([n for n, _, _ in syms], elf)):
        sizes.setdefault(short(d), sz)
    return sizes
