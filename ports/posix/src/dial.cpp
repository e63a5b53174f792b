// HttpListener's outbound side (http_listener.h: dialer()): resolving, the non-blocking connect
// and its end. Once established, a dialed connection is a slot like an accepted one, served by
// run_once() in http_listener.cpp.
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "address.h"
#include "emcp/posix/http_listener.h"

EMCP_NS_BEGIN
namespace posix {

namespace {

// Where to connect: the first address, and the first one of the other family (tried when the
// first fails).
struct Target {
  SocketAddress first;
  SocketAddress other;
};

// A literal is parsed here (no heap); a name goes to getaddrinfo. kNotFound: the name does not
// resolve; kIoError: the resolver itself failed.
Status resolve(const char* host, uint16_t port, Target* t) {
  if (t->first.parse(host, port)) return Status::kOk;
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_protocol = IPPROTO_TCP;
  addrinfo* list = nullptr;
  const int r = ::getaddrinfo(host, nullptr, &hints, &list);
  if (r == EAI_SYSTEM || r == EAI_MEMORY) return Status::kIoError;
  if (r != 0) return Status::kNotFound;
  for (const addrinfo* a = list; a != nullptr && t->other.len == 0; a = a->ai_next) {
    if (a->ai_family != AF_INET && a->ai_family != AF_INET6) continue;
    if (t->first.len == 0) (void)t->first.set(a->ai_addr, a->ai_addrlen, port);
    else if (a->ai_family != t->first.family()) (void)t->other.set(a->ai_addr, a->ai_addrlen, port);
  }
  ::freeaddrinfo(list);
  return t->first.len != 0 ? Status::kOk : Status::kNotFound;
}

}  // namespace

transport::Dialer HttpListener::dialer() {
  transport::Dialer d;
  d.dial = [](void* ctx, const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler handler) {
    return static_cast<HttpListener*>(ctx)->dial(host, port, conn, handler);
  };
  d.port.write = [](void* ctx, uint16_t conn, const char* data, size_t n, size_t* taken) {
    auto* self = static_cast<HttpListener*>(ctx);
    *taken = 0;
    const int i = self->slot_of(conn, true);
    return i < 0 ? Status::kClosed : self->write_slot(static_cast<size_t>(i), data, n, taken);
  };
  d.port.wait_writable = [](void* ctx, uint16_t conn, uint32_t timeout_ms) {
    auto* self = static_cast<HttpListener*>(ctx);
    const int i = self->slot_of(conn, true);
    return i < 0 ? Status::kClosed : self->wait_slot(static_cast<size_t>(i), timeout_ms);
  };
  d.port.close = [](void* ctx, uint16_t conn) {
    auto* self = static_cast<HttpListener*>(ctx);
    const int i = self->slot_of(conn, true);
    if (i >= 0) self->close_slot(static_cast<size_t>(i));
  };
  d.port.ctx = this;
  d.ctx = this;
  return d;
}

Status HttpListener::dial(const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler handler) {
  if (host == nullptr || !handler.valid() || slot_of(conn, true) >= 0) return Status::kInvalidArgument;
  // The highest free slot: the low ones are where accepted connections go first (slot_of).
  size_t i = slots_.size();
  while (i > 0 && slots_[i - 1].fd >= 0) --i;
  if (i == 0) return Status::kNoSpace;
  --i;
  Target t;
  const Status s = resolve(host, port, &t);
  if (s != Status::kOk) return s;
  ListenerConn& c = slots_[i];
  c.clear();
  c.handler = handler;
  c.conn = conn;
  c.dialed = true;
  c.fallback = t.other.addr;
  c.fallback_len = t.other.len;
  if (connect_slot(i, t.first.get(), t.first.len)) return Status::kOk;
  // No socket for the first address's family: the other one, else nothing at all.
  if (c.fd < 0 && c.fallback_len != 0) {
    c.fallback_len = 0;
    if (connect_slot(i, t.other.get(), t.other.len) || c.fd >= 0) return Status::kOk;
  }
  if (c.fd >= 0) return Status::kOk;  // refused at once: run_once() reports it (closed())
  const int e = errno;
  c.clear();
  errno = e;
  return Status::kIoError;
}

// A socket for slot i, connecting. False when the connect failed at once: the slot keeps the
// socket (poll() reports it at once, finish_connect() tries the fallback or says closed()),
// or has none when the socket itself could not be made (fd -1, errno kept).
bool HttpListener::connect_slot(size_t i, const sockaddr* addr, uint32_t len) {
  ListenerConn& c = slots_[i];
  const int fd = ::socket(addr->sa_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
  c.fd = fd;
  c.connecting = true;
  if (fd < 0) return false;
  const int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  int r;
  do {
    r = ::connect(fd, addr, static_cast<socklen_t>(len));
  } while (r != 0 && errno == EINTR);
  // 0 (established at once) and EINPROGRESS alike: POLLOUT tells run_once().
  return r == 0 || errno == EINPROGRESS;
}

void HttpListener::finish_connect(uint16_t i) {
  ListenerConn& c = slots_[i];
  int err = 0;
  socklen_t err_len = sizeof err;
  sockaddr_storage peer{};
  socklen_t peer_len = sizeof peer;
  // A connect that failed at once has no pending error left: no peer then is the failure too.
  const bool up = ::getsockopt(c.fd, SOL_SOCKET, SO_ERROR, &err, &err_len) == 0 && err == 0 &&
                  ::getpeername(c.fd, reinterpret_cast<sockaddr*>(&peer), &peer_len) == 0;
  if (up) {
    c.connecting = false;
    c.handler.writable(c.conn);
    return;
  }
  if (c.fallback_len != 0) {
    ::close(c.fd);
    const uint32_t len = c.fallback_len;
    c.fallback_len = 0;
    if (connect_slot(i, reinterpret_cast<const sockaddr*>(&c.fallback), len) || c.fd >= 0) return;
  }
  drop(i);  // (with no socket when none could be made for the fallback)
}

}  // namespace posix
EMCP_NS_END
