# boards/esp32's network side cannot be built here either (no ESP-IDF, no Xtensa toolchain): its
# board/net.h (boards/esp32/emcp_net/net.cpp), the sensors_net example's main and the firmware
# mains it runs (examples/sensors/main_rtos.cpp and main_board_net.cpp), and what the component
# builds of the rest
# (ports/lwip's listener and TCP figures, boards/common/serve_net.cpp) are
# type-checked as ESP-IDF would compile them, with emcp's warnings as errors: against
# declarations of the ESP-IDF v5 calls they use (tests/esp32/stubs) and lwIP 2.1.3's own headers
# configured the way ESP-IDF configures its lwIP (tests/esp32/stubs/lwip_port: lwIP in its own
# thread with the core lock, memory from the C heap, no altcp, so altcp_* are lwIP's tcp_*).
# ports/lwip/include is deliberately not an include folder (its lwipopts.h is the NO_SYS one):
# boards/esp32/emcp_net/include forwards the listener's header, as on ESP-IDF. Compile-only.
#
# Needs CMAKE_SOURCE_DIR (the checkout), the target emcp_flags and lwIP's source
# (EMCP_LWIP_SOURCE_DIR, default build/third_party/lwip: scripts/third-party fetches it).
# tests/CMakeLists.txt includes it where lwIP is built (EMCP_WITH_LWIP).
if(NOT DEFINED EMCP_LWIP_SOURCE_DIR)
  set(EMCP_LWIP_SOURCE_DIR "${CMAKE_SOURCE_DIR}/build/third_party/lwip")
endif()
if(NOT EXISTS "${EMCP_LWIP_SOURCE_DIR}/src/include/lwip/altcp.h")
  message(FATAL_ERROR "esp32_net_adapter_compiles: lwIP's headers are not in EMCP_LWIP_SOURCE_DIR="
                      "${EMCP_LWIP_SOURCE_DIR} (run scripts/third-party)")
endif()
set(emcp_esp32_dir ${CMAKE_SOURCE_DIR}/boards/esp32)
add_library(esp32_net_adapter_compiles OBJECT
  ${emcp_esp32_dir}/emcp_net/net.cpp
  ${emcp_esp32_dir}/examples/sensors_net/main/main.cpp
  ${CMAKE_SOURCE_DIR}/examples/sensors/main_rtos.cpp
  ${CMAKE_SOURCE_DIR}/examples/sensors/main_board_net.cpp
  ${CMAKE_SOURCE_DIR}/ports/lwip/src/http_listener.cpp
  ${CMAKE_SOURCE_DIR}/ports/lwip/src/tcp.cpp
  ${CMAKE_SOURCE_DIR}/boards/common/serve_net.cpp
  ${CMAKE_SOURCE_DIR}/boards/common/net_common.cpp)
# As ESP-IDF's build (ESP_PLATFORM), the emcp component (EMCP_BOARD_RTOS, public) and the
# example's main component (its CMakeLists.txt) define them.
target_compile_definitions(esp32_net_adapter_compiles PRIVATE ESP_PLATFORM EMCP_BOARD_RTOS=1 EMCP_SENSORS_NO_MAIN
                           EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_OWNER_STACK=12288 EMCP_SENSORS_SENSOR_STACK=2048)
# The include folders of the components emcp_net and emcp, then ESP-IDF's: its lwIP port
# (lwipopts.h, arch/) before lwIP's own headers, as ESP-IDF's lwip component orders them.
target_include_directories(esp32_net_adapter_compiles PRIVATE
  ${emcp_esp32_dir}/emcp_net/include ${CMAKE_SOURCE_DIR}/ports/freertos/include
  ${CMAKE_SOURCE_DIR}/boards/common/include ${CMAKE_SOURCE_DIR}/core/include
  ${CMAKE_SOURCE_DIR}/ports/mbedtls/include ${CMAKE_SOURCE_DIR}/examples/sensors
  ${CMAKE_CURRENT_LIST_DIR}/stubs/lwip_port ${CMAKE_CURRENT_LIST_DIR}/stubs)
target_include_directories(esp32_net_adapter_compiles SYSTEM PRIVATE ${EMCP_LWIP_SOURCE_DIR}/src/include)
target_link_libraries(esp32_net_adapter_compiles PRIVATE emcp_flags)
