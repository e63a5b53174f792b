// MqttBroker.*: emcp's MQTT 5.0 codec (emcp/mqtt/packet.h) against an implementation it did not
// write, Debian's mosquitto, started here on a free loopback port with a configuration of its own
// (listener on 127.0.0.1, anonymous clients, no persistence) and stopped with SIGTERM at the end
// (it must exit with status 0). Plain TCP sockets carry only what emcp's encoders write; what the
// broker sends is read with emcp's PacketReader alone. Every wait is bounded (poll with a
// timeout), so a broker that does not answer fails the test in seconds.
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "emcp/mqtt/packet.h"

namespace {

using namespace emcp::mqtt;
using emcp::StrView;
using Event = PacketReader::Event;
using Pairs = std::vector<std::pair<std::string, std::string>>;

constexpr int kWaitMs = 3000;  // the longest any one answer may take

std::string str(StrView s) { return std::string(s.data(), s.size()); }

std::string read_file(const std::string& path) {
  std::ifstream f(path);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// A port nobody listens on now (the kernel's choice for port 0).
int free_port() {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof a;
  if (fd < 0 || bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 ||
      getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len) != 0) {
    if (fd >= 0) close(fd);
    return -1;
  }
  close(fd);
  return ntohs(a.sin_port);
}

int dial(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (fd >= 0 && connect(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0) return fd;
  if (fd >= 0) close(fd);
  return -1;
}

// mosquitto in a temporary folder: its configuration and its log (stdout and stderr).
class Broker {
 public:
  ~Broker() {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    if (!dir_.empty()) {
      unlink((dir_ + "/mosquitto.conf").c_str());
      unlink((dir_ + "/mosquitto.log").c_str());
      rmdir(dir_.c_str());
    }
  }

  // Starts it and waits until it accepts connections; false with the reason in *why.
  bool start(std::string* why) {
    char tmpl[] = "/tmp/emcp-mosquitto-XXXXXX";
    if (mkdtemp(tmpl) == nullptr) return fail(why, "mkdtemp failed");
    dir_ = tmpl;
    port_ = free_port();
    if (port_ <= 0) return fail(why, "no free port");
    const std::string conf = dir_ + "/mosquitto.conf";
    std::ofstream(conf) << "listener " << port_ << " 127.0.0.1\nallow_anonymous true\npersistence false\n";
    log_ = dir_ + "/mosquitto.log";
    pid_ = fork();
    if (pid_ < 0) return fail(why, "fork failed");
    if (pid_ == 0) {
      const int out = open(log_.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      if (out >= 0) {
        dup2(out, 1);
        dup2(out, 2);
      }
      execl(EMCP_MOSQUITTO, "mosquitto", "-c", conf.c_str(), "-v", static_cast<char*>(nullptr));
      _exit(127);
    }
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::milliseconds(kWaitMs);
    while (std::chrono::steady_clock::now() < deadline) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return fail(why, "mosquitto ended at start-up: " + read_file(log_));
      }
      const int fd = dial(port_);
      if (fd >= 0) {
        close(fd);
        return true;
      }
      usleep(20 * 1000);
    }
    return fail(why, "mosquitto did not listen on port " + std::to_string(port_) + ": " + read_file(log_));
  }

  // SIGTERM, then the wait status within 5 s (-1 if it did not end).
  int stop() {
    if (pid_ <= 0) return -1;
    kill(pid_, SIGTERM);
    for (int i = 0; i < 250; ++i) {
      int status;
      if (waitpid(pid_, &status, WNOHANG) == pid_) {
        pid_ = -1;
        return status;
      }
      usleep(20 * 1000);
    }
    return -1;
  }

  int port() const { return port_; }
  std::string log() const { return read_file(log_); }

 private:
  static bool fail(std::string* why, const std::string& text) {
    *why = text;
    return false;
  }
  pid_t pid_ = -1;
  int port_ = 0;
  std::string dir_, log_;
};

// A packet as the reader gave it, copied out of the reader's buffers.
struct Got {
  PacketType type = PacketType::kReserved;
  uint8_t qos = 0;
  bool retain = false;
  uint16_t packet_id = 0;
  Reason reason = Reason::kSuccess;
  bool session_present = false;
  std::string topic, reason_codes, reason_string, payload, content_type, assigned_client_id;
  Pairs user;
  int payload_format = -1;  // -1: absent
  uint16_t receive_maximum = 0;
};

// One MQTT connection over a plain TCP socket.
class Conn {
 public:
  ~Conn() { drop(); }
  bool open(int port) {
    fd_ = dial(port);
    return fd_ >= 0;
  }
  // Closes the socket without a DISCONNECT (the broker then publishes the Will).
  void drop() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }

