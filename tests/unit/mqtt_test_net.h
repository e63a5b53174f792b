// Test support for the MQTT client and transport: a fake Dialer (one connection, its output
// captured, its window and failures set by the test), a clock the test moves, and a small
// parser of the packets the client sent, written here from the MQTT 5.0 text (sections 2.1-2.2,
// 3.1, 3.3, 3.8, 3.10) rather than with emcp's reader, so the tests check the client's bytes
// against the text.
#ifndef EMCP_TESTS_MQTT_TEST_NET_H
#define EMCP_TESTS_MQTT_TEST_NET_H

#include <gtest/gtest.h>

#include <functional>
#include <string>
#include <vector>

#include "emcp/mqtt/client.h"
#include "no_heap_util.h"

namespace emcp_test {

struct MqttClock {
  static uint64_t now;
  static uint64_t now_ms() { return now; }
  static bool random(void* out, size_t n) {
    memset(out, 0x5A, n);
    return true;
  }
};

/// One dialed connection at a time.
class FakeDialNet {
 public:
  emcp::transport::Dialer dialer() {
    emcp::transport::Dialer d;
    d.dial = [](void* ctx, const char* to_host, uint16_t to_port, uint16_t c,
                emcp::transport::ConnectionHandler h) -> emcp::Status {
      auto* self = static_cast<FakeDialNet*>(ctx);
      ++self->dials;
      self->host = to_host;
      self->port = to_port;
      if (self->dial_result != emcp::Status::kOk) return self->dial_result;
      self->conn = c;
      self->handler = h;
      self->open = true;
      self->established = false;
      return emcp::Status::kOk;
    };
    d.port.write = [](void* ctx, uint16_t c, const char* data, size_t n, size_t* taken) -> emcp::Status {
      auto* self = static_cast<FakeDialNet*>(ctx);
      EXPECT_TRUE(self->open && c == self->conn) << "a write to a connection that is not open";
      if (self->write_fails) return emcp::Status::kClosed;
      size_t k = self->established ? (n < self->window ? n : self->window) : 0;
      self->window -= k;
      self->out.append(data, k);
      *taken = k;
      return emcp::Status::kOk;
    };
    d.port.wait_writable = [](void* ctx, uint16_t, uint32_t) -> emcp::Status {
      auto* self = static_cast<FakeDialNet*>(ctx);
      ++self->waits;
      if (self->on_wait) self->on_wait();
      return emcp::Status::kWouldBlock;
    };
    d.port.close = [](void* ctx, uint16_t c) {
      auto* self = static_cast<FakeDialNet*>(ctx);
      EXPECT_EQ(c, self->conn);
      self->open = false;
      ++self->closes;
    };
    d.port.ctx = this;
    d.ctx = this;
    return d;
  }
  /// The TCP connection is up.
  void establish() {
    established = true;
    handler.writable(conn);
  }
  /// Bytes from the broker.
  void from_broker(const std::vector<uint8_t>& bytes) {
    ASSERT_TRUE(open);
    EXPECT_EQ(handler.receive(conn, bytes.data(), bytes.size()), bytes.size());
  }

  int dials = 0, closes = 0, waits = 0;
  std::string host;
  uint16_t port = 0;
  uint16_t conn = 0;
  bool open = false, established = false, write_fails = false;
  size_t window = 1 << 24;  ///< bytes the connection takes until the test says otherwise
  std::function<void()> on_wait;  ///< called in each wait_writable (the port's pump runs there)
  emcp::Status dial_result = emcp::Status::kOk;
  emcp::transport::ConnectionHandler handler;
  FixedText<16384> out;
};

/// One packet the client sent, as the text lays it out.
struct SentPacket {
  uint8_t type = 0, flags = 0;
  std::string body;  // after the fixed header
  // PUBLISH
  std::string topic, payload;
  uint16_t id = 0;
  std::vector<std::pair<std::string, std::string>> user;  // User Properties
  std::vector<std::pair<uint8_t, uint32_t>> numbers;      // other integer properties
};

/// Splits `bytes` into packets (fails the test on a malformed one); PUBLISH fields filled.
std::vector<SentPacket> parse_sent(std::string_view bytes);
/// A PUBLISH from the broker, built by hand (QoS 0 or 1, user properties).
std::vector<uint8_t> broker_publish(const std::string& topic, const std::string& payload, uint16_t id = 0,
                                    const std::vector<std::pair<std::string, std::string>>& user = {});
std::vector<uint8_t> broker_suback(uint16_t id, uint8_t code = 1);

}  // namespace emcp_test

#endif  // EMCP_TESTS_MQTT_TEST_NET_H
