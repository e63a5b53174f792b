// MCP over MQTT, the server's role: topics, presence, sessions per client, the answer path.
#include "emcp/mqtt/mcp_transport.h"

#include <string.h>

#include "emcp/json/writer.h"
#include "emcp/jsonrpc/encode.h"

EMCP_NS_BEGIN
namespace mqtt {

namespace {

// Topics (mqtt_transport.md, "Message Topics").
enum Topic : size_t { kControl, kServerCapability, kServerPresence, kRpc, kClientCapability, kClientPresence };

constexpr StrView kComponentType("MCP-COMPONENT-TYPE");
constexpr StrView kClientIdProperty("MCP-MQTT-CLIENT-ID");
constexpr StrView kServerNameProperty("MCP-SERVER-NAME");
constexpr StrView kMetaProperty("MCP-META");
constexpr StrView kDisconnected("notifications/disconnected");

// An id or a name of the text: no `+`, `#` (and for an id no `/`), not empty, within `max`.
bool valid_part(StrView s, size_t max, bool slash_ok) {
  if (s.empty() || s.size() > max) return false;
  for (char c : s)
    if (c == '+' || c == '#' || c == '\0' || (!slash_ok && c == '/')) return false;
  return valid_topic_name(s);
}

uint32_t fnv1a(StrView s) {
  uint32_t h = 2166136261u;
  for (char c : s) h = (h ^ static_cast<uint8_t>(c)) * 16777619u;
  return h;
}

McpTransport& owner_of(void* ctx) { return *static_cast<McpTransport*>(ctx); }

}  // namespace

const ClientEvents McpTransport::kEvents = [] {
  ClientEvents e;
  e.connected = [](void* ctx, const Packet& p) { owner_of(ctx).on_connected(p); };
  e.disconnected = [](void* ctx, Reason) { owner_of(ctx).on_disconnected(); };
  e.publish = [](void* ctx, const Packet& p) { owner_of(ctx).on_publish(p); };
  e.payload = [](void* ctx, StrView chunk) { owner_of(ctx).on_payload(chunk); };
  e.publish_end = [](void* ctx) { owner_of(ctx).on_publish_end(); };
  e.subscribed = [](void* ctx, uint16_t id, StrView codes) { owner_of(ctx).on_subscribed(id, codes); };
  return e;
}();

// ---- Slots -----------------------------------------------------------------------------------

McpClientSlot::McpClientSlot() : session_(mcp::Channel{&McpClientSlot::open, &McpClientSlot::close, this}) {}

json::Sink* McpClientSlot::open(void* ctx, const mcp::OutMessage& m) {
  McpClientSlot& slot = *static_cast<McpClientSlot*>(ctx);
  return slot.owner_ != nullptr ? slot.owner_->open_for(slot, m) : nullptr;
}

Status McpClientSlot::close(void* ctx) {
  McpClientSlot& slot = *static_cast<McpClientSlot*>(ctx);
  return slot.owner_ != nullptr ? slot.owner_->close_for(slot) : Status::kClosed;
}

// ---- The transport -----------------------------------------------------------------------------

McpTransport::McpTransport(mcp::Server& server, Client& client, Span<McpClientSlot> slots, json::Reader& reader,
                           Arena& arena)
    : server_(server), client_(client), slots_(slots), decoder_(reader, arena) {
  ClientEvents e = kEvents;
  e.ctx = this;
  client_.set_events(e);
  for (McpClientSlot& s : slots_) s.owner_ = this;
}

McpTransport::~McpTransport() {
  for (McpClientSlot& s : slots_) {
    if (s.state_ != McpClientSlot::State::kFree) server_.detach(s.session_);
    s.owner_ = nullptr;
  }
}

size_t McpTransport::sessions() const {
  size_t n = 0;
  for (const McpClientSlot& s : slots_) n += s.state_ != McpClientSlot::State::kFree;
  return n;
}

StrView McpTransport::topic(size_t which, StrView client) {
  static constexpr const char* kPrefix[] = {"$mcp-server/", "$mcp-server/capability/", "$mcp-server/presence/",
                                            "$mcp-rpc/", "$mcp-client/capability/", "$mcp-client/presence/"};
  size_t n = 0;
  auto put = [&](StrView s) {
    const size_t k = s.size() <= sizeof topic_ - n ? s.size() : sizeof topic_ - n;
    memcpy(topic_ + n, s.data(), k);
    n += k;
  };
  put(kPrefix[which]);
  if (which >= kRpc) {
    put(client);
    if (which != kRpc) {
      topic_len_ = static_cast<uint16_t>(n);
      return StrView(topic_, n);
    }
    put("/");
  }
  put(options_.server_id);
  put("/");
  put(server_name());
  topic_len_ = static_cast<uint16_t>(n);
  return StrView(topic_, n);
}

PublishHeader McpTransport::header(StrView t, bool retain) const {
  PublishHeader h;
  h.topic = t;
  h.qos = 1;
  h.retain = retain;
  h.utf8_payload = true;
  h.user = publish_user_;
  h.user_count = 2;
  return h;
}

Status McpTransport::start(const char* host, uint16_t port) {
  if (!valid_part(options_.server_id, 64, false) || !valid_part(options_.server_name, sizeof name_, true))
    return Status::kInvalidArgument;
  renamed_ = false;
  memcpy(name_, options_.server_name.data(), options_.server_name.size());
  name_len_ = static_cast<uint8_t>(options_.server_name.size());
  host_ = host;
  port_ = port;
  connect_user_[0] = UserProperty{kComponentType, "mcp-server"};
  connect_user_[1] = UserProperty{kMetaProperty, options_.meta.empty() ? StrView("{}") : options_.meta};
  publish_user_[0] = UserProperty{kComponentType, "mcp-server"};
  publish_user_[1] = UserProperty{kClientIdProperty, options_.server_id};
  // The Will: an empty retained message on the presence topic clears it when the device
  // vanishes. Its topic carries the name known now; a name the broker gives later makes the
  // transport connect again (poll()) with that name in the Will.
  const StrView presence = topic(kServerPresence, StrView());
  memcpy(will_topic_, presence.data(), presence.size());
  will_ = Will{};
  will_.topic = StrView(will_topic_, presence.size());
  will_.retain = true;
  will_.qos = 1;
  ClientOptions& o = client_.options();
  o.host = host_;
  o.port = port_;
  o.client_id = options_.server_id;
  o.user = connect_user_;
  o.user_count = 2;
  o.will = &will_;
  client_.start();
  return Status::kOk;
}

void McpTransport::poll() {
  ++round_;
  if (rename_) {
    // The broker named the server otherwise than the Will's topic says: connect again with it.
    rename_ = false;
    client_.stop();
    const StrView presence = topic(kServerPresence, StrView());
    memcpy(will_topic_, presence.data(), presence.size());
    will_.topic = StrView(will_topic_, presence.size());
    client_.start();
    return;
  }
  client_.poll();
}

void McpTransport::stop() {
  if (client_.connected()) {
    for (McpClientSlot& s : slots_)
      if (s.state_ != McpClientSlot::State::kFree) end_session(s, true);
    (void)publish_small(topic(kServerPresence, StrView()), StrView(), true);
  }
  client_.stop();
}

bool McpTransport::publish_small(StrView t, StrView payload, bool retain) {
  return client_.publish(header(t, retain), payload) == Status::kOk;
}

void McpTransport::on_connected(const Packet& connack) {
  // The broker may name the server (MCP-SERVER-NAME in the CONNACK; the text says "in the
  // CONNECT", which the broker does not send: docs/mqtt.md).
  StrView named;
  if (connack.props.user(kServerNameProperty, &named) && valid_part(named, sizeof name_, true) &&
      named != server_name() && !renamed_) {
    renamed_ = true;  // once: a broker that names it anew at every connection is not followed around
    memcpy(name_, named.data(), named.size());
    name_len_ = static_cast<uint8_t>(named.size());
    rename_ = true;  // poll() connects again with it in the Will
    return;
  }
  Subscription control;
  control.filter = topic(kControl, StrView());
  control.max_qos = 1;
  control.retain_handling = 2;  // live requests only: a retained initialize is nobody's now
  control_suback_ = client_.subscribe(&control, 1);
  // Presence: notifications/server/online, retained.
  Span<char> room = client_.begin_message(header(topic(kServerPresence, StrView()), true));
  if (room.empty()) return;
  sink_.aim(room.data(), room.size());
  json::Writer w(sink_);
  jsonrpc::begin_notification(w, "notifications/server/online");
  w.begin_object();
  w.member_str("server_name", server_name());
  w.member_str("description", options_.description);
  w.end_object();
  jsonrpc::end_message(w);
  if (sink_.status() != Status::kOk) {
    client_.drop_message();
    ++stats_.too_large;
    return;
  }
  (void)client_.end_message(header(topic(kServerPresence, StrView()), true), sink_.view().size());
}

void McpTransport::on_disconnected() {
  // Session Expiry 0: the broker forgot our subscriptions; every session ends with them (the
  // clients saw the Will clear our presence).
  control_suback_ = 0;
  for (McpClientSlot& s : slots_) {
    if (s.state_ == McpClientSlot::State::kFree) continue;
    server_.detach(s.session_);
    s.session_.reset();
    s.state_ = McpClientSlot::State::kFree;
    s.id_len_ = 0;
    ++stats_.ended;
    ++stats_.ended_by_loss;
  }
  writing_ = nullptr;
}

McpClientSlot* McpTransport::find(StrView client_id) {
  for (McpClientSlot& s : slots_)
    if (s.state_ != McpClientSlot::State::kFree && s.client_id() == client_id) return &s;
  return nullptr;
}

void McpTransport::on_publish(const Packet& head) {
  ++round_;
  inbound_ = Inbound::kNone;
  inbound_slot_ = nullptr;
  inbound_client_len_ = 0;
  const StrView t = head.topic;
  StrView rest;
  if (t == topic(kControl, StrView())) {
    StrView client;
    if (head.props.user(kClientIdProperty, &client) && valid_part(client, sizeof inbound_client_, false)) {
      memcpy(inbound_client_, client.data(), client.size());
      inbound_client_len_ = static_cast<uint8_t>(client.size());
      inbound_ = Inbound::kControl;
    }
  } else if (t.starts_with("$mcp-rpc/")) {
    // $mcp-rpc/{client}/{server-id}/{server-name}: ours if it ends with our id and name.
    rest = t.sub(9);
    size_t slash = 0;
    while (slash < rest.size() && rest[slash] != '/') ++slash;
    const StrView client = rest.sub(0, slash);
    const StrView ours = topic(kRpc, client);
    if (ours == t && (inbound_slot_ = find(client)) != nullptr) inbound_ = Inbound::kRpc;
  } else if (t.starts_with("$mcp-client/presence/")) {
    if ((inbound_slot_ = find(t.sub(21))) != nullptr) inbound_ = Inbound::kClientPresence;
  } else if (t.starts_with("$mcp-client/capability/")) {
    if ((inbound_slot_ = find(t.sub(23))) != nullptr) inbound_ = Inbound::kClientCapability;
  }
  if (inbound_ != Inbound::kNone && head.retain) {
    // From the broker's store, not from a client now (a live message reaches a subscriber
    // without RETAIN unless it asked for Retain As Published, 3.3.1.3): a stale request or a
    // stale "disconnected" would answer nobody or end a new session. Retain Handling 2 keeps
    // them away; a broker that sends them anyway has them dropped here.
    ++stats_.retained;
    inbound_ = Inbound::kNone;
  }
  if (inbound_ == Inbound::kNone) {
    ++stats_.stray;
    return;
  }
  inbound_empty_ = head.payload_len == 0;
  decoder_.begin();
}

void McpTransport::on_payload(StrView chunk) {
  if (inbound_ != Inbound::kNone && !decoder_.failed()) decoder_.feed(chunk.data(), chunk.size());
}

void McpTransport::on_publish_end() {
  const Inbound kind = inbound_;
  inbound_ = Inbound::kNone;
  if (kind == Inbound::kNone) return;
  if (inbound_empty_) {
    // An empty message: a presence cleared (a retained one); on the other topics not JSON-RPC.
    if (kind != Inbound::kClientPresence) ++stats_.stray;
    return;
  }
  const jsonrpc::Decoded& d = decoder_.finish();
  const jsonrpc::Message* m = d.first;
  const bool disconnected = !d.batch && d.count == 1 && m->kind == jsonrpc::Kind::kNotification && m->method == kDisconnected;
  // A request's answer is written whole into the client's transmit buffer; when the broker has
  // not taken what is queued there, the wait for it (which runs the network stack: the port's
  // pump) happens here, not under the handler's frames, where it would add the stack's input
  // path to the handler's deepest point.
  bool requests = false;
  for (const jsonrpc::Message* r = m; r != nullptr; r = r->next)
    requests |= r->kind == jsonrpc::Kind::kRequest || r->kind == jsonrpc::Kind::kInvalid;
  if (requests && kind != Inbound::kClientPresence) {
    const StrView client = inbound_slot_ != nullptr ? inbound_slot_->client_id() : StrView(inbound_client_, inbound_client_len_);
    // The connection lost meanwhile (the broker took nothing in time): nothing is served on it
    // (no handler runs for an answer nobody gets); its sessions end once this call returns.
    if (!client_.ready_for_message(header(topic(kRpc, client), false)) && !client_.connected()) return;
  }
  switch (kind) {
    case Inbound::kControl:
      initialize(d);
      return;
    case Inbound::kRpc:
      if (disconnected) {
        ++stats_.ended_by_client;
        end_session(*inbound_slot_, false);
        return;
      }
      server_.handle(inbound_slot_->session_, d);
      return;
    case Inbound::kClientPresence:
      if (disconnected) {
        ++stats_.ended_by_client;
        end_session(*inbound_slot_, false);
      }
      return;
    case Inbound::kClientCapability:
      server_.handle(inbound_slot_->session_, d);
      return;
    case Inbound::kNone:
      return;
  }
}

void McpTransport::initialize(const jsonrpc::Decoded& d) {
  const StrView client(inbound_client_, inbound_client_len_);
  const jsonrpc::Message* m = d.first;
  if (d.batch || d.count != 1 || m->kind != jsonrpc::Kind::kRequest || m->method != "initialize") {
    // The control topic carries initialize only; a request gets its error on the client's RPC
    // topic (which the client subscribed before sending), anything else is dropped.
    ++stats_.stray;
    if (!d.batch && d.count == 1 && (m->kind == jsonrpc::Kind::kRequest || m->kind == jsonrpc::Kind::kInvalid))
      refuse(client, m->id, m->kind == jsonrpc::Kind::kInvalid ? m->invalid_code : jsonrpc::ErrorCode::kInvalidRequest,
             m->kind == jsonrpc::Kind::kInvalid ? StrView(EMCP_ERRTEXT("Invalid Request"))
                                                : StrView(EMCP_ERRTEXT("Invalid Request: the control topic takes initialize only")));
    return;
  }
  McpClientSlot* slot = find(client);
  if (slot == nullptr) {
    for (McpClientSlot& s : slots_)
      if (s.state_ == McpClientSlot::State::kFree) {
        slot = &s;
        break;
      }
    if (slot == nullptr) {
      ++stats_.refused;
      refuse(client, m->id, jsonrpc::ErrorCode::kServerError,
             EMCP_ERRTEXT("Server busy: it serves as many MCP clients as it has slots for; try later"));
      return;
    }
    memcpy(slot->id_, client.data(), client.size());
    slot->id_len_ = inbound_client_len_;
    slot->session_.reset();
    server_.attach(slot->session_);
    ++stats_.sessions;
    // Subscribe to the client's topics before answering (the answer waits for the SUBACK).
    client_topics(*slot, true);
    slot->state_ = slot->suback_ != 0 ? McpClientSlot::State::kSubscribing : McpClientSlot::State::kActive;
  }
  server_.handle(slot->session_, d);
  if (slot->state_ == McpClientSlot::State::kSubscribing) slot->state_ = McpClientSlot::State::kActive;
}

void McpTransport::client_topics(McpClientSlot& slot, bool subscribe) {
  // Three packets of one filter each (one topic buffer); the broker answers in order, so the
  // last SUBACK says all three are in place.
  const StrView client = slot.client_id();
  static constexpr size_t kWhich[] = {kRpc, kClientCapability, kClientPresence};
  uint16_t last = 0, first = 0;
  for (size_t which : kWhich) {
    const StrView t = topic(which, client);
    if (subscribe) {
      Subscription s;
      s.filter = t;
      s.max_qos = 1;
      s.no_local = which == kRpc;  // the text: No Local on the RPC topic
      s.retain_handling = 2;       // what the broker kept there is not this client's (its id is new)
      last = client_.subscribe(&s, 1);
      if (first == 0) first = last;
    } else {
      last = client_.unsubscribe(&t, 1);
    }
  }
  slot.suback_ = subscribe ? last : 0;
  slot.suback_first_ = subscribe ? first : 0;
}

void McpTransport::on_subscribed(uint16_t packet_id, StrView codes) {
  if (packet_id == control_suback_ && control_suback_ != 0) {
    // The control topic refused (the broker's ACL, say): no client can reach this server, and
    // its presence would say otherwise. It leaves with its Will (which clears the presence) and
    // tries again after a growing backoff (the ACL may change).
    control_suback_ = 0;
    if (!codes.empty() && static_cast<uint8_t>(codes[0]) < 0x80) {
      client_.settled();  // granted (the ACL was fixed, say): a later refusal starts its backoff over
      return;
    }
    ++stats_.control_refused;
    client_.leave(Reason::kDisconnectWithWill,
                  "mqtt: the broker refused the control topic's SUBSCRIBE: no client can initialize; leaving (the Will "
                  "clears the presence), dialing again after a growing backoff");
    return;
  }
  // A client's topic the broker refused (its ACL, say): that session cannot work (its requests
  // would never arrive). Its initialize answer went out with the last SUBACK; the client is told
  // notifications/disconnected after it and the session ends.
  if (codes.empty() || static_cast<uint8_t>(codes[0]) < 0x80) return;
  for (McpClientSlot& s : slots_) {
    if (s.state_ == McpClientSlot::State::kFree || s.suback_first_ == 0) continue;
    if (static_cast<uint16_t>(packet_id - s.suback_first_) > static_cast<uint16_t>(s.suback_ - s.suback_first_)) continue;
    ++stats_.subscriptions_refused;
    end_session(s, true);
    return;
  }
}

void McpTransport::end_session(McpClientSlot& slot, bool tell_client) {
  if (tell_client) {
    char note[64];
    json::BufferSink out(note, sizeof note);
    json::Writer w(out);
    jsonrpc::write_notification(w, kDisconnected);
    (void)publish_small(topic(kRpc, slot.client_id()), out.view(), false);
  }
  client_topics(slot, false);
  server_.detach(slot.session_);
  slot.session_.reset();
  slot.state_ = McpClientSlot::State::kFree;
  slot.id_len_ = 0;
  ++stats_.ended;
}

void McpTransport::refuse(StrView client, const jsonrpc::Id& id, jsonrpc::ErrorCode code, StrView message) {
  const StrView t = topic(kRpc, client);
  const PublishHeader h = header(t, false);
  Span<char> room = client_.begin_message(h);
  if (room.empty()) return;
  sink_.aim(room.data(), room.size());
  json::Writer w(sink_);
  jsonrpc::write_error(w, id.type == jsonrpc::Id::Type::kNone ? jsonrpc::Id::null() : id, code, message);
  if (sink_.status() != Status::kOk) {
    client_.drop_message();
    return;
  }
  (void)client_.end_message(h, sink_.view().size());
}

// ---- The answer path ---------------------------------------------------------------------------

json::Sink* McpTransport::open_for(McpClientSlot& slot, const mcp::OutMessage& m) {
  if (writing_ != nullptr || !client_.connected() || slot.state_ == McpClientSlot::State::kFree) return nullptr;
  const StrView t = m.capability ? topic(kServerCapability, StrView()) : topic(kRpc, slot.client_id());
  writing_header_ = header(t, false);
  Span<char> room = client_.begin_message(writing_header_);
  if (room.empty()) return nullptr;
  writing_ = &slot;
  writing_msg_ = m;
  sink_.aim(room.data(), room.size());
  return &sink_;
}

Status McpTransport::close_for(McpClientSlot& slot) {
  if (writing_ != &slot) return Status::kClosed;
  writing_ = nullptr;
  // The topic is rebuilt: writing the message may have used topic_ for nothing else, but make
  // the header's view certain.
  const StrView t = writing_msg_.capability ? topic(kServerCapability, StrView()) : topic(kRpc, slot.client_id());
  writing_header_.topic = t;
  if (sink_.status() != Status::kOk) {
    // Longer than the transmit buffer: nothing of it left. A response becomes an error to the
    // same id; a notification or a request to the client is dropped (counted).
    client_.drop_message();
    ++stats_.too_large;
    if (writing_msg_.kind == mcp::OutMessage::Kind::kResponse && !writing_msg_.batch) {
      char data[40];
      json::BufferSink d(data, sizeof data);
      json::Writer dw(d);
      dw.begin_object();
      dw.member_int("maxBytes", static_cast<int64_t>(client_.max_message()));
      dw.end_object();
      Span<char> room = client_.begin_message(writing_header_);
      if (room.empty()) return Status::kNoSpace;
      sink_.aim(room.data(), room.size());
      json::Writer w(sink_);
      jsonrpc::write_error_with_raw_data(
          w, writing_msg_.related, jsonrpc::ErrorCode::kInternalError,
          EMCP_ERRTEXT("Internal error: the answer is longer than the MQTT transmit buffer"), d.view());
      if (sink_.status() != Status::kOk) {
        client_.drop_message();
        return Status::kNoSpace;
      }
      (void)client_.end_message(writing_header_, sink_.view().size());
    }
    return Status::kNoSpace;
  }
  const StrView payload = sink_.view();
  if (writing_msg_.capability) {
    // The same notification for every session, in one round: sent once.
    const uint32_t h = fnv1a(payload);
    if (h == capability_hash_ && round_ == capability_round_) {
      client_.drop_message();
      return Status::kOk;
    }
    capability_hash_ = h;
    capability_round_ = round_;
    ++stats_.capability_sent;
  }
  const uint16_t hold = slot.state_ == McpClientSlot::State::kSubscribing ? slot.suback_ : 0;
  return client_.end_message(writing_header_, payload.size(), hold);
}

}  // namespace mqtt
EMCP_NS_END
