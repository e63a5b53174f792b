// bench/target/net.cpp - what an HTTP request over lwIP costs the server on the target, in
// instructions: a TCP connection's opening, MCP requests over Streamable HTTP in it (the same as
// bench/target/tls.cpp sends over TLS and to the HTTP engine alone), and its closing.
//
// Both ends run in this firmware, in one lwIP stack (the board's: emcp_lwip_board, with its pools
// and options), on a network interface of this file's: the server is what the sensors network
// image runs (ports/lwip's LwipHttpListener in front of the HTTP engine and the sensors
// application; the engine sized as tls.cpp's, so that the two figures differ by lwIP and the
// listener alone), listening on 10.0.0.1:80; the client is a raw lwIP TCP pcb connecting to it.
// The interface's output keeps each IP packet in a queue, which this file delivers one packet at
// a time: a packet to the server (to port 80) in a counted window, as the board's loop would take
// a frame from its NIC: a pbuf from lwIP's pool, the packet copied in, lwIP's IP input (and with
// it TCP's, the listener's callbacks, the server's immediate answers), then the listener's
// run_once() (the engine: the request parsed and answered, the answer written into lwIP's
// segments and sent); a packet to the client outside any window (the client's work is another
// machine's). A case's figure is the sum of its windows, until no packet is left.
//
// Not in the count: the Ethernet frame (the interface carries IP packets: no ARP, no Ethernet
// header) and the NIC's registers (a driver's copy is: the pbuf filled), and lwIP's timers (none
// run: the client acknowledges every segment at once, so nothing waits for a delayed ACK).
//
// What makes a count the same on every run: the clock is the firmware's own (fixed), lwIP's
// random numbers a fixed sequence, interrupts masked in every window, and nothing of the
// host's timing reaches the firmware (the cases run at start; the UART only reports).
//
// The firmware prints one line per case (common.h's case_line: in/out are the IP packets' bytes
// each way), then `end`; bench/target/guest_cases.py reads them.
//
// Bench-only firmware (bench/target/firmware.cmake): not in docs/footprint.md, no budget.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "app.h"
#include "board/board.h"
#include "common.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"
#include "lwip/init.h"
#include "lwip/ip4.h"
#include "lwip/netif.h"
#include "lwip/pbuf.h"
#include "lwip/tcp.h"

using bench::fail;
using bench::say;

