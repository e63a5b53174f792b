// emcp/posix/http_listener.h - BSD sockets for emcp::transport::HttpServer: a non-blocking
// listener driven by poll(2).
//
// The listener accepts connections (TCP_NODELAY, non-blocking), hands their bytes to the
// engine and sends what the engine writes. It owns no protocol logic. Bounded everything:
//   - each accepted connection is opened in the engine with its peer's address (the engine's
//     per-peer shares, docs/http.md "Under attack"); one the engine has no slot for is
//     answered 503 and closed;
//   - writes never block: the socket takes what it can, the engine keeps the rest and is told
//     when the socket is writable again (POLLOUT); a handler's output that must wait for the
//     window waits in poll() on that socket, at most HttpOptions::send_timeout_ms;
//   - bytes the engine cannot take yet (a pipelined request while an answer still streams) wait
//     in the connection's fixed read buffer, and the socket is not read meanwhile;
//   - closed connections linger (shutdown, then reading until EOF or linger_ms) so the client
//     gets the last answer instead of a reset;
//   - a peer that half-closes (shuts down its sending side) after its requests still gets their
//     answers; one that hangs up on an open stream is noticed at once (POLLRDHUP) and its streams
//     end.
//
// Context: one thread runs run_once() in a loop; the HttpServer and its mcp::Server belong to it.
//
// Example:
//   emcp::posix::StaticHttpListener<8> net;
//   static emcp::transport::StaticHttpServer<8> http(server, options, net.port_interface());
//   if (net.listen("127.0.0.1", 8080) != emcp::Status::kOk) return 1;
//   net.attach(http.handler());
//   for (;;) net.run_once(100);
#ifndef EMCP_POSIX_HTTP_LISTENER_H
#define EMCP_POSIX_HTTP_LISTENER_H

#include <poll.h>
#include <stddef.h>
#include <stdint.h>

#include "emcp/transport/connection.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace posix {

/// Per-connection state of the listener (declare through StaticHttpListener<>).
struct ListenerConn {
  int fd = -1;             ///< the socket (-1: free)
  int closing_fd = -1;     ///< a socket lingering after close (any slot's)
  uint64_t closing_until = 0;
  bool peer_done = false;  ///< the peer finished sending (half-close) but has bytes to be taken
  bool want_write = false; ///< the socket took less than offered: the engine waits for POLLOUT
  uint32_t pending_off = 0;
  uint32_t pending_len = 0;  ///< read bytes the engine has not taken yet
  char buf[8192];
};

class HttpListener {
 public:
  /// `slots` must have at least as many entries as the HttpServer has connections; `fds` and
  /// `who` hold 2 * slots + 2 entries (the poll set: the listening socket, the wake
  /// descriptor, each connection and its lingering predecessor).
  HttpListener(Span<ListenerConn> slots, Span<struct pollfd> fds, Span<uint16_t> who);
  ~HttpListener();
  HttpListener(const HttpListener&) = delete;
  HttpListener& operator=(const HttpListener&) = delete;

  /// The callbacks for HttpServer's constructor.
  transport::HttpPort port_interface();
  /// Binds and listens on `address` (IPv4 or IPv6 literal; "127.0.0.1" is the safe default)
  /// and `port` (0: any free port, see bound_port()). kIoError with errno kept on failure.
  Status listen(const char* address, uint16_t port, int backlog = 64);
  uint16_t bound_port() const { return bound_port_; }
  /// What to serve (before run_once()): the engine's handler(), or a layer's in front of it
  /// (emcp::mbedtls::TlsLayer for HTTPS).
  void attach(transport::ConnectionHandler handler) { server_ = handler; }

  /// A descriptor run_once() also waits on (posix::wake_fd(): another thread posted to the
  /// server's inbox); when it is readable, posix::clear_wake() empties it. -1: none.
  void set_wake_fd(int fd) { wake_fd_ = fd; }
  /// Waits up to `timeout_ms` for activity, serves it, and runs the engine's poll().
  /// Returns kIoError when poll() itself fails.
  Status run_once(int timeout_ms);

  uint64_t accepted() const { return accepted_; }
  uint64_t refused() const { return refused_; }

 private:
  // The HttpPort this object offers (port_interface(): HttpPort::of).
  friend struct transport::HttpPort;
  Status port_write(uint16_t conn, const char* data, size_t n, size_t* taken);
  Status port_wait_writable(uint16_t conn, uint32_t timeout_ms);
  void port_close(uint16_t conn);
  void accept_all();
  void read_conn(uint16_t i);
  /// The peer is gone: frees slot i, tells the engine, closes the descriptor.
  void drop(uint16_t i);
  bool offer(uint16_t i);
  void linger(ListenerConn& c, uint64_t now);

  Span<ListenerConn> slots_;
  Span<struct pollfd> fds_;
  Span<uint16_t> who_;
  transport::ConnectionHandler server_;
  int listen_fd_ = -1;
  int wake_fd_ = -1;
  uint16_t bound_port_ = 0;
  uint32_t linger_ms_ = 2000;
  uint64_t accepted_ = 0;
  uint64_t refused_ = 0;
};

/// A listener for up to N connections.
template <size_t N>
class StaticHttpListener : public HttpListener {
 public:
  StaticHttpListener()
      : HttpListener(Span<ListenerConn>(slots_, N), Span<struct pollfd>(fds_, 2 * N + 2),
                     Span<uint16_t>(who_, 2 * N + 2)) {}

 private:
  ListenerConn slots_[N];
  struct pollfd fds_[2 * N + 2];
  uint16_t who_[2 * N + 2];
};

}  // namespace posix
EMCP_NS_END

#endif  // EMCP_POSIX_HTTP_LISTENER_H
