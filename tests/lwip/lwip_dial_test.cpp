// The lwIP port's outbound connections (LwipHttpListener::dialer(), transport::Dialer) on the
// host, in one process: the listener serving the HTTP engine on port 80 as in lwip_http_test.cpp
// and, through the same slots and run_once(), dialing a peer that is a raw lwIP listening pcb of
// the same stack (lwip_world::listen_peer(): the connections it accepts are the world's clients
// 4 to 7). Both ends run real lwIP TCP: the connect's SYN, a refused connect's RST, windows that
// close and open, FIN and RST. The engine on the dialed side is a recorder (what it was told,
// in order, and the bytes it took) or the MQTT client (emcp/mqtt/client.h), whose CONNECT the
// peer reads and whose CONNACK it writes as the MQTT 5.0 text has them (3.1, 3.2).
//
// Every step of the world and of the listener runs inside a NoHeapScope; after each test every
// slot is free and, once the timers ran, every lwIP pool is back to what it held (TearDown).
#include <gtest/gtest.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <string_view>

#include "../unit/heap_guard.h"
#include "../unit/mcp_fixture_app.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/mqtt/client.h"
#include "emcp/transport/http_server.h"
#include "lwip/tcp.h"
#include "lwip_fixture.h"
#include "lwip_world.h"

namespace {

using emcp::Status;
using emcp::transport::ConnectionHandler;
using lwip_world::Client;
using lwip_world::client;

void on_lwip_assert(const char* message, const char* file, int line) {
  fprintf(stderr, "lwIP assertion in a test: %s (%s:%d)\n", message, file, line);
}

bool fake_random(void* out, size_t n) {
  memset(out, 0x5A, n);
  return true;
}

constexpr size_t kConns = 2;       // the HTTP engine's connections (the listener has one more, for 503)
constexpr uint16_t kPeer = 1883;   // where the peer listens
constexpr size_t kPeerFirst = 4;   // the peer's connections are clients 4..7
constexpr uint16_t kNobody = 1884; // where nothing listens

// A dialing engine that records what the listener tells it. Fixed storage: its functions run
// inside the listener's calls, in a NoHeapScope.
struct Recorder {
  static constexpr size_t kCap = 1 << 16;
  char got[kCap];
  size_t len = 0;
  bool take = true;           // wants_input()
  int writable = 0;
  int closed = 0;
  int order_errors = 0;       // a report before writable(), or after closed()
  uint16_t conn = 0;          // the number it dialed with

  ConnectionHandler handler() {
    static const ConnectionHandler::Ops kOps = {
        /*open*/ [](void*, const emcp::transport::PeerAddress&) { return -1; },
        /*receive*/
        [](void* ctx, uint16_t c, const void* data, size_t n) -> size_t {
          auto* r = static_cast<Recorder*>(ctx);
          if (c != r->conn || r->writable == 0 || r->closed != 0) ++r->order_errors;
          if (!r->take) return 0;
          const size_t k = n < kCap - r->len ? n : kCap - r->len;
          memcpy(r->got + r->len, data, k);
          r->len += k;
          return k;
        },
        /*wants_input*/ [](void* ctx, uint16_t) { return static_cast<Recorder*>(ctx)->take; },
        /*writable*/
        [](void* ctx, uint16_t c) {
          auto* r = static_cast<Recorder*>(ctx);
          if (c != r->conn || r->closed != 0) ++r->order_errors;
          ++r->writable;
        },
        /*closed*/
        [](void* ctx, uint16_t c) {
          auto* r = static_cast<Recorder*>(ctx);
          if (c != r->conn) ++r->order_errors;
          ++r->closed;
        },
        /*poll*/ [](void*) {},
        /*now_ms*/ [](void*) { return fixture::now_ms(); },
        /*refusal*/ [](void*) { return emcp::StrView(); },
    };
    return ConnectionHandler(&kOps, this);
  }
  std::string_view text() const { return std::string_view(got, len); }
};

// A deterministic pattern of `n` bytes (what a window must deliver in order).
std::string pattern(size_t n) {
  std::string s(n, '\0');
  for (size_t i = 0; i < n; ++i) s[i] = static_cast<char>('a' + (i * 7 + i / 26) % 26);
  return s;
}

class LwipDial : public lwip_fixture::LwipFixture {
 protected:
  void set_up() override {
    fresh_world(&on_lwip_assert);
    emcp_test::NoHeapScope no_heap;
    fixture::install(server_);
    net_.attach(http_.handler());
    net_.set_pump(&lwip_world::pump, nullptr);
    ASSERT_EQ(net_.listen(80), Status::kOk);
    ASSERT_TRUE(lwip_world::listen_peer(kPeer, kPeerFirst));
    listening_ = lwip_world::pools();
    dialer_ = net_.dialer();
  }

