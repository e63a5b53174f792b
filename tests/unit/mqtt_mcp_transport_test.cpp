// MCP over MQTT, the server's role, step by step as the text (shared/spec/mcp-over-mqtt/
// mqtt_transport.md) has it, against a fake dialer and broker packets written by hand: presence,
// the control topic's initialize, the client's topics subscribed before the answer, the RPC
// topic, capability notifications once, notifications/disconnected both ways, the client limit,
// an answer longer than the buffer, a name the broker gives.
#include <gtest/gtest.h>

#include <string>

#include "emcp/mqtt/mcp_transport.h"
#include "mcp_fixture_app.h"
#include "mqtt_test_net.h"

namespace {

using emcp::mqtt::StaticMcpTransport;
using emcp_test::broker_publish;
using emcp_test::broker_suback;
using emcp_test::FakeDialNet;
using emcp_test::MqttClock;
using emcp_test::parse_sent;
using emcp_test::SentPacket;

constexpr emcp::Platform kPlatform{&MqttClock::now_ms, &MqttClock::random};
const std::string kRpc1 = "$mcp-rpc/c1/dev1/devices/test";
const std::string kInit =
    R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
    R"("capabilities":{},"clientInfo":{"name":"t","version":"1"}}})";

bool has_user(const SentPacket& p, const std::string& k, const std::string& v) {
  for (const auto& kv : p.user)
    if (kv.first == k && kv.second == v) return true;
  return false;
}

std::string filter_of(const SentPacket& p) {  // SUBSCRIBE/UNSUBSCRIBE with one filter
  // packet id (2), properties length (1, empty), then the filter's length and bytes.
  const std::string& b = p.body;
  const size_t n = static_cast<size_t>(static_cast<uint8_t>(b[3]) << 8 | static_cast<uint8_t>(b[4]));
  return b.substr(5, n);
}

uint16_t id_of(const SentPacket& p) {
  return static_cast<uint16_t>(static_cast<uint8_t>(p.body[0]) << 8 | static_cast<uint8_t>(p.body[1]));
}

struct Device {
  FakeDialNet net;
  emcp::mcp::Server server{fixture::info(), fixture::platform()};
  StaticMcpTransport<2, 1024> mqtt{server, kPlatform, net.dialer()};
  uint16_t next_packet = 100;

