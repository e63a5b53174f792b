// The network the lwIP port's host tests and fuzz target run in: one lwIP stack (NO_SYS, the
// options of ports/lwip plus tests/lwip/lwipopts_host.h) with its loopback netif, the fixture
// application's fake clock (fixture::now_ms, also lwIP's sys_now), and clients that are raw lwIP
// TCP pcbs in the same stack connecting to 127.0.0.1. Both ends of every connection are real
// lwIP TCP: windows, segments, pbuf chains, retransmissions, FIN and RST.
//
// lwIP's rule holds here too: the clients' callbacks only record (into fixed buffers) and free
// what lwIP hands over, and close a pcb whose both sides are done (lwIP requires that there);
// everything else a client does (write, acknowledge what it read, close, abort) happens in
// step() or the test's loop. step() never calls the HTTP engine, so it is
// also what the listener's pump runs while a handler waits for the window.
//
// No heap: everything is static; lwIP's memory comes from its static pools.
#ifndef EMCP_TESTS_LWIP_WORLD_H
#define EMCP_TESTS_LWIP_WORLD_H

#include <stddef.h>
#include <stdint.h>

#include "lwip/err.h"
#include "lwip/memp.h"

struct tcp_pcb;
struct pbuf;

namespace lwip_world {

/// Called by lwIP's assertions (emcp_lwip_assert) before the program aborts.
using AssertFn = void (*)(const char* message, const char* file, int line);

/// Starts lwIP (once per process; later calls only set the handler).
void init(AssertFn on_assert);

/// Milliseconds each step() moves the clock on (default 2).
void set_tick(uint32_t ms);
uint32_t tick();
/// Runs first in every step (e.g. gives held memory back at a given time); nullptr: none.
void set_hook(void (*hook)(void* ctx), void* ctx);

/// One step of the world, never calling the HTTP engine: the hook, the clients (each writes
/// what its window and send buffer take, and reads per its policy), netif_poll_all() (the
/// looped packets), sys_check_timeouts(), then the clock moves on by tick().
void step();
/// step() with the signature of LwipHttpListener::set_pump; counts its calls.
void pump(void* ctx);
uint32_t pumps();

/// The loopback netif drops a pure ACK that advertises a zero window when the same one (same
/// ports, numbers and window) already went the same way in this step. lwIP acknowledges every
/// zero-length segment when its own receive window is zero (tcp_receive: "segments that fall
/// out of the window are ACKed", and with a zero window every one does), so two lwIP ends that
/// both stopped reading answer each other's ACKs forever, inside one netif_poll() (a Linux
/// peer does not answer a pure ACK, so this only arises with lwIP on both ends, as here).
/// How many it dropped:
uint32_t acks_dropped();

/// TCP segments carrying data that the end with local port `port` has sent (retransmissions
/// included) since init().
uint32_t data_segments_from(uint16_t port);

/// Is there a server-side pcb (local port `port`) for the client whose local port is
/// `client_port`, in any state (TIME_WAIT included)?
bool server_pcb_for(uint16_t client_port, uint16_t port = 80);
/// That pcb's state (lwIP's enum tcp_state), or -1 when there is none.
int server_pcb_state(uint16_t client_port, uint16_t port = 80);

/// lwIP's TCP pcb lists are sane (each list ends, no pcb is on two lists or twice on one, no
/// more pcbs than the pool has in use): nullptr, or what is wrong.
const char* check_pcb_lists();

/// What lwIP's pools (MEMP) and heap (MEM) have in use.
struct Pools {
  uint32_t memp[MEMP_MAX];
  uint32_t mem;
};
Pools pools();
/// True when equal; otherwise writes the differences ("TCP_PCB 3 (was 1)") into `why`.
bool same(const Pools& now, const Pools& before, char* why, size_t cap);
/// What was in use right after lwip_init() (the cyclic timers only).
const Pools& at_start();

/// Takes resources out of lwIP's pools and holds them until release_held().
/// All TCP pcbs but `keep_free`; returns how many it holds.
size_t hold_pcbs(size_t keep_free);
/// All of the heap (MEM_SIZE) it can get, in PBUF_RAM pbufs; returns the bytes held.
size_t hold_heap();
void release_held();
bool holding();

/// A client: a raw lwIP TCP pcb of the same stack.
class Client {
 public:
  static constexpr size_t kRx = 1 << 16;  ///< what it keeps of what it received
  static constexpr size_t kTx = 1 << 15;  ///< what waits to be written

