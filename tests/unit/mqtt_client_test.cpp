// The MQTT client's connection life against a fake dialer and a broker written by hand from the
// MQTT 5.0 text: CONNECT's fields, CONNACK's limits, keep-alive, backoff, holds, the broker's
// Receive Maximum and Maximum Packet Size, and what a broken packet ends.
#include <gtest/gtest.h>

#include "emcp/mqtt/client.h"
#include "mqtt_test_net.h"

namespace {

using emcp::Status;
using emcp::StrView;
using emcp::mqtt::Client;
using emcp::mqtt::ClientEvents;
using emcp::mqtt::Packet;
using emcp::mqtt::PublishHeader;
using emcp::mqtt::Reason;
using emcp_test::FakeDialNet;
using emcp_test::MqttClock;
using emcp_test::parse_sent;

struct Heard {
  int connected = 0, disconnected = 0, publishes = 0, ends = 0, subacks = 0;
  Reason last_reason = Reason::kSuccess;
  std::string topic, payload;
  uint16_t suback = 0;
};

ClientEvents events_for(Heard* h) {
  ClientEvents e;
  e.connected = [](void* c, const Packet&) { ++static_cast<Heard*>(c)->connected; };
  e.disconnected = [](void* c, Reason r) {
    ++static_cast<Heard*>(c)->disconnected;
    static_cast<Heard*>(c)->last_reason = r;
  };
  e.publish = [](void* c, const Packet& p) {
    ++static_cast<Heard*>(c)->publishes;
    static_cast<Heard*>(c)->topic.assign(p.topic.data(), p.topic.size());
    static_cast<Heard*>(c)->payload.clear();
  };
  e.payload = [](void* c, StrView s) { static_cast<Heard*>(c)->payload.append(s.data(), s.size()); };
  e.publish_end = [](void* c) { ++static_cast<Heard*>(c)->ends; };
  e.subscribed = [](void* c, uint16_t id, StrView) {
    ++static_cast<Heard*>(c)->subacks;
    static_cast<Heard*>(c)->suback = id;
  };
  e.ctx = h;
  return e;
}

constexpr emcp::Platform kPlatform{&MqttClock::now_ms, &MqttClock::random};

class MqttClient : public ::testing::Test {
 protected:
  void SetUp() override {
    MqttClock::now = 1000;
    client.options().host = "broker.test";
    client.options().port = 1884;
    client.options().client_id = "dev-1";
    client.options().keep_alive_s = 10;
    client.options().ping_timeout_ms = 3000;
    client.options().backoff_min_ms = 1000;
    client.options().backoff_max_ms = 8000;
  }
  // Dials, establishes, and answers the CONNECT with `connack`.
  void connect(const std::vector<uint8_t>& connack = {0x20, 0x03, 0x00, 0x00, 0x00}) {
    client.start();
    net.establish();
    net.out.clear();
    net.from_broker(connack);
  }
  // Connected and silent: a PINGREQ after `idle_ms`, then the connection held until `wait_ms`
  // after it and closed then (a keep-alive timeout).
  void expect_pingresp_deadline(uint64_t idle_ms, uint64_t wait_ms) {
    MqttClock::now += idle_ms;
    client.poll();
    ASSERT_EQ(net.out.take(), std::string_view("\xC0\x00", 2));  // PINGREQ (3.12)
    MqttClock::now += wait_ms - 1;
    client.poll();
    EXPECT_TRUE(client.connected());
    MqttClock::now += 1;
    client.poll();
    EXPECT_FALSE(client.connected());
    EXPECT_EQ(client.stats().keepalive_timeouts, 1u);
  }

