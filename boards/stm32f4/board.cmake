# stm32f4: Cortex-M4; software floating point (the application's doubles need it either way).
set(EMCP_BOARD_CPU_FLAGS -mcpu=cortex-m4 -mthumb -mfloat-abi=soft)
set(EMCP_BOARD_QEMU_MACHINE netduinoplus2)
# STM32F405/407 interrupt lines (USART1 is IRQ 37; FPU is the last, 81).
set(EMCP_BOARD_IRQS 82)
# Minimal server: the Cortex-M3 budget (20 KiB) plus this chip's longer vector table (96 slots,
# +256 B) and PLL start-up; the build fails above it.
set(EMCP_BOARD_MINIMAL_FLASH_BUDGET 21504)
# Sensors: the Cortex-M3's ceiling plus the same vector table and start-up; it crossed 64 KiB
# (65,876 B) when the MCP 2026-07-28 input rounds came in, 66 KiB with subscriptions/listen
# (68,332 B), 73.9 KiB when its tools asked through input() for both eras (75,708 B), 75.4 KiB
# with the lossless UART (77,196 B: board/rx.h, the gap answer), so its ceiling is 76 KiB.
set(EMCP_BOARD_SENSORS_FLASH_BUDGET 77824)
# RTS/CTS flow control on PA12/PA11 (board.cpp): -DEMCP_STM32F4_RTSCTS=1, for a host adapter
# wired to them. Compiled so by the build, not run (QEMU's netduinoplus2 has no such lines).
set(EMCP_BOARD_RTSCTS_DEFINES EMCP_STM32F4_RTSCTS=1)
# Its section of docs/footprint.md: the heading, and what the section says of its budgets and
# options beside the figures of its images' reports (tools/footprint/doc.py).
set(EMCP_BOARD_TITLE "STM32F405/407 (QEMU `-M netduinoplus2`, Discovery and Nucleo boards)")
set(EMCP_BOARD_FOOTPRINT_NOTE
  "The minimal image's budget is above the Cortex-M3's by what this chip adds: a longer vector
   table and the PLL start-up.")
