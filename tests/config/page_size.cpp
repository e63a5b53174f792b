// An application's emcp_config.h reaches the core (tests/CMakeLists.txt builds the core for it
// with emcp_configure): its EMCP_PAGE_SIZE of 2 makes the core's tools/list pages of 2 tools,
// and its EMCP_ERROR_STRINGS=0 leaves the texts out of the decoder's errors. Exit 0 when so.
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "../stdio_capture.h"

using namespace emcp::mcp;

namespace {
StdioCapture g_cap;
void noop(ToolCall& c) { c.text("ok"); }
constexpr Tool kTools[] = {Tool::make("a", &noop), Tool::make("b", &noop), Tool::make("c", &noop)};
constexpr ServerInfo kInfo = {"config", "1"};
int fail(const char* what) { return g_cap.fail("page_size", what); }
}  // namespace

int main() {
  static_assert(EMCP_PAGE_SIZE == 2, "built with tests/config/emcp_config.h");
  Server server(kInfo, kStdioTestPlatform);
  server.set_tools(kTools);
  emcp::transport::StaticLineTransport<> t(server, &StdioCapture::write, &g_cap);
  (void)t.feed(kStdioTestHello, strlen(kStdioTestHello));
  const char* in =
      "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\"}\n"
      "{\"jsonrpc\":\"2.0\",\"id\":3,\"id\":4,\"method\":\"ping\"}\n";
  (void)t.feed(in, strlen(in));
  const char* page = strstr(g_cap.out, "\"id\":2,");
  if (page == nullptr) return fail("no tools/list answer");
  if (strstr(page, "{\"name\":\"a\"") == nullptr || strstr(page, "{\"name\":\"b\"") == nullptr)
    return fail("the first page lacks a or b");
  if (strstr(page, "{\"name\":\"c\"") != nullptr) return fail("the first page holds 3 tools: the core's page size is not the application's");
  if (strstr(page, "\"nextCursor\"") == nullptr) return fail("no nextCursor after a page of 2");
  // The decoder's refusal of a duplicate member, without its text (EMCP_ERROR_STRINGS=0).
  const char* refused = strstr(g_cap.out, "\"id\":3,\"error\":{\"code\":-32600,");
  if (refused == nullptr) return fail("no -32600 for the duplicate member");
  if (strstr(refused, "duplicate") != nullptr) return fail("the core wrote the error's text: EMCP_ERROR_STRINGS=0 did not reach it");
  return 0;
}
