// bench/target/calls.cpp - the sensors example's server as a bench firmware: what one request
// costs on the target, in instructions, from its first byte to its last answered byte.
//
// The firmware reads a request line from the UART into a buffer of its own; then, with
// interrupts masked (the tick and the UART's would land in some windows and not in others),
// it calls emcp_bench_begin(), feeds the whole line to the line transport (the same
// LineTransport and the same application as emcp-sensors: its tools, resources and prompts,
// lists in pages of 5), whose answer goes out through the polled UART writer, and calls
// emcp_bench_end() once the answer's last byte is in the UART. bench/target/insn_plugin.c (a
// QEMU plugin) counts the instructions between the two calls; bench/target/guest_calls.py
// sends the requests and reads the counts. Not the byte-by-byte arrival of a real UART: that
// is the board's receive path, the same few instructions per byte in every request, which the
// window leaves out so that a count is the same on every run. For the same reason the server's
// and the application's clock is the firmware's own, 100 ms later for each request: what a
// request does (a sensor's reading, a timestamp's digits) depends on the requests before it,
// never on when the host's bytes arrived.
//
// Bench-only firmware (bench/target/firmware.cmake): not in docs/footprint.md, no budget.
#include <stddef.h>
#include <stdint.h>

#include "app.h"
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"

#ifndef EMCP_BENCH_LINE_BYTES
#define EMCP_BENCH_LINE_BYTES 8192  // the longest request line measured (a 4 KiB argument)
#endif

uint64_t g_bench_ms = 1000;
uint64_t bench_now_ms() { return g_bench_ms; }
emcp::Platform bench_platform() {
  emcp::Platform p = emcp::board::platform();
  p.now_ms = &bench_now_ms;
  return p;
}
const emcp::Platform g_platform = bench_platform();
emcp::mcp::Server g_server(app::kServerInfo, g_platform);
emcp::transport::StaticLineTransport<> g_link(g_server, &emcp::board::uart_flush, nullptr);

// The window's marks: the plugin watches their first instructions. Not inlined, never folded
// into one (identical code could be: each stores its own value), kept by the linker (used).
volatile uint32_t g_bench_mark = 0;
extern "C" __attribute__((noinline, used)) void emcp_bench_begin() { g_bench_mark = 1; }
extern "C" __attribute__((noinline, used)) void emcp_bench_end() { g_bench_mark = 2; }

namespace {

uint8_t g_line[EMCP_BENCH_LINE_BYTES];

void say(const char* text) {
  size_t n = 0;
  while (text[n] != '\0') ++n;
  emcp::board::uart_write(text, n);
}

void measure(size_t n) {
  g_bench_ms += 100;
  const uint32_t mask = emcp::board::critical_enter();
  emcp_bench_begin();
  (void)g_link.feed(g_line, n);
  emcp_bench_end();
  emcp::board::critical_exit(mask);
}

}  // namespace

int main() {
  emcp::board::init();
  app::init(g_server, &bench_now_ms);
  g_server.set_page_size(5);  // as emcp-sensors on a board
  say("emcp-bench-calls on ");
  say(emcp::board::name());
  say(": one request per line, counted between emcp_bench_begin and emcp_bench_end\n");
  size_t len = 0;
  bool too_long = false;
  uint8_t buf[128];
  for (;;) {
    const size_t got = emcp::board::uart_read(buf, sizeof buf);
    if (got == 0) {
      if (emcp::board::uart_take_loss()) too_long = true;  // a gap: this line is not measured
      emcp::board::idle();
      continue;
    }
    for (size_t i = 0; i < got; ++i) {
      if (len < sizeof g_line) g_line[len] = buf[i];
      else too_long = true;
      ++len;
      if (buf[i] != '\n') continue;
      if (too_long) say("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"bench: line too long or bytes lost\"}}\n");
      else measure(len);
      len = 0;
      too_long = false;
    }
  }
}
