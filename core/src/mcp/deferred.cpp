// Deferred tool calls: a handler's defer(), complete()/progress() later from the loop, and
// cancellation (notifications/cancelled, a session that ends).
#include "tasks_internal.h"

#include <string.h>

EMCP_NS_BEGIN
namespace mcp {

void Token::set(const Id& id) {
  type = Id::Type::kNone;
  if (id.type == Id::Type::kInt) {
    type = id.type;
    num = id.num;
  } else if (id.type == Id::Type::kString && id.str.size() <= sizeof str) {
    type = id.type;
    len = static_cast<uint16_t>(id.str.size());
    if (len != 0) memcpy(str, id.str.data(), len);
  } else if (id.type == Id::Type::kNull) {
    type = id.type;
  }
}

Id Token::id() const {
  switch (type) {
    case Id::Type::kInt: return Id::of(num);
    case Id::Type::kString: return Id::of(StrView(str, len));
    case Id::Type::kNull: return Id::null();
    default: return Id{};
  }
}

int ServerCode::hold_request(Server& sv, Session* s, const Id& id, const Peer& peer, Value progress, const Tool* tool) {
  for (uint16_t i = 0; i < EMCP_MAX_DEFERRED; ++i) {
    Deferred& d = sv.deferred_[i];
    if (d.used) continue;
    FeatureOps::install(sv, FeatureOps::kDeferredSlot, FeatureOps::kDeferred);
    d.used = true;
    d.cancelled = false;
    d.session = s;
    d.tool = tool;
    d.id.set(id);
    d.peer = peer;
    d.progress = Token{};
    if (progress.is_int()) d.progress.set(Id::of(progress.as_int().value()));
    else if (progress.is_string()) d.progress.set(Id::of(progress.as_string().value()));
    ++d.generation;
    if (s != nullptr) ServerCode::request_event(*s, id, Channel::RequestEvent::kHeld);
    return i;
  }
  return -1;
}

Pending ToolCall::defer() {
  if (phase_ != kIdle || inputs_.owns_answer()) return Pending{};
  Pending task;  // a tool that runs as a task, for a client that allows it (tasks.cpp)
  if (server_->tasks_ != nullptr && TaskCode::ops(*server_)->defer(*server_, *this, &task)) return task;
  const int i = ServerCode::hold_request(*server_, session_, reply_->id(), reply_->peer(), progress_value_, tool_);
  if (i >= 0) {
    phase_ = kDeferred;
    reply_->suppress();
    return Pending{static_cast<uint16_t>(i), server_->deferred_[i].generation};
  }
  fail({"The server is busy: ", static_cast<long long>(EMCP_MAX_DEFERRED),
        " calls are already in progress (EMCP_MAX_DEFERRED). Try again later."});
  return Pending{};
}

// Only a deferred call (or a listen, dispatch.cpp) can still be running when its cancellation
// arrives: synchronous ones are answered before the next message is read. A session that ends
// or starts afresh cancels its deferred calls (its channel told only when it starts afresh).
const FeatureOps FeatureOps::kDeferred = {
    nullptr,
    [](Server& sv, FeatureEvent e, Session* s, const Message* m) {
      Id id;  // notifications/cancelled: the request it names; else every request of `s`
      if (e == FeatureEvent::kMessage) {
        if (m->kind != Kind::kNotification || m->method != "notifications/cancelled") return;
        id = id_of(m->params["requestId"]);
        if (id.type == Id::Type::kNone) return;
      } else if (e != FeatureEvent::kEnding && e != FeatureEvent::kRestarting) {
        return;
      }
      for (Server::Deferred& d : sv.deferred_) {
        if (!d.used || d.cancelled || d.session != s || (id.present() && !(d.id.id() == id))) continue;
        d.cancelled = true;  // never answered: the request ends here
        if (e != FeatureEvent::kEnding) ServerCode::request_event(*s, d.id.id(), Channel::RequestEvent::kDone);
      }
    },
};

// ---- Deferred calls -----------------------------------------------------------------------------

Server::Deferred* Server::deferred(Pending p) {
  if (!p.valid() || p.slot >= EMCP_MAX_DEFERRED) return nullptr;
  Deferred& d = deferred_[p.slot];
  return d.used && d.generation == p.generation ? &d : nullptr;
}

const Server::Deferred* Server::deferred(Pending p) const {
  return const_cast<Server*>(this)->deferred(p);
}

bool Server::cancelled(Pending p) const {
  const Deferred* d = deferred(p);
  return d == nullptr || d->cancelled;
}

Session* Server::session_of(Pending p) const {
  const Deferred* d = deferred(p);
  return d ? d->session : nullptr;
}

bool Server::is_task(Pending p) const {
  const Deferred* d = deferred(p);
  return d != nullptr && d->session == nullptr;
}

Status Server::progress(Pending p, double done, double total, StrView message) {
  Deferred* d = deferred(p);
  if (d == nullptr) return Status::kNotFound;
  if (d->cancelled) return Status::kClosed;
  if (!d->progress.present()) return Status::kNotFound;
  return ServerCode::notify_progress(*this, *d->session, d->peer.version, d->progress.id(), done, total, message, d->id.id());
}

Status Server::complete(Pending p, FinishFn fn, void* ctx) {
  Deferred* d = deferred(p);
  if (d == nullptr) return Status::kNotFound;
  if (d->cancelled) {
    d->used = false;  // a cancelled request is never answered
    return Status::kClosed;
  }
  // A task's: its answer goes into the task (tasks.cpp).
  if (d->session == nullptr) return tasks_ != nullptr ? TaskCode::ops(*this)->complete(*this, p, fn, ctx) : Status::kNotFound;
  Session& s = *d->session;
  if (s.open_) return Status::kWouldBlock;  // another message is being written: try later
  // The slot is freed before `fn` runs (fn may defer again and reuse it): keep a copy of the id,
  // which the answer must carry.
  const Token token = d->id;
  const Id id = token.id();
  const Peer peer = d->peer;
  Reply r(s, peer, id, nullptr);
  ToolCall call;
  call.server_ = this;
  call.session_ = &s;
  call.tool_ = d->tool;
  call.reply_ = &r;
  d->used = false;                 // the slot is free from here on
  const CurrentRequest current(*this, s, id);
  if (fn) fn(call, ctx);
  if (call.phase_ != ToolCall::kDeferred) call.finish();  // else deferred again
  send_held_now();
  return Status::kOk;
}


}  // namespace mcp
EMCP_NS_END
