// Input: one message or a 2025-03-26 batch, routed by kind and method to the feature that
// answers it (through the server's feature table, so an image links only what it installs).
#include "tasks_internal.h"

EMCP_NS_BEGIN
namespace mcp {

// ---- Input --------------------------------------------------------------------------------------

void Server::handle(Session& s, const jsonrpc::Decoded& d, const RequestHeaders* headers) {
  const RequestHeaders* const outer = headers_;
  headers_ = headers;
  ServerCode::handle_input(*this, s, d);
  headers_ = outer;
  send_held_now();  // what the answer kept waiting
}

void ServerCode::handle_input(Server& sv, Session& s, const jsonrpc::Decoded& d) {
  sv.attach(s);
  if (!d.batch) {
    const Message& m = *d.first;
    // The era first: a 2026-07-28 request is served from its own `_meta` (modern.cpp). A
    // transport hands headers only with a request it routed to that era (by its
    // MCP-Protocol-Version header or its `_meta`): without `_meta` it is -32602 there.
    // With EMCP_LEGACY_ERA=0 every request is (initialize and any without `_meta` refused).
    if (EMCP_MODERN_ERA && m.kind == Kind::kRequest && (!EMCP_LEGACY_ERA || sv.headers_ != nullptr || sv.is_modern(m)))
      return ServerCode::serve_modern(sv, s, m);
    Reply r(s, s.peer_, m.id, nullptr);
    ServerCode::handle_message(sv, s, m, r);
    return;
  }
  // Batches exist in revision 2025-03-26 only.
  if (!EMCP_LEGACY_ERA) {
    Reply r(s, s.peer_, Id::null(), nullptr);
    r.reject(ErrorCode::kInvalidRequest, {"JSON-RPC batches are not part of protocol revision ",
                                          version_str(kModernVersion)});
    return;
  }
  if (!s.initialized() || !supports(s.version(), Feature::kBatches)) {
    Reply r(s, s.peer_, Id::null(), nullptr);
    if (!s.initialized()) {
      r.reject(ErrorCode::kInvalidRequest,
              {"a batch cannot come before initialize (which must be sent alone)"});
    } else {
      r.reject(ErrorCode::kInvalidRequest, {"JSON-RPC batches are not part of "
                                           "protocol revision ", version_str(s.version())});
    }
    return;
  }
  BatchOut batch(s);
  for (const Message* m = d.first; m != nullptr; m = m->next) {
    if (m->kind == Kind::kResponse || m->kind == Kind::kErrorResponse) continue;  // below
    Reply r(s, s.peer_, m->id, &batch);
    if (m->kind == Kind::kRequest && m->method == "initialize") {
      r.reject(ErrorCode::kInvalidRequest, {"initialize must not be part of a batch"});
      continue;
    }
    ServerCode::handle_message(sv, s, *m, r);
  }
  batch.finish();
  sv.send_held_now();  // before the callbacks below send anything
  // Responses to the server's own requests run their callbacks once the batch's answer is
  // out: a callback may answer a deferred call or send a request, which needs the channel.
  for (const Message* m = d.first; m != nullptr; m = m->next)
    if (m->kind == Kind::kResponse || m->kind == Kind::kErrorResponse) FeatureOps::walk(sv, FeatureEvent::kMessage, &s, m);
}

void ServerCode::handle_message(Server& sv, Session& s, const Message& m, Reply& r) {
  switch (m.kind) {
    case Kind::kInvalid:
      r.invalid(m);
      return;
    case Kind::kRequest:
      if (EMCP_LEGACY_ERA) on_request(sv, s, m, r);  // (else served by serve_modern)
      return;
    case Kind::kNotification:
      r.suppress();
      on_notification(sv, s, m);
      return;
    case Kind::kResponse:
    case Kind::kErrorResponse:
      r.suppress();
      if (EMCP_LEGACY_ERA) FeatureOps::walk(sv, FeatureEvent::kMessage, &s, &m);  // requests to the client
      return;
  }
}

void ServerCode::on_request(Server& sv, Session& s, const Message& m, Reply& r) {
  const CurrentRequest current(sv, s, m.id);
  const StrView method = m.method;
  if (method == "initialize") return on_initialize(sv, s, m, r);
  if (method == "ping") {
    json::Writer& w = r.result_object();
    w.end_object();
    return r.end();
  }
  if (!s.initialized()) {
    r.reject(ErrorCode::kInvalidRequest,
            {"the session is not initialized; send initialize first"});
    return;
  }
  if (s.peer_.logs && method == "logging/setLevel") return on_set_level(s, m, r);
  serve_features(sv, s, m, r);
}

void ServerCode::serve_features(Server& sv, Session& s, const Message& m, Reply& r) {
  // Resources, prompts (with completion) and tasks are reached through the features' table,
  // which set_resources(), set_templates(), set_prompts() and set_tasks() fill in: a firmware
  // that never calls them links none of their code (--gc-sections). Each answers only what the
  // reply's peer was offered. Tasks come before the tools: a 2025-11-25 tools/call with
  // params.task is theirs.
  for (const FeatureOps* f : sv.features_)
    if (f != nullptr && f->request != nullptr && f->request(sv, s, m, r)) return;
  const StrView method = m.method;
  if (r.peer().tools) {
    if (method == "tools/list") return on_tools_list(sv, s, m, r);
    if (method == "tools/call") return on_tools_call(sv, s, m, r);
  }
  r.reject(ErrorCode::kMethodNotFound, {"", method});
}

void ServerCode::on_notification(Server& sv, Session& s, const Message& m) {
  if (m.method == "notifications/initialized") {
    if (s.initialized()) s.state_ = Session::kReady;
    return;
  }
  // The features that heed a notification: notifications/cancelled of a deferred call (and the
  // InputBridge's questions for it), notifications/roots/list_changed (on_roots_changed()).
  FeatureOps::walk(sv, FeatureEvent::kMessage, &s, &m);
  // A listen stream ends so on stdio (2026-07-28).
  if (EMCP_MODERN_ERA && EMCP_MAX_LISTENS > 0 && m.method == "notifications/cancelled")
    cancel_listen(sv, s, m.params["requestId"]);
  // notifications/progress and unknown notifications need no answer; MCP says to ignore what
  // one does not understand.
}

}  // namespace mcp
EMCP_NS_END
