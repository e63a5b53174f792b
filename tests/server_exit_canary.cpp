// emcp-server-exit-canary MODE: a stand-in for a network server that ends wrongly, for the
// canaries of the Node tests' stop helper (mcp/lib/server_exit.mjs, through harness.mjs's
// stopNetworkServer; mcp/server_exit_canary.mjs runs it, tests/CMakeLists.txt registers them).
// It announces "serving MCP on http://127.0.0.1:1/mcp" on stderr as emcp's servers do (it
// listens on nothing), waits for SIGTERM and then, by MODE:
//   clean   exits with status 0 (the control: the helper must pass it)
//   status  exits with status 1
//   signal  dies of the SIGTERM (it catches nothing)
//   report  writes the first line of a sanitizer's report on stderr and exits with status 0
//           (for builds without a sanitizer)
//   leak    loses 64 heap blocks and exits with status 0: in a build with AddressSanitizer,
//           LeakSanitizer reports the leaks at exit (with LSAN_OPTIONS=exitcode=0 the status
//           stays 0: the report is all that is wrong)
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

namespace {

volatile sig_atomic_t g_term = 0;
void* volatile g_block = nullptr;

void say(const char* text) { (void)!write(2, text, strlen(text)); }

// Blocks nothing points at once this returns. One block was not enough: LeakSanitizer scans
// registers and the live stack conservatively, and a stale copy of the pointer left there
// (by malloc's or memset's own frames) hid the only block in about half the runs (19 of 40
// here, and once in CI). A stale copy can hide a block or two, never 64.
__attribute__((noinline)) void lose_blocks() {
  for (int i = 0; i < 64; ++i) {
    g_block = malloc(4096);
    memset(g_block, 1, 4096);
    g_block = nullptr;
  }
}

}  // namespace

int main(int argc, char** argv) {
  const char* mode = argc > 1 ? argv[1] : "";
  if (strcmp(mode, "clean") != 0 && strcmp(mode, "status") != 0 && strcmp(mode, "signal") != 0 &&
      strcmp(mode, "report") != 0 && strcmp(mode, "leak") != 0) {
    say("usage: emcp-server-exit-canary clean|status|signal|report|leak\n");
    return 2;
  }
  if (strcmp(mode, "signal") != 0) {
    struct sigaction sa = {};
    sa.sa_handler = [](int) { g_term = 1; };
    (void)sigaction(SIGTERM, &sa, nullptr);
  }
  say("emcp-server-exit-canary: serving MCP on http://127.0.0.1:1/mcp (a canary: it listens on nothing)\n");
  while (g_term == 0) (void)usleep(10000);
  say("emcp-server-exit-canary: SIGTERM\n");
  if (strcmp(mode, "status") == 0) return 1;
  if (strcmp(mode, "report") == 0) say("canary.cpp:1:1: runtime error: (the first line of a report, written by hand)\n");
  if (strcmp(mode, "leak") == 0) lose_blocks();
  return 0;
}
