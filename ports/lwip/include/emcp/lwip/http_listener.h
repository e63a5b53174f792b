// emcp/lwip/http_listener.h - lwIP's raw/altcp TCP API for emcp::transport::HttpServer, and for
// engines that dial out (the MQTT client, to its broker: dialer(), transport::Dialer).
//
// lwIP's raw API runs its callbacks from inside the stack (netif input, timers) and keeps its
// input state in file statics: it is not re-entrant. So this port splits the work in two:
//   - inside lwIP's callbacks it only records: a new connection goes into a free slot, a
//     dialed one is marked established, a received pbuf chain goes into the slot's queue
//     (ERR_MEM when the queue is full: lwIP keeps the data and offers it again), a FIN, an
//     acknowledgement, an error. It calls neither the engine nor lwIP (beyond setting the new
//     connection's callbacks, which only stores them);
//   - run_once(), from the application's loop, delivers what was recorded: opens connections
//     in the engine with the pcb's remote address (its per-peer shares; 503 and close when it
//     has no slot), tells a dialing engine its connection is up (writable()) or failed
//     (closed()), offers received bytes (altcp_recved
//     only for what the engine consumed: a busy engine closes the TCP window instead of
//     dropping bytes), tells it about writable connections and ends, and runs its poll().
// The engine's output goes through altcp_write (copied into lwIP's segments) and altcp_output,
// never more than altcp_sndbuf takes; the rest waits in the engine (HttpPort). A handler's
// output that must wait for the window calls the pump (set_pump: the board's netif input and
// sys_check_timeouts, or, with an RTOS and lwIP's core locking, unlock-sleep-lock), at least
// once per wait, until the pcb has room, bounded by HttpOptions::send_timeout_ms. The pump must
// let time pass (it is where the loop waits), and must not call run_once() or the engine.
//
// Dialing (dialer()): the same slots, callbacks and loop serve connections an engine opens
// itself, each reported to the handler given to dial() under that engine's own number. The
// host is an IPv4 address (lwIP's ipaddr_aton); names are not resolved (emcp's lwipopts.h has
// LWIP_DNS 0: a name gives kNotFound). A connect lwIP gives up on (RST, its SYN retries spent)
// is reported as closed(). StaticLwipHttpListener<N, Dialed> keeps Dialed slots that accepted
// connections never take, so a flood of HTTP clients cannot keep the broker's connection out.
//
// Closing: the engine's close() sends FIN after the answer (altcp_shutdown) and the pcb lingers
// up to 2 s, acknowledging and dropping what the peer still sends, so that lwIP does not answer
// late bytes with RST (which can cost the client its answer); a connection whose output the
// engine had to drop (a peer that stopped reading) is reset at once instead, so its pcb does
// not wait out the peer's closed window; a dialed connection closed before it was established
// is aborted. Two lwIP 2.1.3 faults are worked around here: its
// altcp accept dereferences the missing pcb when MEMP_NUM_TCP_PCB is exhausted (any client
// could crash the server; the SYN is dropped instead and retransmitted), and its altcp close of
// a listener reads past the listening pcb.
//
// Tested on the host against lwIP's own TCP (tests/lwip: loopback netif, raw-TCP clients and a
// raw-TCP peer to dial, under ASan/UBSan; tests/fuzz/fuzz_lwip_http.cpp).
//
// Zero heap: the slots are the caller's (StaticLwipHttpListener<N>); lwIP's pcbs and pbufs
// come from its static pools (ports/lwip/include/lwipopts.h).
//
// Context: the loop that owns the HttpServer (and every engine that dials through dialer()),
// with lwIP's core lock held (NO_SYS: the loop is the only thread).
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
  /// kConnecting: dialed, not yet reported established (or failed) to its engine.
  enum class State : uint8_t { kFree, kAccepted, kConnecting, kOpen };
  LwipHttpListener* owner = nullptr;
  altcp_pcb* pcb = nullptr;
  pbuf* rx[kQueue] = {};
  transport::ConnectionHandler handler;  ///< a dialed connection's engine (accepted ones: the attached one)
  uint8_t rx_count = 0;
  uint16_t rx_off = 0;      ///< bytes of rx[0] (the whole chain) the engine has taken
  State state = State::kFree;
  int16_t conn = -1;        ///< the engine's connection slot (a dialed one: the dialing engine's number)
  bool dialed = false;      ///< opened by dialer().dial(), not accepted
  bool established = false; ///< dialed: lwIP's connected callback came
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
  uint32_t dialed = 0;         ///< dialed connections established
  uint32_t dial_failed = 0;    ///< dialed connections that ended before they were established
};

