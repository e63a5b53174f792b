#include "emcp/lwip/http_listener.h"

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
}  // namespace

LwipHttpListener::LwipHttpListener(Span<LwipConn> slots) : slots_(slots) {
  for (LwipConn& s : slots_) s.owner = this;
}

LwipHttpListener::~LwipHttpListener() { stop(); }

transport::HttpPort LwipHttpListener::port_interface() {
  transport::HttpPort p;
  p.write = &LwipHttpListener::write_cb;
  p.wait_writable = &LwipHttpListener::wait_cb;
  p.close = &LwipHttpListener::close_cb;
  p.ctx = this;
  return p;
}

Status LwipHttpListener::listen(uint16_t port, altcp_allocator_s* allocator) {
  if (server_ == nullptr || listen_pcb_ != nullptr) return Status::kInvalidState;
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
  return Status::kOk;
}

void LwipHttpListener::stop() {
  for (LwipConn& s : slots_) {
    if (s.state == LwipConn::State::kFree) continue;
    if (s.conn >= 0 && server_ != nullptr) server_->closed(static_cast<uint16_t>(s.conn));
    release(s, true);
  }
  if (listen_pcb_ != nullptr) {
    altcp_arg(listen_pcb_, nullptr);
    altcp_accept(listen_pcb_, nullptr);
    if (altcp_close(listen_pcb_) != ERR_OK) altcp_abort(listen_pcb_);
    listen_pcb_ = nullptr;
  }
}

size_t LwipHttpListener::slots_in_use() const {
  size_t n = 0;
  for (const LwipConn& s : slots_) n += s.state != LwipConn::State::kFree ? 1 : 0;
  return n;
}

// ---- lwIP's callbacks: record only ---------------------------------------------------------------

