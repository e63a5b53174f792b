// docs/concurrency.md: an inbox, installed in the owner and posted to from elsewhere.
#include "emcp/mcp/inbox.h"
#include "emcp/mcp/server.h"

extern emcp::mcp::Server g_server;
extern unsigned g_missed;

void doc_block() {
// @BLOCK@
}
