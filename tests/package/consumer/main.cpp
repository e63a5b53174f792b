// The consumer's server: three tools over stdio, with the project's emcp_config.h.
#include <unistd.h>

#include "emcp/mcp/server.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/platform.h"
#include "emcp/transport/stdio.h"

using namespace emcp::mcp;

static_assert(EMCP_PAGE_SIZE == 2, "the project's emcp_config.h");

void hello(ToolCall& call) { call.text({"Hello from ", call.str("name", "a consumer"), "!"}); }
void nothing(ToolCall& call) { call.text("nothing"); }

constexpr Param kHelloArgs[] = {Param::string("name", "Whom to greet")};
constexpr Tool kTools[] = {
    Tool::make("hello", &hello).describe("Greets").with_params(kHelloArgs),
    Tool::make("second", &nothing),
    Tool::make("third", &nothing),
};
constexpr ServerInfo kInfo = {"consumer", "1.0"};
int g_out = 1;
Server g_server(kInfo, emcp::posix::platform());
emcp::transport::StaticStdioTransport<> g_link(g_server, &emcp::posix::fd_flush, &g_out);

int main() {
  g_server.set_tools(kTools);
  char buf[256];
  for (ssize_t n; (n = read(0, buf, sizeof buf)) > 0;) (void)g_link.feed(buf, static_cast<size_t>(n));
  return 0;
}