  FakeDialNet net;
  Heard heard;
  emcp::mqtt::StaticClient<1024> client{kPlatform, net.dialer(), events_for(&heard)};
};

TEST_F(MqttClient, ConnectIsCleanStartWithSessionExpiryZeroAndOurLimits) {
  client.start();
  EXPECT_EQ(net.dials, 1);
  EXPECT_EQ(net.host, "broker.test");
  EXPECT_EQ(net.port, 1884);
  EXPECT_EQ(client.state(), Client::State::kDialing);
  EXPECT_EQ(net.out.size(), 0u);  // nothing before the connection is up
  net.establish();
  const auto sent = parse_sent(net.out.view());
  ASSERT_EQ(sent.size(), 1u);
  ASSERT_EQ(sent[0].type, 1);  // CONNECT (3.1)
  const std::string& b = sent[0].body;
  ASSERT_GE(b.size(), 10u);
  EXPECT_EQ(b.substr(0, 6), std::string("\0\4MQTT", 6));  // 3.1.2.1
  EXPECT_EQ(static_cast<uint8_t>(b[6]), 5);                // 3.1.2.2: version 5
  EXPECT_EQ(static_cast<uint8_t>(b[7]) & 0x02, 0x02);      // Clean Start (3.1.2.4)
  EXPECT_EQ(static_cast<uint8_t>(b[7]) & 0x01, 0);         // reserved
  EXPECT_EQ(static_cast<uint8_t>(b[8]) * 256 + static_cast<uint8_t>(b[9]), 10);  // Keep Alive
  // Properties (3.1.2.11): Session Expiry, if sent, is 0; Receive Maximum 16; a Maximum
  // Packet Size.
  size_t pos = 10;
  uint32_t plen = static_cast<uint8_t>(b[pos++]);
  if (plen & 0x80) plen = (plen & 0x7F) + 128u * static_cast<uint8_t>(b[pos++]);
  const size_t end = pos + plen;
  bool receive_max = false, max_packet = false;
  while (pos < end) {
    const uint8_t id = static_cast<uint8_t>(b[pos++]);
    auto u32 = [&] {
      uint32_t v = 0;
      for (int i = 0; i < 4; ++i) v = v << 8 | static_cast<uint8_t>(b[pos++]);
      return v;
    };
    if (id == 0x11) EXPECT_EQ(u32(), 0u);
    else if (id == 0x21) {
      receive_max = true;
      EXPECT_EQ(static_cast<uint8_t>(b[pos]) * 256 + static_cast<uint8_t>(b[pos + 1]), 16);
      pos += 2;
    } else if (id == 0x27) {
      max_packet = true;
      EXPECT_GT(u32(), 1024u);
    } else {
      ADD_FAILURE() << "an unexpected CONNECT property " << int(id);
      break;
    }
  }
  EXPECT_TRUE(receive_max);
  EXPECT_TRUE(max_packet);
  // Payload: the client identifier (3.1.3.1).
  EXPECT_EQ(b.substr(end), std::string("\0\5dev-1", 7));
  EXPECT_EQ(client.state(), Client::State::kConnecting);
}

TEST_F(MqttClient, ConnackSuccessConnectsAndTakesTheBrokersKeepAlive) {
  // CONNACK, Server Keep Alive 5 (3.2.2.3.14: the client uses it).
  connect({0x20, 0x06, 0x00, 0x00, 0x03, 0x13, 0x00, 0x05});
  EXPECT_EQ(heard.connected, 1);
  EXPECT_TRUE(client.connected());
  MqttClock::now += 4999;
  client.poll();
  EXPECT_EQ(net.out.size(), 0u);
  MqttClock::now += 1;
  client.poll();
  EXPECT_EQ(net.out.view(), std::string_view("\xC0\x00", 2));  // PINGREQ (3.12)
}

TEST_F(MqttClient, NoPingrespWithinTheTimeoutEndsTheConnectionWithKeepAliveTimeout) {
  connect();
  expect_pingresp_deadline(10000, 3000);
  // No DISCONNECT: Keep Alive timeout is a server's reason (3.14.2.1); the client closes
  // (3.1.2.10).
  EXPECT_EQ(net.out.size(), 0u);
  EXPECT_EQ(net.closes, 1);
  EXPECT_EQ(heard.disconnected, 1);
  EXPECT_EQ(client.state(), Client::State::kBackoff);
}

TEST_F(MqttClient, AKeepAliveShorterThanThePingTimeoutBoundsTheWaitForPingresp) {
  client.options().keep_alive_s = 2;
  client.options().ping_timeout_ms = 10000;
  connect();
  // The broker's silence is noticed within twice the keep-alive, not keep-alive + 10 s.
  expect_pingresp_deadline(2000, 2000);
  EXPECT_EQ(net.out.size(), 0u);
}

TEST_F(MqttClient, TheBrokersServerKeepAliveBoundsTheWaitForPingresp) {
  // Server Keep Alive 1 (3.2.2.3.14) against our 10 s and a ping timeout of 3 s: 1 s each.
  connect({0x20, 0x06, 0x00, 0x00, 0x03, 0x13, 0x00, 0x01});
  expect_pingresp_deadline(1000, 1000);
}

TEST_F(MqttClient, AKeepAliveShorterThanTheConnectTimeoutBoundsTheWaitForConnack) {
  client.options().keep_alive_s = 2;
  client.options().connect_timeout_ms = 10000;
  client.start();
  // The TCP connection itself may take the whole connect timeout.
  MqttClock::now += 5000;
  client.poll();
  EXPECT_EQ(client.state(), Client::State::kDialing);
  net.establish();
  net.out.clear();
  MqttClock::now += 1999;
  client.poll();
  EXPECT_EQ(client.state(), Client::State::kConnecting);
  MqttClock::now += 1;
  client.poll();
  EXPECT_EQ(client.state(), Client::State::kBackoff) << "no CONNACK within the keep-alive after the CONNECT";
  EXPECT_EQ(net.out.view(), std::string_view("\xE0\x01\x80", 3));  // DISCONNECT, Unspecified error
  EXPECT_EQ(net.closes, 1);
}

TEST_F(MqttClient, PingrespKeepsTheConnection) {
  connect();
  MqttClock::now += 10000;
  client.poll();
  net.from_broker({0xD0, 0x00});
  MqttClock::now += 5000;
  client.poll();
  EXPECT_TRUE(client.connected());
}

TEST_F(MqttClient, RefusedConnackWaitsThenDialsAgainWithGrowingCappedBackoff) {
  client.start();
  net.establish();
  net.from_broker({0x20, 0x03, 0x00, 0x87, 0x00});  // Not authorized
  EXPECT_EQ(client.stats().refused, 1u);
  EXPECT_EQ(client.state(), Client::State::kBackoff);
  EXPECT_EQ(net.closes, 1);
  EXPECT_EQ(heard.connected, 0);
  // Each wait is within [d/2, d], d doubling from 1000 to the cap 8000.
  net.dial_result = Status::kIoError;
  uint32_t d = 1000;
  for (int round = 0; round < 6; ++round) {
    const int dials = net.dials;
    MqttClock::now += d / 2 - 1;
    client.poll();
    EXPECT_EQ(net.dials, dials) << "round " << round;
    MqttClock::now += d / 2 + 1;
    client.poll();
    EXPECT_EQ(net.dials, dials + 1) << "round " << round;
    d = d * 2 > 8000 ? 8000 : d * 2;
  }
}

TEST_F(MqttClient, SessionPresentAfterCleanStartEndsTheConnection) {
  // CONNACK Success with Session Present (3.2.2.1.1): the client asked for Clean Start and holds
  // no session state [MQTT-3.2.2-4].
  client.start();
  net.establish();
  net.out.clear();
  net.from_broker({0x20, 0x03, 0x01, 0x00, 0x00});
  EXPECT_EQ(heard.connected, 0);
  EXPECT_EQ(client.state(), Client::State::kBackoff);
  EXPECT_EQ(client.stats().protocol_errors, 1u);
  EXPECT_EQ(net.out.view(), std::string_view("\xE0\x01\x82", 3));  // DISCONNECT, Protocol Error
  EXPECT_EQ(net.closes, 1);
}

TEST_F(MqttClient, NoConnackInTimeGivesUpAndDialsAgain) {
  client.options().connect_timeout_ms = 2000;
  client.start();
  net.establish();
  MqttClock::now += 2000;
  client.poll();
  EXPECT_EQ(client.state(), Client::State::kBackoff);
  EXPECT_EQ(net.closes, 1);
}

TEST_F(MqttClient, AMalformedPacketEndsTheConnectionWithMalformedPacket) {
  connect();
  net.out.clear();
  net.from_broker({0xD1, 0x00});  // PINGRESP with a reserved flag set (2.1.3)
  EXPECT_FALSE(client.connected());
  EXPECT_EQ(client.stats().protocol_errors, 1u);
  EXPECT_EQ(net.out.view(), std::string_view("\xE0\x01\x81", 3));
  EXPECT_EQ(heard.disconnected, 1);
}

TEST_F(MqttClient, APacketBeforeConnackIsAProtocolError) {
  client.start();
  net.establish();
  net.out.clear();
  net.from_broker({0xD0, 0x00});
  EXPECT_EQ(net.out.view(), std::string_view("\xE0\x01\x82", 3));
  EXPECT_EQ(client.state(), Client::State::kBackoff);
}

TEST_F(MqttClient, AQos1PublishIsHandedOnThenAcknowledged) {
  connect();
  net.out.clear();
  // Split anywhere: byte by byte.
  const auto pkt = emcp_test::broker_publish("a/b", "{\"x\":1}", 7);
  for (uint8_t byte : pkt) net.from_broker({byte});
  EXPECT_EQ(heard.publishes, 1);
  EXPECT_EQ(heard.ends, 1);
  EXPECT_EQ(heard.topic, "a/b");
  EXPECT_EQ(heard.payload, "{\"x\":1}");
  EXPECT_EQ(net.out.view(), std::string_view("\x40\x02\x00\x07", 4));  // PUBACK 7 (3.4)
}

TEST_F(MqttClient, TheBrokersDisconnectEndsTheConnectionWithoutAnAnswer) {
  connect();
  net.out.clear();
  net.from_broker({0xE0, 0x01, 0x8B});  // Server shutting down
  EXPECT_EQ(heard.disconnected, 1);
  EXPECT_EQ(heard.last_reason, Reason::kServerShuttingDown);
  EXPECT_EQ(net.out.size(), 0u);
}

TEST_F(MqttClient, Qos1BeyondTheBrokersReceiveMaximumGoesAtQos0) {
  connect({0x20, 0x06, 0x00, 0x00, 0x03, 0x21, 0x00, 0x01});  // Receive Maximum 1
  PublishHeader h;
  h.topic = "t";
  h.qos = 1;
  ASSERT_EQ(client.publish(h, "one"), Status::kOk);
  ASSERT_EQ(client.publish(h, "two"), Status::kOk);
  auto sent = parse_sent(net.out.take());
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ((sent[0].flags >> 1) & 3, 1);
  EXPECT_EQ((sent[1].flags >> 1) & 3, 0);
  EXPECT_EQ(client.stats().qos0_fallbacks, 1u);
  // Its PUBACK frees the window.
  net.from_broker({0x40, 0x02, static_cast<uint8_t>(sent[0].id >> 8), static_cast<uint8_t>(sent[0].id)});
  ASSERT_EQ(client.publish(h, "three"), Status::kOk);
  sent = parse_sent(net.out.take());
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ((sent[0].flags >> 1) & 3, 1);
}

TEST_F(MqttClient, AMessageLongerThanTheBrokersMaximumPacketSizeIsNotSent) {
  connect({0x20, 0x08, 0x00, 0x00, 0x05, 0x27, 0x00, 0x00, 0x00, 0x20});  // Maximum Packet Size 32
  PublishHeader h;
  h.topic = "t";
  // Fixed header 2, topic 2+1, property length 1, payload 26: 32 bytes.
  EXPECT_EQ(client.publish(h, std::string(26, 'x').c_str()), Status::kOk);
  EXPECT_EQ(client.publish(h, std::string(27, 'x').c_str()), Status::kNoSpace);
  EXPECT_EQ(client.stats().too_large, 1u);
  EXPECT_EQ(parse_sent(net.out.take()).size(), 1u);
  EXPECT_TRUE(client.connected());
}

TEST_F(MqttClient, AHeldMessageWaitsForItsSuback) {
  connect();
  net.out.clear();
  emcp::mqtt::Subscription s;
  s.filter = "x/y";
  s.no_local = true;
  const uint16_t id = client.subscribe(&s, 1);
  ASSERT_NE(id, 0);
  auto sent = parse_sent(net.out.take());
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].type, 8);
  EXPECT_EQ(sent[0].flags, 2);  // 3.8.1: reserved bits 0010
  EXPECT_EQ(static_cast<uint8_t>(sent[0].body.back()) & 0x04, 0x04);  // No Local (3.8.3.1)
  PublishHeader h;
  h.topic = "answer";
  emcp::Span<char> room = client.begin_message(h);
  ASSERT_GE(room.size(), 5u);
  memcpy(room.data(), "hello", 5);
  ASSERT_EQ(client.end_message(h, 5, id), Status::kOk);
  ASSERT_EQ(client.publish(h, "after"), Status::kOk);
  EXPECT_EQ(net.out.size(), 0u);  // held, and what follows it
  net.from_broker(emcp_test::broker_suback(id));
  sent = parse_sent(net.out.take());
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].payload, "hello");
  EXPECT_EQ(sent[1].payload, "after");
  EXPECT_EQ(heard.subacks, 1);
}

