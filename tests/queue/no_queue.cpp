// Built with EMCP_NOTIFY_QUEUE=0 (tests/CMakeLists.txt): without the queue, a notification sent
// while the answer is open is dropped and counted, and the rest still works. Exit 0 when so.
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "../stdio_capture.h"

using namespace emcp::mcp;

namespace {
StdioCapture g_cap;
Server* g_server = nullptr;
void answer_then_log(ToolCall& c) {
  c.text("answer");
  g_server->log(LogLevel::kError, "after the answer started");
}
constexpr Tool kTools[] = {Tool::make("answer_then_log", &answer_then_log)};
constexpr ServerInfo kInfo = {"no-queue", "1"};
int fail(const char* what) { return g_cap.fail("no_queue", what); }
}  // namespace

int main() {
  static_assert(EMCP_NOTIFY_QUEUE == 0, "this test is built with EMCP_NOTIFY_QUEUE=0");
  Server server(kInfo, kStdioTestPlatform);
  g_server = &server;
  server.set_tools(kTools);
  emcp::transport::StaticLineTransport<> t(server, &StdioCapture::write, &g_cap);
  (void)t.feed(kStdioTestHello, strlen(kStdioTestHello));
  const char* in =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/call\",\"params\":{\"name\":\"answer_then_log\"}}\n";
  (void)t.feed(in, strlen(in));
  const char* answer = "{\"jsonrpc\":\"2.0\",\"id\":2,\"result\":{\"content\":[{\"type\":\"text\",\"text\":\"answer\"}]}}\n";
  const char* tail = g_cap.len >= strlen(answer) ? g_cap.out + g_cap.len - strlen(answer) : g_cap.out;
  if (strncmp(tail, answer, strlen(answer)) != 0) return fail("the answer is not the last line");
  if (server.notifications_dropped() != 1) return fail("the log was not counted as dropped");
  server.log(LogLevel::kError, "between messages");  // goes out at once
  if (strstr(g_cap.out, "between messages") == nullptr) return fail("a free channel did not send");
  return 0;
}
