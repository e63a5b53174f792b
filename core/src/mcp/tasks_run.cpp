// MCP tasks, a task's run: the completion of a deferred tools/call that became a task, its
// answer captured into the slot (completed, failed, input_required), tasks/update's answers
// running it again, and how a call becomes a task (TaskCode::defer) and completes.
#include "tasks_internal.h"

#include <string.h>

#include "emcp/json/reader.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr size_t kEnvelope = 136;  // StaticTaskStore's room for the captured answer's envelope

// A task's channel: only the answer goes into its buffer (notifications are refused and counted).
json::Sink* capture_open(void* ctx, const OutMessage& m) {
  return m.kind == OutMessage::Kind::kResponse ? static_cast<json::Sink*>(ctx) : nullptr;
}
Status capture_close(void*) { return Status::kOk; }

bool starts(StrView s, const char* prefix, StrView* rest) {
  const size_t n = strlen(prefix);
  if (s.size() < n || memcmp(s.data(), prefix, n) != 0) return false;
  *rest = StrView(s.data() + n, s.size() - n);
  return true;
}

bool ends(StrView s, const char* suffix) {
  const size_t n = strlen(suffix);
  return s.size() >= n && memcmp(s.data() + s.size() - n, suffix, n) == 0;
}

}  // namespace

// ---- Running a task's completion ----------------------------------------------------------------