TEST_F(MqttClient, PartialWritesResumeWhenTheConnectionIsWritable) {
  connect();
  net.out.clear();
  net.window = 3;
  PublishHeader h;
  h.topic = "t";
  ASSERT_EQ(client.publish(h, "0123456789"), Status::kOk);
  EXPECT_EQ(net.out.size(), 3u);
  for (int i = 0; i < 10 && net.out.size() < 16; ++i) {
    net.window = 3;
    net.handler.writable(net.conn);
  }
  const auto sent = parse_sent(net.out.view());
  ASSERT_EQ(sent.size(), 1u);
  EXPECT_EQ(sent[0].payload, "0123456789");
}

TEST_F(MqttClient, StopSendsNormalDisconnectionAndStaysDown) {
  connect();
  net.out.clear();
  client.stop();
  EXPECT_EQ(net.out.view(), std::string_view("\xE0\x00", 2));  // 3.14.2.1: Success, short form
  EXPECT_EQ(client.state(), Client::State::kStopped);
  MqttClock::now += 100000;
  client.poll();
  EXPECT_EQ(net.dials, 1);
}

TEST_F(MqttClient, AConnectionLostInsideAnOwnersCallIsToldAtTheNextPoll) {
  // The owner's publish finds the connection gone (the port refuses the write): the owner hears
  // of it from the client's own calls (poll, receive), never from inside its publish, where it
  // may hold state half changed (a session it is ending).
  connect();
  net.write_fails = true;
  PublishHeader h;
  h.topic = "a/b";
  h.qos = 1;
  EXPECT_EQ(client.publish(h, "x"), Status::kClosed);
  EXPECT_FALSE(client.connected());
  EXPECT_EQ(heard.disconnected, 0) << "not from inside publish()";
  client.poll();
  EXPECT_EQ(heard.disconnected, 1);
  EXPECT_EQ(heard.last_reason, Reason::kUnspecifiedError);
  client.poll();
  EXPECT_EQ(heard.disconnected, 1) << "once";
}

