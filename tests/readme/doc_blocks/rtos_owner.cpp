// docs/getting-started.md: the task that owns the server under an RTOS, and a task posting to
// its inbox; the server and the poll function of the section's first listing, an RTOS's waits.
#include <stdint.h>

#include "emcp/mcp/inbox.h"
#include "emcp/mcp/server.h"

extern emcp::mcp::Server g_server;
extern unsigned g_missed;
void mcp_init();
void mcp_poll();
void os_wait_for_notification(uint32_t timeout_ms);
void os_sleep_ms(uint32_t ms);

// @BLOCK@
