// tools/bridge/http_gateway.cpp - emcp-bridge --http PORT: serves a UART-only board (or QEMU's
// serial port on TCP) to network MCP clients as Streamable HTTP on the host. Each HTTP
// request's JSON-RPC message goes to the board as one line; the board's answer comes back on
// the request's own response. gateway.h maps the files; docs/gateway.md says what a client sees.
//
// This file is the listener: the listening socket and the options, accepting, reading, writing
// and dropping connections, the timeouts of connections, and the poll() loop. One loop,
// non-blocking sockets, the board's fd too, a bounded number of connections: a slow client
// never stalls the board (its output waits in its own buffer, bounded by kMaxOut, and it is
// dropped after HttpOptions::send_timeout_ms without progress).
//
// Security: the engine's options as flags: --allow-host, --allow-origin (403), --cors-origin /
//   --no-cors (preflight 204 before authorization, CORS headers on the answers), --bearer-token
//   (401 with WWW-Authenticate resource_metadata, the RFC 9728 document at
//   /.well-known/oauth-protected-resource[/mcp]); --listen 127.0.0.1 by default: any other
//   address only when named. Timeouts and limits as the engine's options say: 408 for a slow head
//   or body, keepalive_ms, send_timeout_ms, heartbeat_ms; --max-connections (the longest idle
//   keep-alive connection makes room, else 503 and close; the engine's fair shares per peer
//   are not done here).
#include "http_gateway.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "emcp/posix/fd.h"
#include "emcp/posix/platform.h"
#include "gateway.h"

namespace bridge {
namespace gateway {

namespace {

using emcp::posix::now_ms;

// Gateway::local_: the posix port's clock and random bytes, and no log (it keeps quiet).
constexpr emcp::mcp::ServerInfo kLocalInfo("emcp-bridge", "1");
constexpr emcp::Platform kLocalPlatform{&emcp::posix::now_ms, &emcp::posix::random_bytes, nullptr};

}  // namespace

Gateway::Gateway(const LinkOptions& lo, const GatewayOptions& o)
    : lo_(lo), o_(o), link_(make_link(lo, *this)), local_(kLocalInfo, kLocalPlatform) {}

// ---- Set-up -------------------------------------------------------------------------------------

bool Gateway::setup() {
  for (const std::string& s : o_.allow_hosts) hosts_.push_back(s.c_str());
  for (const std::string& s : o_.allow_origins) origins_.push_back(s.c_str());
  for (const std::string& s : o_.cors_origins) cors_.push_back(s.c_str());
  http_.allowed_hosts = emcp::Span<const char* const>(hosts_.data(), hosts_.size());
  http_.allowed_origins = emcp::Span<const char* const>(origins_.data(), origins_.size());
  http_.cors_origins = emcp::Span<const char* const>(cors_.data(), cors_.size());
  http_.cors = o_.cors;
  if (o_.max_body != 0) http_.max_body = o_.max_body;

  char rnd[9];
  wire_prefix_ = std::string("gw-") + (random_hex(rnd, 4) ? rnd : std::to_string(now_ms() & 0xffffffu).c_str()) + "-";
  // An IPv6 literal may come in brackets ("[::1]"): getaddrinfo() takes it without.
  std::string laddr = o_.listen;
  if (laddr.size() > 2 && laddr.front() == '[' && laddr.back() == ']') laddr = laddr.substr(1, laddr.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(laddr.c_str(), std::to_string(o_.port).c_str(), &hints, &res) != 0 || res == nullptr) {
    log("--listen " + o_.listen + ": not a numeric address");
    return false;
  }
  listen_fd_ = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (listen_fd_ < 0 || bind(listen_fd_, res->ai_addr, res->ai_addrlen) != 0 || listen(listen_fd_, 64) != 0) {
    log("cannot listen on " + o_.listen + ":" + std::to_string(o_.port) + ": " + strerror(errno));
    freeaddrinfo(res);
    return false;
  }
  freeaddrinfo(res);
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(sa.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&sa)->sin_port);
  // An IPv6 literal in a URI: in brackets, a zone's '%' as "%25" (RFC 6874).
  std::string host = laddr;
  if (host.find(':') != std::string::npos) {
    const size_t pct = host.find('%');
    if (pct != std::string::npos) host.replace(pct, 1, "%25");
    host = "[" + host + "]";
  }

