#include "board/serve.h"

#include "board/board.h"
#include "board/rx.h"

namespace emcp {
namespace board {

namespace {
emcp::transport::LineTransport* g_link = nullptr;

void say(const char* s) {
  size_t n = 0;
  while (s[n] != '\0') ++n;
  uart_write(s, n);
}

}  // namespace

emcp::Status uart_flush(void*, const char* data, size_t n) {
  uart_write(data, n);
  return emcp::Status::kOk;
}

emcp::transport::LineTransport* served_link() { return g_link; }

void serve(emcp::mcp::Server& server, emcp::transport::LineTransport& link, const char* program,
           const Loop& loop, const Service* service) {
  g_link = &link;
  // The banner: one line that is not JSON (bridges wait for it and drop it).
  say(program);
  say(" on ");
  say(name());
  say(": MCP on this UART, one JSON-RPC message per line; receive buffer " EMCP_BOARD_RX_RING_TEXT " B");
  if (service != nullptr && service->banner != nullptr) say(service->banner);
  say("\n");
  uint8_t buf[128];
  for (;;) {
    const size_t n = uart_read(buf, sizeof buf);
    if (n != 0) {
      (void)link.feed(buf, n);
      continue;
    }
    if (uart_take_loss()) {  // bytes went missing after those just fed
      link.input_lost();
      continue;
    }
    if (service != nullptr && service->step != nullptr) service->step(service->ctx);
    if (loop.tick) loop.tick();
    server.poll();
    idle();
  }
}

}  // namespace board
}  // namespace emcp
