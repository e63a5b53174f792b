#include "board/serve_net.h"


#include "board/board.h"
#include "emcp/json/number.h"
#include "emcp/json/sink.h"

namespace emcp {
namespace board {

namespace {

HttpService g_service;
constexpr size_t kMaxHosts = 12;
const char* g_hosts[kMaxHosts];
size_t g_host_count = 0;
char g_address[16];  // the board's own address, dotted (one of g_hosts once bound)

void set_hosts(const char* own_address) {
  if (g_service.options == nullptr) return;  // no HTTP
  g_host_count = 0;
  for (const char* h : {"localhost", "127.0.0.1", "[::1]"}) g_hosts[g_host_count++] = h;
  if (own_address != nullptr) g_hosts[g_host_count++] = own_address;
  for (const char* h : g_service.extra_hosts)
    if (g_host_count < kMaxHosts) g_hosts[g_host_count++] = h;
  g_service.options->allowed_hosts = emcp::Span<const char* const>(g_hosts, g_host_count);
  g_service.options->allowed_origins = g_service.options->allowed_hosts;
}

// From net_poll(), outside lwIP's processing: the address changed.
void (*g_app_on_address)(const NetState&) = nullptr;
void on_address(const NetState& state) {
  if (state.bound) format_ipv4(state.address, g_address);
  set_hosts(state.bound ? g_address : nullptr);
  if (g_app_on_address != nullptr) g_app_on_address(state);
}

// The listener's pump, while a handler's output waits for the TCP window: lwIP's input and
// timers. Under an RTOS lwIP runs in its own thread, which needs the core lock this task holds:
// the pump also waits as the loop does (idle(): the lock given back for the wait).
void pump(void*) {
  net_poll();
#if EMCP_BOARD_RTOS
  idle();
#endif
}

}  // namespace

const HttpService* served_http() { return g_service.http != nullptr ? &g_service : nullptr; }

namespace {
void step(void*) {
  net_poll();
  g_service.listener->run_once();
}
}  // namespace

void serve_uart_and_http(emcp::mcp::Server& server, emcp::transport::LineTransport& link, const char* program,
                         const Loop& loop, const HttpService& net, const NetConfig& config) {
  g_service = net;
  if (net.keepalive_ms != 0 && net.options != nullptr) net.options->keepalive_ms = net.keepalive_ms;
  set_hosts(nullptr);
  NetConfig cfg = config;
  g_app_on_address = cfg.on_address;
  cfg.on_address = &on_address;
  bool up = net_init(cfg);
  if (up) {
    net.listener->set_pump(&pump, nullptr);
    if (net.http != nullptr) {
      net.listener->attach(net.front.valid() ? net.front : net.http->handler());
      up = net.listener->listen(net.port) == emcp::Status::kOk;
    }
  }
  // "; MCP over HTTP on port N once the network is up" (or why not) ends the banner line.
  static char banner[64];
  emcp::json::BufferSink text(banner, sizeof banner - 1);
  if (!up) {
    text.write("; no network");
  } else if (net.http != nullptr) {
    text.write("; and over HTTP on port ");
    char num[24];
    text.write(num, emcp::json::format_uint64(net.port, num));
  }
  banner[text.view().size()] = '\0';
  Service service;
  service.banner = banner;
  service.step = up ? &step : nullptr;
  serve(server, link, program, loop, &service);
}

}  // namespace board
}  // namespace emcp
