// emcp/transport/connection.h - what a port's listener drives: the HTTP engine, or a layer in
// front of it (ports/mbedtls: TLS) that stands in for the engine towards the listener and for
// the listener towards the engine.
//
// The port contract, in one header that knows no engine (listeners and layers include only
// this): the listener (ports/posix, ports/lwip) reports connections and bytes through a
// ConnectionHandler and gives the handler an HttpPort to answer through. A layer takes the listener's HttpPort and offers its own to the engine, and offers
// its own ConnectionHandler to the listener:
//
//   listener --ConnectionHandler--> TLS layer --ConnectionHandler--> HttpServer
//   listener <------HttpPort-------- TLS layer <------HttpPort------- HttpServer
//
// A table of functions rather than virtual members: no vtable, no deleting destructor (which
// would name operator delete in a zero-heap image), and a layer can sit in front of anything
// that fills the table.
//
// Context: the loop that owns the engine; never from inside a network stack's callback.
//
// Example:
//   net.attach(http.handler());        // plain: the listener drives the engine
//   tls.attach(http.handler());        // TLS: the listener drives the layer, which drives it
//   net.attach(tls.handler());
#ifndef EMCP_TRANSPORT_CONNECTION_H
#define EMCP_TRANSPORT_CONNECTION_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace transport {

/// The address of a connection's peer, as the port reports it on open(): 16 bytes, IPv6, with
/// IPv4 as an IPv4-mapped address (::ffff:a.b.c.d), so both compare the same way. All zero: not
/// known (the per-peer rules of the HTTP engine do not apply to it; docs/http.md).
struct PeerAddress {
  uint8_t bytes[16] = {};

  static PeerAddress ipv4(const uint8_t a[4]) {
    PeerAddress p;
    p.bytes[10] = p.bytes[11] = 0xFF;
    for (int i = 0; i < 4; ++i) p.bytes[12 + i] = a[i];
    return p;
  }
  static PeerAddress ipv6(const uint8_t a[16]) {
    PeerAddress p;
    for (int i = 0; i < 16; ++i) p.bytes[i] = a[i];
    return p;
  }
  bool known() const {
    for (uint8_t b : bytes)
      if (b != 0) return true;
    return false;
  }
  bool operator==(const PeerAddress& o) const {
    for (int i = 0; i < 16; ++i)
      if (bytes[i] != o.bytes[i]) return false;
    return true;
  }
  bool operator!=(const PeerAddress& o) const { return !(*this == o); }
};

/// How the engine reaches the network: what a port (a listener, or a layer such as TLS) offers
/// the engine to answer through (docs/porting.md, section 4).
///
/// Output never blocks inside the port: write() takes what the connection can take now. The
/// engine keeps the rest in the connection's output buffer and resumes from there when the
/// port calls HttpServer::writable(). Only when a handler is still producing an answer (its
/// output fills the buffer again before the window opens) does the engine wait, through
/// wait_writable(), for at most HttpOptions::send_timeout_ms; then the connection is dropped.
struct HttpPort {
  /// Offers `n` bytes for connection `conn`: sets `*taken` to how many it accepted now (0..n)
  /// and returns kOk, or returns an error (kClosed, kIoError) and the engine drops the
  /// connection. When it took fewer than `n`, the port calls HttpServer::writable(conn) once
  /// the connection can take more. Must not call back into the HttpServer.
  Status (*write)(void* ctx, uint16_t conn, const char* data, size_t n, size_t* taken) = nullptr;
  /// Waits until connection `conn` can take more bytes (kOk), fails (kClosed), or `timeout_ms`
  /// pass (kWouldBlock). The port keeps its network stack running meanwhile (acknowledgements
  /// must arrive) but must not call into the HttpServer: the engine is inside one of its own
  /// calls. nullptr: output that cannot wait fails at once (the connection is dropped).
  Status (*wait_writable)(void* ctx, uint16_t conn, uint32_t timeout_ms) = nullptr;
  /// Ends connection `conn` once what was written is out. The slot is free at once: the port
  /// must not report anything more for that connection.
  void (*close)(void* ctx, uint16_t conn) = nullptr;
  void* ctx = nullptr;

