// libFuzzer target: MCP over MQTT, the server's role (emcp/mqtt/mcp_transport.h) with the fixture
// application, behind a fake dialer whose "broker" says what the input says. After the CONNACK:
//   byte 0 even: the rest is raw broker bytes, pushed in pieces the input's next byte decides;
//   byte 0 odd:  the input is MCP messages, one per line (a JSON seed starts with '{', odd),
//                published by client "c1" (the first on
//                the control topic, the others on its RPC topic), the device's SUBSCRIBEs
//                acknowledged as a broker would, and the clock moved on between messages.
// Properties checked on every input:
//  1. No crash, no undefined behaviour (ASan/UBSan), whatever the bytes.
//  2. Never more sessions than slots; everything the device writes is whole MQTT packets
//     (their Remaining Length adds up), each PUBLISH it sends to a topic of the text.
//  3. After the input the transport still serves: on a new connection (the broker drops the old
//     one), a fresh client's initialize is answered on its RPC topic.
#include <stdint.h>
#include <string.h>

#include <string>

#include "../unit/mcp_fixture_app.h"
#include "emcp/mqtt/mcp_transport.h"

namespace {

uint64_t g_now = 1000;
uint64_t now_ms() { return g_now; }
bool rnd(void* out, size_t n) {
  memset(out, 0x42, n);
  return true;
}
const emcp::Platform kPlatform{&now_ms, &rnd};

struct Net {
  bool open = false;
  uint16_t conn = 0;
  emcp::transport::ConnectionHandler handler;
  std::string out;
};
Net g_net;

emcp::transport::Dialer dialer() {
  emcp::transport::Dialer d;
  d.dial = [](void*, const char*, uint16_t, uint16_t conn, emcp::transport::ConnectionHandler h) {
    g_net.open = true;
    g_net.conn = conn;
    g_net.handler = h;
    g_net.out.clear();
    return emcp::Status::kOk;
  };
  d.port.write = [](void*, uint16_t, const char* data, size_t n, size_t* taken) {
    g_net.out.append(data, n);
    *taken = n;
    return emcp::Status::kOk;
  };
  d.port.close = [](void*, uint16_t) { g_net.open = false; };
  return d;
}

void put_varint(std::string& s, size_t n) {
  do {
    uint8_t c = static_cast<uint8_t>(n % 128);
    n /= 128;
    if (n != 0) c |= 0x80;
    s.push_back(static_cast<char>(c));
  } while (n != 0);
}
void put_str(std::string& s, const std::string& v) {
  s.push_back(static_cast<char>(v.size() >> 8));
  s.push_back(static_cast<char>(v.size() & 0xFF));
  s += v;
}
std::string publish(const std::string& topic, const std::string& payload, const std::string& client) {
  std::string props;
  props.push_back(0x26);
  put_str(props, "MCP-MQTT-CLIENT-ID");
  put_str(props, client);
  std::string body;
  put_str(body, topic);
  put_varint(body, props.size());
  body += props;
  body += payload;
  std::string p(1, '\x30');
  put_varint(p, body.size());
  return p + body;
}

void feed(const std::string& bytes) {
  if (g_net.open) g_net.handler.receive(g_net.conn, bytes.data(), bytes.size());
}

// The device's output: whole packets (property 2); SUBSCRIBEs acknowledged; the topics of its
// PUBLISHes returned through `topics` (concatenated, newline-separated).
void drain(std::string* topics) {
  size_t pos = 0;
  const std::string& o = g_net.out;
  std::string acks;
  while (pos < o.size()) {
    const uint8_t type = static_cast<uint8_t>(o[pos]) >> 4;
    size_t len = 0, mul = 1, i = pos + 1;
    for (int k = 0; k < 4; ++k, ++i) {
      if (i >= o.size()) __builtin_trap();
      len += (static_cast<uint8_t>(o[i]) & 0x7Fu) * mul;
      mul *= 128;
      if ((static_cast<uint8_t>(o[i]) & 0x80u) == 0) break;
    }
    ++i;
    if (i + len > o.size()) __builtin_trap();  // a torn packet
    if (type == 8 && len >= 2) acks += std::string("\x90\x04", 2) + o.substr(i, 2) + std::string("\x00\x01", 2);
    if (type == 3 && topics != nullptr && len >= 2) {
      const size_t tl = static_cast<size_t>(static_cast<uint8_t>(o[i]) << 8 | static_cast<uint8_t>(o[i + 1]));
      const std::string t = o.substr(i + 2, tl);
      if (t.rfind("$mcp-rpc/", 0) != 0 && t.rfind("$mcp-server/", 0) != 0) __builtin_trap();
      *topics += t + "\n";
    }
    pos = i + len;
  }
  g_net.out.clear();
  if (!acks.empty()) feed(acks);
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2) return 0;
  g_now = 1000;
  g_net = Net();
  static emcp::mcp::Server* server = [] {
    static emcp::mcp::Server s(fixture::info(), fixture::platform());
    fixture::install(s);
    return &s;
  }();
  emcp::mqtt::StaticMcpTransport<2, 2048> mqtt(*server, kPlatform, dialer());
  mqtt.options().server_id = "dev";
  mqtt.options().server_name = "fuzz/device";
  if (mqtt.start("broker", 1883) != emcp::Status::kOk) __builtin_trap();
  g_net.handler.writable(g_net.conn);
  drain(nullptr);
  feed(std::string("\x20\x03\x00\x00\x00", 5));
  drain(nullptr);
  const std::string rest(reinterpret_cast<const char*>(data) + 2, size - 2);
  if ((data[0] & 1) == 0) {
    // Raw bytes, in pieces of 1..16 bytes (data[1] seeds the sizes).
    uint32_t r = data[1] | 1u;
    for (size_t at = 0; at < rest.size();) {
      r = r * 1103515245u + 12345u;
      const size_t k = 1 + (r >> 16) % 16;
      feed(rest.substr(at, k));
      at += k;
      drain(nullptr);
    }
  } else {
    const std::string all(reinterpret_cast<const char*>(data), size);
    size_t at = 0;
    bool first = true;
    while (at < all.size()) {
      size_t nl = all.find('\n', at);
      if (nl == std::string::npos) nl = all.size();
      const std::string msg = all.substr(at, nl - at);
      at = nl + 1;
      feed(publish(first ? "$mcp-server/dev/fuzz/device" : "$mcp-rpc/c1/dev/fuzz/device", msg, "c1"));
      first = false;
      drain(nullptr);
      g_now += 100;
      mqtt.poll();
      drain(nullptr);
    }
  }
  if (mqtt.sessions() > 2) __builtin_trap();
  // Property 3: it still serves a new client, on a new connection (the input may have left the
  // old one in the middle of a packet): the broker drops it, the device dials again.
  if (g_net.open) {
    g_net.open = false;
    g_net.handler.closed(g_net.conn);
  }
  if (!mqtt.client().connected()) {
    g_now += 60000;
    mqtt.poll();
    if (g_net.open) {
      g_net.handler.writable(g_net.conn);
      drain(nullptr);
      feed(std::string("\x20\x03\x00\x00\x00", 5));
      drain(nullptr);
    }
  }
  if (mqtt.client().connected() && mqtt.sessions() < 2) {
    feed(publish("$mcp-server/dev/fuzz/device",
                 R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18",)"
                 R"("capabilities":{},"clientInfo":{"name":"z","version":"1"}}})",
                 "zz"));
    std::string topics;
    drain(&topics);
    drain(&topics);
    if (topics.find("$mcp-rpc/zz/dev/fuzz/device\n") == std::string::npos) __builtin_trap();
  }
  return 0;
}
