# examples/everything: its firmware images, declared with emcp_firmware() (boards/CMakeLists.txt
# includes this file after defining it, EMCP_BOARD and, on a board with a network,
# EMCP_BOARD_NET_SOURCES / EMCP_BOARD_NET_LIBS).
if(EMCP_BOARD_NET)
  # The conformance suite's fixtures over HTTP (tests/conformance runs the suite against it).
  emcp_firmware(emcp-everything-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp ${CMAKE_CURRENT_LIST_DIR}/everything.cpp ${CMAKE_CURRENT_LIST_DIR}/input_required.cpp
            ${EMCP_BOARD_NET_SOURCES}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    LIBS ${EMCP_BOARD_NET_LIBS})
endif()
