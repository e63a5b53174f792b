#include "lwip_world.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../unit/mcp_fixture_app.h"
#include "lwip/init.h"
#include "lwip/ip_addr.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/priv/tcp_priv.h"
#include "lwip/prot/ip4.h"
#include "lwip/prot/tcp.h"
#include "lwip/stats.h"
#include "lwip/sys.h"
#include "lwip/tcp.h"
#include "lwip/timeouts.h"

// ---- The platform lwIP needs (arch/cc.h, NO_SYS) ------------------------------------------------

namespace lwip_world {
bool drop_looped(const pbuf* p);
}

namespace {
lwip_world::AssertFn g_on_assert = nullptr;
uint32_t g_rand = 0x2545F491u;
}  // namespace

extern "C" {
u32_t sys_now(void) { return static_cast<u32_t>(fixture::now_ms()); }

void emcp_lwip_assert(const char* message, const char* file, int line) {
  if (g_on_assert != nullptr) g_on_assert(message, file, line);
  fprintf(stderr, "lwIP assertion failed: %s (%s:%d)\n", message, file, line);
  abort();
}

int emcp_lwip_test_ip4_input(struct pbuf* p, struct netif* inp) {
  if (!lwip_world::drop_looped(p)) return emcp_lwip_ip4_input(p, inp);
  (void)pbuf_free(p);
  return 1;
}

uint32_t emcp_lwip_rand(void) {
  // xorshift32: deterministic, so runs repeat.
  g_rand ^= g_rand << 13;
  g_rand ^= g_rand >> 17;
  g_rand ^= g_rand << 5;
  return g_rand;
}
}