  explicit Device(const std::vector<uint8_t>& connack = {0x20, 0x03, 0x00, 0x00, 0x00}) {
    MqttClock::now = 1000;
    fixture::install(server);
    mqtt.options().server_id = "dev1";
    mqtt.options().server_name = "devices/test";
    mqtt.options().description = "a test device";
    EXPECT_EQ(mqtt.start("broker.test", 1883), emcp::Status::kOk);
    net.establish();
    net.from_broker(connack);
  }
  std::vector<SentPacket> sent() { return parse_sent(net.out.take()); }
  // The client `c` sends `json` to `topic` (QoS 1).
  void from(const std::string& c, const std::string& topic, const std::string& json) {
    net.from_broker(broker_publish(topic, json, ++next_packet,
                                   {{"MCP-COMPONENT-TYPE", "mcp-client"}, {"MCP-MQTT-CLIENT-ID", c}}));
  }
  // initialize from `c`, its SUBACKs, notifications/initialized; returns the answer.
  SentPacket initialize(const std::string& c) {
    (void)sent();
    from(c, "$mcp-server/dev1/devices/test", kInit);
    for (const SentPacket& p : sent())
      if (p.type == 8) net.from_broker(broker_suback(id_of(p)));
    std::vector<SentPacket> out = sent();
    from(c, "$mcp-rpc/" + c + "/dev1/devices/test", R"({"jsonrpc":"2.0","method":"notifications/initialized"})");
    (void)sent();
    for (const SentPacket& p : out)
      if (p.type == 3) return p;
    ADD_FAILURE() << "no answer to initialize";
    return SentPacket();
  }
};

TEST(McpOverMqtt, ConnectsWithAnEmptyRetainedWillAndAnnouncesItselfRetained) {
  FakeDialNet net;
  emcp::mcp::Server server{fixture::info(), fixture::platform()};
  StaticMcpTransport<2, 1024> mqtt{server, kPlatform, net.dialer()};
  mqtt.options().server_id = "dev1";
  mqtt.options().server_name = "devices/test";
  mqtt.options().description = "a test device";
  ASSERT_EQ(mqtt.start("broker.test", 1883), emcp::Status::kOk);
  net.establish();
  auto connect = parse_sent(net.out.take());
  ASSERT_EQ(connect.size(), 1u);
  const std::string& b = connect[0].body;
  const uint8_t flags = static_cast<uint8_t>(b[7]);
  EXPECT_EQ(flags & 0x04, 0x04);  // Will Flag (3.1.2.5)
  EXPECT_EQ(flags & 0x20, 0x20);  // Will Retain (3.1.2.7)
  EXPECT_NE(b.find("$mcp-server/presence/dev1/devices/test"), std::string::npos);
  EXPECT_NE(b.find("MCP-COMPONENT-TYPE"), std::string::npos);
  EXPECT_NE(b.find("mcp-server"), std::string::npos);
  EXPECT_NE(b.find("MCP-META"), std::string::npos);
  // The Will's payload is empty: its topic is followed by a zero length (3.1.3.4).
  const std::string will_topic = "$mcp-server/presence/dev1/devices/test";
  const size_t at = b.find(will_topic) + will_topic.size();
  EXPECT_EQ(b.substr(at, 2), std::string("\0\0", 2));

  net.from_broker({0x20, 0x03, 0x00, 0x00, 0x00});
  const auto sent = parse_sent(net.out.take());
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[0].type, 8);
  EXPECT_EQ(filter_of(sent[0]), "$mcp-server/dev1/devices/test");
  // Retain Handling 2 (3.8.3.1, bits 4-5 of the options): nothing the broker kept there.
  EXPECT_EQ((static_cast<uint8_t>(sent[0].body.back()) >> 4) & 3, 2);
  EXPECT_EQ(sent[1].type, 3);
  EXPECT_EQ(sent[1].topic, "$mcp-server/presence/dev1/devices/test");
  EXPECT_EQ(sent[1].flags & 0x01, 0x01);  // RETAIN
  EXPECT_NE(sent[1].payload.find(R"("method":"notifications/server/online")"), std::string::npos);
  EXPECT_NE(sent[1].payload.find(R"("server_name":"devices/test")"), std::string::npos);
  EXPECT_NE(sent[1].payload.find(R"("description":"a test device")"), std::string::npos);
  EXPECT_TRUE(has_user(sent[1], "MCP-COMPONENT-TYPE", "mcp-server"));
  EXPECT_TRUE(has_user(sent[1], "MCP-MQTT-CLIENT-ID", "dev1"));
}

TEST(McpOverMqtt, InitializeSubscribesToTheClientsTopicsAndIsAnsweredAfterTheSuback) {
  Device d;
  (void)d.sent();
  d.from("c1", "$mcp-server/dev1/devices/test", kInit);
  auto sent = d.sent();
  std::vector<std::string> filters;
  std::vector<uint16_t> ids;
  for (const SentPacket& p : sent) {
    EXPECT_NE(p.type, 3) << "an answer before the subscriptions are in place: " << p.payload;
    if (p.type == 8) {
      filters.push_back(filter_of(p));
      ids.push_back(id_of(p));
      const uint8_t options = static_cast<uint8_t>(p.body.back());
      EXPECT_EQ(options & 0x03, 1);  // QoS 1
      EXPECT_EQ((options & 0x04) != 0, filter_of(p) == kRpc1) << "No Local on the RPC topic only";
      EXPECT_EQ((options >> 4) & 3, 2) << "Retain Handling 2: nothing the broker kept for a new client id";
    }
  }
  EXPECT_EQ(filters, (std::vector<std::string>{kRpc1, "$mcp-client/capability/c1", "$mcp-client/presence/c1"}));
  EXPECT_EQ(d.mqtt.sessions(), 1u);
  // The first two SUBACKs: still nothing; the last: the answer, on the RPC topic.
  d.net.from_broker(broker_suback(ids[0]));
  d.net.from_broker(broker_suback(ids[1]));
  EXPECT_EQ(d.net.out.size(), 0u);
  d.net.from_broker(broker_suback(ids[2]));
  // The answer, then the PUBACK of the initialize (queued behind the held answer).
  sent = d.sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(sent[1].type, 4);
  EXPECT_EQ(sent[0].topic, kRpc1);
  EXPECT_NE(sent[0].payload.find(R"("id":1,"result":{"protocolVersion":"2025-06-18")"), std::string::npos)
      << sent[0].payload;
  EXPECT_TRUE(has_user(sent[0], "MCP-MQTT-CLIENT-ID", "dev1"));
  EXPECT_EQ((sent[0].flags >> 1) & 3, 1);  // QoS 1
}

