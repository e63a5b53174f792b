# bench/rtos: the inbox's latency under FreeRTOS on mps2-an385 (latency_rtos.cpp), a firmware of
# scripts/bench's (bench/rtos/guest_latency.py runs it in QEMU), declared with emcp_add_firmware()
# (bench/CMakeLists.txt includes this file on a board). Bench-only: not
# in docs/footprint.md, no budget; its tasks' stacks are checked against their worst case.
if(EMCP_FREERTOS_FOUND AND EMCP_BOARD STREQUAL "mps2-an385")
  emcp_add_firmware(emcp-inbox-latency-rtos-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/latency_rtos.cpp
    RTOS freertos
    TASKS emcp=owner_task:g_owner_stack producer=producer_task:g_producer_stack
    NOT_DOCUMENTED)
endif()
