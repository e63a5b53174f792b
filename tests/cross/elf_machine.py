#!/usr/bin/env python3
"""elf_machine.py MACHINE FILE...: passes when every FILE is an ELF file for MACHINE (its
header's e_machine), fails naming each that is not. A cross build's tests run its programs
under the target's emulator; this says, from the files alone and not from the emulator, that
what they run is the target's code, not a host program that would pass them too."""
import sys

MACHINES = {3: "x86", 40: "arm", 62: "x86_64", 183: "aarch64", 243: "riscv", 94: "xtensa"}


def machine(path):
    with open(path, "rb") as fh:
        head = fh.read(20)
    if len(head) < 20 or head[:4] != b"\x7fELF":
        return None
    order = "little" if head[5] == 1 else "big"
    number = int.from_bytes(head[18:20], order)
    return MACHINES.get(number, f"e_machine {number}")


def main():
    want, files = sys.argv[1], sys.argv[2:]
    if not files:
        sys.exit("usage: elf_machine.py MACHINE FILE...")
    bad = 0
    for f in files:
        got = machine(f)
        if got != want:
            print(f"{f}: {'not an ELF file' if got is None else got}, not {want}")
            bad += 1
        else:
            print(f"{f}: {want}")
    sys.exit(1 if bad else 0)


main()