  void tear_down() override { release_all_then_stop(80); }

  void step_once() override {
    lwip_world::step();
    net_.run_once();
  }
  bool released() override { return http_.connections_in_use() == 0 && net_.slots_in_use() == 0; }
  void stop_listener() override {
    net_.stop();
    lwip_world::stop_peer();
  }

  Status dial(Recorder& r, uint16_t conn, uint16_t port = kPeer, const char* host = "127.0.0.1") {
    emcp_test::NoHeapScope no_heap;
    r.conn = conn;
    return dialer_.dial(dialer_.ctx, host, port, conn, r.handler());
  }
  Status write(uint16_t conn, std::string_view bytes, size_t* taken) {
    emcp_test::NoHeapScope no_heap;
    return dialer_.port.write(dialer_.port.ctx, conn, bytes.data(), bytes.size(), taken);
  }
  void close(uint16_t conn) {
    emcp_test::NoHeapScope no_heap;
    dialer_.port.close(dialer_.port.ctx, conn);
  }
  // Dials the peer and runs until the connection is up on both ends: the peer's client.
  Client& connected(Recorder& r, uint16_t conn) {
    EXPECT_EQ(dial(r, conn), Status::kOk);
    EXPECT_TRUE(run_until([&] { return r.writable != 0 && lwip_world::peer_accepted() != 0; }));
    return client(kPeerFirst);
  }
  std::string_view peer_text(const Client& c) { return std::string_view(c.data(), c.size()); }

