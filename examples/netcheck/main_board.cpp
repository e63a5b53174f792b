// emcp-netcheck: bring-up firmware for a board's Ethernet (board/net.h over the board's NIC
// driver and lwIP): DHCP, then a TCP echo on port 80 through lwIP's altcp API. Not an MCP
// server: it proves the driver and the lwIP port under load (tests/mcp/board_net.test.mjs).
//
// UART output, one line each: the banner, `mac ...`, then `ip A.B.C.D (dhcp|static)` when the
// interface has an address (`ip none` if it loses it). A received `s` prints the counters and
// lwIP's pool high-water marks (`stats ...`).
//
// The echo keeps what it could not write back yet (lwIP's send buffer, segments or heap were
// short) as the received pbuf chain, and opens the receive window (altcp_recved) only for
// bytes the peer has acknowledged: so a connection never holds more than one window of data,
// and the pbuf pool keeps room for the acknowledgements that free the send buffers.
#include <string.h>

#include "board/board.h"
#include "board/net.h"
#include "emcp/json/number.h"
#include "lwip/altcp.h"
#include "lwip/altcp_tcp.h"
#include "lwip/memp.h"
#include "lwip/stats.h"
#include "lwip/tcp.h"

namespace {

constexpr u16_t kEchoPort = 80;
constexpr u8_t kPollInterval = 2;  // lwIP's coarse timer ticks (500 ms): retry writes and closes

struct Connection {
  struct altcp_pcb* pcb;  // nullptr: the slot is free
  struct pbuf* pending;   // received, not yet written back (a chain), or nullptr
  u16_t offset;           // bytes of `pending`'s first pbuf already written
  bool closing;           // the peer has closed: close once `pending` is written
};
// One slot per TCP PCB lwIP can have (lwipopts.h: MEMP_NUM_TCP_PCB).
Connection g_connections[MEMP_NUM_TCP_PCB];
uint32_t g_accepted = 0, g_refused = 0, g_closed = 0, g_aborted = 0;

void say(const char* s) { emcp::board::uart_write(s, strlen(s)); }

void say_number(uint32_t v) {
  char out[24];
  emcp::board::uart_write(out, emcp::json::format_uint64(v, out));
}

void say_hex_byte(uint8_t b) {
  const char digits[] = "0123456789abcdef";
  const char out[2] = {digits[b >> 4], digits[b & 15]};
  emcp::board::uart_write(out, 2);
}

// ---- the echo -----------------------------------------------------------------------------------
err_t on_recv(void* arg, struct altcp_pcb* pcb, struct pbuf* p, err_t err);
err_t on_sent(void* arg, struct altcp_pcb* pcb, u16_t len);
err_t on_poll(void* arg, struct altcp_pcb* pcb);
void on_err(void* arg, err_t err);

void set_callbacks(struct altcp_pcb* pcb, Connection* c) {
  altcp_arg(pcb, c);
  altcp_recv(pcb, c != nullptr ? &on_recv : nullptr);
  altcp_sent(pcb, c != nullptr ? &on_sent : nullptr);
  altcp_err(pcb, c != nullptr ? &on_err : nullptr);
  altcp_poll(pcb, c != nullptr ? &on_poll : nullptr, kPollInterval);
}

void release(Connection& c) {
  if (c.pending != nullptr) pbuf_free(c.pending);
  c = Connection{};
}

/// Resets the connection (RST); lwIP frees the PCB. Returns ERR_ABRT for the callback to return.
err_t abort_connection(Connection& c) {
  struct altcp_pcb* pcb = c.pcb;
  set_callbacks(pcb, nullptr);
  release(c);
  altcp_abort(pcb);
  ++g_aborted;
  return ERR_ABRT;
}

/// Writes as much of `pending` as lwIP takes; closes when the peer has closed and all is
/// written. ERR_ABRT when the connection was aborted (the PCB is gone), else ERR_OK.
err_t flush(Connection& c) {
  bool wrote = false;
  while (c.pending != nullptr) {
    struct pbuf* q = c.pending;
    const u16_t left = static_cast<u16_t>(q->len - c.offset);
    if (left != 0) {
      const u16_t room = altcp_sndbuf(c.pcb);
      const u16_t n = left < room ? left : room;
      if (n == 0) break;  // the send buffer is full: on_sent continues
      const err_t err = altcp_write(c.pcb, static_cast<const uint8_t*>(q->payload) + c.offset, n, TCP_WRITE_FLAG_COPY);
      if (err == ERR_MEM) break;  // segments or heap short: on_sent, on_poll or the loop retries
      if (err != ERR_OK) return abort_connection(c);
      wrote = true;
      c.offset = static_cast<u16_t>(c.offset + n);
      if (n != left) continue;
    }
    // The first pbuf is written: drop it, keep the rest of the chain.
    c.pending = q->next;
    if (c.pending != nullptr) pbuf_ref(c.pending);
    pbuf_free(q);
    c.offset = 0;
  }
  if (wrote && altcp_output(c.pcb) != ERR_OK) return abort_connection(c);
  if (c.closing && c.pending == nullptr) {
    struct altcp_pcb* pcb = c.pcb;
    set_callbacks(pcb, nullptr);
    if (altcp_close(pcb) != ERR_OK) {  // no memory for the FIN now: on_poll tries again
      set_callbacks(pcb, &c);
      return ERR_OK;
    }
    release(c);
    ++g_closed;
  }
  return ERR_OK;
}

// `err` is always ERR_OK in lwIP 2.1 (and returning anything but ERR_OK or ERR_ABRT would make
// lwIP keep the pbuf as refused data and offer it again: it is never freed here then).
err_t on_recv(void* arg, struct altcp_pcb*, struct pbuf* p, err_t) {
  auto* c = static_cast<Connection*>(arg);
  if (p == nullptr) {  // the peer closed its side
    c->closing = true;
    return flush(*c);
  }
  if (c->pending == nullptr) {
    c->pending = p;
    c->offset = 0;
  } else {
    pbuf_cat(c->pending, p);  // takes over the reference
  }
  return flush(*c);
}

// `len` echoed bytes are acknowledged: the receive window opens by as much (see the top).
err_t on_sent(void* arg, struct altcp_pcb* pcb, u16_t len) {
  altcp_recved(pcb, len);
  return flush(*static_cast<Connection*>(arg));
}

err_t on_poll(void* arg, struct altcp_pcb*) { return flush(*static_cast<Connection*>(arg)); }

// The connection is gone (reset by the peer, or aborted by lwIP): lwIP has freed the PCB.
void on_err(void* arg, err_t) {
  auto* c = static_cast<Connection*>(arg);
  if (c == nullptr) return;
  release(*c);
  ++g_aborted;
}

err_t on_accept(void*, struct altcp_pcb* pcb, err_t err) {
  if (err != ERR_OK || pcb == nullptr) return ERR_VAL;
  for (Connection& c : g_connections) {
    if (c.pcb != nullptr) continue;
    c = Connection{};
    c.pcb = pcb;
    set_callbacks(pcb, &c);
    altcp_nagle_disable(pcb);  // echo small writes at once
    ++g_accepted;
    return ERR_OK;
  }
  ++g_refused;
  altcp_abort(pcb);
  return ERR_ABRT;
}

bool start_echo() {
  struct altcp_pcb* pcb = altcp_tcp_new();
  if (pcb == nullptr) return false;
  if (altcp_bind(pcb, IP_ANY_TYPE, kEchoPort) != ERR_OK) {
    altcp_abort(pcb);
    return false;
  }
  struct altcp_pcb* listener = altcp_listen(pcb);  // frees `pcb` on success
  if (listener == nullptr) {
    altcp_abort(pcb);
    return false;
  }
  altcp_accept(listener, &on_accept);
  return true;
}

/// From the loop: connections that wait for lwIP memory another connection held.
void service_echo() {
  for (Connection& c : g_connections)
    if (c.pcb != nullptr && (c.pending != nullptr || c.closing)) (void)flush(c);
}

// ---- UART reports -------------------------------------------------------------------------------
void on_address(const emcp::board::NetState& state) {
  if (!state.bound) {
    say("ip none\n");
    return;
  }
  char ip[16];
  emcp::board::format_ipv4(state.address, ip);
  say("ip ");
  say(ip);
  say(state.source == emcp::board::NetSource::kDhcp ? " (dhcp)\n" : " (static)\n");
}

void say_pool(const char* name, memp_t pool) {
  say(" ");
  say(name);
  say(" ");
  say_number(lwip_stats.memp[pool]->max);
  say("/");
  say_number(lwip_stats.memp[pool]->avail);
  if (lwip_stats.memp[pool]->err != 0) {
    say(" (");
    say_number(lwip_stats.memp[pool]->err);
    say(" short)");
  }
}

void say_stats() {
  const emcp::board::NetCounters n = emcp::board::net_counters();
  say("stats rx ");
  say_number(n.rx_frames);
  say(" tx ");
  say_number(n.tx_frames);
  say(" rx_dropped ");
  say_number(n.rx_dropped);
  say(" rx_errors ");
  say_number(n.rx_errors);
  say(" tx_dropped ");
  say_number(n.tx_dropped);
  say(" tx_errors ");
  say_number(n.tx_errors);
  say(" accepted ");
  say_number(g_accepted);
  say(" closed ");
  say_number(g_closed);
  say(" aborted ");
  say_number(g_aborted);
  say(" refused ");
  say_number(g_refused);
  // High-water marks: most ever in use / how many there are.
  say_pool("pbuf_pool", MEMP_PBUF_POOL);
  say_pool("tcp_pcb", MEMP_TCP_PCB);
  say_pool("tcp_seg", MEMP_TCP_SEG);
  say(" heap ");
  say_number(lwip_stats.mem.max);
  say("/");
  say_number(lwip_stats.mem.avail);
  say(" stack ");
  say_number(static_cast<uint32_t>(emcp::board::stack_high_water()));
  say("/");
  say_number(static_cast<uint32_t>(emcp::board::stack_size()));
  say("\n");
}

}  // namespace

