// ports/template/template_port.h - a new platform's port, to copy and fill in.
//
// Everything emcp needs from a platform is here, in the order docs/porting.md introduces it:
//   1. the platform functions (emcp/platform.h): a monotonic clock, random bytes, a log line,
//      the owner's wake and a critical section for the server's inbox;
//   2. a byte stream for the stdio transport (a UART): a blocking write and a non-blocking read;
//   3. for HTTP, the network side of transport::HttpServer (transport::HttpPort and the
//      events the port delivers from its loop);
//   4. the loop that runs it all.
// Each function says what it must do; template_port.cpp holds the skeleton, with every place
// to fill in marked "PORT:". The template compiles in CI with warnings as errors (it is part of
// the native build), so it stays true to the interfaces it names; it serves nothing until its
// PORT: places talk to real hardware.
//
// Context: the one loop that owns the mcp::Server (interrupts only fill buffers, or post to the
// server's inbox; wake() and the critical section are called from any context).
#ifndef EMCP_PORTS_TEMPLATE_PORT_H
#define EMCP_PORTS_TEMPLATE_PORT_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/mcp/server.h"
#include "emcp/platform.h"
#include "emcp/transport/http_server.h"
#include "emcp/transport/line.h"

namespace template_port {

// ---- 1. Platform --------------------------------------------------------------------------------

/// Milliseconds since start, from a clock that never goes back (a 1 kHz tick counter, a
/// free-running timer). Called from the loop; must be cheap.
uint64_t now_ms();
/// Fills `out` with `n` random bytes from a cryptographic source (a TRNG peripheral, the
/// OS's generator). Returns false when the source fails; never falls back to a weak generator
/// (HTTP session ids must not be guessable).
bool random_bytes(void* out, size_t n);
/// Writes one line of diagnostics somewhere that is not the MCP byte stream (a debug UART,
/// RTT, a log buffer). Optional: leave Platform::log nullptr instead.
void log_line(const char* text, size_t n);
/// Wakes serve() after another task or an interrupt posted to the server's inbox
/// (emcp/mcp/inbox.h, docs/concurrency.md): from any context, never blocking, never lost
/// between serve()'s last look and its sleep.
void wake();
/// Masks every interrupt that may post (and an RTOS's scheduler); nestable. Needed only on a CPU
/// without atomic read-modify-write (Cortex-M0/M0+); the inbox is lock-free elsewhere.
uint32_t critical_enter();
void critical_exit(uint32_t state);
/// These as one Platform, for mcp::Server's constructor.
const emcp::Platform& platform();

// ---- 2. A byte stream for the stdio transport -----------------------------------------------------

/// json::FlushingSink::FlushFn: sends all `n` bytes (waiting for the transmitter) and returns
/// kOk, or returns kIoError when the link failed. `ctx` is what the transport was given.
emcp::Status uart_flush(void* ctx, const char* data, size_t n);
/// Takes up to `cap` received bytes without waiting (from the ring the receive interrupt
/// fills); 0 when none.
size_t uart_read(uint8_t* buf, size_t cap);

// ---- 3. HTTP: the network side --------------------------------------------------------------------

/// The port's connection table and the HttpPort callbacks over it. The stack's own callbacks
/// (accept, data, acknowledged, closed, error) only record into it; run_once() delivers.
class Net {
 public:
  /// The callbacks for transport::HttpServer's constructor.
  emcp::transport::HttpPort port_interface();
  /// What the port drives: the engine's handler(), or a layer's in front of it (TLS).
  void attach(emcp::transport::ConnectionHandler handler) { http_ = handler; }
  /// Delivers what the stack recorded: new connections (HttpServer::open), bytes
  /// (receive, only while wants_input), room to write (writable), ends (closed); and runs
  /// HttpServer::poll() every 100 ms or so.
  void run_once();

 private:
  // The HttpPort's three functions, as members (port_interface(): HttpPort::of(this)).
  friend struct emcp::transport::HttpPort;
  // HttpPort::write: take what the connection's send buffer takes now, set *taken, never
  // block; when that is less than n, remember to call writable() once it has room.
  emcp::Status port_write(uint16_t conn, const char* data, size_t n, size_t* taken);
  // HttpPort::wait_writable: run the stack (not the engine) until `conn` has room (kOk), fails
  // (kClosed) or timeout_ms pass (kWouldBlock).
  emcp::Status port_wait_writable(uint16_t conn, uint32_t timeout_ms);
  // HttpPort::close: close `conn` once what was written is sent; forget it at once.
  void port_close(uint16_t conn);

  emcp::transport::ConnectionHandler http_;
  uint64_t last_poll_ms_ = 0;
};

// ---- 4. The loop ----------------------------------------------------------------------------------

/// Serves `link` (and `net`, when not nullptr) forever: input to the transports, the
/// application's `tick`, the server's timeouts, and sleep until the next interrupt.
[[noreturn]] void serve(emcp::mcp::Server& server, emcp::transport::LineTransport& link, Net* net,
                        void (*tick)());

}  // namespace template_port

#endif  // EMCP_PORTS_TEMPLATE_PORT_H
