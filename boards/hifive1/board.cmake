# hifive1: SiFive HiFive1, FE310 (E31 core: RV32IMAC, machine mode), QEMU -M sifive_e.
# Built with cmake/riscv32-unknown-elf.cmake. ISA spec 2.2 keeps the CSR instructions in the
# base ISA: with the 2019 spec gcc 12 would need -march=rv32imac_zicsr, which matches none of
# Debian's multilibs (libgcc would be the rv64 one). -msave-restore: prologues and epilogues
# call libgcc's shared register saves (__riscv_save_N) instead of storing each register
# inline, 4 to 5% less flash (sensors: 4.7 KiB) for a few cycles a call.
set(EMCP_BOARD_ARCH riscv)
set(EMCP_BOARD_CPU_FLAGS -march=rv32imac -mabi=ilp32 -misa-spec=2.2 -msave-restore)
set(EMCP_BOARD_QEMU_MACHINE sifive_e)
set(EMCP_BOARD_QEMU_PROGRAM qemu-system-riscv32)
# The CLINT's mtime counts the FE310's real-time clock, 32,768 Hz on the chip; QEMU's sifive_e
# (7.2) counts it at 10 MHz. Images run in QEMU by default; build for the board with
# -DEMCP_HIFIVE1_MTIME_HZ=32768.
set(EMCP_HIFIVE1_MTIME_HZ 10000000 CACHE STRING "CLINT mtime rate: 10000000 in QEMU's sifive_e, 32768 on a HiFive1")
# A 512-byte receive ring (board/rx.h; 1 KiB on the other boards): the sensors image's static
# RAM and its stack take the whole of the 16 KiB, and emcp-bridge sends no more than the ring
# holds (the banner states it), so a smaller ring costs pipelining, never bytes.
set(EMCP_BOARD_DEFINES EMCP_HIFIVE1_MTIME_HZ=${EMCP_HIFIVE1_MTIME_HZ} EMCP_BOARD_RX_RING=512)
# Budgets: the measured flash (bin/*.footprint.json), rounded up to the KiB. RV32IMAC code with
# compressed instructions comes out larger than Thumb-2 (no load/store multiple, no
# PC-relative literal loads: an address is built by two instructions, lui and addi), about the
# micro:bit's Thumb-1 for the minimal server (23,084 B) and more for the sensors image
# (87,152 B).
set(EMCP_BOARD_MINIMAL_FLASH_BUDGET 23552)
# 16 KiB of RAM (the FE310's DTIM, QEMU's too): the sensors example with the micro:bit's options
# (boards/microbit/board.cmake says why each); its static RAM (11,136 B) and the stack region
# of linker.ld take the whole of it.
set(EMCP_BOARD_SENSORS_DEFINES EMCP_ARENA_SIZE=2048 EMCP_MAX_LISTENS=1 EMCP_NOTIFY_QUEUE=128
    EMCP_SENSORS_INPUT_SLOTS=1 EMCP_INPUT_ASKS=2)
set(EMCP_BOARD_SENSORS_FLASH_BUDGET 88064)