  if (!o_.bearer_tokens.empty()) {
    // A wildcard address names no host a client can use: the first --allow-host name, else
    // localhost (--resource says otherwise).
    std::string rhost = host;
    if (laddr == "0.0.0.0" || laddr == "::") {
      rhost = "localhost";
      for (const std::string& h : o_.allow_hosts)
        if (h != "*") {
          rhost = h;
          break;
        }
      if (o_.resource.empty())
        log("--listen " + laddr + " with --bearer-token and no --resource: the resource is http://" + rhost + ":" +
            std::to_string(port_) + "/mcp (name the real one with --resource)");
    }
    resource_ = o_.resource.empty() ? "http://" + rhost + ":" + std::to_string(port_) + "/mcp" : o_.resource;
    for (const std::string& t : o_.bearer_tokens) {
      emcp::auth::StaticToken st;
      st.token = t.c_str();
      tokens_.push_back(st);
    }
    auth_config_.resource = resource_.c_str();
    auth_config_.static_tokens = emcp::Span<const emcp::auth::StaticToken>(tokens_.data(), tokens_.size());
    if (auth_.start(auth_config_, local_) != emcp::Status::kOk) {
      log("--bearer-token/--resource: the resource server cannot work with these (resource URI too long?)");
      return false;
    }
    http_.auth = auth_.hooks();
  }
  conns_.resize(static_cast<size_t>(o_.max_connections));
  // The line tests and scripts wait for.
  fprintf(stderr, "[emcp-bridge] serving MCP on http://%s:%d/mcp (the board: %s)\n", host.c_str(), port_,
          !lo_.serial.empty()     ? lo_.serial.c_str()
          : !lo_.mqtt_host.empty() ? ("mqtt://" + lo_.mqtt_host + ":" + std::to_string(lo_.mqtt_port) + ", device " +
                                      (lo_.mqtt_name.empty() ? std::string("#") : lo_.mqtt_name)).c_str()
                                   : (lo_.host + ":" + std::to_string(lo_.port)).c_str());
  return true;
}

// ---- Connections --------------------------------------------------------------------------------

size_t Gateway::slot_of(const Conn& c) const {
  for (size_t i = 0; i < conns_.size(); ++i)
    if (conns_[i].get() == &c) return i;
  return 0;
}

void Gateway::accept_all() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // No fd for it: the listener stays readable; stop polling it for a while.
        accept_pause_until_ = now_ms() + 200;
        log(std::string("http: accept: ") + strerror(errno) + "; pausing for 200 ms");
      }
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    size_t slot = conns_.size();
    for (size_t i = 0; i < conns_.size(); ++i)
      if (!conns_[i]) {
        slot = i;
        break;
      }
    if (slot == conns_.size()) {
      // Every slot busy: the keep-alive connection idle the longest makes room (as the engine).
      size_t idlest = conns_.size();
      for (size_t i = 0; i < conns_.size(); ++i)
        if (conns_[i]->st == Conn::St::kIdle && conns_[i]->in.empty() && conns_[i]->out.empty() &&
            (idlest == conns_.size() || conns_[i]->last_ms < conns_[idlest]->last_ms))
          idlest = i;
      if (idlest == conns_.size()) {
        // A new socket's buffer takes the short answer whole.
        const emcp::StrView busy = emcp::transport::busy_response();
        (void)emcp::posix::write_all(fd, busy.data(), busy.size());
        close(fd);
        log("http: every connection busy: 503");
        continue;
      }
      drop(idlest, "all connections busy; closing the longest idle one");
      slot = idlest;
    }
    conns_[slot].reset(new Conn);
    Conn& c = *conns_[slot];
    c.fd = fd;
    c.serial = ++serial_;
    c.parser.set_max_body(http_.max_body);
    c.last_ms = c.started_ms = now_ms();
  }
}