  /// A fresh client (aborts what it had).
  void reset();
  /// Connects to 127.0.0.1:port (Nagle off), from `local_port` (0: one lwIP picks). False when
  /// lwIP has no pcb for it (tcp_new), cannot bind that port, or refuses the connect at once.
  bool connect(uint16_t port = 80, uint16_t local_port = 0);
  /// Queues bytes to write; false (nothing queued) when they do not fit kTx.
  bool send(const void* data, size_t n);
  /// At most `n` bytes per tcp_write + tcp_output, one per step: one TCP segment each.
  void set_segment(size_t n) { segment_ = n == 0 ? 1 : n; }
  /// Reads (tcp_recved) `per_step` bytes per step: SIZE_MAX all, 0 none (its window closes).
  void set_read(size_t per_step) { read_per_step_ = per_step; }
  /// Half-close (FIN) once everything queued is written.
  void shutdown_when_sent() { shutdown_when_sent_ = true; }
  /// Reads what it received and ends with FIN (tcp_close); lwIP finishes the close.
  void close();
  /// Ends with RST (tcp_abort).
  void abort();

  bool open() const { return pcb_ != nullptr; }
  /// Its local port (0 before connect()).
  uint16_t port() const { return port_; }
  bool connected() const { return connected_; }
  bool fin() const { return fin_; }           ///< the server sent FIN
  bool reset_seen() const { return reset_; }  ///< lwIP ended it with an error (RST, timeout)
  err_t error() const { return error_; }
  size_t unsent() const { return tx_len_ - tx_off_; }
  size_t unread() const { return unread_; }   ///< received, not acknowledged to lwIP yet
  size_t received_total() const { return received_total_; }
  bool overflowed() const { return overflow_; }
  /// What it received and the test has not consumed.
  const char* data() const { return rx_; }
  size_t size() const { return rx_len_; }
  void consume(size_t n);

  // For step().
  void act();
  // For the peer (listen_peer()): takes over a pcb lwIP accepted, connected from the start.
  void adopt(tcp_pcb* pcb);

 private:
  static err_t on_connected(void* arg, tcp_pcb* pcb, err_t err);
  static err_t on_recv(void* arg, tcp_pcb* pcb, pbuf* p, err_t err);
  static void on_err(void* arg, err_t err);
  void detach();

  tcp_pcb* pcb_ = nullptr;
  bool connected_ = false;
  bool fin_ = false;
  bool reset_ = false;
  bool overflow_ = false;
  bool shutdown_when_sent_ = false;
  bool shut_ = false;
  err_t error_ = ERR_OK;
  uint16_t port_ = 0;
  size_t segment_ = SIZE_MAX;
  size_t read_per_step_ = SIZE_MAX;
  size_t unread_ = 0;
  size_t received_total_ = 0;
  size_t rx_len_ = 0;
  size_t tx_len_ = 0;
  size_t tx_off_ = 0;
  char rx_[kRx];
  char tx_[kTx];
};

constexpr size_t kClients = 8;
Client& client(size_t i);
/// Aborts every client that is still open.
void abort_clients();
/// Aborts the pcbs clients let go of with close() that lwIP still holds (their FIN not yet
/// acknowledged: retransmissions can be minutes apart once lwIP's timeout backed off), as if
/// the client's machine went away: every pcb whose local port is not `server_port` and that
/// has no error callback (a port's pcbs have altcp's: a dialed connection is left alone). The
/// server's side then gets their RST. Returns how many.
size_t abort_strays(uint16_t server_port = 80);
/// Clients with a pcb.
size_t open_clients();

/// A peer that accepts connections (a raw lwIP listening pcb on 127.0.0.1:`port`): the other end
/// for the connections the port dials (LwipHttpListener::dialer()). Each connection it accepts
/// becomes the first client from client(`first`) on that is not open, connected from the start,
/// which the test then drives as any other (send, read, close, abort); with none free, lwIP
/// resets it. False when lwIP has no pcb for it or the port is taken.
bool listen_peer(uint16_t port, size_t first);
/// Closes the listening pcb (the connections it accepted stay with their clients).
void stop_peer();
/// Connections the peer accepted since listen_peer().
uint32_t peer_accepted();

}  // namespace lwip_world

#endif
