// Notifications to sessions: list changes and progress, and the queue that holds what a busy
// channel cannot take now (EMCP_NOTIFY_QUEUE).
#include "server_internal.h"

#include <string.h>
#include <new>

EMCP_NS_BEGIN
namespace mcp {

void ServerCode::send_list_changed(Server& sv, Session& s, ListKind kind) {
  // To sessions whose initialize answer offered the capability (and listChanged), and to the
  // listen streams on `s` that asked for it (2026-07-28).
  const bool offered = kind == ListKind::kTools       ? s.peer_.tools
                       : kind == ListKind::kResources ? s.peer_.resources
                                                      : s.peer_.prompts;
  const bool session = EMCP_LEGACY_ERA && s.initialized() && offered;
  const uint8_t bit = list_bit(static_cast<uint8_t>(kind));
  const bool listens = EMCP_MAX_LISTENS > 0 && listening(sv, s, bit, 0);
  if (!session && !listens) return;
  if (sv.must_hold(s)) {
    (void)sv.hold(s, [](Server& server, Session& s2, const HeldHead& h) {
      send_list_changed(server, s2, static_cast<ListKind>(h.level));
    }, static_cast<LogLevel>(kind), StrView());
    return;
  }
  const char* method = kind == ListKind::kTools       ? "notifications/tools/list_changed"
                       : kind == ListKind::kResources ? "notifications/resources/list_changed"
                                                      : "notifications/prompts/list_changed";
  if (session) {
    OutMessage m{OutMessage::Kind::kNotification, Id{}, false};
    m.capability = true;
    Outbound out(s, m);
    if (open_or_count(out, sv.notifications_dropped_)) jsonrpc::write_notification(out.w(), method);
  }
  if (listens) notify_listens(sv, s, method, bit, 0, StrView());
}

void ServerCode::list_changed(Server& sv, ListKind kind) {
  for (Session* s = sv.sessions_; s != nullptr; s = s->next_) send_list_changed(sv, *s, kind);
}

Status ServerCode::notify_progress(Server& sv, Session& s, Version v, const Id& token, double done, double total,
                               StrView msg, const Id& related) {
  // Not held: a later report supersedes it, and none may follow the request's answer. What is
  // held goes first.
  sv.send_held_now();
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, related, false});
  if (!open_or_count(out, sv.notifications_dropped_)) return Status::kInvalidState;
  json::Writer& w = out.w();
  jsonrpc::begin_notification(w, "notifications/progress");
  w.begin_object();
  w.key("progressToken");
  jsonrpc::write_id(w, token);
  w.member_double("progress", done);
  if (total >= 0) w.member_double("total", total);
  if (!msg.empty() && supports(v, Feature::kProgressMessage)) w.member_str("message", msg);
  w.end_object();
  jsonrpc::end_message(w);
  return out.close();
}

// ---- Held notifications -------------------------------------------------------------------------

bool Server::must_hold(Session& s) {
  static_assert(sizeof(void*) != 4 || sizeof(HeldHead) == 16, "docs/mcp.md and opt.h say 16");
  // What is held for free channels goes first; what stays held is for busy channels only.
  send_held_now();
  return s.open_;
}

Status Server::hold(Session& s, Resend resend, LogLevel level, StrView a, StrView b) {
  constexpr size_t kAlign = alignof(HeldHead);
  const size_t size = (sizeof(HeldHead) + a.size() + b.size() + kAlign - 1) / kAlign * kAlign;
  // Not for a session that is not attached (detached from a handler): nothing would forget it.
  if (EMCP_NOTIFY_QUEUE == 0 || s.server_ != this || size > sizeof held_ - held_used_)
    return drop_notification();
  unsigned char* p = held_ + held_used_;
  new (p) HeldHead{&s, resend, static_cast<uint16_t>(size), static_cast<uint16_t>(a.size()),
                   static_cast<uint16_t>(b.size()), level};
  if (!a.empty()) memcpy(p + sizeof(HeldHead), a.data(), a.size());
  if (!b.empty()) memcpy(p + sizeof(HeldHead) + a.size(), b.data(), b.size());
  held_used_ = static_cast<uint16_t>(held_used_ + size);
  return Status::kOk;
}

void Server::send_held(Session* forget) {
  // Entries that are done (sent, or of a session that ended) lose their session first and
  // go in one compaction at the end: the queue stays walkable while a resend runs (a session
  // may end meanwhile, and its pass only marks).
  for (size_t off = 0; off < held_used_;) {
    HeldHead& h = *static_cast<HeldHead*>(static_cast<void*>(held_ + off));
    off += h.size;
    Session* s = h.session;
    if (s == nullptr) continue;
    if (forget != nullptr) {
      if (s == forget) {
        h.session = nullptr;
        ++notifications_dropped_;  // it will never go out
      }
      continue;
    }
    if (s->open_) continue;  // still busy: it waits, in order
    h.session = nullptr;
    sending_held_ = true;
    h.resend(*this, *s, h);
    sending_held_ = false;
  }
  if (forget != nullptr) return;  // the next pass compacts
  size_t to = 0;
  for (size_t from = 0; from < held_used_;) {
    const HeldHead& h = *static_cast<const HeldHead*>(static_cast<const void*>(held_ + from));
    const size_t size = h.size;
    if (h.session != nullptr) {
      for (size_t i = 0; i < size && to != from; ++i) held_[to + i] = held_[from + i];
      to += size;
    }
    from += size;
  }
  held_used_ = static_cast<uint16_t>(to);
}

}  // namespace mcp
EMCP_NS_END
