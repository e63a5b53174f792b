// emcp-netcheck under FreeRTOS: the same bring-up firmware (main_board.cpp's loop, built with
// EMCP_NETCHECK_NO_MAIN) in one task, where lwIP runs in its own thread (tcpip_thread, NO_SYS 0)
// beside the NIC's receive task: emcp::board::net_init() (boards/<board>/net.cpp) starts both and
// gives the task lwIP's core lock, which it holds but while it waits in emcp::board::idle(). So the
// echo's lwIP callbacks run in tcpip_thread and its loop in this task, never at once.
// Static allocation only, as every image: the task's stack and control block are below.
#include "board/board.h"
#include "board/freertos.h"

void netcheck_firmware();  // main_board.cpp

// Its stack's size in bytes: the footprint check (tools/footprint.py, after every link) fails
// the build when the task's worst case does not fit.
#ifndef EMCP_NETCHECK_OWNER_STACK
#define EMCP_NETCHECK_OWNER_STACK 2048
#endif
StackType_t g_owner_stack[EMCP_NETCHECK_OWNER_STACK / sizeof(StackType_t)];
StaticTask_t g_owner_tcb;

extern "C" void owner_task(void*) { netcheck_firmware(); }

int main() { emcp::board::run_owner(&owner_task, g_owner_stack, g_owner_tcb); }
