// Resources: resources/list, resources/templates/list, resources/read (ResourceRead), and
// subscriptions (resources/subscribe, notifications/resources/updated).
#include "server_internal.h"

#include "uri_template.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

void write_annotations(json::Writer& w, const Annotations& a, Version v) {
  if (!a.any()) return;
  w.key("annotations");
  w.begin_object();
  if (a.for_user || a.for_assistant) {
    w.key("audience");
    w.begin_array();
    if (a.for_user) w.string("user");
    if (a.for_assistant) w.string("assistant");
    w.end_array();
  }
  if (a.priority >= 0) w.member_double("priority", a.priority);
  if (a.last_modified && supports(v, Feature::kLastModified)) w.member_str("lastModified", a.last_modified);
  w.end_object();
}

}  // namespace

// ---- ResourceRead -------------------------------------------------------------------------------

StrView ResourceRead::var(StrView name) const {
  for (uint8_t i = 0; i < vars_; ++i)
    if (names_[i] == name) return values_[i];
  return StrView();
}

bool ResourceRead::begin() {
  if (missing_ || inputs_.owns_answer()) return false;
  if (!started_) {
    json::Writer& w = reply_->result_object();
    w.key("contents");
    w.begin_array();
    started_ = true;
  }
  return true;
}

void ResourceRead::text(StrView s, StrView mime_type) {
  text(std::initializer_list<TextPiece>{TextPiece(s)}, mime_type);
}

void ResourceRead::text(std::initializer_list<TextPiece> pieces, StrView mime_type) {
  text_end();
  text_begin(mime_type);
  text_part(pieces);
  text_end();
}

void ResourceRead::text_begin(StrView mime_type) {
  if (in_text_ || !begin()) return;
  json::Writer& w = reply_->result();
  w.begin_object();
  w.member_str("uri", uri_);
  const StrView mime = !mime_type.empty() ? mime_type : StrView(mime_);
  if (!mime.empty()) w.member_str("mimeType", mime);
  w.key("text");
  w.string_begin();
  in_text_ = true;
}

void ResourceRead::text_part(StrView s) {
  if (in_text_) reply_->result().string_part(s);
}

void ResourceRead::text_part(std::initializer_list<TextPiece> pieces) {
  if (in_text_) write_text_pieces(reply_->result(), pieces);
}

void ResourceRead::text_end() {
  if (!in_text_) return;
  json::Writer& w = reply_->result();
  w.string_end();
  w.end_object();
  in_text_ = false;
}

void ResourceRead::blob(const void* data, size_t n, StrView mime_type) {
  text_end();
  if (!begin()) return;
  json::Writer& w = reply_->result();
  w.begin_object();
  w.member_str("uri", uri_);
  const StrView mime = !mime_type.empty() ? mime_type : StrView(mime_);
  if (!mime.empty()) w.member_str("mimeType", mime);
  w.key("blob");
  w.base64_begin();
  w.base64_part(data, n);
  w.base64_end();
  w.end_object();
}

void ResourceRead::not_found() {
  if (started_) return;
  missing_ = true;
}

const FeatureOps FeatureOps::kResources = {&ServerCode::resource_methods, nullptr};

// For a peer offered resources; also completion/complete, which existed before the
// `completions` capability (2024-11-05) (prompts.cpp answers it for a peer offered prompts alone).
bool ServerCode::resource_methods(Server& sv, Session& s, const Message& m, Reply& r) {
  if (!r.peer().resources) return false;
  const StrView method = m.method;
  // Every other method (tools/call the most frequent) told apart by its first letter.
  if (method.empty() || (method[0] != 'r' && method[0] != 'c')) return false;
  if (method == "resources/list") on_resources_list(sv, s, m, r);
  else if (method == "resources/templates/list") on_templates_list(sv, s, m, r);
  else if (method == "resources/read") on_resources_read(sv, s, m, r);
  else if (method == "completion/complete") on_complete(sv, s, m, r);
  // Subscriptions belong to a session: the modern era has subscriptions/listen instead.
  else if (r.peer().modern()) return false;
  else if (method == "resources/subscribe") on_subscribe(s, m, r, true);
  else if (method == "resources/unsubscribe") on_subscribe(s, m, r, false);
  else return false;
  return true;
}

void ServerCode::on_resources_list(Server& sv, Session& /*s*/, const Message& m, Reply& r) {
  size_t start = 0;
  if (!page_start(m, r, sv.resources_.size(), &start)) return;
  json::Writer& w = begin_page(r, "resources");
  size_t i = start;
  const Version v = r.peer().version;
  for (; i < sv.resources_.size() && i < start + sv.page_size_; ++i) {
    const Resource& res = sv.resources_[i];
    w.begin_object();
    w.member_str("uri", res.uri);
    w.member_str("name", res.name);
    if (res.title && supports(v, Feature::kTitles)) w.member_str("title", res.title);
    if (res.description) w.member_str("description", res.description);
    if (res.mime_type) w.member_str("mimeType", res.mime_type);
    if (res.size >= 0) w.member_int("size", res.size);
    write_annotations(w, res.annotations, v);
    if (supports(v, Feature::kIcons)) res.icons.write_to(w);
    w.end_object();
  }
  end_page(r, w, i, sv.resources_.size());
}

