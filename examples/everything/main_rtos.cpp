// emcp-everything under FreeRTOS: main_board.cpp's firmware (built with EMCP_EVERYTHING_NO_MAIN)
// in the task that owns the server, lwIP in its own thread beside it (tcpip_thread and the NIC's
// receive task, started by emcp::board::net_init(): ports/freertos/README.md, "lwIP in its own
// thread"), so that the conformance suite runs against that architecture too. Static
// allocation only.
#include "FreeRTOS.h"
#include "board/freertos.h"
#include "task.h"

void everything_firmware();  // main_board.cpp

// The owner task's stack, in bytes (the footprint check fails the build when its worst case
// does not fit): the bare-metal image's main stack.
#ifndef EMCP_EVERYTHING_OWNER_STACK
#define EMCP_EVERYTHING_OWNER_STACK 8192
#endif

StackType_t g_owner_stack[EMCP_EVERYTHING_OWNER_STACK / sizeof(StackType_t)];
StaticTask_t g_owner_tcb;

extern "C" void owner_task(void*) { everything_firmware(); }

int main() { emcp::board::run_owner(&owner_task, g_owner_stack, g_owner_tcb); }
