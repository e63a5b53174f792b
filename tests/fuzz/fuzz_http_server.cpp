// libFuzzer target: the whole HTTP engine (Streamable HTTP, HTTP+SSE, WebSocket) behind a fake
// port, with the fixture application. The input is a script: each step picks a connection
// (open, bytes, peer close, sends failing, its window shutting or opening) or lets time pass.
// A shut window makes the engine keep output (and resume on writable()) or wait for it
// (wait_writable: every other wait opens the window, the others time out). Checked: no crash or sanitizer
// report; the slots always add up; no byte is lost: bytes a connection refuses (an answer still
// streams) wait, in order, like a socket's, and are offered again after every step, and whenever
// wants_input() says the connection would consume input, receive() takes some of them.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_fakes.h"
#include "../unit/mcp_fixture_app.h"
#include "emcp/transport/http_server.h"

namespace {


bool g_open[4];
bool g_fail[4];  // sends on this connection fail (a peer that went away mid-answer)
// Bytes a connection refused, waiting to be offered again (at most one input's worth).
uint8_t g_waiting[4][1 << 15];
size_t g_waiting_len[4];

size_t g_window[4];  // bytes the connection takes before its window is full
unsigned g_waits = 0;
emcp::Status port_write(void*, uint16_t c, const char*, size_t n, size_t* taken) {
  if (c >= 4 || !g_open[c]) abort();  // never writes to a connection it closed
  *taken = n < g_window[c] ? n : g_window[c];
  if (g_window[c] != SIZE_MAX) g_window[c] -= *taken;
  return g_fail[c] ? emcp::Status::kIoError : emcp::Status::kOk;
}
emcp::Status port_wait(void*, uint16_t c, uint32_t timeout_ms) {
  if (c >= 4 || !g_open[c]) abort();
  if ((++g_waits & 1) != 0) {
    g_window[c] = SIZE_MAX;
    return emcp::Status::kOk;
  }
  fixture::advance_ms(timeout_ms);
  return emcp::Status::kWouldBlock;
}
void port_close(void*, uint16_t c) {
  if (c >= 4) abort();
  g_open[c] = false;
}

emcp::mcp::Server* g_server;
emcp::transport::HttpOptions g_options;
emcp::transport::StaticHttpServer<4, 2, 2048, 400, 600>* g_http;

void setup() {
  static const emcp::Platform platform(&fixture::now_ms, &fuzz_fakes::random);
  static emcp::mcp::Server server(fixture::info(), platform);
  fixture::install(server);
  g_server = &server;
  g_options.sha1 = &fuzz_fakes::sha1;
  g_options.max_body = 8192;
  emcp::transport::HttpPort port;
  port.write = &port_write;
  port.wait_writable = &port_wait;
  port.close = &port_close;
  static emcp::transport::StaticHttpServer<4, 2, 2048, 400, 600> http(server, g_options, port);
  g_http = &http;
}

// Offers connection c what waits for it; wants_input() true means some of it must be taken.
void offer_waiting(uint16_t c) {
  while (g_open[c] && g_waiting_len[c] > 0) {
    const bool wants = g_http->wants_input(c);
    const size_t used = g_http->receive(c, g_waiting[c], g_waiting_len[c]);
    if (used > g_waiting_len[c]) abort();
    if (used == 0) {
      if (wants) abort();  // said it would consume input, then took nothing
      return;
    }
    memmove(g_waiting[c], g_waiting[c] + used, g_waiting_len[c] - used);
    g_waiting_len[c] -= used;
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_http == nullptr) setup();
  if (size > 1 << 15) return 0;
  fuzz_fakes::g_counter = 0;  // the first session of every input gets the same id (the seeds use it)
  size_t i = 0;
  while (i < size) {
    const uint8_t op = data[i++];
    const uint16_t c = op & 3;
    switch ((op >> 2) & 7) {
      case 0: {  // open a connection into slot order
        const int k = g_http->open();
        if (k >= 0) {
          if (g_open[k] || k >= 4) abort();  // the engine gave out a slot in use
          g_open[k] = true;
          g_fail[k] = false;
          g_window[k] = SIZE_MAX;
          g_waiting_len[k] = 0;
        }
        break;
      }
      case 1:  // the peer closes
        if (g_open[c]) {
          g_open[c] = false;
          g_http->closed(c);
        }
        break;
      case 2: {  // time passes
        fixture::advance_ms(static_cast<uint64_t>(op >> 5) * 4000);
        g_http->poll();
        break;
      }
      case 3:
        if (op & 0x80) {
          g_fail[c] = !g_fail[c];  // sends start or stop failing
        } else if ((op & 0x60) == 0x40) {
          g_window[c] = 0;  // the peer stops reading
        } else if ((op & 0x60) == 0x60) {
          if (g_open[c]) {  // it reads 64 bytes
            g_window[c] = g_window[c] == SIZE_MAX ? SIZE_MAX : g_window[c] + 64;
            g_http->writable(c);
          }
        } else {
          (void)fixture::complete_slow();
        }
        break;
      default: {  // bytes: a length byte, then that many bytes
        if (i >= size) break;
        size_t n = data[i++];
        if (n > size - i) n = size - i;
        if (g_open[c]) {  // behind what already waits, as a socket would deliver them
          memcpy(g_waiting[c] + g_waiting_len[c], data + i, n);
          g_waiting_len[c] += n;
        }
        i += n;
        break;
      }
    }
    for (uint16_t k = 0; k < 4; ++k) offer_waiting(k);
    size_t open = 0;
    for (bool b : g_open) open += b ? 1 : 0;
    if (g_http->connections_in_use() != open) abort();
  }
  // Leave no state behind for the next input: close everything, expire sessions.
  for (uint16_t c = 0; c < 4; ++c) {
    if (g_open[c]) {
      g_open[c] = false;
      g_http->closed(c);
    }
    g_waiting_len[c] = 0;
  }
  while (fixture::pending_slow() > 0) (void)fixture::complete_slow();  // frees deferred slots
  fixture::advance_ms(3600u * 1000u);
  g_http->poll();
  if (g_http->connections_in_use() != 0 || g_http->sessions_in_use() != 0) abort();
  return 0;
}
