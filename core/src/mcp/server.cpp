#include "emcp/mcp/server.h"

#include <string.h>

#include "emcp/json/number.h"
#include "emcp/util/assert.h"
#include "reply.h"
#include "uri_template.h"

EMCP_NS_BEGIN
namespace mcp {

using jsonrpc::ErrorCode;
using jsonrpc::Id;
using jsonrpc::Kind;
using jsonrpc::Message;
using json::Value;

namespace {

constexpr const char* kVersionNames[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"};
constexpr const char* kLevelNames[] = {"debug", "info",     "notice", "warning",
                                       "error", "critical", "alert",  "emergency"};

// FNV-1a of a URI, never 0 (0 marks a free subscription slot).
uint32_t uri_hash(StrView s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h == 0 ? 1 : h;
}

bool at_least(const Session& s, Version v) { return s.version() >= v; }

// A sink that escapes what is written into it as the body of a JSON string of another writer
// (structured output rendered as the text of a content block).
class StringBodySink : public json::Sink {
 public:
  explicit StringBodySink(json::Writer& outer) : Sink(buf_, sizeof buf_, &drain, true), outer_(outer) {}

 private:
  static Status drain(Sink& self) {
    auto& s = static_cast<StringBodySink&>(self);
    s.outer_.string_part(StrView(s.buf_, s.len_));
    return Status::kOk;
  }
  json::Writer& outer_;
  char buf_[64];
};


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
  if (a.last_modified && v >= Version::k2025_06_18) w.member_str("lastModified", a.last_modified);
  w.end_object();
}

void write_hint(json::Writer& w, const char* key, Hint h) {
  if (h != Hint::kUnset) w.member_bool(key, h == Hint::kTrue);
}

}  // namespace

// While a client request is handled (or a deferred one completed), what the server sends on
// that session relates to it.
struct CurrentRequest {
  CurrentRequest(Server& server, Session& s, const Id& id)
      : server_(server), id_(server.current_), session_(server.current_session_) {
    server.current_ = id;
    server.current_session_ = &s;
  }
  ~CurrentRequest() {
    server_.current_ = id_;
    server_.current_session_ = session_;
  }
  CurrentRequest(const CurrentRequest&) = delete;
  CurrentRequest& operator=(const CurrentRequest&) = delete;
  Server& server_;
  Id id_;
  Session* session_;
};

// ---- Small types --------------------------------------------------------------------------------

const char* version_str(Version v) { return kVersionNames[static_cast<uint8_t>(v)]; }

bool parse_version(StrView s, Version* out) {
  for (uint8_t i = 0; i < 4; ++i) {
    if (s == StrView(kVersionNames[i])) {
      *out = static_cast<Version>(i);
      return true;
    }
  }
  return false;
}

const char* log_level_str(LogLevel l) { return kLevelNames[static_cast<uint8_t>(l)]; }

bool parse_log_level(StrView s, LogLevel* out) {
  for (uint8_t i = 0; i < 8; ++i) {
    if (s == StrView(kLevelNames[i])) {
      *out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

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
  if (id.type == Id::Type::kNull && (!s.initialized() || s.version() >= Version::k2025_11_25))
    return Id{};
  return id;
}

// ---- ToolCall -----------------------------------------------------------------------------------

StrView ToolCall::str(StrView name, StrView fallback) const {
  return args_[name].as_string().value_or(fallback);
}
int64_t ToolCall::integer(StrView name, int64_t fallback) const {
  return args_[name].as_int().value_or(fallback);
}
double ToolCall::number(StrView name, double fallback) const {
  return args_[name].as_double().value_or(fallback);
}
bool ToolCall::boolean(StrView name, bool fallback) const {
  return args_[name].as_bool().value_or(fallback);
}

bool ToolCall::begin_result() {
  if (phase_ != kIdle) return phase_ == kContent;
  json::Writer& w = reply_->result();
  w.begin_object();
  w.key("content");
  w.begin_array();
  content_ = ContentWriter(w, session_->version());
  phase_ = kContent;
  return true;
}

ContentWriter& ToolCall::content() {
  if (phase_ == kIdle) begin_result();
  if (phase_ != kContent) content_ = ContentWriter();  // content is closed: writes go nowhere
  return content_;
}

void ToolCall::structured(StructuredFn fn, const void* ctx) {
  if (phase_ == kIdle) begin_result();
  if (phase_ != kContent) return;
  json::Writer& w = reply_->result();
  // The JSON as a text block, for clients that read only content.
  content_.text_end();
  content_.text_begin();
  {
    StringBodySink body(w);
    json::Writer inner(body);
    fn(inner, ctx);
    (void)body.flush();
  }
  content_.text_end();
  if (session_->version() < Version::k2025_06_18) return;  // no structuredContent before
  w.end_array();
  w.key("structuredContent");
  fn(w, ctx);
  phase_ = kStructured;
}

void ToolCall::fail(StrView message) { fail(std::initializer_list<TextPiece>{TextPiece(message)}); }

void ToolCall::fail(std::initializer_list<TextPiece> pieces) {
  if (phase_ == kIdle) begin_result();
  if (phase_ == kContent) content_.text(pieces);
  is_error_ = true;
}

void ToolCall::invalid_params(StrView message) {
  if (phase_ == kIdle) {
    reply_->error(ErrorCode::kInvalidParams, {message});
    phase_ = kErrored;
    return;
  }
  fail(message);
}

Status ToolCall::progress(double done, double total, StrView message) {
  Id token;
  if (progress_value_.is_int()) token = Id::of(progress_value_.as_int().value());
  else if (progress_value_.is_string()) token = Id::of(progress_value_.as_string().value());
  else return Status::kNotFound;
  if (reply_->begun()) return server_->drop_notification();  // the result is being written
  return server_->notify_progress(*session_, token, done, total, message, reply_->id());
}

Status ToolCall::log(LogLevel level, StrView message, StrView logger) {
  // After the result started the channel is busy with it: send_log() holds the message.
  return server_->send_log(*session_, level, message, logger, reply_->id());
}

Pending ToolCall::defer() {
  if (phase_ != kIdle) return Pending{};
  for (uint16_t i = 0; i < EMCP_MAX_DEFERRED; ++i) {
    Server::Deferred& d = server_->deferred_[i];
    if (d.used) continue;
    server_->deferred_ops_ = &Server::kDeferredOps;
    d.used = true;
    d.cancelled = false;
    d.session = session_;
    d.tool = tool_;
    d.id.set(reply_->id());
    d.progress = Token{};
    if (progress_value_.is_int()) d.progress.set(Id::of(progress_value_.as_int().value()));
    else if (progress_value_.is_string()) d.progress.set(Id::of(progress_value_.as_string().value()));
    ++d.generation;
    phase_ = kDeferred;
    reply_->suppress();
    return Pending{i, d.generation};
  }
  fail({"The server is busy: ", static_cast<long long>(EMCP_MAX_DEFERRED),
        " calls are already in progress (EMCP_MAX_DEFERRED). Try again later."});
  return Pending{};
}

Status ToolCall::close_stream(uint32_t retry_ms) {
  if (phase_ != kIdle) return Status::kInvalidState;  // the answer has started (or is deferred)
  const Channel& ch = session_->channel_;
  if (ch.end_stream == nullptr || session_->open_ || server_->current_session_ != session_)
    return Status::kInvalidState;
  return ch.end_stream(ch.ctx, server_->current_, retry_ms);
}

void ToolCall::finish() {
  switch (phase_) {
    case kDeferred:
    case kErrored:
    case kDone:
      return;
    case kIdle:
      begin_result();
      break;
    default:
      break;
  }
  json::Writer& w = reply_->result();
  content_.text_end();
  if (phase_ == kContent) w.end_array();
  if (is_error_) w.member_bool("isError", true);
  w.end_object();
  reply_->end();
  phase_ = kDone;
}

// ---- ResourceRead -------------------------------------------------------------------------------

StrView ResourceRead::var(StrView name) const {
  for (uint8_t i = 0; i < vars_; ++i)
    if (names_[i] == name) return values_[i];
  return StrView();
}

bool ResourceRead::begin() {
  if (missing_) return false;
  if (!started_) {
    json::Writer& w = reply_->result();
    w.begin_object();
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

// ---- PromptGet ----------------------------------------------------------------------------------

StrView PromptGet::arg(StrView name, StrView fallback) const {
  return args_[name].as_string().value_or(fallback);
}

ContentWriter& PromptGet::message(Role role) {
  if (failed_) {
    content_ = ContentWriter();  // after invalid_params(): nothing more is written
    return content_;
  }
  json::Writer& w = reply_->result();
  if (!started_) {
    w.begin_object();
    if (prompt_->description) w.member_str("description", prompt_->description);
    w.key("messages");
    w.begin_array();
    started_ = true;
  }
  end_message();
  w.begin_object();
  w.member_str("role", role == Role::kUser ? "user" : "assistant");
  w.key("content");
  in_message_ = true;
  content_ = ContentWriter(w, session_->version(), 1);
  return content_;
}

void PromptGet::end_message() {
  if (!in_message_) return;
  content_.text_end();
  if (content_.blocks() == 0) content_.text("");  // a message needs its one content block
  reply_->result().end_object();
  in_message_ = false;
}

void PromptGet::invalid_params(StrView message) {
  if (started_) return;
  reply_->error(ErrorCode::kInvalidParams, {message});
  failed_ = true;
}

// ---- Completion ---------------------------------------------------------------------------------

StrView Completion::context(StrView name) const {
  return context_[name].as_string().value_or(StrView());
}

void Completion::add(StrView value) {
  if (count_ >= 100) {
    more_ = true;
    return;
  }
  w_->string(value);
  ++count_;
}

void Completion::add_matching(Span<const char* const> values) {
  for (const char* v : values)
    if (StrView(v).starts_with(prefix_)) add(v);
}

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
  if (changed) list_changed(ListKind::kTools);
}
bool Server::resource_methods(Server& sv, Session& s, const Message& m, Reply& r) {
  const StrView method = m.method;
  if (method == "resources/list") sv.on_resources_list(s, m, r);
  else if (method == "resources/templates/list") sv.on_templates_list(s, m, r);
  else if (method == "resources/read") sv.on_resources_read(s, m, r);
  else if (method == "resources/subscribe") sv.on_subscribe(s, m, r, true);
  else if (method == "resources/unsubscribe") sv.on_subscribe(s, m, r, false);
  else return false;
  return true;
}

bool Server::prompt_methods(Server& sv, Session& s, const Message& m, Reply& r) {
  const StrView method = m.method;
  if (method == "prompts/list") sv.on_prompts_list(s, m, r);
  else if (method == "prompts/get") sv.on_prompts_get(s, m, r);
  else return false;
  return true;
}

bool Server::completion_methods(Server& sv, Session& s, const Message& m, Reply& r) {
  sv.on_complete(s, m, r);
  return true;
}

void Server::set_resources(Span<const Resource> resources) {
  const bool changed = !has_resources_ || !same(resources_, resources);
  resources_ = resources;
  has_resources_ = true;
  resource_methods_ = &Server::resource_methods;
  completion_methods_ = &Server::completion_methods;
  if (changed) list_changed(ListKind::kResources);
}
void Server::set_templates(Span<const ResourceTemplate> templates) {
  const bool changed = !has_resources_ || !same(templates_, templates);
  templates_ = templates;
  has_resources_ = true;
  resource_methods_ = &Server::resource_methods;
  completion_methods_ = &Server::completion_methods;
  if (changed) list_changed(ListKind::kResources);
}
void Server::set_prompts(Span<const Prompt> prompts) {
  const bool changed = !has_prompts_ || !same(prompts_, prompts);
  prompts_ = prompts;
  has_prompts_ = true;
  prompt_methods_ = &Server::prompt_methods;
  completion_methods_ = &Server::completion_methods;
  if (changed) list_changed(ListKind::kPrompts);
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
  cancel_deferred(s);
  if (held_used_ != 0) send_held(&s);  // what is held for it will not be sent
  if (outgoing_ops_ != nullptr) outgoing_ops_->close(*this, s);
  for (Session** p = &sessions_; *p != nullptr; p = &(*p)->next_) {
    if (*p == &s) {
      *p = s.next_;
      break;
    }
  }
  s.server_ = nullptr;
  s.next_ = nullptr;
}

void Server::cancel_request(Session& s, Value request_id) {
  Id id;
  if (request_id.is_int()) id = Id::of(request_id.as_int().value());
  else if (request_id.is_string()) id = Id::of(request_id.as_string().value());
  else return;
  for (Deferred& d : deferred_)
    if (d.used && d.session == &s && d.id.id() == id) d.cancelled = true;
}

void Server::cancel_deferred(Session& s) {
  if (deferred_ops_ == nullptr) return;
  for (Deferred& d : deferred_)
    if (d.used && d.session == &s) d.cancelled = true;
}

void Server::close_outgoing(Session& s) {
  for (Outgoing& o : outgoing_) {
    if (!o.used || o.session != &s) continue;
    o.used = false;
    Response r;
    r.outcome = Response::Outcome::kClosed;
    r.session = &s;
    if (o.done) o.done(r, o.ctx);
  }
}

namespace {
// A notification that cannot go out (the channel is busy with another message, or closed) is
// counted in `dropped` (Server::notifications_dropped()).
bool open_or_count(Outbound& out, uint32_t& dropped) {
  if (out.open()) return true;
  ++dropped;
  return false;
}
}  // namespace

// The head of a held entry; its texts follow. Entries start aligned for it.
struct Server::HeldHead {
  Session* session;
  Resend resend;
  uint16_t size;   // the whole entry, padding included
  uint16_t a_len;
  uint16_t b_len;
  LogLevel level;  // or the list kind
  const char* text() const { return static_cast<const char*>(static_cast<const void*>(this + 1)); }
  StrView a() const { return StrView(text(), a_len); }
  StrView b() const { return StrView(text() + a_len, b_len); }
};

void Server::send_list_changed(Session& s, ListKind kind) {
  // Only to sessions whose initialize answer offered the capability (and listChanged).
  const bool offered = kind == ListKind::kTools       ? s.offers_tools_
                       : kind == ListKind::kResources ? s.offers_resources_
                                                      : s.offers_prompts_;
  if (!s.initialized() || !offered) return;
  if (must_hold(s)) {
    (void)hold(s, [](Server& sv, Session& s2, const HeldHead& h) {
      sv.send_list_changed(s2, static_cast<ListKind>(h.level));
    }, static_cast<LogLevel>(kind), StrView());
    return;
  }
  const char* method = kind == ListKind::kTools       ? "notifications/tools/list_changed"
                       : kind == ListKind::kResources ? "notifications/resources/list_changed"
                                                      : "notifications/prompts/list_changed";
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, Id{}, false});
  if (!open_or_count(out, notifications_dropped_)) return;
  jsonrpc::write_notification(out.w(), method);
}

void Server::list_changed(ListKind kind) {
  for (Session* s = sessions_; s != nullptr; s = s->next_) send_list_changed(*s, kind);
}

Status Server::notify_progress(Session& s, const Id& token, double done, double total,
                               StrView msg, const Id& related) {
  // Not held: a later report supersedes it, and none may follow the request's answer. What is
  // held goes first.
  send_held_now();
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, related, false});
  if (!open_or_count(out, notifications_dropped_)) return Status::kInvalidState;
  json::Writer& w = out.w();
  jsonrpc::begin_notification(w, "notifications/progress");
  w.begin_object();
  w.key("progressToken");
  jsonrpc::write_id(w, token);
  w.member_double("progress", done);
  if (total >= 0) w.member_double("total", total);
  if (!msg.empty() && at_least(s, Version::k2025_03_26)) w.member_str("message", msg);
  w.end_object();
  jsonrpc::end_message(w);
  return out.close();
}

