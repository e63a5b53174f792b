// emcp-bridge: connects a desktop MCP client (stdio) to an emcp board over a serial device or
// a TCP socket (QEMU's serial port).
//
//   emcp-bridge (--serial DEVICE [--baud N] | --tcp HOST:PORT) [--banner TEXT] [--wait-ms N]
//               [--ping-after-ms N] [--no-reinit] [--quiet]
//
// - Waits until the board is ready before it passes the client's messages on; what the client
//   sends meanwhile waits, in order. Ready is the board's banner line (default: a line
//   containing "MCP on this UART"), which it prints once, at boot. A board that booted before
//   the bridge connected (a second bridge, a client that reconnects) prints none: after a quiet
//   second with no banner the bridge sends a ping of its own (id "emcp-bridge-probe-N"), again
//   each second up to 5 times, and the board's answer is ready; that answer never reaches the
//   client. Pinging only after a quiet time matters for boards whose UART drops what arrives
//   before the firmware enabled it (QEMU's netduinoplus2): a ping sent into a board that is
//   still booting is lost, and when the banner follows an unanswered ping, the bridge pings once
//   more and waits for that answer, so that nothing the lost ping's remains may draw from the
//   board (an error for a torn line) reaches the client. Whatever JSON the board sends before
//   it is ready (answers for a previous client) is dropped, reported on stderr. No banner and
//   no answer within --wait-ms: exit status 1.
// - Lines from the board that are not JSON (boot logs, the banner) go to stderr, never to the
//   client.
// - When the board resets (its banner again, or the connection drops and comes back), the
//   client's requests still in flight are answered with an error (-32603), and, unless
//   --no-reinit, the bridge initializes the new session on the client's behalf: it replays the
//   client's initialize, notifications/initialized, logging/setLevel and resource
//   subscriptions, and drops their answers. The client keeps its session.
// - Ends when the client closes stdin. Exit status 1 when the board cannot be reached.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <time.h>
#include <unistd.h>

#include <string>
#include <vector>

#include "emcp/json/reader.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/util/arena.h"

namespace {

struct Options {
  std::string serial;
  int baud = 115200;
  std::string host;
  int port = 0;
  std::string banner = "MCP on this UART";
  int wait_ms = 15000;
  int ping_after_ms = 1000;  // quiet time before a ping when no banner came; 0: never ping
  bool reinit = true;
  bool quiet = false;
};

// The bridge's own pings: their ids start so (a JSON string), their answers never reach the
// client. At most kMaxProbes per connection, kProbeIntervalMs apart, each after a quiet time.
constexpr const char kProbeId[] = "emcp-bridge-probe-";
constexpr int kMaxProbes = 5;
constexpr uint64_t kProbeIntervalMs = 1000;

uint64_t now_ms() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<uint64_t>(ts.tv_sec) * 1000u + static_cast<uint64_t>(ts.tv_nsec) / 1000000u;
}

void log(const Options& o, const std::string& s) {
  if (o.quiet) return;
  std::string line = "[emcp-bridge] " + s + "\n";
  (void)!write(2, line.data(), line.size());
}

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t k = write(fd, s.data() + off, s.size() - off);
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && errno == EAGAIN) {
      pollfd p{fd, POLLOUT, 0};
      poll(&p, 1, 1000);
      continue;
    }
    if (k <= 0) return false;
    off += static_cast<size_t>(k);
  }
  return true;
}

speed_t baud_constant(int baud) {
  switch (baud) {
    case 9600: return B9600;
    case 19200: return B19200;
    case 38400: return B38400;
    case 57600: return B57600;
    case 115200: return B115200;
    case 230400: return B230400;
    case 460800: return B460800;
    case 921600: return B921600;
    case 1000000: return B1000000;
    default: return 0;
  }
}