  /// The port of `self`, whose members port_write(conn, data, n, taken),
  /// port_wait_writable(conn, timeout_ms) and port_close(conn) do what the three functions
  /// above say (private members need `friend struct transport::HttpPort;` in T).
  template <class T>
  static HttpPort of(T* self) {
    HttpPort p;
    p.write = [](void* obj, uint16_t conn, const char* data, size_t n, size_t* taken) {
      return static_cast<T*>(obj)->port_write(conn, data, n, taken);
    };
    p.wait_writable = [](void* obj, uint16_t conn, uint32_t timeout_ms) {
      return static_cast<T*>(obj)->port_wait_writable(conn, timeout_ms);
    };
    p.close = [](void* obj, uint16_t conn) { static_cast<T*>(obj)->port_close(conn); };
    p.ctx = self;
    return p;
  }
};

/// A complete HTTP 503 answer for a connection refused before it gets a slot (what a listener
/// sends when open() returns -1 and the handler has no refusal of its own).
StrView busy_response();

class ConnectionHandler {
 public:
  /// The functions behind a handler; `ctx` is the object they serve.
  struct Ops {
    int (*open)(void* ctx, const PeerAddress& peer);
    size_t (*receive)(void* ctx, uint16_t conn, const void* data, size_t n);
    bool (*wants_input)(void* ctx, uint16_t conn);
    void (*writable)(void* ctx, uint16_t conn);
    void (*closed)(void* ctx, uint16_t conn);
    void (*poll)(void* ctx);
    uint64_t (*now_ms)(void* ctx);
    StrView (*refusal)(void* ctx);
  };

  constexpr ConnectionHandler() = default;
  constexpr ConnectionHandler(const Ops* ops, void* ctx) : ops_(ops), ctx_(ctx) {}
  bool valid() const { return ops_ != nullptr; }

  /// A new connection from `peer`: its slot number (the listener's and the port's `conn` from
  /// now on), or -1 when it cannot be served (send refusal() and close).
  int open(const PeerAddress& peer = PeerAddress()) const { return ops_->open(ctx_, peer); }
  /// Bytes from connection `conn`; returns how many were consumed. Offer the rest again once
  /// wants_input() says so.
  size_t receive(uint16_t conn, const void* data, size_t n) const { return ops_->receive(ctx_, conn, data, n); }
  /// True when connection `conn` would consume input now.
  bool wants_input(uint16_t conn) const { return ops_->wants_input(ctx_, conn); }
  /// Connection `conn` can take more output (HttpPort::write took fewer bytes than offered).
  void writable(uint16_t conn) const { ops_->writable(ctx_, conn); }
  /// The peer closed connection `conn`, or it failed. The slot is free afterwards.
  void closed(uint16_t conn) const { ops_->closed(ctx_, conn); }
  /// Timeouts and periodic work: call it every 100 ms or so, and after input.
  void poll() const { ops_->poll(ctx_); }
  /// The engine's monotonic clock (the mcp::Server's Platform), in milliseconds.
  uint64_t now_ms() const { return ops_->now_ms(ctx_); }
  /// The bytes to send a connection refused by open() before closing it (may be empty).
  StrView refusal() const { return ops_->refusal(ctx_); }

 private:
  const Ops* ops_ = nullptr;
  void* ctx_ = nullptr;
};

/// How an engine opens connections of its own (the MQTT client, to its broker): what a port
/// that can dial offers beside its listener. The dialed connection then follows the contract
/// above, in the other direction: the port reports it to the `handler` given to dial() (never
/// open(); the engine named the connection itself) and the engine writes and closes through
/// `port`.
///
/// Context: the loop that owns the engine, as above.
struct Dialer {
  /// Starts a TCP connection to `host` (a name or a numeric address, NUL-terminated; read
  /// during the call only) on `port`, for `handler`'s connection `conn`. kOk: under way; the
  /// port then calls handler.writable(conn) once it is established (writes before that take 0
  /// bytes), handler.receive() with its bytes, and handler.closed(conn) when it fails or
  /// ends, established or not. An error (kNoSpace: no free slot; kNotFound: the name does not
  /// resolve; kInvalidArgument: no host or handler, or `conn` already names a connection this
  /// dialer holds; kIoError) means nothing more is reported for `conn`.
  Status (*dial)(void* ctx, const char* host, uint16_t port, uint16_t conn, ConnectionHandler handler) = nullptr;
  /// Write, wait and close for dialed connections, with the engine's `conn` numbers.
  HttpPort port;
  void* ctx = nullptr;
  bool valid() const { return dial != nullptr; }
};

}  // namespace transport
EMCP_NS_END

#endif  // EMCP_TRANSPORT_CONNECTION_H
