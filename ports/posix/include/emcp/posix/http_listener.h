// emcp/posix/http_listener.h - BSD sockets for emcp::transport::HttpServer and for engines that
// dial out (the MQTT client, to its broker): one non-blocking socket loop driven by poll(2).
//
// The listener accepts connections (TCP_NODELAY, non-blocking), hands their bytes to the
// engine and sends what the engine writes. It owns no protocol logic. Its slots hold accepted
// and dialed connections alike (dialer(): transport::Dialer), each with the handler it reports
// to and that engine's own number for it, so one loop serves HTTP and keeps the connection to
// a broker; a device that only dials out never calls listen(). Bounded everything:
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
//     end;
//   - a dialed connection is connected without blocking (only resolving a name may block, in
//     getaddrinfo); from then on it is served exactly as an accepted one, through the same
//     slots, buffers and rules.
//
// Context: one thread runs run_once() in a loop; the HttpServer and its mcp::Server, and every
// engine that dials through dialer(), belong to it.
//
// Example:
//   emcp::posix::StaticHttpListener<8> net;
//   static emcp::transport::StaticHttpServer<8> http(server, options, net.port_interface());
//   if (net.listen("127.0.0.1", 8080) != emcp::Status::kOk) return 1;
//   net.attach(http.handler());
//   for (;;) net.run_once(100);
#ifndef EMCP_POSIX_HTTP_LISTENER_H
#define EMCP_POSIX_HTTP_LISTENER_H

#include <netinet/in.h>
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
  transport::ConnectionHandler handler;  ///< whom its events go to (the attached engine, or a dialer's)
  uint16_t conn = 0;       ///< that engine's number for it
  bool dialed = false;     ///< opened by dialer().dial(), not accepted
  bool connecting = false; ///< dialed, not established yet (POLLOUT ends it)
  bool peer_done = false;  ///< the peer finished sending (half-close) but has bytes to be taken
  bool want_write = false; ///< the socket took less than offered: the engine waits for POLLOUT
  /// A dialed connection's other address, tried when the first fails (a name with both an IPv6
  /// and an IPv4 address: "localhost" to a server on 127.0.0.1 only). fallback_len 0: none.
  uint32_t fallback_len = 0;
  struct sockaddr_in6 fallback{};
  uint32_t pending_off = 0;
  uint32_t pending_len = 0;  ///< read bytes the engine has not taken yet
  char buf[8192];

  /// Holds no connection any more (its descriptor is closed or lingers; a lingering socket of
  /// any slot's stays where it is).
  void clear() {
    fd = -1;
    handler = transport::ConnectionHandler();
    conn = 0;
    dialed = connecting = peer_done = want_write = false;
    fallback_len = 0;
    pending_len = pending_off = 0;
  }
};

class HttpListener {
 public:
  /// `slots` must have at least as many entries as the HttpServer has connections, plus the
  /// connections dialed through dialer() (they share the slots); `fds` and
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
  /// (emcp::mbedtls::TlsLayer for HTTPS). Its poll() runs at the end of every run_once().
  /// Needed once listen() was called; a listener that only dials may go without.
  void attach(transport::ConnectionHandler handler) { server_ = handler; }

  /// How an engine opens connections of its own through this listener's loop and slots
  /// (transport::Dialer; valid as long as the listener). dial(host, port, conn, handler):
  ///   - `host`: an IPv4 or IPv6 literal (parsed here, no heap) or a name (getaddrinfo, which
  ///     may block briefly and uses the C library's own heap, outside emcp's objects); the
  ///     first address is tried, then the first of the other family, if any;
  ///   - kOk: connecting; `handler`.writable(conn) once established (writes take 0 bytes
  ///     before), receive(conn, ...) as wants_input(conn) allows, closed(conn) when the
  ///     connect fails (refused, unreachable) or the connection ends; a connect that hangs
  ///     lasts as long as the kernel's SYN retries, unless the engine closes it first;
  ///   - kInvalidArgument: no host or handler, or `conn` already names a dialed connection
  ///     here; kNoSpace: no free slot; kNotFound: the name does not resolve; kIoError: no
  ///     socket (errno kept). Nothing is reported for `conn` after an error.
  /// The engine does its periodic work itself (its poll(): this listener only polls the
  /// handler given to attach(), which may be that engine's when the listener only dials).
  ///
  ///   transport::Dialer d = net.dialer();
  ///   if (d.dial(d.ctx, "broker.local", 1883, 0, mqtt_handler) != Status::kOk) retry_later();
  ///   d.port.write(d.port.ctx, 0, bytes, n, &taken);   // after writable(0)
  transport::Dialer dialer();

  /// A descriptor run_once() also waits on (posix::wake_fd(): another thread posted to the
  /// server's inbox); when it is readable, posix::clear_wake() empties it. -1: none.
  void set_wake_fd(int fd) { wake_fd_ = fd; }
  /// Waits up to `timeout_ms` for activity, serves it (accepted and dialed connections), and
  /// runs the attached handler's poll(). Returns kIoError when poll() itself fails, and
  /// kInvalidState when listening with no handler attached.
  Status run_once(int timeout_ms);

  uint64_t accepted() const { return accepted_; }
  uint64_t refused() const { return refused_; }

 private:
  // The HttpPort this object offers (port_interface(): HttpPort::of).
  friend struct transport::HttpPort;
  Status port_write(uint16_t conn, const char* data, size_t n, size_t* taken);
  Status port_wait_writable(uint16_t conn, uint32_t timeout_ms);
  void port_close(uint16_t conn);
  // Slot-level I/O, behind both the engine's port (accepted connections, by the number the
  // attached engine gave them) and the dialer's (dialed ones, by the dialing engine's number).
  Status write_slot(size_t i, const char* data, size_t n, size_t* taken);
  Status wait_slot(size_t i, uint32_t timeout_ms);
  void close_slot(size_t i);
  /// The slot of the engine's connection `conn` (dialed or accepted), or -1.
  int slot_of(uint16_t conn, bool dialed) const;
  Status dial(const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler handler);
  /// Starts the connect of slot i to addr; false when it failed at once.
  bool connect_slot(size_t i, const struct sockaddr* addr, uint32_t len);
  /// A connecting slot's socket reported: established (writable()), else the fallback address,
  /// else drop().
  void finish_connect(uint16_t i);
  void accept_all();
  void read_conn(uint16_t i);
  /// The peer is gone: frees slot i, tells its engine, closes the descriptor.
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
