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
# (87,152 B; 88,288 B with typed parameter defaults and Inputs::sample_text, its ceiling 87 KiB).
set(EMCP_BOARD_MINIMAL_FLASH_BUDGET 23552)
# 16 KiB of RAM (the FE310's DTIM, QEMU's too): the sensors example with the micro:bit's options
# (boards/microbit/board.cmake says why each); its static RAM (11,136 B) and the stack region
# of linker.ld take the whole of it.
set(EMCP_BOARD_SENSORS_DEFINES EMCP_ARENA_SIZE=2048 EMCP_MAX_LISTENS=1 EMCP_NOTIFY_QUEUE=128
    EMCP_SENSORS_INPUT_SLOTS=1 EMCP_INPUT_ASKS=2)
set(EMCP_BOARD_SENSORS_FLASH_BUDGET 89088)
# FreeRTOS (ports/freertos): the kernel's RISC-V port with the chip-specific extensions of a core
# with a CLINT's machine timer and no registers beyond RV32I's (RISCV_MTIME_CLINT_no_extensions,
# the kernel's own); its configuration is freertos/. The kernel's trap entry is mtvec
# (common/arch/riscv.cpp), its tick the CLINT's machine timer.
set(EMCP_BOARD_FREERTOS_PORT GCC_RISC_V_GENERIC)
set(FREERTOS_RISCV_EXTENSION RISCV_MTIME_CLINT_no_extensions)
# The RTOS images' stack region (common/sections.ld, boards/CMakeLists.txt): main() until the
# scheduler starts, then the interrupts, which the kernel's trap entry runs there
# (__freertos_irq_stack_top, linker.ld) and which do not nest: 256 B, their worst case 204 B
# (main() before the scheduler: 96 B; docs/footprint.md). The tasks' stacks are static arrays.
set(EMCP_BOARD_FREERTOS_MAIN_STACK 256)
# The sensors image under FreeRTOS (emcp-sensors-rtos) in the same 16 KiB, where the bare-metal
# image's static RAM and stack region take it all: the tasks' stacks and control blocks, the
# kernel's data, the inbox and the interrupt stack do not fit beside that image's options. The
# owner task's stack is its worst case, 5,312 B (the request path 5,152 B, the context a
# switched-out task keeps and its stack's alignment 140 B, the overflow check's 16 B), the sensor
# task's 352 B, the idle task's 160 B (freertos/FreeRTOSConfig.h); the inbox holds 4 samples (8 on
# the other boards: 2 posters, 4 and 10 a second, drained by every round of the loop); and the
# message arena is 1 KiB where the bare-metal image has 2 KiB: the soak's requests take 356 B of
# it (device_stats' arena high-water mark), the SDK client's feature test and the bad-input table
# pass with it, and a message beyond it is answered -32600 "too large for the arena", as one
# beyond 2 KiB is. Its ceilings are its measured flash and static RAM rounded up to the KiB
# (92,844 B; 16,108 B, with the 256 B stack region: 16,364 B of the 16,384; 93,348 B of flash
# with typed parameter defaults and Inputs::sample_text, its ceiling 92 KiB).
set(EMCP_BOARD_SENSORS_RTOS_DEFINES EMCP_ARENA_SIZE=1024 EMCP_MAX_LISTENS=1 EMCP_NOTIFY_QUEUE=128
    EMCP_SENSORS_INPUT_SLOTS=1 EMCP_INPUT_ASKS=2)
# device_stats' "tasks" (every task's stack: ports/freertos's table of the tasks and the app's
# copy of it, 124 B) does not fit beside the rest (20 B were left): off, the owner's stack
# still in device_stats as on bare metal.
set(EMCP_BOARD_SENSORS_RTOS_APP_DEFINES EMCP_SENSORS_OWNER_STACK=5312 EMCP_SENSORS_SENSOR_STACK=352
    EMCP_SENSORS_INBOX_SLOTS=4 EMCP_FREERTOS_WATCHED_TASKS=0)
set(EMCP_BOARD_SENSORS_RTOS_TASK_STATS 0)
set(EMCP_BOARD_SENSORS_RTOS_FLASH_BUDGET 94208)
set(EMCP_BOARD_SENSORS_RTOS_RAM_BUDGET 16384)
# Its section of docs/footprint.md: the heading, and what the section says of its budgets and
# options beside the figures of its images' reports (tools/footprint/doc.py).
set(EMCP_BOARD_TITLE "SiFive HiFive1, FE310, RV32IMAC (QEMU `-M sifive_e`)")
set(EMCP_BOARD_FOOTPRINT_NOTE
  "RV32IMAC code with compressed instructions is larger than Thumb-2 (no load/store multiple; an
   address takes two instructions); the budgets are higher for it. The sensors image has the
   micro:bit's options (16 KiB of RAM here too).")
