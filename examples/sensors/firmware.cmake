# examples/sensors: its firmware images, declared with emcp_firmware() (boards/CMakeLists.txt
# includes this file after defining it, EMCP_BOARD and, on a board with a network,
# EMCP_BOARD_NET_SOURCES / EMCP_BOARD_NET_LIBS).
# board.cmake may leave the sensors image out (EMCP_BOARD_SENSORS OFF: not enough RAM), give it
# its own options (EMCP_BOARD_SENSORS_DEFINES) or another flash ceiling.
if(NOT DEFINED EMCP_BOARD_SENSORS)
  set(EMCP_BOARD_SENSORS ON)
endif()
if(NOT DEFINED EMCP_BOARD_SENSORS_FLASH_BUDGET)
  set(EMCP_BOARD_SENSORS_FLASH_BUDGET 65536)
endif()
if(EMCP_BOARD_SENSORS)
# The sensors example with every feature its SDK test exercises. Its target is 40 KiB of flash,
# set on the Cortex-M3 (FLASH_TARGET: reported, not enforced); it is not met (docs/footprint.md
# says by how much and where the bytes go), so its budget is only a ceiling against growth.
set(sensors_sources
  ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp ${CMAKE_CURRENT_LIST_DIR}/app.cpp
  ${CMAKE_CURRENT_LIST_DIR}/media.cpp ${CMAKE_CURRENT_LIST_DIR}/sensors_common.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sensors_board.cpp)
set(sensors_target)
if(EMCP_BOARD STREQUAL "mps2-an385")
  set(sensors_target FLASH_TARGET 40960)
endif()
emcp_firmware(emcp-sensors-${EMCP_BOARD}
  SOURCES ${sensors_sources}
  INCLUDES ${CMAKE_CURRENT_LIST_DIR}
  DEFINES ${EMCP_BOARD_SENSORS_DEFINES}
  FLASH_BUDGET ${EMCP_BOARD_SENSORS_FLASH_BUDGET} ${sensors_target})
# On the Cortex-M3 only, against the same target: the example without its four tools that ask
# the client or send PNG/WAV content, and without the roots hook (EMCP_SENSORS_CLIENT_TOOLS=0,
# examples/sensors/app.cpp), for docs/footprint.md; not run in QEMU.
if(EMCP_BOARD STREQUAL "mps2-an385")
  emcp_firmware(emcp-sensors-lean-${EMCP_BOARD}
    SOURCES ${sensors_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES ${EMCP_BOARD_SENSORS_DEFINES}
    APP_DEFINES EMCP_SENSORS_CLIENT_TOOLS=0
    ${sensors_target})
endif()
endif()
if(EMCP_BOARD_NET)
  set(sensors_net_sources ${CMAKE_CURRENT_LIST_DIR}/main_board_net.cpp ${CMAKE_CURRENT_LIST_DIR}/app.cpp
      ${CMAKE_CURRENT_LIST_DIR}/media.cpp ${CMAKE_CURRENT_LIST_DIR}/sensors_common.cpp
      ${CMAKE_CURRENT_LIST_DIR}/sensors_board.cpp ${EMCP_BOARD_NET_SOURCES})
  # The sensors example, unchanged (but for device_stats' "network" object), on the UART and
  # over HTTP at once: 4 connections, 2 sessions, within 128 KiB of flash and 64 KiB of static
  # RAM (enforced). Authorization headers up to 256 bytes (the default keeps 1 KiB).
  emcp_firmware(emcp-sensors-net-${EMCP_BOARD}
    SOURCES ${sensors_net_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES EMCP_HTTP_MAX_AUTH=256
    APP_DEFINES EMCP_SENSORS_NETWORK=1
    LIBS ${EMCP_BOARD_NET_LIBS}
    FLASH_BUDGET 131072 RAM_BUDGET 65536)
  # The same with 8 connections and 8 sessions: the load test's 8 clients each hold a session.
  emcp_firmware(emcp-sensors-net8-${EMCP_BOARD}
    SOURCES ${sensors_net_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES EMCP_HTTP_MAX_AUTH=256
    APP_DEFINES EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_NET_CONNECTIONS=8 EMCP_SENSORS_NET_SESSIONS=8
    LIBS ${EMCP_BOARD_NET_LIBS})
endif()
