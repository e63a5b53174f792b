// The emcp-everything application (everything.cpp): the conformance suite's fixtures, for any
// platform. The server's clock paces its deferred tools.
#ifndef EMCP_EXAMPLES_EVERYTHING_H
#define EMCP_EXAMPLES_EVERYTHING_H

#include <stdint.h>

#include "emcp/mcp/server.h"

namespace everything {

extern const emcp::mcp::ServerInfo kInfo;

/// Registers the tables with `server` (which must outlive the application).
void install(emcp::mcp::Server& server);
/// The periodic work: deferred tools' next steps, the watched resource's updates.
void tick();
/// How long the loop may sleep before tick() has work (at most 1,000 ms).
uint32_t next_tick_ms();

}  // namespace everything

#endif
