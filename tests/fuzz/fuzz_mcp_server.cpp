// libFuzzer target: the whole MCP server behind the stdio transport, with the unit tests'
// fixture application (every kind of tool, resource, prompt, deferred call, client request).
// Properties checked on every input:
//  1. No crash, no sanitizer report, whatever the bytes (the input is split at a position
//     chosen from it, as a UART or pipe would deliver it).
//  2. Every line the server writes is one complete JSON value (checked as it is written, so
//     lines of any length and any number of them).
//  3. The server keeps serving: after the input, a newline, initialize and ping are answered.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emcp/json/reader.h"
#include "emcp/transport/line.h"
#include "../unit/mcp_fixture_app.h"

namespace {

// The server's output is checked as it is written, whatever its length: each line goes through
// a JSON reader piece by piece, and must be exactly one JSON value when its newline comes. Only
// the start of the line being written and of the last complete line are kept (for the final
// ping's answer).
emcp::json::StaticReader<64, 256, 64> g_reader;
constexpr size_t kKeep = 128;
char g_line[kKeep];
size_t g_line_len = 0;  // bytes of the line being written (all of them, kept or not)
char g_last[kKeep];
size_t g_last_len = 0;  // length of the last complete line
size_t g_lines = 0;     // complete lines written

void drain(emcp::json::Event until) {
  for (;;) {
    const emcp::json::Event e = g_reader.next();
    if (e == until) return;
    if (e == emcp::json::Event::kError || e == emcp::json::Event::kDocumentEnd) abort();  // a broken line
  }
}

emcp::Status capture(void*, const char* p, size_t n) {
  while (n > 0) {
    const char* nl = static_cast<const char*>(memchr(p, '\n', n));
    const size_t part = nl != nullptr ? static_cast<size_t>(nl - p) : n;
    if (part > 0) {
      g_reader.feed(p, part);
      drain(emcp::json::Event::kNeedInput);
      if (g_line_len < kKeep) memcpy(g_line + g_line_len, p, part < kKeep - g_line_len ? part : kKeep - g_line_len);
      g_line_len += part;
    }
    if (nl == nullptr) break;
    g_reader.finish();
    drain(emcp::json::Event::kDocumentEnd);  // exactly one value on the line
    g_reader.reset();
    memcpy(g_last, g_line, g_line_len < kKeep ? g_line_len : kKeep);
    g_last_len = g_line_len;
    g_line_len = 0;
    ++g_lines;
    p += part + 1;
    n -= part + 1;
  }
  return emcp::Status::kOk;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  // Every input starts at the same time: it behaves the same whatever ran before it, and the
  // requestStates of the 2026-07-28 fixture (written by this platform's key and clock) are
  // still fresh in its seeds, so their retries reach the handlers' later rounds.
  static const uint64_t start_ms = fixture::now_ms();
  fixture::advance_ms(start_ms - fixture::now_ms());  // (modulo 2^64: back to start_ms)
  emcp::mcp::Server server(fixture::info(), fixture::platform());
  fixture::install(server);
  emcp::transport::StaticLineTransport<2048> stdio(server, &capture, nullptr);
  emcp::transport::StaticLineTransport<2048>* transport = &stdio;
  g_reader.reset();
  g_line_len = 0;
  g_last_len = 0;
  const size_t cut = size == 0 ? 0 : (data[0] * 131u) % (size + 1);
  (void)transport->feed(data, cut);
  fixture::advance_ms(70000);  // let client requests time out midway
  server.poll();
  (void)fixture::complete_slow();
  (void)transport->feed(data + cut, size - cut);
  // Still serving.
  const size_t before = g_lines;
  static const char kTail[] =
      "\n{\"jsonrpc\":\"2.0\",\"id\":\"i\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
      "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"f\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"method\":\"ping\"}\n";
  (void)transport->feed(kTail, sizeof kTail - 1);
  // The last thing written is the complete answer to the ping, after the initialize's.
  static const char kPong[] = "{\"jsonrpc\":\"2.0\",\"id\":\"last\",\"result\":{}}";
  if (g_lines < before + 2 || g_line_len != 0 || g_last_len != sizeof kPong - 1 ||
      memcmp(g_last, kPong, sizeof kPong - 1) != 0)
    abort();
  while (fixture::pending_slow() > 0) (void)fixture::complete_slow();
  return 0;
}
