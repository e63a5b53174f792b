// The skeleton of ports/template/template_port.h. Every "PORT:" marks what a real platform
// fills in; the rest is the shape every port of emcp has (docs/porting.md).
#include "template_port.h"

namespace template_port {

// ---- 1. Platform --------------------------------------------------------------------------------

namespace {
volatile uint64_t g_ticks = 0;  // PORT: increment in a 1 kHz timer interrupt
}  // namespace

uint64_t now_ms() {
  // A 64-bit counter is not read atomically on a 32-bit core: read until two reads agree.
  uint64_t a, b;
  do {
    a = g_ticks;
    b = g_ticks;
  } while (a != b);
  return a;
}

bool random_bytes(void* out, size_t n) {
  // PORT: read the TRNG (e.g. STM32 RNG->DR after RNG_SR_DRDY, ESP32 esp_fill_random); return
  // false if it reports a seed or clock error. Until then there is no random source.
  (void)out;
  (void)n;
  return false;
}

void log_line(const char* text, size_t n) {
  // PORT: write to a channel that is not the MCP byte stream, then a newline.
  (void)text;
  (void)n;
}

namespace {
volatile bool g_woken = false;  // a post since the loop last looked (read with interrupts masked)
}  // namespace

void wake() {
  // PORT: bare metal: this flag, checked in serve() with interrupts masked before WFI. An RTOS:
  // notify the owner task instead (FreeRTOS: vTaskNotifyGiveFromISR in an interrupt, else
  // xTaskNotifyGive), and let serve() sleep on the notification.
  g_woken = true;
}

uint32_t critical_enter() {
  // PORT: only on a CPU without atomic read-modify-write (Cortex-M0: save PRIMASK, cpsid i;
  // under an RTOS also the scheduler). Elsewhere the inbox never calls it.
  return 0;
}

void critical_exit(uint32_t state) {
  // PORT: restore what critical_enter() saved.
  (void)state;
}

const emcp::Platform& platform() {
  static constexpr emcp::Platform kPlatform{&now_ms,         &random_bytes,   &log_line, nullptr,
                                            &wake,           &critical_enter, &critical_exit};
  return kPlatform;
}

// ---- 2. A byte stream for the stdio transport -----------------------------------------------------

emcp::Status uart_flush(void* ctx, const char* data, size_t n) {
  (void)ctx;
  // PORT: for each byte, wait while the transmitter is full, then write the data register.
  (void)data;
  (void)n;
  return emcp::Status::kOk;
}

size_t uart_read(uint8_t* buf, size_t cap) {
  // PORT: take bytes from the ring buffer the receive interrupt fills.
  (void)buf;
  (void)cap;
  return 0;
}

// ---- 3. HTTP: the network side --------------------------------------------------------------------

emcp::transport::HttpPort Net::port_interface() { return emcp::transport::HttpPort::of(this); }

emcp::Status Net::port_write(uint16_t conn, const char* data, size_t n, size_t* taken) {
  (void)conn;
  (void)data;
  // PORT: room = the connection's free send buffer; queue min(n, room) bytes (copied: `data`
  // is the engine's buffer and changes after this returns); push them out; *taken = that. If
  // it is less than n, mark the connection so run_once() calls writable() when room comes.
  // A connection that failed: return kClosed.
  *taken = 0;
  return n == 0 ? emcp::Status::kOk : emcp::Status::kClosed;
}

emcp::Status Net::port_wait_writable(uint16_t conn, uint32_t timeout_ms) {
  (void)conn;
  (void)timeout_ms;
  // PORT: until the deadline: if the connection has room, return kOk; if it failed, kClosed;
  // else run the stack once (NIC input, its timers; with an RTOS: release the stack's lock,
  // sleep a tick, take it again). The stack's callbacks only record, as always.
  return emcp::Status::kWouldBlock;
}

void Net::port_close(uint16_t conn) {
  (void)conn;
  // PORT: clear the connection's callbacks, close it gracefully (what was written still goes
  // out), free its received buffers and its slot. Report nothing more for it.
}

void Net::run_once() {
  if (!http_.valid()) return;
  // PORT: for each connection the stack accepted: int c = http_.open(peer address); when c < 0, send
  //   http_.refusal() and close it.
  // PORT: for each open connection, in this order:
  //   failed or reset          -> http_.closed(c), free the slot;
  //   marked by write()        -> when it has room again: http_.writable(c);
  //   received bytes           -> while http_.wants_input(c): used = http_.receive(c, p, n);
  //                               acknowledge only `used` bytes to the stack (TCP window);
  //   the peer's FIN, all read -> http_.closed(c), close it.
  const uint64_t now = now_ms();
  if (now - last_poll_ms_ >= 100) {
    last_poll_ms_ = now;
    http_.poll();  // timeouts, heartbeats, session expiry, the server's timeouts
  }
}

// ---- 4. The loop ----------------------------------------------------------------------------------

void serve(emcp::mcp::Server& server, emcp::transport::LineTransport& link, Net* net, void (*tick)()) {
  uint8_t buf[128];
  for (;;) {
    const size_t n = uart_read(buf, sizeof buf);
    if (n != 0) {
      (void)link.feed(buf, n);
      continue;  // drain the UART first
    }
    if (net != nullptr) net->run_once();  // PORT: run the stack's input and timers before it
    if (tick != nullptr) tick();
    g_woken = false;
    server.poll();  // also runs what other tasks and interrupts posted to the inbox
    // PORT: with interrupts masked: unless a byte arrived or g_woken was set meanwhile, sleep
    // until the next interrupt (WFI ends on a pending interrupt even while masked); unmask.
  }
}

}  // namespace template_port
