# examples/features: what each MCP feature adds to an image, measured on the Cortex-M3
# (mps2-an385) for docs/footprint.md's table "What each feature adds". Every image is the
# minimal server (one tool without parameters, on the UART, the default options: it links the
# shared emcp_core) with one feature more (APP_DEFINES EMCP_FEATURE_*, main_board.cpp);
# completion is measured on top of prompts, WebSocket on top of HTTP (the table lists each row
# after the one it adds to, the rows in the order they are declared). Built to be measured, not
# run in QEMU (the features themselves are tested on every board with the sensors example).
if(EMCP_BOARD STREQUAL "mps2-an385")
  # Each image's FEATURE is its row of the table, FEATURE_BASE the image it is measured against.
  set(features_main ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp)
  emcp_add_firmware(emcp-feature-base-${EMCP_BOARD} SOURCES ${features_main}
    DESCRIPTION "the minimal server, default options")
  emcp_add_firmware(emcp-feature-params-${EMCP_BOARD} SOURCES ${features_main}
    APP_DEFINES EMCP_FEATURE_PARAMS=1
    FEATURE_BASE emcp-feature-base
    FEATURE "tools with parameters: one tool with a boolean, an integer and a number with ranges, and
             a string of an enumeration, checked against its schema before the handler runs")
  emcp_add_firmware(emcp-feature-resources-${EMCP_BOARD} SOURCES ${features_main}
    APP_DEFINES EMCP_FEATURE_RESOURCES=1
    FEATURE_BASE emcp-feature-base
    FEATURE "resources: two fixed ones and a URI template with a variable (resources/list, read,
             templates/list, subscribe)")
  emcp_add_firmware(emcp-feature-prompts-${EMCP_BOARD} SOURCES ${features_main}
    APP_DEFINES EMCP_FEATURE_PROMPTS=1
    FEATURE_BASE emcp-feature-base
    FEATURE "prompts: one with two arguments (prompts/list, get)")
  emcp_add_firmware(emcp-feature-logging-${EMCP_BOARD} SOURCES ${features_main}
    APP_DEFINES EMCP_FEATURE_LOGGING=1
    FEATURE_BASE emcp-feature-base
    FEATURE "logging: the tool sends a log message (notifications/message; logging/setLevel is in
             every server)")
  emcp_add_firmware(emcp-feature-client_requests-${EMCP_BOARD} SOURCES ${features_main}
    APP_DEFINES EMCP_FEATURE_CLIENT_REQUESTS=1
    FEATURE_BASE emcp-feature-base
    FEATURE "requests to the client: a tool that asks the user (elicitation) through input(), in both
             eras: input-required results with their signed requestState for 2026-07-28, the
             InputBridge (one slot) for older sessions")
  emcp_add_firmware(emcp-feature-completion-${EMCP_BOARD} SOURCES ${features_main}
    APP_DEFINES EMCP_FEATURE_PROMPTS=1 EMCP_FEATURE_COMPLETION=1
    FEATURE_BASE emcp-feature-prompts
    FEATURE "completion of a prompt's argument (completion/complete), on top of prompts")
  if(EMCP_BOARD_NET)
    emcp_add_firmware(emcp-feature-http-${EMCP_BOARD} SOURCES ${features_main} ${EMCP_BOARD_NET_SOURCES}
      APP_DEFINES EMCP_FEATURE_HTTP=1 LIBS ${EMCP_BOARD_NET_LIBS}
      FEATURE_BASE emcp-feature-base
      FEATURE "HTTP: the same server over Streamable HTTP and HTTP+SSE through lwIP as well as on the
               UART (4 connections, 2 sessions: the HTTP engine, lwIP with its pools and heap, the NIC
               driver, the listener)")
    emcp_add_firmware(emcp-feature-websocket-${EMCP_BOARD} SOURCES ${features_main} ${EMCP_BOARD_NET_SOURCES}
      APP_DEFINES EMCP_FEATURE_HTTP=1 EMCP_FEATURE_WEBSOCKET=1 LIBS ${EMCP_BOARD_NET_LIBS}
      FEATURE_BASE emcp-feature-http
      FEATURE "WebSocket (/ws), on top of HTTP: the handshake's SHA-1 (core's, emcp/crypto/sha1.h;
               the framing is part of the HTTP engine)")
  endif()
endif()
