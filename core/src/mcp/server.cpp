// The server object: the application's tables (installing each feature's code as it is first
// used), sessions, poll, and the scope of a request.
#include "server_internal.h"

#include "emcp/util/assert.h"
#include "uri_template.h"

EMCP_NS_BEGIN
namespace mcp {

// ---- Server -------------------------------------------------------------------------------------

Server::Server(const ServerInfo& info, const Platform& platform) : info_(info), platform_(platform) {
  EMCP_ASSERT(platform.now_ms != nullptr);  // a platform without a clock: see emcp/platform.h
}

namespace {
template <typename T>
bool same(Span<const T> a, Span<const T> b) {
  return a.data() == b.data() && a.size() == b.size();
}
}  // namespace

void Server::set_tools(Span<const Tool> tools) {
  const bool changed = !has_tools_ || !same(tools_, tools);
  tools_ = tools;
  has_tools_ = true;
  if (changed) ServerCode::list_changed(*this, ListKind::kTools);
}

void Server::set_resources(Span<const Resource> resources) {
  const bool changed = !has_resources_ || !same(resources_, resources);
  resources_ = resources;
  has_resources_ = true;
  FeatureOps::install(*this, FeatureOps::kResourcesSlot, FeatureOps::kResources);
  if (changed) ServerCode::list_changed(*this, ListKind::kResources);
}
void Server::set_templates(Span<const ResourceTemplate> templates) {
  const bool changed = !has_resources_ || !same(templates_, templates);
  templates_ = templates;
  has_resources_ = true;
  FeatureOps::install(*this, FeatureOps::kResourcesSlot, FeatureOps::kResources);
  if (changed) ServerCode::list_changed(*this, ListKind::kResources);
}
void Server::set_prompts(Span<const Prompt> prompts) {
  const bool changed = !has_prompts_ || !same(prompts_, prompts);
  prompts_ = prompts;
  has_prompts_ = true;
  FeatureOps::install(*this, FeatureOps::kPromptsSlot, FeatureOps::kPrompts);
  if (changed) ServerCode::list_changed(*this, ListKind::kPrompts);
}

Server::~Server() {
  while (sessions_ != nullptr) detach(*sessions_);
}

void Server::attach(Session& s) {
  if (s.server_ == this) return;
  if (s.server_ != nullptr) s.server_->detach(s);
  s.server_ = this;
  s.next_ = sessions_;
  sessions_ = &s;
}

void Server::detach(Session& s) {
  // Its deferred calls end (no events: the session ends), its 2025-11-25 tasks too.
  FeatureOps::walk(*this, FeatureEvent::kEnding, &s);
  for (Listen& l : listens_)
    if (l.session == &s) l.session = nullptr;  // its stream ended with the session
  if (held_used_ != 0) send_held(&s);  // what is held for it will not be sent
  FeatureOps::walk(*this, FeatureEvent::kEnded, &s);  // the server's requests to it end
  for (Session** p = &sessions_; *p != nullptr; p = &(*p)->next_) {
    if (*p == &s) {
      *p = s.next_;
      break;
    }
  }
  s.server_ = nullptr;
  s.next_ = nullptr;
}

void Server::poll() {
  // Requests to clients that timed out, what other tasks posted (the inbox), the InputBridge's
  // and the tasks' waiting work.
  FeatureOps::walk(*this, FeatureEvent::kPoll);
  send_held_now();
}

void FeatureOps::walk(Server& sv, FeatureEvent e, Session* s, const jsonrpc::Message* m) {
  for (const FeatureOps* f : sv.features_)
    if (f != nullptr && f->event != nullptr) f->event(sv, e, s, m);
}

const Tool* ServerCode::tool_named(const Server& sv, StrView name) {
  for (const Tool& t : sv.tools_)
    if (name.equals(t.name)) return &t;
  return nullptr;
}

const Prompt* ServerCode::prompt_named(const Server& sv, StrView name) {
  for (const Prompt& p : sv.prompts_)
    if (name.equals(p.name)) return &p;
  return nullptr;
}

const char* Server::scope_of(const jsonrpc::Message& m) const {
  if (m.kind != jsonrpc::Kind::kRequest) return nullptr;
  if (m.method == "tools/call") {
    const Result<StrView> name = m.params["name"].as_string();
    if (!name.ok()) return nullptr;
    const Tool* t = ServerCode::tool_named(*this, name.value());
    return t != nullptr ? t->scope : nullptr;
  }
  if (m.method == "prompts/get") {
    const Result<StrView> name = m.params["name"].as_string();
    if (!name.ok()) return nullptr;
    const Prompt* p = ServerCode::prompt_named(*this, name.value());
    return p != nullptr ? p->scope : nullptr;
  }
  if (m.method == "resources/read" || m.method == "resources/subscribe") {
    const Result<StrView> uri = m.params["uri"].as_string();
    if (!uri.ok()) return nullptr;
    for (const Resource& r : resources_)
      if (uri.value().equals(r.uri)) return r.scope;
    StrView names[EMCP_MAX_TEMPLATE_VARS], values[EMCP_MAX_TEMPLATE_VARS];
    uint8_t count = 0;
    for (const ResourceTemplate& t : templates_)
      if (match_uri_template(t.uri_template, uri.value(), names, values, EMCP_MAX_TEMPLATE_VARS, &count)) return t.scope;
  }
  return nullptr;
}

}  // namespace mcp
EMCP_NS_END