TEST(McpOverMqtt, ToolsAnswerOnTheRpcTopicOfTheirClient) {
  Device d;
  d.initialize("c1");
  d.initialize("c2");
  d.from("c2", "$mcp-rpc/c2/dev1/devices/test",
         R"({"jsonrpc":"2.0","id":"x","method":"tools/call","params":{"name":"echo","arguments":{"text":"hi"}}})");
  auto sent = d.sent();
  std::vector<SentPacket> pubs;
  for (const SentPacket& p : sent)
    if (p.type == 3) pubs.push_back(p);
  ASSERT_EQ(pubs.size(), 1u);
  EXPECT_EQ(pubs[0].topic, "$mcp-rpc/c2/dev1/devices/test");
  EXPECT_NE(pubs[0].payload.find(R"("id":"x","result")"), std::string::npos) << pubs[0].payload;
  EXPECT_NE(pubs[0].payload.find("hi"), std::string::npos);
}

TEST(McpOverMqtt, ListChangesGoOnceOnTheCapabilityTopic) {
  Device d;
  d.initialize("c1");
  d.initialize("c2");
  fixture::change_tables();
  int on_capability = 0;
  for (const SentPacket& p : d.sent()) {
    if (p.type != 3) continue;
    EXPECT_EQ(p.topic, "$mcp-server/capability/dev1/devices/test") << p.payload;
    EXPECT_NE(p.payload.find("list_changed"), std::string::npos);
    ++on_capability;
  }
  EXPECT_GE(on_capability, 1);
  EXPECT_EQ(static_cast<uint32_t>(on_capability), d.mqtt.stats().capability_sent);
  // One per kind of list, however many sessions.
  EXPECT_LE(on_capability, 3);
}

TEST(McpOverMqtt, TheClientsDisconnectedNotificationEndsItsSession) {
  Device d;
  d.initialize("c1");
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","method":"notifications/disconnected"})");
  std::vector<std::string> unsubscribed;
  for (const SentPacket& p : d.sent())
    if (p.type == 10) unsubscribed.push_back(filter_of(p));
  EXPECT_EQ(unsubscribed,
            (std::vector<std::string>{kRpc1, "$mcp-client/capability/c1", "$mcp-client/presence/c1"}));
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  // Its RPC topic is no session's any more.
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","id":2,"method":"ping"})");
  for (const SentPacket& p : d.sent()) EXPECT_NE(p.type, 3);
}

TEST(McpOverMqtt, TheClientsWillOnItsPresenceTopicEndsItsSession) {
  Device d;
  d.initialize("c1");
  d.from("c1", "$mcp-client/presence/c1", R"({"jsonrpc":"2.0","method":"notifications/disconnected"})");
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  EXPECT_EQ(d.mqtt.stats().ended, 1u);
  EXPECT_EQ(d.mqtt.stats().ended_by_client, 1u);
}

TEST(McpOverMqtt, AWillThatComesAsTheBrokerClosesEndsItsSessionOnce) {
  // Mosquitto publishes its clients' Wills as it shuts down, then closes: the device ends the
  // session (by its client) and cannot unsubscribe (the connection is gone). The session ends
  // once, not again when the loss is told.
  Device d;
  d.initialize("c1");
  d.net.write_fails = true;
  d.from("c1", "$mcp-client/presence/c1", R"({"jsonrpc":"2.0","method":"notifications/disconnected"})");
  d.mqtt.poll();
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  EXPECT_EQ(d.mqtt.stats().ended, 1u);
  EXPECT_EQ(d.mqtt.stats().ended_by_client, 1u);
  EXPECT_EQ(d.mqtt.stats().ended_by_loss, 0u);
  EXPECT_FALSE(d.mqtt.client().connected());
}

