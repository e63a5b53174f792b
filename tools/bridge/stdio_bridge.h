// tools/bridge/stdio_bridge.h - emcp-bridge's stdio mode (one MCP client on stdin/stdout).
#ifndef EMCP_TOOLS_BRIDGE_STDIO_BRIDGE_H
#define EMCP_TOOLS_BRIDGE_STDIO_BRIDGE_H

#include "board_link.h"

namespace bridge {

/// Serves the client on stdin/stdout until it closes stdin: 0, or 1 when the board cannot be
/// reached. `reinit`: after a board reset, initialize the new session on the client's behalf.
int run_stdio(const LinkOptions& o, bool reinit);

}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_STDIO_BRIDGE_H
