# examples/netcheck: its firmware images, declared with emcp_firmware() (boards/CMakeLists.txt
# includes this file after defining it, EMCP_BOARD and, on a board with a network,
# EMCP_BOARD_NET_SOURCES / EMCP_BOARD_NET_LIBS).
# Ethernet bring-up (a TCP echo on port 80 over the board's NIC driver and lwIP): not an MCP
# server, so not in docs/footprint.md (NOT_DOCUMENTED); its report is
# bin/emcp-netcheck-<board>.footprint.json, and its README's memory figures are a footprint region
# written from it (footprint_doc_is_current checks them).
if(EMCP_BOARD_NET)
  emcp_firmware(emcp-netcheck-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp ${EMCP_BOARD_NET_DRIVER_SOURCES}
    LIBS emcp_lwip_board
    NOT_DOCUMENTED)
endif()
