// Built with EMCP_NOTIFY_QUEUE=0 (tests/CMakeLists.txt): without the queue, a notification sent
// while the answer is open is dropped and counted, and the rest still works. Exit 0 when so.
#include <stdio.h>
#include <string.h>

#include "emcp/mcp/server.h"
#include "emcp/transport/stdio.h"

using namespace emcp::mcp;

namespace {
char g_out[4096];
size_t g_len = 0;
emcp::Status write_out(void*, const char* p, size_t n) {
  if (g_len + n > sizeof g_out) return emcp::Status::kNoSpace;
  memcpy(g_out + g_len, p, n);
  g_len += n;
  return emcp::Status::kOk;
}
Server* g_server = nullptr;
void answer_then_log(ToolCall& c) {
  c.text("answer");
  g_server->log(LogLevel::kError, "after the answer started");
}
constexpr Tool kTools[] = {Tool::make("answer_then_log", &answer_then_log)};
constexpr ServerInfo kInfo = {"no-queue", "1"};
uint64_t no_time() { return 0; }  // nothing here times out
constexpr emcp::Platform kPlatform{&no_time, nullptr};
int fail(const char* what) {
  fprintf(stderr, "no_queue: %s\noutput: %.*s\n", what, static_cast<int>(g_len), g_out);
  return 1;
}
}  // namespace

int main() {
  static_assert(EMCP_NOTIFY_QUEUE == 0, "this test is built with EMCP_NOTIFY_QUEUE=0");
  Server server(kInfo, kPlatform);
  g_server = &server;
  server.set_tools(kTools);
  emcp::transport::StaticStdioTransport<> t(server, &write_out, nullptr);
  const char* in =
      "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
      "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}\n"
      "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"answer_then_log\"}}\n";
  (void)t.feed(in, strlen(in));
  const char* answer = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"answer\"}]}}\n";
  const char* tail = g_len >= strlen(answer) ? g_out + g_len - strlen(answer) : g_out;
  if (strncmp(tail, answer, strlen(answer)) != 0) return fail("the answer is not the last line");
  if (server.notifications_dropped() != 1) return fail("the log was not counted as dropped");
  server.log(LogLevel::kError, "between messages");  // goes out at once
  if (strstr(g_out, "between messages") == nullptr) return fail("a free channel did not send");
  return 0;
}