Status Server::send_log(Session& s, LogLevel level, StrView message, StrView logger,
                        const Id& related) {
  if (!s.wants_log(level)) return Status::kOk;
  if (must_hold(s)) {
    return hold(s, [](Server& sv, Session& s2, const HeldHead& h) {
      if (s2.initialized()) (void)sv.send_log(s2, h.level, h.b(), h.a(), Id{});
    }, level, logger, message);
  }
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, related, false});
  if (!open_or_count(out, notifications_dropped_)) return Status::kInvalidState;
  json::Writer& w = out.w();
  jsonrpc::begin_notification(w, "notifications/message");
  w.begin_object();
  w.member_str("level", log_level_str(level));
  if (!logger.empty()) w.member_str("logger", logger);
  w.member_str("data", message);
  w.end_object();
  jsonrpc::end_message(w);
  return out.close();
}

void Server::log(LogLevel level, StrView message, StrView logger) {
  for (Session* s = sessions_; s != nullptr; s = s->next_)
    if (s->initialized()) (void)send_log(*s, level, message, logger, s == current_session_ ? current_ : Id{});
}

namespace {
bool subscribed(uint32_t h, const uint32_t (&subs)[EMCP_MAX_SUBSCRIPTIONS]) {
  bool found = false;
  for (uint32_t x : subs) found = found || x == h;
  return found;
}
}  // namespace

