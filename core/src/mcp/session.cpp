// A session's lifecycle: initialize (version negotiation, the client's capabilities, what the
// server offers it), reset, and how an answer's id is written at its revision.
#include "server_internal.h"

#include <string.h>

EMCP_NS_BEGIN
namespace mcp {

Session::~Session() {
  if (server_ != nullptr) server_->detach(*this);
}

void Session::reset() {
  state_ = kNew;
  version_ = kLatestVersion;
  caps_ = ClientCaps{};
  log_level_ = LogLevel::kInfo;
  client_name_len_ = 0;
  for (uint32_t& h : subs_) h = 0;
}

jsonrpc::Id answer_id(const Session& s, const jsonrpc::Id& id) {
  if (id.type == Id::Type::kNull && (!s.initialized() || supports(s.version(), Feature::kOmitUnknownId)))
    return Id{};
  return id;
}

void Server::on_initialize(Session& s, const Message& m, Reply& r) {
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
  cancel_deferred(s);
  const bool had_outgoing = s.initialized();
  s.reset();
  Version v = kLatestVersion;
  if (!parse_version(requested.value(), &v)) v = kLatestVersion;  // answer our latest
  s.version_ = v;
  const Value caps = p["capabilities"];
  s.caps_.sampling = caps["sampling"].is_object();
  s.caps_.sampling_tools = caps["sampling"]["tools"].is_object();
  const Value elicitation = caps["elicitation"];
  if (elicitation.is_object() && supports(v, Feature::kElicitation)) {
    const bool form = elicitation["form"].is_object();
    const bool url = elicitation["url"].is_object();
    s.caps_.elicitation_form = form || !url;  // {} means form (2025-06-18 style)
    s.caps_.elicitation_url = url && supports(v, Feature::kElicitationUrl);
  }
  s.caps_.roots = caps["roots"].is_object();
  s.caps_.roots_list_changed = caps["roots"]["listChanged"].as_bool().value_or(false);
  const StrView name = p["clientInfo"]["name"].as_string().value_or(StrView());
  s.client_name_len_ = static_cast<uint8_t>(name.size() < sizeof s.client_name_ ? name.size()
                                                                               : sizeof s.client_name_);
  if (s.client_name_len_) memcpy(s.client_name_, name.data(), s.client_name_len_);
  s.state_ = Session::kInitialized;
  s.offers_tools_ = has_tools_;
  s.offers_resources_ = has_resources_;
  s.offers_prompts_ = has_prompts_;
  s.offers_logging_ = logging_;
  s.offers_completions_ = (has_prompts_ || has_resources_) && supports(v, Feature::kCompletionsCapability);

  json::Writer& w = r.result();
  w.begin_object();
  w.member_str("protocolVersion", version_str(v));
  w.key("capabilities");
  w.begin_object();
  struct Capability {
    const char* name;
    const char* body;
  };
  static constexpr Capability kCapabilities[] = {
      {"logging", "{}"},
      {"completions", "{}"},
      {"prompts", R"({"listChanged":true})"},
      {"resources", R"({"subscribe":true,"listChanged":true})"},
      {"tools", R"({"listChanged":true})"},
  };
  const bool offered[] = {s.offers_logging_, s.offers_completions_, s.offers_prompts_,
                          s.offers_resources_, s.offers_tools_};
  for (size_t i = 0; i < sizeof offered; ++i) {
    if (!offered[i]) continue;
    w.key(kCapabilities[i].name);
    w.raw(kCapabilities[i].body);
  }
  w.end_object();
  w.key("serverInfo");
  w.begin_object();
  w.member_str("name", info_.name);
  w.member_str("version", info_.version);
  if (info_.title && supports(v, Feature::kTitles)) w.member_str("title", info_.title);
  if (supports(v, Feature::kServerDescription)) {
    if (info_.description) w.member_str("description", info_.description);
    if (info_.website_url) w.member_str("websiteUrl", info_.website_url);
    info_.icons.write_to(w);
  }
  w.end_object();
  if (info_.instructions) w.member_str("instructions", info_.instructions);
  w.end_object();
  r.end();
  if (had_outgoing && features_.outgoing != nullptr) features_.outgoing->close(*this, s);
}

}  // namespace mcp
EMCP_NS_END
