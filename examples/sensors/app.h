// The sensors example's MCP application: tools, resources, prompts and their handlers. The
// same code runs on Linux (main_posix.cpp) and, unchanged, on the boards.
#ifndef EMCP_EXAMPLES_SENSORS_APP_H
#define EMCP_EXAMPLES_SENSORS_APP_H

#include <stdint.h>

#include "emcp/mcp/server.h"

namespace app {

/// Registers the tables with `server`; `now_ms` is the platform clock.
void init(emcp::mcp::Server& server, uint64_t (*now_ms)());

/// Periodic work: sampling jobs (progress, completion, cancellation), sensor history, and
/// notifications/resources/updated when a reading changes. Call it every few tens of ms.
void tick();

/// Milliseconds until tick() has something to do (for the loop's wait).
uint32_t next_tick_ms();

/// Appends a line to the device log (resource device://log) and sends it as a log message.
void log(emcp::mcp::LogLevel level, emcp::StrView line);

}  // namespace app

#endif