  const emcp::Platform platform_{&fixture::now_ms, &fake_random};
  emcp::mcp::Server server_{fixture::info(), platform_};
  emcp::transport::HttpOptions options_;
  emcp::lwip::StaticLwipHttpListener<kConns, 1> net_;
  emcp::transport::StaticHttpServer<kConns, 1> http_{server_, options_, net_.port_interface()};
  emcp::transport::Dialer dialer_;
  Recorder r_;
};

// The whole life of a dialed connection: nothing can be written while it connects; writable()
// once it is up; bytes both ways, exactly; the engine's close is a FIN after its bytes, and
// the slot is free at once.
TEST_F(LwipDial, ConnectsCarriesBytesBothWaysAndCloses) {
  ASSERT_EQ(dial(r_, 7), Status::kOk);
  EXPECT_EQ(net_.slots_in_use(), 1u);
  size_t taken = 99;
  EXPECT_EQ(write(7, "early", &taken), Status::kOk);
  EXPECT_EQ(taken, 0u) << "a connection still connecting takes nothing";
  ASSERT_TRUE(run_until([&] { return r_.writable != 0; }));
  EXPECT_EQ(r_.writable, 1);
  EXPECT_EQ(net_.stats().dialed, 1u);
  ASSERT_TRUE(run_until([&] { return lwip_world::peer_accepted() == 1; }));
  Client& peer = client(kPeerFirst);

  ASSERT_EQ(write(7, "hello broker", &taken), Status::kOk);
  EXPECT_EQ(taken, 12u);
  ASSERT_TRUE(run_until([&] { return peer.size() == 12; }));
  EXPECT_EQ(peer_text(peer), "hello broker");

  ASSERT_TRUE(peer.send("hello device", 12));
  ASSERT_TRUE(run_until([&] { return r_.len == 12; }));
  EXPECT_EQ(r_.text(), "hello device");

  close(7);
  EXPECT_EQ(net_.slots_in_use(), 0u) << "the slot is free at once";
  ASSERT_TRUE(run_until([&] { return peer.fin(); }));
  EXPECT_FALSE(peer.reset_seen());
  EXPECT_EQ(r_.closed, 0) << "the engine closed it itself: nothing more is reported";
  EXPECT_EQ(r_.order_errors, 0);
  peer.close();
}

// A connect the peer's stack refuses (RST: nothing listens there) is closed() without a
// writable() before it.
TEST_F(LwipDial, RefusedConnectIsReportedClosed) {
  ASSERT_EQ(dial(r_, 3, kNobody), Status::kOk);
  ASSERT_TRUE(run_until([&] { return r_.closed != 0; }));
  EXPECT_EQ(r_.writable, 0);
  EXPECT_EQ(r_.closed, 1);
  EXPECT_EQ(net_.stats().dial_failed, 1u);
  EXPECT_EQ(net_.slots_in_use(), 0u);
  run_steps(50);
  EXPECT_EQ(r_.closed, 1) << "reported once";
}

// What dial() refuses at once, with nothing reported afterwards: a name (no resolver), no host,
// no handler, a number already dialed.
TEST_F(LwipDial, NamesAndBadArgumentsAreRefusedAtOnce) {
  EXPECT_EQ(dial(r_, 1, kPeer, "broker.local"), Status::kNotFound);
  EXPECT_EQ(dial(r_, 1, kPeer, "localhost"), Status::kNotFound);
  EXPECT_EQ(dial(r_, 1, kPeer, nullptr), Status::kInvalidArgument);
  {
    emcp_test::NoHeapScope no_heap;
    EXPECT_EQ(dialer_.dial(dialer_.ctx, "127.0.0.1", kPeer, 1, ConnectionHandler()), Status::kInvalidArgument);
  }
  EXPECT_EQ(net_.slots_in_use(), 0u);
  ASSERT_EQ(dial(r_, 1), Status::kOk);
  Recorder other;
  EXPECT_EQ(dial(other, 1), Status::kInvalidArgument) << "the number names a dialed connection already";
  EXPECT_EQ(net_.slots_in_use(), 1u);
  ASSERT_TRUE(run_until([&] { return r_.writable != 0; }));
  run_steps(20);
  EXPECT_EQ(other.writable + other.closed, 0);
  close(1);
}

// Accepted connections never take the slot kept for dialing: four clients at once find the
// HTTP engine's two slots and the one to answer 503 from, and the fourth is reset (not given
// the dial slot); a dial then gets its slot, and a dial beyond every free slot is kNoSpace.
TEST_F(LwipDial, HttpClientsCannotTakeTheDialSlot) {
  for (size_t i = 0; i < kConns + 2; ++i) ASSERT_TRUE(client(i).connect(80));
  run_steps(200);
  EXPECT_EQ(net_.stats().accepted, kConns);
  EXPECT_EQ(net_.stats().refused_busy, 1u) << "one answered 503";
  EXPECT_EQ(net_.stats().refused_reset, 1u) << "the fourth found no slot: the last one is for dialing";
  EXPECT_EQ(net_.slots_in_use(), kConns);
  ASSERT_EQ(dial(r_, 9), Status::kOk);
  ASSERT_TRUE(run_until([&] { return r_.writable != 0; }));
  // The 503 slot is free again: one more dial takes it, the next finds none.
  Recorder second, third;
  EXPECT_EQ(dial(second, 10), Status::kOk);
  EXPECT_EQ(dial(third, 11), Status::kNoSpace);
  EXPECT_EQ(net_.slots_in_use(), kConns + 2);
  ASSERT_TRUE(run_until([&] { return second.writable != 0; }));
  close(9);
  close(10);
  EXPECT_EQ(third.writable + third.closed, 0);
}

// The peer's RST ends the connection: closed(), once; the peer's FIN after bytes: the bytes
// first, then closed().
TEST_F(LwipDial, PeerResetAndPeerFinAreReportedAfterTheBytes) {
  Client& peer = connected(r_, 5);
  peer.abort();
  ASSERT_TRUE(run_until([&] { return r_.closed != 0; }));
  EXPECT_EQ(net_.slots_in_use(), 0u);

  Recorder again;
  Client& peer2 = connected(again, 6);
  ASSERT_TRUE(peer2.send("last words", 10));
  peer2.shutdown_when_sent();
  ASSERT_TRUE(run_until([&] { return again.closed != 0; }));
  EXPECT_EQ(again.text(), "last words");
  EXPECT_EQ(again.order_errors, 0);
  EXPECT_EQ(net_.slots_in_use(), 0u);
  EXPECT_EQ(r_.closed, 1);
}

// An engine that takes nothing closes the TCP window instead of losing bytes; once it takes
// again every byte arrives, in order.
TEST_F(LwipDial, AnEngineThatTakesNothingClosesTheWindowAndLosesNothing) {
  Client& peer = connected(r_, 2);
  r_.take = false;
  const std::string data = pattern(5 * TCP_WND);
  ASSERT_TRUE(peer.send(data.data(), data.size()));
  run_steps(500);
  EXPECT_EQ(r_.len, 0u);
  EXPECT_GT(peer.unsent(), 0u) << "the window closed: the peer holds the rest";
  r_.take = true;
  ASSERT_TRUE(run_until([&] { return r_.len == data.size(); }));
  EXPECT_TRUE(r_.text() == data);
  close(2);
  peer.close();
}

// Output beyond what lwIP takes now: the write takes part, writable() follows once the peer
// reads again, and the wait (the pump runs the stack meanwhile) ends when there is room.
TEST_F(LwipDial, OutputBeyondTheWindowWaitsAndArrivesWhole) {
  Client& peer = connected(r_, 4);
  peer.set_read(0);
  const std::string data = pattern(8 * TCP_SND_BUF);
  size_t off = 0;
  for (int round = 0; round < 100 && off < data.size(); ++round) {
    size_t taken = 0;
    ASSERT_EQ(write(4, std::string_view(data).substr(off), &taken), Status::kOk);
    off += taken;
    if (taken == 0) break;
    run_steps(5);
  }
  ASSERT_LT(off, data.size()) << "the peer's closed window stops the writes";
  const int before = r_.writable;
  peer.set_read(SIZE_MAX);
  ASSERT_TRUE(run_until([&] { return r_.writable > before; }));
  while (off < data.size()) {
    {
      emcp_test::NoHeapScope no_heap;
      ASSERT_EQ(dialer_.port.wait_writable(dialer_.port.ctx, 4, 5000), Status::kOk);
    }
    size_t taken = 0;
    ASSERT_EQ(write(4, std::string_view(data).substr(off), &taken), Status::kOk);
    off += taken;
  }
  ASSERT_TRUE(run_until([&] { return peer.size() == data.size(); }));
  EXPECT_TRUE(peer_text(peer) == data);
  close(4);
  peer.close();
}

// The engine gives up while the connect is under way: the pcb is aborted, nothing is reported,
// the slot is free, and the peer never sees a connection.
TEST_F(LwipDial, CloseWhileConnectingAbortsAndReportsNothing) {
  ASSERT_EQ(dial(r_, 8), Status::kOk);
  close(8);
  EXPECT_EQ(net_.slots_in_use(), 0u);
  run_steps(200);
  EXPECT_EQ(r_.writable + r_.closed, 0);
  EXPECT_EQ(lwip_world::peer_accepted(), 0u);
}

// lwIP without a pcb for the connection: kIoError, nothing reported.
TEST_F(LwipDial, NoPcbIsAnIoError) {
  lwip_world::hold_pcbs(0);
  EXPECT_EQ(dial(r_, 1), Status::kIoError);
  lwip_world::release_held();
  EXPECT_EQ(net_.slots_in_use(), 0u);
  run_steps(20);
  EXPECT_EQ(r_.writable + r_.closed, 0);
}

// stop() ends dialed connections too, and tells their engine.
TEST_F(LwipDial, StopTellsTheDialingEngine) {
  Client& peer = connected(r_, 12);
  Recorder connecting;
  ASSERT_EQ(dial(connecting, 13, kNobody), Status::kOk);
  {
    emcp_test::NoHeapScope no_heap;
    net_.stop();
  }
  EXPECT_EQ(r_.closed, 1);
  EXPECT_EQ(connecting.closed, 1) << "a connection still connecting was dialed: its engine knows it";
  EXPECT_EQ(net_.slots_in_use(), 0u);
  ASSERT_TRUE(run_until([&] { return peer.reset_seen(); }));
  // listen again, for TearDown's checks
  ASSERT_EQ(net_.listen(80), Status::kOk);
}

// A device that only dials: no listen(), no engine attached, no slot for accepted connections.
TEST_F(LwipDial, ADeviceThatOnlyDials) {
  emcp::lwip::StaticLwipHttpListener<0, 1> only;
  only.set_pump(&lwip_world::pump, nullptr);
  emcp::transport::Dialer d = only.dialer();
  r_.conn = 21;
  {
    emcp_test::NoHeapScope no_heap;
    ASSERT_EQ(d.dial(d.ctx, "127.0.0.1", kPeer, 21, r_.handler()), Status::kOk);
  }
  const auto step = [&] {
    lwip_world::step();
    only.run_once();
  };
  for (int i = 0; i < 2000 && !(r_.writable != 0 && lwip_world::peer_accepted() != 0); ++i) {
    emcp_test::NoHeapScope no_heap;
    step();
  }
  ASSERT_EQ(r_.writable, 1);
  Client& peer = client(kPeerFirst);
  size_t taken = 0;
  {
    emcp_test::NoHeapScope no_heap;
    ASSERT_EQ(d.port.write(d.port.ctx, 21, "up", 2, &taken), Status::kOk);
  }
  EXPECT_EQ(taken, 2u);
  for (int i = 0; i < 2000 && peer.size() != 2; ++i) step();
  EXPECT_EQ(peer_text(peer), "up");
  Recorder second;
  second.conn = 22;
  {
    emcp_test::NoHeapScope no_heap;
    EXPECT_EQ(d.dial(d.ctx, "127.0.0.1", kPeer, 22, second.handler()), Status::kNoSpace) << "one slot";
  }
  d.port.close(d.port.ctx, 21);
  EXPECT_EQ(only.slots_in_use(), 0u);
  peer.close();
}

// ---- The MQTT client over the dialer ----------------------------------------------------------

// The peer plays the broker with bytes from the MQTT 5.0 text: it reads the client's CONNECT
// (3.1: type 1, "MQTT", version 5, Clean Start) and answers CONNACK (3.2: 0x20, Remaining
// Length 3, no Session Present, reason Success, no properties); the client is connected and a
// PUBLISH at QoS 0 reaches the peer as 3.3 has it; the peer's reset brings the client to its
// backoff, and it dials again.
TEST_F(LwipDial, TheMqttClientConnectsThroughTheDialer) {
  emcp::mqtt::ClientEvents events;
  emcp::mqtt::StaticClient<1024> mqtt(platform_, dialer_, events);
  mqtt.options().host = "127.0.0.1";
  mqtt.options().port = kPeer;
  mqtt.options().client_id = "dial-test";
  mqtt.options().backoff_min_ms = 200;
  {
    emcp_test::NoHeapScope no_heap;
    mqtt.start();
  }
  const auto step = [&] {
    emcp_test::NoHeapScope no_heap;
    step_once();
    mqtt.poll();
  };
  for (int i = 0; i < 4000 && lwip_world::peer_accepted() == 0; ++i) step();
  Client& peer = client(kPeerFirst);
  // Fixed header, Remaining Length, then the protocol name "MQTT" and the version 5 (3.1.2.1-2).
  for (int i = 0; i < 4000 && peer.size() < 9; ++i) step();
  const std::string connect(peer.data(), peer.size());
  ASSERT_GE(connect.size(), 10u);
  EXPECT_EQ(static_cast<uint8_t>(connect[0]), 0x10);
  EXPECT_EQ(connect.substr(2, 6), std::string("\0\4MQTT", 6));
  EXPECT_EQ(connect[8], 5);
  EXPECT_EQ(static_cast<uint8_t>(connect[9]) & 0x02, 0x02) << "Clean Start";
  EXPECT_NE(connect.find("dial-test"), std::string::npos);
  peer.consume(peer.size());
  const char connack[] = {0x20, 0x03, 0x00, 0x00, 0x00};
  ASSERT_TRUE(peer.send(connack, sizeof connack));
  for (int i = 0; i < 4000 && !mqtt.connected(); ++i) step();
  ASSERT_TRUE(mqtt.connected());

  emcp::mqtt::PublishHeader h;
  h.topic = "t/1";
  h.qos = 0;
  {
    emcp_test::NoHeapScope no_heap;
    ASSERT_EQ(mqtt.publish(h, "hi"), Status::kOk);
  }
  for (int i = 0; i < 4000 && peer.size() < 10; ++i) step();
  // 3.3: type 3 with QoS 0, no DUP, no RETAIN; Remaining Length 8; the Topic Name "t/1"; Property
  // Length 0; the payload.
  EXPECT_EQ(peer_text(peer), std::string_view("\x30\x08\x00\x03t/1\x00hi", 10));
  peer.consume(peer.size());

  const uint32_t dials = mqtt.stats().dials;
  peer.abort();
  for (int i = 0; i < 4000 && mqtt.connected(); ++i) step();
  EXPECT_FALSE(mqtt.connected());
  for (int i = 0; i < 4000 && mqtt.stats().dials == dials; ++i) step();
  EXPECT_GT(mqtt.stats().dials, dials) << "dialed again after the backoff";
  {
    emcp_test::NoHeapScope no_heap;
    mqtt.stop();
  }
  for (int i = 0; i < 400; ++i) step();
  EXPECT_EQ(net_.slots_in_use(), 0u);
  lwip_world::abort_clients();
}

}  // namespace
