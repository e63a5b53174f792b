# examples/sensors: its firmware images, declared with emcp_add_firmware() (the example's
# CMakeLists.txt includes this file on a board, EMCP_BOARD; boards/CMakeLists.txt defines the
# function and, on a board with a network, EMCP_BOARD_NET_SOURCES / EMCP_BOARD_NET_LIBS).
# board.cmake may leave the sensors image out (EMCP_BOARD_SENSORS OFF: not enough RAM), give it
# its own options (EMCP_BOARD_SENSORS_DEFINES) or another flash ceiling.
if(NOT DEFINED EMCP_BOARD_SENSORS)
  set(EMCP_BOARD_SENSORS ON)
endif()
# The sensors image's flash ceiling on the Cortex-M3: 64 KiB until MCP 2026-07-28's
# subscriptions/listen came in (2.3 KiB: the listen table's code, its acknowledgement and
# tagged notifications, in the dispatcher) with x-mcp-header's field in every Param (8 B each,
# 50 Params: 400 B); 67 KiB until its three tools that ask the client moved to input() for both
# eras (7.4 KiB: the input rounds' requestState, HMAC-SHA256 and base64url, which the image
# now links, about 3 KiB; the InputBridge's code, 2.8 KiB; json::copy_value 374 B); the
# measured 74 KiB until the core gives bytes back; 74.5 KiB since MCP tasks' hooks (about 260 B:
# defer() and complete() reach a task store when one is set, server/discover offers the
# extension, poll() runs the InputBridge's and tasks' work through one hook; the image sets no
# store, so tasks.cpp itself is not linked); 75 KiB with the lossless UART (76,756 B: the
# receive interrupt holding the UART back, the gap in the input answered with data.inputLost,
# device_stats' input_held: about 470 B); 76 KiB since the server's inbox (issue 29: poll()'s
# hook and the server's pointer to an inbox, 32 B; emcp::board::wake() in the platform and the flag
# idle() checks, 24 B: 76,812 B).
if(NOT DEFINED EMCP_BOARD_SENSORS_FLASH_BUDGET)
  set(EMCP_BOARD_SENSORS_FLASH_BUDGET 77824)
endif()
if(EMCP_BOARD_SENSORS)
# The sensors example with every feature its SDK test exercises. Its 40 KiB target is retired
# (issue 15: the example shows every feature at once, its own code and texts are 15 KiB);
# docs/footprint.md gives what each feature adds instead (examples/features), and the budget
# is a ceiling against growth.
set(sensors_sources
  ${CMAKE_CURRENT_LIST_DIR}/main_board.cpp ${CMAKE_CURRENT_LIST_DIR}/app.cpp
  ${CMAKE_CURRENT_LIST_DIR}/media.cpp ${CMAKE_CURRENT_LIST_DIR}/sensors_common.cpp
  ${CMAKE_CURRENT_LIST_DIR}/sensors_board.cpp)
emcp_add_firmware(emcp-sensors-${EMCP_BOARD}
  SOURCES ${sensors_sources}
  INCLUDES ${CMAKE_CURRENT_LIST_DIR}
  DEFINES ${EMCP_BOARD_SENSORS_DEFINES}
  FLASH_BUDGET ${EMCP_BOARD_SENSORS_FLASH_BUDGET})