void Server::send_updated(Session& s, StrView uri) {
  if (!subscribed(uri_hash(uri), s.subs_)) return;
  if (must_hold(s)) {
    (void)hold(s, [](Server& sv, Session& s2, const HeldHead& h) {
      sv.send_updated(s2, h.a());  // if still subscribed
    }, LogLevel::kDebug, uri);
    return;
  }
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, Id{}, false});
  if (!open_or_count(out, notifications_dropped_)) return;
  json::Writer& w = out.w();
  jsonrpc::begin_notification(w, "notifications/resources/updated");
  w.begin_object();
  w.member_str("uri", uri);
  w.end_object();
  jsonrpc::end_message(w);
}

void Server::resource_updated(StrView uri) {
  for (Session* s = sessions_; s != nullptr; s = s->next_) send_updated(*s, uri);
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

// ---- Input --------------------------------------------------------------------------------------

void Server::handle(Session& s, const jsonrpc::Decoded& d) {
  handle_input(s, d);
  send_held_now();  // what the answer kept waiting
}

void Server::handle_input(Session& s, const jsonrpc::Decoded& d) {
  attach(s);
  if (!d.batch) {
    const Message& m = *d.first;
    Reply r(s, m.id, nullptr);
    handle_message(s, m, r);
    return;
  }
  // Batches exist in revision 2025-03-26 only.
  if (!s.initialized() || s.version() != Version::k2025_03_26) {
    Reply r(s, Id::null(), nullptr);
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
    Reply r(s, m->id, &batch);
    if (m->kind == Kind::kRequest && m->method == "initialize") {
      r.reject(ErrorCode::kInvalidRequest, {"initialize must not be part of a batch"});
      continue;
    }
    handle_message(s, *m, r);
  }
  batch.finish();
  send_held_now();  // before the callbacks below send anything
  // Responses to the server's own requests run their callbacks once the batch's answer is
  // out: a callback may answer a deferred call or send a request, which needs the channel.
  for (const Message* m = d.first; m != nullptr; m = m->next)
    if ((m->kind == Kind::kResponse || m->kind == Kind::kErrorResponse) && outgoing_ops_ != nullptr)
      outgoing_ops_->response(*this, s, *m);
}

void Server::handle_message(Session& s, const Message& m, Reply& r) {
  switch (m.kind) {
    case Kind::kInvalid:
      r.invalid(m);
      return;
    case Kind::kRequest:
      on_request(s, m, r);
      return;
    case Kind::kNotification:
      r.suppress();
      on_notification(s, m);
      return;
    case Kind::kResponse:
    case Kind::kErrorResponse:
      r.suppress();
      if (outgoing_ops_ != nullptr) outgoing_ops_->response(*this, s, m);
      return;
  }
}

void Server::on_request(Session& s, const Message& m, Reply& r) {
  const CurrentRequest current(*this, s, m.id);
  const StrView method = m.method;
  if (method == "initialize") return on_initialize(s, m, r);
  if (method == "ping") {
    json::Writer& w = r.result();
    w.begin_object();
    w.end_object();
    return r.end();
  }
  if (!s.initialized()) {
    r.reject(ErrorCode::kInvalidRequest,
            {"the session is not initialized; send initialize first"});
    return;
  }
  if (s.offers_tools_) {
    if (method == "tools/list") return on_tools_list(s, m, r);
    if (method == "tools/call") return on_tools_call(s, m, r);
  }
  // Resources, prompts and completion are reached through pointers that set_resources(),
  // set_templates() and set_prompts() install: a firmware that never calls them links none of
  // their code (--gc-sections).
  if (s.offers_resources_ && resource_methods_ != nullptr && resource_methods_(*this, s, m, r)) return;
  if (s.offers_prompts_ && prompt_methods_ != nullptr && prompt_methods_(*this, s, m, r)) return;
  // completion/complete existed before the `completions` capability (2024-11-05).
  if ((s.offers_prompts_ || s.offers_resources_) && completion_methods_ != nullptr &&
      method == "completion/complete")
    return (void)completion_methods_(*this, s, m, r);
  if (s.offers_logging_ && method == "logging/setLevel") return on_set_level(s, m, r);
  r.reject(ErrorCode::kMethodNotFound, {"", method});
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
  if (elicitation.is_object() && v >= Version::k2025_06_18) {
    const bool form = elicitation["form"].is_object();
    const bool url = elicitation["url"].is_object();
    s.caps_.elicitation_form = form || !url;  // {} means form (2025-06-18 style)
    s.caps_.elicitation_url = url && v >= Version::k2025_11_25;
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
  s.offers_completions_ = (has_prompts_ || has_resources_) && v >= Version::k2025_03_26;

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
  if (info_.title && v >= Version::k2025_06_18) w.member_str("title", info_.title);
  if (v >= Version::k2025_11_25) {
    if (info_.description) w.member_str("description", info_.description);
    if (info_.website_url) w.member_str("websiteUrl", info_.website_url);
    info_.icons.write_to(w);
  }
  w.end_object();
  if (info_.instructions) w.member_str("instructions", info_.instructions);
  w.end_object();
  r.end();
  if (had_outgoing && outgoing_ops_ != nullptr) outgoing_ops_->close(*this, s);
}

void Server::on_notification(Session& s, const Message& m) {
  if (m.method == "notifications/initialized") {
    if (s.initialized()) s.state_ = Session::kReady;
    return;
  }
  // Only a deferred call can still be running when its cancellation arrives (synchronous
  // ones are answered before the next message is read).
  if (m.method == "notifications/cancelled") {
    if (deferred_ops_ != nullptr) deferred_ops_->cancel_request(*this, s, m.params["requestId"]);
    return;
  }
  if (notification_methods_ != nullptr && notification_methods_(*this, s, m)) return;
  // notifications/progress and unknown notifications need no answer; MCP says to ignore what
  // one does not understand.
}

bool Server::roots_notification(Server& sv, Session& s, const Message& m) {
  if (m.method != "notifications/roots/list_changed") return false;
  // Only once notifications/initialized came: before, list_roots() could not ask yet.
  if (sv.roots_changed_ != nullptr && s.ready()) sv.roots_changed_(s, sv.roots_changed_ctx_);
  return true;
}

void Server::on_response(Session& s, const Message& m) {
  if (m.id.type != Id::Type::kInt) return;  // not one of ours (we send integer ids)
  for (Outgoing& o : outgoing_) {
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

bool Server::page_start(const Message& m, Reply& r, size_t total, size_t* start) {
  *start = 0;
  const Value c = m.params["cursor"];
  if (!c.exists() || c.is_null()) return true;
  const Result<StrView> cs = c.as_string();
  // "p" and at most 9 digits: no overflow even with a 32-bit size_t.
  bool ok = cs.ok() && cs.value().size() >= 2 && cs.value().size() <= 10 && cs.value()[0] == 'p';
  size_t n = 0;
  if (ok) {
    for (size_t i = 1; i < cs.value().size() && ok; ++i) {
      const char ch = cs.value()[i];
      ok = ch >= '0' && ch <= '9';
      n = n * 10 + static_cast<size_t>(ch - '0');
    }
  }
  if (!ok || n > total) {
    r.reject(ErrorCode::kInvalidParams, {"unknown cursor"});
    return false;
  }
  *start = n;
  return true;
}

namespace {
// {"<key>":[ ... the caller writes entries ... then end_page()
json::Writer& begin_page(Reply& r, const char* key) {
  json::Writer& w = r.result();
  w.begin_object();
  w.key(key);
  w.begin_array();
  return w;
}

void end_page(Reply& r, json::Writer& w, size_t next, size_t total) {
  w.end_array();
  if (next < total) {
    char buf[24];
    buf[0] = 'p';
    const size_t n = json::format_uint64(next, buf + 1);
    w.member_str("nextCursor", StrView(buf, n + 1));
  }
  w.end_object();
  r.end();
}
}  // namespace

void Server::write_tool(json::Writer& w, const Tool& t, Version v) {
  w.begin_object();
  w.member_str("name", t.name);
  if (t.title && v >= Version::k2025_06_18) w.member_str("title", t.title);
  if (t.description) w.member_str("description", t.description);
  w.key("inputSchema");
  if (t.input_schema_json) w.raw(t.input_schema_json);
  else if (t.schema != nullptr) t.schema->write(w, t.params);
  else w.raw(R"({"type":"object","properties":{}})");
  if (v >= Version::k2025_06_18) {
    if (t.output_schema_json) {
      w.key("outputSchema");
      w.raw(t.output_schema_json);
    } else if (!t.output.empty() && t.schema != nullptr) {
      w.key("outputSchema");
      t.schema->write(w, t.output);
    }
  }
  const bool annotated = t.annotation_title || t.read_only_hint != Hint::kUnset ||
                         t.destructive_hint != Hint::kUnset || t.idempotent_hint != Hint::kUnset ||
                         t.open_world_hint != Hint::kUnset;
  if (annotated && v >= Version::k2025_03_26) {
    w.key("annotations");
    w.begin_object();
    if (t.annotation_title) w.member_str("title", t.annotation_title);
    write_hint(w, "readOnlyHint", t.read_only_hint);
    write_hint(w, "destructiveHint", t.destructive_hint);
    write_hint(w, "idempotentHint", t.idempotent_hint);
    write_hint(w, "openWorldHint", t.open_world_hint);
    w.end_object();
  }
  if (v >= Version::k2025_11_25) t.icons.write_to(w);
  w.end_object();
}

void Server::on_tools_list(Session& s, const Message& m, Reply& r) {
  size_t start = 0;
  if (!page_start(m, r, tools_.size(), &start)) return;
  json::Writer& w = begin_page(r, "tools");
  size_t i = start;
  for (; i < tools_.size() && i < start + page_size_; ++i) write_tool(w, tools_[i], s.version());
  end_page(r, w, i, tools_.size());
}

void Server::on_tools_call(Session& s, const Message& m, Reply& r) {
  const Result<StrView> name = m.params["name"].as_string();
  if (!name.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"name must be a string"});
    return;
  }
  const Tool* tool = nullptr;
  for (const Tool& t : tools_)
    if (name.value().equals(t.name)) tool = &t;
  if (tool == nullptr) {
    r.reject(ErrorCode::kInvalidParams, {"unknown tool \"", name.value(), "\""});
    return;
  }
  const Value args = m.params["arguments"];
  if (args.exists() && !args.is_object()) {
    r.reject(ErrorCode::kInvalidParams, {"arguments must be an object"});
    return;
  }
  // A tool without a Param table declares no arguments: any object is accepted.
  if (!tool->input_schema_json && tool->schema != nullptr &&
      !tool->schema->check_arguments(args, tool->params, r))
    return;
  ToolCall call;
  call.progress_value_ = m.params["_meta"]["progressToken"];
  call.server_ = this;
  call.session_ = &s;
  call.tool_ = tool;
  call.args_ = args;
  call.reply_ = &r;
  run_tool(call, r);
}

namespace {
bool check_arguments(Value args, Span<const Param> params, Reply& r) {
  SchemaError e;
  if (validate(args, params, &e)) return true;
  if (e.name.empty()) {
    r.reject(ErrorCode::kInvalidParams, {"arguments ", e.reason});
  } else if (e.index >= 0) {
    r.reject(ErrorCode::kInvalidParams, {"argument \"", e.name, "\" item ",
                                        static_cast<long long>(e.index), " ", e.reason});
  } else if (!e.parent.empty() && !(e.parent == e.name)) {
    r.reject(ErrorCode::kInvalidParams,
            {"argument \"", e.parent, ".", e.name, "\" ", e.reason});
  } else {
    r.reject(ErrorCode::kInvalidParams, {"argument \"", e.name, "\" ", e.reason});
  }
  return false;
}
}  // namespace

const ParamSchema kParamSchema = {&write_object_schema, &check_arguments};

void Server::run_tool(ToolCall& call, Reply& r) {
  (void)r;
  if (call.tool_->handler != nullptr) call.tool_->handler(call);
  call.finish();
}

void Server::on_resources_list(Session& s, const Message& m, Reply& r) {
  size_t start = 0;
  if (!page_start(m, r, resources_.size(), &start)) return;
  json::Writer& w = begin_page(r, "resources");
  size_t i = start;
  const Version v = s.version();
  for (; i < resources_.size() && i < start + page_size_; ++i) {
    const Resource& res = resources_[i];
    w.begin_object();
    w.member_str("uri", res.uri);
    w.member_str("name", res.name);
    if (res.title && v >= Version::k2025_06_18) w.member_str("title", res.title);
    if (res.description) w.member_str("description", res.description);
    if (res.mime_type) w.member_str("mimeType", res.mime_type);
    if (res.size >= 0) w.member_int("size", res.size);
    write_annotations(w, res.annotations, v);
    if (v >= Version::k2025_11_25) res.icons.write_to(w);
    w.end_object();
  }
  end_page(r, w, i, resources_.size());
}

void Server::on_templates_list(Session& s, const Message& m, Reply& r) {
  size_t start = 0;
  if (!page_start(m, r, templates_.size(), &start)) return;
  json::Writer& w = begin_page(r, "resourceTemplates");
  size_t i = start;
  const Version v = s.version();
  for (; i < templates_.size() && i < start + page_size_; ++i) {
    const ResourceTemplate& t = templates_[i];
    w.begin_object();
    w.member_str("uriTemplate", t.uri_template);
    w.member_str("name", t.name);
    if (t.title && v >= Version::k2025_06_18) w.member_str("title", t.title);
    if (t.description) w.member_str("description", t.description);
    if (t.mime_type) w.member_str("mimeType", t.mime_type);
    write_annotations(w, t.annotations, v);
    if (v >= Version::k2025_11_25) t.icons.write_to(w);
    w.end_object();
  }
  end_page(r, w, i, templates_.size());
}

void Server::on_resources_read(Session& s, const Message& m, Reply& r) {
  const Result<StrView> uri = m.params["uri"].as_string();
  if (!uri.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"uri must be a string"});
    return;
  }
  ResourceRead read;
  read.server_ = this;
  read.session_ = &s;
  read.reply_ = &r;
  read.uri_ = uri.value();
  ReadFn fn = nullptr;
  for (const Resource& res : resources_) {
    if (uri.value().equals(res.uri)) {
      fn = res.read;
      read.mime_ = res.mime_type;
      read.user_ = res.user;
      break;
    }
  }
  if (fn == nullptr) {
    for (const ResourceTemplate& t : templates_) {
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
  if (fn != nullptr) fn(read);
  if (fn == nullptr || read.missing_) {
    json::Writer& w = r.error_with_data(ErrorCode::kResourceNotFound,
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
  w.end_object();
  r.end();
}

void Server::on_subscribe(Session& s, const Message& m, Reply& r, bool on) {
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
  json::Writer& w = r.result();
  w.begin_object();
  w.end_object();
  r.end();
}

void Server::on_prompts_list(Session& s, const Message& m, Reply& r) {
  size_t start = 0;
  if (!page_start(m, r, prompts_.size(), &start)) return;
  json::Writer& w = begin_page(r, "prompts");
  size_t i = start;
  const Version v = s.version();
  for (; i < prompts_.size() && i < start + page_size_; ++i) {
    const Prompt& p = prompts_[i];
    w.begin_object();
    w.member_str("name", p.name);
    if (p.title && v >= Version::k2025_06_18) w.member_str("title", p.title);
    if (p.description) w.member_str("description", p.description);
    if (!p.args.empty()) {
      w.key("arguments");
      w.begin_array();
      for (const PromptArg& a : p.args) {
        w.begin_object();
        w.member_str("name", a.name);
        if (a.title && v >= Version::k2025_06_18) w.member_str("title", a.title);
        if (a.description) w.member_str("description", a.description);
        if (a.required) w.member_bool("required", true);
        w.end_object();
      }
      w.end_array();
    }
    if (v >= Version::k2025_11_25) p.icons.write_to(w);
    w.end_object();
  }
  end_page(r, w, i, prompts_.size());
}

void Server::on_prompts_get(Session& s, const Message& m, Reply& r) {
  const Result<StrView> name = m.params["name"].as_string();
  if (!name.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"name must be a string"});
    return;
  }
  const Prompt* prompt = nullptr;
  for (const Prompt& p : prompts_)
    if (name.value().equals(p.name)) prompt = &p;
  if (prompt == nullptr) {
    r.reject(ErrorCode::kInvalidParams, {"unknown prompt \"", name.value(), "\""});
    return;
  }
  const Value args = m.params["arguments"];
  if (args.exists() && !args.is_object()) {
    r.reject(ErrorCode::kInvalidParams, {"arguments must be an object"});
    return;
  }
  for (const PromptArg& a : prompt->args) {
    const Value v = args[a.name];
    if (!v.exists()) {
      if (a.required) {
        r.reject(ErrorCode::kInvalidParams,
                {"argument \"", a.name, "\" of prompt \"", prompt->name, "\" is required"});
        return;
      }
    } else if (!v.is_string()) {
      r.reject(ErrorCode::kInvalidParams, {"argument \"", a.name, "\" must be a string"});
      return;
    }
  }
  PromptGet get;
  get.server_ = this;
  get.session_ = &s;
  get.prompt_ = prompt;
  get.args_ = args;
  get.reply_ = &r;
  if (prompt->get) prompt->get(get);
  if (get.failed_) return;
  json::Writer& w = r.result();
  if (!get.started_) {
    w.begin_object();
    if (prompt->description) w.member_str("description", prompt->description);
    w.key("messages");
    w.begin_array();
  }
  get.end_message();
  w.end_array();
  w.end_object();
  r.end();
}

void Server::on_complete(Session& s, const Message& m, Reply& r) {
  const Value ref = m.params["ref"];
  const Value arg = m.params["argument"];
  const Result<StrView> type = ref["type"].as_string();
  const Result<StrView> arg_name = arg["name"].as_string();
  const Result<StrView> arg_value = arg["value"].as_string();
  if (!type.ok() || !arg_name.ok() || !arg_value.ok()) {
    r.reject(ErrorCode::kInvalidParams,
            {"ref.type, argument.name and argument.value must be strings"});
    return;
  }
  CompleteFn fn = nullptr;
  if (type.value() == "ref/prompt") {
    const StrView name = ref["name"].as_string().value_or(StrView());
    const Prompt* prompt = nullptr;
    for (const Prompt& p : prompts_)
      if (name.equals(p.name)) prompt = &p;
    if (prompt == nullptr) {
      r.reject(ErrorCode::kInvalidParams, {"unknown prompt \"", name, "\""});
      return;
    }
    for (const PromptArg& a : prompt->args)
      if (arg_name.value().equals(a.name)) fn = a.complete;
  } else if (type.value() == "ref/resource") {
    const StrView uri = ref["uri"].as_string().value_or(StrView());
    const ResourceTemplate* tmpl = nullptr;
    for (const ResourceTemplate& t : templates_)
      if (uri.equals(t.uri_template)) tmpl = &t;
    if (tmpl == nullptr) {
      r.reject(ErrorCode::kInvalidParams, {"unknown resource template \"", uri, "\""});
      return;
    }
    fn = tmpl->complete;
  } else {
    r.reject(ErrorCode::kInvalidParams, {"unknown reference type \"", type.value(), "\""});
    return;
  }
  json::Writer& w = r.result();
  w.begin_object();
  w.key("completion");
  w.begin_object();
  w.key("values");
  w.begin_array();
  Completion c;
  c.w_ = &w;
  c.name_ = arg_name.value();
  c.prefix_ = arg_value.value();
  c.context_ = s.version() >= Version::k2025_06_18 ? m.params["context"]["arguments"] : Value();
  if (fn) fn(c);
  w.end_array();
  if (c.more_) w.member_bool("hasMore", true);
  w.end_object();
  w.end_object();
  r.end();
}

void Server::on_set_level(Session& s, const Message& m, Reply& r) {
  LogLevel level;
  const Result<StrView> name = m.params["level"].as_string();
  if (!name.ok() || !parse_log_level(name.value(), &level)) {
    r.reject(ErrorCode::kInvalidParams,
            {"level must be one of debug, info, notice, warning, error, "
             "critical, alert, emergency"});
    return;
  }
  s.log_level_ = level;
  json::Writer& w = r.result();
  w.begin_object();
  w.end_object();
  r.end();
}

// ---- Deferred calls -----------------------------------------------------------------------------

bool Server::is_deferred(const Session& s, const Id& id) const {
  for (const Deferred& d : deferred_)
    if (d.used && !d.cancelled && d.session == &s && d.id.id() == id) return true;
  return false;
}

size_t Server::deferred_ids(const Session& s, Id* out, size_t cap) const {
  size_t n = 0;
  for (const Deferred& d : deferred_)
    if (d.used && !d.cancelled && d.session == &s && n < cap) out[n++] = d.id.id();
  return n;
}

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

Status Server::progress(Pending p, double done, double total, StrView message) {
  Deferred* d = deferred(p);
  if (d == nullptr) return Status::kNotFound;
  if (d->cancelled) return Status::kClosed;
  if (!d->progress.present()) return Status::kNotFound;
  return notify_progress(*d->session, d->progress.id(), done, total, message, d->id.id());
}

Status Server::complete(Pending p, FinishFn fn, void* ctx) {
  Deferred* d = deferred(p);
  if (d == nullptr) return Status::kNotFound;
  if (d->cancelled) {
    d->used = false;  // a cancelled request is never answered
    return Status::kClosed;
  }
  Session& s = *d->session;
  if (s.open_) return Status::kWouldBlock;  // another message is being written: try later
  // The slot is freed before `fn` runs (fn may defer again and reuse it): keep a copy of the id,
  // which the answer must carry.
  const Token token = d->id;
  const Id id = token.id();
  Reply r(s, id, nullptr);
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

// ---- Requests to the client ---------------------------------------------------------------------

Status Server::send_request(Session& s, StrView method, ParamsFn params, const void* params_ctx,
                            ResponseFn done, void* done_ctx, uint32_t timeout_ms) {
  Outgoing* slot = nullptr;
  for (Outgoing& o : outgoing_)
    if (!o.used && slot == nullptr) slot = &o;
  if (slot == nullptr) return Status::kNoSpace;
  if (s.open_) return Status::kInvalidState;
  send_held_now();  // what is held goes first
  // MCP: no requests but ping before the client said notifications/initialized.
  if (!s.ready() && !(method == "ping")) return Status::kInvalidState;
  Outbound out(s, OutMessage{OutMessage::Kind::kRequest, &s == current_session_ ? current_ : Id{}, false});
  if (!out.open()) return Status::kClosed;
  const int64_t id = next_request_id_++;
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
  outgoing_ops_ = &kOutgoingOps;
  jsonrpc::Decoder::keep_lost_responses();  // an answer too big to keep still ends its request
  slot->used = true;
  slot->session = &s;
  slot->done = done;
  slot->ctx = done_ctx;
  slot->id = id;
  slot->deadline = timeout_ms != 0 ? now() + timeout_ms : 0;
  return Status::kOk;
}

Status Server::request(Session& s, StrView method, ParamsFn params, const void* params_ctx,
                       ResponseFn done, void* done_ctx, uint32_t timeout_ms) {
  return send_request(s, method, params, params_ctx, done, done_ctx, timeout_ms);
}

Status Server::sample(Session& s, ParamsFn params, const void* params_ctx, ResponseFn done,
                      void* ctx, uint32_t timeout_ms) {
  if (!s.client().sampling) return Status::kNotFound;
  return send_request(s, "sampling/createMessage", params, params_ctx, done, ctx, timeout_ms);
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

Status Server::elicit(Session& s, StrView message, Span<const Param> schema, ResponseFn done,
                      void* ctx, uint32_t timeout_ms) {
  if (!s.client().elicitation_form) return Status::kNotFound;
  // requestedSchema allows flat primitive properties only (MCP PrimitiveSchemaDefinition); from
  // 2025-11-25 on also multi-select enums: arrays of enum strings (SEP-1330).
  const bool multi_select = s.version() >= Version::k2025_11_25;
  for (const Param& p : schema) {
    if (p.type == ParamType::kObject) return Status::kInvalidArgument;
    if (p.type == ParamType::kArray &&
        !(multi_select && (p.raw_json != nullptr ||
                           (p.items != nullptr && p.items->type == ParamType::kString && p.items->enum_count != 0))))
      return Status::kInvalidArgument;
  }
  const ElicitForm f{message, schema, s.version() >= Version::k2025_11_25};
  return send_request(s, "elicitation/create", &write_elicit_form, &f, done, ctx, timeout_ms);
}

Status Server::elicit_url(Session& s, StrView message, StrView url, StrView elicitation_id,
                          ResponseFn done, void* ctx, uint32_t timeout_ms) {
  if (!s.client().elicitation_url) return Status::kNotFound;
  const ElicitUrl u{message, url, elicitation_id};
  return send_request(s, "elicitation/create", &write_elicit_url, &u, done, ctx, timeout_ms);
}

Status Server::list_roots(Session& s, ResponseFn done, void* ctx, uint32_t timeout_ms) {
  if (!s.client().roots) return Status::kNotFound;
  return send_request(s, "roots/list", nullptr, nullptr, done, ctx, timeout_ms);
}

Status Server::ping(Session& s, ResponseFn done, void* ctx, uint32_t timeout_ms) {
  return send_request(s, "ping", nullptr, nullptr, done, ctx, timeout_ms);
}

void write_icons(json::Writer& w, Span<const Icon> icons) {
  if (icons.empty()) return;
  w.key("icons");
  w.begin_array();
  for (const Icon& i : icons) {
    w.begin_object();
    w.member_str("src", i.src);
    if (i.mime_type) w.member_str("mimeType", i.mime_type);
    if (i.sizes) {
      w.key("sizes");
      w.begin_array();
      w.string(i.sizes);
      w.end_array();
    }
    if (i.theme) w.member_str("theme", i.theme);
    w.end_object();
  }
  w.end_array();
}

const Server::DeferredOps Server::kDeferredOps = {
    [](Server& sv, Session& s, Value id) { sv.cancel_request(s, id); },
};

const Server::OutgoingOps Server::kOutgoingOps = {
    [](Server& sv, Session& s, const Message& m) { sv.on_response(s, m); },
    [](Server& sv, Session& s) { sv.close_outgoing(s); },
    [](Server& sv) { sv.expire_outgoing(); },
};

void Server::poll() {
  if (outgoing_ops_ != nullptr) outgoing_ops_->expire(*this);
  send_held_now();
}

void Server::expire_outgoing() {
  const uint64_t now = this->now();
  for (Outgoing& o : outgoing_) {
    if (!o.used || o.deadline == 0 || now < o.deadline) continue;
    Session& s = *o.session;
    if (s.open_) continue;  // the channel is busy; try on the next poll
    o.used = false;
    send_held_now();  // what is held goes first
    {
      // Tell the client we stopped waiting (MCP: a sender that times out SHOULD cancel).
      Outbound out(s, OutMessage{OutMessage::Kind::kNotification, Id{}, false});
      if (open_or_count(out, notifications_dropped_)) {
        json::Writer& w = out.w();
        jsonrpc::begin_notification(w, "notifications/cancelled");
        w.begin_object();
        w.member_int("requestId", o.id);
        w.member_str("reason", "timeout");
        w.end_object();
        jsonrpc::end_message(w);
      }
    }
    Response r;
    r.outcome = Response::Outcome::kTimeout;
    r.session = &s;
    if (o.done) o.done(r, o.ctx);
  }
}

}  // namespace mcp
EMCP_NS_END

EMCP_NS_BEGIN
namespace mcp {

const char* Server::scope_of(const jsonrpc::Message& m) const {
  if (m.kind != jsonrpc::Kind::kRequest) return nullptr;
  if (m.method == "tools/call") {
    const Result<StrView> name = m.params["name"].as_string();
    if (!name.ok()) return nullptr;
    for (const Tool& t : tools_)
      if (name.value().equals(t.name)) return t.scope;
    return nullptr;
  }
  if (m.method == "prompts/get") {
    const Result<StrView> name = m.params["name"].as_string();
    if (!name.ok()) return nullptr;
    for (const Prompt& p : prompts_)
      if (name.value().equals(p.name)) return p.scope;
    return nullptr;
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
