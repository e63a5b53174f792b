#include "emcp/lwip/http_listener.h"

#include <string.h>

#include "lwip/altcp.h"
#include "lwip/altcp_tcp.h"
#include "lwip/err.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"

EMCP_NS_BEGIN
namespace lwip {

static_assert(sizeof(err_t) == sizeof(int8_t), "err_t is lwIP's default s8_t");

namespace {
// lwIP's poll callback interval, in TCP coarse timer ticks (500 ms each).
constexpr uint8_t kPollTicks = 2;
// How long a closed connection keeps reading (and dropping) what its peer still sends, in the
// same ticks: 2 s, as ports/posix lingers.
constexpr uint8_t kLingerTicks = 4;

// Closing connections (release(): the slot is already free). The answer went out with FIN
// after it (altcp_shutdown of the sending side); what the peer still sends is acknowledged and
// dropped, so lwIP does not answer it with RST (tcp_close's rule for unread data, or data
// after close), which could cost the client the end of its answer. The peer's FIN, or
// kLingerTicks, ends it with altcp_close; lwIP finishes the close on its own. These only touch
// the pcb lwIP hands them (as lwIP's own tcp_recv_null does), never a slot or the engine.
err_t linger_recv(void*, altcp_pcb* pcb, pbuf* p, err_t) {
  if (p != nullptr) {
    altcp_recved(pcb, p->tot_len);
    (void)pbuf_free(p);
    return ERR_OK;
  }
  if (altcp_close(pcb) != ERR_OK) {
    altcp_abort(pcb);
    return ERR_ABRT;
  }
  return ERR_OK;
}

err_t linger_poll(void*, altcp_pcb* pcb) {
  if (altcp_close(pcb) != ERR_OK) {
    altcp_abort(pcb);
    return ERR_ABRT;
  }
  return ERR_OK;
}

#if LWIP_ALTCP
// lwIP 2.1.3's altcp_tcp_accept(), which lwIP calls for an altcp listener, also runs when lwIP
// had no pcb for a new connection (tcp_listen_input: accept(NULL, ERR_MEM)) and then
// dereferences that NULL pcb: any client could crash the server by opening more connections
// than MEMP_NUM_TCP_PCB. This stands in front of it on the listening tcp_pcb and drops that
// call (counted: syn_dropped); the client retransmits its SYN, and gets a pcb once one is free.
tcp_accept_fn g_altcp_tcp_accept = nullptr;  // lwIP's (one function for every listener)

err_t accept_guard(void* arg, tcp_pcb* pcb, err_t err) {
  if (pcb == nullptr || g_altcp_tcp_accept == nullptr) {
    // `arg` is the listening altcp pcb (altcp_tcp_listen), whose own arg is the listener.
    LwipHttpListener::count_syn_dropped(arg != nullptr ? static_cast<altcp_pcb*>(arg)->arg : nullptr);
    return ERR_MEM;
  }
  return g_altcp_tcp_accept(arg, pcb, err);
}

// The altcp connection at the bottom of `listener` (TLS over TCP: the TCP one), and its
// listening tcp_pcb; nullptr when it is not one.
altcp_pcb* bottom_of(altcp_pcb* listener) {
  altcp_pcb* bottom = listener;
  while (bottom->inner_conn != nullptr) bottom = bottom->inner_conn;
  return bottom;
}
tcp_pcb_listen* listening_tcp(altcp_pcb* bottom) {
  auto* tcp = static_cast<tcp_pcb_listen*>(bottom->state);
  return tcp != nullptr && tcp->state == LISTEN ? tcp : nullptr;
}

void guard_accept(altcp_pcb* listener) {
  tcp_pcb_listen* tcp = listening_tcp(bottom_of(listener));
  if (tcp == nullptr || tcp->accept == nullptr || tcp->accept == &accept_guard) return;
  g_altcp_tcp_accept = tcp->accept;
  tcp_accept(reinterpret_cast<tcp_pcb*>(tcp), &accept_guard);
}
#endif

// Closes a listening altcp pcb. lwIP 2.1.3's altcp_tcp_close() reads `poll` of the tcp_pcb it
// closes, a member a listening tcp_pcb_listen does not have (a read past its end): the
// listening tcp_pcb is closed here first, and altcp_close() then only frees the altcp part.
void close_listener(altcp_pcb* listener) {
  altcp_arg(listener, nullptr);
  altcp_accept(listener, nullptr);
#if LWIP_ALTCP
  altcp_pcb* bottom = bottom_of(listener);
  tcp_pcb_listen* tcp = listening_tcp(bottom);
  if (tcp != nullptr) {
    tcp_arg(reinterpret_cast<tcp_pcb*>(tcp), nullptr);
    (void)tcp_close(reinterpret_cast<tcp_pcb*>(tcp));  // a listening pcb is always freed
    bottom->state = nullptr;
  }
#endif
  (void)altcp_close(listener);
}

// The peer's address as the engine compares them (IPv4 as ::ffff:a.b.c.d); all zero when lwIP
// has none for it. A getter of the pcb's fields, called from the loop.
transport::PeerAddress peer_of(altcp_pcb* pcb) {
  const ip_addr_t* ip = altcp_get_ip(pcb, 0);
  if (ip == nullptr) return transport::PeerAddress();
#if LWIP_IPV6
  if (IP_IS_V6(ip)) return transport::PeerAddress::ipv6(reinterpret_cast<const uint8_t*>(ip_2_ip6(ip)->addr));
#endif
#if LWIP_IPV4
  const u32_t a = ip4_addr_get_u32(ip_2_ip4(ip));  // network byte order in memory
  uint8_t b[4];
  memcpy(b, &a, sizeof b);
  return transport::PeerAddress::ipv4(b);
#else
  return transport::PeerAddress();
#endif
}

// Can `pcb` take more output now: room in its send buffer and in its segment queue.
bool has_room(altcp_pcb* pcb) {
  return altcp_sndbuf(pcb) != 0 && altcp_sndqueuelen(pcb) < TCP_SND_QUEUELEN;
}
}  // namespace

LwipHttpListener::LwipHttpListener(Span<LwipConn> slots, size_t dial_slots) : slots_(slots), dial_slots_(dial_slots) {
  for (LwipConn& s : slots_) s.owner = this;
}

// The engine may be gone already (declared after the listener, it is destroyed first): only
// lwIP is told.
LwipHttpListener::~LwipHttpListener() { shut(false); }

transport::HttpPort LwipHttpListener::port_interface() { return transport::HttpPort::of(this); }

Status LwipHttpListener::listen(uint16_t port, altcp_allocator_s* allocator) {
  if (!server_.valid() || listen_pcb_ != nullptr) return Status::kInvalidState;
#if !LWIP_ALTCP
  if (allocator != nullptr) return Status::kInvalidArgument;  // no altcp: plain TCP only
#endif
  altcp_pcb* pcb = altcp_new_ip_type(allocator, IPADDR_TYPE_V4);
  if (pcb == nullptr) return Status::kIoError;
  if (altcp_bind(pcb, IP4_ADDR_ANY, port) != ERR_OK) {
    (void)altcp_close(pcb);
    return Status::kIoError;
  }
  err_t err = ERR_OK;
  altcp_pcb* l = altcp_listen_with_backlog_and_err(pcb, TCP_DEFAULT_LISTEN_BACKLOG, &err);
  if (l == nullptr) {
    (void)altcp_close(pcb);
    return Status::kIoError;
  }
  listen_pcb_ = l;
  altcp_arg(l, this);
  altcp_accept(l, &LwipHttpListener::on_accept);
#if LWIP_ALTCP
  guard_accept(l);
#endif
  return Status::kOk;
}

void LwipHttpListener::stop() { shut(true); }

void LwipHttpListener::shut(bool tell_engine) {
  for (LwipConn& s : slots_) {
    if (s.state == LwipConn::State::kFree) continue;
    // The engine knows an accepted connection once it opened it; a dialed one from the dial.
    const bool known = s.state == LwipConn::State::kOpen || s.dialed;
    const uint16_t conn = static_cast<uint16_t>(s.conn);
    const transport::ConnectionHandler h = engine(s);
    release(s, true);
    if (tell_engine && known && h.valid()) h.closed(conn);
  }
  if (listen_pcb_ != nullptr) {
    close_listener(listen_pcb_);
    listen_pcb_ = nullptr;
  }
}

size_t LwipHttpListener::slots_in_use() const {
  size_t n = 0;
  for (const LwipConn& s : slots_) n += s.state != LwipConn::State::kFree ? 1 : 0;
  return n;
}

// ---- lwIP's callbacks: record only ---------------------------------------------------------------

void LwipHttpListener::count_syn_dropped(void* arg) {
  if (arg != nullptr) ++static_cast<LwipHttpListener*>(arg)->stats_.syn_dropped;
}

err_t LwipHttpListener::on_accept(void* arg, altcp_pcb* pcb, err_t err) {
  auto* self = static_cast<LwipHttpListener*>(arg);
  if (pcb == nullptr) count_syn_dropped(arg);  // lwIP without altcp: no pcb for a new connection
  if (err != ERR_OK || pcb == nullptr) return ERR_VAL;
  // The first free slot, unless accepted connections hold all theirs (the rest are for dialing).
  LwipConn* slot = nullptr;
  size_t accepted = 0;
  for (LwipConn& s : self->slots_) {
    if (s.state != LwipConn::State::kFree) accepted += s.dialed ? 0 : 1;
    else if (slot == nullptr) slot = &s;
  }
  if (slot == nullptr || accepted >= self->slots_.size() - self->dial_slots_) {
    // Not even a slot to answer 503 from: lwIP resets the connection.
    ++self->stats_.refused_reset;
    return ERR_MEM;
  }
  *slot = LwipConn{};
  slot->owner = self;
  slot->pcb = pcb;
  slot->state = LwipConn::State::kAccepted;
  // Storing the callbacks is all this does inside lwIP: they must be in place before this
  // returns, or lwIP's default would take (and acknowledge) the connection's first bytes.
  altcp_arg(pcb, slot);
  altcp_recv(pcb, &LwipHttpListener::on_recv);
  altcp_sent(pcb, &LwipHttpListener::on_sent);
  altcp_err(pcb, &LwipHttpListener::on_err);
  altcp_poll(pcb, &LwipHttpListener::on_poll, kPollTicks);
  return ERR_OK;
}

err_t LwipHttpListener::on_connected(void* arg, altcp_pcb*, err_t) {
  // A dialed connection is up: run_once() tells its engine (writable()).
  auto* s = static_cast<LwipConn*>(arg);
  if (s != nullptr) s->established = true;
  return ERR_OK;
}

err_t LwipHttpListener::on_recv(void* arg, altcp_pcb*, pbuf* p, err_t err) {
  auto* s = static_cast<LwipConn*>(arg);
  if (s == nullptr) {  // not ours any more (never: release() replaces the callbacks)
    if (p != nullptr) (void)pbuf_free(p);
    return ERR_OK;
  }
  if (p == nullptr) {
    s->fin = true;
    return ERR_OK;
  }
  if (err != ERR_OK || s->rx_count == LwipConn::kQueue) {
    // lwIP keeps the chain (refused data) and offers it again later.
    ++s->owner->stats_.rx_deferred;
    return ERR_MEM;
  }
  s->rx[s->rx_count++] = p;
  return ERR_OK;
}

err_t LwipHttpListener::on_sent(void* arg, altcp_pcb*, uint16_t) {
  // Room in the send buffer: run_once() sees altcp_sndbuf() and tells the engine.
  (void)arg;
  return ERR_OK;
}

err_t LwipHttpListener::on_poll(void* arg, altcp_pcb*) {
  auto* s = static_cast<LwipConn*>(arg);
  if (s != nullptr) s->owner->poll_due_ = true;
  return ERR_OK;
}

void LwipHttpListener::on_err(void* arg, err_t) {
  // The pcb is already freed by lwIP (reset, abort, out of memory).
  auto* s = static_cast<LwipConn*>(arg);
  if (s == nullptr) return;
  s->pcb = nullptr;
  s->failed = true;
  ++s->owner->stats_.errors;
}

// ---- The loop ------------------------------------------------------------------------------------

void LwipHttpListener::run_once(uint32_t poll_ms) {
  for (LwipConn& s : slots_) {
    if (s.state == LwipConn::State::kAccepted) open_accepted(s);
    if (s.state == LwipConn::State::kConnecting) connect_done(s);
    if (s.state != LwipConn::State::kOpen) continue;
    const uint16_t conn = static_cast<uint16_t>(s.conn);
    // A copy: release() clears the slot's.
    const transport::ConnectionHandler h = engine(s);
    if (s.failed) {
      release(s, false);
      h.closed(conn);
      continue;
    }
    if (s.want_write && has_room(s.pcb)) {
      s.want_write = false;
      h.writable(conn);  // may close it (port_close)
      if (s.state != LwipConn::State::kOpen) continue;
    }
    offer(s);
    if (s.state != LwipConn::State::kOpen) continue;
    if (s.fin && s.rx_count == 0) {
      // The peer is done: nothing more can be asked on this connection. (An answer still
      // being prepared for it is lost, as with a socket the client closed.)
      release(s, false);
      h.closed(conn);
    }
  }
  if (!server_.valid()) return;  // only dialing: each dialing engine polls itself
  const uint64_t now = server_.now_ms();
  if (poll_due_ || now - last_poll_ms_ >= poll_ms) {
    poll_due_ = false;
    last_poll_ms_ = now;
    server_.poll();
  }
}

void LwipHttpListener::open_accepted(LwipConn& s) {
  if (s.failed) {
    release(s, false);
    return;
  }
  const int conn = server_.open(peer_of(s.pcb));
  bool taken = false;
  for (const LwipConn& o : slots_) taken = taken || (o.state == LwipConn::State::kOpen && !o.dialed && o.conn == conn);
  if (conn < 0 || taken) {
    if (conn >= 0) server_.closed(static_cast<uint16_t>(conn));
    refuse(s);
    return;
  }
  s.conn = static_cast<int16_t>(conn);
  s.state = LwipConn::State::kOpen;
  altcp_nagle_disable(s.pcb);
  ++stats_.accepted;
}

// A dialed connection's connect ended: established (the engine is told writable() by the
// open-connection path of run_once(), want_write being set), or failed (closed()).
void LwipHttpListener::connect_done(LwipConn& s) {
  if (s.failed) {
    const uint16_t conn = static_cast<uint16_t>(s.conn);
    const transport::ConnectionHandler h = s.handler;
    ++stats_.dial_failed;
    release(s, false);
    h.closed(conn);
    return;
  }
  if (!s.established) return;
  s.state = LwipConn::State::kOpen;
  s.want_write = true;
  ++stats_.dialed;
}

// 503 to a connection beyond the engine's slots; it closes once that is out (the request that
// came with it is read and dropped meanwhile). Reset when even the 503 cannot be written.
void LwipHttpListener::refuse(LwipConn& s) {
  ++stats_.refused_busy;
  const StrView busy = server_.refusal();
  const bool written = altcp_sndbuf(s.pcb) >= busy.size() &&
                       altcp_write(s.pcb, busy.data(), static_cast<u16_t>(busy.size()), TCP_WRITE_FLAG_COPY) == ERR_OK;
  if (written) (void)altcp_output(s.pcb);
  release(s, !written);
}

// Offers the queued chains to the engine, pbuf by pbuf, while it takes them; acknowledges what
// it consumed (the window reopens by that much) and frees whole chains.
void LwipHttpListener::offer(LwipConn& s) {
  const uint16_t conn = static_cast<uint16_t>(s.conn);
  const transport::ConnectionHandler h = engine(s);
  u32_t consumed = 0;
  while (s.rx_count != 0 && s.state == LwipConn::State::kOpen && !s.failed) {
    pbuf* head = s.rx[0];
    if (s.rx_off >= head->tot_len) {  // the whole chain is consumed (even if no more is wanted)
      (void)pbuf_free(head);
      for (uint8_t i = 1; i < s.rx_count; ++i) s.rx[i - 1] = s.rx[i];
      s.rx[--s.rx_count] = nullptr;
      s.rx_off = 0;
      continue;
    }
    if (!h.wants_input(conn)) break;
    // The pbuf of the chain at offset rx_off.
    pbuf* q = head;
    u16_t skip = s.rx_off;
    while (q != nullptr && skip >= q->len) {
      skip = static_cast<u16_t>(skip - q->len);
      q = q->next;
    }
    // The engine may close the connection inside receive() (an answer with Connection: close):
    // release() then leaves this chain alone, the engine still reading it, and it is freed here.
    offering_ = &s;
    offer_released_ = false;
    const size_t used = h.receive(conn, static_cast<const char*>(q->payload) + skip, q->len - skip);
    offering_ = nullptr;
    if (offer_released_) {
      (void)pbuf_free(head);
      return;
    }
    s.rx_off = static_cast<u16_t>(s.rx_off + used);
    consumed += static_cast<u32_t>(used);
    if (used == 0) break;
  }
  recved(s, consumed);
}

void LwipHttpListener::recved(LwipConn& s, uint32_t n) {
  while (n != 0 && s.pcb != nullptr && !s.failed) {
    const u16_t k = n > 0xFFFFu ? 0xFFFFu : static_cast<u16_t>(n);
    altcp_recved(s.pcb, k);
    n -= k;
  }
}

// Frees the queued chains; with `ack`, first acknowledges what the engine did not take, so the
// peer's window stays open while the connection lingers.
void LwipHttpListener::free_rx(LwipConn& s, bool ack) {
  uint32_t unread = 0;
  for (uint8_t i = 0; i < s.rx_count; ++i) {
    unread += s.rx[i]->tot_len;
    // The chain the engine is reading right now (offer()) is offer()'s to free.
    if (i != 0 || offering_ != &s) (void)pbuf_free(s.rx[i]);
  }
  if (ack && s.rx_count != 0) recved(s, unread - s.rx_off);
  for (pbuf*& p : s.rx) p = nullptr;
  s.rx_count = 0;
  s.rx_off = 0;
}

// Lets go of the slot's pcb and frees the slot. Gracefully: FIN after what was written, then
// lingering (linger_recv) until the peer's FIN or kLingerTicks; with `abort` (or a dialed
// connection not established yet, which has nothing to finish): RST at once.
void LwipHttpListener::release(LwipConn& s, bool abort) {
  altcp_pcb* pcb = s.failed ? nullptr : s.pcb;
  abort = abort || (s.dialed && !s.established);
  free_rx(s, pcb != nullptr && !abort);
  if (offering_ == &s) offer_released_ = true;
  if (pcb != nullptr) {
    altcp_arg(pcb, nullptr);
    altcp_sent(pcb, nullptr);
    altcp_err(pcb, nullptr);  // lwIP frees what is left of it on its own
    if (abort) {
      altcp_recv(pcb, nullptr);
      altcp_poll(pcb, nullptr, 0);
      altcp_abort(pcb);
    } else {
      altcp_recv(pcb, &linger_recv);
      altcp_poll(pcb, &linger_poll, kLingerTicks);
      if (altcp_shutdown(pcb, 0, 1) != ERR_OK) altcp_abort(pcb);
    }
  }
  s = LwipConn{};
  s.owner = this;
}

LwipConn* LwipHttpListener::by_conn(uint16_t conn, bool dialed) {
  for (LwipConn& s : slots_)
    if (s.dialed == dialed && s.conn == static_cast<int16_t>(conn) &&
        (s.state == LwipConn::State::kOpen || (dialed && s.state == LwipConn::State::kConnecting)))
      return &s;
  return nullptr;
}

// ---- The engines' calls (from the loop, never from inside lwIP) ----------------------------------

Status LwipHttpListener::port_write(uint16_t conn, const char* data, size_t n, size_t* taken) {
  return write_slot(by_conn(conn), data, n, taken);
}

Status LwipHttpListener::write_slot(LwipConn* s, const char* data, size_t n, size_t* taken) {
  *taken = 0;
  if (s == nullptr || s->failed || s->pcb == nullptr) return Status::kClosed;
  if (s->dialed && !s->established) {  // connecting: nothing can be written yet
    s->want_write = true;
    return Status::kOk;
  }
  const size_t room = has_room(s->pcb) ? altcp_sndbuf(s->pcb) : 0;
  size_t k = n < room ? n : room;
  while (k != 0) {
    const u8_t flags = static_cast<u8_t>(TCP_WRITE_FLAG_COPY | (k < n ? TCP_WRITE_FLAG_MORE : 0));
    const err_t e = altcp_write(s->pcb, data, static_cast<u16_t>(k), flags);
    if (e == ERR_OK) break;
    if (e != ERR_MEM) return Status::kIoError;
    // Out of heap or segments, or the piece needs one pbuf more than the queue has left (a
    // write can take two: the end of the last segment and a new one): a smaller piece, down
    // to nothing (then the engine waits, and the stack runs meanwhile).
    ++stats_.write_mem;
    k /= 2;
  }
  // Out now; if lwIP cannot (no pbuf for the header), its timers send it later.
  if (k != 0) (void)altcp_output(s->pcb);
  *taken = k;
  s->want_write = k < n;  // run_once() calls writable() once there is room
  return Status::kOk;
}

Status LwipHttpListener::port_wait_writable(uint16_t conn, uint32_t timeout_ms) {
  return wait_slot(by_conn(conn), timeout_ms);
}

Status LwipHttpListener::wait_slot(LwipConn* s, uint32_t timeout_ms) {
  if (s == nullptr) return Status::kClosed;
  if (pump_ == nullptr) return Status::kWouldBlock;
  const transport::ConnectionHandler clock = engine(*s);
  const uint64_t deadline = clock.now_ms() + timeout_ms;
  // The stack runs first (acknowledgements come in, memory is freed; its callbacks only
  // record), then the connection is asked again: the write that brought the engine here took
  // nothing even if the buffer seemed to have room (the heap or the segment queue was short),
  // so answering from that same state would bring it straight back, the stack never running.
  for (;;) {
    if (clock.now_ms() >= deadline) return Status::kWouldBlock;
    pump_(pump_ctx_);
    if (s->failed || s->pcb == nullptr) return Status::kClosed;
    if ((!s->dialed || s->established) && has_room(s->pcb)) return Status::kOk;
  }
}

// The engine ends the connection. When its last write was refused in part, the engine drops
// what it still held (the peer stopped reading, or lwIP had no memory): no FIN can follow that
// output, and the pcb would sit on the peer's closed window (zero-window probes, for minutes):
// reset instead. Otherwise FIN after the answer, and linger.
void LwipHttpListener::port_close(uint16_t conn) { close_slot(by_conn(conn)); }

void LwipHttpListener::close_slot(LwipConn* s) {
  if (s != nullptr) release(*s, s->want_write);
}

// ---- Dialing -------------------------------------------------------------------------------------

transport::Dialer LwipHttpListener::dialer() {
  transport::Dialer d;
  d.dial = [](void* ctx, const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler handler) {
    return static_cast<LwipHttpListener*>(ctx)->dial(host, port, conn, handler);
  };
  d.port.write = [](void* ctx, uint16_t conn, const char* data, size_t n, size_t* taken) {
    auto* self = static_cast<LwipHttpListener*>(ctx);
    return self->write_slot(self->by_conn(conn, true), data, n, taken);
  };
  d.port.wait_writable = [](void* ctx, uint16_t conn, uint32_t timeout_ms) {
    auto* self = static_cast<LwipHttpListener*>(ctx);
    return self->wait_slot(self->by_conn(conn, true), timeout_ms);
  };
  d.port.close = [](void* ctx, uint16_t conn) {
    auto* self = static_cast<LwipHttpListener*>(ctx);
    self->close_slot(self->by_conn(conn, true));
  };
  d.port.ctx = this;
  d.ctx = this;
  return d;
}

Status LwipHttpListener::dial(const char* host, uint16_t port, uint16_t conn, transport::ConnectionHandler handler) {
  if (host == nullptr || !handler.valid() || by_conn(conn, true) != nullptr) return Status::kInvalidArgument;
  ip_addr_t addr;
  if (ipaddr_aton(host, &addr) == 0) return Status::kNotFound;  // a name: no resolver (LWIP_DNS 0)
  // The highest free slot (accepted connections take the lowest).
  LwipConn* s = nullptr;
  for (size_t i = slots_.size(); i > 0 && s == nullptr; --i)
    if (slots_[i - 1].state == LwipConn::State::kFree) s = &slots_[i - 1];
  if (s == nullptr) return Status::kNoSpace;
  altcp_pcb* pcb = altcp_new_ip_type(nullptr, IP_GET_TYPE(&addr));
  if (pcb == nullptr) return Status::kIoError;
  *s = LwipConn{};
  s->owner = this;
  s->pcb = pcb;
  s->state = LwipConn::State::kConnecting;
  s->conn = static_cast<int16_t>(conn);
  s->handler = handler;
  s->dialed = true;
  // As for an accepted connection: the callbacks only record.
  altcp_arg(pcb, s);
  altcp_recv(pcb, &LwipHttpListener::on_recv);
  altcp_sent(pcb, &LwipHttpListener::on_sent);
  altcp_err(pcb, &LwipHttpListener::on_err);
  altcp_poll(pcb, &LwipHttpListener::on_poll, kPollTicks);
  altcp_nagle_disable(pcb);
  if (altcp_connect(pcb, &addr, port, &LwipHttpListener::on_connected) != ERR_OK) {
    release(*s, true);  // (no route, no memory for the SYN): nothing more is reported
    return Status::kIoError;
  }
  return Status::kOk;
}

}  // namespace lwip
EMCP_NS_END
