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
//   6  bytes (as 1)
//   7  the connection the listener dials (its dialer(), the slot kept for it) to a peer, a raw
//      lwIP listening pcb on port 1883 whose accepted connection is client 4; the dialing engine
//      keeps what it could not write yet and writes it on writable(). a: 0 dial the peer (the
//      engine's connection, if any, closed first), 1 the engine writes bytes (a length byte,
//      then the bytes), 2 the engine closes, 3 the engine stops / starts taking input, 4 the
//      peer writes bytes (as 1), 5 the peer closes (FIN), 6 the peer aborts (RST), 7 dial a
//      port nothing listens on
// After every op the world steps once and the listener runs once. Checked: no crash, no lwIP
// assertion, no sanitizer report; the engine never has more connections than the listener has
// slots; the dialing engine hears writable() only between its dial and closed(), closed() once;
// at the end of every input, once every client is reset and the timers ran, every slot
// is free (the dialing engine told closed()), every session expired and every lwIP pool is back
// to what it held before (no pcb, segment, pbuf or heap byte leaks across inputs).
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
constexpr uint16_t kPeer = 1883;
constexpr size_t kPeerClient = 4;  // the peer's accepted connection
constexpr size_t kSegments[8] = {1, 3, 16, 100, 536, 1460, 4000, SIZE_MAX};


void on_lwip_assert(const char* message, const char* file, int line) {
  fprintf(stderr, "lwIP assertion: %s (%s:%d)\n", message, file, line);
}

[[noreturn]] void fail(const char* what) {
  fprintf(stderr, "fuzz_lwip_http: %s\n", what);
  abort();
}

emcp::transport::HttpOptions g_options;
emcp::lwip::StaticLwipHttpListener<kConns, 1>* g_net;
emcp::transport::Dialer g_dialer;

// The engine of the dialed connection: takes input when told to, keeps what the port did not
// take and writes it on writable(); closes a connection silent for kSilentMs (as the MQTT client
// closes one whose broker stopped answering: a peer whose RST was lost, lwIP having no memory
// for it, leaves an established connection nobody else ends).
struct DialEngine {
  static constexpr uint64_t kSilentMs = 60000;
  uint16_t conn = 0;
  bool open = false;      // between a dial that returned kOk and closed() (or its own close)
  bool up = false;        // writable() came
  bool take = true;
  uint64_t heard_ms = 0;  // the dial, or the last input
  char out[1024];
  size_t out_len = 0;

  void flush() {
    if (!open || out_len == 0) return;
    size_t taken = 0;
    if (g_dialer.port.write(g_dialer.port.ctx, conn, out, out_len, &taken) != emcp::Status::kOk) {
      close();
      return;
    }
    if (taken > out_len) fail("the port took more than it was offered");
    memmove(out, out + taken, out_len - taken);
    out_len -= taken;
  }
  void close() {
    if (!open) return;
    g_dialer.port.close(g_dialer.port.ctx, conn);
    open = up = false;
    out_len = 0;
  }
  emcp::transport::ConnectionHandler handler();
};
DialEngine g_engine;

const emcp::transport::ConnectionHandler::Ops kEngineOps = {
    /*open*/ [](void*, const emcp::transport::PeerAddress&) { return -1; },
    /*receive*/
    [](void*, uint16_t c, const void*, size_t n) -> size_t {
      if (!g_engine.open || c != g_engine.conn || !g_engine.up) fail("input for a dialed connection that is not up");
      g_engine.heard_ms = fixture::now_ms();
      return g_engine.take ? n : 0;
    },
    /*wants_input*/ [](void*, uint16_t) { return g_engine.take; },
    /*writable*/
    [](void*, uint16_t c) {
      if (!g_engine.open || c != g_engine.conn) fail("writable() for a dialed connection that is not open");
      g_engine.up = true;
      g_engine.flush();
    },
    /*closed*/
    [](void*, uint16_t c) {
      if (!g_engine.open || c != g_engine.conn) fail("closed() for a dialed connection that is not open");
      g_engine.open = g_engine.up = false;
      g_engine.out_len = 0;
    },
    /*poll*/ [](void*) {},
    /*now_ms*/ [](void*) { return fixture::now_ms(); },
    /*refusal*/ [](void*) { return emcp::StrView(); },
};
emcp::transport::ConnectionHandler DialEngine::handler() { return emcp::transport::ConnectionHandler(&kEngineOps, this); }

void dial(uint16_t port) {
  g_engine.close();
  ++g_engine.conn;
  g_engine.take = true;
  if (g_dialer.dial(g_dialer.ctx, "127.0.0.1", port, g_engine.conn, g_engine.handler()) == emcp::Status::kOk) {
    g_engine.open = true;
    g_engine.heard_ms = fixture::now_ms();
  }
}
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
  static emcp::lwip::StaticLwipHttpListener<kConns, 1> net;
  static emcp::transport::StaticHttpServer<kConns, 2, 2048, 512, 600> http(server, g_options, net.port_interface());
  g_net = &net;
  g_http = &http;
  net.attach(http.handler());
  net.set_pump(&lwip_world::pump, nullptr);
  if (net.listen(80) != emcp::Status::kOk) fail("listen");
  if (!lwip_world::listen_peer(kPeer, kPeerClient)) fail("the peer's listen");
  g_dialer = net.dialer();
  lwip_world::set_tick(10);
  g_listening = lwip_world::pools();
}

void run(int steps) {
  for (int i = 0; i < steps; ++i) {
    lwip_world::step();
    g_net->run_once();
    if (g_engine.open && fixture::now_ms() - g_engine.heard_ms > DialEngine::kSilentMs) g_engine.close();
    if (g_http->connections_in_use() > g_net->slots_in_use() || g_net->slots_in_use() > kConns + 2)
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
    // A connection the engine dialed may reach the peer only now (its SYN retransmitted): the
    // peer's machine is gone too, and resets it (the engine must hear closed()).
    for (size_t k = kPeerClient; k < lwip_world::kClients; ++k) lwip_world::client(k).abort();
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
  if (g_engine.open) fail("the dialing engine was not told its connection ended");
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
      case 7: {
        lwip_world::Client& peer = lwip_world::client(kPeerClient);
        switch (a) {
          case 0: dial(kPeer); break;
          case 1:
          case 4: {
            if (i >= size) break;
            size_t n = data[i++];
            if (n > size - i) n = size - i;
            if (a == 4) {
              (void)peer.send(data + i, n);
            } else if (g_engine.open) {
              if (n > sizeof g_engine.out - g_engine.out_len) n = sizeof g_engine.out - g_engine.out_len;
              memcpy(g_engine.out + g_engine.out_len, data + i, n);
              g_engine.out_len += n;
              if (g_engine.up) g_engine.flush();
            }
            i += n;
            break;
          }
          case 2: g_engine.close(); break;
          case 3: g_engine.take = !g_engine.take; break;
          case 5: peer.close(); break;
          case 6: peer.abort(); break;
          default: dial(kPeer + 1); break;
        }
        break;
      }
      default: {  // 1, 6: bytes
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