namespace lwip_world {

namespace {

bool g_started = false;
Pools g_at_start;
uint32_t g_tick = 2;
void (*g_hook)(void*) = nullptr;
void* g_hook_ctx = nullptr;
uint32_t g_pumps = 0;
Client g_clients[kClients];

const char* const kPoolNames[] = {
#define LWIP_MEMPOOL(name, num, size, desc) #name,
#include "lwip/priv/memp_std.h"
};
static_assert(sizeof kPoolNames / sizeof kPoolNames[0] == MEMP_MAX, "one name per pool");

// Held resources (exhaustion tests).
void* g_held_pcbs[64];
size_t g_held_pcb_count = 0;
pbuf* g_held_pbufs[1024];
size_t g_held_pbuf_count = 0;

// The ACK-storm breaker on the loopback netif (acks_dropped()).
uint32_t g_step = 0;
uint32_t g_acks_dropped = 0;
struct PureAck {
  uint32_t step;
  uint16_t src, dst;
  uint32_t seq, ack;
};
PureAck g_last_acks[16];  // the last one of each direction of recent connections
size_t g_next_ack_slot = 0;

// Data segments per source port (data_segments_from()).
struct SegmentCount {
  uint16_t port;
  uint32_t n;
};
SegmentCount g_segments[32];
size_t g_next_segment_slot = 0;

}  // namespace

// Whether a looped packet is lost on the way (emcp_lwip_test_ip4_input, lwipopts_host.h).
bool drop_looped(const pbuf* p) {
  const auto* bytes = static_cast<const uint8_t*>(p->payload);
  if (p->len >= IP_HLEN && (bytes[0] >> 4) == 4 && bytes[9] == IP_PROTO_TCP) {
    const size_t ihl = (bytes[0] & 0x0Fu) * 4u;
    const size_t total = (static_cast<size_t>(bytes[2]) << 8) | bytes[3];
    if (p->len >= ihl + TCP_HLEN) {
      const auto* tcp = bytes + ihl;
      const size_t hlen = (tcp[12] >> 4) * 4u;
      const uint8_t flags = tcp[13];
      if (total > ihl + hlen) {
        const uint16_t src = static_cast<uint16_t>((tcp[0] << 8) | tcp[1]);
        SegmentCount* slot = nullptr;
        for (SegmentCount& x : g_segments)
          if (x.port == src) slot = &x;
        if (slot == nullptr) {  // a new port: in place of the oldest
          slot = &g_segments[g_next_segment_slot++ % 32];
          *slot = SegmentCount{src, 0};
        }
        ++slot->n;
      }
      const uint16_t window = static_cast<uint16_t>((tcp[14] << 8) | tcp[15]);
      if (total == ihl + hlen && flags == TCP_ACK && window == 0) {
        PureAck a{g_step, static_cast<uint16_t>((tcp[0] << 8) | tcp[1]), static_cast<uint16_t>((tcp[2] << 8) | tcp[3]),
                  (static_cast<uint32_t>(tcp[4]) << 24) | (static_cast<uint32_t>(tcp[5]) << 16) |
                      (static_cast<uint32_t>(tcp[6]) << 8) | tcp[7],
                  (static_cast<uint32_t>(tcp[8]) << 24) | (static_cast<uint32_t>(tcp[9]) << 16) |
                      (static_cast<uint32_t>(tcp[10]) << 8) | tcp[11]};
        PureAck* last = nullptr;
        for (PureAck& x : g_last_acks)
          if (x.src == a.src && x.dst == a.dst) last = &x;
        if (last == nullptr) last = &g_last_acks[g_next_ack_slot++ % 16];
        if (last->step == a.step && last->seq == a.seq && last->ack == a.ack) {
          ++g_acks_dropped;
          return true;  // lost on the way, as a network may lose it
        }
        *last = a;
      }
    }
  }
  return false;
}

namespace {

size_t min3(size_t a, size_t b, size_t c) {
  const size_t m = a < b ? a : b;
  return m < c ? m : c;
}

}  // namespace

void init(AssertFn on_assert) {
  g_on_assert = on_assert;
  if (g_started) return;
  g_started = true;
  lwip_init();
  g_at_start = pools();
}

uint32_t acks_dropped() { return g_acks_dropped; }

uint32_t data_segments_from(uint16_t port) {
  for (const SegmentCount& x : g_segments)
    if (x.port == port) return x.n;
  return 0;
}

const char* check_pcb_lists() {
  const tcp_pcb* seen[MEMP_NUM_TCP_PCB + 1];
  size_t n = 0;
  for (tcp_pcb* list : {tcp_bound_pcbs, tcp_active_pcbs, tcp_tw_pcbs}) {
    for (const tcp_pcb* p = list; p != nullptr; p = p->next) {
      for (size_t i = 0; i < n; ++i)
        if (seen[i] == p) return "a TCP pcb is listed twice (a cycle, or on two lists)";
      if (n == MEMP_NUM_TCP_PCB) return "more TCP pcbs listed than the pool holds";
      seen[n++] = p;
    }
  }
  if (n + g_held_pcb_count > lwip_stats.memp[MEMP_TCP_PCB]->used) return "a listed TCP pcb is back in the pool";
  return nullptr;
}

bool server_pcb_for(uint16_t client_port, uint16_t port) { return server_pcb_state(client_port, port) >= 0; }

int server_pcb_state(uint16_t client_port, uint16_t port) {
  for (tcp_pcb* list : {tcp_active_pcbs, tcp_tw_pcbs})
    for (const tcp_pcb* p = list; p != nullptr; p = p->next)
      if (p->local_port == port && p->remote_port == client_port) return static_cast<int>(p->state);
  return -1;
}

void set_tick(uint32_t ms) { g_tick = ms; }
uint32_t tick() { return g_tick; }

void set_hook(void (*hook)(void*), void* ctx) {
  g_hook = hook;
  g_hook_ctx = ctx;
}

void step() {
  ++g_step;
  if (g_hook != nullptr) g_hook(g_hook_ctx);
  for (Client& c : g_clients) c.act();
  netif_poll_all();
  sys_check_timeouts();
  fixture::advance_ms(g_tick);
}

void pump(void*) {
  ++g_pumps;
  step();
}

uint32_t pumps() { return g_pumps; }

Pools pools() {
  Pools p;
  for (size_t i = 0; i < MEMP_MAX; ++i) p.memp[i] = lwip_stats.memp[i]->used;
  p.mem = lwip_stats.mem.used;
  return p;
}

bool same(const Pools& now, const Pools& before, char* why, size_t cap) {
  bool equal = true;
  size_t len = 0;
  if (cap != 0) why[0] = '\0';
  for (size_t i = 0; i <= MEMP_MAX; ++i) {
    const uint32_t a = i < MEMP_MAX ? now.memp[i] : now.mem;
    const uint32_t b = i < MEMP_MAX ? before.memp[i] : before.mem;
    if (a == b) continue;
    equal = false;
    if (len < cap) {
      const int k = snprintf(why + len, cap - len, "%s%s %u (was %u)", len == 0 ? "" : ", ",
                             i < MEMP_MAX ? kPoolNames[i] : "MEM", static_cast<unsigned>(a), static_cast<unsigned>(b));
      if (k > 0) len += static_cast<size_t>(k);
    }
  }
  return equal;
}

const Pools& at_start() { return g_at_start; }

size_t hold_pcbs(size_t keep_free) {
  while (g_held_pcb_count < sizeof g_held_pcbs / sizeof g_held_pcbs[0]) {
    void* p = memp_malloc(MEMP_TCP_PCB);
    if (p == nullptr) break;
    g_held_pcbs[g_held_pcb_count++] = p;
  }
  for (size_t i = 0; i < keep_free && g_held_pcb_count != 0; ++i) memp_free(MEMP_TCP_PCB, g_held_pcbs[--g_held_pcb_count]);
  return g_held_pcb_count;
}

size_t hold_heap() {
  size_t bytes = 0;
  for (u16_t size = 4096; size >= 8; size = static_cast<u16_t>(size / 2)) {
    while (g_held_pbuf_count < sizeof g_held_pbufs / sizeof g_held_pbufs[0]) {
      pbuf* p = pbuf_alloc(PBUF_RAW, size, PBUF_RAM);
      if (p == nullptr) break;
      g_held_pbufs[g_held_pbuf_count++] = p;
      bytes += size;
    }
  }
  return bytes;
}

void release_held() {
  while (g_held_pcb_count != 0) memp_free(MEMP_TCP_PCB, g_held_pcbs[--g_held_pcb_count]);
  while (g_held_pbuf_count != 0) (void)pbuf_free(g_held_pbufs[--g_held_pbuf_count]);
}

bool holding() { return g_held_pcb_count != 0 || g_held_pbuf_count != 0; }

Client& client(size_t i) { return g_clients[i]; }

void abort_clients() {
  for (Client& c : g_clients) c.abort();
}

size_t abort_strays(uint16_t server_port) {
  size_t n = 0;
  for (bool found = true; found && n <= MEMP_NUM_TCP_PCB;) {
    found = false;
    for (tcp_pcb* p = tcp_active_pcbs; p != nullptr; p = p->next) {
      // The server's, and those a port still owns (altcp's error callback: a dialed connection
      // lingering, which altcp must see end).
      if (p->local_port == server_port || p->errf != nullptr) continue;
      tcp_arg(p, nullptr);
      tcp_recv(p, nullptr);
      tcp_err(p, nullptr);
      tcp_abort(p);  // the list changed: from the start again
      ++n;
      found = true;
      break;
    }
  }
  return n;
}

size_t open_clients() {
  size_t n = 0;
  for (const Client& c : g_clients) n += c.open() ? 1 : 0;
  return n;
}

// ---- The peer that accepts (listen_peer) -----------------------------------------------------------

namespace {
tcp_pcb* g_peer = nullptr;
size_t g_peer_first = 0;
uint32_t g_peer_accepted = 0;

// Records only: the accepted pcb goes to a free client (storing its callbacks, as lwIP requires
// before this returns).
err_t peer_accept(void*, tcp_pcb* pcb, err_t err) {
  if (err != ERR_OK || pcb == nullptr) return ERR_VAL;
  for (size_t i = g_peer_first; i < kClients; ++i) {
    if (g_clients[i].open()) continue;
    g_clients[i].adopt(pcb);
    ++g_peer_accepted;
    return ERR_OK;
  }
  return ERR_MEM;  // lwIP resets the connection
}
}  // namespace

bool listen_peer(uint16_t port, size_t first) {
  stop_peer();
  tcp_pcb* pcb = tcp_new();
  if (pcb == nullptr) return false;
  ip_addr_t lo = IPADDR4_INIT_BYTES(127, 0, 0, 1);
  if (tcp_bind(pcb, &lo, port) != ERR_OK) {
    tcp_abort(pcb);
    return false;
  }
  tcp_pcb* l = tcp_listen(pcb);  // frees `pcb`, also when it fails
  if (l == nullptr) return false;
  tcp_accept(l, &peer_accept);
  g_peer = l;
  g_peer_first = first;
  g_peer_accepted = 0;
  return true;
}

void stop_peer() {
  if (g_peer == nullptr) return;
  tcp_accept(g_peer, nullptr);
  (void)tcp_close(g_peer);  // a listening pcb is always freed
  g_peer = nullptr;
}

uint32_t peer_accepted() { return g_peer_accepted; }

// ---- Client --------------------------------------------------------------------------------------

void Client::reset() {
  abort();
  connected_ = fin_ = reset_ = overflow_ = shutdown_when_sent_ = shut_ = false;
  error_ = ERR_OK;
  segment_ = SIZE_MAX;
  read_per_step_ = SIZE_MAX;
  unread_ = received_total_ = rx_len_ = tx_len_ = tx_off_ = 0;
  port_ = 0;
}

bool Client::connect(uint16_t port, uint16_t local_port) {
  reset();
  tcp_pcb* pcb = tcp_new();
  if (pcb == nullptr) return false;
  tcp_arg(pcb, this);
  tcp_recv(pcb, &Client::on_recv);
  tcp_err(pcb, &Client::on_err);
  tcp_nagle_disable(pcb);
  ip_addr_t lo = IPADDR4_INIT_BYTES(127, 0, 0, 1);
  pcb_ = pcb;
  if ((local_port != 0 && tcp_bind(pcb, &lo, local_port) != ERR_OK) ||
      tcp_connect(pcb, &lo, port, &Client::on_connected) != ERR_OK) {
    abort();
    return false;
  }
  port_ = pcb->local_port;
  return true;
}

void Client::adopt(tcp_pcb* pcb) {
  reset();
  pcb_ = pcb;
  tcp_arg(pcb, this);
  tcp_recv(pcb, &Client::on_recv);
  tcp_err(pcb, &Client::on_err);
  tcp_nagle_disable(pcb);
  connected_ = true;
  port_ = pcb->local_port;
}

bool Client::send(const void* data, size_t n) {
  if (tx_off_ != 0) {  // make room: what was written goes
    memmove(tx_, tx_ + tx_off_, tx_len_ - tx_off_);
    tx_len_ -= tx_off_;
    tx_off_ = 0;
  }
  if (n > kTx - tx_len_) return false;
  if (n != 0) memcpy(tx_ + tx_len_, data, n);
  tx_len_ += n;
  return true;
}

void Client::consume(size_t n) {
  if (n > rx_len_) n = rx_len_;
  memmove(rx_, rx_ + n, rx_len_ - n);
  rx_len_ -= n;
}

void Client::detach() {
  tcp_arg(pcb_, nullptr);
  tcp_recv(pcb_, nullptr);  // lwIP's tcp_recv_null takes (and acknowledges) what still comes
  tcp_err(pcb_, nullptr);
}

void Client::close() {
  if (pcb_ == nullptr) return;
  while (unread_ != 0) {  // what the application has not read yet: read now (no RST for it)
    const u16_t k = static_cast<u16_t>(unread_ > 0xFFFF ? 0xFFFF : unread_);
    tcp_recved(pcb_, k);
    unread_ -= k;
  }
  detach();
  if (tcp_close(pcb_) != ERR_OK) tcp_abort(pcb_);
  pcb_ = nullptr;
}

void Client::abort() {
  if (pcb_ == nullptr) return;
  detach();
  tcp_abort(pcb_);
  pcb_ = nullptr;
}

void Client::act() {
  if (pcb_ == nullptr) return;
  if (unread_ != 0 && read_per_step_ != 0) {
    size_t k = unread_ < read_per_step_ ? unread_ : read_per_step_;
    unread_ -= k;
    while (k != 0) {
      const u16_t m = static_cast<u16_t>(k > 0xFFFF ? 0xFFFF : k);
      tcp_recved(pcb_, m);
      k -= m;
    }
  }
  if (!connected_ || shut_) return;
  if (tx_off_ < tx_len_) {
    size_t room = tcp_sndbuf(pcb_);
    if (tcp_sndqueuelen(pcb_) >= TCP_SND_QUEUELEN) room = 0;
    const size_t k = min3(tx_len_ - tx_off_, room, segment_ < 0xFFFF ? segment_ : 0xFFFF);
    if (k != 0 && tcp_write(pcb_, tx_ + tx_off_, static_cast<u16_t>(k), TCP_WRITE_FLAG_COPY) == ERR_OK) {
      tx_off_ += k;
      (void)tcp_output(pcb_);
    }
  }
  if (tx_off_ == tx_len_ && shutdown_when_sent_) {
    if (tcp_shutdown(pcb_, 0, 1) == ERR_OK) shut_ = true;
  }
}

// The callbacks record and free what lwIP hands over; nothing else.
err_t Client::on_connected(void* arg, tcp_pcb*, err_t) {
  auto* c = static_cast<Client*>(arg);
  if (c != nullptr) c->connected_ = true;
  return ERR_OK;
}

err_t Client::on_recv(void* arg, tcp_pcb* pcb, pbuf* p, err_t) {
  auto* c = static_cast<Client*>(arg);
  if (p == nullptr) {
    if (c == nullptr) return ERR_OK;
    c->fin_ = true;
    if (c->shut_) {
      // Both sides are done: the pcb goes to TIME_WAIT (or CLOSING), where lwIP frees it
      // without a word (expiry, or tcp_alloc reusing it). lwIP requires the close now, from
      // here, as its own tcp_recv_null does: afterwards the pcb is lwIP's alone.
      c->detach();
      c->pcb_ = nullptr;
      if (tcp_close(pcb) != ERR_OK) {
        tcp_abort(pcb);
        return ERR_ABRT;
      }
    }
    return ERR_OK;
  }
  if (c != nullptr) {
    for (const pbuf* q = p; q != nullptr; q = q->next) {
      size_t n = q->len;
      if (n > kRx - c->rx_len_) {
        n = kRx - c->rx_len_;
        c->overflow_ = true;
      }
      memcpy(c->rx_ + c->rx_len_, q->payload, n);
      c->rx_len_ += n;
    }
    c->unread_ += p->tot_len;
    c->received_total_ += p->tot_len;
  }
  (void)pbuf_free(p);
  return ERR_OK;
}

void Client::on_err(void* arg, err_t err) {
  // lwIP has freed the pcb (RST, retransmissions given up, out of memory).
  auto* c = static_cast<Client*>(arg);
  if (c == nullptr) return;
  c->pcb_ = nullptr;
  c->reset_ = true;
  c->error_ = err;
}

}  // namespace lwip_world