TEST(McpOverMqtt, RetainedMessagesOnTheServedTopicsAreDroppedAsStale) {
  Device d;
  (void)d.sent();
  // What a broker keeps reaches a subscriber flagged RETAIN (3.3.1.3); a live message does not.
  auto retained = [&](const std::string& c, const std::string& topic, const std::string& json) {
    std::vector<uint8_t> pkt = broker_publish(topic, json, ++d.next_packet,
                                              {{"MCP-COMPONENT-TYPE", "mcp-client"}, {"MCP-MQTT-CLIENT-ID", c}});
    pkt[0] |= 0x01;
    d.net.from_broker(pkt);
  };
  // A retained initialize on the control topic opens no session (its client is long gone).
  retained("ghost", "$mcp-server/dev1/devices/test", kInit);
  for (const SentPacket& p : d.sent()) EXPECT_EQ(p.type, 4) << "only the PUBACK";
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  EXPECT_EQ(d.mqtt.stats().retained, 1u);
  // A retained "disconnected" on a client's presence topic does not end its new session, a
  // retained request on its RPC topic is not answered.
  d.initialize("c1");
  retained("c1", "$mcp-client/presence/c1", R"({"jsonrpc":"2.0","method":"notifications/disconnected"})");
  retained("c1", kRpc1, R"({"jsonrpc":"2.0","id":"stale","method":"ping"})");
  retained("c1", "$mcp-client/capability/c1", R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
  for (const SentPacket& p : d.sent()) EXPECT_EQ(p.type, 4) << "only PUBACKs: " << p.payload;
  EXPECT_EQ(d.mqtt.sessions(), 1u);
  EXPECT_EQ(d.mqtt.stats().retained, 4u);
  EXPECT_EQ(d.mqtt.stats().stray, 4u);
  EXPECT_EQ(d.mqtt.stats().ended, 0u);
  // The same messages live do their work.
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","id":"live","method":"ping"})");
  bool pong = false;
  for (const SentPacket& p : d.sent()) pong |= p.type == 3 && p.payload.find(R"("id":"live","result":{})") != std::string::npos;
  EXPECT_TRUE(pong);
  d.from("c1", "$mcp-client/presence/c1", R"({"jsonrpc":"2.0","method":"notifications/disconnected"})");
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  EXPECT_EQ(d.mqtt.stats().ended_by_client, 1u);
}

TEST(McpOverMqtt, AClientBeyondTheSlotsGetsAnErrorOnItsRpcTopic) {
  Device d;  // two slots
  d.initialize("c1");
  d.initialize("c2");
  d.from("c3", "$mcp-server/dev1/devices/test", kInit);
  auto sent = d.sent();
  std::vector<SentPacket> pubs;
  for (const SentPacket& p : sent) {
    EXPECT_NE(p.type, 8) << "no subscription for a client that is refused";
    if (p.type == 3) pubs.push_back(p);
  }
  ASSERT_EQ(pubs.size(), 1u);
  EXPECT_EQ(pubs[0].topic, "$mcp-rpc/c3/dev1/devices/test");
  EXPECT_NE(pubs[0].payload.find(R"("id":1,"error":{"code":-32000)"), std::string::npos) << pubs[0].payload;
  EXPECT_EQ(d.mqtt.stats().refused, 1u);
  EXPECT_EQ(d.mqtt.sessions(), 2u);
}

TEST(McpOverMqtt, OnlyInitializeIsTakenOnTheControlTopic) {
  Device d;
  (void)d.sent();
  d.from("c1", "$mcp-server/dev1/devices/test", R"({"jsonrpc":"2.0","id":5,"method":"tools/list"})");
  auto sent = d.sent();
  int pubs = 0;
  for (const SentPacket& p : sent)
    if (p.type == 3) {
      ++pubs;
      EXPECT_EQ(p.topic, kRpc1);
      EXPECT_NE(p.payload.find(R"("id":5,"error":{"code":-32600)"), std::string::npos) << p.payload;
    }
  EXPECT_EQ(pubs, 1);
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  // Without MCP-MQTT-CLIENT-ID there is nowhere to answer: dropped, counted.
  d.net.from_broker(broker_publish("$mcp-server/dev1/devices/test", kInit, 9));
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  EXPECT_EQ(d.mqtt.stats().stray, 2u);
}

TEST(McpOverMqtt, AnAnswerLongerThanTheBufferBecomesAnErrorToItsId) {
  Device d;
  d.initialize("c1");
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"big","arguments":{}}})");
  std::vector<SentPacket> pubs;
  for (const SentPacket& p : d.sent())
    if (p.type == 3) pubs.push_back(p);
  ASSERT_EQ(pubs.size(), 1u);
  EXPECT_NE(pubs[0].payload.find(R"("id":7,"error":{"code":-32603)"), std::string::npos) << pubs[0].payload;
  EXPECT_NE(pubs[0].payload.find(R"("data":{"maxBytes":1024})"), std::string::npos) << pubs[0].payload;
  EXPECT_EQ(d.mqtt.stats().too_large, 1u);
  // And it keeps serving.
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","id":8,"method":"ping"})");
  bool pong = false;
  for (const SentPacket& p : d.sent()) pong |= p.type == 3 && p.payload.find(R"("id":8,"result":{})") != std::string::npos;
  EXPECT_TRUE(pong);
}

