// The consumer's server: its three tools (tools.h) over stdio, with the project's emcp_config.h.
#include <unistd.h>

#include "emcp/mcp/server.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/platform.h"
#include "emcp/transport/line.h"
#include "tools.h"

int g_out = 1;
emcp::mcp::Server g_server(kInfo, emcp::posix::platform());
emcp::transport::StaticLineTransport<> g_link(g_server, &emcp::posix::fd_flush, &g_out);

int main() {
  g_server.set_tools(kTools);
  char buf[256];
  for (ssize_t n; (n = read(0, buf, sizeof buf)) > 0;) (void)g_link.feed(buf, static_cast<size_t>(n));
  return 0;
}