TEST_F(MqttClient, AConnectionLostInsideAnEventIsToldAfterTheEventReturns) {
  // A PUBLISH's end makes the owner publish an answer; the write fails: the loss is told once
  // the packet's events are over (at the end of the port's receive).
  struct Owner {
    Client* client = nullptr;
    Heard* heard = nullptr;
    int lost_inside = -1;
  } owner{&client, &heard};
  ClientEvents e;
  e.ctx = &owner;
  e.disconnected = [](void* c, Reason r) {
    auto* o = static_cast<Owner*>(c);
    ++o->heard->disconnected;
    o->heard->last_reason = r;
  };
  e.publish = [](void*, const Packet&) {};
  e.payload = [](void*, StrView) {};
  e.publish_end = [](void* c) {
    auto* o = static_cast<Owner*>(c);
    PublishHeader h;
    h.topic = "answer";
    (void)o->client->publish(h, "x");
    o->lost_inside = o->heard->disconnected;
  };
  client.set_events(e);
  connect();
  net.write_fails = true;
  net.from_broker(emcp_test::broker_publish("q", "1"));
  EXPECT_EQ(owner.lost_inside, 0) << "not told inside its own publish_end";
  EXPECT_EQ(heard.disconnected, 1) << "told when the receive is over";
}

TEST_F(MqttClient, ALostConnectionIsDialedAgain) {
  connect();
  net.open = false;
  net.handler.closed(net.conn);
  EXPECT_EQ(heard.disconnected, 1);
  EXPECT_EQ(client.state(), Client::State::kBackoff);
  MqttClock::now += 1000;
  client.poll();
  EXPECT_EQ(net.dials, 2);
  net.establish();
  net.from_broker({0x20, 0x03, 0x00, 0x00, 0x00});
  EXPECT_EQ(heard.connected, 2);
  EXPECT_EQ(client.stats().connects, 2u);
}

}  // namespace