void TaskCode::run(Server& sv, TaskSlot& t, Value answers, const Value* args) {
  TaskStore& st = *sv.tasks_;
  st.running_ = static_cast<int>(&t - st.slots_);
  json::BufferSink sink(t.buf, t.cap);
  Channel ch;
  ch.open = &capture_open;
  ch.close = &capture_close;
  ch.ctx = &sink;
  const bool handler = args != nullptr;  // the tool's handler, not a completion
  const Value call_args = handler ? *args : Value();
  Value kept_args;  // the arguments the handler saw, stored with its questions
  {
    Session own(ch);  // never attached: the answer is the task's
    const Id id = Id::of(0);
    Reply r(own, t.peer, id, nullptr);
    ToolCall call;
    call.server_ = &sv;
    call.session_ = &own;
    call.tool_ = t.tool;
    call.reply_ = &r;
    call.args_ = call_args;
    call.inputs_.server_ = &sv;
    call.inputs_.reply_ = &r;
    call.inputs_.responses_ = answers;
    call.inputs_.method_ = "tools/call";
    call.inputs_.round_ = t.round;
    call.inputs_.in_task_ = true;
    call.inputs_.got_len_ = t.kept_len;
    if (t.kept_len != 0) memcpy(call.inputs_.got_, t.kept, t.kept_len);
    const CurrentRequest current(sv, own, id);
    if (handler) {
      if (t.tool->handler != nullptr) t.tool->handler(call);
    } else if (t.fn != nullptr) {
      t.fn(call, t.ctx);
    }
    // A task's input requests carry no requestState (SEP-2663): the task holds what it asked
    // and kept. (An ask installs the state's writer: it is set aside while the answer ends.)
    const FeatureOps* const state = FeatureOps::at(sv, FeatureOps::kStateSlot);
    sv.features_[FeatureOps::kStateSlot] = nullptr;
    if (call.phase_ != ToolCall::kDeferred) call.finish();
    r.end();
    sv.features_[FeatureOps::kStateSlot] = state;
    t.kept_len = call.inputs_.kept_len_;
    if (t.kept_len != 0) memcpy(t.kept, call.inputs_.kept_, t.kept_len);
    if (handler && call.phase_ != ToolCall::kDeferred) kept_args = call_args;
  }
  st.running_ = -1;
  t.answers_len = 0;
  t.args_len = 0;
  t.sent = 0;
  for (uint32_t& k : t.keys) k = 0;
  if (t.work.valid()) {  // deferred (again): more work to come
    t.text_len = 0;
    touch(sv, t, TaskSlot::kWorking);
    return;
  }
  const size_t limit = t.cap > kEnvelope ? t.cap - kEnvelope : t.cap;
  if (sink.status() != Status::kOk)
    return fail(sv, t, {"the tool's result is larger than the task's ", static_cast<long long>(limit),
                         " bytes (StaticTaskStore ResultBytes)"});
  // {"jsonrpc":"2.0","id":0,"result":{"resultType":"complete",...}} or ..."error":{...}}
  // (a 2025-11-25 task's: {"jsonrpc":"2.0","id":0,"result":{"content":...}}, or
  // "result":{"inputRequests":{...}} when it asked)
  StrView body;
  StrView text = sink.view();
  if (text.size() < 2 || !starts(text, R"({"jsonrpc":"2.0","id":0,")", &text))
    return fail(sv, t, {"the tool wrote no answer"});
  text = StrView(text.data(), text.size() - 1);  // the envelope's '}'
  uint8_t state = TaskSlot::kCompleted;
  char* out = t.buf;
  size_t n = 0;
  t.error_answer = false;
  if (starts(text, R"(error":)", &body)) {
    state = TaskSlot::kFailed;
    t.error_answer = true;
  } else if (starts(text, R"(result":{"resultType":"input_required","inputRequests":)", &body) ||
             starts(text, R"(result":{"inputRequests":)", &body)) {
    state = TaskSlot::kInputRequired;
    body = StrView(body.data(), body.size() - 1);  // the result's '}'
  } else if (starts(text, R"(result":{"resultType":"input_required")", &body) || text == R"(result":{})") {
    return fail(sv, t, {"the tool kept state without asking for input, which a task cannot carry"});
  } else if (starts(text, R"(result":{"resultType":"complete")", &body)) {
    out[n++] = '{';
    if (body.size() > 0 && body[0] == ',') body = StrView(body.data() + 1, body.size() - 1);
  } else if (!starts(text, R"(result":)", &body)) {
    return fail(sv, t, {"the tool wrote no answer"});
  }
  if (t.session != nullptr && state == TaskSlot::kCompleted) {
    // 2025-11-25: a result with isError fails the task (its tasks/result is still the result).
    if (ends(body, R"("isError":true})")) state = TaskSlot::kFailed;
    if (body.size() < 2 || !task_with_related_meta(t, StrView(body.data() + 1, body.size() - 1)))
      return fail(sv, t, {"the tool's result is larger than the task's ", static_cast<long long>(limit),
                           " bytes (StaticTaskStore ResultBytes)"});
  } else {
    memmove(out + n, body.data(), body.size());
    t.text_len = static_cast<uint16_t>(n + body.size());
  }
  if (state == TaskSlot::kInputRequired) {
    if (kept_args.exists()) {  // the handler runs again with its arguments, stored after its questions
      json::BufferSink at(t.buf + t.text_len, static_cast<size_t>(t.cap - t.text_len));
      json::Writer w(at);
      if (kept_args.is_object()) json::write_value(w, kept_args);
      else w.raw("{}");
      if (at.status() != Status::kOk)
        return fail(sv, t, {"the tool's arguments and questions are larger than the task's ", static_cast<long long>(limit),
                             " bytes (StaticTaskStore ResultBytes)"});
      t.args_len = static_cast<uint16_t>(at.view().size());
    }
    Arena arena(Span<uint8_t>(st.arena_, st.arena_size_));
    const Value asked = task_parse(StrView(t.buf, t.text_len), arena);
    if (!asked.is_object()) return fail(sv, t, {"the task's input requests do not fit its arena (StaticTaskStore ArenaBytes)"});
    size_t i = 0;
    for (Value a : asked.members()) {
      if (i == EMCP_INPUT_ASKS) return fail(sv, t, {"the task asked more than EMCP_INPUT_ASKS questions at once"});
      t.keys[i++] = uri_hash(a.key());
    }
    ++t.round;
  }
  touch(sv, t, state);
  if (EMCP_LEGACY_ERA && t.session != nullptr) settle(sv, t);
}

// Answers to open input requests: stored after the requests (and the arguments), with those
// stored before; when none is open any more, the completion runs again with all of them.
void TaskCode::answer(Server& sv, TaskSlot& t, const uint32_t* hashes, const Value* values, size_t n) {
  if (t.state != TaskSlot::kInputRequired) return;
  TaskStore& st = *sv.tasks_;
  Arena arena(Span<uint8_t>(st.arena_, st.arena_size_));
  const size_t at = static_cast<size_t>(t.text_len) + t.args_len;
  const Value before = t.answers_len != 0 ? task_parse(StrView(t.buf + at, t.answers_len), arena) : Value();
  const Value asked = task_parse(StrView(t.buf, t.text_len), arena);  // the keys' names
  json::BufferSink sink(t.buf + at, static_cast<size_t>(t.cap - at));
  json::Writer w(sink);
  w.begin_object();
  for (Value a : before.members()) {
    w.key(a.key());
    json::write_value(w, a);
  }
  bool any = false, open = false;
  for (Value a : asked.members()) {
    const uint32_t h = uri_hash(a.key());
    for (size_t i = 0; i < n; ++i) {
      if (hashes[i] != h) continue;
      for (uint32_t& k : t.keys) {
        if (k != h) continue;
        k = 0;
        any = true;
        w.key(a.key());
        json::write_value(w, values[i]);
      }
    }
  }
  w.end_object();
  for (uint32_t k : t.keys) open = open || k != 0;
  if (!any) return;
  if (!asked.is_object() || (t.answers_len != 0 && !before.exists()))
    return fail(sv, t, {"the answers do not fit the task's arena (StaticTaskStore ArenaBytes)"});
  if (sink.status() != Status::kOk) return fail(sv, t, {"the answers do not fit the task's buffer (StaticTaskStore ResultBytes)"});
  t.answers_len = static_cast<uint16_t>(sink.view().size());
  touch(sv, t, TaskSlot::kInputRequired);
  if (open) return;
  // Every request has its answer: the completion (or the handler, with its arguments, which
  // follow the answers in the arena) runs again.
  arena.reset();
  const Value all = task_parse(StrView(t.buf + at, t.answers_len), arena);
  const Value args = t.args_len != 0 ? task_parse(StrView(t.buf + t.text_len, t.args_len), arena) : Value();
  if (!all.is_object() || (t.args_len != 0 && !args.is_object()))
    return fail(sv, t, {"the answers do not fit the task's arena (StaticTaskStore ArenaBytes)"});
  if (t.args_len != 0) {
    t.args_len = 0;
    return run(sv, t, all, &args);
  }
  run(sv, t, all);
}

// -32021 naming the extension: {"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}.
void task_refuse_without_extension(Reply& r, std::initializer_list<TextPiece> message) {
  json::Writer& w = r.refusing().error_with_data(ErrorCode::kMissingClientCapability, message);
  w.begin_object();
  w.key("requiredCapabilities");
  w.begin_object();
  write_tasks_extension(w);
  w.end_object();
  w.end_object();
  r.end();
}

bool TaskCode::defer(Server& sv, ToolCall& call, Pending* out) {
  TaskStore& st = *sv.tasks_;
  Reply& r = *call.reply_;
  if (st.running_ >= 0) {  // deferred inside a task's run
    TaskSlot& t = st.slots_[st.running_];
    const int i = ServerCode::hold_request(sv, nullptr, jsonrpc::Id{}, t.peer, Value(), call.tool_);  // no connection waits
    if (i < 0) return false;  // defer() answers that the server is busy (an isError result)
    t.work = Pending{static_cast<uint16_t>(i), sv.deferred_[i].generation};
    call.phase_ = ToolCall::kDeferred;
    r.suppress();
    *out = t.work;
    return true;
  }
  const Tool* tool = call.tool_;
  if (tool == nullptr || tool->task_support == TaskSupport::kForbidden || !r.peer().modern()) return false;
  *out = Pending{};
  if (!task_declared(call.inputs_.params_)) {
    if (tool->task_support != TaskSupport::kRequired) return false;  // an ordinary deferred call
    task_refuse_without_extension(r, {"tool \"", tool->name,
                                 "\" runs only as a task: the request must declare client capability extensions[\"",
                                 kTasksExtension, "\"]"});
    call.phase_ = ToolCall::kErrored;
    return true;
  }
  TaskSlot* t = create(sv, r, tool, nullptr, st.policy_.ttl_ms);
  call.phase_ = t != nullptr ? ToolCall::kDeferred : ToolCall::kErrored;
  if (t == nullptr) return true;
  json::Writer& w = r.result();
  w.begin_object();
  w.member_str("resultType", "task");
  write_server_meta(w, sv.info_);
  write(sv, w, *t, false);
  w.end_object();
  r.end();
  *out = t->work;
  return true;
}

Status TaskCode::complete(Server& sv, Pending p, FinishFn fn, void* ctx) {
  Deferred* d = sv.deferred(p);
  if (d == nullptr) return Status::kNotFound;
  d->used = false;
  TaskSlot* t = nullptr;
  for (size_t i = 0; i < sv.tasks_->count_ && t == nullptr; ++i) {
    TaskSlot& s = sv.tasks_->slots_[i];
    if (s.state != TaskSlot::kFree && s.work.slot == p.slot && s.work.generation == p.generation) t = &s;
  }
  if (t == nullptr || task_is_terminal(t->state)) return Status::kClosed;  // expired or cancelled
  t->work = Pending{};
  t->fn = fn;
  t->ctx = ctx;
  run(sv, *t, Value());
  return Status::kOk;
}
}  // namespace mcp
EMCP_NS_END
