// Requests to the client (sampling, elicitation, roots, ping): sending, answers, timeouts,
// and the client's notifications/roots/list_changed.
#include "server_internal.h"

EMCP_NS_BEGIN
namespace mcp {

// ---- Requests to the client ---------------------------------------------------------------------

Status ServerCode::send_request(Server& sv, Session& s, StrView method, ParamsFn params, const void* params_ctx,
                            ResponseFn done, void* done_ctx, uint32_t timeout_ms) {
  // 2026-07-28 has no requests to the client (basic/patterns/index.mdx): none of this is linked
  // by a server of that revision only.
  if (!EMCP_LEGACY_ERA) return Status::kInvalidState;
  Outgoing* slot = nullptr;
  for (Outgoing& o : sv.outgoing_)
    if (!o.used && slot == nullptr) slot = &o;
  if (slot == nullptr) return Status::kNoSpace;
  if (s.open_) return Status::kInvalidState;
  sv.send_held_now();  // what is held goes first
  // MCP: no requests but ping before the client said notifications/initialized.
  if (!s.ready() && !(method == "ping")) return Status::kInvalidState;
  Outbound out(s, OutMessage{OutMessage::Kind::kRequest, &s == sv.current_session_ ? sv.current_ : Id{}, false});
  if (!out.open()) return Status::kClosed;
  const int64_t id = sv.next_request_id_++;
  json::Writer& w = out.w();
  if (params) {
    jsonrpc::begin_request(w, Id::of(id), method);
    params(w, params_ctx);
    jsonrpc::end_message(w);
  } else {
    w.begin_object();
    w.member_str("jsonrpc", "2.0");
    w.member_int("id", id);
    w.member_str("method", method);
    w.end_object();
  }
  const Status st = out.close();
  if (st != Status::kOk) return st;
  FeatureOps::install(sv, FeatureOps::kOutgoingSlot, FeatureOps::kOutgoing);
  jsonrpc::Decoder::keep_lost_responses();  // an answer too big to keep still ends its request
  slot->used = true;
  slot->session = &s;
  slot->done = done;
  slot->ctx = done_ctx;
  slot->id = id;
  slot->deadline = timeout_ms != 0 ? sv.now() + timeout_ms : 0;
  return Status::kOk;
}

Status Server::request(Session& s, StrView method, ParamsFn params, const void* params_ctx,
                       ResponseFn done, void* done_ctx, uint32_t timeout_ms) {
  return ServerCode::send_request(*this, s, method, params, params_ctx, done, done_ctx, timeout_ms);
}

Status Server::sample(Session& s, ParamsFn params, const void* params_ctx, ResponseFn done,
                      void* ctx, uint32_t timeout_ms) {
  if (!s.client().sampling) return Status::kNotFound;
  return ServerCode::send_request(*this, s, "sampling/createMessage", params, params_ctx, done, ctx, timeout_ms);
}

namespace {
struct ElicitForm {
  StrView message;
  Span<const Param> schema;
  bool mode;
};
void write_elicit_form(json::Writer& w, const void* ctx) {
  const auto* f = static_cast<const ElicitForm*>(ctx);
  w.begin_object();
  if (f->mode) w.member_str("mode", "form");
  w.member_str("message", f->message);
  w.key("requestedSchema");
  write_object_schema(w, f->schema);
  w.end_object();
}
struct ElicitUrl {
  StrView message, url, id;
};
void write_elicit_url(json::Writer& w, const void* ctx) {
  const auto* u = static_cast<const ElicitUrl*>(ctx);
  w.begin_object();
  w.member_str("mode", "url");
  w.member_str("message", u->message);
  w.member_str("elicitationId", u->id);
  w.member_str("url", u->url);
  w.end_object();
}
}  // namespace

bool elicit_schema_ok(Span<const Param> schema, Version v) {
  // requestedSchema allows flat primitive properties only (MCP PrimitiveSchemaDefinition); from
  // 2025-11-25 on also multi-select enums: arrays of enum strings (SEP-1330).
  const bool multi_select = supports(v, Feature::kMultiSelectEnums);
  for (const Param& p : schema) {
    if (p.type == ParamType::kObject) return false;
    if (p.type == ParamType::kArray &&
        !(multi_select && (p.raw_json != nullptr ||
                           (p.items != nullptr && p.items->type == ParamType::kString && p.items->enum_count != 0))))
      return false;
  }
  return true;
}

Status Server::elicit(Session& s, StrView message, Span<const Param> schema, ResponseFn done,
                      void* ctx, uint32_t timeout_ms) {
  if (!s.client().elicitation_form) return Status::kNotFound;
  if (!elicit_schema_ok(schema, s.version())) return Status::kInvalidArgument;
  const ElicitForm f{message, schema, supports(s.version(), Feature::kElicitationUrl)};
  return ServerCode::send_request(*this, s, "elicitation/create", &write_elicit_form, &f, done, ctx, timeout_ms);
}

Status Server::elicit_url(Session& s, StrView message, StrView url, StrView elicitation_id,
                          ResponseFn done, void* ctx, uint32_t timeout_ms) {
  if (!s.client().elicitation_url) return Status::kNotFound;
  const ElicitUrl u{message, url, elicitation_id};
  return ServerCode::send_request(*this, s, "elicitation/create", &write_elicit_url, &u, done, ctx, timeout_ms);
}

Status Server::list_roots(Session& s, ResponseFn done, void* ctx, uint32_t timeout_ms) {
  if (!s.client().roots) return Status::kNotFound;
  return ServerCode::send_request(*this, s, "roots/list", nullptr, nullptr, done, ctx, timeout_ms);
}

Status Server::ping(Session& s, ResponseFn done, void* ctx, uint32_t timeout_ms) {
  return ServerCode::send_request(*this, s, "ping", nullptr, nullptr, done, ctx, timeout_ms);
}

void ServerCode::close_outgoing(Server& sv, Session& s) {
  for (Outgoing& o : sv.outgoing_) {
    if (!o.used || o.session != &s) continue;
    o.used = false;
    Response r;
    r.outcome = Response::Outcome::kClosed;
    r.session = &s;
    if (o.done) o.done(r, o.ctx);
  }
}

void Server::on_roots_changed(RootsChangedFn fn, void* ctx) {
  roots_changed_ = fn;
  roots_changed_ctx_ = ctx;
  // Linked only when called; a 2026-07-28-only server has no such notification.
  if (EMCP_LEGACY_ERA) FeatureOps::install(*this, FeatureOps::kRootsSlot, FeatureOps::kRoots);
}

const FeatureOps FeatureOps::kRoots = {
    nullptr,
    [](Server& sv, FeatureEvent e, Session* s, const Message* m) {
      if (e != FeatureEvent::kMessage || m->kind != Kind::kNotification ||
          m->method != "notifications/roots/list_changed")
        return;
      // Only once notifications/initialized came: before, list_roots() could not ask yet.
      if (sv.roots_changed_ != nullptr && s->ready()) sv.roots_changed_(*s, sv.roots_changed_ctx_);
    },
};

void ServerCode::on_response(Server& sv, Session& s, const Message& m) {
  if (m.id.type != Id::Type::kInt) return;  // not one of ours (we send integer ids)
  for (Outgoing& o : sv.outgoing_) {
    if (!o.used || o.session != &s || o.id != m.id.num) continue;
    o.used = false;
    Response r;
    r.session = &s;
    if (m.kind == Kind::kResponse) {
      r.outcome = Response::Outcome::kResult;
      r.result = m.result;
    } else {
      r.outcome = Response::Outcome::kError;
      r.code = m.error.code;
      r.message = m.error.message;
      r.data = m.error.data;
    }
    if (o.done) o.done(r, o.ctx);
    return;
  }
}

void ServerCode::send_cancelled(Server& sv, Session& s, int64_t request_id, const char* reason) {
  sv.send_held_now();  // what is held goes first
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, Id{}, false});
  if (!open_or_count(out, sv.notifications_dropped_)) return;
  json::Writer& w = out.w();
  jsonrpc::begin_notification(w, "notifications/cancelled");
  w.begin_object();
  w.member_int("requestId", request_id);
  w.member_str("reason", reason);
  w.end_object();
  jsonrpc::end_message(w);
}

