// The unit tests' fixture application (unit/mcp_fixture_app.*: a tool of each kind, nested
// object and array parameters among them) served on stdio, for the Node tests that need its
// tables (mcp/params_differential.test.mjs). The `slow` tool's deferred calls are answered at
// the next turn of the loop.
#include "emcp/posix/serve.h"
#include "unit/mcp_fixture_app.h"

namespace serve = emcp::posix::serve;

namespace {

emcp::mcp::Server g_server(fixture::info(), fixture::platform());

void answer_slow_calls() {
  while (fixture::pending_slow() > 0)
    if (fixture::complete_slow() != emcp::Status::kOk) break;
}

uint32_t soon() { return 10; }

}  // namespace

int main() {
  fixture::install(g_server);
  serve::Loop loop;
  loop.tick = &answer_slow_calls;
  loop.next_tick_ms = &soon;
  return serve::stdio(g_server, "emcp-fixture-stdio", loop);
}
