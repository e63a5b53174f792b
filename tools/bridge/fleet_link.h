// tools/bridge/fleet_link.h - emcp-bridge --mqtt URL --fleet: every device announcing itself under
// --mqtt-name served as one MCP server (docs/mqtt.md, "A fleet as one server"), as a Link (link.h)
// for the stdio bridge and the HTTP gateway alike.
//
// The bridge answers the client's initialize itself (capability tools, listChanged), and is an
// MCP client of each device over MQTT as the text has it (its RPC topic with No Local, its
// capability topic, initialize on its control topic). Each device's tools are listed (every
// page) and offered under `{device}.{tool}`, where {device} is the device's server-id with every
// character outside A-Z a-z 0-9 _ - made `_`, their descriptions starting with the device's
// server-name in brackets. A tools/call goes to its device with the tool's own name, under an
// id of the bridge's, and its answer, progress and log messages come back to the client. A
// device joining (once its tools are listed), leaving (its presence cleared, or its
// notifications/disconnected; its calls on the way fail with -32603) or changing its tools (its
// notifications/tools/list_changed) is a notifications/tools/list_changed to the client. Tools
// only: other methods get -32601; a device's own requests (sampling, elicitation, roots) get
// -32601 from the bridge, a ping an empty result.
#ifndef EMCP_TOOLS_BRIDGE_FLEET_LINK_H
#define EMCP_TOOLS_BRIDGE_FLEET_LINK_H

#include <map>
#include <string>
#include <vector>

#include "emcp/jsonrpc/decoder.h"
#include "mqtt_link.h"

namespace bridge {

class FleetLink final : public MqttBase {
 public:
  FleetLink(const LinkOptions& o, Listener& l);
  ~FleetLink() override { close_mqtt(); }

  bool ready() const override { return listening_; }
  bool resetting() const override { return false; }
  void send(const std::string& line) override;
  size_t queued() const override { return 0; }
  int resets() const override { return 0; }
  std::string summary() const override;
  bool tick() override;

 private:
  struct Device {
    std::string id, name, key, rpc, control, capability;
    uint16_t sub_rpc = 0, sub_capability = 0;
    enum class State { kSubscribing, kInitializing, kListing, kReady } state = State::kSubscribing;
    std::vector<std::string> tools, listing;  // tools offered (JSON), and a listing under way
  };
  struct Call {
    std::string client_id;  // the client's id, JSON text
    std::string device;     // the device's server-id
  };

  bool started() const override;
  void on_connected() override;
  void on_disconnected() override;
  void on_presence(const std::string& id, const std::string& name, bool online) override;
  void on_message(const std::string& topic, const std::string& payload) override;
  void on_subscribed(uint16_t id) override;
  void on_closing() override;

  void gone(const std::string& id, const char* why);
  void list(Device& d, const std::string& cursor);
  void listed(Device& d, const emcp::jsonrpc::Message& m);
  void from_device(Device& d, const std::string& line);
  void answer(const std::string& id, const std::string& result_json);
  void changed();
  const emcp::jsonrpc::Message* decode(const std::string& line);

  std::map<std::string, Device> devices_;    // by server-id
  std::map<std::string, Call> calls_;        // by the bridge's id (JSON text) on the device
  uint16_t sub_presence_ = 0;
  bool listening_ = false;                   // the presence subscription is acknowledged
  uint64_t listening_since_ = 0;
  bool client_ready_ = false;                // the client's initialize was answered
  uint64_t next_id_ = 0;
  uint64_t calls_out_ = 0, joined_ = 0, left_ = 0;
  emcp::json::StaticReader<> reader_;
  emcp::StaticArena<1 << 20> arena_;
  emcp::jsonrpc::Decoder decoder_{reader_, arena_};
};

}  // namespace bridge

#endif  // EMCP_TOOLS_BRIDGE_FLEET_LINK_H
