# examples/features: what each MCP feature adds to an image, measured on the Cortex-M3
# (mps2-an385) for docs/footprint.md's table "What each feature adds". Every image is the
# minimal server (one tool without parameters, on the UART, the default options: it links the
# shared emcp_core) with one feature more (APP_DEFINES EMCP_FEATURE_*, main_board.cpp);
# completion is measured on top of prompts, WebSocket on top of HTTP. Built to be measured, not
# run in QEMU (the features themselves are tested on every board with the sensors example).
if(EMCP_BOARD STREQUAL "mps2-an385")
  set(features_main ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp)
  emcp_add_firmware(emcp-feature-base-${EMCP_BOARD} SOURCES ${features_main})
  foreach(feature params resources prompts logging client_requests)
    string(TOUPPER ${feature} upper)
    emcp_add_firmware(emcp-feature-${feature}-${EMCP_BOARD} SOURCES ${features_main}
                  APP_DEFINES EMCP_FEATURE_${upper}=1)
  endforeach()
  emcp_add_firmware(emcp-feature-completion-${EMCP_BOARD} SOURCES ${features_main}
                APP_DEFINES EMCP_FEATURE_PROMPTS=1 EMCP_FEATURE_COMPLETION=1)
  if(EMCP_BOARD_NET)
    emcp_add_firmware(emcp-feature-http-${EMCP_BOARD} SOURCES ${features_main} ${EMCP_BOARD_NET_SOURCES}
                  APP_DEFINES EMCP_FEATURE_HTTP=1 LIBS ${EMCP_BOARD_NET_LIBS})
    emcp_add_firmware(emcp-feature-websocket-${EMCP_BOARD} SOURCES ${features_main} ${EMCP_BOARD_NET_SOURCES}
                  APP_DEFINES EMCP_FEATURE_HTTP=1 EMCP_FEATURE_WEBSOCKET=1 LIBS ${EMCP_BOARD_NET_LIBS})
  endif()
endif()