// The broker takes nothing from now on; two echoes (ids 1 and 4) whose answers (some 250 bytes
// each, as PUBLISH packets) leave less room in the 1,536-byte transmit buffer than a whole
// answer needs.
void fill_transmit_buffer(Device& d) {
  d.net.window = 0;
  for (const char* id : {"1", "4"})
    d.from("c1", kRpc1, std::string(R"({"jsonrpc":"2.0","id":)") + id +
                            R"(,"method":"tools/call","params":{"name":"echo","arguments":{"text":")" + std::string(100, 'a') +
                            R"("}}})");
}

TEST(McpOverMqtt, AFullTransmitBufferIsWaitedForBeforeTheRequestReachesItsHandler) {
  // The broker takes nothing: the first answers stay in the transmit buffer, until what is left
  // is too little for a whole message. The next request waits for the broker (the port's pump:
  // on a board, the network stack's input) before the server sees it, not inside its handler:
  // a deferred `slow` call is not pending yet at the wait.
  Device d;
  d.initialize("c1");
  fill_transmit_buffer(d);
  EXPECT_EQ(d.net.waits, 0) << "the buffer had room for these answers";
  // A notification needs no room: no wait.
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})");
  EXPECT_EQ(d.net.waits, 0);
  std::vector<int> pending_at_wait;
  d.net.on_wait = [&] {
    pending_at_wait.push_back(fixture::pending_slow());
    d.net.window = 1 << 24;  // the broker reads again
  };
  const int before = fixture::pending_slow();
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}})");
  ASSERT_EQ(pending_at_wait.size(), 1u);
  EXPECT_EQ(pending_at_wait[0], before) << "the wait came before the call reached its handler";
  EXPECT_EQ(fixture::pending_slow(), before + 1);
  const std::vector<SentPacket> out = d.sent();
  for (const char* id : {R"("id":1,"result")", R"("id":4,"result")"}) {
    bool found = false;
    for (const SentPacket& p : out) found |= p.type == 3 && p.payload.find(id) != std::string::npos;
    EXPECT_TRUE(found) << id << " went out";
  }
  // With room, no wait; the echo is answered.
  d.net.on_wait = nullptr;
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"echo","arguments":{"text":"three"}}})");
  EXPECT_EQ(d.net.waits, 1);
  bool third = false;
  for (const SentPacket& p : d.sent()) third |= p.type == 3 && p.payload.find(R"("id":3,"result")") != std::string::npos;
  EXPECT_TRUE(third);
  EXPECT_EQ(d.mqtt.client().stats().held_released_early, 0u);
}

TEST(McpOverMqtt, ARequestWhoseConnectionIsLostWaitingForRoomIsNotServed) {
  // The broker takes nothing for longer than send_timeout_ms while a request waits for room:
  // the connection is dropped, the call never reaches its handler (nobody would get its
  // answer), and the session ends with the connection.
  Device d;
  d.initialize("c1");
  fill_transmit_buffer(d);
  d.net.on_wait = [] { MqttClock::now += 6000; };  // past the 5 s default
  const int before = fixture::pending_slow();
  const uint32_t ended = d.mqtt.stats().ended_by_loss;
  d.from("c1", kRpc1, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"slow","arguments":{}}})");
  EXPECT_GE(d.net.waits, 1);
  EXPECT_FALSE(d.mqtt.client().connected());
  EXPECT_EQ(fixture::pending_slow(), before) << "the call did not run";
  EXPECT_EQ(d.mqtt.stats().ended_by_loss, ended + 1);
  EXPECT_EQ(d.mqtt.sessions(), 0u);
}

