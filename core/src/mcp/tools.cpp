// Tools: tools/list, tools/call, argument validation and a call's result (ToolCall).
#include "tasks_internal.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

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


void write_hint(json::Writer& w, const char* key, Hint h) {
  if (h != Hint::kUnset) w.member_bool(key, h == Hint::kTrue);
}

}  // namespace

// ---- ToolCall -----------------------------------------------------------------------------------

// The default the tool declares for its property `name` (nullptr: none of `kind`).
const Param* ToolCall::declared_default(StrView name, Param::DefaultKind kind) const {
  for (const Param& p : tool_->params)
    if (p.default_kind == kind && name == StrView(p.name)) return &p;
  return nullptr;
}
int64_t ToolCall::declared_integer(StrView name) const {
  const Param* p = declared_default(name, Param::DefaultKind::kInteger);
  return p != nullptr ? p->default_value.integer : 0;
}

StrView ToolCall::str(StrView name) const {
  const Param* p = declared_default(name, Param::DefaultKind::kText);
  return str(name, p != nullptr ? StrView(p->default_text) : StrView());
}
int64_t ToolCall::integer(StrView name) const { return integer(name, declared_integer(name)); }
double ToolCall::number(StrView name) const {
  const Param* p = declared_default(name, Param::DefaultKind::kNumber);
  return number(name, p != nullptr ? p->default_value.number : 0);
}
bool ToolCall::boolean(StrView name) const { return boolean(name, declared_integer(name) != 0); }
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

const Peer& ToolCall::peer() const { return reply_->peer(); }

bool ToolCall::begin_result() {
  if (phase_ != kIdle) return phase_ == kContent;
  if (inputs_.owns_answer()) return false;  // the answer is not a call result
  json::Writer& w = reply_->result_object();
  w.key("content");
  w.begin_array();
  content_ = ContentWriter(w, reply_->peer().version);
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
  if (!supports(reply_->peer().version, Feature::kStructuredContent)) return;  // no structuredContent before
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

void ToolCall::error(ErrorCode code, StrView message) {
  if (phase_ == kIdle && !inputs_.owns_answer()) {
    reply_->error(code, {message});
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
  return ServerCode::notify_progress(*server_, *session_, reply_->peer().version, token, done, total, message,
                                  reply_->id());
}

Status ToolCall::log(LogLevel level, StrView message, StrView logger) {
  // After the result started the channel is busy with it: send_log() holds the message (a
  // legacy peer's) or drops it (a modern one's).
  return ServerCode::send_log(*server_, *session_, reply_->peer(), level, message, logger, reply_->id());
}

Status ToolCall::close_stream(uint32_t retry_ms) {
  if (phase_ != kIdle) return Status::kInvalidState;  // the answer has started (or is deferred)
  const Channel& ch = session_->channel_;
  if (ch.end_stream == nullptr || session_->open_ || server_->current_session_ != session_)
    return Status::kInvalidState;
  return ch.end_stream(ch.ctx, server_->current_, retry_ms);
}

void ToolCall::finish() {
  if (phase_ == kIdle && inputs_.settle()) {
    phase_ = kDone;
    return;
  }
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

void ServerCode::write_tool(Server& sv, json::Writer& w, const Tool& t, Version v) {
  w.begin_object();
  w.member_str("name", t.name);
  if (t.title && supports(v, Feature::kTitles)) w.member_str("title", t.title);
  if (t.description) w.member_str("description", t.description);
  w.key("inputSchema");
  if (t.input_schema_json) w.raw(t.input_schema_json);
  else if (t.schema != nullptr) t.schema->write(w, t.params);
  else w.raw(R"({"type":"object","properties":{}})");
  if (supports(v, Feature::kStructuredContent)) {
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
  if (annotated && supports(v, Feature::kToolAnnotations)) {
    w.key("annotations");
    w.begin_object();
    if (t.annotation_title) w.member_str("title", t.annotation_title);
    write_hint(w, "readOnlyHint", t.read_only_hint);
    write_hint(w, "destructiveHint", t.destructive_hint);
    write_hint(w, "idempotentHint", t.idempotent_hint);
    write_hint(w, "openWorldHint", t.open_world_hint);
    w.end_object();
  }
  if (supports(v, Feature::kIcons)) t.icons.write_to(w);
  // 2025-11-25: whether a client may (must) call it with params.task (absent: "forbidden").
  if (EMCP_LEGACY_ERA && sv.tasks_ != nullptr) TaskCode::ops(sv)->legacy->execution(w, t, v);
  w.end_object();
}

void ServerCode::on_tools_list(Server& sv, Session& /*s*/, const Message& m, Reply& r) {
  size_t start = 0;
  if (!page_start(m, r, sv.tools_.size(), &start)) return;
  json::Writer& w = begin_page(r, "tools");
  size_t i = start;
  for (; i < sv.tools_.size() && i < start + sv.page_size_; ++i) write_tool(sv, w, sv.tools_[i], r.peer().version);
  end_page(r, w, i, sv.tools_.size());
}

const Tool* ServerCode::tool_to_call(Server& sv, const Message& m, Reply& r, Value* arguments) {
  const Result<StrView> name = m.params["name"].as_string();
  if (!name.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"name must be a string"});
    return nullptr;
  }
  const Tool* tool = tool_named(sv, name.value());
  if (tool == nullptr) {
    r.reject(ErrorCode::kInvalidParams, {"unknown tool \"", name.value(), "\""});
    return nullptr;
  }
  const Value args = *arguments = m.params["arguments"];
  if (args.exists() && !args.is_object()) {
    r.reject(ErrorCode::kInvalidParams, {"arguments must be an object"});
    return nullptr;
  }
  // A tool without a Param table declares no arguments: any object is accepted.
  if (!tool->input_schema_json && tool->schema != nullptr &&
      !tool->schema->check_arguments(args, tool->params, r))
    return nullptr;
  return tool;
}

void ServerCode::on_tools_call(Server& sv, Session& s, const Message& m, Reply& r) {
  Value args;
  const Tool* tool = tool_to_call(sv, m, r, &args);
  if (tool == nullptr) return;
  ToolCall call;
  call.progress_value_ = m.params["_meta"]["progressToken"];
  call.server_ = &sv;
  call.session_ = &s;
  call.tool_ = tool;
  call.args_ = args;
  call.reply_ = &r;
  if (!call.inputs_.begin(sv, r, m)) return;  // inputResponses or requestState refused
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

void ServerCode::run_tool(ToolCall& call, Reply& r) {
  (void)r;
  if (call.tool_->handler != nullptr) call.tool_->handler(call);
  call.finish();
}

}  // namespace mcp
EMCP_NS_END
