// libFuzzer target: the whole MCP server behind the stdio transport, with the unit tests'
// fixture application (every kind of tool, resource, prompt, deferred call, client request).
// Properties checked on every input:
//  1. No crash, no sanitizer report, whatever the bytes (the input is split at a position
//     chosen from it, as a UART or pipe would deliver it).
//  2. Every line the server writes is one complete JSON value.
//  3. The server keeps serving: after the input, a newline, initialize and ping are answered.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emcp/json/reader.h"
#include "emcp/transport/stdio.h"
#include "../unit/mcp_fixture_app.h"

namespace {

char g_out[1 << 22];
size_t g_len = 0;

emcp::Status capture(void*, const char* p, size_t n) {
  if (n > sizeof g_out - g_len) g_len = 0;  // keep the tail; lines are checked as they come
  memcpy(g_out + g_len, p, n);
  g_len += n;
  return emcp::Status::kOk;
}

// Checks that each complete line in out[from, g_len) is one JSON value.
void check_lines(size_t from) {
  static emcp::json::StaticReader<64, 256, 64> reader;
  size_t start = from;
  for (size_t i = from; i < g_len; ++i) {
    if (g_out[i] != '\n') continue;
    reader.reset();
    reader.feed(g_out + start, i - start);
    reader.finish();
    for (;;) {
      const emcp::json::Event e = reader.next();
      if (e == emcp::json::Event::kDocumentEnd) break;
      if (e == emcp::json::Event::kError) abort();  // the server wrote a broken line
    }
    start = i + 1;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  emcp::mcp::Server server(fixture::info(), &fixture::now_ms);
  fixture::install(server);
  emcp::transport::StaticStdioTransport<2048> stdio(server, &capture, nullptr);
  emcp::transport::StaticStdioTransport<2048>* transport = &stdio;
  g_len = 0;
  const size_t cut = size == 0 ? 0 : (data[0] * 131u) % (size + 1);
  (void)transport->feed(data, cut);
  fixture::advance_ms(70000);  // let client requests time out midway
  server.poll();
  (void)fixture::complete_slow();
  (void)transport->feed(data + cut, size - cut);
  check_lines(0);
  // Still serving.
  const size_t before = g_len;
  static const char kTail[] =
      "\n{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
      "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"f\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}\n";
  (void)transport->feed(kTail, sizeof kTail - 1);
  check_lines(before);
  static const char kPong[] = "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"result\":{}}\n";
  if (g_len < sizeof kPong - 1 || memcmp(g_out + g_len - (sizeof kPong - 1), kPong, sizeof kPong - 1) != 0)
    abort();
  while (fixture::pending_slow() > 0) (void)fixture::complete_slow();
  return 0;
}