// EMCP_NETCHECK_NO_MAIN: the loop as netcheck_firmware(), which main_rtos.cpp's task runs.
#if EMCP_NETCHECK_NO_MAIN
void netcheck_firmware() {
#else
int main() {
#endif
  emcp::board::init();
  say("emcp-netcheck on ");
  say(emcp::board::name());
  say(": DHCP, then a TCP echo on port 80; 's' prints the counters\n");
  emcp::board::NetConfig config;
  config.on_address = &on_address;
  if (!emcp::board::net_init(config)) {
    say("net: no NIC answers\n");
    for (;;) emcp::board::idle();
  }
  const emcp::board::NetState state = emcp::board::net_state();
  say("mac ");
  for (unsigned i = 0; i < 6; ++i) {
    if (i != 0) say(":");
    say_hex_byte(state.mac[i]);
  }
  say(state.link_up ? " link up\n" : " link down\n");
  if (!start_echo()) say("echo: cannot listen on port 80\n");
  for (;;) {
    emcp::board::net_poll();
    service_echo();
    uint8_t cmd[16];
    const size_t n = emcp::board::uart_read(cmd, sizeof cmd);
    for (size_t i = 0; i < n; ++i)
      if (cmd[i] == 's') say_stats();
    emcp::board::idle();
  }
}