// A CONNACK with the user property MCP-SERVER-NAME = `name`.
std::vector<uint8_t> connack_naming(const std::string& name) {
  std::vector<uint8_t> connack{0x20, 0x00, 0x00, 0x00, 0x00};
  const std::string k = "MCP-SERVER-NAME";
  std::vector<uint8_t> prop{0x26, 0x00, static_cast<uint8_t>(k.size())};
  prop.insert(prop.end(), k.begin(), k.end());
  prop.push_back(0x00);
  prop.push_back(static_cast<uint8_t>(name.size()));
  prop.insert(prop.end(), name.begin(), name.end());
  connack[4] = static_cast<uint8_t>(prop.size());
  connack.insert(connack.end(), prop.begin(), prop.end());
  connack[1] = static_cast<uint8_t>(connack.size() - 2);
  return connack;
}

TEST(McpOverMqtt, ABrokerThatNamesTheServerAnewEachTimeIsFollowedOnce) {
  Device d(connack_naming("fleet/a"));
  d.mqtt.poll();
  EXPECT_EQ(d.net.dials, 2);
  d.net.establish();
  d.net.out.clear();
  d.net.from_broker(connack_naming("fleet/b"));  // another name again: kept, no third connection
  d.mqtt.poll();
  EXPECT_EQ(d.net.dials, 2);
  EXPECT_TRUE(d.mqtt.client().connected());
  EXPECT_EQ(d.mqtt.server_name(), emcp::StrView("fleet/a"));
  auto sent = d.sent();
  ASSERT_GE(sent.size(), 1u);
  EXPECT_EQ(filter_of(sent[0]), "$mcp-server/dev1/fleet/a");
}

TEST(McpOverMqtt, AClientTopicTheBrokerRefusesEndsThatSession) {
  Device d;
  (void)d.sent();
  d.from("c1", "$mcp-server/dev1/devices/test", kInit);
  std::vector<uint16_t> ids;
  for (const SentPacket& p : d.sent())
    if (p.type == 8) ids.push_back(id_of(p));
  ASSERT_EQ(ids.size(), 3u);
  d.net.from_broker(broker_suback(ids[0], 0x87));  // the RPC topic: Not authorized
  d.net.from_broker(broker_suback(ids[1]));
  d.net.from_broker(broker_suback(ids[2]));
  // The initialize answer, then notifications/disconnected on its RPC topic, the topics given back.
  std::vector<std::string> pubs;
  int unsubscribed = 0;
  for (const SentPacket& p : d.sent()) {
    if (p.type == 3) pubs.push_back(p.payload);
    unsubscribed += p.type == 10;
  }
  ASSERT_EQ(pubs.size(), 2u);
  EXPECT_NE(pubs[0].find(R"("id":1,"result")"), std::string::npos) << pubs[0];
  EXPECT_EQ(pubs[1], R"({"jsonrpc":"2.0","method":"notifications/disconnected"})");
  EXPECT_EQ(unsubscribed, 3);
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  EXPECT_EQ(d.mqtt.stats().subscriptions_refused, 1u);
}