int open_serial(const Options& o) {
  const int fd = open(o.serial.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return -1;
  termios t{};
  if (tcgetattr(fd, &t) == 0) {
    cfmakeraw(&t);
    t.c_cflag |= CLOCAL | CREAD;
    t.c_cflag &= ~static_cast<tcflag_t>(CRTSCTS);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    const speed_t sp = baud_constant(o.baud);
    cfsetispeed(&t, sp);
    cfsetospeed(&t, sp);
    tcsetattr(fd, TCSANOW, &t);  // a pty (tests) may refuse some of it: that is fine
  }
  return fd;
}

int open_tcp(const Options& o) {
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* res = nullptr;
  if (getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &res) != 0) return -1;
  int fd = -1;
  for (addrinfo* a = res; a != nullptr; a = a->ai_next) {
    fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
    if (fd < 0) continue;
    if (connect(fd, a->ai_addr, a->ai_addrlen) == 0) break;
    close(fd);
    fd = -1;
  }
  freeaddrinfo(res);
  if (fd >= 0) {
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  return fd;
}

// What the bridge keeps of one JSON-RPC line: its kind, id (as JSON text) and method.
struct Parsed {
  bool valid = false;
  bool request = false, notification = false, response = false;
  std::string id;  // the id's JSON text ("1", "\"a\"")
  std::string method;
};

emcp::json::StaticReader<> g_reader;
emcp::StaticArena<65536> g_arena;
emcp::jsonrpc::Decoder g_decoder(g_reader, g_arena);

std::string id_text(const emcp::jsonrpc::Id& id) {
  if (id.type == emcp::jsonrpc::Id::Type::kInt) return std::to_string(id.num);
  if (id.type == emcp::jsonrpc::Id::Type::kString) {
    std::string s = "\"";
    for (char c : id.str) {
      if (c == '"' || c == '\\') s += '\\';
      s += c;
    }
    return s + "\"";
  }
  return "";
}

Parsed parse(const std::string& line) {
  Parsed p;
  g_decoder.begin();
  g_decoder.feed(line.data(), line.size());
  const emcp::jsonrpc::Decoded& d = g_decoder.finish();
  if (d.batch || d.first == nullptr) return p;
  const emcp::jsonrpc::Message& m = *d.first;
  using K = emcp::jsonrpc::Kind;
  p.valid = m.kind != K::kInvalid || m.id.present();
  p.request = m.kind == K::kRequest;
  p.notification = m.kind == K::kNotification;
  p.response = m.kind == K::kResponse || m.kind == K::kErrorResponse || (m.kind == K::kInvalid && m.id.present());
  p.id = id_text(m.id);
  p.method = std::string(m.method.data(), m.method.size());
  return p;
}

bool looks_like_json(const std::string& line) {
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

struct Bridge {
  Options o;
  int dev = -1;
  bool ready = false;                 // the board is ready on this connection (banner or ping)
  bool redialed = false;              // this connection replaced a lost one, not yet ready
  bool give_back = false;             // once ready, fail what was in flight and re-initialize
  bool banner_seen = false;           // the banner came on this connection
  int probes = 0;                     // pings sent on this connection
  bool probe_out = false;             // one of them is unanswered
  uint64_t deadline = 0;              // for the board to be ready
  uint64_t last_rx = 0;               // the last bytes from the board (or the connection)
  uint64_t last_probe = 0;
  std::string from_dev, from_client;  // partial lines
  std::vector<std::string> waiting;   // client lines held until the board is ready
  std::vector<std::string> pending;   // ids of client requests the board has not answered
  std::vector<std::string> swallow;   // ids of the bridge's replays whose answers are dropped
  // What a new session needs to look like the old one.
  std::string init_line, init_id, initialized_line, level_line;
  std::vector<std::string> subscriptions;  // resources/subscribe lines
  int resets = 0;

  bool connect_dev() {
    dev = o.serial.empty() ? open_tcp(o) : open_serial(o);
    if (dev < 0) return false;
    ready = o.banner.empty();
    banner_seen = false;
    probes = 0;
    probe_out = false;
    last_rx = now_ms();
    deadline = last_rx + static_cast<uint64_t>(o.wait_ms);
    from_dev.clear();
    return true;
  }

  // The id (JSON text) of an answer to one of the bridge's pings, this one's or an earlier's.
  static bool is_probe_id(const std::string& id) {
    const std::string prefix = std::string("\"") + kProbeId;
    return id.compare(0, prefix.size(), prefix) == 0;
  }

  // A ping of the bridge's own; the newline first ends whatever partial line a previous client
  // left in the board's buffer (a blank line is not answered).
  void send_probe() {
    ++probes;
    probe_out = true;
    last_probe = now_ms();
    if (probes == 1) log(o, "no banner yet; pinging the board (it may have booted before the bridge)");
    const std::string id = std::string(kProbeId) + std::to_string(probes);
    (void)write_all(dev, "\n{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"ping\"}\n");
  }

  // While not ready: a ping after a quiet time, again if unanswered, a bounded number of times.
  void tick() {
    if (ready || o.ping_after_ms <= 0 || probes >= kMaxProbes) return;
    const uint64_t now = now_ms();
    if (now - last_rx < static_cast<uint64_t>(o.ping_after_ms)) return;
    if (probes > 0 && now - last_probe < kProbeIntervalMs) return;
    send_probe();
  }

  // The board answers: give the client its session back after a lost connection, then pass on
  // what the client sent meanwhile, in order.
  void become_ready(const char* how) {
    ready = true;
    probe_out = false;
    redialed = false;
    log(o, std::string("board ready (") + how + ")");
    if (give_back) {
      give_back = false;
      on_reset("reconnected");
    }
    for (const std::string& w : waiting) (void)write_all(dev, w + "\n");
    waiting.clear();
  }

  void to_client(const std::string& line) { (void)write_all(1, line + "\n"); }

  void to_dev(const std::string& line) {
    if (!ready) {
      waiting.push_back(line);
      return;
    }
    (void)write_all(dev, line + "\n");
  }

  void replay(const std::string& line, const std::string& id) {
    if (!id.empty()) swallow.push_back(id);
    (void)write_all(dev, line + "\n");
  }

  // The board restarted: fail what was in flight, and make the new session look like the old.
  void on_reset(const char* why) {
    ++resets;
    log(o, std::string("board reset (") + why + ")");
    for (const std::string& id : pending)
      to_client("{\"jsonrpc\":\"2.0\",\"id\":" + id +
                ",\"error\":{\"code\":-32603,\"message\":\"The board reset; this request was lost. Send it again.\"}}");
    pending.clear();
    swallow.clear();
    if (!o.reinit || init_line.empty()) return;
    replay(init_line, init_id);
    if (!initialized_line.empty()) replay(initialized_line, "");
    if (!level_line.empty()) replay(level_line, parse(level_line).id);
    for (const std::string& s : subscriptions) replay(s, parse(s).id);
    log(o, "session initialized again on the client's behalf");
  }

  void on_dev_line(std::string line) {
    if (!line.empty() && line.back() == '\r') line.pop_back();
    if (!looks_like_json(line)) {
      if (!o.banner.empty() && line.find(o.banner) != std::string::npos) {
        log(o, "board: " + line);
        if (ready) {
          on_reset("banner");
          return;
        }
        banner_seen = true;
        // A ping went out before the banner: it may have been lost, or torn, and what the
        // board makes of its remains must not reach the client. One more ping now (the UART
        // is on), and its answer (or an earlier one's) is ready.
        if (probe_out) send_probe();
        else become_ready("banner");
        return;
      }
      if (!line.empty()) log(o, "board: " + line);
      return;
    }
    const Parsed p = parse(line);
    if (p.response && is_probe_id(p.id)) {
      // The first answer makes the board ready; later ones (more pings went out) are dropped.
      if (!ready)
        become_ready(banner_seen ? "banner, then the answer to a ping" : "it answered a ping: it was running already");
      return;
    }
    if (!ready) {
      // Nothing of the client's has gone to this board yet: this is for someone else.
      log(o, "dropped before the board was ready: " + line.substr(0, 200));
      return;
    }
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

  // The connection to the board was lost: dial again (within --wait-ms); the main loop then
  // waits for the board to be ready as on the first connection, and if it was ready before,
  // fails the requests in flight and gives the client its session back (on_reset). The
  // client's input waits meanwhile (not read), so that what it sends next is not failed too.
  bool reconnect() {
    if (redialed && !ready) {
      log(o, "connection to the board lost again");
      return false;
    }
    const bool was_ready = ready;
    close(dev);
    dev = -1;
    log(o, "connection to the board lost; reconnecting");
    const uint64_t until = now_ms() + static_cast<uint64_t>(o.wait_ms);
    while (!connect_dev()) {
      if (now_ms() > until) {
        log(o, "cannot reach the board again");
        return false;
      }
      usleep(100000);
    }
    redialed = true;
    give_back = was_ready;
    if (ready) become_ready("reconnected, --banner \"\"");  // not waiting for anything
    return true;
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
    }
    to_dev(line);
  }
};

void usage() {
  fprintf(stderr,
          "usage: emcp-bridge (--serial DEVICE [--baud N] | --tcp HOST:PORT) [--banner TEXT]\n"
          "                   [--wait-ms N] [--ping-after-ms N] [--no-reinit] [--quiet]\n"
          "  Connects an MCP client on stdin/stdout to an emcp board's UART.\n"
          "  --serial DEVICE  a serial device (raw, 8N1, no flow control), --baud (default 115200)\n"
          "  --tcp HOST:PORT  a TCP socket (QEMU: -serial tcp:127.0.0.1:PORT,server=on)\n"
          "  --banner TEXT    the board's ready line, printed at boot (default \"MCP on this UART\";\n"
          "                   \"\" to not wait for the board at all)\n"
          "  --wait-ms N      how long to wait for the board and for it to be ready (default 15000)\n"
          "  --ping-after-ms N  no banner after N quiet ms (a board that booted before the bridge\n"
          "                   connected): ping it, up to 5 times a second apart, and its answer is\n"
          "                   ready; the answer is not passed on (default 1000; 0: banner only)\n"
          "  --no-reinit      after a board reset, do not initialize the new session for the client\n"
          "  --quiet          no diagnostics on stderr\n");
}

}  // namespace

int main(int argc, char** argv) {
  Bridge b;
  Options& o = b.o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const bool v = i + 1 < argc;
    if (a == "--serial" && v) o.serial = argv[++i];
    else if (a == "--baud" && v) o.baud = atoi(argv[++i]);
    else if (a == "--tcp" && v) {
      const std::string hp = argv[++i];
      const size_t colon = hp.rfind(':');
      if (colon == std::string::npos) {
        usage();
        return 2;
      }
      o.host = hp.substr(0, colon);
      o.port = atoi(hp.c_str() + colon + 1);
    } else if (a == "--banner" && v) o.banner = argv[++i];
    else if (a == "--wait-ms" && v) o.wait_ms = atoi(argv[++i]);
    else if (a == "--ping-after-ms" && v) o.ping_after_ms = atoi(argv[++i]);
    else if (a == "--no-reinit") o.reinit = false;
    else if (a == "--quiet") o.quiet = true;
    else {
      usage();
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (o.serial.empty() == o.host.empty() || (!o.serial.empty() && baud_constant(o.baud) == 0)) {
    usage();
    return 2;
  }
  // Reach the board (a QEMU that is still starting may refuse for a moment).
  const uint64_t give_up = now_ms() + static_cast<uint64_t>(o.wait_ms);
  while (!b.connect_dev()) {
    if (now_ms() > give_up) {
      log(o, "cannot reach the board: " + std::string(strerror(errno)));
      return 1;
    }
    usleep(100000);
  }
  log(o, o.serial.empty() ? "connected to " + o.host + ":" + std::to_string(o.port) : "opened " + o.serial);
  bool client_open = true;
  char buf[8192];
  while (client_open) {
    if (!b.ready && now_ms() > b.deadline) {
      std::string why = "no banner from the board within " + std::to_string(o.wait_ms) + " ms";
      if (b.probes > 0) why += " and no answer to " + std::to_string(b.probes) + " ping(s)";
      if (b.redialed) why += " after reconnecting";
      log(o, why);
      return 1;
    }
    // While a lost connection is being replaced, the client's input waits in the pipe: what it
    // sends then must not be failed with what was in flight (on_reset).
    const bool hold_client = b.give_back;
    pollfd fds[2] = {{hold_client ? -1 : 0, POLLIN, 0}, {b.dev, POLLIN, 0}};
    const int r = poll(fds, 2, 100);
    if (r < 0 && errno != EINTR) return 1;
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t k = read(b.dev, buf, sizeof buf);
      if (k <= 0) {
        // The board went away (QEMU restarted, the cable came out): reconnect, wait until it
        // is ready, and give the client its session back.
        if (!b.reconnect()) return 1;
        continue;
      }
      b.last_rx = now_ms();
      b.from_dev.append(buf, static_cast<size_t>(k));
      size_t nl;
      while ((nl = b.from_dev.find('\n')) != std::string::npos) {
        std::string line = b.from_dev.substr(0, nl);
        b.from_dev.erase(0, nl + 1);
        b.on_dev_line(line);
      }
    }
    if (fds[0].revents & (POLLIN | POLLHUP | POLLERR)) {
      const ssize_t k = read(0, buf, sizeof buf);
      if (k <= 0) {
        client_open = false;
        break;
      }
      b.from_client.append(buf, static_cast<size_t>(k));
      size_t nl;
      while ((nl = b.from_client.find('\n')) != std::string::npos) {
        std::string line = b.from_client.substr(0, nl);
        b.from_client.erase(0, nl + 1);
        if (!line.empty() && line.back() == '\r') line.pop_back();
        if (!line.empty()) b.on_client_line(line);
      }
    }
    b.tick();
  }
  log(o, "client closed; " + std::to_string(b.resets) + " board reset(s) seen");
  if (b.dev >= 0) close(b.dev);
  return 0;
}
