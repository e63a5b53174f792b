// MQTT 5.0 packets (emcp/mqtt/packet.h) against the OASIS text ("MQTT Version 5.0", 7 March
// 2019): the examples of its figures (3-6 CONNECT variable header, 3-9 PUBLISH variable header,
// 3-19/3-21 SUBSCRIBE, 3-30 UNSUBSCRIBE), Table 1-1's Variable Byte Integers, a real client's
// CONNECT captured on the wire, hand-written packets of each kind a server sends, each fed whole,
// byte by byte and cut at every position, and a bad-input table: one row per rule, with the
// reason code the text calls for. The reader and the encoders run inside a NoHeapScope.
#include <gtest/gtest.h>
#include <stdio.h>
#include <string.h>

#include <string>
#include <string_view>
#include <vector>

#include "emcp/mqtt/packet.h"
#include "heap_guard.h"
#include "no_heap_util.h"

namespace {

using namespace emcp::mqtt;
using emcp::StrView;
using Event = PacketReader::Event;
using Bytes = std::vector<uint8_t>;

// Bytes written as hex pairs and 'quoted ASCII', separated by spaces: "00 03 'a/b' 00 0a".
Bytes H(const char* s) {
  Bytes out;
  while (*s != '\0') {
    if (*s == ' ') {
      ++s;
    } else if (*s == '\'') {
      for (++s; *s != '\0' && *s != '\''; ++s) out.push_back(static_cast<uint8_t>(*s));
      if (*s == '\'') ++s;
    } else {
      unsigned v = 0;
      EXPECT_EQ(sscanf(s, "%2x", &v), 1) << "bad hex at " << s;
      out.push_back(static_cast<uint8_t>(v));
      s += 2;
    }
  }
  return out;
}

Bytes operator+(Bytes a, const Bytes& b) {
  a.insert(a.end(), b.begin(), b.end());
  return a;
}

std::string_view sv(StrView s) { return std::string_view(s.data(), s.size()); }
std::string_view sv(const Bytes& b) { return std::string_view(reinterpret_cast<const char*>(b.data()), b.size()); }

// Table 1-1: the first and last value of each size of Variable Byte Integer but 0.
struct VarintRow {
  uint32_t value;
  const char* bytes;
};
const VarintRow kTable1_1[] = {{127, "7f"},         {128, "80 01"},        {16383, "ff 7f"},
                               {16384, "80 80 01"}, {2097151, "ff ff 7f"}, {2097152, "80 80 80 01"},
                               {268435455, "ff ff ff 7f"}};

// A reader with a head buffer of its own, pushed whole byte arrays.
struct Reader {
  explicit Reader(size_t head_cap = 256, uint32_t max_packet = 0) : rx(head, head_cap, max_packet) {}
  Event push(const Bytes& b, size_t from = 0) { return rx.push(b.data() + from, b.size() - from, &used); }
  char head[256];
  PacketReader rx;
  size_t used = 0;
};

// ---- Encoders --------------------------------------------------------------------------------

// Runs `encode(buf, cap)` with the heap closed, for the exact size and for every smaller cap
// (which must give 0 and leave the buffer as it was), and returns what it wrote.
template <typename F>
Bytes encoded(F encode) {
  char buf[512];
  size_t n;
  {
    emcp_test::NoHeapScope no_heap;
    memset(buf, 0xAA, sizeof buf);
    n = encode(buf, sizeof buf);
  }
  const Bytes out(buf, buf + n);
  for (size_t cap = 0; cap < n; ++cap) {
    char small[512];
    memset(small, 0xAA, sizeof small);
    size_t got;
    {
      emcp_test::NoHeapScope no_heap;
      got = encode(small, cap);
    }
    EXPECT_EQ(got, 0u) << "cap " << cap << " of " << n;
    for (size_t i = 0; i < sizeof small; ++i)
      if (static_cast<uint8_t>(small[i]) != 0xAA) {
        ADD_FAILURE() << "cap " << cap << ": byte " << i << " written";
        break;
      }
  }
  return out;
}

TEST(MqttEncode, ConnectVariableHeaderIsFigure3_6) {
  // 3.1.2.12, Figure 3-6: Protocol Name "MQTT", Version 5, Connect Flags 11001110 (User Name,
  // Password, Will QoS 01, Will Flag, Clean Start), Keep Alive 10, Properties: Length 5, Session
  // Expiry Interval (17) 10.
  const Will will{"w", "x", 1, false, nullptr, 0};
  ConnectOptions o;
  o.keep_alive_s = 10;
  o.session_expiry_s = 10;
  o.username = "u";
  o.password = "p";
  o.will = &will;
  const Bytes got = encoded([&](char* b, size_t c) { return encode_connect(o, b, c); });
  const Bytes figure = H("00 04 'MQTT' 05 ce 00 0a 05 11 00 00 00 0a");
  ASSERT_GE(got.size(), 2 + figure.size());
  const Bytes variable_header(got.begin() + 2, got.begin() + 2 + static_cast<long>(figure.size()));
  EXPECT_EQ(sv(variable_header), sv(figure));
  // 3.1.3: Client Identifier (empty), Will Properties (none), Will Topic, Will Payload, User
  // Name, Password.
  EXPECT_EQ(sv(got), sv(H("10 1f") + figure + H("00 00 00 00 01 'w' 00 01 'x' 00 01 'u' 00 01 'p'")));
}

TEST(MqttEncode, ConnectIsWhatARealClientSends) {
  // MQTTX CLI's CONNECT as captured by EMQX ("MQTT 5.0 Packet Explained 01: CONNECT & CONNACK"):
  // MQTT 5, Clean Start, Keep Alive 60, Session Expiry Interval 300, user admin, password public.
  ConnectOptions o;
  o.client_id = "mqttx_0c668d0d";
  o.keep_alive_s = 60;
  o.session_expiry_s = 300;
  o.username = "admin";
  o.password = "public";
  const Bytes got = encoded([&](char* b, size_t c) { return encode_connect(o, b, c); });
  EXPECT_EQ(sv(got), sv(H("10 2f 00 04 4d 51 54 54 05 c2 00 3c 05 11 00 00 01 2c 00 0e 6d 71 74 74 78 5f 30 63 "
                          "36 36 38 64 30 64 00 05 61 64 6d 69 6e 00 06 70 75 62 6c 69 63")));
}

TEST(MqttEncode, ConnectWithEveryOption) {
  const UserProperty user[] = {{"app", "emcp"}, {"app", "2"}};
  const UserProperty will_user[] = {{"why", "lost"}};
  const Will will{"dev/1/state", "gone", 1, true, will_user, 1};
  ConnectOptions o;
  o.client_id = "dev1";
  o.keep_alive_s = 0x1234;
  o.clean_start = false;
  o.receive_maximum = 16;
  o.maximum_packet_size = 1024;
  o.user = user;
  o.user_count = 2;
  o.will = &will;
  o.password = "tok";  // 3.1.2.9: a Password without a User Name is allowed in 5.0
  const Bytes got = encoded([&](char* b, size_t c) { return encode_connect(o, b, c); });
  // Flags 01101100: Password, Will Retain, Will QoS 1, Will Flag; Clean Start 0.
  // Properties (29): Receive Maximum 16, Maximum Packet Size 1024, two User Properties.
  // Will Properties (12): one User Property.
  EXPECT_EQ(sv(got), sv(H("10 53 00 04 'MQTT' 05 6c 12 34 1d 21 00 10 27 00 00 04 00 "
                          "26 00 03 'app' 00 04 'emcp' 26 00 03 'app' 00 01 '2' "
                          "00 04 'dev1' 0c 26 00 03 'why' 00 04 'lost' 00 0b 'dev/1/state' 00 04 'gone' "
                          "00 03 'tok'")));
}

TEST(MqttEncode, ConnectRefusesWhatTheTextForbids) {
  char buf[256];
  emcp_test::NoHeapScope no_heap;
  ConnectOptions o;
  o.receive_maximum = 0;  // 3.1.2.11.3: a Protocol Error
  EXPECT_EQ(encode_connect(o, buf, sizeof buf), 0u);
  o = ConnectOptions();
  o.client_id = StrView("a\0b", 3);  // [MQTT-1.5.4-2]
  EXPECT_EQ(encode_connect(o, buf, sizeof buf), 0u);
  o.client_id = "\xc0\xaf";  // overlong: not well-formed UTF-8 [MQTT-1.5.4-1]
  EXPECT_EQ(encode_connect(o, buf, sizeof buf), 0u);
  o.client_id = "\xed\xa0\x80";  // a surrogate [MQTT-1.5.4-1]
  EXPECT_EQ(encode_connect(o, buf, sizeof buf), 0u);
  o.client_id = "ok";
  Will will{"a/+", "x", 0, false, nullptr, 0};  // a wildcard in the Will Topic [MQTT-4.7.0-1]
  o.will = &will;
  EXPECT_EQ(encode_connect(o, buf, sizeof buf), 0u);
  will.topic = "a";
  will.qos = 2;  // emcp sends QoS 0 and 1 only
  EXPECT_EQ(encode_connect(o, buf, sizeof buf), 0u);
  will.qos = 0;
  will.user_count = 1;  // a count without properties
  EXPECT_EQ(encode_connect(o, buf, sizeof buf), 0u);
  will.user_count = 0;
  EXPECT_GT(encode_connect(o, buf, sizeof buf), 0u);
  EXPECT_EQ(encode_connect(o, nullptr, sizeof buf), 0u);
}

TEST(MqttEncode, SubscribeIsFigures3_19And3_21) {
  // Figure 3-19: Packet Identifier 10, no properties; Figure 3-21: "a/b" at QoS 1.
  const Subscription subs[] = {{"a/b", 1, false, false, 0}};
  EXPECT_EQ(sv(encoded([&](char* b, size_t c) { return encode_subscribe(10, subs, 1, b, c); })),
            sv(H("82 09 00 0a 00 00 03 'a/b' 01")));
  // 3.8.3.1: QoS 0, No Local (bit 2), Retain As Published (bit 3), Retain Handling 2 (bits 4-5).
  const Subscription opts[] = {{"a/+", 0, true, true, 2}, {"#", 1, false, false, 1}};
  EXPECT_EQ(sv(encoded([&](char* b, size_t c) { return encode_subscribe(0xBEEF, opts, 2, b, c); })),
            sv(H("82 0d be ef 00 00 03 'a/+' 2c 00 01 '#' 11")));
}

TEST(MqttEncode, SubscribeRefusesWhatTheTextForbids) {
  char buf[256];
  emcp_test::NoHeapScope no_heap;
  const Subscription ok[] = {{"a/b", 1, false, false, 0}};
  EXPECT_EQ(encode_subscribe(0, ok, 1, buf, sizeof buf), 0u);  // [MQTT-2.2.1-3]
  EXPECT_EQ(encode_subscribe(1, ok, 0, buf, sizeof buf), 0u);  // [MQTT-3.8.3-2]
  const Subscription qos2[] = {{"c/d", 2, false, false, 0}};   // Figure 3-21's second filter
  EXPECT_EQ(encode_subscribe(1, qos2, 1, buf, sizeof buf), 0u);
  const Subscription rh3[] = {{"a", 0, false, false, 3}};  // 3.8.3.1: Retain Handling 3
  EXPECT_EQ(encode_subscribe(1, rh3, 1, buf, sizeof buf), 0u);
  const Subscription bad[] = {{"sport/tennis#", 0, false, false, 0}};  // [MQTT-4.7.1-1]
  EXPECT_EQ(encode_subscribe(1, bad, 1, buf, sizeof buf), 0u);
  const Subscription shared_no_local[] = {{"$share/g/a", 0, true, false, 0}};  // [MQTT-3.8.3-4]
  EXPECT_EQ(encode_subscribe(1, shared_no_local, 1, buf, sizeof buf), 0u);
  const Subscription shared[] = {{"$share/g/a", 0, false, false, 0}};
  EXPECT_GT(encode_subscribe(1, shared, 1, buf, sizeof buf), 0u);
}

TEST(MqttEncode, UnsubscribeIsFigure3_30) {
  const StrView filters[] = {"a/b", "c/d"};
  EXPECT_EQ(sv(encoded([&](char* b, size_t c) { return encode_unsubscribe(10, filters, 2, b, c); })),
            sv(H("a2 0d 00 0a 00 00 03 'a/b' 00 03 'c/d'")));
  emcp_test::NoHeapScope no_heap;
  char buf[64];
  EXPECT_EQ(encode_unsubscribe(10, filters, 0, buf, sizeof buf), 0u);  // [MQTT-3.10.3-2]
  EXPECT_EQ(encode_unsubscribe(0, filters, 2, buf, sizeof buf), 0u);
  const StrView bad[] = {"a/#/b"};
  EXPECT_EQ(encode_unsubscribe(1, bad, 1, buf, sizeof buf), 0u);
}

TEST(MqttEncode, PublishHeaderIsFigure3_9) {
  // Figure 3-9: Topic Name "a/b", Packet Identifier 10, no properties.
  PublishHeader h;
  h.topic = "a/b";
  h.qos = 1;
  h.packet_id = 10;
  const Bytes got = encoded([&](char* b, size_t c) { return encode_publish_header(h, 2, b, c); });
  EXPECT_EQ(sv(got), sv(H("32 0a 00 03 'a/b' 00 0a 00")));
  EXPECT_EQ(publish_header_size(h, 2), got.size());
}

TEST(MqttEncode, PublishHeaderWithProperties) {
  const UserProperty user[] = {{"k", "v"}};
  PublishHeader h;
  h.topic = "a/b";
  h.qos = 1;
  h.dup = true;
  h.retain = true;
  h.packet_id = 10;
  h.utf8_payload = true;  // 3.3.2.3.2
  h.content_type = "text/plain";
  h.user = user;
  h.user_count = 1;
  const Bytes got = encoded([&](char* b, size_t c) { return encode_publish_header(h, 5, b, c); });
  EXPECT_EQ(sv(got), sv(H("3b 23 00 03 'a/b' 00 0a 16 01 01 03 00 0a 'text/plain' 26 00 01 'k' 00 01 'v'")));
}

TEST(MqttEncode, RemainingLengthIsTable1_1) {
  // Table 1-1: each size's first and last value. A PUBLISH to "t" at QoS 0 without properties has
  // a 4-byte variable header, so its payload makes up the rest.
  PublishHeader h;
  h.topic = "t";
  for (const VarintRow& r : kTable1_1) {
    SCOPED_TRACE(r.value);
    const Bytes got = encoded([&](char* b, size_t c) { return encode_publish_header(h, r.value - 4, b, c); });
    EXPECT_EQ(sv(got), sv(H("30") + H(r.bytes) + H("00 01 't' 00")));
  }
  // 0: a DISCONNECT's short form (3.14.2.1).
  EXPECT_EQ(sv(encoded([](char* b, size_t c) { return encode_disconnect(Reason::kSuccess, "", b, c); })),
            sv(H("e0 00")));
  emcp_test::NoHeapScope no_heap;
  EXPECT_EQ(publish_header_size(h, 268435455 - 4 + 1), 0u);  // beyond four bytes
  EXPECT_EQ(publish_header_size(h, 0xFFFFFFFFu), 0u);
}

TEST(MqttEncode, PublishRefusesWhatTheTextForbids) {
  emcp_test::NoHeapScope no_heap;
  PublishHeader h;
  h.topic = "a/+";  // [MQTT-3.3.2-2]
  EXPECT_EQ(publish_header_size(h, 0), 0u);
  h.topic = "";  // [MQTT-4.7.3-1]
  EXPECT_EQ(publish_header_size(h, 0), 0u);
  h.topic = "a";
  h.qos = 2;
  EXPECT_EQ(publish_header_size(h, 0), 0u);
  h.qos = 1;  // packet id 0 [MQTT-2.2.1-3]
  EXPECT_EQ(publish_header_size(h, 0), 0u);
  h.qos = 0;
  h.dup = true;  // [MQTT-3.3.1-2]
  EXPECT_EQ(publish_header_size(h, 0), 0u);
  h.dup = false;
  h.content_type = "\xff";
  EXPECT_EQ(publish_header_size(h, 0), 0u);
  h.content_type = "";
  EXPECT_EQ(publish_header_size(h, 0), 6u);  // 30 04 00 01 'a' 00
  char buf[5];
  EXPECT_EQ(encode_publish_header(h, 0, buf, sizeof buf), 0u);
}

TEST(MqttEncode, PubackPingreqDisconnect) {
  // 3.4.2.1: Success without properties is Remaining Length 2; 3.4.2.2.1: below 4, no Property
  // Length.
  EXPECT_EQ(sv(encoded([](char* b, size_t c) { return encode_puback(10, Reason::kSuccess, b, c); })),
            sv(H("40 02 00 0a")));
  EXPECT_EQ(sv(encoded([](char* b, size_t c) { return encode_puback(0x1234, Reason::kQuotaExceeded, b, c); })),
            sv(H("40 03 12 34 97")));
  EXPECT_EQ(sv(encoded([](char* b, size_t c) { return encode_pingreq(b, c); })), sv(H("c0 00")));
  EXPECT_EQ(sv(encoded([](char* b, size_t c) { return encode_disconnect(Reason::kDisconnectWithWill, "", b, c); })),
            sv(H("e0 01 04")));
  EXPECT_EQ(sv(encoded([](char* b, size_t c) { return encode_disconnect(Reason::kSuccess, "bye", b, c); })),
            sv(H("e0 08 00 06 1f 00 03 'bye'")));
  emcp_test::NoHeapScope no_heap;
  char buf[16];
  EXPECT_EQ(encode_puback(0, Reason::kSuccess, buf, sizeof buf), 0u);
  EXPECT_EQ(encode_puback(1, Reason::kNoSubscriptionExisted, buf, sizeof buf), 0u);  // not Table 3-4
  EXPECT_EQ(encode_disconnect(Reason::kServerShuttingDown, "", buf, sizeof buf), 0u);  // a server's code
  EXPECT_EQ(encode_disconnect(Reason::kSuccess, StrView("\0", 1), buf, sizeof buf), 0u);
}

TEST(MqttEncode, ReasonNamesAreTable2_6) {
  EXPECT_STREQ(reason_str(Reason::kMalformedPacket), "Malformed Packet");
  EXPECT_STREQ(reason_str(Reason::kTopicAliasInvalid), "Topic Alias invalid");
  EXPECT_STREQ(reason_str(Reason::kWildcardSubscriptionsNotSupported), "Wildcard Subscriptions not supported");
  EXPECT_STREQ(reason_str(Reason::kNoMatchingSubscribers), "No matching subscribers");
  EXPECT_STREQ(reason_str(static_cast<Reason>(0x03)), "");
  EXPECT_STREQ(reason_str(static_cast<Reason>(0xFF)), "");
}

// ---- Topics (4.7) ------------------------------------------------------------------------------

TEST(MqttTopic, FiltersOf4_7_1) {
  for (const char* f : {"sport/tennis/player1/#", "#", "sport/tennis/#", "+", "+/tennis/#", "sport/+/player1", "/",
                        "//", "Accounts payable", "$SYS/#", "$share/consumer1/sport/tennis/+", "$share/c//finance"}) {
    EXPECT_TRUE(valid_topic_filter(f)) << f;
  }
  for (const char* f : {"sport/tennis#", "sport/tennis/#/ranking", "sport+", "", "#/", "a/+b", "$share//a",
                        "$share/g", "$share/g/", "$share/g+/a", "\xc3"}) {
    EXPECT_FALSE(valid_topic_filter(f)) << f;
  }
  EXPECT_FALSE(valid_topic_filter(StrView("a\0", 2)));  // [MQTT-4.7.3-2]
}

TEST(MqttTopic, NamesOf4_7_3) {
  for (const char* t : {"/", "/finance", "Accounts payable", "$SYS/monitor/Clients", "\xe2\x82\xac"})
    EXPECT_TRUE(valid_topic_name(t)) << t;
  for (const char* t : {"", "a/+", "#", "a#", "\xed\xbf\xbf"}) EXPECT_FALSE(valid_topic_name(t)) << t;
  const std::string longest(65535, 'a'), too_long(65536, 'a');
  EXPECT_TRUE(valid_topic_name(StrView(longest.data(), longest.size())));
  EXPECT_FALSE(valid_topic_name(StrView(too_long.data(), too_long.size())));  // [MQTT-4.7.3-3]
}

TEST(MqttTopic, MatchingOf4_7_1And4_7_2) {
  struct Row {
    const char* filter;
    const char* topic;
    bool match;
  };
  // The non-normative examples of 4.7.1.2, 4.7.1.3, 4.7.2 and 4.7.3.
  const Row rows[] = {
      {"sport/tennis/player1/#", "sport/tennis/player1", true},
      {"sport/tennis/player1/#", "sport/tennis/player1/ranking", true},
      {"sport/tennis/player1/#", "sport/tennis/player1/score/wimbledon", true},
      {"sport/#", "sport", true},
      {"#", "anything/at/all", true},
      {"sport/tennis/+", "sport/tennis/player1", true},
      {"sport/tennis/+", "sport/tennis/player2", true},
      {"sport/tennis/+", "sport/tennis/player1/ranking", false},
      {"sport/+", "sport", false},
      {"sport/+", "sport/", true},
      {"+/+", "/finance", true},
      {"/+", "/finance", true},
      {"+", "/finance", false},
      {"#", "$SYS/monitor/Clients", false},
      {"+/monitor/Clients", "$SYS/monitor/Clients", false},
      {"$SYS/#", "$SYS/monitor/Clients", true},
      {"$SYS/monitor/+", "$SYS/monitor/Clients", true},
      {"ACCOUNTS", "Accounts", false},
      {"/finance", "finance", false},
      {"sport/tennis/player1", "sport/tennis/player1", true},
      {"sport/tennis", "sport/tennis/player1", false},
      {"sport/tennis/player1", "sport/tennis", false},
  };
  emcp_test::NoHeapScope no_heap;
  for (const Row& r : rows) EXPECT_EQ(topic_matches(r.filter, r.topic), r.match) << r.filter << " " << r.topic;
}

// ---- Reader ------------------------------------------------------------------------------------

// What a reader made of a stream: a line per packet with its fields, each payload's bytes, and
// the error. Payload chunks are concatenated, so that every split of the same bytes reads the same.
struct Trace {
  emcp_test::FixedText<8192> text;
  Reason error = Reason::kSuccess;
  bool failed = false;
};

void describe(const Packet& p, emcp_test::FixedText<8192>& out) {
  char line[512];
  const int n = snprintf(line, sizeof line, "[t%u f%u rl%u id%u r%02x q%u%s%s sp%u rm%u mps%u mq%u ra%u wa%u ka%s%u pl%u ",
                         static_cast<unsigned>(p.type), p.flags, p.remaining, p.packet_id,
                         static_cast<unsigned>(p.reason), p.qos, p.retain ? " R" : "", p.dup ? " D" : "",
                         p.session_present, p.receive_maximum, p.maximum_packet_size, p.maximum_qos,
                         p.retain_available, p.wildcard_available, p.server_keep_alive_set ? "=" : "",
                         p.server_keep_alive, p.payload_len);
  out.append(line, static_cast<size_t>(n));
  out.append("topic=");
  out.append(sv(p.topic));
  out.append(" codes=");
  for (char c : sv(p.reason_codes)) {
    snprintf(line, sizeof line, "%02x", static_cast<uint8_t>(c));
    out.append(line, 2);
  }
  out.append(" rs=");
  out.append(sv(p.reason_string));
  out.append(" cid=");
  out.append(sv(p.assigned_client_id));
  out.append("]");
}

// Feeds the pieces of `bytes` cut at `cuts` (ascending positions) to one reader.
Trace feed(const Bytes& bytes, const std::vector<size_t>& cuts, size_t head_cap = 512, uint32_t max_packet = 0) {
  Trace t;
  std::vector<size_t> ends = cuts;
  ends.push_back(bytes.size());
  emcp_test::NoHeapScope no_heap;
  char head[512];
  PacketReader rx(head, head_cap, max_packet);
  size_t start = 0;
  for (size_t end : ends) {
    const uint8_t* d = bytes.data() + start;
    size_t n = end - start;
    const uint8_t* const piece = d;
    const size_t piece_len = n;
    start = end;
    for (;;) {
      size_t used = 99;
      const Event e = rx.push(d, n, &used);
      EXPECT_LE(used, n);
      d += used;
      n -= used;
      switch (e) {
        case Event::kNeedInput:
          EXPECT_EQ(n, 0u);
          break;
        case Event::kPacket:
          describe(rx.packet(), t.text);
          continue;
        case Event::kPayload: {
          const StrView c = rx.payload();
          EXPECT_GT(c.size(), 0u);
          EXPECT_TRUE(reinterpret_cast<const uint8_t*>(c.data()) >= piece &&
                      reinterpret_cast<const uint8_t*>(c.data()) + c.size() <= piece + piece_len)
              << "a payload chunk outside the bytes pushed";
          t.text.append(c.data(), c.size());
          continue;
        }
        case Event::kPayloadEnd:
          t.text.append("|");
          continue;
        case Event::kError: {
          t.failed = true;
          t.error = rx.error();
          // Refused until reset(): nothing consumed.
          size_t again = 99;
          EXPECT_EQ(rx.push(d, n, &again), Event::kError);
          EXPECT_EQ(again, 0u);
          return t;
        }
      }
      break;
    }
  }
  return t;
}

Trace whole(const Bytes& b, size_t head_cap = 512, uint32_t max_packet = 0) { return feed(b, {}, head_cap, max_packet); }

// The same trace whole, byte by byte and cut in two at every position.
Trace every_split(const Bytes& b, size_t head_cap = 512, uint32_t max_packet = 0) {
  const Trace w = whole(b, head_cap, max_packet);
  std::vector<size_t> bytewise;
  for (size_t i = 1; i < b.size(); ++i) bytewise.push_back(i);
  const Trace one = feed(b, bytewise, head_cap, max_packet);
  EXPECT_EQ(one.text.view(), w.text.view()) << "byte by byte";
  EXPECT_EQ(one.failed, w.failed);
  EXPECT_EQ(one.error, w.error);
  for (size_t cut = 0; cut <= b.size(); ++cut) {
    const Trace s = feed(b, {cut}, head_cap, max_packet);
    EXPECT_EQ(s.text.view(), w.text.view()) << "cut at " << cut;
    EXPECT_EQ(s.error, w.error) << "cut at " << cut;
  }
  return w;
}

// Hand-written packets of each kind a server sends (chapter 3).
const char* const kConnackMinimal = "20 03 00 00 00";
// CONNACK, Session Present, Success, 64 bytes of properties: Receive Maximum 20, Maximum Packet
// Size 65536, Maximum QoS 1, Retain Available 0, Wildcard Subscription Available 0, Server Keep
// Alive 30, Assigned Client Identifier "auto", Topic Alias Maximum 10, Reason String "ok", User
// Properties a=1 a=2 b=3, Session Expiry Interval 60, Server Reference "srv".
const char* const kConnackFull =
    "20 43 01 00 40 21 00 14 27 00 01 00 00 24 01 25 00 28 00 13 00 1e 12 00 04 'auto' 22 00 0a "
    "1f 00 02 'ok' 26 00 01 'a' 00 01 '1' 26 00 01 'a' 00 01 '2' 26 00 01 'b' 00 01 '3' "
    "11 00 00 00 3c 1c 00 03 'srv'";
const char* const kPublishFigure = "32 0a 00 03 'a/b' 00 0a 00 'hi'";  // Figure 3-9, payload "hi"
const char* const kPublishEmpty = "31 05 00 02 't/' 00";              // QoS 0, RETAIN, no payload
// QoS 1, DUP, RETAIN, "dev/1", id 0x1234, 39 bytes of properties: Payload Format Indicator 1,
// Message Expiry Interval 60, Content Type "json", Response Topic "reply", Correlation Data ab cd,
// Subscription Identifiers 5 and 128, User Property k=v; payload "payload!".
const char* const kPublishFull =
    "3b 39 00 05 'dev/1' 12 34 27 01 01 02 00 00 00 3c 03 00 04 'json' 08 00 05 'reply' 09 00 02 ab cd "
    "0b 05 0b 80 01 26 00 01 'k' 00 01 'v' 'payload!'";
const char* const kPubackShort = "40 02 00 0a";
const char* const kPubackCode = "40 03 00 0b 10";
const char* const kPubackFull = "40 0a 00 0c 97 06 1f 00 03 'bad'";
const char* const kSuback = "90 05 00 01 00 01 80";
const char* const kUnsuback = "b0 04 00 02 00 11";
const char* const kPingresp = "d0 00";
const char* const kDisconnectShort = "e0 00";
const char* const kDisconnectCode = "e0 01 8b";
const char* const kDisconnectFull = "e0 0d 9c 0b 1c 00 08 'host:883'";

TEST(MqttReader, PropertiesWalkAndUser) {
  const Bytes b = H(kConnackFull);
  Reader r;
  emcp_test::NoHeapScope no_heap;
  ASSERT_EQ(r.push(b), Event::kPacket);
  EXPECT_EQ(r.used, b.size());
  const Properties& props = r.rx.packet().props;
  EXPECT_EQ(props.raw().size(), 64u);
  const PropertyId ids[] = {PropertyId::kReceiveMaximum, PropertyId::kMaximumPacketSize, PropertyId::kMaximumQos,
                            PropertyId::kRetainAvailable, PropertyId::kWildcardSubscriptionAvailable,
                            PropertyId::kServerKeepAlive, PropertyId::kAssignedClientIdentifier,
                            PropertyId::kTopicAliasMaximum, PropertyId::kReasonString, PropertyId::kUserProperty,
                            PropertyId::kUserProperty, PropertyId::kUserProperty,
                            PropertyId::kSessionExpiryInterval, PropertyId::kServerReference};
  const uint32_t numbers[] = {20, 65536, 1, 0, 0, 30, 0, 10, 0, 0, 0, 0, 60, 0};
  const char* texts[] = {"", "", "", "", "", "", "auto", "", "ok", "a", "a", "b", "", "srv"};
  const char* values[] = {"", "", "", "", "", "", "", "", "", "1", "2", "3", "", ""};
  size_t pos = 0, i = 0;
  Property p;
  while (props.next(&pos, &p)) {
    ASSERT_LT(i, 14u);
    EXPECT_EQ(p.id, ids[i]) << i;
    EXPECT_EQ(p.number, numbers[i]) << i;
    EXPECT_TRUE(p.text.equals(texts[i])) << i;
    EXPECT_TRUE(p.value.equals(values[i])) << i;
    ++i;
  }
  EXPECT_EQ(i, 14u);
  EXPECT_EQ(pos, 64u);
  StrView v;
  EXPECT_TRUE(props.user("a", &v));
  EXPECT_TRUE(v.equals("1"));  // the first of two
  EXPECT_TRUE(props.user("b", &v));
  EXPECT_TRUE(v.equals("3"));
  EXPECT_FALSE(props.user("c", &v));
  // A buffer the reader did not check ends the walk instead of reading past it.
  const Properties cut(StrView("\x26\x00\x05" "ab", 5));
  pos = 0;
  EXPECT_FALSE(cut.next(&pos, &p));
  EXPECT_FALSE(Properties().next(&pos, &p));
}

TEST(MqttReader, PublishPropertiesAreReadable) {
  const Bytes b = H(kPublishFull);
  Reader r(51);  // the head: 2 + 49 bytes
  emcp_test::NoHeapScope no_heap;
  ASSERT_EQ(r.push(b), Event::kPacket);
  const Packet& pk = r.rx.packet();
  EXPECT_EQ(pk.payload_len, 8u);
  size_t pos = 0;
  Property p;
  uint32_t sub_ids[2] = {0, 0};
  int n_sub = 0;
  bool content_type = false, correlation = false;
  while (pk.props.next(&pos, &p)) {
    if (p.id == PropertyId::kSubscriptionIdentifier && n_sub < 2) sub_ids[n_sub++] = p.number;
    if (p.id == PropertyId::kContentType) content_type = p.text.equals("json");
    if (p.id == PropertyId::kCorrelationData) correlation = p.text == StrView("\xab\xcd", 2);
  }
  EXPECT_EQ(n_sub, 2);
  EXPECT_EQ(sub_ids[0], 5u);
  EXPECT_EQ(sub_ids[1], 128u);
  EXPECT_TRUE(content_type);
  EXPECT_TRUE(correlation);
  StrView v;
  EXPECT_TRUE(pk.props.user("k", &v));
  EXPECT_TRUE(v.equals("v"));
  // The payload follows, a view into the bytes pushed; the head stays readable meanwhile.
  ASSERT_EQ(r.push(b, r.used), Event::kPayload);
  EXPECT_EQ(sv(r.rx.payload()), "payload!");
  EXPECT_TRUE(r.rx.packet().topic.equals("dev/1"));
  ASSERT_EQ(r.push(b, b.size()), Event::kPayloadEnd);
  EXPECT_EQ(r.used, 0u);
  EXPECT_TRUE(r.rx.packet().topic.equals("dev/1"));
  EXPECT_EQ(r.push(b, b.size()), Event::kNeedInput);
}

TEST(MqttReader, EachPacketKindInEverySplit) {
  // Each packet's fields (absent ones at their defaults: Receive Maximum 65535, Maximum QoS 2,
  // Retain and Wildcard Subscription Available, 3.2.2.3), then a PUBLISH's payload and its end.
  struct Row {
    const char* packet;
    const char* trace;
  };
  const Row rows[] = {
      {kConnackMinimal, "[t2 f0 rl3 id0 r00 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs= cid=]"},
      {kConnackFull, "[t2 f0 rl67 id0 r00 q0 sp1 rm20 mps65536 mq1 ra0 wa0 ka=30 pl0 topic= codes= rs=ok cid=auto]"},
      {kPublishFigure, "[t3 f2 rl10 id10 r00 q1 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl2 topic=a/b codes= rs= cid=]hi|"},
      {kPublishEmpty, "[t3 f1 rl5 id0 r00 q0 R sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic=t/ codes= rs= cid=]|"},
      {kPublishFull,
       "[t3 f11 rl57 id4660 r00 q1 R D sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl8 topic=dev/1 codes= rs= cid=]payload!|"},
      {kPubackShort, "[t4 f0 rl2 id10 r00 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs= cid=]"},
      {kPubackCode, "[t4 f0 rl3 id11 r10 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs= cid=]"},
      {kPubackFull, "[t4 f0 rl10 id12 r97 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs=bad cid=]"},
      {kSuback, "[t9 f0 rl5 id1 r00 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes=0180 rs= cid=]"},
      {kUnsuback, "[t11 f0 rl4 id2 r00 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes=11 rs= cid=]"},
      {kPingresp, "[t13 f0 rl0 id0 r00 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs= cid=]"},
      {kDisconnectShort, "[t14 f0 rl0 id0 r00 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs= cid=]"},
      {kDisconnectCode, "[t14 f0 rl1 id0 r8b q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs= cid=]"},
      {kDisconnectFull, "[t14 f0 rl13 id0 r9c q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs= cid=]"},
  };
  for (const Row& r : rows) {
    SCOPED_TRACE(r.packet);
    const Trace t = every_split(H(r.packet));
    EXPECT_FALSE(t.failed) << reason_str(t.error);
    EXPECT_EQ(t.text.view(), r.trace);
  }
}

TEST(MqttReader, ASessionInEverySplit) {
  // Every packet above, one after the other in one stream.
  Bytes all;
  std::string expected;
  for (const char* p : {kConnackFull, kSuback, kPublishFigure, kPublishEmpty, kPubackShort, kPublishFull,
                        kPubackFull, kUnsuback, kPingresp, kDisconnectFull}) {
    all = all + H(p);
    const Trace one = whole(H(p));
    ASSERT_FALSE(one.failed) << p;
    expected += std::string(one.text.view());
  }
  const Trace t = every_split(all);
  EXPECT_FALSE(t.failed);
  EXPECT_EQ(t.text.view(), expected);
}

TEST(MqttReader, RemainingLengthOfTable1_1) {
  for (const VarintRow& r : kTable1_1) {
    SCOPED_TRACE(r.value);
    const Bytes b = H("30") + H(r.bytes) + H("00 01 't' 00 'xy'");
    Reader reader;
    emcp_test::NoHeapScope no_heap;
    ASSERT_EQ(reader.push(b), Event::kPacket);
    EXPECT_EQ(reader.rx.packet().remaining, r.value);
    EXPECT_EQ(reader.rx.packet().payload_len, r.value - 4);
    ASSERT_EQ(reader.push(b, reader.used), Event::kPayload);
    EXPECT_EQ(sv(reader.rx.payload()), "xy");
    EXPECT_EQ(reader.push(b, b.size()), Event::kNeedInput);  // the rest of the payload is due
  }
  const Trace t = whole(H("d0 00"));  // 0
  EXPECT_EQ(t.text.view(), "[t13 f0 rl0 id0 r00 q0 sp0 rm65535 mps0 mq2 ra1 wa1 ka0 pl0 topic= codes= rs= cid=]");
}

TEST(MqttReader, LimitsOfTheHeadBufferAndMaximumPacketSize) {
  // The head of Figure 3-9's PUBLISH is 10 bytes; its packet 12.
  EXPECT_FALSE(whole(H(kPublishFigure), 10).failed);
  Trace t = every_split(H(kPublishFigure), 9);
  EXPECT_EQ(t.error, Reason::kPacketTooLarge);
  EXPECT_FALSE(whole(H(kPublishFigure), 512, 12).failed);
  t = every_split(H(kPublishFigure), 512, 11);  // 3.1.2.11.4: Packet too large
  EXPECT_TRUE(t.failed);
  EXPECT_EQ(t.error, Reason::kPacketTooLarge);
  // A CONNACK is all head.
  EXPECT_FALSE(whole(H(kConnackMinimal), 5).failed);
  EXPECT_EQ(whole(H(kConnackMinimal), 4).error, Reason::kPacketTooLarge);
  EXPECT_EQ(whole(H(kConnackMinimal), 0).error, Reason::kPacketTooLarge);
  // A payload far larger than the head buffer passes through it: Remaining Length 100004, a
  // packet of 100008 bytes.
  t = every_split(H("30 a4 8d 06 00 01 't' 00 'abc'"), 8);  // cut short: no end, no error
  EXPECT_FALSE(t.failed);
  const Bytes b = H("30 a4 8d 06 00 01 't' 00") + Bytes(100000, 'z');
  EXPECT_EQ(whole(b, 8, 100007).error, Reason::kPacketTooLarge);
  char head[8];
  PacketReader rx(head, sizeof head, 100008);
  emcp_test::NoHeapScope no_heap;
  const uint8_t* d = b.data();
  size_t n = b.size(), used = 0, payload = 0;
  ASSERT_EQ(rx.push(d, n, &used), Event::kPacket);
  EXPECT_EQ(rx.packet().payload_len, 100000u);
  for (;;) {
    d += used;
    n -= used;
    const Event e = rx.push(d, n < 1000 ? n : 1000, &used);
    if (e == Event::kPayloadEnd) break;
    ASSERT_EQ(e, Event::kPayload);
    payload += rx.payload().size();
  }
  EXPECT_EQ(payload, 100000u);
  EXPECT_EQ(n, 0u);
}

TEST(MqttReader, ResetStartsANewConnection) {
  const Bytes bad = H("00 00"), good = H(kPingresp), half = H("20 03 00");
  Reader r;
  emcp_test::NoHeapScope no_heap;
  EXPECT_EQ(r.push(bad), Event::kError);
  EXPECT_EQ(r.rx.error(), Reason::kMalformedPacket);
  EXPECT_NE(r.rx.error_text()[0], '\0');
  EXPECT_EQ(r.push(good), Event::kError);
  EXPECT_EQ(r.used, 0u);
  r.rx.reset();
  EXPECT_EQ(r.rx.error(), Reason::kSuccess);
  EXPECT_EQ(r.push(good), Event::kPacket);
  EXPECT_EQ(r.used, 2u);
  EXPECT_EQ(r.rx.packet().type, PacketType::kPingresp);
  // A reader in the middle of a packet forgets it.
  EXPECT_EQ(r.push(half), Event::kNeedInput);
  r.rx.reset();
  EXPECT_EQ(r.push(good), Event::kPacket);
  EXPECT_EQ(r.rx.packet().type, PacketType::kPingresp);
}

// ---- Bad input: one row per rule, with the reason code the text calls for. ----------------------

struct BadRow {
  const char* rule;
  const char* bytes;
  Reason reason;
};

constexpr Reason kMalformed = Reason::kMalformedPacket;
constexpr Reason kProtocol = Reason::kProtocolError;

const BadRow kBad[] = {
    // Fixed header (2.1.2, 2.1.3) and who sends what (emcp is the client).
    {"type 0 is reserved (2.1.2)", "00 00", kMalformed},
    {"CONNECT is sent by a client (3.1)", "10 00", kProtocol},
    {"SUBSCRIBE is sent by a client (3.8)", "82 00", kProtocol},
    {"UNSUBSCRIBE is sent by a client (3.10)", "a2 00", kProtocol},
    {"PINGREQ is sent by a client (3.12)", "c0 00", kProtocol},
    {"PUBREC: emcp never publishes at QoS 2 (3.5)", "50 02 00 01", kProtocol},
    {"PUBREL: emcp never subscribes at QoS 2 (3.6)", "62 02 00 01", kProtocol},
    {"PUBCOMP: emcp never publishes at QoS 2 (3.7)", "70 02 00 01", kProtocol},
    {"AUTH without an Authentication Method (3.15)", "f0 00", kProtocol},
    {"PUBACK with reserved flags (2.1.3)", "41 02 00 01", kMalformed},
    {"PINGRESP with reserved flags (2.1.3)", "d1 00", kMalformed},
    {"SUBSCRIBE with flags 0000 (3.8.1)", "80 00", kMalformed},
    {"CONNACK with flags 1000 (2.1.3)", "28 03 00 00 00", kMalformed},
    {"PUBLISH with both QoS bits (3.3.1.2)", "36 05 00 01 't' 00 01", kMalformed},
    {"PUBLISH DUP at QoS 0 (3.3.1.1)", "38 04 00 01 't' 00", kMalformed},
    {"PUBLISH at QoS 2: emcp subscribes at 1 at most (3.8.4)", "34 06 00 01 't' 00 01 00", kProtocol},
    // Remaining Length (1.5.5, 2.1.4).
    {"Remaining Length of five bytes (1.5.5)", "d0 ff ff ff ff 7f", kMalformed},
    {"Remaining Length not the shortest (1.5.5)", "d0 80 00", kMalformed},
    {"Remaining Length 128 in three bytes (1.5.5)", "d0 80 81 00", kMalformed},
    {"PINGRESP with a body (3.13)", "d0 01 00", kMalformed},
    // CONNACK (3.2).
    {"CONNACK without a Property Length (3.2.2)", "20 02 00 00", kMalformed},
    {"CONNACK reserved acknowledge flags (3.2.2.1)", "20 03 02 00 00", kMalformed},
    {"CONNACK refusal with Session Present (3.2.2.1.1)", "20 03 01 80 00", kProtocol},
    {"CONNACK reason code not in Table 3-1", "20 03 00 8d 00", kProtocol},
    {"Receive Maximum 0 (3.2.2.3.3)", "20 06 00 00 03 21 00 00", kProtocol},
    {"Maximum Packet Size 0 (3.2.2.3.6)", "20 08 00 00 05 27 00 00 00 00", kProtocol},
    {"Maximum QoS 2 (3.2.2.3.4)", "20 05 00 00 02 24 02", kProtocol},
    {"Retain Available 2 (3.2.2.3.5)", "20 05 00 00 02 25 02", kProtocol},
    {"Wildcard Subscription Available 2 (3.2.2.3.11)", "20 05 00 00 02 28 02", kProtocol},
    {"Subscription Identifiers Available 2 (3.2.2.3.12)", "20 05 00 00 02 29 02", kProtocol},
    {"Shared Subscription Available 2 (3.2.2.3.13)", "20 05 00 00 02 2a 02", kProtocol},
    {"Receive Maximum twice (3.2.2.3.3)", "20 09 00 00 06 21 00 01 21 00 02", kProtocol},
    {"Reason String twice (3.2.2.3.9)", "20 09 00 00 06 1f 00 00 1f 00 00", kProtocol},
    {"Topic Alias in a CONNACK (2.2.2.2)", "20 06 00 00 03 23 00 01", kMalformed},
    {"Payload Format Indicator in a CONNACK (2.2.2.2)", "20 05 00 00 02 01 00", kMalformed},
    {"unknown property 0x04 (2.2.2.2)", "20 05 00 00 02 04 00", kMalformed},
    {"property identifier not in its shortest form (1.5.5)", "20 06 00 00 03 a1 00 00", kMalformed},
    {"Property Length beyond the packet (2.2.2.1)", "20 04 00 00 05 24", kMalformed},
    {"Property Length of five bytes (1.5.5)", "20 07 00 00 80 80 80 80 01", kMalformed},
    {"bytes after the CONNACK's properties (3.2.3)", "20 04 00 00 00 00", kMalformed},
    {"Authentication Method in a CONNACK (4.12)", "20 07 00 00 04 15 00 01 'x'", kProtocol},
    {"Authentication Data in a CONNACK (4.12)", "20 06 00 00 03 16 00 00", kProtocol},
    {"Response Information not requested (3.1.2.11.6)", "20 07 00 00 04 1a 00 01 'r'", kProtocol},
    {"Reason String with an overlong form (1.5.4)", "20 08 00 00 05 1f 00 02 c0 80", kMalformed},
    {"Reason String with U+0000 (1.5.4)", "20 07 00 00 04 1f 00 01 00", kMalformed},
    {"Reason String with a surrogate (1.5.4)", "20 09 00 00 06 1f 00 03 ed a0 80", kMalformed},
    {"Reason String cut short (1.5.4)", "20 07 00 00 04 1f 00 05 'a'", kMalformed},
    {"User Property without its value (1.5.7)", "20 08 00 00 05 26 00 02 'ab'", kMalformed},
    {"User Property value not UTF-8 (1.5.7)", "20 0b 00 00 08 26 00 01 'a' 00 02 e2 82", kMalformed},
    // PUBLISH (3.3).
    {"Topic Name with + (3.3.2.1)", "30 06 00 03 'a/+' 00", Reason::kTopicNameInvalid},
    {"Topic Name with # (3.3.2.1)", "30 04 00 01 '#' 00", Reason::kTopicNameInvalid},
    {"empty Topic Name without a Topic Alias (3.3.2.1)", "30 03 00 00 00", kProtocol},
    {"Topic Alias: emcp's Topic Alias Maximum is 0 (3.3.4)", "30 07 00 01 't' 03 23 00 01", Reason::kTopicAliasInvalid},
    {"Topic Alias 0 with an empty Topic Name (3.3.2.3.4)", "30 06 00 00 03 23 00 00", Reason::kTopicAliasInvalid},
    {"PUBLISH at QoS 1 with Packet Identifier 0 (2.2.1)", "32 06 00 01 't' 00 00 00", kProtocol},
    {"Payload Format Indicator 2 (3.3.2.3.2)", "30 06 00 01 't' 02 01 02", kProtocol},
    {"Subscription Identifier 0 (3.3.2.3.8)", "30 06 00 01 't' 02 0b 00", kProtocol},
    {"Subscription Identifier not the shortest (1.5.5)", "30 07 00 01 't' 03 0b 80 00", kMalformed},
    {"Content Type twice (3.3.2.3.9)", "30 0a 00 01 't' 06 03 00 00 03 00 00", kProtocol},
    {"Response Topic twice (3.3.2.3.5)", "30 0a 00 01 't' 06 08 00 00 08 00 00", kProtocol},
    {"Session Expiry Interval in a PUBLISH (2.2.2.2)", "30 09 00 01 't' 05 11 00 00 00 01", kMalformed},
    {"Topic Name not UTF-8 (3.3.2.1)", "30 04 00 01 ff 00", kMalformed},
    {"Topic Name beyond the packet (3.3.2.1)", "30 04 00 09 'ab'", kMalformed},
    {"PUBLISH cut before its Property Length (3.3.2)", "30 03 00 01 't'", kMalformed},
    // PUBACK (3.4).
    {"PUBACK of one byte (3.4.2)", "40 01 00", kMalformed},
    {"PUBACK with Packet Identifier 0 (2.2.1)", "40 02 00 00", kProtocol},
    {"PUBACK reason code not in Table 3-4", "40 03 00 01 11", kProtocol},
    {"bytes after the PUBACK's properties (3.4.3)", "40 05 00 01 00 00 00", kMalformed},
    {"Server Keep Alive in a PUBACK (2.2.2.2)", "40 07 00 01 00 03 13 00 1e", kMalformed},
    // SUBACK, UNSUBACK (3.9, 3.11).
    {"SUBACK without reason codes (3.9.3)", "90 03 00 01 00", kProtocol},
    {"SUBACK reason code not in Table 3-8", "90 04 00 01 00 03", kProtocol},
    {"SUBACK with Packet Identifier 0 (2.2.1)", "90 04 00 00 00 00", kProtocol},
    {"UNSUBACK without reason codes (3.11.3)", "b0 03 00 01 00", kProtocol},
    {"UNSUBACK with a SUBACK code (Table 3-9)", "b0 04 00 01 00 01", kProtocol},
    {"UNSUBACK without a Property Length (3.11.2)", "b0 02 00 01", kMalformed},
    // DISCONNECT (3.14).
    {"Session Expiry Interval in a server's DISCONNECT (3.14.2.2.2)", "e0 07 00 05 11 00 00 00 00", kProtocol},
    {"Disconnect with Will Message is a client's code (Table 3-10)", "e0 01 04", kProtocol},
    {"DISCONNECT reason code not in Table 3-10", "e0 01 05", kProtocol},
    {"DISCONNECT properties cut short (3.14.2.2)", "e0 05 00 03 1c 00 05", kMalformed},
};

TEST(MqttBadInput, EachRuleHasItsReasonCode) {
  EXPECT_GE(sizeof kBad / sizeof kBad[0], 35u);
  for (const BadRow& row : kBad) {
    SCOPED_TRACE(row.rule);
    const Trace t = every_split(H(row.bytes));
    EXPECT_TRUE(t.failed);
    EXPECT_EQ(static_cast<unsigned>(t.error), static_cast<unsigned>(row.reason))
        << reason_str(t.error) << " instead of " << reason_str(row.reason);
  }
}

TEST(MqttBadInput, ErrorsComeWithText) {
  for (const BadRow& row : kBad) {
    const Bytes b = H(row.bytes);
    Reader r;
    emcp_test::NoHeapScope no_heap;
    ASSERT_EQ(r.push(b), Event::kError) << row.rule;
    EXPECT_GT(strlen(r.rx.error_text()), 5u) << row.rule;
  }
}

TEST(MqttBadInput, GoodPacketsBesideTheRulesPass) {
  // What the rows' rules allow, so that each row fails for its rule alone.
  for (const char* good : {
           "20 05 00 00 02 24 01",                               // Maximum QoS 1
           "20 0d 00 00 0a 26 00 00 00 00 26 00 00 00 00",       // User Property twice
           "30 09 00 01 't' 04 0b 01 0b 01 'p'",                 // Subscription Identifier twice
           "30 06 00 01 't' 02 01 00",                           // Payload Format Indicator 0
           "20 03 00 87 00",                                     // a refusal without Session Present
           "20 03 01 00 00",                                     // Session Present with Success
           "90 04 00 01 00 02",                                  // Granted QoS 2 is a SUBACK code
           "e0 06 00 04 1c 00 01 'h'",                           // Server Reference
           "30 09 00 03 'a/b' 00 ef bb bf",                      // a payload is not checked
           "30 07 00 04 ef bb bf 'a' 00",                        // U+FEFF is kept [MQTT-1.5.4-3]
       }) {
    const Trace t = every_split(H(good));
    EXPECT_FALSE(t.failed) << good << ": " << reason_str(t.error);
  }
}

}  // namespace
