# examples/netcheck: its firmware images, declared with emcp_add_firmware() (the example's
# CMakeLists.txt includes this file on a board, EMCP_BOARD; boards/CMakeLists.txt defines the
# function and, on a board with a network, EMCP_BOARD_NET_SOURCES / EMCP_BOARD_NET_LIBS).
# Ethernet bring-up (a TCP echo on port 80 over the board's NIC driver and lwIP): not an MCP
# server, so not in docs/footprint.md (NOT_DOCUMENTED); its report is
# bin/emcp-netcheck-<board>.footprint.json, and its README's memory figures are a footprint region
# written from it (footprint_doc_is_current checks them).
if(EMCP_BOARD_NET)
  emcp_add_firmware(emcp-netcheck-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp ${EMCP_BOARD_NET_DRIVER_SOURCES}
    LIBS emcp_lwip_board
    NOT_DOCUMENTED)
  # The same under FreeRTOS, lwIP in its own thread beside the NIC's receive task
  # (main_rtos.cpp; ports/freertos/lwip): board_rtos_net runs board_net's echo against it.
  if(EMCP_FREERTOS_FOUND AND EMCP_BOARD_NET_LIBS_RTOS)
    emcp_add_firmware(emcp-netcheck-rtos-${EMCP_BOARD}
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_rtos.cpp ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp
              ${EMCP_BOARD_NET_DRIVER_SOURCES}
      APP_DEFINES EMCP_NETCHECK_NO_MAIN=1
      LIBS emcp_lwip_board_rtos
      RTOS freertos
      TASKS emcp=owner_task:g_owner_stack nic_rx=nic_rx_task:g_nic_rx_stack tcpip=tcpip_thread:g_tcpip_stack
      TASK_CALLS ${EMCP_FREERTOS_LWIP_TASK_CALLS}
      NOT_DOCUMENTED)
  endif()
endif()
