// tools/bridge/stdio_bridge.cpp - emcp-bridge's stdio mode: one MCP client on stdin/stdout,
// its lines passed to the board as they are (board_link.h does the board's side).
//
// When the client closes its input, the bridge still sends what it queued and waits (up to
// --wait-ms) for the answers to the requests on their way. When the board resets, the client's
// requests still in flight are answered with an error (-32603), and, unless --no-reinit, the bridge initializes the new session on the client's
// behalf: it replays the client's initialize, notifications/initialized, logging/setLevel and
// resource subscriptions, and drops their answers. The client keeps its session.
#include "stdio_bridge.h"

#include <errno.h>
#include <poll.h>
#include <unistd.h>

#include "board_link.h"
#include "emcp/posix/fd.h"

namespace bridge {

namespace {

// Bytes queued for the board beyond which the client's input waits.
constexpr size_t kMaxQueued = 1u << 20;

struct StdioBridge final : Link::Listener {
  const LinkOptions& o;
  bool reinit;
  std::unique_ptr<Link> link;
  std::string from_client;            // a partial line
  std::vector<std::string> pending;   // ids of client requests the board has not answered
  std::vector<std::string> swallow;   // ids of the bridge's replays whose answers are dropped
  // What a new session needs to look like the old one.
  std::string init_line, init_id, initialized_line, level_line;
  std::vector<std::string> subscriptions;  // resources/subscribe lines

  StdioBridge(const LinkOptions& opts, bool re) : o(opts), reinit(re), link(make_link(opts, *this)) {}

  void to_client(const std::string& line) {
    const std::string text = line + "\n";
    (void)emcp::posix::write_all(1, text.data(), text.size());
  }

  void replay(const std::string& line, const std::string& id) {
    if (!id.empty()) swallow.push_back(id);
    link->send(line);
  }

  // The board restarted: fail what was in flight, and make the new session look like the old.
  void on_board_reset(const char*) override {
    for (const std::string& id : pending)
      to_client("{\"jsonrpc\":\"2.0\",\"id\":" + id +
                ",\"error\":{\"code\":-32603,\"message\":\"The board reset; this request was lost. Send it again.\"}}");
    pending.clear();
    swallow.clear();
    if (!reinit || init_line.empty()) return;
    replay(init_line, init_id);
    if (!initialized_line.empty()) replay(initialized_line, "");
    if (!level_line.empty()) replay(level_line, parse(level_line).id);
    for (const std::string& s : subscriptions) replay(s, parse(s).id);
    log(o.quiet, "session initialized again on the client's behalf");
  }

  // The board lost input: the requests that were on the way are answered now (the board may
  // never answer them); an answer that still comes for one is dropped.
  void on_board_lost_input(const std::vector<std::string>& ids) override {
    for (const std::string& id : ids) {
      for (size_t i = 0; i < pending.size(); ++i) {
        if (pending[i] != id) continue;
        pending.erase(pending.begin() + static_cast<long>(i));
        swallow.push_back(id);
        to_client("{\"jsonrpc\":\"2.0\",\"id\":" + id +
                  ",\"error\":{\"code\":-32603,\"message\":\"The board lost input on its UART (its receive buffer "
                  "overflowed); this request may not have reached it. Send it again.\"}}");
        break;
      }
    }
  }

  void on_board_line(const std::string& line) override {
    const Parsed p = parse(line);
    if (p.response && !p.id.empty()) {
      for (size_t i = 0; i < swallow.size(); ++i) {
        if (swallow[i] == p.id) {
          swallow.erase(swallow.begin() + static_cast<long>(i));
          return;  // the answer to a replay
        }
      }
      for (size_t i = 0; i < pending.size(); ++i) {
        if (pending[i] == p.id) {
          pending.erase(pending.begin() + static_cast<long>(i));
          break;
        }
      }
    }
    to_client(line);
  }

  void on_client_line(const std::string& line) {
    const Parsed p = parse(line);
    if (p.request) {
      pending.push_back(p.id);
      if (p.method == "initialize") {
        init_line = line;
        init_id = p.id;
        initialized_line.clear();
        level_line.clear();
        subscriptions.clear();
      } else if (p.method == "logging/setLevel") {
        level_line = line;
      } else if (p.method == "resources/subscribe" && subscriptions.size() < 64) {
        subscriptions.push_back(line);
      }
    } else if (p.notification && p.method == "notifications/initialized") {
      initialized_line = line;
    } else if (!p.cancels.empty()) {
      // A cancelled request may get no answer: the end of input does not wait for it.
      for (size_t i = 0; i < pending.size(); ++i) {
        if (pending[i] == p.cancels) {
          pending.erase(pending.begin() + static_cast<long>(i));
          break;
        }
      }
    }
    link->send(line);
  }
};

}  // namespace

int run_stdio(const LinkOptions& o, bool reinit) {
  catch_stop_signals();
  StdioBridge b(o, reinit);
  if (!b.link->start()) return 1;
  char buf[8192];
  bool eof = false;           // the client closed its input: what it sent is still answered
  uint64_t drain_until = 0;   // ... for --wait-ms at most
  while (!stop_requested()) {
    if (!b.link->tick()) return 1;
    if (eof && ((b.pending.empty() && b.link->queued() == 0) || now_ms() > drain_until)) break;
    // While a lost connection is being replaced, the client's input waits in the pipe: what it
    // sends then must not be failed with what was in flight. So it does while the board does
    // not take what was sent (a bounded queue).
    const bool hold_client = eof || b.link->resetting() || b.link->queued() > kMaxQueued;
    pollfd fds[2] = {{hold_client ? -1 : 0, POLLIN, 0},
                     {b.link->fd(), static_cast<short>(POLLIN | (b.link->wants_write() ? POLLOUT : 0)), 0}};
    const int r = poll(fds, 2, 100);
    if (r < 0 && errno != EINTR) return 1;
    if (r < 0) continue;
    if (fds[1].revents & POLLOUT) {
      if (!b.link->flush()) return 1;
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (!b.link->on_readable()) return 1;
      if (b.link->resetting()) continue;  // the client's input waits (above)
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      size_t k = 0;
      const emcp::Status s = emcp::posix::read_some(0, buf, sizeof buf, &k);
      if (s == emcp::Status::kWouldBlock) continue;
      if (s != emcp::Status::kOk) {
        eof = true;
        drain_until = now_ms() + static_cast<uint64_t>(o.wait_ms);
        continue;
      }
      b.from_client.append(buf, k);
      size_t nl;
      while ((nl = b.from_client.find('\n')) != std::string::npos) {
        std::string line = b.from_client.substr(0, nl);
        b.from_client.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) b.on_client_line(line);
      }
    }
  }
  if (!b.pending.empty() && !stop_requested())
    log(o.quiet, std::to_string(b.pending.size()) + " request(s) still unanswered " + std::to_string(o.wait_ms) +
                     " ms after the client closed its input");
  log(o.quiet, std::string(stop_requested() ? "stopped by a signal; " : "client closed; ") + b.link->summary());
  return 0;
}

}  // namespace bridge
