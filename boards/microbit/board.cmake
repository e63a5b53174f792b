# microbit: BBC micro:bit v1, nRF51822 (Cortex-M0, ARMv6-M), QEMU -M microbit.
set(EMCP_BOARD_CPU_FLAGS -mcpu=cortex-m0 -mthumb)
set(EMCP_BOARD_QEMU_MACHINE microbit)
# nRF51 interrupt lines (UART0 is IRQ 2, TIMER0 IRQ 8; SWI5 is the last, 31).
set(EMCP_BOARD_IRQS 32)
# Minimal server: the Cortex-M3 budget (20 KiB) plus what Thumb-1 costs (fewer registers
# reachable by most instructions, no IT blocks, no hardware divide: libgcc's division).
set(EMCP_BOARD_MINIMAL_FLASH_BUDGET 23552)
# 16 KiB of RAM: the sensors example runs with a 2 KiB message arena (with the default 4 KiB
# its static RAM and the 5 KiB stack region of linker.ld would not fit: docs/footprint.md has
# the static RAM of the Cortex-M3 image, which has the default); the link fails if they outgrow
# the RAM. Thumb-1 code is larger: its flash ceiling is 72 KiB, 74 KiB since MCP 2026-07-28's
# subscriptions/listen (the measured 74,828 B), 81 KiB since its tools ask through input() for
# both eras (82,020 B), 82 KiB with the lossless UART (83,540 B: board/rx.h, the gap answer),
# 83 KiB with typed parameter defaults and Inputs::sample_text (83,988 B); 82 KiB again in issue
# 33 (83,500 B: StrView's literals measured at compile time, the HTTP parser's table).
# One subscriptions/listen stream (136 B; the default 4 take 408 B more), paid for by half the
# held-notification queue (128 B). One call asking an older client at a time (the InputBridge's
# second slot, about 600 B, would not fit), with up to 2 questions a round.
set(EMCP_BOARD_SENSORS_DEFINES EMCP_ARENA_SIZE=2048 EMCP_MAX_LISTENS=1 EMCP_NOTIFY_QUEUE=128
    EMCP_SENSORS_INPUT_SLOTS=1 EMCP_INPUT_ASKS=2)
set(EMCP_BOARD_SENSORS_FLASH_BUDGET 83968)
# RTS/CTS flow control, when two pins are wired to the host's (board.cpp; the micro:bit's USB
# interface chip wires none): -DEMCP_MICROBIT_RTS_PIN=N -DEMCP_MICROBIT_CTS_PIN=M. Compiled with
# these (edge connector P0.1, P0.2) by the build, not run.
set(EMCP_BOARD_RTSCTS_DEFINES EMCP_MICROBIT_RTS_PIN=1 EMCP_MICROBIT_CTS_PIN=2)
# Its section of docs/footprint.md: the heading, and what the section says of its budgets and
# options beside the figures of its images' reports (tools/footprint/doc.py).
set(EMCP_BOARD_TITLE "BBC micro:bit v1, nRF51822 (QEMU `-M microbit`)")
set(EMCP_BOARD_FOOTPRINT_NOTE
  "Thumb-1 code (ARMv6-M) is larger: fewer registers most instructions reach, no IT blocks, no
   hardware divide (libgcc's division); the budgets are higher for it. The sensors image is
   built with a smaller message arena (options column) to fit the chip's RAM beside its stack
   region.")
