# tests/threads: the inbox's stress program as firmware under FreeRTOS (inbox_stress_rtos.cpp),
# declared with emcp_add_firmware() (tests/CMakeLists.txt includes this file on a board),
# on a board with the kernel's port and the CMSDK timer its interrupt posts from: mps2-an385.
# The UART test board_rtos_inbox_stress runs it (tests/mcp/inbox_stress.test.mjs). A test image:
# not in docs/footprint.md; its ceilings are its measured flash and static RAM rounded up to the
# KiB, and every task's stack is checked against its worst case.
if(EMCP_FREERTOS_FOUND AND EMCP_BOARD STREQUAL "mps2-an385")
  emcp_add_firmware(emcp-inbox-stress-rtos-${EMCP_BOARD}
    SOURCES ${CMAKE_CURRENT_LIST_DIR}/inbox_stress_rtos.cpp
    RTOS freertos
    TASKS emcp=owner_task:g_owner_stack worker=worker_task:g_worker_stack p0=producer_task:g_p0_stack
          p1=producer_task:g_p1_stack p2=producer_task:g_p2_stack p3=producer_task:g_p3_stack
    FLASH_BUDGET 54272 RAM_BUDGET 24576 NOT_DOCUMENTED)
endif()
