// board/serve_net.h - the firmware's main loop with a network: one mcp::Server on the board's
// UART and, over lwIP (ports/lwip), on HTTP (Streamable HTTP on /mcp, HTTP+SSE on /sse,
// WebSocket on /ws) at the same time; or, without HTTP, the network for what the application
// dials itself through the listener's dialer() (MCP over MQTT: examples/sensors/main_board_net.cpp
// starts it from NetConfig::on_address and polls it in its Loop::tick). For boards with
// board/net.h.
//
// The loop: UART bytes into the stdio transport; the NIC's frames into lwIP and lwIP's timers
// (emcp::board::net_poll, where lwIP's callbacks only record); the HTTP port delivers what they
// recorded to the engine (LwipHttpListener::run_once); the application's tick; the server's
// timeouts; sleep until the next interrupt. A handler's output that waits for a TCP window
// runs net_poll (the listener's pump), never the engine.
//
// Host names: requests must name the board by one of the localhost names, by its own address
// (added once the network has one), or by a name in `extra_hosts`; browsers' Origins likewise
// (DNS rebinding protection, docs/http.md).
//
// Context: main(), after emcp::board::init(); never returns.
#ifndef EMCP_BOARD_SERVE_NET_H
#define EMCP_BOARD_SERVE_NET_H

#include <stdint.h>

#include "board/net.h"
#include "board/serve.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/transport/http_server.h"

namespace emcp {
namespace board {

struct HttpService {
  /// Built on listener->port_interface(); nullptr: no HTTP (the listener only dials: no
  /// attach(), no listen(); `front`, `options`, `port` and `extra_hosts` are not used).
  emcp::transport::HttpServer* http = nullptr;
  /// What the listener drives instead of the engine itself: a layer in front of it (TLS:
  /// TlsLayer::handler(), the layer built on listener->port_interface() and attached to
  /// http->handler()). Not valid: the engine.
  emcp::transport::ConnectionHandler front;
  emcp::lwip::LwipHttpListener* listener = nullptr;
  emcp::transport::HttpOptions* options = nullptr;   ///< its allowed hosts are filled in here
  /// Set as options->keepalive_ms: a board has few connection slots, so a connection idle
  /// between requests gives its slot back sooner than the engine's 60 s default (0: leave the
  /// options as they are).
  uint32_t keepalive_ms = 5000;
  uint16_t port = 80;
  emcp::Span<const char* const> extra_hosts;         ///< more Host/Origin names to allow
};

/// Serves forever: the UART as serve_uart() does, and HTTP (if any) once the network is up; the
/// listener's run_once() every round, for HTTP and the connections dialed through it. The
/// banner line says whether the NIC answered.
[[noreturn]] void serve_uart_and_http(emcp::mcp::Server& server, emcp::transport::LineTransport& link,
                                      const char* program, const Loop& loop, const HttpService& net,
                                      const NetConfig& config);

/// The service being served (for diagnostics), or nullptr before serve_uart_and_http().
const HttpService* served_http();

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_SERVE_NET_H
