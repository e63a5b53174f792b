// A session's lifecycle: initialize (version negotiation, the client's capabilities, what the
// server offers it), reset, and how an answer's id is written at its revision.
#include "tasks_internal.h"

#include <string.h>

EMCP_NS_BEGIN
namespace mcp {

Session::~Session() {
  if (server_ != nullptr) server_->detach(*this);
}

void Session::reset() {
  state_ = kNew;
  peer_ = Peer{kLatestVersion};
  client_name_len_ = 0;
  for (uint32_t& h : subs_) h = 0;
}

jsonrpc::Id answer_id(const Session& s, const jsonrpc::Id& id) {
  if (id.type == Id::Type::kNull && (!s.initialized() || supports(s.version(), Feature::kOmitUnknownId)))
    return Id{};
  return id;
}

ClientCaps read_client_caps(Value caps, Version v) {
  ClientCaps c;
  c.sampling = caps["sampling"].is_object();
  c.sampling_tools = caps["sampling"]["tools"].is_object();
  const Value elicitation = caps["elicitation"];
  if (elicitation.is_object() && supports(v, Feature::kElicitation)) {
    const bool form = elicitation["form"].is_object();
    const bool url = elicitation["url"].is_object();
    c.elicitation_form = form || !url;  // {} means form (2025-06-18 style)
    c.elicitation_url = url && supports(v, Feature::kElicitationUrl);
  }
  c.roots = caps["roots"].is_object();
  c.roots_list_changed = caps["roots"]["listChanged"].as_bool().value_or(false);
  return c;
}

void write_capabilities(json::Writer& w, const Peer& p) {
  w.key("capabilities");
  w.begin_object();
  write_capability_members(w, p);
  w.end_object();
}

void write_capability_members(json::Writer& w, const Peer& p) {
  static constexpr const char* kNames[] = {"logging", "completions", "prompts", "resources", "tools"};
  // Change notifications: a session's go on its own channel; at 2026-07-28 they go only on
  // subscriptions/listen streams, so server/discover offers them only with listens.
  static constexpr const char* kNotified[] = {"{}", "{}", R"({"listChanged":true})",
                                              R"({"subscribe":true,"listChanged":true})",
                                              R"({"listChanged":true})"};
  const bool offered[] = {p.logs, p.completions, p.prompts, p.resources, p.tools};
  const bool notified = !p.modern() || EMCP_MAX_LISTENS > 0;
  for (size_t i = 0; i < sizeof offered; ++i) {
    if (!offered[i]) continue;
    w.key(kNames[i]);
    w.raw(notified ? kNotified[i] : "{}");
  }
}

void write_implementation(json::Writer& w, const ServerInfo& info, Version v) {
  w.begin_object();
  w.member_str("name", info.name);
  w.member_str("version", info.version);
  if (info.title && supports(v, Feature::kTitles)) w.member_str("title", info.title);
  if (supports(v, Feature::kServerDescription)) {
    if (info.description) w.member_str("description", info.description);
    if (info.website_url) w.member_str("websiteUrl", info.website_url);
    info.icons.write_to(w);
  }
  w.end_object();
}

void ServerCode::on_initialize(Server& sv, Session& s, const Message& m, Reply& r) {
  const Value p = m.params;
  const Result<StrView> requested = p["protocolVersion"].as_string();
  if (!requested.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"protocolVersion must be a string"});
    return;
  }
  if (!p["capabilities"].is_object() && p["capabilities"].exists()) {
    r.reject(ErrorCode::kInvalidParams, {"capabilities must be an object"});
    return;
  }
  // A repeated initialize starts the session afresh (a client reconnecting over a bridge):
  // its deferred calls are cancelled now, its requests to the client end (kClosed) after the
  // answer, so whatever their callbacks send goes out after it.
  FeatureOps::walk(sv, FeatureEvent::kRestarting, &s);
  const bool had_outgoing = s.initialized();
  s.reset();
  // An unknown revision, or a modern one (no initialize there), is answered with our latest.
  Version v = kLatestVersion;
  if (!parse_version(requested.value(), &v) || !supports(v, Feature::kSessions)) v = kLatestVersion;
  s.peer_.version = v;
  s.peer_.caps = read_client_caps(p["capabilities"], v);
  const StrView name = p["clientInfo"]["name"].as_string().value_or(StrView());
  s.client_name_len_ = static_cast<uint8_t>(name.size() < sizeof s.client_name_ ? name.size()
                                                                               : sizeof s.client_name_);
  if (s.client_name_len_) memcpy(s.client_name_, name.data(), s.client_name_len_);
  s.state_ = Session::kInitialized;
  s.peer_.tools = sv.has_tools_;
  s.peer_.resources = sv.has_resources_;
  s.peer_.prompts = sv.has_prompts_;
  s.peer_.logs = sv.logging_;
  s.peer_.completions = (sv.has_prompts_ || sv.has_resources_) && supports(v, Feature::kCompletionsCapability);

  json::Writer& w = r.result_object();
  w.member_str("protocolVersion", version_str(v));
  // With tasks, a 2025-11-25 session gets their capability too (tasks_2025.cpp).
  if (EMCP_LEGACY_ERA && sv.tasks_ != nullptr) TaskCode::ops(sv)->legacy->capabilities(sv, w, s);
  else write_capabilities(w, s.peer_);
  w.key("serverInfo");
  write_implementation(w, sv.info_, v);
  if (sv.info_.instructions) w.member_str("instructions", sv.info_.instructions);
  w.end_object();
  r.end();
  if (had_outgoing) FeatureOps::walk(sv, FeatureEvent::kEnded, &s);
}

}  // namespace mcp
EMCP_NS_END
