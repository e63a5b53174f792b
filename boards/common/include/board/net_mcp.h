// board/net_mcp.h - an MCP server on the board's UART and over its network in one object: the
// server, the UART's transport, lwIP's listener (ports/lwip) and the HTTP engine (Streamable
// HTTP on /mcp, HTTP+SSE on /sse) with their slots, and the loop. For boards with board/net.h.
//
//   constexpr emcp::mcp::ServerInfo kInfo = {"minimal", "1.0"};
//   emcp::board::NetMcp<> g_mcp(kInfo, kTools);   // static: no heap, nothing on the stack
//   int main() { g_mcp.run(); }                    // init, DHCP (or the static address), serve
//
// What it wires is the explicit form of examples/sensors/main_board_net.cpp (which adds TLS and
// bearer tokens in front): mcp::Server with emcp::board::net_platform(), StaticLineTransport on
// the UART, StaticLwipHttpListener<Conns> and StaticHttpServer<Conns, Sessions, ArenaSize,
// OutSize, ReplaySize> on the listener's port, emcp::board::init() and serve_uart_and_http()
// (board/serve_net.h), announced on the LAN over mDNS as `_mcp._tcp` (board/mdns.h: the
// instance named mdns().instance, the board's name by default; mdns().enabled false: none).
// Before run(): service() for the port (80), the Host/Origin names to
// accept besides the localhost names and the board's own address (service().extra_hosts:
// run() sets options().allowed_hosts and allowed_origins from those, replacing what they held)
// and the keep-alive (service().keepalive_ms, 5 s; 0 leaves options().keepalive_ms); options()
// for the rest: WebSocket on /ws needs SHA-1, options().sha1 (emcp/crypto/sha1.h), without it
// /ws is refused; bearer tokens, options().auth. The same shape as UartMcp (board/mcp.h).
//
// Context: the object is a static (its slots are its members); run() from main().
#ifndef EMCP_BOARD_NET_MCP_H
#define EMCP_BOARD_NET_MCP_H

#include <stddef.h>
#include <stdint.h>

#include "board/board.h"
#include "board/mdns.h"
#include "board/net.h"
#include "board/serve_net.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"
#include "emcp/transport/line.h"

namespace emcp {
namespace board {

/// Conns: connection slots (each an HTTP request or stream at a time, with an ArenaSize arena
/// and an OutSize output buffer); Sessions: MCP sessions over HTTP (each with ReplaySize bytes
/// of events kept for Last-Event-ID). The UART's transport has an ArenaSize arena too.
template <size_t Conns = 4, size_t Sessions = 2, size_t ArenaSize = 2048, size_t OutSize = 1024,
          size_t ReplaySize = 1536>
class NetMcp {
 public:
  explicit NetMcp(const emcp::mcp::ServerInfo& info)
      : server_(info, net_platform()),
        link_(server_, &uart_flush, nullptr),
        http_(server_, options_, listener_.port_interface()) {
    service_.http = &http_;
    service_.listener = &listener_;
    service_.options = &options_;
  }
  template <size_t N>
  NetMcp(const emcp::mcp::ServerInfo& info, const emcp::mcp::Tool (&tools)[N]) : NetMcp(info) {
    server_.set_tools(tools);
  }
  NetMcp(const emcp::mcp::ServerInfo&&) = delete;  // a temporary would not outlive the server
  template <size_t N>
  NetMcp(const emcp::mcp::ServerInfo&&, const emcp::mcp::Tool (&)[N]) = delete;
  NetMcp(const NetMcp&) = delete;
  NetMcp& operator=(const NetMcp&) = delete;

  /// The server, for what the constructor does not set (resources, prompts...).
  emcp::mcp::Server& server() { return server_; }
  /// The HTTP engine's options (sha1 for WebSocket, auth...; the allowed hosts come from
  /// service()).
  emcp::transport::HttpOptions& options() { return options_; }
  /// What run() serves: port, extra_hosts, keepalive_ms (board/serve_net.h's HttpService).
  HttpService& service() { return service_; }
  /// How run() announces the server on the LAN (board/mdns.h): instance name, host name, TLS.
  MdnsOptions& mdns() { return mdns_; }
  emcp::transport::HttpServer& http() { return http_; }

  /// Initializes the board, starts the network (`config`: DHCP, then the static address),
  /// announces the server once it has an address (mdns()) and serves the UART and HTTP forever;
  /// the banner line says whether the NIC answered.
  [[noreturn]] void run() { run(Loop{}); }
  /// The same, running `loop.tick` (the application's periodic work) every round.
  [[noreturn]] void run(const Loop& loop, const NetConfig& config = NetConfig{}) {
    init();
    serve_uart_and_http(server_, link_, server_.info().name, loop, service_,
                        announce_over_mdns(config, service_, mdns_));
  }

 private:
  // In this order: the engine is built on the listener's port.
  emcp::mcp::Server server_;
  emcp::transport::StaticLineTransport<ArenaSize, 64> link_;
  emcp::transport::HttpOptions options_;
  emcp::lwip::StaticLwipHttpListener<Conns> listener_;
  emcp::transport::StaticHttpServer<Conns, Sessions, ArenaSize, OutSize, ReplaySize> http_;
  HttpService service_;
  MdnsOptions mdns_;
};

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_NET_MCP_H
