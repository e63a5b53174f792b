// tools/bridge/board_link.cpp - the board's UART or TCP side of emcp-bridge (board_link.h).
#include "board_link.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <termios.h>
#include <unistd.h>

#include "emcp/json/reader.h"
#include "emcp/posix/fd.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/util/arena.h"

namespace bridge {

namespace {

// The link's own pings: their ids start so (a JSON string), their answers never reach a
// client. At most kMaxProbes per connection, kProbeIntervalMs apart, each after a quiet time.
constexpr const char kProbeId[] = "emcp-bridge-probe-";
constexpr int kMaxProbes = 5;
constexpr uint64_t kProbeIntervalMs = 1000;
// The link's sync pings (board_link.h, flow control): their answers never reach a client
// either. A sync goes out when lines wait for the window and what is on the way holds no
// request, or its oldest line has waited this long (a deferred call, answered much later).
constexpr const char kSyncId[] = "emcp-bridge-sync-";
constexpr uint64_t kSyncAfterMs = 200;
// Room the window keeps for a sync ping (its line is shorter).
constexpr size_t kSyncRoom = 64;
// The longest line from the board kept (a board's lines are bounded by its own buffers).
constexpr size_t kMaxLine = 1u << 20;

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

int open_serial(const LinkOptions& o) {
  const int fd = open(o.serial.c_str(), O_RDWR | O_NOCTTY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return -1;
  termios t{};
  if (tcgetattr(fd, &t) == 0) {
    cfmakeraw(&t);
    t.c_cflag |= CLOCAL | CREAD;
    if (o.rtscts) t.c_cflag |= CRTSCTS;
    else t.c_cflag &= ~static_cast<tcflag_t>(CRTSCTS);
    t.c_cc[VMIN] = 1;
    t.c_cc[VTIME] = 0;
    const speed_t sp = baud_constant(o.baud);
    cfsetispeed(&t, sp);
    cfsetospeed(&t, sp);
    tcsetattr(fd, TCSANOW, &t);  // a pty (tests) may refuse some of it: that is fine
  }
  return fd;
}

int open_tcp(const LinkOptions& o) {
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
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
  }
  return fd;
}

emcp::json::StaticReader<> g_reader;
emcp::StaticArena<(4u << 20)> g_arena;  // a board line is at most kMaxLine (1 MiB)
emcp::jsonrpc::Decoder g_decoder(g_reader, g_arena);

std::string quoted(emcp::StrView str) {
  std::string s = "\"";
  for (char c : str) {
    if (c == '"' || c == '\\') s += '\\';
    s += c;
  }
  return s + "\"";
}

std::string id_text(const emcp::jsonrpc::Id& id) {
  if (id.type == emcp::jsonrpc::Id::Type::kInt) return std::to_string(id.num);
  if (id.type == emcp::jsonrpc::Id::Type::kString) return quoted(id.str);
  return "";
}

bool has_prefix(const std::string& id, const char* prefix) {
  const std::string quoted = std::string("\"") + prefix;
  return id.compare(0, quoted.size(), quoted) == 0;
}
bool is_probe_id(const std::string& id) { return has_prefix(id, kProbeId); }
bool is_sync_id(const std::string& id) { return has_prefix(id, kSyncId); }

std::string ping_line(const std::string& id) { return "{\"jsonrpc\":\"2.0\",\"id\":\"" + id + "\",\"method\":\"ping\"}"; }

// "receive buffer N B" in a banner: N, or 0.
size_t banner_window(const std::string& line) {
  static const std::string kKey = "receive buffer ";
  const size_t at = line.find(kKey);
  if (at == std::string::npos) return 0;
  size_t v = 0, i = at + kKey.size();
  const size_t first = i;
  for (; i < line.size() && line[i] >= '0' && line[i] <= '9' && v < (1u << 30); ++i) v = v * 10 + static_cast<size_t>(line[i] - '0');
  return i > first && line.compare(i, 2, " B") == 0 ? v : 0;
}

}  // namespace

void catch_stop_signals() {
  emcp::posix::catch_stop_signals();
  signal(SIGPIPE, SIG_IGN);
}

void log(bool quiet, const std::string& s) {
  if (quiet) return;
  const std::string line = "[emcp-bridge] " + s;
  emcp::posix::log_line(line.data(), line.size());
}

bool baud_supported(int baud) { return baud_constant(baud) != 0; }

Parsed parse(const std::string& line) {
  Parsed p;
  g_decoder.begin();
  g_decoder.feed(line.data(), line.size());
  const emcp::jsonrpc::Decoded* dp = &g_decoder.finish();
  // An error without an id (MCP 2025-11-25 leaves an unknown id out) is invalid to the core's
  // decoder, which serves the other side; read it again with a null id to see its error.
  if (dp->first != nullptr && !dp->batch && dp->first->kind == emcp::jsonrpc::Kind::kInvalid &&
      strcmp(dp->first->reason, "error response without id") == 0) {
    const size_t brace = line.find('{');
    const std::string with_id = line.substr(0, brace + 1) + "\"id\":null," + line.substr(brace + 1);
    g_decoder.begin();
    g_decoder.feed(with_id.data(), with_id.size());
    dp = &g_decoder.finish();
  }
  const emcp::jsonrpc::Decoded& d = *dp;
  if (d.first == nullptr) return p;
  if (d.batch) {
    p.batch = true;
    p.valid = true;
    return p;
  }
  const emcp::jsonrpc::Message& m = *d.first;
  using K = emcp::jsonrpc::Kind;
  p.valid = m.kind != K::kInvalid || m.id.present();
  p.request = m.kind == K::kRequest;
  p.notification = m.kind == K::kNotification;
  p.response = m.kind == K::kResponse || m.kind == K::kErrorResponse || (m.kind == K::kInvalid && m.id.present());
  p.id = id_text(m.id);
  p.method = std::string(m.method.data(), m.method.size());
  if (p.notification && p.method == "notifications/cancelled") {
    const emcp::json::Value r = m.params["requestId"];
    if (r.as_int().ok()) p.cancels = std::to_string(r.as_int().value());
    else if (r.as_string().ok()) p.cancels = quoted(r.as_string().value());
  }
  if (m.kind == K::kErrorResponse) {
    const emcp::Result<bool> lost = m.error.data["inputLost"].as_bool();
    p.input_lost = lost.ok() && lost.value();
  }
  return p;
}

bool looks_like_json(const std::string& line) {
  for (char c : line) {
    if (c == ' ' || c == '\t' || c == '\r') continue;
    return c == '{' || c == '[';
  }
  return false;
}

BoardLink::~BoardLink() {
  if (fd_ >= 0) close(fd_);
}

bool BoardLink::connect_dev() {
  fd_ = o_.serial.empty() ? open_tcp(o_) : open_serial(o_);
  if (fd_ < 0) return false;
  ready_ = o_.banner.empty();
  banner_seen_ = false;
  probes_ = 0;
  probe_out_ = false;
  last_rx_ = now_ms();
  deadline_ = last_rx_ + static_cast<uint64_t>(o_.wait_ms);
  from_dev_.clear();
  out_.clear();
  forget_board();
  return true;
}

// A new connection or a board that restarted: nothing is on the way to it.
void BoardLink::forget_board() {
  flight_.clear();
  in_flight_ = 0;
  sync_out_ = false;
}

bool BoardLink::start() {
  const uint64_t give_up = now_ms() + static_cast<uint64_t>(o_.wait_ms);
  while (!connect_dev()) {
    if (now_ms() > give_up) {
      failure_ = "cannot reach the board: " + std::string(strerror(errno));
      log(o_.quiet, failure_);
      return false;
    }
    usleep(100000);
  }
  log(o_.quiet, o_.serial.empty() ? "connected to " + o_.host + ":" + std::to_string(o_.port) : "opened " + o_.serial);
  if (ready_) become_ready("--banner \"\": not waiting");
  return true;
}

// A ping of the link's own; the newline first ends whatever partial line a previous client
// left in the board's buffer (a blank line is not answered).
void BoardLink::send_probe() {
  ++probes_;
  probe_out_ = true;
  last_probe_ = now_ms();
  if (probes_ == 1) log(o_.quiet, "no banner yet; pinging the board (it may have booted before the bridge)");
  const std::string id = std::string(kProbeId) + std::to_string(probes_);
  write_line(ping_line(id), "\"" + id + "\"", true);
  (void)flush();
}

// Into the bytes to write, and on the way from then on.
void BoardLink::write_line(const std::string& text, const std::string& id, bool lead_newline) {
  if (lead_newline) out_ += '\n';
  out_ += text;
  out_ += '\n';
  const size_t bytes = text.size() + (lead_newline ? 2 : 1);
  flight_.push_back(Sent{bytes, id, now_ms()});
  in_flight_ += bytes;
  if (in_flight_ > in_flight_peak_) in_flight_peak_ = in_flight_;
}

// Writes the queued lines the window has room for (less the room a sync ping needs), in order.
// A line longer than that goes when nothing else is on the way (maybe_sync() covers it).
void BoardLink::pump() {
  if (!ready_ || fd_ < 0) return;
  bool wrote = false;
  while (!queue_.empty()) {
    const Line& l = queue_.front();
    const size_t bytes = l.text.size() + 1;
    if (in_flight_ != 0 && in_flight_ + bytes + kSyncRoom > window_) break;
    write_line(l.text, l.id, false);
    queue_bytes_ -= bytes;
    queue_.pop_front();
    wrote = true;
  }
  maybe_sync();
  if (wrote) (void)flush();  // a failure shows on the next read or write
}

// A sync ping when lines wait and nothing on the way is a request that will be answered soon
// (none is one, or the oldest has waited kSyncAfterMs: a deferred call, answered much later),
// in the room the window keeps for it. A line that went alone left no such room: once it has
// been on its way kSyncAfterMs (read by then, as far as a board can be), a sync follows it
// when something waits behind it or it will get no answer of its own.
void BoardLink::maybe_sync() {
  if (!ready_ || fd_ < 0 || sync_out_ || flight_.empty()) return;
  const bool waiting = !queue_.empty();
  const Sent& first = flight_.front();
  const bool old = now_ms() - first.at >= kSyncAfterMs;
  if (flight_.size() == 1 && first.bytes + kSyncRoom > window_) {
    if (old && (waiting || first.id.empty())) send_sync();
    return;
  }
  if (!waiting) return;
  bool request = false;
  for (const Sent& f : flight_) request = request || (!f.id.empty() && !f.reported);
  if (request && !old) return;
  if (in_flight_ + kSyncRoom > window_) return;  // the room kept for it is taken
  send_sync();
}

void BoardLink::send_sync() {
  sync_out_ = true;
  const std::string id = std::string(kSyncId) + std::to_string(++syncs_);
  write_line(ping_line(id), "\"" + id + "\"", false);
  (void)flush();
}

// The board answered request `id`: it has read every line up to that one.
void BoardLink::acknowledge(const std::string& id) {
  size_t n = 0;
  while (n < flight_.size() && flight_[n].id != id) ++n;
  if (n == flight_.size()) return;  // not on the way (covered by a later answer already)
  for (size_t i = 0; i <= n; ++i) {
    in_flight_ -= flight_.front().bytes;
    if (is_sync_id(flight_.front().id)) sync_out_ = false;
    flight_.pop_front();
  }
  pump();
}

// The board says it lost input: the requests on the way may be lost with it.
void BoardLink::lost_input() {
  std::vector<std::string> ids;
  for (Sent& f : flight_) {
    if (f.id.empty() || f.reported) continue;
    f.reported = true;
    if (!is_probe_id(f.id) && !is_sync_id(f.id)) ids.push_back(f.id);
  }
  log(o_.quiet, "the board lost input; " + std::to_string(ids.size()) +
                    " request(s) on the way are answered with an error (its receive buffer overflowed: a --window "
                    "larger than its buffer, or a UART fault)");
  l_.on_board_lost_input(ids);
  // The board skips the damaged line up to its newline; when the gap took that newline too, the
  // next line sent would be skipped as its rest. A newline of its own ends it first (a blank
  // line is nothing to a board that is not skipping).
  out_ += '\n';
  flight_.push_back(Sent{1, std::string(), now_ms()});
  in_flight_ += 1;
  // What is still counted may be on its way or lost: a sync ping tells.
  if (!sync_out_ && in_flight_ + kSyncRoom <= window_) send_sync();
  (void)flush();
}

bool BoardLink::flush() {
  while (fd_ >= 0 && !out_.empty()) {
    const ssize_t k = write(fd_, out_.data(), out_.size());
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return true;  // POLLOUT later
    if (k <= 0) return lose();
    out_.erase(0, static_cast<size_t>(k));
  }
  return true;
}

bool BoardLink::tick() {
  if (dead_) return false;
  const uint64_t now = now_ms();
  if (dialing_) {
    // The connection was lost: dial again every 100 ms (never blocking the caller's loop).
    if (now - last_dial_ < 100) return true;
    last_dial_ = now;
    if (!connect_dev()) {
      if (now > dial_until_) {
        failure_ = "cannot reach the board again";
        log(o_.quiet, failure_);
        return false;
      }
      return true;
    }
    dialing_ = false;
    redialed_ = true;
    log(o_.quiet, "reconnected to the board");
    if (ready_) become_ready("reconnected, --banner \"\"");  // not waiting for anything
    return true;
  }
  if (!ready_ && now > deadline_) {
    failure_ = "no banner from the board within " + std::to_string(o_.wait_ms) + " ms";
    if (probes_ > 0) failure_ += " and no answer to " + std::to_string(probes_) + " ping(s)";
    if (redialed_) failure_ += " after reconnecting";
    log(o_.quiet, failure_);
    return false;
  }
  if (ready_) maybe_sync();
  if (ready_ || o_.ping_after_ms <= 0 || probes_ >= kMaxProbes) return true;
  if (now - last_rx_ < static_cast<uint64_t>(o_.ping_after_ms)) return true;
  if (probes_ > 0 && now - last_probe_ < kProbeIntervalMs) return true;
  send_probe();
  return true;
}

// The board answers: report a reset after a lost connection, then send what waited, in order.
// Nothing of a client's is queued across a reset: what was queued for the lost connection was
// dropped with it, and callers hold their input while resetting().
void BoardLink::become_ready(const char* how) {
  ready_ = true;
  probe_out_ = false;
  redialed_ = false;
  log(o_.quiet, std::string("board ready (") + how + ")");
  if (give_back_) {
    give_back_ = false;
    ++resets_;
    log(o_.quiet, "board reset (reconnected)");
    l_.on_board_reset("reconnected");
  }
  pump();
  l_.on_board_ready();
}

void BoardLink::send(const std::string& line) {
  const Parsed p = parse(line);
  queue_.push_back(Line{line, p.request ? p.id : std::string()});
  queue_bytes_ += line.size() + 1;
  pump();
}

void BoardLink::on_line(std::string line) {
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (!looks_like_json(line)) {
    if (!o_.banner.empty() && line.find(o_.banner) != std::string::npos) {
      log(o_.quiet, "board: " + line);
      // A (new) firmware: nothing is on the way to it, and it says how much it holds.
      forget_board();
      const size_t said = banner_window(line);
      if (o_.window == 0 && said != 0 && said != window_) {
        window_ = said;
        log(o_.quiet, "window: " + std::to_string(window_) + " B (the board's receive buffer)");
      }
      if (ready_) {
        ++resets_;
        log(o_.quiet, "board reset (banner)");
        queue_.clear();  // for the firmware that went: failed by on_board_reset()
        queue_bytes_ = 0;
        l_.on_board_reset("banner");
        l_.on_board_ready();  // a new firmware: ask again what it speaks
        return;
      }
      banner_seen_ = true;
      // A ping went out before the banner: it may have been lost, or torn, and what the
      // board makes of its remains must not reach a client. One more ping now (the UART
      // is on), and its answer (or an earlier one's) is ready.
      if (probe_out_) send_probe();
      else become_ready("banner");
      return;
    }
    if (!line.empty()) log(o_.quiet, "board: " + line);
    return;
  }
  const Parsed p = parse(line);
  if (p.response && !p.id.empty()) acknowledge(p.id);
  if (p.response && is_probe_id(p.id)) {
    // The first answer makes the board ready; later ones (more pings went out) are dropped.
    if (!ready_)
      become_ready(banner_seen_ ? "banner, then the answer to a ping" : "it answered a ping: it was running already");
    return;
  }
  if (p.response && is_sync_id(p.id)) return;
  if (!ready_) {
    // Nothing of a client's has gone to this board yet: this is for someone else.
    log(o_.quiet, "dropped before the board was ready: " + line.substr(0, 200));
    return;
  }
  l_.on_board_line(line);
  if (p.input_lost) lost_input();
}

// The connection to the board was lost: tick() dials again (within --wait-ms); then the board
// must be ready as on the first connection, and if it was ready before, the reset is reported.
// What was queued for the lost connection is dropped.
bool BoardLink::lose() {
  if (redialed_ && !ready_) {
    failure_ = "connection to the board lost again";
    log(o_.quiet, failure_);
    dead_ = true;
    return false;
  }
  if (ready_) {
    give_back_ = true;
    queue_.clear();  // for the connection that went: failed by on_board_reset()
    queue_bytes_ = 0;
  }
  if (fd_ >= 0) close(fd_);
  fd_ = -1;
  out_.clear();
  forget_board();
  from_dev_.clear();
  ready_ = false;
  dialing_ = true;
  last_dial_ = 0;
  dial_until_ = now_ms() + static_cast<uint64_t>(o_.wait_ms);
  log(o_.quiet, "connection to the board lost; reconnecting");
  return true;
}

bool BoardLink::on_readable() {
  if (dead_) return false;
  if (fd_ < 0) return true;
  char buf[8192];
  size_t k = 0;
  const emcp::Status s = emcp::posix::read_some(fd_, buf, sizeof buf, &k);
  if (s == emcp::Status::kWouldBlock) return true;
  if (s != emcp::Status::kOk) return lose();  // QEMU restarted, the cable came out
  last_rx_ = now_ms();
  from_dev_.append(buf, k);
  if (from_dev_.size() > kMaxLine && from_dev_.find('\n') == std::string::npos) {
    log(o_.quiet, "dropped " + std::to_string(from_dev_.size()) + " bytes from the board without a line end");
    from_dev_.clear();
  }
  size_t nl;
  while (fd_ >= 0 && (nl = from_dev_.find('\n')) != std::string::npos) {
    std::string line = from_dev_.substr(0, nl);
    from_dev_.erase(0, nl + 1);
    on_line(line);
  }
  return true;
}

std::string BoardLink::summary() const {
  return std::to_string(resets_) + " board reset(s) seen; at most " + std::to_string(in_flight_peak_) + " of the " +
         std::to_string(window_) + " B window on the way, " + std::to_string(syncs_) + " sync ping(s)";
}

}  // namespace bridge