void ServerCode::expire_outgoing(Server& sv) {
  const uint64_t now = sv.now();
  for (Outgoing& o : sv.outgoing_) {
    if (!o.used || o.deadline == 0 || now < o.deadline) continue;
    Session& s = *o.session;
    if (s.open_) continue;  // the channel is busy; try on the next poll
    o.used = false;
    // Tell the client we stopped waiting (MCP: a sender that times out SHOULD cancel).
    send_cancelled(sv, s, o.id, "timeout");
    Response r;
    r.outcome = Response::Outcome::kTimeout;
    r.session = &s;
    if (o.done) o.done(r, o.ctx);
  }
}

// Requests to the client: their answers, their end with the session (kClosed), their timeouts.
const FeatureOps FeatureOps::kOutgoing = {
    nullptr,
    [](Server& sv, FeatureEvent e, Session* s, const Message* m) {
      if (e == FeatureEvent::kMessage && (m->kind == Kind::kResponse || m->kind == Kind::kErrorResponse))
        ServerCode::on_response(sv, *s, *m);
      else if (e == FeatureEvent::kEnded) ServerCode::close_outgoing(sv, *s);
      else if (e == FeatureEvent::kPoll) ServerCode::expire_outgoing(sv);
    },
};

}  // namespace mcp
EMCP_NS_END