  bool send(const char* p, size_t n) {
    while (n > 0) {
      pollfd pfd{fd_, POLLOUT, 0};
      if (poll(&pfd, 1, kWaitMs) != 1) return false;
      const ssize_t w = ::send(fd_, p, n, MSG_NOSIGNAL);
      if (w <= 0) return false;
      p += w;
      n -= static_cast<size_t>(w);
    }
    return true;
  }
  template <typename F>
  bool send_encoded(F encode) {
    char buf[1024];
    const size_t n = encode(buf, sizeof buf);
    return n > 0 && send(buf, n);
  }

  // The next packet, with its payload; false on a timeout, the end of the connection or a
  // reader error (*why says which).
  bool next(Got* g, std::string* why) {
    *g = Got();
    bool head = false;
    for (;;) {
      while (off_ < buf_.size()) {
        size_t used = 0;
        const Event e = rx_.push(buf_.data() + off_, buf_.size() - off_, &used);
        off_ += used;
        if (e == Event::kNeedInput) break;
        if (e == Event::kError) {
          *why = std::string("reader: ") + reason_str(rx_.error()) + ": " + rx_.error_text();
          return false;
        }
        if (e == Event::kPacket) {
          copy(rx_.packet(), g);
          head = true;
          if (g->type != PacketType::kPublish) return true;
        } else if (e == Event::kPayload) {
          g->payload += str(rx_.payload());
        } else if (e == Event::kPayloadEnd) {
          return true;
        }
      }
      // kPayloadEnd of an empty payload comes from a push without bytes.
      if (head) {
        size_t used = 0;
        if (rx_.push(nullptr, 0, &used) == Event::kPayloadEnd) return true;
      }
      buf_.clear();
      off_ = 0;
      pollfd pfd{fd_, POLLIN, 0};
      if (poll(&pfd, 1, kWaitMs) != 1) {
        *why = "no packet within " + std::to_string(kWaitMs) + " ms";
        return false;
      }
      uint8_t chunk[4096];
      const ssize_t r = recv(fd_, chunk, sizeof chunk, 0);
      if (r <= 0) {
        *why = r == 0 ? "connection closed by the broker" : std::string("recv: ") + strerror(errno);
        return false;
      }
      buf_.assign(chunk, chunk + r);
    }
  }

  // True when the broker closes the connection within the wait, with nothing before.
  bool closed_by_peer() {
    pollfd pfd{fd_, POLLIN, 0};
    if (poll(&pfd, 1, kWaitMs) != 1) return false;
    uint8_t b;
    return recv(fd_, &b, 1, 0) == 0;
  }

 private:
  static void copy(const Packet& p, Got* g) {
    g->type = p.type;
    g->qos = p.qos;
    g->retain = p.retain;
    g->packet_id = p.packet_id;
    g->reason = p.reason;
    g->session_present = p.session_present;
    g->topic = str(p.topic);
    g->reason_codes = str(p.reason_codes);
    g->reason_string = str(p.reason_string);
    g->assigned_client_id = str(p.assigned_client_id);
    g->receive_maximum = p.receive_maximum;
    size_t pos = 0;
    Property prop;
    while (p.props.next(&pos, &prop)) {
      if (prop.id == PropertyId::kUserProperty) g->user.emplace_back(str(prop.text), str(prop.value));
      if (prop.id == PropertyId::kContentType) g->content_type = str(prop.text);
      if (prop.id == PropertyId::kPayloadFormatIndicator) g->payload_format = static_cast<int>(prop.number);
    }
  }

  int fd_ = -1;
  char head_[1024];
  PacketReader rx_{head_, sizeof head_, 1u << 20};
  std::vector<uint8_t> buf_;
  size_t off_ = 0;
};

// CONNECT, and the CONNACK it must get (Success).
void connect(Conn& c, const ConnectOptions& o, Got* connack) {
  ASSERT_TRUE(c.send_encoded([&](char* b, size_t n) { return encode_connect(o, b, n); }));
  std::string why;
  ASSERT_TRUE(c.next(connack, &why)) << why;
  ASSERT_EQ(connack->type, PacketType::kConnack);
  ASSERT_EQ(connack->reason, Reason::kSuccess) << reason_str(connack->reason) << " " << connack->reason_string;
}

void expect_next(Conn& c, PacketType type, Got* g) {
  std::string why;
  ASSERT_TRUE(c.next(g, &why)) << why;
  ASSERT_EQ(static_cast<int>(g->type), static_cast<int>(type));
}

