// subscriptions/listen (MCP 2026-07-28, basic/patterns/subscriptions.mdx): a long-lived request
// whose stream carries the list changes and resource updates its filter asked for, each tagged
// with the request's id (the subscriptionId). The acknowledgement goes first and says which
// of the asked types the server honours; the request stays unanswered while the stream is
// open. It ends when the client cancels it (notifications/cancelled on stdio, the closing of
// the response on Streamable HTTP: the connection's session detaches), when its session ends,
// or when the server ends it (end_listens(): its completion result). A bounded table in the
// server (EMCP_MAX_LISTENS) holds the open ones; one more is refused.
#include "tasks_internal.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr const char* kListNames[] = {"toolsListChanged", "resourcesListChanged", "promptsListChanged"};

}  // namespace

bool Server::Listen::wants(uint8_t kinds, uint32_t uri_h) const {
  if ((lists & kinds) != 0) return true;
  for (uint32_t h : subs)
    if (uri_h != 0 && h == uri_h) return true;
  return false;
}

void ServerCode::on_listen(Server& sv, Session& s, const Message& m, Reply& r) {
  const Value filter = m.params["notifications"];
  if (!filter.is_object()) {
    r.reject(ErrorCode::kInvalidParams, {"params.notifications must be an object"});
    return;
  }
  const Peer& peer = r.peer();
  const bool offered[] = {peer.tools, peer.resources, peer.prompts};
  uint8_t lists = 0;
  for (uint8_t kind = 0; kind < 3; ++kind) {
    const Value asked = filter[kListNames[kind]];
    if (!asked.exists()) continue;
    if (!asked.is_bool()) {
      r.reject(ErrorCode::kInvalidParams, {"notifications.", kListNames[kind], " must be a boolean"});
      return;
    }
    if (asked.as_bool().value() && offered[kind]) lists = static_cast<uint8_t>(lists | list_bit(kind));
  }
  const Value uris = filter["resourceSubscriptions"];
  if (uris.exists()) {
    bool strings = uris.is_array();
    for (const Value u : uris.elements()) strings = strings && u.is_string();
    if (!strings) {
      r.reject(ErrorCode::kInvalidParams, {"notifications.resourceSubscriptions must be an array of strings"});
      return;
    }
  }
  // notifications.taskIds: with a task store (the tasks extension), the tasks it follows.
  const Value task_ids = filter["taskIds"];
  const bool follows_tasks = task_ids.exists() && sv.tasks_ != nullptr;
  uint32_t task_slots = 0;
  if (follows_tasks && !TaskCode::ops(sv)->listen(sv, m, r, task_ids, &task_slots)) return;
  const Id id = r.id();
  Listen* slot = nullptr;
  for (Listen& l : sv.listens_) {
    if (l.session == &s && l.id.id() == id) {
      r.reject(ErrorCode::kInvalidRequest, {"a listen with this id is open"});
      return;
    }
    if (l.session == nullptr && slot == nullptr) slot = &l;
  }
  if (slot == nullptr) {
    r.error(ErrorCode::kInternalError,
            {"Too many listens: this server keeps ", static_cast<long long>(EMCP_MAX_LISTENS),
             " open at once (EMCP_MAX_LISTENS)"});
    return;
  }
  Listen& l = *slot;
  l.session = &s;
  l.id.set(id);
  l.lists = lists;
  l.tasks = task_slots;
  // The URIs it honours: the first EMCP_MAX_SUBSCRIPTIONS distinct ones, when the server has
  // resources; the acknowledgement names exactly those.
  size_t count = 0;
  for (uint32_t& h : l.subs) h = 0;
  for (const Value u : uris.elements()) {
    if (!peer.resources || count == EMCP_MAX_SUBSCRIPTIONS) break;
    const uint32_t h = uri_hash(u.as_string().value());
    bool known = false;
    for (size_t i = 0; i < count; ++i) known = known || l.subs[i] == h;
    if (!known) l.subs[count++] = h;
  }
  r.suppress();  // answered only when the server ends it
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, id, false});
  if (!out.open()) {
    l.session = nullptr;  // nowhere to stream to
    ++sv.notifications_dropped_;
    ServerCode::request_event(s, id, Channel::RequestEvent::kDone);
    return;
  }
  ServerCode::request_event(s, id, Channel::RequestEvent::kHeld);
  json::Writer& w = out.w();
  jsonrpc::begin_notification(w, "notifications/subscriptions/acknowledged");
  w.begin_object();
  write_subscription_meta(w, id);
  w.key("notifications");
  w.begin_object();
  for (uint8_t kind = 0; kind < 3; ++kind)
    if (lists & list_bit(kind)) w.member_bool(kListNames[kind], true);
  if (count != 0) {
    w.key("resourceSubscriptions");
    w.begin_array();
    bool written[EMCP_MAX_SUBSCRIPTIONS] = {};
    for (const Value u : uris.elements()) {
      const StrView uri = u.as_string().value();
      const uint32_t h = uri_hash(uri);
      for (size_t i = 0; i < count; ++i) {
        if (l.subs[i] != h || written[i]) continue;
        written[i] = true;
        w.string(uri);
      }
    }
    w.end_array();
  }
  if (follows_tasks) TaskCode::ops(sv)->write_listened(sv, w, task_slots);
  w.end_object();
  w.end_object();
  jsonrpc::end_message(w);
}

void ServerCode::cancel_listen(Server& sv, Session& s, Value request_id) {
  const Id id = id_of(request_id);
  if (id.type == Id::Type::kNone) return;
  for (Listen& l : sv.listens_) {
    if (l.session != &s || !(l.id.id() == id)) continue;
    l.session = nullptr;  // never answered: the request ends here
    ServerCode::request_event(s, id, Channel::RequestEvent::kDone);
  }
}

bool ServerCode::listening(const Server& sv, const Session& s, uint8_t lists, uint32_t uri_h) {
  for (const Listen& l : sv.listens_)
    if (l.session == &s && l.wants(lists, uri_h)) return true;
  return false;
}

void ServerCode::notify_listens(Server& sv, Session& s, const char* method, uint8_t lists, uint32_t uri_h, StrView uri) {
  for (Listen& l : sv.listens_) {
    if (l.session != &s || !l.wants(lists, uri_h)) continue;
    const Id id = l.id.id();
    Outbound out(s, OutMessage{OutMessage::Kind::kNotification, id, false});
    if (!open_or_count(out, sv.notifications_dropped_)) continue;
    json::Writer& w = out.w();
    jsonrpc::begin_notification(w, method);
    w.begin_object();
    write_subscription_meta(w, id);
    if (uri_h != 0) w.member_str("uri", uri);
    w.end_object();
    jsonrpc::end_message(w);
  }
}

Status Server::end_listens() {
  Status result = Status::kOk;
  for (Listen& l : listens_) {
    if (l.session == nullptr) continue;
    Session& s = *l.session;
    if (s.open_) {
      result = Status::kWouldBlock;
      continue;
    }
    const Token token = l.id;  // the slot is free before the answer goes (its channel may end)
    const Id id = token.id();
    l.session = nullptr;
    const Peer peer(kModernVersion);
    Reply r(s, peer, id, nullptr);
    json::Writer& w = r.result();
    w.begin_object();
    w.member_str("resultType", "complete");
    write_server_meta(w, info_, &id);
    r.end();
  }
  return result;
}

size_t Server::listens() const {
  size_t n = 0;
  for (const Listen& l : listens_) n += l.session != nullptr ? 1 : 0;
  return n;
}

}  // namespace mcp
EMCP_NS_END
