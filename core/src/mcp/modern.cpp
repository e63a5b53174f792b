// The stateless era (MCP 2026-07-28): each request brings its revision and the client's
// capabilities in `_meta`; no initialize, no session state. The era is decided per request,
// before the method is looked up; the request's `_meta` is checked in the order the spec's
// pages give (basic/index.mdx, basic/versioning.mdx): the required fields (-32602), then the
// revision (-32022); then the method, from the modern era's table only (-32601 for the legacy
// era's initialize, ping, logging/setLevel, resources/subscribe...).
#include "tasks_internal.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr const char* kMetaVersion = "io.modelcontextprotocol/protocolVersion";
constexpr const char* kMetaLogLevel = "io.modelcontextprotocol/logLevel";
constexpr const char* kMetaSubscription = "io.modelcontextprotocol/subscriptionId";

// -32022 with the revisions served and the one asked for (basic/versioning.mdx).
void unsupported_version(Reply& r, StrView requested) {
  json::Writer& w = r.refusing().error_with_data(ErrorCode::kUnsupportedVersion,
                                      {"protocol revision \"", requested,
                                       "\" is not served here; supported: ", version_str(kModernVersion)});
  w.begin_object();
  w.key("supported");
  w.begin_array();
  w.string(version_str(kModernVersion));
  w.end_array();
  w.member_str("requested", requested);
  w.end_object();
  r.end();
}

}  // namespace

bool Server::is_modern(const Message& m) {
  // Either required field marks the request modern (one missing is then answered -32602);
  // a legacy request's _meta holds a progressToken at most.
  const Value meta = m.params["_meta"];
  if (meta[kMetaVersion].exists() || meta[kMetaCaps].exists()) return true;
  // Methods only the modern era has are modern even when their `_meta` is missing (which is
  // then answered -32602, not -32601).
  return m.method == "server/discover" || m.method == "subscriptions/listen";
}

void ServerCode::serve_modern(Server& sv, Session& s, const Message& m) {
  Peer peer;
  peer.version = kModernVersion;
  Reply r(s, peer, m.id, nullptr);
  const CurrentRequest current(sv, s, m.id);
  // A server of 2026-07-28 only (EMCP_LEGACY_ERA=0) and a legacy client's initialize (no
  // modern `_meta`): basic/versioning.mdx ("Backward Compatibility with Initialization-Based
  // Versions") leaves the code to the server but asks it to name the revisions it serves in
  // any error to initialize: -32022 with `data.supported`, and the revision the client asked
  // for as `requested`. (With modern `_meta`, initialize is an unknown method below: -32601.)
  if (!EMCP_LEGACY_ERA && m.method == "initialize" && !sv.is_modern(m)) {
    const Result<StrView> asked = m.params["protocolVersion"].as_string();
    if (asked.ok()) return unsupported_version(r, asked.value());
  }
  const Value meta = m.params["_meta"];
  if (!meta.is_object()) {
    r.refusing().reject(ErrorCode::kInvalidParams,
             {"params._meta is required at protocol revision ", version_str(kModernVersion), " (",
              kMetaVersion, ", ", kMetaCaps, ")"});
    return;
  }
  const Result<StrView> requested = meta[kMetaVersion].as_string();
  if (!requested.ok()) {
    r.refusing().reject(ErrorCode::kInvalidParams, {"_meta[\"", kMetaVersion, "\"] must be a string"});
    return;
  }
  const Value caps = meta[kMetaCaps];
  if (!caps.is_object()) {
    r.refusing().reject(ErrorCode::kInvalidParams, {"_meta[\"", kMetaCaps, "\"] must be an object"});
    return;
  }
  // Streamable HTTP: the headers mirror the body (-32020), checked before the revision.
  if (sv.headers_ != nullptr && sv.headers_->check != nullptr && !sv.headers_->check(sv, m, requested.value(), r)) return;
  Version v;
  if (!parse_version(requested.value(), &v) || !supports(v, Feature::kModern))
    return unsupported_version(r, requested.value());
  const Value level = meta[kMetaLogLevel];
  if (level.exists()) {
    const Result<StrView> name = level.as_string();
    if (!name.ok() || !parse_log_level(name.value(), &peer.log_level)) {
      r.refusing().reject(ErrorCode::kInvalidParams,
                          {"_meta[\"", kMetaLogLevel, "\"] must be one of debug, info, notice, warning, error, "
                "critical, alert, emergency"});
      return;
    }
    peer.logs = sv.logging_;  // no logs at all for a request that named no level
  }
  peer.version = v;
  peer.caps = read_client_caps(caps, v);
  peer.tools = sv.has_tools_;
  peer.resources = sv.has_resources_;
  peer.prompts = sv.has_prompts_;
  peer.completions = sv.has_prompts_ || sv.has_resources_;
  if (m.method == "server/discover") return on_discover(sv, r);
  if (EMCP_MAX_LISTENS > 0 && m.method == "subscriptions/listen") return on_listen(sv, s, m, r);
  serve_features(sv, s, m, r);  // tasks/* among them (set_tasks())
}

void ServerCode::on_discover(Server& sv, Reply& r) {
  json::Writer& w = r.result_object();
  w.key("supportedVersions");
  w.begin_array();
  w.string(version_str(kModernVersion));
  w.end_array();
  w.key("capabilities");
  w.begin_object();
  write_capability_members(w, r.peer());
  if (sv.tasks_ != nullptr) write_tasks_extension(w);  // SEP-2663
  w.end_object();
  if (sv.info_.instructions) w.member_str("instructions", sv.info_.instructions);
  r.cache_hints(Reply::Cacheable::kList);
  w.end_object();
  r.end();
}

void write_server_meta(json::Writer& w, const ServerInfo& info, const Id* subscription) {
  w.key("_meta");
  w.begin_object();
  w.key("io.modelcontextprotocol/serverInfo");
  write_implementation(w, info, kModernVersion);
  if (subscription != nullptr) {
    w.key(kMetaSubscription);
    jsonrpc::write_id(w, *subscription);
  }
  w.end_object();
}

void write_subscription_meta(json::Writer& w, const Id& id) {
  w.key("_meta");
  w.begin_object();
  w.key(kMetaSubscription);
  jsonrpc::write_id(w, id);
  w.end_object();
}

}  // namespace mcp
EMCP_NS_END
