// emcp-bridge --mqtt --fleet: every device under --mqtt-name as one MCP server (fleet_link.h).
#include "fleet_link.h"

#include "emcp/json/writer.h"
#include "emcp/jsonrpc/encode.h"
#include "gateway_json.h"

namespace bridge {

namespace {

using gateway::id_json;
using gateway::path;
using gateway::replaced;
using gateway::rpc_error;
using gateway::written;
namespace jsonrpc = emcp::jsonrpc;

const char kDisconnected[] = R"({"jsonrpc":"2.0","method":"notifications/disconnected"})";
const char* const kRevisions[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
constexpr uint64_t kSettleMs = 500;  // after the presences, before start() says ready

std::string quoted(const std::string& s) {
  return written([&](emcp::json::Writer& w) { w.string(emcp::StrView(s.data(), s.size())); });
}

std::string key_of(const std::string& id) {
  std::string k = id;
  for (char& c : k)
    if (!((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) c = '_';
  return k;
}

}  // namespace

FleetLink::FleetLink(const LinkOptions& o, Listener& l) : MqttBase(o, l) {}

const jsonrpc::Message* FleetLink::decode(const std::string& line) {
  decoder_.begin();
  decoder_.feed(line.data(), line.size());
  const jsonrpc::Decoded& d = decoder_.finish();
  return d.batch || d.count != 1 ? nullptr : d.first;
}

bool FleetLink::started() const {
  if (!listening_ || now_ms() < listening_since_ + kSettleMs) return false;
  for (const auto& kv : devices_)
    if (kv.second.state != Device::State::kReady) return false;
  return true;
}

bool FleetLink::tick() { return MqttBase::tick(); }

void FleetLink::on_connected() {
  log(o_.quiet, "connected to the broker as " + client_id_ + "; serving every device on " + presence_filter_);
  sub_presence_ = subscribe(presence_filter_, false);
}

void FleetLink::on_disconnected() {
  listening_ = false;
  if (closing()) return;
  std::vector<std::string> ids;
  for (const auto& kv : devices_) ids.push_back(kv.first);
  for (const std::string& id : ids) gone(id, "the broker connection was lost");
}

void FleetLink::on_subscribed(uint16_t id) {
  if (id == sub_presence_ && !listening_) {
    listening_ = true;
    listening_since_ = now_ms();
    l_.on_board_ready();
    return;
  }
  for (auto& kv : devices_) {
    Device& d = kv.second;
    if (id == d.sub_rpc) d.sub_rpc = 0;
    if (id == d.sub_capability) d.sub_capability = 0;
    if (d.state == Device::State::kSubscribing && d.sub_rpc == 0 && d.sub_capability == 0) {
      // Both subscriptions in place: initialize it, on its control topic.
      d.state = Device::State::kInitializing;
      (void)publish(d.control, "{\"jsonrpc\":\"2.0\",\"id\":\"fleet-init\",\"method\":\"initialize\",\"params\":{"
                               "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{"
                               "\"name\":\"emcp-bridge-fleet\",\"version\":\"1.0\"}}}");
    }
  }
}

void FleetLink::on_presence(const std::string& id, const std::string& name, bool online) {
  if (!online) {
    gone(id, "its presence was cleared");
    return;
  }
  if (devices_.count(id) != 0 || !client_.connected()) return;
  Device& d = devices_[id];
  d.id = id;
  d.name = name;
  d.key = key_of(id);
  d.rpc = "$mcp-rpc/" + client_id_ + "/" + id + "/" + name;
  d.control = "$mcp-server/" + id + "/" + name;
  d.capability = "$mcp-server/capability/" + id + "/" + name;
  d.sub_rpc = subscribe(d.rpc, true);
  d.sub_capability = subscribe(d.capability, false);
  log(o_.quiet, "device " + id + " (" + name + ") joined");
}

void FleetLink::gone(const std::string& id, const char* why) {
  auto it = devices_.find(id);
  if (it == devices_.end()) return;
  Device& d = it->second;
  log(o_.quiet, "device " + id + " (" + d.name + ") left: " + why);
  if (client_.connected()) (void)unsubscribe(d.rpc, d.capability);
  const bool offered = !d.tools.empty();
  for (auto c = calls_.begin(); c != calls_.end();) {
    if (c->second.device == id) {
      l_.on_board_line(rpc_error(c->second.client_id, -32603, "The device " + d.name + " left before it answered"));
      c = calls_.erase(c);
    } else {
      ++c;
    }
  }
  devices_.erase(it);
  ++left_;
  if (offered) changed();
}

void FleetLink::changed() {
  if (client_ready_) l_.on_board_line("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}");
}

void FleetLink::list(Device& d, const std::string& cursor) {
  d.state = d.state == Device::State::kReady ? d.state : Device::State::kListing;
  if (cursor.empty()) d.listing.clear();
  (void)publish(d.rpc, "{\"jsonrpc\":\"2.0\",\"id\":\"fleet-list\",\"method\":\"tools/list\"" +
                           (cursor.empty() ? std::string() : ",\"params\":{\"cursor\":" + cursor + "}") + "}");
}

void FleetLink::listed(Device& d, const jsonrpc::Message& m) {
  const emcp::json::Value tools = m.result["tools"];
  for (const emcp::json::Value t : tools.elements()) {
    // The tool as the device wrote it, but its name (`{device}.{tool}`) and description.
    d.listing.push_back(written([&](emcp::json::Writer& w) {
      w.begin_object();
      for (const emcp::json::Value f : t.members()) {
        w.key(f.key());
        const emcp::StrView s = f.as_string().value_or(emcp::StrView());
        if (f.key() == emcp::StrView("name")) {
          const std::string name = d.key + "." + std::string(s.data(), s.size());
          w.string(emcp::StrView(name.data(), name.size()));
        } else if (f.key() == emcp::StrView("description") && f.is_string()) {
          const std::string text = "[" + d.name + "] " + std::string(s.data(), s.size());
          w.string(emcp::StrView(text.data(), text.size()));
        } else {
          emcp::json::write_value(w, f);
        }
      }
      w.end_object();
    }));
  }
  const emcp::json::Value next = m.result["nextCursor"];
  if (next.is_string()) {
    list(d, gateway::value_json(next));
    return;
  }
  const bool joined = d.state != Device::State::kReady;
  d.tools.swap(d.listing);
  d.listing.clear();
  d.state = Device::State::kReady;
  if (joined) ++joined_;
  changed();
}

void FleetLink::on_message(const std::string& topic, const std::string& payload) {
  for (auto& kv : devices_)
    if (topic == kv.second.rpc || topic == kv.second.capability) {
      from_device(kv.second, payload);
      return;
    }
}

void FleetLink::from_device(Device& d, const std::string& line) {
  const jsonrpc::Message* m = decode(line);
  if (m == nullptr) return;
  const std::string id = id_json(m->id);
  if (m->kind == jsonrpc::Kind::kNotification) {
    if (m->method == "notifications/disconnected") return gone(d.id, "it sent notifications/disconnected");
    if (m->method == "notifications/tools/list_changed") return list(d, std::string());
    // Progress and log messages of a call pass on (their tokens are the client's).
    if (m->method == "notifications/progress" || m->method == "notifications/message") l_.on_board_line(line);
    return;
  }
  if (m->kind == jsonrpc::Kind::kRequest) {
    // What a device asks its client (sampling, elicitation, roots) is not served in fleet mode.
    (void)publish(d.rpc, m->method == "ping" ? "{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":{}}"
                                             : rpc_error(id, -32601, "emcp-bridge --fleet serves tools only"));
    return;
  }
  if (id == "\"fleet-init\"") {
    (void)publish(d.rpc, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
    if (m->kind == jsonrpc::Kind::kResponse) list(d, std::string());
    else gone(d.id, "its initialize failed");
    return;
  }
  if (id == "\"fleet-list\"") {
    if (m->kind == jsonrpc::Kind::kResponse) listed(d, *m);
    return;
  }
  auto c = calls_.find(id);
  if (c == calls_.end()) return;
  size_t b, e;
  if (path(line, {"id"}, &b, &e)) l_.on_board_line(replaced(line, b, e, c->second.client_id));
  calls_.erase(c);
}

void FleetLink::answer(const std::string& id, const std::string& result_json) {
  l_.on_board_line("{\"jsonrpc\":\"2.0\",\"id\":" + id + ",\"result\":" + result_json + "}");
}

void FleetLink::send(const std::string& line) {
  const jsonrpc::Message* m = decode(line);
  if (m == nullptr) {
    l_.on_board_line(rpc_error("null", -32600, "emcp-bridge --fleet: a single JSON-RPC message per line"));
    return;
  }
  const std::string id = id_json(m->id);
  if (m->kind == jsonrpc::Kind::kNotification) {
    if (m->method == "notifications/initialized") client_ready_ = true;
    if (m->method == "notifications/cancelled") {
      const std::string wire = gateway::value_json(m->params["requestId"]);
      for (auto& c : calls_)
        if (c.second.client_id == wire) {
          auto d = devices_.find(c.second.device);
          if (d != devices_.end()) (void)publish(d->second.rpc, gateway::cancel_line(c.first, nullptr));
        }
    }
    return;
  }
  if (m->kind == jsonrpc::Kind::kInvalid) {
    l_.on_board_line(gateway::invalid_json(*m));
    return;
  }
  if (m->kind != jsonrpc::Kind::kRequest) return;  // responses: the bridge asks the client nothing
  if (m->method == "initialize") {
    const emcp::StrView asked = m->params["protocolVersion"].as_string().value_or(emcp::StrView());
    const char* version = kRevisions[3];
    for (const char* r : kRevisions)
      if (asked == emcp::StrView(r)) version = r;
    client_ready_ = true;
    answer(id, std::string("{\"protocolVersion\":\"") + version +
                   "\",\"capabilities\":{\"tools\":{\"listChanged\":true}},\"serverInfo\":{\"name\":\"emcp-bridge-fleet\","
                   "\"version\":\"1.0\"},\"instructions\":" +
                   quoted("The tools of every device on " + presence_filter_ +
                          "; each tool's name begins with its device's id and a dot.") +
                   "}");
    return;
  }
  if (m->method == "ping") return answer(id, "{}");
  if (m->method == "tools/list") {
    std::string tools;
    for (const auto& kv : devices_)
      for (const std::string& t : kv.second.tools) tools += (tools.empty() ? "" : ",") + t;
    return answer(id, "{\"tools\":[" + tools + "]}");
  }
  if (m->method == "tools/call") {
    const emcp::StrView name = m->params["name"].as_string().value_or(emcp::StrView());
    const std::string full(name.data(), name.size());
    const size_t dot = full.find('.');
    Device* d = nullptr;
    if (dot != std::string::npos)
      for (auto& kv : devices_)
        if (kv.second.key == full.substr(0, dot) && kv.second.state == Device::State::kReady) d = &kv.second;
    if (d == nullptr) {
      l_.on_board_line(rpc_error(id, -32602, "Unknown tool: " + full + " (no such device in the fleet, or it left)"));
      return;
    }
    // The line as the client wrote it, with the device's tool name and an id of ours.
    size_t b, e;
    std::string out = line;
    if (path(out, {"params", "name"}, &b, &e)) out = replaced(out, b, e, quoted(full.substr(dot + 1)));
    const std::string wire = "\"fleet-call-" + std::to_string(++next_id_) + "\"";
    if (path(out, {"id"}, &b, &e)) out = replaced(out, b, e, wire);
    calls_[wire] = Call{id, d->id};
    ++calls_out_;
    if (!publish(d->rpc, out)) {
      calls_.erase(wire);
      l_.on_board_line(rpc_error(id, -32603, "emcp-bridge: the call could not be published (too long for MQTT)"));
    }
    return;
  }
  l_.on_board_line(rpc_error(id, -32601, "Method not found: emcp-bridge --fleet serves tools only"));
}

void FleetLink::on_closing() {
  for (const auto& kv : devices_) (void)publish(kv.second.rpc, kDisconnected);
}

std::string FleetLink::summary() const {
  return std::to_string(devices_.size()) + " device(s) served at the end, " + std::to_string(joined_) + " joined, " +
         std::to_string(left_) + " left; " + std::to_string(calls_out_) + " call(s)";
}

}  // namespace bridge
