// bench/target/calls.cpp - the sensors example's server as a bench firmware: what one request
// costs on the target, in instructions, from its first byte to its last answered byte.
//
// The firmware reads a request line from the UART into a buffer of its own; then, with
// interrupts masked (the tick and the UART's would land in some windows and not in others),
// it calls emcp_bench_begin(), feeds the whole line to the line transport (the same
// LineTransport and the same application as emcp-sensors: its tools, resources and prompts,
// lists in pages of 5), whose answer goes out through the polled UART writer, and calls
// emcp_bench_end() once the answer's last byte is in the UART. A line longer than the buffer
// (a 4 KiB argument on the 16 KiB boards) is fed a buffer at a time, each in a window of its
// own, and its figure is their sum (the transport parses as the bytes come: nothing waits for
// the line's end). bench/target/insn_plugin.c (a QEMU plugin) counts the instructions between
// the two calls; bench/target/guest_calls.py sends the requests and adds up the counts. Not the
// byte-by-byte arrival of a real UART: that is the board's receive path, the same few
// instructions per byte in every request, which the window leaves out so that a count is the
// same on every run. For the same reason the server's and the application's clock is the
// firmware's own, 100 ms later for each request: what a
// request does (a sensor's reading, a timestamp's digits) depends on the requests before it,
// never on when the host's bytes arrived.
//
// Bench-only firmware (bench/target/firmware.cmake): not in docs/footprint.md, no budget.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "app.h"
#include "common.h"
#include "board/board.h"
#include "board/serve.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"

#ifndef EMCP_BENCH_LINE_BYTES
#define EMCP_BENCH_LINE_BYTES 8192  // a request fed in one window (a 4 KiB argument)
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

namespace {

// A request's bytes as they arrive, fed to the transport a window at a time: a whole request
// when it fits, else a window for each full buffer and one for the rest (the script adds them).
uint8_t g_line[EMCP_BENCH_LINE_BYTES];

using bench::say;

// One window: `n` bytes of g_line; `first`: a request's first bytes (its clock moves on).
void measure(size_t n, bool first) {
  if (first) g_bench_ms += 100;
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
  size_t len = 0;     // bytes in g_line
  bool first = true;  // nothing of the current request fed yet
  for (;;) {
    const size_t got = emcp::board::uart_read(g_line + len, sizeof g_line - len);
    if (got == 0) {
      // Bytes lost: the request is not what the host sent; the script fails on this answer.
      if (emcp::board::uart_take_loss())
        say("{\"jsonrpc\":\"2.0\",\"id\":null,\"error\":{\"code\":-32600,\"message\":\"bench: bytes lost\"}}\n");
      emcp::board::idle();
      continue;
    }
    len += got;
    // A request ends at its newline (the host sends the next one after the answer; were two in
    // the buffer, each is measured on its own).
    size_t from = len - got;
    for (;;) {
      size_t end = from;
      while (end < len && g_line[end] != '\n') ++end;
      if (end == len) break;
      measure(end + 1, first);
      len -= end + 1;
      memmove(g_line, g_line + end + 1, len);
      first = true;
      from = 0;
    }
    if (len == sizeof g_line) {
      measure(len, first);
      len = 0;
      first = false;
    }
  }
}
