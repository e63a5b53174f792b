// libFuzzer target: the lwIP port (emcp::lwip::LwipHttpListener) serving the HTTP engine with
// the fixture application, in one lwIP stack with its loopback netif, and four clients that are
// raw lwIP TCP pcbs of the same stack (tests/lwip/lwip_world.h). Both ends are real lwIP TCP, so
// the input drives windows, segment splits, pbuf chains, FIN, RST, retransmissions and pool
// exhaustion, not just bytes.
//
// The input is a script: an op byte, bits 0-1 the client, bits 2-4 the action, bits 5-7 its
// argument (a):
//   0  connect (the client's earlier connection, if any, is reset)
//   1  bytes: a length byte, then that many bytes, queued to be written in segments of at most
//      kSegments[a] bytes
//   2  time passes: (a + 1) * 8 steps of the world and the listener
//   3  reading: a = 0 stops reading (its window closes), 1 reads everything, 2 16 bytes per
//      step, 3 200 per step; 4 half-closes (FIN) once its bytes are written; 5 answers the
//      oldest deferred call (the `slow` tool); 6 holds lwIP's heap / gives it back; 7 holds
//      every free TCP pcb but one / gives them back (a client that connects takes the last one,
//      and the server has none for its SYN)
//   4  close (FIN after reading what came)
//   5  abort (RST)
//   6, 7  bytes (as 1)
// After every op the world steps once and the listener runs once. Checked: no crash, no lwIP
// assertion, no sanitizer report; the engine never has more connections than the listener has
// slots; at the end of every input, once every client is reset and the timers ran, every slot
// is free, every session expired and every lwIP pool is back to what it held before (no pcb,
// segment, pbuf or heap byte leaks across inputs).
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_fakes.h"
#include "../lwip/lwip_world.h"
#include "../unit/mcp_fixture_app.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/transport/http_server.h"

namespace {

constexpr size_t kConns = 3;
constexpr size_t kClients = 4;
constexpr size_t kSegments[8] = {1, 3, 16, 100, 536, 1460, 4000, SIZE_MAX};


void on_lwip_assert(const char* message, const char* file, int line) {
  fprintf(stderr, "lwIP assertion: %s (%s:%d)\n", message, file, line);
}

[[noreturn]] void fail(const char* what) {
  fprintf(stderr, "fuzz_lwip_http: %s\n", what);
  abort();
}

emcp::transport::HttpOptions g_options;
emcp::lwip::StaticLwipHttpListener<kConns>* g_net;
emcp::transport::StaticHttpServer<kConns, 2, 2048, 512, 600>* g_http;
lwip_world::Pools g_listening;

void setup() {
  lwip_world::init(&on_lwip_assert);
  static const emcp::Platform platform(&fixture::now_ms, &fuzz_fakes::random);
  static emcp::mcp::Server server(fixture::info(), platform);
  fixture::install(server);
  g_options.sha1 = &fuzz_fakes::sha1;
  g_options.max_body = 8192;
  // Short timeouts: more of them happen within an input.
  g_options.send_timeout_ms = 500;
  g_options.head_timeout_ms = 2000;
  g_options.body_timeout_ms = 2000;
  g_options.keepalive_ms = 5000;
  g_options.heartbeat_ms = 1000;
  static emcp::lwip::StaticLwipHttpListener<kConns> net;
  static emcp::transport::StaticHttpServer<kConns, 2, 2048, 512, 600> http(server, g_options, net.port_interface());
  g_net = &net;
  g_http = &http;
  net.attach(http.handler());
  net.set_pump(&lwip_world::pump, nullptr);
  if (net.listen(80) != emcp::Status::kOk) fail("listen");
  lwip_world::set_tick(10);
  g_listening = lwip_world::pools();
}

void run(int steps) {
  for (int i = 0; i < steps; ++i) {
    lwip_world::step();
    g_net->run_once();
    if (g_http->connections_in_use() > g_net->slots_in_use() || g_net->slots_in_use() > kConns + 1)
      fail("the engine's connections and the listener's slots disagree");
    if (const char* wrong = lwip_world::check_pcb_lists()) fail(wrong);
  }
}

// Every client reset (and what lwIP still holds of closed ones), the timers run: everything
// is free again (or the input leaked).
void settle() {
  lwip_world::abort_clients();
  lwip_world::release_held();
  (void)lwip_world::abort_strays(80);
  while (fixture::pending_slow() > 0) (void)fixture::complete_slow();
  lwip_world::set_tick(250);
  bool quiet = false;
  for (int i = 0; i < 2400 && !quiet; ++i) {  // 10 min: lwIP backs its retransmissions off to minutes
    run(1);
    quiet = g_http->connections_in_use() == 0 && g_net->slots_in_use() == 0 &&
            lwip_world::same(lwip_world::pools(), g_listening, nullptr, 0);
  }
  fixture::advance_ms(3600u * 1000u);  // sessions expire
  run(1);
  lwip_world::set_tick(10);
  char why[512];
  if (!lwip_world::same(lwip_world::pools(), g_listening, why, sizeof why)) {
    fprintf(stderr, "lwIP pools after the input: %s\n", why);
    fail("lwIP pools not back to where they were");
  }
  if (g_http->connections_in_use() != 0 || g_net->slots_in_use() != 0) fail("a connection outlived its client");
  if (g_http->sessions_in_use() != 0) fail("a session outlived the idle timeout");
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (g_http == nullptr) setup();
  if (size > 4096) return 0;
  fuzz_fakes::g_counter = 0;  // the first session of every input gets the same id (the seeds use it)
  for (size_t k = 0; k < kClients; ++k) lwip_world::client(k).reset();
  size_t i = 0;
  while (i < size) {
    const uint8_t op = data[i++];
    lwip_world::Client& c = lwip_world::client(op & 3);
    const uint8_t a = static_cast<uint8_t>(op >> 5);
    switch ((op >> 2) & 7) {
      case 0:
        (void)c.connect(80);
        break;
      case 2:
        run((a + 1) * 8);
        break;
      case 3:
        switch (a) {
          case 0: c.set_read(0); break;
          case 1: c.set_read(SIZE_MAX); break;
          case 2: c.set_read(16); break;
          case 3: c.set_read(200); break;
          case 4: c.shutdown_when_sent(); break;
          case 5: (void)fixture::complete_slow(); break;
          case 6:
            if (lwip_world::holding()) lwip_world::release_held();
            else (void)lwip_world::hold_heap();
            break;
          default:
            if (lwip_world::holding()) lwip_world::release_held();
            else (void)lwip_world::hold_pcbs(1);  // a client may take the last: none for the server
            break;
        }
        break;
      case 4:
        c.close();
        break;
      case 5:
        c.abort();
        break;
      default: {  // 1, 6, 7: bytes
        if (i >= size) break;
        size_t n = data[i++];
        if (n > size - i) n = size - i;
        c.set_segment(kSegments[a]);
        (void)c.send(data + i, n);
        i += n;
        break;
      }
    }
    run(1);
  }
  settle();
  return 0;
}
