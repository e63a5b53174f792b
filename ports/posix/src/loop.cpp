#include "emcp/posix/loop.h"

#include <poll.h>
#include <signal.h>

#include "emcp/json/number.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/platform.h"

EMCP_NS_BEGIN
namespace posix {

namespace {

volatile sig_atomic_t g_stop = 0;
void on_signal(int) { g_stop = 1; }

transport::LineTransport* g_served = nullptr;

StrView num(uint64_t v, char* buf) { return StrView(buf, json::format_uint64(v, buf)); }

}  // namespace

void catch_stop_signals() {
  struct sigaction sa = {};
  sa.sa_handler = &on_signal;
  (void)sigaction(SIGINT, &sa, nullptr);
  (void)sigaction(SIGTERM, &sa, nullptr);
}

bool stop_requested() { return g_stop != 0; }

void say(std::initializer_list<StrView> parts) {
  for (StrView s : parts) (void)write_all(2, s.data(), s.size());
}

transport::LineTransport* served_stdio() { return g_served; }

int serve_stdio(mcp::Server& server, transport::LineTransport& link, const char* program, const Loop& loop) {
  g_served = &link;
  catch_stop_signals();
  uint8_t buf[1024];
  while (g_stop == 0) {
    // stdin, and the eventfd other threads wake the loop with (the server's inbox).
    pollfd pfd[2] = {{0, POLLIN, 0}, {wake_fd(), POLLIN, 0}};
    const int ready = poll(pfd, pfd[1].fd >= 0 ? 2 : 1, static_cast<int>(loop.wait_ms(1000)));
    if (ready > 0 && (pfd[1].revents & POLLIN) != 0) clear_wake();
    if (ready > 0 && pfd[0].revents != 0) {
      size_t n = 0;
      const Status s = read_some(0, buf, sizeof buf, &n);
      if (s == Status::kOk) {
        if (link.feed(buf, n) != Status::kOk) {
          say({program, ": stdout failed: ", status_str(link.status()), "\n"});
          g_served = nullptr;
          return 1;
        }
      } else if (s != Status::kWouldBlock) {
        (void)link.finish();
        break;
      }
    }
    if (loop.tick) loop.tick();
    server.poll();
  }
  g_served = nullptr;
  char a[24], b[24], c[24];
  say({program, g_stop != 0 ? ": stopped by a signal after " : ": end of input after ", num(link.messages(), a),
       " messages (", num(link.too_long(), b), " over-long lines), arena high-water ",
       num(link.arena().high_water(), c), " bytes\n"});
  return 0;
}

}  // namespace posix
EMCP_NS_END
