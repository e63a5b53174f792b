// emcp/lwip/http_listener.h - lwIP's raw/altcp TCP API for emcp::transport::HttpServer.
//
// lwIP's raw API runs its callbacks from inside the stack (netif input, timers) and keeps its
// input state in file statics: it is not re-entrant. So this port splits the work in two:
//   - inside lwIP's callbacks it only records: a new connection goes into a free slot, a
//     received pbuf chain into the slot's queue (ERR_MEM when the queue is full: lwIP keeps the
//     data and offers it again), a FIN, an acknowledgement, an error. It calls neither the
//     engine nor lwIP (beyond setting the new connection's callbacks, which only stores them);
//   - run_once(), from the application's loop, delivers what was recorded: opens connections
//     in the engine with the pcb's remote address (its per-peer shares; 503 and close when it
//     has no slot), offers received bytes (altcp_recved
//     only for what the engine consumed: a busy engine closes the TCP window instead of
//     dropping bytes), tells it about writable connections and ends, and runs its poll().
// The engine's output goes through altcp_write (copied into lwIP's segments) and altcp_output,
// never more than altcp_sndbuf takes; the rest waits in the engine (HttpPort). A handler's
// output that must wait for the window calls the pump (set_pump: the board's netif input and
// sys_check_timeouts, or, with an RTOS and lwIP's core locking, unlock-sleep-lock), at least
// once per wait, until the pcb has room, bounded by HttpOptions::send_timeout_ms. The pump must
// let time pass (it is where the loop waits), and must not call run_once() or the engine.
//
// Closing: the engine's close() sends FIN after the answer (altcp_shutdown) and the pcb lingers
// up to 2 s, acknowledging and dropping what the peer still sends, so that lwIP does not answer
// late bytes with RST (which can cost the client its answer); a connection whose output the
// engine had to drop (a peer that stopped reading) is reset at once instead, so its pcb does
// not wait out the peer's closed window. Two lwIP 2.1.3 faults are worked around here: its
// altcp accept dereferences the missing pcb when MEMP_NUM_TCP_PCB is exhausted (any client
// could crash the server; the SYN is dropped instead and retransmitted), and its altcp close of
// a listener reads past the listening pcb.
//
// Tested on the host against lwIP's own TCP (tests/lwip: loopback netif, raw-TCP clients, under
// ASan/UBSan; tests/fuzz/fuzz_lwip_http.cpp).
//
// Zero heap: the slots are the caller's (StaticLwipHttpListener<N>); lwIP's pcbs and pbufs
// come from its static pools (ports/lwip/include/lwipopts.h).
//
// Context: the loop that owns the HttpServer, with lwIP's core lock held (NO_SYS: the loop is
// the only thread).
//
// Example (NO_SYS):
//   static emcp::lwip::StaticLwipHttpListener<4> net;
//   static emcp::transport::StaticHttpServer<4, 2> http(server, options, net.port_interface());
//   net.attach(http.handler());
//   net.set_pump(&board_net_poll, nullptr);
//   if (net.listen(80) != emcp::Status::kOk) ...;
//   for (;;) { board_net_poll(nullptr); net.run_once(); }
#ifndef EMCP_LWIP_HTTP_LISTENER_H
#define EMCP_LWIP_HTTP_LISTENER_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/transport/connection.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

// lwIP's altcp.h: with LWIP_ALTCP (emcp's lwipopts.h) it declares altcp_pcb; without it (ESP-IDF's
// lwIP) it maps every altcp_* name onto lwIP's tcp_* API, and this port uses plain TCP.
#include "lwip/altcp.h"

struct pbuf;
struct altcp_allocator_s;

EMCP_NS_BEGIN
namespace lwip {

class LwipHttpListener;

/// Per-connection state of the listener (declare through StaticLwipHttpListener<>).
struct LwipConn {
  /// Received chains waiting for the engine (beyond this many, lwIP holds the data).
  static constexpr uint8_t kQueue = 4;
  enum class State : uint8_t { kFree, kAccepted, kOpen };
  LwipHttpListener* owner = nullptr;
  altcp_pcb* pcb = nullptr;
  pbuf* rx[kQueue] = {};
  uint8_t rx_count = 0;
  uint16_t rx_off = 0;      ///< bytes of rx[0] (the whole chain) the engine has taken
  State state = State::kFree;
  int16_t conn = -1;        ///< the engine's connection slot
  bool fin = false;         ///< the peer sent FIN
  bool failed = false;      ///< lwIP reported an error: the pcb is gone
  bool want_write = false;  ///< the last write took less than offered: writable() when room
};

/// Counters for diagnostics (the firmware's status tool reports them).
struct LwipHttpStats {
  uint32_t accepted = 0;
  uint32_t refused_busy = 0;   ///< answered 503: no engine or listener slot
  uint32_t refused_reset = 0;  ///< reset at once: not even a slot to answer 503 from
  uint32_t rx_deferred = 0;    ///< chains lwIP kept because a slot's queue was full
  uint32_t errors = 0;         ///< connections lwIP ended with an error (reset, abort)
  uint32_t write_mem = 0;      ///< writes lwIP refused for want of pbufs or segments
  uint32_t syn_dropped = 0;    ///< new connections lwIP had no pcb for: their SYN dropped (retransmitted)
};

class LwipHttpListener {
 public:
  /// `slots` must have at least as many entries as the HttpServer has connections, plus one
  /// or two for answering 503 beyond them.
  explicit LwipHttpListener(Span<LwipConn> slots);
  ~LwipHttpListener();
  LwipHttpListener(const LwipHttpListener&) = delete;
  LwipHttpListener& operator=(const LwipHttpListener&) = delete;

