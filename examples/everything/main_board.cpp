// emcp-everything as firmware: the conformance suite's fixtures (everything.cpp), unchanged,
// served on the board's UART and over HTTP on port 80 through lwIP (board/serve_net.h), so the
// official conformance suite runs against an emulated device (tests/conformance).
#include "board/board.h"
#include "board/net.h"
#include "board/serve_net.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/crypto/sha1.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"
#include "emcp/transport/line.h"
#include "everything.h"

namespace {
// The conformance suite runs its scenarios one after another, each with a client of its own
// that may hold a GET stream and several POSTs at once.
constexpr size_t kConnections = 8;
constexpr size_t kSessions = 8;
}  // namespace

emcp::mcp::Server g_server(everything::kInfo, emcp::board::net_platform());
emcp::transport::StaticLineTransport<> g_link(g_server, &emcp::board::uart_flush, nullptr);
emcp::transport::HttpOptions g_http_options;
emcp::lwip::StaticLwipHttpListener<kConnections> g_listener;
emcp::transport::StaticHttpServer<kConnections, kSessions, EMCP_ARENA_SIZE, 1024, 4096> g_http(
    g_server, g_http_options, g_listener.port_interface());

/// The firmware; never returns. main() on bare metal; under FreeRTOS the task that owns the
/// server (main_rtos.cpp builds this file with EMCP_EVERYTHING_NO_MAIN).
void everything_firmware() {
  emcp::board::init();
  everything::install(g_server);
  g_http_options.sha1 = &emcp::crypto::sha1;
  emcp::board::HttpService net;
  net.http = &g_http;
  net.listener = &g_listener;
  net.options = &g_http_options;
  emcp::board::Loop loop;
  loop.tick = &everything::tick;
  emcp::board::serve_uart_and_http(g_server, g_link, "emcp-everything", loop, net, emcp::board::NetConfig{});
}

#ifndef EMCP_EVERYTHING_NO_MAIN
int main() { everything_firmware(); }
#endif