TEST(McpOverMqtt, AControlTopicTheBrokerRefusesLeavesWithTheWillAndTriesAgainLater) {
  // The control topic's SUBSCRIBE refused (an ACL): no client could initialize, and the
  // presence would say otherwise. The device leaves with DISCONNECT 0x04 (the broker publishes
  // the Will: the presence cleared), dials again after the backoff, and each refusal doubles it.
  Device d;
  // The SUBSCRIBE of the control topic among what went out (after the CONNECT), the online
  // presence published behind it.
  const auto control = [](const std::vector<SentPacket>& out) {
    for (size_t i = 0; i < out.size(); ++i)
      if (out[i].type == 8) {
        EXPECT_EQ(filter_of(out[i]), "$mcp-server/dev1/devices/test");
        EXPECT_TRUE(i + 1 < out.size() && out[i + 1].type == 3);
        return id_of(out[i]);
      }
    ADD_FAILURE() << "no SUBSCRIBE";
    return uint16_t{0};
  };
  uint16_t sub = control(d.sent());
  uint64_t waited[2] = {};
  for (int round = 0; round < 2; ++round) {
    const int dials = d.net.dials;
    const int closes = d.net.closes;
    d.net.from_broker(broker_suback(sub, 0x87));  // Not authorized
    auto out = d.sent();
    ASSERT_EQ(out.size(), 1u);
    EXPECT_EQ(out[0].type, 14);  // DISCONNECT
    EXPECT_EQ(static_cast<uint8_t>(out[0].body[0]), 0x04) << "Disconnect with Will Message";
    EXPECT_EQ(d.net.closes, closes + 1);
    EXPECT_FALSE(d.mqtt.client().connected());
    EXPECT_EQ(d.mqtt.stats().control_refused, static_cast<uint32_t>(round + 1));
    // Dialed again after the backoff only.
    const uint64_t left_at = MqttClock::now;
    while (d.net.dials == dials && MqttClock::now - left_at < 120000) {
      MqttClock::now += 50;
      d.mqtt.poll();
    }
    ASSERT_EQ(d.net.dials, dials + 1);
    waited[round] = MqttClock::now - left_at;
    d.net.establish();
    d.net.from_broker({0x20, 0x03, 0x00, 0x00, 0x00});
    sub = control(d.sent());
  }
  EXPECT_GE(waited[0], 250u);  // at least half of backoff_min_ms (500 ms, jitter)
  EXPECT_GE(waited[1], 500u) << "the second refusal waits at least half of twice the first's backoff";
  EXPECT_EQ(d.mqtt.client().stats().left, 2u);
  // A control topic granted: it stays.
  d.net.from_broker(broker_suback(sub));
  EXPECT_TRUE(d.mqtt.client().connected());
  EXPECT_EQ(d.mqtt.stats().control_refused, 2u);
  // ... and a refusal after that (the connection lost, the ACL changed again) waits the least
  // backoff again, not the doubled one.
  d.net.handler.closed(d.net.conn);
  while (d.net.dials < 4 && MqttClock::now < 10000000) {
    MqttClock::now += 50;
    d.mqtt.poll();
  }
  d.net.establish();
  d.net.from_broker({0x20, 0x03, 0x00, 0x00, 0x00});
  sub = control(d.sent());
  const int dials = d.net.dials;
  d.net.from_broker(broker_suback(sub, 0x87));
  const uint64_t left_at = MqttClock::now;
  while (d.net.dials == dials && MqttClock::now - left_at < 120000) {
    MqttClock::now += 50;
    d.mqtt.poll();
  }
  EXPECT_LE(MqttClock::now - left_at, 550u) << "the least backoff (500 ms) again, not the doubled one";
}

TEST(McpOverMqtt, ANameTheBrokerGivesIsTakenWithAFreshConnection) {
  Device d(connack_naming("fleet/a"));
  EXPECT_EQ(d.mqtt.server_name(), emcp::StrView("fleet/a"));
  d.mqtt.poll();
  EXPECT_EQ(d.net.dials, 2);
  d.net.out.clear();
  d.net.establish();
  auto connect = d.sent();
  ASSERT_EQ(connect.size(), 1u);
  EXPECT_NE(connect[0].body.find("$mcp-server/presence/dev1/fleet/a"), std::string::npos);
  d.net.from_broker({0x20, 0x03, 0x00, 0x00, 0x00});
  auto sent = d.sent();
  ASSERT_EQ(sent.size(), 2u);
  EXPECT_EQ(filter_of(sent[0]), "$mcp-server/dev1/fleet/a");
  EXPECT_EQ(sent[1].topic, "$mcp-server/presence/dev1/fleet/a");
}

TEST(McpOverMqtt, ALostBrokerConnectionEndsEverySession) {
  Device d;
  d.initialize("c1");
  d.net.open = false;
  d.net.handler.closed(d.net.conn);
  EXPECT_EQ(d.mqtt.sessions(), 0u);
  EXPECT_EQ(d.mqtt.stats().ended, 1u);
  EXPECT_EQ(d.mqtt.stats().ended_by_loss, 1u);
  EXPECT_EQ(d.mqtt.stats().ended_by_client, 0u);
}

TEST(McpOverMqtt, StopTellsTheClientsClearsThePresenceAndDisconnects) {
  Device d;
  d.initialize("c1");
  d.mqtt.stop();
  auto sent = d.sent();
  ASSERT_GE(sent.size(), 3u);
  bool told = false, cleared = false;
  for (const SentPacket& p : sent) {
    if (p.type == 3 && p.topic == kRpc1) told = p.payload == R"({"jsonrpc":"2.0","method":"notifications/disconnected"})";
    if (p.type == 3 && p.topic == "$mcp-server/presence/dev1/devices/test")
      cleared = p.payload.empty() && (p.flags & 1) == 1;
  }
  EXPECT_TRUE(told);
  EXPECT_TRUE(cleared);
  EXPECT_EQ(sent.back().type, 14);  // DISCONNECT last
  EXPECT_EQ(d.mqtt.sessions(), 0u);
}

}  // namespace