  /// The callbacks for HttpServer's constructor.
  transport::HttpPort port_interface();
  /// What to serve (before listen()): the engine's handler(), or a layer's in front of it
  /// (emcp::mbedtls::TlsLayer for HTTPS).
  void attach(transport::ConnectionHandler handler) { server_ = handler; }
  /// What runs the network while a handler's output waits for the window (the board's netif
  /// input and lwIP's timers). Without one, such output fails at once.
  void set_pump(void (*pump)(void* ctx), void* ctx) {
    pump_ = pump;
    pump_ctx_ = ctx;
  }
  /// Listens on `port` of every address (IPv4). `allocator`: an altcp allocator (TLS, next to
  /// come); nullptr: plain TCP. kIoError when lwIP has no pcb for it or the port is taken;
  /// kInvalidArgument for an allocator when lwIP has no altcp (LWIP_ALTCP 0: ESP-IDF's lwIP).
  Status listen(uint16_t port, altcp_allocator_s* allocator = nullptr);
  /// Delivers what lwIP's callbacks recorded to the engine, and runs its poll() every
  /// `poll_ms` (from the server's clock). Call it after every netif input and timer run.
  void run_once(uint32_t poll_ms = 100);
  /// Closes the listening pcb and resets every connection (the engine is told: closed()).
  /// The destructor does the same without telling the engine, which may be gone already.
  void stop();

  const LwipHttpStats& stats() const { return stats_; }
  /// For the accept guard (lwIP's call without a pcb): `arg` is a listener or nullptr.
  static void count_syn_dropped(void* arg);
  /// Slots holding a connection (open, or accepted and not yet given to the engine).
  size_t slots_in_use() const;

 private:
  static int8_t on_accept(void* arg, altcp_pcb* pcb, int8_t err);
  static int8_t on_recv(void* arg, altcp_pcb* pcb, pbuf* p, int8_t err);
  static int8_t on_sent(void* arg, altcp_pcb* pcb, uint16_t len);
  static int8_t on_poll(void* arg, altcp_pcb* pcb);
  static void on_err(void* arg, int8_t err);
  // The HttpPort this object offers (port_interface(): HttpPort::of).
  friend struct transport::HttpPort;
  Status port_write(uint16_t conn, const char* data, size_t n, size_t* taken);
  Status port_wait_writable(uint16_t conn, uint32_t timeout_ms);
  void port_close(uint16_t conn);

  LwipConn* by_conn(uint16_t conn);
  void shut(bool tell_engine);
  void open_accepted(LwipConn& s);
  void offer(LwipConn& s);
  void recved(LwipConn& s, uint32_t n);
  void refuse(LwipConn& s);
  void release(LwipConn& s, bool abort);
  void free_rx(LwipConn& s, bool ack);

  Span<LwipConn> slots_;
  transport::ConnectionHandler server_;
  altcp_pcb* listen_pcb_ = nullptr;
  void (*pump_)(void*) = nullptr;
  void* pump_ctx_ = nullptr;
  uint64_t last_poll_ms_ = 0;
  bool poll_due_ = false;
  LwipConn* offering_ = nullptr;  ///< the slot whose chain the engine is reading (offer())
  bool offer_released_ = false;   ///< ... and release() freed that slot meanwhile
  LwipHttpStats stats_;
};

/// A listener for an engine of N connections (and 1 more slot to answer 503 from).
template <size_t N>
class StaticLwipHttpListener : public LwipHttpListener {
 public:
  StaticLwipHttpListener() : LwipHttpListener(Span<LwipConn>(slots_, N + 1)) {}

 private:
  LwipConn slots_[N + 1];
};

}  // namespace lwip
EMCP_NS_END

#endif  // EMCP_LWIP_HTTP_LISTENER_H
