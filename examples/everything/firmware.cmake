# examples/everything: its firmware images, declared with emcp_add_firmware() (the example's
# CMakeLists.txt includes this file on a board, EMCP_BOARD; boards/CMakeLists.txt defines the
# function and, on a board with a network, EMCP_BOARD_NET_SOURCES / EMCP_BOARD_NET_LIBS).
if(EMCP_BOARD_NET)
  # The conformance suite's fixtures over HTTP (tests/conformance runs the suite against it).
  emcp_add_firmware(emcp-everything-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp ${CMAKE_CURRENT_LIST_DIR}/everything.cpp ${CMAKE_CURRENT_LIST_DIR}/input_required.cpp
            ${EMCP_BOARD_NET_SOURCES}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    LIBS ${EMCP_BOARD_NET_LIBS}
    DESCRIPTION "the conformance suite's fixtures on the UART and over HTTP through lwIP (8
                 connections, 8 sessions: the suite's clients each hold streams; not sized for a
                 small device)")
  # The same under FreeRTOS with lwIP in its own thread (ports/freertos/README.md): the board's
  # conformance rows run against it too (board_rtos_conformance*, tests/boards/CMakeLists.txt).
  if(EMCP_FREERTOS_FOUND AND EMCP_BOARD_NET_LIBS_RTOS)
    emcp_add_firmware(emcp-everything-rtos-${EMCP_BOARD}
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_rtos.cpp ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp
              ${CMAKE_CURRENT_LIST_DIR}/everything.cpp ${CMAKE_CURRENT_LIST_DIR}/input_required.cpp ${EMCP_BOARD_NET_SOURCES}
      INCLUDES ${CMAKE_CURRENT_LIST_DIR}
      APP_DEFINES EMCP_EVERYTHING_NO_MAIN=1
      LIBS ${EMCP_BOARD_NET_LIBS_RTOS}
      RTOS freertos
      TASKS emcp=owner_task:g_owner_stack nic_rx=nic_rx_task:g_nic_rx_stack tcpip=tcpip_thread:g_tcpip_stack
      TASK_CALLS ${EMCP_FREERTOS_LWIP_TASK_CALLS}
      NOT_DOCUMENTED)
  endif()
endif()