void ServerCode::on_templates_list(Server& sv, Session& /*s*/, const Message& m, Reply& r) {
  size_t start = 0;
  if (!page_start(m, r, sv.templates_.size(), &start)) return;
  json::Writer& w = begin_page(r, "resourceTemplates");
  size_t i = start;
  const Version v = r.peer().version;
  for (; i < sv.templates_.size() && i < start + sv.page_size_; ++i) {
    const ResourceTemplate& t = sv.templates_[i];
    w.begin_object();
    w.member_str("uriTemplate", t.uri_template);
    w.member_str("name", t.name);
    if (t.title && supports(v, Feature::kTitles)) w.member_str("title", t.title);
    if (t.description) w.member_str("description", t.description);
    if (t.mime_type) w.member_str("mimeType", t.mime_type);
    write_annotations(w, t.annotations, v);
    if (supports(v, Feature::kIcons)) t.icons.write_to(w);
    w.end_object();
  }
  end_page(r, w, i, sv.templates_.size());
}

void ServerCode::on_resources_read(Server& sv, Session& s, const Message& m, Reply& r) {
  const Result<StrView> uri = m.params["uri"].as_string();
  if (!uri.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"uri must be a string"});
    return;
  }
  ResourceRead read;
  read.server_ = &sv;
  read.session_ = &s;
  read.reply_ = &r;
  read.uri_ = uri.value();
  ReadFn fn = nullptr;
  for (const Resource& res : sv.resources_) {
    if (uri.value().equals(res.uri)) {
      fn = res.read;
      read.mime_ = res.mime_type;
      read.user_ = res.user;
      break;
    }
  }
  if (fn == nullptr) {
    for (const ResourceTemplate& t : sv.templates_) {
      uint8_t n = 0;
      if (match_uri_template(t.uri_template, uri.value(), read.names_, read.values_,
                             EMCP_MAX_TEMPLATE_VARS, &n)) {
        fn = t.read;
        read.vars_ = n;
        read.mime_ = t.mime_type;
        read.user_ = t.user;
        break;
      }
    }
  }
  if (fn != nullptr) {
    if (!read.inputs_.begin(sv, r, m)) return;  // inputResponses or requestState refused
    fn(read);
    if (read.inputs_.settle()) return;
  }
  if (fn == nullptr || read.missing_) {
    // -32002 until 2025-11-25; from 2026-07-28 on an unknown resource is -32602 (SEP-2164).
    json::Writer& w = r.error_with_data(r.peer().modern() ? ErrorCode::kInvalidParams : ErrorCode::kResourceNotFound,
                                        {"Resource not found: ", uri.value()});
    w.begin_object();
    w.member_str("uri", uri.value());
    w.end_object();
    return r.end();
  }
  read.text_end();
  if (!read.started_) (void)read.begin();  // a reader that wrote nothing: empty contents
  json::Writer& w = r.result();
  w.end_array();
  r.cache_hints(Reply::Cacheable::kRead);
  w.end_object();
  r.end();
}

void ServerCode::on_subscribe(Session& s, const Message& m, Reply& r, bool on) {
  const Result<StrView> uri = m.params["uri"].as_string();
  if (!uri.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"uri must be a string"});
    return;
  }
  const uint32_t h = uri_hash(uri.value());
  uint32_t* free_slot = nullptr;
  bool found = false;
  for (uint32_t& x : s.subs_) {
    if (x == h) {
      found = true;
      if (!on) x = 0;
    }
    if (x == 0 && free_slot == nullptr) free_slot = &x;
  }
  if (on && !found) {
    if (free_slot == nullptr) {
      r.error(ErrorCode::kInternalError,
              {"Too many subscriptions: this server keeps ", static_cast<long long>(EMCP_MAX_SUBSCRIPTIONS),
               " per session (EMCP_MAX_SUBSCRIPTIONS)"});
      return;
    }
    *free_slot = h;
  }
  json::Writer& w = r.result_object();
  w.end_object();
  r.end();
}

namespace {
bool subscribed(uint32_t h, const uint32_t (&subs)[EMCP_MAX_SUBSCRIPTIONS]) {
  bool found = false;
  for (uint32_t x : subs) found = found || x == h;
  return found;
}
}  // namespace

void ServerCode::send_updated(Server& sv, Session& s, StrView uri) {
  // To the session if it subscribed (resources/subscribe), and to the listen streams on `s`
  // whose resourceSubscriptions name the URI (2026-07-28).
  const uint32_t h = uri_hash(uri);
  const bool session = EMCP_LEGACY_ERA && subscribed(h, s.subs_);
  const bool listens = EMCP_MAX_LISTENS > 0 && listening(sv, s, 0, h);
  if (!session && !listens) return;
  if (sv.must_hold(s)) {
    (void)sv.hold(s, [](Server& server, Session& s2, const HeldHead& held) {
      send_updated(server, s2, held.a());  // if still subscribed
    }, LogLevel::kDebug, uri);
    return;
  }
  if (session) {
    OutMessage m{OutMessage::Kind::kNotification, Id{}, false};
    m.capability = true;
    Outbound out(s, m);
    if (open_or_count(out, sv.notifications_dropped_)) {
      json::Writer& w = out.w();
      jsonrpc::begin_notification(w, "notifications/resources/updated");
      w.begin_object();
      w.member_str("uri", uri);
      w.end_object();
      jsonrpc::end_message(w);
    }
  }
  if (listens) notify_listens(sv, s, "notifications/resources/updated", 0, h, uri);
}

void Server::resource_updated(StrView uri) {
  for (Session* s = sessions_; s != nullptr; s = s->next_) ServerCode::send_updated(*this, *s, uri);
}

}  // namespace mcp
EMCP_NS_END
