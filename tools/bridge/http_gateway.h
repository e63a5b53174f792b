// tools/bridge/http_gateway.h - emcp-bridge --http PORT: a UART-only board served to network
// MCP clients as Streamable HTTP on the host. What it does is docs/gateway.md; how, gateway.h
// (its files, and the decisions behind each in that file's header comment).
#ifndef EMCP_TOOLS_BRIDGE_HTTP_GATEWAY_H
#define EMCP_TOOLS_BRIDGE_HTTP_GATEWAY_H

#include <stdint.h>

#include <string>
#include <vector>

#include "board_link.h"

namespace bridge {

struct GatewayOptions {
  int port = -1;                          // --http PORT (0: any free port, printed on stderr)
  std::string listen = "127.0.0.1";       // --listen ADDR
  std::vector<std::string> allow_hosts;   // --allow-host (empty: the localhost names)
  std::vector<std::string> allow_origins; // --allow-origin (empty: the localhost names)
  std::vector<std::string> cors_origins;  // --cors-origin (empty: every allowed origin)
  bool cors = true;                       // --no-cors
  std::vector<std::string> bearer_tokens; // --bearer-token (static tokens; none: no authorization)
  std::string resource;                   // --resource URL (the canonical URI; default from --listen)
  uint32_t session_idle_ms = 30u * 60u * 1000u;  // --session-idle-ms
  bool session_takeover = false;  // --session-takeover: a new initialize ends an idle session
  int max_connections = 16;               // --max-connections
  uint32_t max_body = 0;                  // --max-body (0: the engine's EMCP_MAX_MESSAGE_LEN)
  uint32_t request_timeout_ms = 60000;    // --request-timeout-ms: a request the board leaves unanswered
};

/// Serves until SIGINT/SIGTERM (0) or until the board is lost for good (1).
int run_gateway(const LinkOptions& link, const GatewayOptions& o);

}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_HTTP_GATEWAY_H
