// tools/bridge/mqtt_link.h - emcp-bridge --mqtt: the agent's side of MCP over MQTT (docs/mqtt.md),
// one device reached through a broker, as a Link (link.h) for the stdio bridge and the HTTP
// gateway alike. It speaks MQTT with emcp's own client (emcp/mqtt/client.h) over a plain socket.
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
#include <string>

#include "board_link.h"
#include "emcp/mqtt/client.h"

namespace bridge {

class MqttLink final : public Link {
 public:
  MqttLink(const LinkOptions& o, Listener& l);
  ~MqttLink() override;
  MqttLink(const MqttLink&) = delete;
  MqttLink& operator=(const MqttLink&) = delete;

  bool start() override;
  int fd() const override { return fd_; }
  bool ready() const override { return ready_; }
  bool resetting() const override { return resetting_; }
  void send(const std::string& line) override;
  size_t queued() const override { return queued_bytes_; }
  bool wants_write() const override { return fd_ >= 0 && want_write_; }
  bool flush() override;
  bool on_readable() override;
  bool tick() override;
  int resets() const override { return resets_; }
  const std::string& failure() const override { return failure_; }
  std::string summary() const override;

 private:
  // The socket under the MQTT client (transport::Dialer).
  emcp::Status dial(const char* host, uint16_t port, uint16_t conn, emcp::transport::ConnectionHandler h);
  emcp::Status write(const char* data, size_t n, size_t* taken);
  emcp::Status wait_writable(uint32_t timeout_ms);
  void close_socket();
  // The MQTT client's events.
  void on_connected();
  void on_disconnected();
  void on_publish(const emcp::mqtt::Packet& head);
  void on_publish_end();
  void on_subscribed(uint16_t id);
  void device_gone(const char* why);
  void choose(const std::string& id, const std::string& name);
  bool publish(const std::string& topic, const std::string& payload);
  void pump();

  const LinkOptions& o_;
  Listener& l_;
  std::string client_id_;
  std::string presence_filter_;  // $mcp-server/presence/+/{--mqtt-name}
  emcp::mqtt::UserProperty connect_user_[2];
  emcp::mqtt::UserProperty publish_user_[2];
  emcp::mqtt::Will will_;
  std::string will_topic_, will_payload_;
  emcp::mqtt::StaticClient<1 << 20> client_;

  int fd_ = -1;
  bool connecting_ = false;
  bool want_write_ = false;
  uint16_t conn_ = 0;
  emcp::transport::ConnectionHandler handler_;

  // The device served.
  std::string device_id_, device_name_, rpc_, control_, capability_;
  uint16_t sub_rpc_ = 0, sub_capability_ = 0;
  bool ready_ = false;
  bool resetting_ = false;   // it was ready once and is not now
  bool served_once_ = false;
  int resets_ = 0;
  std::deque<std::string> waiting_;  // lines for the device before it is ready
  size_t queued_bytes_ = 0;
  // The message being received.
  enum class In { kNone, kPresence, kDevice } in_ = In::kNone;
  std::string in_topic_, in_payload_;
  std::string failure_;
  uint64_t devices_seen_ = 0, lines_in_ = 0, lines_out_ = 0;
};

}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_MQTT_LINK_H