class LwipHttpListener {
 public:
  /// `slots` must have at least as many entries as the HttpServer has connections, plus one
  /// or two for answering 503 beyond them, plus `dial_slots` for dialed connections: accepted
  /// connections never hold more than slots.size() - dial_slots at once.
  explicit LwipHttpListener(Span<LwipConn> slots, size_t dial_slots = 0);
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
  /// How an engine opens connections of its own through this listener's slots and loop
  /// (transport::Dialer; valid as long as the listener). dial(host, port, conn, handler):
  ///   - `host`: an IPv4 address ("10.0.2.2"); a name is not resolved: kNotFound;
  ///   - kOk: connecting; run_once() then calls `handler`.writable(conn) once lwIP's connected
  ///     callback came (writes take 0 bytes before), receive(conn, ...) as wants_input(conn)
  ///     allows, closed(conn) when the connect fails (RST, lwIP's SYN retries spent) or the
  ///     connection ends;
  ///   - kInvalidArgument: no host or handler, or `conn` already names a dialed connection here;
  ///     kNoSpace: no free slot; kIoError: lwIP has no pcb for it, or refused the connect at once
  ///     (no route). Nothing is reported for `conn` after an error.
  /// Works without listen() and attach(): a device that only dials out. The engine runs its
  /// periodic work itself (run_once() polls only the attached handler).
  ///
  ///   transport::Dialer d = net.dialer();
  ///   if (d.dial(d.ctx, "10.0.2.2", 1883, 0, mqtt_handler) != Status::kOk) retry_later();
  transport::Dialer dialer();
  /// Delivers what lwIP's callbacks recorded to the engines (the attached one, and the dialed
  /// connections' own), and runs the attached one's poll() every `poll_ms` (from its clock).
  /// Call it after every netif input and timer run.
  void run_once(uint32_t poll_ms = 100);
  /// Closes the listening pcb and resets every connection (the engine is told: closed()).
  /// The destructor does the same without telling the engine, which may be gone already.
  void stop();

  const LwipHttpStats& stats() const { return stats_; }
  /// For the accept guard (lwIP's call without a pcb): `arg` is a listener or nullptr.
  static void count_syn_dropped(void* arg);
  /// Slots holding a connection (open, accepted and not yet given to the engine, or dialed).
  size_t slots_in_use() const;

 private:
  static int8_t on_accept(void* arg, altcp_pcb* pcb, int8_t err);
  static int8_t on_connected(void* arg, altcp_pcb* pcb, int8_t err);
  static int8_t on_recv(void* arg, altcp_pcb* pcb, pbuf* p, int8_t err);
  static int8_t on_sent(void* arg, altcp_pcb* pcb, uint16_t len);
  static int8_t on_poll(void* arg, altcp_pcb* pcb);
  static void on_err(void* arg, int8_t err);
  // The HttpPort this object offers (port_interface(): HttpPort::of).
  friend struct transport::HttpPort;
  Status port_write(uint16_t conn, const char* data, size_t n, size_t* taken);
  Status port_wait_writable(uint16_t conn, uint32_t timeout_ms);
  void port_close(uint16_t conn);
  // Slot-level output, behind both the engine's port (accepted connections) and the dialer's.
  Status write_slot(LwipConn* s, const char* data, size_t n, size_t* taken);
  Status wait_slot(LwipConn* s, uint32_t timeout_ms);
  void close_slot(LwipConn* s);
  Status dial(const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler handler);

  /// The slot of connection `conn`: an accepted one open in the attached engine, or a dialed
  /// one (connecting or open) by its engine's number.
  LwipConn* by_conn(uint16_t conn, bool dialed = false);
  /// Whom slot `s` reports to.
  const transport::ConnectionHandler& engine(const LwipConn& s) const { return s.dialed ? s.handler : server_; }
  void shut(bool tell_engine);
  void open_accepted(LwipConn& s);
  void connect_done(LwipConn& s);
  void offer(LwipConn& s);
  void recved(LwipConn& s, uint32_t n);
  void refuse(LwipConn& s);
  void release(LwipConn& s, bool abort);
  void free_rx(LwipConn& s, bool ack);

  Span<LwipConn> slots_;
  size_t dial_slots_;
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

/// A listener for an engine of N connections (and 1 more slot to answer 503 from), and Dialed
/// connections dialed through dialer() that accepted ones never take. N 0: a device that only
/// dials (no slot for accepted connections).
template <size_t N, size_t Dialed = 0>
class StaticLwipHttpListener : public LwipHttpListener {
  static constexpr size_t kSlots = (N == 0 ? 0 : N + 1) + Dialed;
  static_assert(kSlots != 0, "StaticLwipHttpListener<0, 0> has no slot");

 public:
  StaticLwipHttpListener() : LwipHttpListener(Span<LwipConn>(slots_, kSlots), Dialed) {}

 private:
  LwipConn slots_[kSlots];
};

}  // namespace lwip
EMCP_NS_END

#endif  // EMCP_LWIP_HTTP_LISTENER_H