# On the micro:bit only: the same image with a receive interrupt that never holds the UART back
# (EMCP_BOARD_RX_HOLD=0, board/rx.h), as a UART without FIFO or flow control, for the tests of
# what is lost then and how it is reported (board_uart_gap); not documented, no budget.
if(EMCP_BOARD STREQUAL "microbit")
  emcp_add_firmware(emcp-sensors-nohold-${EMCP_BOARD}
    SOURCES ${sensors_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES ${EMCP_BOARD_SENSORS_DEFINES}
    APP_DEFINES EMCP_BOARD_RX_HOLD=0
    NOT_DOCUMENTED)
endif()
# On the Cortex-M3 only: the example without its four tools that ask
# the client or send PNG/WAV content, and without the roots hook (EMCP_SENSORS_CLIENT_TOOLS=0,
# examples/sensors/app.cpp), for docs/footprint.md; not run in QEMU.
if(EMCP_BOARD STREQUAL "mps2-an385")
  emcp_add_firmware(emcp-sensors-lean-${EMCP_BOARD}
    SOURCES ${sensors_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES ${EMCP_BOARD_SENSORS_DEFINES}
    APP_DEFINES EMCP_SENSORS_CLIENT_TOOLS=0
    VARIANT_OF emcp-sensors
    DESCRIPTION "the sensors example without its four tools that ask the client (sampling,
                 elicitation, roots) or send PNG/WAV content, and without the roots hook")
  # And the example built for MCP 2026-07-28 alone (EMCP_LEGACY_ERA=0), on the same UART: no
  # initialize, no session state, no requests to the client (its three tools that ask the
  # client still do, through input-required results) and so no InputBridge (app.cpp), no
  # roots hook; list changes and resource updates go to subscriptions/listen streams. Its
  # ceilings are its measured flash and RAM, rounded up to the KiB (66 KiB of flash since the
  # server's inbox hook, 28 B: Server::poll() runs a set inbox, the server holds its pointer;
  # and emcp::board::wake(), whose flag idle() checks, 24 B: 52 B past the 65 KiB it had).
  emcp_add_firmware(emcp-sensors-modern-${EMCP_BOARD}
    SOURCES ${sensors_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES ${EMCP_BOARD_SENSORS_DEFINES} EMCP_LEGACY_ERA=0
    FLASH_BUDGET 67584 RAM_BUDGET 13312
    VARIANT_OF emcp-sensors
    DESCRIPTION "the sensors example serving MCP 2026-07-28 alone (EMCP_LEGACY_ERA=0: no initialize,
                 no session state, no requests to the client; so no InputBridge and no roots hook,
                 which only older clients use)")
endif()
# Under FreeRTOS, on a board with the kernel's port (ports/freertos): the same firmware
# (main_board.cpp without its main()) in the task that owns the server, and a sensor task
# sampling on the kernel's timer (main_rtos.cpp). The UART tests run against it too
# (board_rtos_*, tests/boards/CMakeLists.txt). Its ceilings, board.cmake's
# EMCP_BOARD_SENSORS_RTOS_FLASH_BUDGET and _RAM_BUDGET, are its measured flash and static RAM
# rounded up to the KiB.
# A board short of RAM gives it options of its own (board.cmake: EMCP_BOARD_SENSORS_RTOS_DEFINES
# for the core, EMCP_BOARD_SENSORS_RTOS_APP_DEFINES for main_rtos.cpp's stacks and inbox).
# device_stats' "tasks" (the tasks' stacks) unless the board says no
# (EMCP_BOARD_SENSORS_RTOS_TASK_STATS 0: the hifive1's 16 KiB has no room for it).
if(EMCP_FREERTOS_FOUND)
  if(NOT DEFINED EMCP_BOARD_SENSORS_RTOS_DEFINES)
    set(EMCP_BOARD_SENSORS_RTOS_DEFINES ${EMCP_BOARD_SENSORS_DEFINES})
  endif()
  if(NOT DEFINED EMCP_BOARD_SENSORS_RTOS_TASK_STATS)
    set(EMCP_BOARD_SENSORS_RTOS_TASK_STATS 1)
  endif()
  set(EMCP_IMAGE_TASKS_sensors-rtos ${EMCP_BOARD_SENSORS_RTOS_TASK_STATS})
  emcp_add_firmware(emcp-sensors-rtos-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_rtos.cpp ${sensors_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES ${EMCP_BOARD_SENSORS_RTOS_DEFINES}
    APP_DEFINES EMCP_SENSORS_NO_MAIN=1 EMCP_SENSORS_INBOX_STATS=1 EMCP_SENSORS_TASK_STATS=${EMCP_BOARD_SENSORS_RTOS_TASK_STATS}
                ${EMCP_BOARD_SENSORS_RTOS_APP_DEFINES}
    RTOS freertos
    TASKS emcp=owner_task:g_owner_stack sensor=sensor_task:g_sensor_stack
    FLASH_BUDGET ${EMCP_BOARD_SENSORS_RTOS_FLASH_BUDGET} RAM_BUDGET ${EMCP_BOARD_SENSORS_RTOS_RAM_BUDGET}
    VARIANT_OF emcp-sensors
    DESCRIPTION "the sensors example, unchanged, under FreeRTOS (ports/freertos): the bare-metal loop
                 in the task that owns the server, a sensor task sampling on the kernel's timer
                 beside it")
endif()
endif()
if(EMCP_BOARD_NET)
  set(sensors_net_sources ${CMAKE_CURRENT_LIST_DIR}/main_board_net.cpp ${CMAKE_CURRENT_LIST_DIR}/app.cpp
      ${CMAKE_CURRENT_LIST_DIR}/media.cpp ${CMAKE_CURRENT_LIST_DIR}/sensors_common.cpp
      ${CMAKE_CURRENT_LIST_DIR}/sensors_board.cpp ${EMCP_BOARD_NET_SOURCES})
  # The sensors example, unchanged (but for device_stats' "network" object), on the UART and
  # over HTTP at once: 4 connections, 2 sessions. Its targets are 128 KiB of flash and 64 KiB of
  # static RAM; serving MCP 2026-07-28 beside the legacy sessions took it over both: the era's
  # core (EMCP_MODERN_ERA: _meta, discover, input rounds with their HMAC-SHA256) and its HTTP
  # side (POST without a session, the header checks) cost about 6 KiB of flash, and each
  # connection now keeps the Mcp-Method/Mcp-Name/Mcp-Param-* headers (about 420 B) and its own
  # mcp::Session for stateless requests (104 B): 2.1 KiB of RAM for 4. subscriptions/listen
  # and the Mcp-Param-* checks added 3.6 KiB of flash more, the tools asking the client
  # through input() for both eras 7.2 KiB more (and the InputBridge's 1.2 KiB of RAM), CORS
  # (preflights, the Access-Control-* headers, heads longer than the headroom) 1.3 KiB, fair
  # slots under attack (deadlines from the accept, reclaiming, per-peer shares and buckets:
  # docs/http.md "Under attack") 2.6 KiB and their counters in device_stats' "http" object
  # (16 schema entries of 80 B, their names, the writer) 2.1 KiB, the lossless UART (the
  # receive ring holding the UART back, a gap answered with data.inputLost, device_stats'
  # input_held) 0.2 KiB, what tells a lost connection's cause at once (issue 28: device_stats'
  # network counters of pools found empty, frames the NIC dropped, SYNs without a pcb, TIME_WAIT
  # reopened, pcbs per state: 9 schema entries of 80 B, their names and the writer, about
  # 1.2 KiB) and ports/lwip's reopening of TIME_WAIT for a newer SYN (0.2 KiB, in lwIP's input)
  # 1.6 KiB (157,648 B). The enforced ceilings are the
  # measured 154 KiB and 67 KiB until the core gives those bytes back (smaller
  # EMCP_HTTP_MAX_MCP_NAME / _PARAMS, one stateless Session shared by the connections, a
  # smaller Param). Announcing itself on the LAN over mDNS (board/mdns.h: lwIP's responder and
  # IGMP, the NIC's multicast filter, the TXT records) took 9,284 B of flash and 756 B of RAM
  # more than the same image built with LWIP_MDNS_RESPONDER 0 (167,948 B and 69,292 B): the
  # ceilings are those, rounded up to the KiB.
  # Authorization headers up to 256 bytes (the default keeps 1 KiB); 2 listen streams (each
  # holds a connection of the 4; the default 4 would take 272 B more).
  # Each network image's connection and session slots are set here, once: the image is built
  # with them and the tests that run it are given them (EMCP_IMAGE_CONNECTIONS_<image>,
  # EMCP_IMAGE_SESSIONS_<image>, properties of the image at the end of this file, which
  # tests/boards/CMakeLists.txt passes as EMCP_IMAGE_CONNECTIONS and EMCP_IMAGE_SESSIONS), so
  # that a test checks the limits against the build, not against what the firmware says about
  # itself.
  set(EMCP_IMAGE_CONNECTIONS_sensors-net 4)
  set(EMCP_IMAGE_SESSIONS_sensors-net 2)
  emcp_add_firmware(emcp-sensors-net-${EMCP_BOARD}
    SOURCES ${sensors_net_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES EMCP_HTTP_MAX_AUTH=256 EMCP_MAX_LISTENS=2
    APP_DEFINES EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_NET_CONNECTIONS=${EMCP_IMAGE_CONNECTIONS_sensors-net}
                EMCP_SENSORS_NET_SESSIONS=${EMCP_IMAGE_SESSIONS_sensors-net}
    LIBS ${EMCP_BOARD_NET_LIBS}
    FLASH_BUDGET 156672 FLASH_TARGET 131072 RAM_BUDGET 69632 RAM_TARGET 65536
    DESCRIPTION "the sensors example, unchanged, on the UART and over HTTP through lwIP at once
                 (Streamable HTTP, HTTP+SSE, WebSocket; 4 connections with 2 KiB arenas and 1 KiB
                 output buffers, 2 sessions with 1.5 KiB replay buffers; lwIP's pools below as
                 `memp_memory_*`, its heap for output segments as `ram_heap`; `g_http` holds the
                 connections and sessions)")
  # The same under FreeRTOS (ports/freertos) with lwIP in its own thread (NO_SYS 0: tcpip_thread,
  # the core lock the owner task holds but while it waits, the NIC's receive task handing frames
  # to tcpip_input: ports/freertos/lwip, boards/<board>/net.cpp), the sensor task beside: the
  # network tests run against it too (board_rtos_*, tests/boards/CMakeLists.txt). Its ceilings are its
  # measured flash and static RAM rounded up to the KiB (165,324 B and 81,460 B). The owner task's
  # stack is the bare-metal image's main stack, 8 KiB: the request path's worst case from the call
  # graph is 4.9 KiB, but a handler's output waiting for the TCP window runs the listener's pump
  # (emcp::board::idle()) through pointer calls the graph does not follow, and 5 KiB overflowed there
  # (the kernel's check halted the image in the SDK test's binary content).
  # sensors_net_rtos_image(IMAGE BASE [emcp_add_firmware() arguments...]): emcp-IMAGE, the network
  # image emcp-BASE under FreeRTOS as this one is (main_rtos.cpp's owner, sensor and NIC tasks
  # and lwIP's tcpip_thread, lwIP's and Mbed TLS's libraries built for NO_SYS 0, device_stats'
  # inbox object), with BASE's slots for its tests; the arguments add its sources, defines and
  # ceilings, and its DESCRIPTION (docs/footprint.md lists it as a variant of emcp-BASE). Defined
  # only where the board has FreeRTOS and its lwIP for it. (A function parsing its arguments
  # with PARSE_ARGV, so that a semicolon in a DESCRIPTION stays in it.)
  set(sensors_rtos_net_args
      SOURCES ${CMAKE_CURRENT_LIST_DIR}/main_rtos.cpp ${sensors_net_sources}
      INCLUDES ${CMAKE_CURRENT_LIST_DIR}
      APP_DEFINES EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_NO_MAIN=1 EMCP_SENSORS_INBOX_STATS=1 EMCP_SENSORS_TASK_STATS=1 EMCP_SENSORS_OWNER_STACK=8192
      RTOS freertos
      TASKS emcp=owner_task:g_owner_stack sensor=sensor_task:g_sensor_stack nic_rx=nic_rx_task:g_nic_rx_stack
            tcpip=tcpip_thread:g_tcpip_stack
      TASK_CALLS ${EMCP_FREERTOS_LWIP_TASK_CALLS})
  function(sensors_net_rtos_image image base)
    if(EMCP_FREERTOS_FOUND AND EMCP_BOARD_NET_LIBS_RTOS)
      cmake_parse_arguments(PARSE_ARGV 2 R "" "DESCRIPTION" "")
      set(EMCP_IMAGE_CONNECTIONS_${image} ${EMCP_IMAGE_CONNECTIONS_${base}} PARENT_SCOPE)
      set(EMCP_IMAGE_SESSIONS_${image} ${EMCP_IMAGE_SESSIONS_${base}} PARENT_SCOPE)
      emcp_add_firmware(emcp-${image}-${EMCP_BOARD} ${sensors_rtos_net_args} VARIANT_OF emcp-${base}
                        ${R_UNPARSED_ARGUMENTS} DESCRIPTION "${R_DESCRIPTION}")
    endif()
  endfunction()
  sensors_net_rtos_image(sensors-net-rtos sensors-net
    DEFINES EMCP_HTTP_MAX_AUTH=256 EMCP_MAX_LISTENS=2
    APP_DEFINES EMCP_SENSORS_NET_CONNECTIONS=${EMCP_IMAGE_CONNECTIONS_sensors-net}
                EMCP_SENSORS_NET_SESSIONS=${EMCP_IMAGE_SESSIONS_sensors-net}
    LIBS ${EMCP_BOARD_NET_LIBS_RTOS}
    # Flash 162 KiB until its sensor task and timer interrupt posted to the inbox (merged with
    # issue 29's inbox: 166,164 B); 167,412 B with device_stats' "inbox" object and the HTTP
    # engine's keep-alive shedding (docs/http.md); 168,340 B and 81,924 B of static RAM with
    # device_stats' "tasks" array (the tasks' stacks) and lwIP's spare tcpip message; 178,084 B
    # and 83,172 B announcing itself over mDNS (board/mdns.h: 9,188 B of code, and 1,236 B of RAM
    # with tcpip_thread's 512 B larger stack, which now builds mDNS's answers); in issue 33,
    # 165,600 B (core's SHA-1, lwIP's assertion texts out, the HTTP parser's header table).
    FLASH_BUDGET 165888 RAM_BUDGET 83968
    DESCRIPTION "the sensors network image, unchanged, under FreeRTOS (ports/freertos): lwIP in its
                 own thread (tcpip_thread, NO_SYS 0, the core lock the owner task holds but while it
                 waits), the NIC's receive task handing frames to it, the sensor task beside")
  # The same with 8 connections and 8 sessions: the load test's 8 clients each hold a session.
  set(EMCP_IMAGE_CONNECTIONS_sensors-net8 8)
  set(EMCP_IMAGE_SESSIONS_sensors-net8 8)
  emcp_add_firmware(emcp-sensors-net8-${EMCP_BOARD}
    SOURCES ${sensors_net_sources}
    INCLUDES ${CMAKE_CURRENT_LIST_DIR}
    DEFINES EMCP_HTTP_MAX_AUTH=256
    APP_DEFINES EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_NET_CONNECTIONS=${EMCP_IMAGE_CONNECTIONS_sensors-net8}
                EMCP_SENSORS_NET_SESSIONS=${EMCP_IMAGE_SESSIONS_sensors-net8}
    LIBS ${EMCP_BOARD_NET_LIBS}
    VARIANT_OF emcp-sensors-net
    DESCRIPTION "the same with 8 connections and 8 sessions (the load test's 8 clients each hold a
                 session)")
  # Under FreeRTOS: the load test runs against it too (board_rtos_http_load).
  sensors_net_rtos_image(sensors-net8-rtos sensors-net8 NOT_DOCUMENTED
    DEFINES EMCP_HTTP_MAX_AUTH=256
    APP_DEFINES EMCP_SENSORS_NET_CONNECTIONS=${EMCP_IMAGE_CONNECTIONS_sensors-net8}
                EMCP_SENSORS_NET_SESSIONS=${EMCP_IMAGE_SESSIONS_sensors-net8}
    LIBS ${EMCP_BOARD_NET_LIBS_RTOS})
  # MCP over MQTT (docs/mqtt.md): the board dials a broker once it has an address and serves
  # MCP clients through it, beside the UART (and HTTP): the broker, the server-name and the
  # server-id from the credentials region (board/credentials.h: scripts/run-board --mqtt
  # provisions them), so where the board has one. 2 client sessions, a 2 KiB arena, and answers
  # written whole into the MQTT client's transmit buffer (MQTT puts a message's length first):
  # the feature set's longest answer is the tools/list page with device_stats, whose output
  # schema grows with each object the image reports (6,721 B without HTTP's, 9,337 B with it:
  # docs/mqtt.md), hence EMCP_SENSORS_MQTT_MESSAGE 7 KiB and 10 KiB.
  if(EMCP_BOARD_TLS_SOURCES)
    # With HTTP: the network tests' image, serving the UART, HTTP and MQTT at once.
    set(EMCP_IMAGE_CONNECTIONS_sensors-mqtt-net 4)
    set(EMCP_IMAGE_SESSIONS_sensors-mqtt-net 2)
    emcp_add_firmware(emcp-sensors-mqtt-net-${EMCP_BOARD}
      SOURCES ${sensors_net_sources} ${EMCP_BOARD_TLS_SOURCES}
      INCLUDES ${CMAKE_CURRENT_LIST_DIR}
      DEFINES EMCP_HTTP_MAX_AUTH=256 EMCP_MAX_LISTENS=2
      APP_DEFINES EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_MQTT=1 EMCP_SENSORS_MQTT_MESSAGE=10240
                  EMCP_SENSORS_NET_CONNECTIONS=${EMCP_IMAGE_CONNECTIONS_sensors-mqtt-net}
                  EMCP_SENSORS_NET_SESSIONS=${EMCP_IMAGE_SESSIONS_sensors-mqtt-net}
      LIBS ${EMCP_BOARD_NET_LIBS}
      # Its measured flash and static RAM, rounded up to the KiB (189,712 B and 86,044 B: with
      # the mDNS announcement every HTTP image makes, 9.3 KiB of it; before it 179,380 B; 178,892 B
      # in issue 33).
      FLASH_BUDGET 179200 RAM_BUDGET 87040
      VARIANT_OF emcp-sensors-net
      DESCRIPTION "the sensors network image serving MCP over MQTT too (docs/mqtt.md): the board dials
                   the broker the credentials region names and serves 2 client sessions through it,
                   beside the UART and HTTP (`g_mqtt`: the MQTT client's transmit buffer for answers
                   of up to 10 KiB, its 2 KiB arena, the client slots)")
    # The same dialing the broker over TLS (mqtts://, Mbed TLS as a client: the image without
    # HTTP below says more), beside the UART and plain HTTP: the network tests' image for MQTT over
    # TLS, all three served at once (board_mqtt_tls_all_soak). Its ceilings are its measured
    # 252,124 B of flash and 104,768 B of static RAM rounded up to the KiB.
    set(EMCP_IMAGE_CONNECTIONS_sensors-mqtt-tls-net 4)
    set(EMCP_IMAGE_SESSIONS_sensors-mqtt-tls-net 2)
    emcp_add_firmware(emcp-sensors-mqtt-tls-net-${EMCP_BOARD}
      SOURCES ${sensors_net_sources} ${EMCP_BOARD_TLS_SOURCES}
      INCLUDES ${CMAKE_CURRENT_LIST_DIR}
      DEFINES EMCP_HTTP_MAX_AUTH=256 EMCP_MAX_LISTENS=2
      APP_DEFINES EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_MQTT=1 EMCP_SENSORS_MQTT_TLS=1 EMCP_SENSORS_MQTT_MESSAGE=10240
                  EMCP_SENSORS_NET_CONNECTIONS=${EMCP_IMAGE_CONNECTIONS_sensors-mqtt-tls-net}
                  EMCP_SENSORS_NET_SESSIONS=${EMCP_IMAGE_SESSIONS_sensors-mqtt-tls-net}
      LIBS ${EMCP_BOARD_NET_LIBS_TLS_CLIENT}
      # (Issue 33: 252,928 B before; lwIP's assertion texts out, Mbed TLS's SHA-1 kept for the
      # client's certificates: a CA bundle's old roots are signed with it.)
      FLASH_BUDGET 245760 RAM_BUDGET 105472
      VARIANT_OF emcp-sensors-mqtt-net
      DESCRIPTION "the sensors network image serving MCP over MQTT through a broker it dials over TLS
                   (mqtts://, Mbed TLS as a client, its pool `g_tls_pool`), beside the UART and HTTP")
    # Without HTTP: the UART and MQTT, with lwIP's pools for its one TCP connection
    # (EMCP_BOARD_NET_LIBS_ONE). The issue's targets: 110 KiB of flash and 48 KiB of static RAM;
    # RAM is within (45,088 B), flash is not (142,028 B; 0.7 KiB of it since the first
    # measurement, the fault handling of the MQTT client, after 1.9 KiB went with lwIP's mDNS
    # responder and IGMP, which this image, announcing nothing, no longer links): the example's
    # whole feature set (the MCP core it links, 60 KiB, its own code and tables, 20 KiB,
    # device_stats' network and MQTT figures among them), lwIP (31 KiB), the NIC's driver, libgcc
    # and the board take 125 KiB before MQTT's 14 KiB (docs/footprint.md, its row). The ceilings
    # are the measured figures rounded up to the KiB.
    emcp_add_firmware(emcp-sensors-mqtt-${EMCP_BOARD}
      SOURCES ${sensors_net_sources} ${EMCP_BOARD_TLS_SOURCES}
      INCLUDES ${CMAKE_CURRENT_LIST_DIR}
      DEFINES EMCP_MAX_LISTENS=2
      APP_DEFINES EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_MQTT=1 EMCP_SENSORS_HTTP=0
      LIBS ${EMCP_BOARD_NET_LIBS_ONE}
      FLASH_BUDGET 136192 FLASH_TARGET 112640 RAM_BUDGET 46080 RAM_TARGET 49152
      DESCRIPTION "the sensors example, unchanged, on the UART and over MCP over MQTT through lwIP
                   (docs/mqtt.md), without HTTP: the board dials the broker the credentials region
                   names and serves 2 client sessions through it (`g_mqtt`: the MQTT client's
                   transmit buffer for answers of up to 7 KiB, its 2 KiB arena, the client slots);
                   lwIP's pools for one TCP connection (5 pool pbufs, 4 TCP PCBs), below as
                   `memp_memory_*`, its heap for output segments as `ram_heap`")
    # The same under FreeRTOS, as emcp-sensors-net-rtos is (main_rtos.cpp's owner, sensor and NIC
    # tasks, lwIP's tcpip_thread): the MQTT client runs in the owner task over lwIP's raw API
    # under the core lock, which the owner holds but while it waits, as the HTTP listener does.
    # Answers up to 8 KiB: device_stats' output schema has the inbox and tasks objects here, and
    # the tools/list page that carries it is over the bare-metal image's 7 KiB. Its ceilings are
    # its measured 153,488 B of flash and 65,980 B of static RAM rounded up to the KiB.
    sensors_net_rtos_image(sensors-mqtt-rtos sensors-mqtt
      SOURCES ${EMCP_BOARD_TLS_SOURCES}
      DEFINES EMCP_MAX_LISTENS=2
      APP_DEFINES EMCP_SENSORS_MQTT=1 EMCP_SENSORS_HTTP=0 EMCP_SENSORS_MQTT_MESSAGE=8192
      LIBS ${EMCP_BOARD_NET_LIBS_RTOS}
      FLASH_BUDGET 146432 RAM_BUDGET 66560
      DESCRIPTION "the sensors MQTT image, unchanged, under FreeRTOS as emcp-sensors-net-rtos is (the MQTT
                   client in the owner task, over lwIP's raw API under the core lock)")
    # The same dialing its broker over TLS (mqtts://): Mbed TLS as a client (TLS 1.2, the
    # broker's certificate checked against the CA in the credentials region, a client
    # certificate as an option; records of 2 KiB each way, asked of the broker with RFC 6066's
    # max_fragment_length), its memory a static pool of 16 KiB (the most it held in
    # board_mqtt_tls_all_soak: 10,912 B with the test's P-256 CA and broker certificate, the
    # handshake's peak; the rest for a longer chain or RSA). No target; the ceilings are its
    # measured 208,100 B of flash and 63,736 B of static RAM rounded up to the KiB (Mbed TLS's
    # client, 66 KiB, is the difference to emcp-sensors-mqtt).
    emcp_add_firmware(emcp-sensors-mqtt-tls-${EMCP_BOARD}
      SOURCES ${sensors_net_sources} ${EMCP_BOARD_TLS_SOURCES}
      INCLUDES ${CMAKE_CURRENT_LIST_DIR}
      DEFINES EMCP_MAX_LISTENS=2
      APP_DEFINES EMCP_SENSORS_NETWORK=1 EMCP_SENSORS_MQTT=1 EMCP_SENSORS_HTTP=0 EMCP_SENSORS_MQTT_TLS=1
      LIBS ${EMCP_BOARD_NET_LIBS_ONE_TLS}
      # (Issue 33: 208,896 B before; lwIP's assertion texts out, Mbed TLS's SHA-1 kept for the
      # client's certificates: a CA bundle's old roots are signed with it.)
      FLASH_BUDGET 201728 RAM_BUDGET 64512
      VARIANT_OF emcp-sensors-mqtt
      DESCRIPTION "the MQTT image dialing its broker over TLS (mqtts://): Mbed TLS as a TLS 1.2 client,
                   the broker's certificate checked against the CA the credentials region carries
                   (a client certificate as an option); Mbed TLS's memory the pool `g_tls_pool`")
  endif()
  # HTTPS and WSS (TLS 1.2, Mbed TLS from a static pool), 2 connections and 2 sessions: the
  # target is 192 KiB of flash and 80 KiB of static RAM (issue 33; 256 and 96 KiB before). Its 24 KiB pool holds the
  # parsed certificate and key (2.5 KiB with a P-256 key), 2 established connections (7.7 KiB
  # each: 4 KiB in and 2 KiB out of record buffers, session, keys) and the 2.8 KiB more one
  # handshake takes (device_stats reports the figures). The certificate and key come from the
  # board's credentials region (board/credentials.h), never from the image; so does, when the
  # region carries it, bearer-token authorization (Authorization headers up to 1 KiB: JWTs).
  if(EMCP_BOARD_TLS_SOURCES)
    # sensors_tls_image(NAME CONNECTIONS POOL_KIB [RTOS LIBS... CEILINGS FLASH RAM [RTOS_DESCRIPTION text]]
    #                   [emcp_add_firmware() arguments...]): the sensors firmware over HTTPS with
    # CONNECTIONS connection slots, 2 sessions and a POOL_KIB pool (the other arguments: LIBS,
    # targets, NOT_DOCUMENTED, what docs/footprint.md says of it); its slots for the tests, as
    # above. With RTOS, NAME-rtos too: the same under FreeRTOS (sensors_net_rtos_image(), as
    # emcp-sensors-net-rtos, described by RTOS_DESCRIPTION) with those
    # libraries and FLASH and RAM as its ceilings; the TLS and bad-input tests run against it
    # as well (tests/boards/CMakeLists.txt). The TLS layer runs in the owner task over lwIP's raw API
    # under the core lock: tcpip_thread never enters Mbed TLS.
    function(sensors_tls_image name connections pool_kib)
      cmake_parse_arguments(PARSE_ARGV 3 T "NOT_DOCUMENTED"
                            "DESCRIPTION;VARIANT_OF;FEATURE;FEATURE_BASE;RTOS_DESCRIPTION" "RTOS;CEILINGS")
      set(documented)
      if(T_NOT_DOCUMENTED)
        set(documented NOT_DOCUMENTED)
      endif()
      string(REGEX REPLACE "^emcp-" "" image ${name})
      set(tls_args SOURCES ${EMCP_BOARD_TLS_SOURCES} DEFINES EMCP_HTTP_MAX_AUTH=1024
          APP_DEFINES EMCP_SENSORS_TLS=1 EMCP_SENSORS_NET_CONNECTIONS=${connections}
                      EMCP_SENSORS_NET_SESSIONS=2 "EMCP_SENSORS_TLS_POOL=(${pool_kib} * 1024)")
      set(EMCP_IMAGE_CONNECTIONS_${image} ${connections})
      set(EMCP_IMAGE_SESSIONS_${image} 2)
      emcp_add_firmware(${name}-${EMCP_BOARD} ${T_UNPARSED_ARGUMENTS} ${documented}
        SOURCES ${sensors_net_sources}
        INCLUDES ${CMAKE_CURRENT_FUNCTION_LIST_DIR}
        APP_DEFINES EMCP_SENSORS_NETWORK=1 ${tls_args}
        DESCRIPTION "${T_DESCRIPTION}" VARIANT_OF "${T_VARIANT_OF}" FEATURE "${T_FEATURE}" FEATURE_BASE "${T_FEATURE_BASE}")
      set(variants ${image})
      if(T_RTOS)
        list(GET T_CEILINGS 0 flash)
        list(GET T_CEILINGS 1 ram)
        sensors_net_rtos_image(${image}-rtos ${image} ${tls_args} ${documented} LIBS ${T_RTOS}
                               FLASH_BUDGET ${flash} RAM_BUDGET ${ram} DESCRIPTION "${T_RTOS_DESCRIPTION}")
        list(APPEND variants ${image}-rtos)
      endif()
      foreach(variant ${variants})
        set(EMCP_IMAGE_CONNECTIONS_${variant} ${connections} PARENT_SCOPE)
        set(EMCP_IMAGE_SESSIONS_${variant} 2 PARENT_SCOPE)
      endforeach()
    endfunction()
    # Under FreeRTOS: 240,856 B of flash and 100,436 B of static RAM; 250,984 B and 102,036 B
    # since it announces itself over mDNS (board/mdns.h; tcpip_thread's stack 512 B larger);
    # 239,316 B in issue 33 (the tight and 4-connection variants 239,364 B). The ceilings: rounded
    # up to the KiB.
    sensors_tls_image(emcp-sensors-tls 2 24 LIBS ${EMCP_BOARD_NET_LIBS} FLASH_TARGET 196608 RAM_TARGET 81920
      RTOS ${EMCP_BOARD_NET_LIBS_RTOS} CEILINGS 239616 102400
      DESCRIPTION "the sensors example over HTTPS and WSS (TLS 1.2 through the TLS layer over lwIP) and
                   its UART: 2 connections, 2 sessions; Mbed TLS's memory is the 24 KiB pool
                   `g_tls_pool` (the parsed certificate and P-256 key 2.5 KiB, an established
                   connection 7.7 KiB with 4 KiB input and 2 KiB output records, a handshake 2.8 KiB
                   more: `device_stats` reports them); the certificate and key, and bearer-token
                   authorization (static tokens, a JWT key: Authorization headers up to 1 KiB), are
                   provisioned in the board's credentials region, not in the image"
      FEATURE_BASE emcp-sensors-net
      FEATURE "TLS (HTTPS, WSS), from the sensors example over HTTP to the same over HTTPS: Mbed TLS
               (TLS 1.2, X.509, ECDSA/RSA, AES-GCM, ChaCha20-Poly1305), emcp's TLS layer, the
               credentials region, bearer-token authorization; 2 connections where the HTTP image has 4"
      RTOS_DESCRIPTION "the sensors TLS image, unchanged, under FreeRTOS as emcp-sensors-net-rtos is (the
                        TLS layer and Mbed TLS in the owner task, over lwIP's raw API under the core lock)")
    # The same with 4 connections, input records of TLS's full 16 KiB (a client's 6 KB sampling
    # answer arrives as one record) and an 88 KiB pool (4 established connections of 20 KiB):
    # the SDK client's tests over HTTPS, HTTP+SSE over HTTPS and WSS, whose clients hold an event
    # stream and post beside it. Under FreeRTOS: 240,912 B and 182,484 B; 251,032 B and 184,148 B
    # with mDNS.
    sensors_tls_image(emcp-sensors-tls4 4 88 LIBS ${EMCP_BOARD_NET_LIBS_16K}
      RTOS emcp_lwip_board_rtos emcp_mbedtls_board_16k CEILINGS 239616 184320
      VARIANT_OF emcp-sensors-tls
      DESCRIPTION "the same with 4 connections, input records of TLS's full 16 KiB and an 88 KiB pool
                   (the SDK client's tests: a client sends a 6 KB answer as one record)"
      RTOS_DESCRIPTION "the 4-connection TLS image, unchanged, under FreeRTOS as emcp-sensors-tls-rtos is")
    # A pool too small for its slots (test only): 4 connections, a 24 KiB pool that holds the
    # certificate, 2 established connections and a handshake; a third connection's buffers do
    # not fit, and it is refused with a TLS alert while the others go on (board_tls_pool).
    # Under FreeRTOS: 240,912 B and 116,948 B; 251,032 B and 118,612 B with mDNS.
    sensors_tls_image(emcp-sensors-tls-tight 4 24 NOT_DOCUMENTED LIBS ${EMCP_BOARD_NET_LIBS}
      RTOS ${EMCP_BOARD_NET_LIBS_RTOS} CEILINGS 239616 118784)
  endif()
endif()

# What the tests that run an image must know of its build (tests/boards/CMakeLists.txt), as
# properties of the image: EMCP_IMAGE_CONNECTIONS and EMCP_IMAGE_SESSIONS (its slots, above)
# and EMCP_IMAGE_TASKS (0: its device_stats has no "tasks").
get_directory_property(sensors_targets BUILDSYSTEM_TARGETS)
foreach(target ${sensors_targets})
  string(REGEX REPLACE "^emcp-(.+)-${EMCP_BOARD}$" "\\1" image ${target})
  foreach(what CONNECTIONS SESSIONS TASKS)
    if(DEFINED EMCP_IMAGE_${what}_${image})
      set_target_properties(${target} PROPERTIES EMCP_IMAGE_${what} ${EMCP_IMAGE_${what}_${image}})
    endif()
  endforeach()
endforeach()
