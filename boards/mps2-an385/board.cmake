# mps2-an385: Cortex-M3, no FPU.
set(EMCP_BOARD_CPU_FLAGS -mcpu=cortex-m3 -mthumb)
set(EMCP_BOARD_QEMU_MACHINE mps2-an385)
# CMSDK/AN385 interrupt lines (UART0 RX is IRQ 0).
set(EMCP_BOARD_IRQS 32)
# The issue's budgets for the minimal server are set on Cortex-M3: 20 KiB flash, 6 KiB RAM.
set(EMCP_BOARD_MINIMAL_FLASH_BUDGET 20480)
# Ethernet: QEMU models the MPS2's LAN9118 (board/net.h over lan9118.cpp and net.cpp).
set(EMCP_BOARD_NET ON)
set(EMCP_BOARD_NET_DRIVER lan9118.cpp net.cpp)
# TLS credentials region: the last 512 KiB of SSRAM1 (board/credentials.h; QEMU loads it).
# No TRNG: TLS images seed their random generator from a test-only source (board::net_random).
set(EMCP_BOARD_TRNG OFF)
set(EMCP_BOARD_CREDENTIALS_ADDR 0x00380000)
