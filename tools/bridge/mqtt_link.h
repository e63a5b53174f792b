// tools/bridge/mqtt_link.h - emcp-bridge --mqtt: the agent's side of MCP over MQTT (docs/mqtt.md),
// one device reached through a broker, as a Link (link.h) for the stdio bridge and the HTTP
// gateway alike (fleet_link.h: every device as one server). It speaks MQTT with emcp's own
// client (emcp/mqtt/client.h) over a plain socket.
//
// As the MCP-over-MQTT text has the client do it: connect with Clean Start, Session Expiry 0,
// MCP-COMPONENT-TYPE=mcp-client and MCP-META, the Will notifications/disconnected on
// $mcp-client/presence/{client-id}; subscribe $mcp-server/presence/+/{--mqtt-name}; the first
// device announcing itself there (a name, or a filter with + and #) is the one served; subscribe
// its RPC topic (No Local) and capability topic; once both are acknowledged the link is ready:
// initialize goes to the device's control topic, every other line to its RPC topic, with
// MCP-COMPONENT-TYPE and MCP-MQTT-CLIENT-ID. What arrives on the RPC and capability topics goes
// to the client. The device leaving (an empty retained presence: its Will or its clean stop, or
// notifications/disconnected) is a reset: in-flight requests fail (the bridge's side), and the
// next device announcing itself under the name is served, initialized again on the client's
// behalf (the stdio bridge replays initialize) -- a new session. At the end:
// notifications/disconnected to the device and on our presence topic, then DISCONNECT.
#ifndef EMCP_TOOLS_BRIDGE_MQTT_LINK_H
#define EMCP_TOOLS_BRIDGE_MQTT_LINK_H

#include <deque>
#include <memory>
#include <string>

#include "board_link.h"
#include "emcp/mbedtls/tls.h"
#include "emcp/mqtt/client.h"

namespace bridge {

/// The MQTT side both --mqtt links share: the socket under emcp's MQTT client, the client id, the
/// user properties and the Will the text asks of a client, the presence subscription.
class MqttBase : public Link {
 public:
  ~MqttBase() override;
  MqttBase(const MqttBase&) = delete;
  MqttBase& operator=(const MqttBase&) = delete;

  bool start() override;
  int fd() const override { return fd_; }
  bool wants_write() const override { return fd_ >= 0 && want_write_; }
  bool flush() override;
  bool on_readable() override;
  bool tick() override;
  const std::string& failure() const override { return failure_; }

 protected:
  MqttBase(const LinkOptions& o, Listener& l);
  /// What start() waits for.
  virtual bool started() const = 0;
  virtual void on_connected() = 0;
  virtual void on_disconnected() = 0;
  /// A presence message: `online` false for an empty one (the device's Will or clean stop).
  virtual void on_presence(const std::string& id, const std::string& name, bool online) = 0;
  /// A message on a topic of ours other than presence.
  virtual void on_message(const std::string& topic, const std::string& payload) = 0;
  virtual void on_subscribed(uint16_t id) = 0;
  /// Before DISCONNECT at the end (notifications/disconnected to the devices served).
  virtual void on_closing() {}

  bool publish(const std::string& topic, const std::string& payload);
  uint16_t subscribe(const std::string& topic, bool no_local);
  uint16_t unsubscribe(const std::string& a, const std::string& b);
  void close_mqtt();  // the subclass's destructor calls it (its on_closing() runs)
  bool closing() const { return closed_; }  // close_mqtt() began: what ends now is not news

  const LinkOptions& o_;
  Listener& l_;
  std::string client_id_;
  std::string presence_filter_;  // $mcp-server/presence/+/{--mqtt-name}
  std::string failure_;
  // mqtts://: ports/mbedtls as a client between the socket and the MQTT client.
  emcp::mbedtls::TlsContext tls_context_;
  std::unique_ptr<emcp::mbedtls::StaticTlsLayer<1>> tls_;
  emcp::mqtt::StaticClient<1 << 20> client_;

 private:
  emcp::transport::Dialer dialer();  // the socket's, behind TLS with mqtts://
  emcp::Status dial(const char* host, uint16_t port, uint16_t conn, emcp::transport::ConnectionHandler h);
  emcp::Status write(const char* data, size_t n, size_t* taken);
  emcp::Status wait_writable(uint32_t timeout_ms);
  void close_socket();
  void on_publish_end();

  emcp::mqtt::UserProperty connect_user_[2];
  emcp::mqtt::UserProperty publish_user_[2];
  emcp::mqtt::Will will_;
  std::string will_topic_, will_payload_;
  int fd_ = -1;
  bool connecting_ = false;
  bool want_write_ = false;
  bool closed_ = false;
  uint16_t conn_ = 0;
  emcp::transport::ConnectionHandler handler_;
  std::string in_topic_, in_payload_;
};

/// One device (the first announcing itself under --mqtt-name), its lines passed as they are.
class MqttLink final : public MqttBase {
 public:
  MqttLink(const LinkOptions& o, Listener& l) : MqttBase(o, l) {}
  ~MqttLink() override { close_mqtt(); }

  bool ready() const override { return ready_; }
  bool resetting() const override { return resetting_; }
  void send(const std::string& line) override;
  size_t queued() const override { return queued_bytes_; }
  int resets() const override { return resets_; }
  std::string summary() const override;

 private:
  bool started() const override { return ready_; }
  void on_connected() override;
  void on_disconnected() override {
    if (!closing()) device_gone("the broker connection was lost");
  }
  void on_presence(const std::string& id, const std::string& name, bool online) override;
  void on_message(const std::string& topic, const std::string& payload) override;
  void on_subscribed(uint16_t id) override;
  void on_closing() override;
  void device_gone(const char* why);
  void choose(const std::string& id, const std::string& name);
  void pump();

  std::string device_id_, device_name_, rpc_, control_, capability_;
  uint16_t sub_rpc_ = 0, sub_capability_ = 0;
  bool ready_ = false;
  bool resetting_ = false;   // it was ready once and is not now
  bool served_once_ = false;
  int resets_ = 0;
  std::deque<std::string> waiting_;  // lines for the device before it is ready
  size_t queued_bytes_ = 0;
  uint64_t devices_seen_ = 0, lines_in_ = 0, lines_out_ = 0;
};

}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_MQTT_LINK_H