err_t LwipHttpListener::on_accept(void* arg, altcp_pcb* pcb, err_t err) {
  auto* self = static_cast<LwipHttpListener*>(arg);
  if (err != ERR_OK || pcb == nullptr) return ERR_VAL;
  LwipConn* slot = nullptr;
  for (LwipConn& s : self->slots_) {
    if (s.state == LwipConn::State::kFree) {
      slot = &s;
      break;
    }
  }
  if (slot == nullptr) {
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

err_t LwipHttpListener::on_recv(void* arg, altcp_pcb*, pbuf* p, err_t err) {
  auto* s = static_cast<LwipConn*>(arg);
  if (s == nullptr) return ERR_ABRT;  // not ours any more (never: the callbacks are cleared)
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
  if (server_ == nullptr) return;
  for (LwipConn& s : slots_) {
    if (s.state == LwipConn::State::kAccepted) open_accepted(s);
    if (s.state != LwipConn::State::kOpen) continue;
    const uint16_t conn = static_cast<uint16_t>(s.conn);
    if (s.failed) {
      release(s, false);
      server_->closed(conn);
      continue;
    }
    if (s.want_write && altcp_sndbuf(s.pcb) != 0) {
      s.want_write = false;
      server_->writable(conn);  // may close it (close_cb)
      if (s.state != LwipConn::State::kOpen) continue;
    }
    offer(s);
    if (s.state != LwipConn::State::kOpen) continue;
    if (s.fin && s.rx_count == 0) {
      // The peer is done: nothing more can be asked on this connection. (An answer still
      // being prepared for it is lost, as with a socket the client closed.)
      release(s, false);
      server_->closed(conn);
    }
  }
  const uint64_t now = server_->mcp().now();
  if (poll_due_ || now - last_poll_ms_ >= poll_ms) {
    poll_due_ = false;
    last_poll_ms_ = now;
    server_->poll();
  }
}

void LwipHttpListener::open_accepted(LwipConn& s) {
  if (s.failed) {
    release(s, false);
    return;
  }
  const int conn = server_->open();
  bool taken = false;
  for (const LwipConn& o : slots_) taken = taken || (o.state == LwipConn::State::kOpen && o.conn == conn);
  if (conn < 0 || taken) {
    if (conn >= 0) server_->closed(static_cast<uint16_t>(conn));
    refuse(s);
    return;
  }
  s.conn = static_cast<int16_t>(conn);
  s.state = LwipConn::State::kOpen;
  altcp_nagle_disable(s.pcb);
  ++stats_.accepted;
}

// 503 to a connection beyond the engine's slots; it closes once that is out.
void LwipHttpListener::refuse(LwipConn& s) {
  ++stats_.refused_busy;
  const StrView busy = transport::HttpServer::busy_response();
  free_rx(s);
  if (altcp_sndbuf(s.pcb) >= busy.size() &&
      altcp_write(s.pcb, busy.data(), static_cast<u16_t>(busy.size()), TCP_WRITE_FLAG_COPY) == ERR_OK) {
    (void)altcp_output(s.pcb);
  }
  release(s, false);  // closes after the 503
}

// Offers the queued chains to the engine, pbuf by pbuf, while it takes them; acknowledges what
// it consumed (the window reopens by that much) and frees whole chains.
void LwipHttpListener::offer(LwipConn& s) {
  const uint16_t conn = static_cast<uint16_t>(s.conn);
  u32_t consumed = 0;
  while (s.rx_count != 0 && s.state == LwipConn::State::kOpen && server_->wants_input(conn)) {
    pbuf* head = s.rx[0];
    // The pbuf of the chain at offset rx_off.
    pbuf* q = head;
    u16_t skip = s.rx_off;
    while (q != nullptr && skip >= q->len) {
      skip = static_cast<u16_t>(skip - q->len);
      q = q->next;
    }
    if (q == nullptr) {  // the whole chain is consumed
      (void)pbuf_free(head);
      for (uint8_t i = 1; i < s.rx_count; ++i) s.rx[i - 1] = s.rx[i];
      s.rx[--s.rx_count] = nullptr;
      s.rx_off = 0;
      continue;
    }
    const size_t used = server_->receive(conn, static_cast<const char*>(q->payload) + skip, q->len - skip);
    if (s.state != LwipConn::State::kOpen) return;  // the engine closed it meanwhile
    s.rx_off = static_cast<u16_t>(s.rx_off + used);
    consumed += static_cast<u32_t>(used);
    if (used == 0) break;
  }
  while (consumed != 0) {
    const u16_t k = consumed > 0xFFFFu ? 0xFFFFu : static_cast<u16_t>(consumed);
    altcp_recved(s.pcb, k);
    consumed -= k;
  }
}

void LwipHttpListener::free_rx(LwipConn& s) {
  for (uint8_t i = 0; i < s.rx_count; ++i) (void)pbuf_free(s.rx[i]);
  for (pbuf*& p : s.rx) p = nullptr;
  s.rx_count = 0;
  s.rx_off = 0;
}

// Lets go of the slot's pcb (closed gracefully after what was written, or aborted) and frees
// the slot.
void LwipHttpListener::release(LwipConn& s, bool abort) {
  free_rx(s);
  if (s.pcb != nullptr) {
    altcp_pcb* pcb = s.pcb;
    altcp_arg(pcb, nullptr);
    altcp_recv(pcb, nullptr);
    altcp_sent(pcb, nullptr);
    altcp_err(pcb, nullptr);
    altcp_poll(pcb, nullptr, 0);
    if (abort || altcp_close(pcb) != ERR_OK) altcp_abort(pcb);
  }
  s = LwipConn{};
  s.owner = this;
}

LwipConn* LwipHttpListener::by_conn(uint16_t conn) {
  for (LwipConn& s : slots_)
    if (s.state == LwipConn::State::kOpen && s.conn == static_cast<int16_t>(conn)) return &s;
  return nullptr;
}

// ---- The engine's calls (from the loop, never from inside lwIP) ----------------------------------

Status LwipHttpListener::write_cb(void* ctx, uint16_t conn, const char* data, size_t n, size_t* taken) {
  auto* self = static_cast<LwipHttpListener*>(ctx);
  *taken = 0;
  LwipConn* s = self->by_conn(conn);
  if (s == nullptr || s->failed || s->pcb == nullptr) return Status::kClosed;
  size_t room = altcp_sndbuf(s->pcb);
  if (altcp_sndqueuelen(s->pcb) >= TCP_SND_QUEUELEN) room = 0;  // no segment left to queue in
  size_t k = n < room ? n : room;
  while (k != 0) {
    const u8_t flags = static_cast<u8_t>(TCP_WRITE_FLAG_COPY | (k < n ? TCP_WRITE_FLAG_MORE : 0));
    const err_t e = altcp_write(s->pcb, data, static_cast<u16_t>(k), flags);
    if (e == ERR_OK) break;
    if (e != ERR_MEM) return Status::kIoError;
    // Out of pbufs or segments: try a smaller piece, else wait for the queue to drain.
    ++self->stats_.write_mem;
    k = k > 536 ? 536 : 0;
  }
  // Out now; if lwIP cannot (no pbuf for the header), its timers send it later.
  if (k != 0) (void)altcp_output(s->pcb);
  *taken = k;
  if (k < n) s->want_write = true;
  return Status::kOk;
}

Status LwipHttpListener::wait_cb(void* ctx, uint16_t conn, uint32_t timeout_ms) {
  auto* self = static_cast<LwipHttpListener*>(ctx);
  LwipConn* s = self->by_conn(conn);
  if (s == nullptr) return Status::kClosed;
  if (self->pump_ == nullptr) return Status::kWouldBlock;
  mcp::Server& clock = self->server_->mcp();
  const uint64_t deadline = clock.now() + timeout_ms;
  for (;;) {
    if (s->failed || s->pcb == nullptr) return Status::kClosed;
    if (altcp_sndbuf(s->pcb) != 0 && altcp_sndqueuelen(s->pcb) < TCP_SND_QUEUELEN) return Status::kOk;
    if (clock.now() >= deadline) return Status::kWouldBlock;
    // The stack runs (acknowledgements come in); its callbacks only record.
    self->pump_(self->pump_ctx_);
  }
}

void LwipHttpListener::close_cb(void* ctx, uint16_t conn) {
  auto* self = static_cast<LwipHttpListener*>(ctx);
  LwipConn* s = self->by_conn(conn);
  if (s != nullptr) self->release(*s, false);
}

}  // namespace lwip
EMCP_NS_END