namespace {

// ---- a fixed clock ------------------------------------------------------------------------------

uint64_t g_now_ms = 1000;
uint64_t bench_now_ms() { return g_now_ms; }

const emcp::Platform g_platform = bench::fixed_platform(&bench_now_ms);

// ---- the wire: IP packets waiting for delivery ---------------------------------------------------

struct Packet {
  uint16_t len;
  uint8_t bytes[1500];
};
constexpr size_t kQueue = 16;
Packet g_queue[kQueue];
size_t g_head = 0;
size_t g_count = 0;

err_t wire_output(struct netif*, struct pbuf* p, const ip4_addr_t*) {
  if (g_count == kQueue || p->tot_len > sizeof g_queue[0].bytes) fail("the wire's queue is full", 0);
  Packet& out = g_queue[(g_head + g_count) % kQueue];
  out.len = pbuf_copy_partial(p, out.bytes, p->tot_len, 0);
  ++g_count;
  return ERR_OK;
}

err_t wire_init(struct netif* netif) {
  netif->name[0] = 'b';
  netif->name[1] = 'w';
  netif->mtu = 1500;
  netif->output = &wire_output;
  netif->flags = 0;  // IP packets: no Ethernet, no ARP
  return ERR_OK;
}

struct netif g_netif;

// The TCP destination port of an IPv4 packet.
uint16_t destination_port(const Packet& p) {
  const size_t ihl = static_cast<size_t>(p.bytes[0] & 0x0F) * 4;
  return static_cast<uint16_t>(p.bytes[ihl + 2] << 8 | p.bytes[ihl + 3]);
}

// ---- the server: the sensors application behind HTTP behind ports/lwip ----------------------------

constexpr uint16_t kPort = 80;
emcp::mcp::Server g_server(app::kServerInfo, g_platform);
emcp::lwip::StaticLwipHttpListener<2> g_listener;
emcp::transport::HttpOptions g_http_options;
emcp::transport::StaticHttpServer<1, 1, 4096, 2048, 2048> g_http(g_server, g_http_options,
                                                                 g_listener.port_interface());

// ---- the client: a raw lwIP TCP pcb --------------------------------------------------------------

tcp_pcb* g_client = nullptr;
bool g_connected = false;
bool g_client_closed = false;  // the server's FIN came
char g_answer[4096];
size_t g_got = 0;

err_t client_connected(void*, tcp_pcb*, err_t err) {
  g_connected = err == ERR_OK;
  return ERR_OK;
}
err_t client_recv(void*, tcp_pcb* pcb, pbuf* p, err_t) {
  if (p == nullptr) {
    g_client_closed = true;
    return ERR_OK;
  }
  const size_t room = sizeof g_answer - 1 - g_got;
  g_got += pbuf_copy_partial(p, g_answer + g_got, static_cast<u16_t>(p->tot_len < room ? p->tot_len : room), 0);
  g_answer[g_got] = '\0';
  tcp_recved(pcb, p->tot_len);
  pbuf_free(p);
  return ERR_OK;
}
void client_err(void*, err_t err) {
  g_client = nullptr;
  fail("the client's connection failed", err);
}

// ---- the count ------------------------------------------------------------------------------------

uint32_t g_windows = 0;
size_t g_in = 0;   // IP bytes to the server in this case
size_t g_out = 0;  // and from it

void begin_case() {
  g_windows = 0;
  g_in = g_out = 0;
}

// Delivers the wire's packets until none is left: the server's in counted windows (each with
// the listener's run_once()), the client's without; the client acknowledges what it received at
// once.
void settle() {
  for (int n = 0; g_count != 0; ++n) {
    if (n == 1000) fail("the packets never stop", 0);
    // (Its slot may be written again by the server's output in the window below: what is needed
    // of it later, its length, is taken first.)
    const Packet& packet = g_queue[g_head];
    const size_t packet_len = packet.len;
    g_head = (g_head + 1) % kQueue;
    --g_count;
    const bool to_server = destination_port(packet) == kPort;
    if (!to_server) {
      pbuf* p = pbuf_alloc(PBUF_RAW, packet.len, PBUF_POOL);
      if (p == nullptr) fail("no pbuf for the client's packet", 0);
      pbuf_take(p, packet.bytes, packet.len);
      if (g_netif.input(p, &g_netif) != ERR_OK) pbuf_free(p);
      if (g_client != nullptr && (g_client->flags & TF_ACK_DELAY) != 0) {
        tcp_set_flags(g_client, TF_ACK_NOW);  // lwIP's tcp_ack_now()
        tcp_output(g_client);
      }
      continue;
    }
    const size_t before = g_count;
    const uint32_t mask = emcp::board::critical_enter();
    emcp_bench_begin();
    pbuf* p = pbuf_alloc(PBUF_RAW, packet.len, PBUF_POOL);
    if (p != nullptr) {
      pbuf_take(p, packet.bytes, packet.len);
      if (g_netif.input(p, &g_netif) != ERR_OK) pbuf_free(p);
    }
    g_listener.run_once();
    emcp_bench_end();
    emcp::board::critical_exit(mask);
    if (p == nullptr) fail("no pbuf for the server's packet", 0);
    ++g_windows;
    g_in += packet_len;
    // What the server sent meanwhile (its packets are the queue's newest).
    for (size_t i = before; i < g_count; ++i) g_out += g_queue[(g_head + i) % kQueue].len;
  }
}

void connect(const char* name) {
  const uint32_t accepted = g_listener.stats().accepted;
  begin_case();
  g_client = tcp_new();
  if (g_client == nullptr) fail("no pcb for the client", 0);
  tcp_recv(g_client, &client_recv);
  tcp_err(g_client, &client_err);
  ip4_addr_t server;
  IP4_ADDR(&server, 10, 0, 0, 1);
  const err_t err = tcp_connect(g_client, &server, kPort, &client_connected);
  if (err != ERR_OK) fail("tcp_connect", err);
  settle();
  if (!g_connected || g_listener.stats().accepted != accepted + 1) fail("the connection was not accepted", 0);
  bench::case_line(name, g_windows, g_in, g_out);
}

const char* request(const char* name, const char* head, const char* body) {
  char text[1024];
  const size_t n = bench::request_text(text, sizeof text, head, body);
  begin_case();
  g_got = 0;
  g_answer[0] = '\0';
  if (g_client == nullptr || tcp_sndbuf(g_client) < n) fail("the client cannot send the request", 0);
  err_t err = tcp_write(g_client, text, static_cast<u16_t>(n), TCP_WRITE_FLAG_COPY);
  if (err == ERR_OK) err = tcp_output(g_client);
  if (err != ERR_OK) fail("the client's write", err);
  settle();
  if (g_got == 0) fail("no answer", 0);
  bench::case_line(name, g_windows, g_in, g_out);
  return g_answer;
}

void disconnect(const char* name) {
  begin_case();
  tcp_arg(g_client, nullptr);
  if (tcp_close(g_client) != ERR_OK) fail("tcp_close", 0);
  settle();
  if (!g_client_closed) fail("the server did not close its side", 0);
  bench::case_line(name, g_windows, g_in, g_out);
}

}  // namespace

// ---- what lwIP needs from the platform (the board's net.cpp has them for its NIC image) -----------
extern "C" {
u32_t sys_now(void) { return static_cast<u32_t>(g_now_ms); }
void emcp_lwip_assert(const char*, const char* file, int line) {
  say("lwip assert ");
  say(file);
  fail("", line);
}
// A fixed sequence (TCP's initial sequence numbers, local ports): the same packets every run.
uint32_t emcp_lwip_rand(void) { return bench::next_random(); }
}

int main() {
  emcp::board::init();
  app::init(g_server, &bench_now_ms);
  g_server.set_page_size(5);
  say("emcp-bench-net on ");
  say(emcp::board::name());
  say(": a TCP connection and HTTP requests over lwIP, the server's part counted\n");
  lwip_init();
  ip4_addr_t address, mask, gateway;
  IP4_ADDR(&address, 10, 0, 0, 1);
  IP4_ADDR(&mask, 255, 255, 255, 0);
  IP4_ADDR(&gateway, 0, 0, 0, 0);
  if (netif_add(&g_netif, &address, &mask, &gateway, nullptr, &wire_init, &ip4_input) == nullptr)
    fail("netif_add", 0);
  netif_set_default(&g_netif);
  netif_set_up(&g_netif);
  netif_set_link_up(&g_netif);
  g_listener.attach(g_http.handler());
  if (g_listener.listen(kPort) != emcp::Status::kOk) fail("listen", 0);
  g_listener.run_once();  // the engine's first poll, before any case

  connect("TCP connection opened (SYN to the engine's open)");
  bench::session_requests("over lwIP", request);
  disconnect("TCP connection closed by the client (FIN to the last ACK)");
  say("end\n");
  for (;;) {
  }
}
