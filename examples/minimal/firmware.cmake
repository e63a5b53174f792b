# examples/minimal: its firmware images, declared with emcp_add_firmware() (the example's
# CMakeLists.txt includes this file on a board, EMCP_BOARD; boards/CMakeLists.txt defines the
# function and, on a board with a network, EMCP_BOARD_NET_SOURCES / EMCP_BOARD_NET_LIBS).
# The minimal server (one tool, 2 KiB arena) in the small profile: JSON-RPC envelope errors
# carry the standard messages only (EMCP_ERROR_STRINGS=0; MCP-level errors keep their detail),
# and it serves the legacy sessions only (EMCP_MODERN_ERA=0: today's desktop clients; so no
# subscriptions/listen table either, EMCP_MAX_LISTENS=0), with the boards' plain memory
# functions (EMCP_MEM_FAST=0: flash before cycles, docs/configuration.md).
# Budgets: 6 KiB static RAM; flash per board (board.cmake: a 21 KiB ceiling and the 20 KiB
# target on the Cortex-M3).
emcp_add_firmware(emcp-minimal-${EMCP_BOARD}
  SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp
  DEFINES EMCP_ERROR_STRINGS=0 EMCP_MODERN_ERA=0 EMCP_MAX_LISTENS=0
  APP_DEFINES EMCP_MEM_FAST=0
  FLASH_BUDGET ${EMCP_BOARD_MINIMAL_FLASH_BUDGET} FLASH_TARGET "${EMCP_BOARD_MINIMAL_FLASH_TARGET}" RAM_BUDGET 6144
  RAM_TARGET "${EMCP_BOARD_MINIMAL_RAM_TARGET}")
# The same server with the default options (every error text, EMCP_ERROR_STRINGS=1), measured
# for docs/footprint.md on the Cortex-M3 only (where the budgets are set; one more link, of the
# shared emcp_core): what the small profile saves.
if(EMCP_BOARD STREQUAL "mps2-an385")
  emcp_add_firmware(emcp-minimal-strings-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp
    APP_DEFINES EMCP_MEM_FAST=0
    VARIANT_OF emcp-minimal
    DESCRIPTION "the minimal server with every error text")
  # And in the small profile with the 2026-07-28 era beside the legacy one (the default of
  # EMCP_MODERN_ERA): what serving both eras costs.
  emcp_add_firmware(emcp-minimal-dual-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp
    DEFINES EMCP_ERROR_STRINGS=0
    APP_DEFINES EMCP_MEM_FAST=0
    VARIANT_OF emcp-minimal
    DESCRIPTION "the minimal server serving MCP 2026-07-28 (stateless) requests beside the legacy
                 sessions (EMCP_MODERN_ERA=1, the default)")
  # And the mirror of emcp-minimal: the small profile serving MCP 2026-07-28 alone
  # (EMCP_LEGACY_ERA=0: no initialize, no session state, no requests to the client; with no
  # listen streams, EMCP_MAX_LISTENS=0, nothing holds notifications either, so the queue is
  # gone with them). Its ceilings are its measured flash and RAM, rounded up to the KiB (22 KiB
  # since the server's inbox hook and emcp::board::wake() in the platform, 56 B: 21,532 B; 21 KiB
  # again in issue 33: 21,404 B).
  emcp_add_firmware(emcp-minimal-modern-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp
    DEFINES EMCP_ERROR_STRINGS=0 EMCP_LEGACY_ERA=0 EMCP_MAX_LISTENS=0
    FLASH_BUDGET 21504 RAM_BUDGET 6144
    APP_DEFINES EMCP_MEM_FAST=0
    VARIANT_OF emcp-minimal
    DESCRIPTION "the minimal server serving MCP 2026-07-28 alone (EMCP_LEGACY_ERA=0: no initialize,
                 no session state, no requests to the client, no notification queue), the mirror of
                 emcp-minimal's legacy sessions")
endif()
# On a board with a network: the same tool in emcp::board::NetMcp (board/net_mcp.h), on the UART
# and over HTTP at once (4 connections, 2 sessions: NetMcp's defaults). Its ceilings are its
# measured flash and RAM, rounded up to the KiB (98,432 B and 65,416 B when it was added; lwIP's
# pools and the four connections' arenas and buffers are most of the RAM); 108,088 B and
# 66,220 B since it announces itself on the LAN over mDNS (board/mdns.h: lwIP's responder and
# IGMP, the NIC's multicast filter, the TXT records: 9,348 B and 740 B more than the same image
# built with LWIP_MDNS_RESPONDER 0).
if(EMCP_BOARD_NET)
  emcp_add_firmware(emcp-minimal-net-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board_net.cpp ${EMCP_BOARD_NET_SOURCES}
    LIBS ${EMCP_BOARD_NET_LIBS}
    FLASH_BUDGET 101376 RAM_BUDGET 66560
    DESCRIPTION "the minimal server in emcp::board::NetMcp: on the UART and over HTTP through lwIP at
                 once (Streamable HTTP, HTTP+SSE; 4 connections with 2 KiB arenas and 1 KiB output
                 buffers, 2 sessions with 1.5 KiB replay buffers), announced on the LAN over mDNS")
  # Its slots, for the tests that run it (tests/boards/CMakeLists.txt).
  set_target_properties(emcp-minimal-net-${EMCP_BOARD} PROPERTIES EMCP_IMAGE_CONNECTIONS 4 EMCP_IMAGE_SESSIONS 2)
endif()