void Gateway::drop(size_t i, const char* why) {
  if (!conns_[i]) return;
  Conn& c = *conns_[i];
  if (why != nullptr) log(std::string("http: connection dropped: ") + why);
  // Its requests: a 2026-07-28 one is cancelled (closing its response is cancellation); the
  // session's go on on the board, their answers dropped, or kept for the client's GET with
  // Last-Event-ID when their stream is resumable (gateway_streams.cpp).
  detach_stream(i, c.serial);
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.conn == i && it->second.serial == c.serial && it->second.stream == 0) {
      if (!it->second.session) cancel_on_board(it->first, "the HTTP client closed its response");
      if (it->second.initialize && session_ == SessionState::kOpening) session_ = SessionState::kNone;
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  if (get_conn_ == static_cast<int>(i) && get_serial_ == c.serial) get_conn_ = -1;
  close(c.fd);
  conns_[i].reset();
}

// Writes what the socket takes now (never blocks: the rest waits for POLLOUT, or tick()).
void Gateway::flush(Conn& c) {
  while (!c.out.empty()) {
    const ssize_t k = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    c.out.erase(0, static_cast<size_t>(k));
    c.out_ms = now_ms();
  }
  if (c.out.empty()) c.out_ms = 0;  // set again when output waits (tick())
}

void Gateway::on_input(size_t i) {
  Conn& c = *conns_[i];
  char buf[16384];
  size_t k = 0;
  const emcp::Status s = emcp::posix::read_some(c.fd, buf, sizeof buf, &k);
  if (s == emcp::Status::kWouldBlock) return;
  if (s != emcp::Status::kOk) return drop(i, nullptr);
  c.in.append(buf, k);
  c.last_ms = now_ms();
  process(i);
}

// Feeds the parser while the connection takes requests; the rest waits in `in` (pipelining).
void Gateway::process(size_t i) {
  if (link_->resetting()) return;  // run(): held until the board is back
  while (conns_[i]) {
    Conn& c = *conns_[i];
    if (c.st != Conn::St::kIdle && c.st != Conn::St::kRequest) return;
    if (c.st == Conn::St::kIdle) {
      if (c.in.empty()) return;
      c.st = Conn::St::kRequest;
      c.started_ms = now_ms();
    }
    size_t used = 0;
    const emcp::http::RequestParser::Event e = c.parser.push(c.in.data(), c.in.size(), &used);
    // The body piece is a view into `in`: used before `in` moves on.
    struct Consume {
      std::string& in;
      size_t n;
      ~Consume() { in.erase(0, n); }
    };
    const Consume consume{c.in, used};
    switch (e) {
      case emcp::http::RequestParser::Event::kNeedInput:
        return;  // every byte given is used
      case emcp::http::RequestParser::Event::kHead:
        on_head(c);
        break;
      case emcp::http::RequestParser::Event::kBody:
        if (c.refuse == 0 && c.body.size() + c.parser.body().size() <= http_.max_body)
          c.body.append(c.parser.body().data(), c.parser.body().size());
        break;
      case emcp::http::RequestParser::Event::kDone:
        on_done(c);
        break;
      case emcp::http::RequestParser::Event::kError:
        c.keep_alive = false;
        c.cors = false;
        c.extra.clear();
        answer_text(c, c.parser.error_status(), c.parser.error_reason());
        c.in.clear();
        return;
    }
  }
}

// ---- Time ---------------------------------------------------------------------------------------

void Gateway::tick() {
  const uint64_t now = now_ms();
  tick_conns(now);
  expire_requests(now);
  expire_idle_session(now);
  if (reset_due_ && session_ == SessionState::kNone && link_->ready() && !link_->resetting()) {
    bool modern = false;
    for (const auto& kv : pending_) modern = modern || !kv.second.session;
    if (!modern) reset_board_session();
  }
}

