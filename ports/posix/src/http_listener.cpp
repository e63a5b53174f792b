#include "emcp/posix/http_listener.h"

#include "address.h"
#include "emcp/posix/platform.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <unistd.h>

EMCP_NS_BEGIN
namespace posix {

namespace {

void set_nonblocking(int fd) {
  const int flags = fcntl(fd, F_GETFL, 0);
  if (flags >= 0) (void)fcntl(fd, F_SETFL, flags | O_NONBLOCK);
}

// Writes all of data within the deadline (a non-blocking socket: waits for POLLOUT). Only the
// 503 answer to a connection refused before it has a slot uses it.
Status send_all(int fd, const char* data, size_t n, uint32_t timeout_ms) {
  const uint64_t deadline = now_ms() + timeout_ms;
  while (n != 0) {
    const ssize_t k = ::send(fd, data, n, MSG_NOSIGNAL);
    if (k > 0) {
      data += k;
      n -= static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      const uint64_t now = now_ms();
      if (now >= deadline) return Status::kWouldBlock;
      pollfd p{fd, POLLOUT, 0};
      const int r = ::poll(&p, 1, static_cast<int>(deadline - now));
      if (r < 0 && errno != EINTR) return Status::kIoError;
      continue;
    }
    return (k < 0 && (errno == EPIPE || errno == ECONNRESET)) ? Status::kClosed : Status::kIoError;
  }
  return Status::kOk;
}

// The peer's address as the engine compares them (IPv4 as ::ffff:a.b.c.d).
transport::PeerAddress peer_address(const sockaddr_storage& from) {
  if (from.ss_family == AF_INET) {
    const auto* v4 = reinterpret_cast<const sockaddr_in*>(&from);
    return transport::PeerAddress::ipv4(reinterpret_cast<const uint8_t*>(&v4->sin_addr.s_addr));
  }
  if (from.ss_family == AF_INET6)
    return transport::PeerAddress::ipv6(reinterpret_cast<const sockaddr_in6*>(&from)->sin6_addr.s6_addr);
  return transport::PeerAddress();
}

}  // namespace

HttpListener::HttpListener(Span<ListenerConn> slots, Span<struct pollfd> fds, Span<uint16_t> who)
    : slots_(slots), fds_(fds), who_(who) {}

HttpListener::~HttpListener() {
  for (ListenerConn& c : slots_) {
    if (c.fd >= 0) ::close(c.fd);
    if (c.closing_fd >= 0) ::close(c.closing_fd);
    c.fd = c.closing_fd = -1;
  }
  if (listen_fd_ >= 0) ::close(listen_fd_);
}

transport::HttpPort HttpListener::port_interface() { return transport::HttpPort::of(this); }

Status HttpListener::listen(const char* address, uint16_t port, int backlog) {
  SocketAddress at;
  if (!at.parse(address, port)) {
    errno = EINVAL;
    return Status::kInvalidArgument;
  }
  const int family = at.family();
  const int fd = ::socket(family, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return Status::kIoError;
  const int one = 1;
  (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (family == AF_INET6) (void)setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &one, sizeof one);
  if (::bind(fd, at.get(), at.len) != 0 || ::listen(fd, backlog) != 0) {
    const int e = errno;
    ::close(fd);
    errno = e;
    return Status::kIoError;
  }
  set_nonblocking(fd);
  sockaddr_storage bound{};
  socklen_t blen = sizeof bound;
  if (getsockname(fd, reinterpret_cast<sockaddr*>(&bound), &blen) == 0) {
    bound_port_ = family == AF_INET ? ntohs(reinterpret_cast<sockaddr_in*>(&bound)->sin_port)
                                    : ntohs(reinterpret_cast<sockaddr_in6*>(&bound)->sin6_port);
  }
  listen_fd_ = fd;
  return Status::kOk;
}

// The engine's HttpPort: accepted connections, by the number the attached engine gave them.
Status HttpListener::port_write(uint16_t conn, const char* data, size_t n, size_t* taken) {
  *taken = 0;
  const int i = slot_of(conn, false);
  return i < 0 ? Status::kClosed : write_slot(static_cast<size_t>(i), data, n, taken);
}

Status HttpListener::port_wait_writable(uint16_t conn, uint32_t timeout_ms) {
  const int i = slot_of(conn, false);
  return i < 0 ? Status::kClosed : wait_slot(static_cast<size_t>(i), timeout_ms);
}

void HttpListener::port_close(uint16_t conn) {
  const int i = slot_of(conn, false);
  if (i >= 0) close_slot(static_cast<size_t>(i));
}

int HttpListener::slot_of(uint16_t conn, bool dialed) const {
  const auto holds = [&](const ListenerConn& c) { return c.fd >= 0 && c.dialed == dialed && c.conn == conn; };
  if (conn < slots_.size() && holds(slots_[conn])) return conn;  // where accept_all() puts it when free
  for (size_t i = 0; i < slots_.size(); ++i)
    if (holds(slots_[i])) return static_cast<int>(i);
  return -1;
}

// Takes what the socket's send buffer takes now; when that is not all, the slot watches for
// POLLOUT and run_once() tells the engine (writable()). A connection still connecting takes
// nothing (its engine hears writable() once it is established).
Status HttpListener::write_slot(size_t i, const char* data, size_t n, size_t* taken) {
  *taken = 0;
  ListenerConn& c = slots_[i];
  if (c.connecting) return Status::kOk;
  while (*taken < n) {
    const ssize_t k = ::send(c.fd, data + *taken, n - *taken, MSG_NOSIGNAL | MSG_DONTWAIT);
    if (k > 0) {
      *taken += static_cast<size_t>(k);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
      c.want_write = true;
      return Status::kOk;
    }
    return (k < 0 && (errno == EPIPE || errno == ECONNRESET)) ? Status::kClosed : Status::kIoError;
  }
  return Status::kOk;
}

// A handler's output waits for the window: poll() on this socket alone (the engine is inside
// one of its calls; nothing else is served meanwhile, which send_timeout_ms bounds). A
// connection still connecting is established by the wait (or has failed: kClosed).
Status HttpListener::wait_slot(size_t i, uint32_t timeout_ms) {
  ListenerConn& c = slots_[i];
  const uint64_t deadline = now_ms() + timeout_ms;
  for (;;) {
    const uint64_t now = now_ms();
    if (now >= deadline) return Status::kWouldBlock;
    pollfd p{c.fd, POLLOUT, 0};
    const int r = ::poll(&p, 1, static_cast<int>(deadline - now));
    if (r < 0 && errno != EINTR) return Status::kIoError;
    if (r > 0 && (p.revents & (POLLERR | POLLHUP | POLLNVAL)) != 0) return Status::kClosed;
    if (r > 0 && (p.revents & POLLOUT) != 0) {
      if (c.connecting) {
        sockaddr_storage peer{};
        socklen_t len = sizeof peer;
        if (::getpeername(c.fd, reinterpret_cast<sockaddr*>(&peer), &len) != 0) return Status::kClosed;
        c.connecting = false;
      }
      return Status::kOk;
    }
  }
}

void HttpListener::close_slot(size_t i) {
  ListenerConn& c = slots_[i];
  if (c.connecting) {  // nothing was sent: nothing to linger for
    ::close(c.fd);
    c.clear();
    return;
  }
  // Linger: the peer reads our last bytes before it sees the end, not a reset. Any slot's
  // lingering place will do; when all are taken, the one closest to its deadline gives way.
  (void)::shutdown(c.fd, SHUT_WR);
  ListenerConn* spot = nullptr;
  for (ListenerConn& x : slots_)
    if (x.closing_fd < 0) {
      spot = &x;
      break;
    }
  if (spot == nullptr) {
    spot = &c;
    for (ListenerConn& x : slots_)
      if (x.closing_until < spot->closing_until) spot = &x;
    ::close(spot->closing_fd);
  }
  spot->closing_fd = c.fd;
  spot->closing_until = now_ms() + linger_ms_;
  c.clear();
}

void HttpListener::drop(uint16_t i) {
  ListenerConn& c = slots_[i];
  const int fd = c.fd;
  const transport::ConnectionHandler handler = c.handler;
  const uint16_t conn = c.conn;
  c.clear();
  handler.closed(conn);
  if (fd >= 0) ::close(fd);
}

void HttpListener::accept_all() {
  for (;;) {
    sockaddr_storage from{};
    socklen_t from_len = sizeof from;
    const int fd = ::accept4(listen_fd_, reinterpret_cast<sockaddr*>(&from), &from_len, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) return;  // EAGAIN (all taken) or an error of that one connection
    const int one = 1;
    (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    const int idx = server_.open(peer_address(from));
    // Its slot: the one of the engine's number when free (port_write finds it at once), else
    // any free one (dialed connections share the slots). None, or a number the engine gave
    // twice: refused.
    ListenerConn* c = nullptr;
    if (idx >= 0 && idx <= 0xFFFF && slot_of(static_cast<uint16_t>(idx), false) < 0) {
      if (static_cast<size_t>(idx) < slots_.size() && slots_[static_cast<size_t>(idx)].fd < 0) c = &slots_[static_cast<size_t>(idx)];
      for (size_t i = 0; c == nullptr && i < slots_.size(); ++i)
        if (slots_[i].fd < 0) c = &slots_[i];
    }
    if (c == nullptr) {
      if (idx >= 0) server_.closed(static_cast<uint16_t>(idx));
      const StrView busy = server_.refusal();
      (void)send_all(fd, busy.data(), busy.size(), 100);
      ::close(fd);
      ++refused_;
      continue;
    }
    c->clear();
    c->fd = fd;
    c->handler = server_;
    c->conn = static_cast<uint16_t>(idx);
    ++accepted_;
  }
}

// Gives the engine what it can take of the connection's read bytes. False: nothing moved.
bool HttpListener::offer(uint16_t i) {
  ListenerConn& c = slots_[i];
  if (c.fd < 0 || c.pending_len == 0 || !c.handler.wants_input(c.conn)) return false;
  const size_t used = c.handler.receive(c.conn, c.buf + c.pending_off, c.pending_len);
  if (c.fd < 0) return true;  // the engine closed it meanwhile
  c.pending_off += static_cast<uint32_t>(used);
  c.pending_len -= static_cast<uint32_t>(used);
  if (c.pending_len == 0) c.pending_off = 0;
  return used != 0;
}

void HttpListener::read_conn(uint16_t i) {
  ListenerConn& c = slots_[i];
  for (int rounds = 0; rounds < 16 && c.fd >= 0 && c.pending_len == 0 && c.handler.wants_input(c.conn); ++rounds) {
    const ssize_t k = ::recv(c.fd, c.buf, sizeof c.buf, 0);
    if (k > 0) {
      c.pending_off = 0;
      c.pending_len = static_cast<uint32_t>(k);
      (void)offer(i);
      continue;
    }
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    // End of stream or error: the connection is over.
    drop(i);
    return;
  }
}

void HttpListener::linger(ListenerConn& c, uint64_t now) {
  if (c.closing_fd < 0) return;
  char sink[4096];
  for (;;) {
    const ssize_t k = ::recv(c.closing_fd, sink, sizeof sink, 0);
    if (k > 0) continue;
    if (k < 0 && errno == EINTR) continue;
    if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK) && now < c.closing_until) return;
    break;
  }
  ::close(c.closing_fd);
  c.closing_fd = -1;
}

Status HttpListener::run_once(int timeout_ms) {
  if (listen_fd_ >= 0 && !server_.valid()) return Status::kInvalidState;
  // Bytes waiting from earlier rounds go first (the engine may take them now).
  bool waiting = false;
  for (size_t i = 0; i < slots_.size(); ++i) {
    (void)offer(static_cast<uint16_t>(i));
    const ListenerConn& c = slots_[i];
    waiting = waiting || (c.fd >= 0 && c.pending_len != 0 && c.handler.wants_input(c.conn));
  }
  pollfd* const fds = fds_.data();
  uint16_t* const who = who_.data();
  size_t n = 0;
  // poll() skips a negative descriptor: a listener that only dials has no listening socket.
  fds[n++] = pollfd{listen_fd_, POLLIN, 0};
  const size_t wake = n;
  if (wake_fd_ >= 0 && n < fds_.size()) fds[n++] = pollfd{wake_fd_, POLLIN, 0};
  const size_t first = n;  // the connections' entries
  for (size_t i = 0; i < slots_.size() && n + 2 <= fds_.size(); ++i) {
    ListenerConn& c = slots_[i];
    const short out = c.want_write ? POLLOUT : 0;
    if (c.fd >= 0 && c.connecting) {
      who[n] = static_cast<uint16_t>(i);
      fds[n++] = pollfd{c.fd, POLLOUT, 0};  // established, refused or unreachable
    } else if (c.fd >= 0 && c.pending_len == 0 && c.handler.wants_input(c.conn)) {
      who[n] = static_cast<uint16_t>(i);
      fds[n++] = pollfd{c.fd, static_cast<short>(POLLIN | out), 0};
    } else if (c.fd >= 0) {
      // Not reading it now (an answer still streams, or bytes wait): a hang-up must still end
      // its streams. After a half-close only errors and full hang-ups are watched.
      who[n] = static_cast<uint16_t>(i);
      fds[n++] = pollfd{c.fd, static_cast<short>((c.peer_done ? 0 : POLLRDHUP) | out), 0};
    }
    if (c.closing_fd >= 0) {
      who[n] = static_cast<uint16_t>(0x8000 | i);
      fds[n++] = pollfd{c.closing_fd, POLLIN, 0};
    }
  }
  const int r = ::poll(fds, static_cast<nfds_t>(n), waiting ? 0 : timeout_ms);
  if (r < 0 && errno != EINTR) return Status::kIoError;
  const uint64_t now = now_ms();
  if (r > 0) {
    // The connections' events first: slots of peers that hung up are free before new
    // connections are taken (or refused busy when there is no slot).
    if (first > wake && (fds[wake].revents & POLLIN) != 0) clear_wake();  // server_.poll() below runs what was posted
    for (size_t k = first; k < n; ++k) {
      if (fds[k].revents == 0) continue;
      if ((who[k] & 0x8000) != 0) {
        linger(slots_[who[k] & 0x7FFF], now);
        continue;
      }
      const uint16_t i = who[k];
      ListenerConn& c = slots_[i];
      if (c.fd != fds[k].fd) continue;  // closed and maybe reused this round
      if (c.connecting) {
        finish_connect(i);
        continue;
      }
      if ((fds[k].revents & POLLOUT) != 0 && c.want_write) {
        c.want_write = false;
        c.handler.writable(c.conn);  // the engine goes on with its output (and may close the slot)
        if (c.fd != fds[k].fd) continue;
      }
      if ((fds[k].events & POLLIN) == 0) {
        // A connection we are not reading. The peer's end with nothing left to take: gone (a
        // client that left an open stream). With bytes still waiting: a half-close; finish them.
        if ((fds[k].revents & (POLLRDHUP | POLLHUP | POLLERR)) == 0) continue;
        int unread = 0;
        const bool hangup = (fds[k].revents & (POLLHUP | POLLERR)) != 0;
        if (!hangup && (c.pending_len != 0 || (ioctl(c.fd, FIONREAD, &unread) == 0 && unread > 0))) {
          c.peer_done = true;
          continue;
        }
        drop(i);
        continue;
      }
      if ((fds[k].revents & (POLLIN | POLLHUP | POLLERR)) != 0) read_conn(i);
    }
    if ((fds[0].revents & POLLIN) != 0) accept_all();
  }
  for (ListenerConn& c : slots_)
    if (c.closing_fd >= 0 && now >= c.closing_until) linger(c, now);
  if (server_.valid()) server_.poll();
  return Status::kOk;
}

}  // namespace posix
EMCP_NS_END