// PINGREQ, and the next packet must be the PINGRESP: nothing else was on its way.
void ping(Conn& c) {
  ASSERT_TRUE(c.send_encoded([](char* b, size_t n) { return encode_pingreq(b, n); }));
  Got g;
  expect_next(c, PacketType::kPingresp, &g);
}

// Each test has a mosquitto of its own, started before it; it must end cleanly on SIGTERM.
class MqttBroker : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(access(EMCP_MOSQUITTO, X_OK), 0)
        << "mosquitto is not at " EMCP_MOSQUITTO ": these tests need Debian's mosquitto (apt-get install mosquitto)";
    std::string why;
    ASSERT_TRUE(broker.start(&why)) << why;
  }
  void expect_clean_stop() {
    const int status = broker.stop();
    ASSERT_NE(status, -1) << "mosquitto did not end within 5 s of SIGTERM";
    EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << "mosquitto ended with wait status " << status;
    if (HasFailure()) printf("mosquitto's log:\n%s\n", broker.log().c_str());
  }
  Broker broker;
};

TEST_F(MqttBroker, ASessionWithMosquitto) {
  Got g;

  // The subscriber: a Client Identifier the broker assigns (3.2.2.3.7), a Receive Maximum.
  Conn sub;
  ASSERT_TRUE(sub.open(broker.port()));
  ConnectOptions so;
  so.receive_maximum = 10;
  so.keep_alive_s = 30;
  connect(sub, so, &g);
  EXPECT_FALSE(g.session_present);
  EXPECT_FALSE(g.assigned_client_id.empty()) << "an empty Client Identifier gets one assigned";
  const Subscription sub_filters[] = {{"emcp/test/+", 1, false, false, 0}, {"emcp/will", 1, false, false, 2}};
  ASSERT_TRUE(sub.send_encoded([&](char* b, size_t n) { return encode_subscribe(1, sub_filters, 2, b, n); }));
  expect_next(sub, PacketType::kSuback, &g);
  EXPECT_EQ(g.packet_id, 1);
  EXPECT_EQ(g.reason_codes, std::string("\x01\x01", 2));

  // The publisher: a Will with User Properties, User Properties of its own, and a subscription
  // with No Local to the topic it publishes to.
  Conn pub;
  ASSERT_TRUE(pub.open(broker.port()));
  const UserProperty will_user[] = {{"why", "lost"}};
  const Will will{"emcp/will", "publisher gone", 1, false, will_user, 1};
  const UserProperty connect_user[] = {{"client", "emcp"}, {"rev", "5.0"}};
  ConnectOptions po;
  po.client_id = "emcp-pub";
  po.keep_alive_s = 30;
  po.maximum_packet_size = 4096;
  po.user = connect_user;
  po.user_count = 2;
  po.will = &will;
  connect(pub, po, &g);
  const Subscription no_local[] = {{"emcp/test/topic", 1, true, false, 0}};
  ASSERT_TRUE(pub.send_encoded([&](char* b, size_t n) { return encode_subscribe(7, no_local, 1, b, n); }));
  expect_next(pub, PacketType::kSuback, &g);
  EXPECT_EQ(g.packet_id, 7);
  EXPECT_EQ(g.reason_codes, "\x01");

  // PUBLISH at QoS 1 with properties: PUBACK, and the subscriber gets it with them, in order.
  const UserProperty pub_user[] = {{"k1", "v1"}, {"k2", "v2"}, {"k1", "v3"}};
  PublishHeader h;
  h.topic = "emcp/test/topic";
  h.qos = 1;
  h.packet_id = 3;
  h.utf8_payload = true;
  h.content_type = "text/plain";
  h.user = pub_user;
  h.user_count = 3;
  const std::string body = "hello, broker";
  {
    char buf[256];
    const size_t n = encode_publish_header(h, static_cast<uint32_t>(body.size()), buf, sizeof buf);
    ASSERT_GT(n, 0u);
    ASSERT_TRUE(pub.send(buf, n));
    ASSERT_TRUE(pub.send(body.data(), body.size()));
  }
  expect_next(pub, PacketType::kPuback, &g);
  EXPECT_EQ(g.packet_id, 3);
  EXPECT_EQ(g.reason, Reason::kSuccess);
  expect_next(sub, PacketType::kPublish, &g);
  EXPECT_EQ(g.topic, "emcp/test/topic");
  EXPECT_EQ(g.qos, 1);
  EXPECT_NE(g.packet_id, 0);
  EXPECT_EQ(g.payload, body);
  EXPECT_EQ(g.content_type, "text/plain");
  EXPECT_EQ(g.payload_format, 1);
  EXPECT_EQ(g.user, (Pairs{{"k1", "v1"}, {"k2", "v2"}, {"k1", "v3"}}));
  const uint16_t id = g.packet_id;
  ASSERT_TRUE(sub.send_encoded([&](char* b, size_t n) { return encode_puback(id, Reason::kSuccess, b, n); }));
  // No Local: the publisher's own message does not come back; its next packet is the PINGRESP.
  ping(pub);
  ping(sub);

  // QoS 0, empty payload, to a topic nobody else has: only the subscriber's "+" matches.
  PublishHeader h0;
  h0.topic = "emcp/test/empty";
  ASSERT_TRUE(pub.send_encoded([&](char* b, size_t n) { return encode_publish_header(h0, 0, b, n); }));
  expect_next(sub, PacketType::kPublish, &g);
  EXPECT_EQ(g.topic, "emcp/test/empty");
  EXPECT_EQ(g.qos, 0);
  EXPECT_EQ(g.payload, "");

  // A third client with a Will, dropped without DISCONNECT: its Will reaches the subscriber with
  // its User Properties.
  {
    Conn dropped;
    ASSERT_TRUE(dropped.open(broker.port()));
    const UserProperty wu[] = {{"why", "dropped"}, {"seq", "1"}};
    const Will w{"emcp/will", "dropped client", 0, false, wu, 2};
    ConnectOptions o;
    o.client_id = "emcp-dropped";
    o.will = &w;
    connect(dropped, o, &g);
    dropped.drop();
  }
  expect_next(sub, PacketType::kPublish, &g);
  EXPECT_EQ(g.topic, "emcp/will");
  EXPECT_EQ(g.payload, "dropped client");
  EXPECT_EQ(g.user, (Pairs{{"why", "dropped"}, {"seq", "1"}}));

  // Another connection with the publisher's Client Identifier (Clean Start) takes its session
  // over: the broker closes the publisher's connection (mosquitto 2.0 without the DISCONNECT 0x8E
  // that 3.1.4 allows) and, the old session ended, publishes its Will (3.1.2.5).
  Conn again;
  ASSERT_TRUE(again.open(broker.port()));
  ConnectOptions ao;
  ao.client_id = "emcp-pub";
  connect(again, ao, &g);
  EXPECT_TRUE(pub.closed_by_peer());
  expect_next(sub, PacketType::kPublish, &g);
  EXPECT_EQ(g.topic, "emcp/will");
  EXPECT_EQ(g.payload, "publisher gone");
  EXPECT_EQ(g.qos, 1);
  EXPECT_EQ(g.user, (Pairs{{"why", "lost"}}));
  const uint16_t will_id = g.packet_id;
  ASSERT_TRUE(sub.send_encoded([&](char* b, size_t n) { return encode_puback(will_id, Reason::kSuccess, b, n); }));

  // DISCONNECT (Normal, and with a Reason String): the broker closes each connection.
  ASSERT_TRUE(again.send_encoded([](char* b, size_t n) { return encode_disconnect(Reason::kSuccess, "", b, n); }));
  EXPECT_TRUE(again.closed_by_peer());
  ping(sub);
  ASSERT_TRUE(sub.send_encoded([](char* b, size_t n) { return encode_disconnect(Reason::kSuccess, "done", b, n); }));
  EXPECT_TRUE(sub.closed_by_peer());

  expect_clean_stop();
}

TEST_F(MqttBroker, AMalformedSubscribeGetsMalformedPacket) {
  Got g;
  Conn c;
  ASSERT_TRUE(c.open(broker.port()));
  ConnectOptions o;
  o.client_id = "emcp-refused";
  connect(c, o, &g);
  // A SUBSCRIBE whose filter breaks [MQTT-4.7.1-1], written by hand (emcp's encoder refuses it):
  // the broker answers with a DISCONNECT, Malformed Packet (4.13.1), which the reader reads, and
  // closes the connection.
  const char bad_subscribe[] = "\x82\x0b\x00\x05\x00\x00\x05" "a/#/b" "\x01";
  ASSERT_TRUE(c.send(bad_subscribe, sizeof bad_subscribe - 1));
  expect_next(c, PacketType::kDisconnect, &g);
  EXPECT_EQ(g.reason, Reason::kMalformedPacket) << reason_str(g.reason);
  EXPECT_TRUE(c.closed_by_peer());
  expect_clean_stop();
}

}  // namespace