// Output that waits (send_timeout_ms, kMaxOut), slow heads and bodies (408), idle keep-alive
// connections, heartbeats on quiet event streams.
void Gateway::tick_conns(uint64_t now) {
  for (size_t i = 0; i < conns_.size(); ++i) {
    if (!conns_[i]) continue;
    Conn& c = *conns_[i];
    if (!c.out.empty()) {
      if (c.out_ms == 0) c.out_ms = now;  // output began to wait
      flush(c);
      if (!c.out.empty() && (now - c.out_ms > http_.send_timeout_ms || c.out.size() > kMaxOut)) {
        drop(i, "its peer stopped reading (send_timeout_ms)");
        continue;
      }
      if (!c.out.empty()) continue;
    }
    if (c.st == Conn::St::kClosing) {
      drop(i, nullptr);
      continue;
    }
    if (c.st == Conn::St::kRequest) {
      const bool in_body = c.parser.in_body();
      const bool slow_head = !in_body && now - c.started_ms > http_.head_timeout_ms;
      const bool slow_body = in_body && now - c.last_ms > http_.body_timeout_ms;
      if (slow_head || slow_body) {
        c.keep_alive = false;
        c.extra.clear();
        c.cors = false;
        answer_text(c, 408, slow_head ? "Request Timeout: request head too slow" : "Request Timeout: body too slow");
        flush(c);
      }
    } else if (c.st == Conn::St::kIdle) {
      if (now - c.last_ms > http_.keepalive_ms) drop(i, nullptr);
    } else if (c.sse && c.head_sent && http_.heartbeat_ms != 0 && now - c.last_ms > http_.heartbeat_ms) {
      // A comment line: proxies and clients see a live stream.
      c.out += c.chunked ? "3\r\n:\n\n\r\n" : ":\n\n";
      c.last_ms = now;
      flush(c);
    }
  }
}

// ---- The loop -----------------------------------------------------------------------------------

int Gateway::run() {
  if (!setup()) return 1;
  if (!link_->start()) return 1;
  std::vector<pollfd> fds;
  while (!stop_requested()) {
    if (!link_->tick()) return 1;
    fds.clear();
    const bool accepting = now_ms() >= accept_pause_until_;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    fds.push_back({link_->fd(), static_cast<short>(POLLIN | (link_->wants_write() ? POLLOUT : 0)), 0});
    // While a lost board connection is being replaced, what clients send waits (unread, or
    // unparsed): it must not be failed with what was in flight, nor reach the new board late.
    const bool hold = link_->resetting();
    for (const auto& c : conns_) {
      if (!c) {
        fds.push_back({-1, 0, 0});
        continue;
      }
      short ev = 0;
      if (!hold && c->in.size() < http_.max_body + 65536u) ev |= POLLIN;  // bounded read-ahead
      if (!c->out.empty()) ev |= POLLOUT;
      fds.push_back({c->fd, ev, 0});
    }
    const int r = poll(fds.data(), fds.size(), 100);
    if (r < 0 && errno != EINTR) return 1;
    if (r < 0) continue;
    if (fds[1].revents & POLLOUT) {
      if (!link_->flush()) return 1;
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (!link_->on_readable()) return 1;
    }
    for (size_t i = 0; i < conns_.size(); ++i) {
      if (!conns_[i]) continue;
      const short re = fds[i + 2].revents;
      if (re & POLLOUT) flush(*conns_[i]);
      if (re & (POLLIN | POLLHUP | POLLERR)) on_input(i);
      if (conns_[i] && conns_[i]->st == Conn::St::kIdle && !conns_[i]->in.empty()) process(i);
      if (conns_[i] && !conns_[i]->out.empty()) flush(*conns_[i]);
    }
    if (fds[0].revents & POLLIN) accept_all();
    tick();
  }
  log("stopped; " + std::to_string(link_->resets()) + " board reset(s) seen");
  return 0;
}

}  // namespace gateway

int run_gateway(const LinkOptions& link, const GatewayOptions& o) {
  catch_stop_signals();
  static gateway::Gateway g(link, o);  // large: static storage
  return g.run();
}

}  // namespace bridge
