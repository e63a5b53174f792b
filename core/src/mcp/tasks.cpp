// MCP tasks (emcp/mcp/tasks.h): the 2026-07-28 extension io.modelcontextprotocol/tasks
// (SEP-2663) over the deferred calls (deferred.cpp) and the input rounds (inputs.cpp).
//
// A tool declared with Tool::runs_as_task() that defers, for a request that declared the
// extension, gets a task: a slot of the application's TaskStore with an unguessable id (16
// bytes of the platform's random source, in hex), and an entry of the deferred table without
// a session (so no connection's end cancels it, and transports do not wait for it). The
// tools/call is answered at once with the CreateTaskResult. Server::complete() on that entry
// runs the completion with a ToolCall whose answer goes to a channel of the task's own: the
// JSON-RPC answer is written into the slot's buffer through a json::Writer, then cut down to
// the result object (completed), the error object (failed) or the inputRequests object
// (input_required). tasks/update stores answers for open requests after it; when every open
// request has its answer the completion runs again with all of them (Inputs::answer()).
// Reached only through Server::Features::tasks, which set_tasks() installs.
#include "server_internal.h"

#include <string.h>

#include "emcp/json/reader.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr const char* kStates[] = {"", "working", "input_required", "completed", "failed", "cancelled"};
constexpr size_t kEnvelope = 72;  // StaticTaskStore's room for the captured answer's envelope

bool terminal(uint8_t state) { return state >= TaskSlot::kCompleted; }

// The request declared the extension in its `_meta` capabilities.
bool declared(Value params) {
  return params["_meta"][kMetaCaps]["extensions"][kTasksExtension].is_object();
}

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

// "YYYY-MM-DDTHH:MM:SSZ" (UTC) of `secs` since 1970-01-01 (civil_from_days, H. Hinnant).
void iso8601(uint64_t secs, char out[21]) {
  const int64_t days = static_cast<int64_t>(secs / 86400);
  const uint32_t rem = static_cast<uint32_t>(secs % 86400);
  const int64_t z = days + 719468;
  const int64_t era = z / 146097;
  const uint32_t doe = static_cast<uint32_t>(z - era * 146097);
  const uint32_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = static_cast<int64_t>(yoe) + era * 400;
  const uint32_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const uint32_t mp = (5 * doy + 2) / 153;
  const uint32_t d = doy - (153 * mp + 2) / 5 + 1;
  const uint32_t mo = mp < 10 ? mp + 3 : mp - 9;
  if (mo <= 2) ++y;
  if (y > 9999) y = 9999;
  const uint32_t f[6] = {static_cast<uint32_t>(y), mo, d, rem / 3600, rem / 60 % 60, rem % 60};
  const uint8_t width[6] = {4, 2, 2, 2, 2, 2};
  const char sep[6] = {'-', '-', 'T', ':', ':', 'Z'};
  size_t at = 0;
  for (size_t i = 0; i < 6; ++i) {
    uint32_t v = f[i];
    for (size_t k = width[i]; k > 0; --k) {
      out[at + k - 1] = static_cast<char>('0' + v % 10);
      v /= 10;
    }
    at += width[i];
    out[at++] = sep[i];
  }
  out[at] = '\0';
}

// The tree of `text` in `arena` (missing when it is not one JSON value or does not fit).
Value parse(StrView text, Arena& arena) {
  json::StaticReader<> reader;
  json::TreeBuilder tree(arena);
  tree.begin();
  reader.feed(text.data(), text.size());
  bool finished = false;
  for (;;) {
    const json::Event e = reader.next();
    if (e == json::Event::kNeedInput) {
      if (finished) return Value();
      reader.finish();
      finished = true;
      continue;
    }
    if (e == json::Event::kError) return Value();
    if (e == json::Event::kDocumentEnd) return tree.root();
    if (tree.on_event(e, reader) != Status::kOk) return Value();
  }
}

}  // namespace

size_t TaskStore::in_use() const {
  size_t n = 0;
  for (size_t i = 0; i < count_; ++i) n += slots_[i].state != TaskSlot::kFree ? 1 : 0;
  return n;
}

void Server::set_tasks(TaskStore& store, const TaskPolicy& policy) {
  tasks_ = &store;
  store.ops_ = &kTaskOps;
  store.policy_ = policy;
  if (store.policy_.ttl_ms == 0) store.policy_.ttl_ms = 1;
  if (store.policy_.poll_interval_ms == 0) store.policy_.poll_interval_ms = 1;
  features_.poll = &Server::poll_features;
}

// ---- The table ----------------------------------------------------------------------------------

void Server::task_touch(TaskSlot& t, uint8_t state) {
  t.state = static_cast<TaskSlot::State>(state);
  t.updated_ms = now();
  t.updated_s = platform_.unix_time_s != nullptr && platform_.unix_time_s() != 0
                    ? platform_.unix_time_s()
                    : t.created_s + (t.updated_ms - t.created_ms) / 1000;
}

TaskSlot* Server::task_find(StrView id) {
  if (id.size() != TaskSlot::kIdLen) return nullptr;
  for (size_t i = 0; i < tasks_->count_; ++i) {
    TaskSlot& t = tasks_->slots_[i];
    if (t.state != TaskSlot::kFree && memcmp(t.id, id.data(), TaskSlot::kIdLen) == 0) return &t;
  }
  return nullptr;
}

// Frees the tasks whose time to live is over; the work of one still running is cancelled
// (Server::cancelled() tells the application, complete() then ends it).
void Server::task_expire() {
  const uint64_t t_now = now();
  for (size_t i = 0; i < tasks_->count_; ++i) {
    TaskSlot& t = tasks_->slots_[i];
    if (t.state == TaskSlot::kFree || t_now - t.created_ms < tasks_->policy_.ttl_ms) continue;
    if (Deferred* d = deferred(t.work)) d->cancelled = true;
    t.work = Pending{};
    t.state = TaskSlot::kFree;
  }
}

void Server::task_fail(TaskSlot& t, std::initializer_list<TextPiece> why) {
  json::BufferSink sink(t.buf, t.cap);
  json::Writer w(sink);
  w.begin_object();
  w.member_int("code", static_cast<int64_t>(ErrorCode::kInternalError));
  w.key("message");
  w.string_begin();
  write_text_pieces(w, why);
  w.string_end();
  w.end_object();
  t.text_len = static_cast<uint16_t>(sink.status() == Status::kOk ? sink.view().size() : 0);
  t.answers_len = 0;
  for (uint32_t& k : t.keys) k = 0;
  task_touch(t, TaskSlot::kFailed);
}

// ---- Running a task's completion ----------------------------------------------------------------

void Server::task_run(TaskSlot& t, Value answers) {
  TaskStore& st = *tasks_;
  st.running_ = static_cast<int>(&t - st.slots_);
  json::BufferSink sink(t.buf, t.cap);
  Channel ch;
  ch.open = &capture_open;
  ch.close = &capture_close;
  ch.ctx = &sink;
  {
    Session own(ch);  // never attached: the answer is the task's
    const Id id = Id::of(0);
    Reply r(own, t.peer, id, nullptr);
    ToolCall call;
    call.server_ = this;
    call.session_ = &own;
    call.tool_ = t.tool;
    call.reply_ = &r;
    call.inputs_.server_ = this;
    call.inputs_.reply_ = &r;
    call.inputs_.responses_ = answers;
    call.inputs_.method_ = "tools/call";
    call.inputs_.round_ = t.round;
    const CurrentRequest current(*this, own, id);
    if (t.fn != nullptr) t.fn(call, t.ctx);
    // A task's input requests carry no requestState (SEP-2663): the task holds what it asked.
    // (An ask installs the state's writer: it is set aside while the answer ends.)
    const auto write_state_fn = features_.write_state;
    features_.write_state = nullptr;
    if (call.phase_ != ToolCall::kDeferred) call.finish();
    r.end();
    features_.write_state = write_state_fn;
  }
  st.running_ = -1;
  t.answers_len = 0;
  for (uint32_t& k : t.keys) k = 0;
  if (t.work.valid()) {  // deferred again: more work to come
    t.text_len = 0;
    task_touch(t, TaskSlot::kWorking);
    return;
  }
  const size_t limit = t.cap > kEnvelope ? t.cap - kEnvelope : t.cap;
  if (sink.status() != Status::kOk)
    return task_fail(t, {"the tool's result is larger than the task's ", static_cast<long long>(limit),
                         " bytes (StaticTaskStore ResultBytes)"});
  // {"jsonrpc":"2.0","id":0,"result":{"resultType":"complete",...}} or ..."error":{...}}
  StrView body;
  StrView text = sink.view();
  if (text.size() < 2 || !starts(text, R"({"jsonrpc":"2.0","id":0,")", &text))
    return task_fail(t, {"the tool wrote no answer"});
  text = StrView(text.data(), text.size() - 1);  // the envelope's '}'
  uint8_t state = TaskSlot::kCompleted;
  char* out = t.buf;
  size_t n = 0;
  if (starts(text, R"(error":)", &body)) {
    state = TaskSlot::kFailed;
  } else if (starts(text, R"(result":{"resultType":"input_required","inputRequests":)", &body)) {
    state = TaskSlot::kInputRequired;
    body = StrView(body.data(), body.size() - 1);  // the result's '}'
  } else if (starts(text, R"(result":{"resultType":"input_required")", &body)) {
    return task_fail(t, {"the tool kept state without asking for input, which a task cannot carry"});
  } else if (starts(text, R"(result":{"resultType":"complete")", &body)) {
    out[n++] = '{';
    if (body.size() > 0 && body[0] == ',') body = StrView(body.data() + 1, body.size() - 1);
  } else if (!starts(text, R"(result":)", &body)) {
    return task_fail(t, {"the tool wrote no answer"});
  }
  memmove(out + n, body.data(), body.size());
  t.text_len = static_cast<uint16_t>(n + body.size());
  if (state == TaskSlot::kInputRequired) {
    Arena arena(Span<uint8_t>(st.arena_, st.arena_size_));
    const Value asked = parse(StrView(t.buf, t.text_len), arena);
    if (!asked.is_object()) return task_fail(t, {"the task's input requests do not fit its arena (StaticTaskStore ArenaBytes)"});
    size_t i = 0;
    for (Value a : asked.members()) {
      if (i == EMCP_INPUT_ASKS) return task_fail(t, {"the task asked more than EMCP_INPUT_ASKS questions at once"});
      t.keys[i++] = uri_hash(a.key());
    }
    ++t.round;
  }
  task_touch(t, state);
}

namespace {
// -32021 naming the extension: {"requiredCapabilities":{"extensions":{"io.modelcontextprotocol/tasks":{}}}}.
void refuse_without_extension(Reply& r, std::initializer_list<TextPiece> message) {
  json::Writer& w = r.refusing().error_with_data(ErrorCode::kMissingClientCapability, message);
  w.begin_object();
  w.key("requiredCapabilities");
  w.begin_object();
  write_tasks_extension(w);
  w.end_object();
  w.end_object();
  r.end();
}
}  // namespace

bool Server::task_defer(ToolCall& call, Pending* out) {
  TaskStore& st = *tasks_;
  Reply& r = *call.reply_;
  const auto hold_work = [this](const ToolCall& c, const Peer& peer) -> Pending {
    const int i = hold_request(nullptr, jsonrpc::Id{}, peer, Value(), c.tool_);  // no connection waits
    return i < 0 ? Pending{} : Pending{static_cast<uint16_t>(i), deferred_[i].generation};
  };
  if (st.running_ >= 0) {  // deferred again inside a task's completion
    TaskSlot& t = st.slots_[st.running_];
    t.work = hold_work(call, t.peer);
    if (!t.work.valid()) return false;  // defer() answers that the server is busy (an isError result)
    call.phase_ = ToolCall::kDeferred;
    r.suppress();
    *out = t.work;
    return true;
  }
  const Tool* tool = call.tool_;
  if (tool == nullptr || tool->task_support == TaskSupport::kForbidden || !r.peer().modern()) return false;
  *out = Pending{};
  if (!declared(call.inputs_.params_)) {
    if (tool->task_support != TaskSupport::kRequired) return false;  // an ordinary deferred call
    refuse_without_extension(r, {"tool \"", tool->name,
                                 "\" runs only as a task: the request must declare client capability extensions[\"",
                                 kTasksExtension, "\"]"});
    call.phase_ = ToolCall::kErrored;
    return true;
  }
  task_expire();
  TaskSlot* t = nullptr;
  for (size_t i = 0; i < st.count_ && t == nullptr; ++i)
    if (st.slots_[i].state == TaskSlot::kFree) t = &st.slots_[i];
  uint8_t rnd[TaskSlot::kIdLen / 2];
  const char* busy = nullptr;
  if (t == nullptr) busy = "all task slots are in use (StaticTaskStore Tasks); try again later";
  else if (platform_.random == nullptr || !platform_.random(rnd, sizeof rnd)) busy = "no random source for a task id";
  Pending work;
  if (busy == nullptr && !(work = hold_work(call, r.peer())).valid())
    busy = "the server is busy: its deferred calls (EMCP_MAX_DEFERRED) are in progress";
  if (busy != nullptr) {
    r.error(ErrorCode::kInternalError, {"Cannot create a task: ", busy});
    call.phase_ = ToolCall::kErrored;
    return true;
  }
  static constexpr char kHex[] = "0123456789abcdef";
  char id[TaskSlot::kIdLen];
  for (size_t i = 0; i < sizeof rnd; ++i) {
    id[2 * i] = kHex[rnd[i] >> 4];
    id[2 * i + 1] = kHex[rnd[i] & 15];
  }
  if (task_find(StrView(id, sizeof id)) != nullptr) {  // 2^-128 with a real random source
    deferred_[work.slot].used = false;
    r.error(ErrorCode::kInternalError, {"Cannot create a task: the random source repeated a task id"});
    call.phase_ = ToolCall::kErrored;
    return true;
  }
  memcpy(t->id, id, sizeof id);
  t->created_ms = now();
  t->created_s = platform_.unix_time_s != nullptr && platform_.unix_time_s() != 0 ? platform_.unix_time_s()
                                                                                   : t->created_ms / 1000;
  t->tool = tool;
  t->fn = nullptr;
  t->ctx = nullptr;
  t->work = work;
  t->peer = r.peer();
  t->peer.logs = false;  // no log messages for tasks (SEP-2663)
  t->text_len = 0;
  t->answers_len = 0;
  t->round = 0;
  for (uint32_t& k : t->keys) k = 0;
  task_touch(*t, TaskSlot::kWorking);
  json::Writer& w = r.result();
  w.begin_object();
  w.member_str("resultType", "task");
  write_server_meta(w, info_);
  write_task(w, *t, false);
  w.end_object();
  r.end();
  call.phase_ = ToolCall::kDeferred;
  *out = work;
  return true;
}

Status Server::task_complete(Pending p, FinishFn fn, void* ctx) {
  Deferred* d = deferred(p);
  if (d == nullptr) return Status::kNotFound;
  d->used = false;
  TaskSlot* t = nullptr;
  for (size_t i = 0; i < tasks_->count_ && t == nullptr; ++i) {
    TaskSlot& s = tasks_->slots_[i];
    if (s.state != TaskSlot::kFree && s.work.slot == p.slot && s.work.generation == p.generation) t = &s;
  }
  if (t == nullptr || terminal(t->state)) return Status::kClosed;  // expired or cancelled
  t->work = Pending{};
  t->fn = fn;
  t->ctx = ctx;
  task_run(*t, Value());
  return Status::kOk;
}

// ---- tasks/get, tasks/update, tasks/cancel ------------------------------------------------------

void Server::write_task(json::Writer& w, const TaskSlot& t, bool detailed) {
  w.member_str("taskId", StrView(t.id, TaskSlot::kIdLen));
  w.member_str("status", kStates[t.state]);
  if (t.state == TaskSlot::kFailed) w.member_str("statusMessage", "The tool call ended with a JSON-RPC error.");
  if (t.state == TaskSlot::kCancelled) w.member_str("statusMessage", "Cancelled at the client's request.");
  char when[21];
  iso8601(t.created_s, when);
  w.member_str("createdAt", when);
  iso8601(t.updated_s, when);
  w.member_str("lastUpdatedAt", when);
  w.member_int("ttlMs", tasks_->policy_.ttl_ms);
  w.member_int("pollIntervalMs", tasks_->policy_.poll_interval_ms);
  if (!detailed) return;
  const StrView text(t.buf, t.text_len);
  if (t.state == TaskSlot::kCompleted) {
    w.key("result");
    w.raw(text);
  } else if (t.state == TaskSlot::kFailed) {
    w.key("error");
    w.raw(text);
  } else if (t.state == TaskSlot::kInputRequired) {
    // The requests still open: those tasks/update has not answered yet.
    Arena arena(Span<uint8_t>(tasks_->arena_, tasks_->arena_size_));
    const Value asked = parse(text, arena);
    w.key("inputRequests");
    w.begin_object();
    for (Value a : asked.members()) {
      const uint32_t h = uri_hash(a.key());
      bool open = false;
      for (uint32_t k : t.keys) open = open || k == h;
      if (!open) continue;
      w.key(a.key());
      json::write_value(w, a);
    }
    w.end_object();
  }
}

bool Server::task_methods(Server& sv, Session& /*s*/, const Message& m, Reply& r) {
  const StrView method = m.method;
  const bool get = method == "tasks/get", update = method == "tasks/update", cancel = method == "tasks/cancel";
  if (!(get || update || cancel) || !r.peer().modern()) return false;  // tasks/result, tasks/list: -32601
  if (!declared(m.params)) {
    refuse_without_extension(
        r, {method, " needs client capability extensions[\"", kTasksExtension, "\"], which the request did not declare"});
    return true;
  }
  const Result<StrView> id = m.params["taskId"].as_string();
  if (!id.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"taskId must be a string"});
    return true;
  }
  const Value responses = m.params["inputResponses"];
  if (update && !responses.is_object()) {
    r.reject(ErrorCode::kInvalidParams, {"inputResponses must be an object (input key -> the client's result)"});
    return true;
  }
  sv.task_expire();
  TaskSlot* t = sv.task_find(id.value());
  if (t == nullptr) {
    r.reject(ErrorCode::kInvalidParams, {"Failed to retrieve task: no task \"", id.value(), "\" (unknown, or expired)"});
    return true;
  }
  if (cancel && !terminal(t->state)) {
    if (Deferred* d = sv.deferred(t->work)) d->cancelled = true;  // the application sees cancelled()
    t->answers_len = 0;
    sv.task_touch(*t, TaskSlot::kCancelled);
  }
  if (update && t->state == TaskSlot::kInputRequired) {
    // The answers to open requests join those stored after the requests; the others are ignored.
    TaskStore& st = *sv.tasks_;
    Arena arena(Span<uint8_t>(st.arena_, st.arena_size_));
    const Value before = t->answers_len != 0 ? parse(StrView(t->buf + t->text_len, t->answers_len), arena) : Value();
    json::BufferSink sink(t->buf + t->text_len, static_cast<size_t>(t->cap - t->text_len));
    json::Writer w(sink);
    w.begin_object();
    for (Value a : before.members()) {
      w.key(a.key());
      json::write_value(w, a);
    }
    bool any = false, open = false;
    for (Value a : responses.members()) {
      const uint32_t h = uri_hash(a.key());
      for (uint32_t& k : t->keys) {
        if (k != h) continue;
        k = 0;
        any = true;
        w.key(a.key());
        json::write_value(w, a);
        break;
      }
    }
    w.end_object();
    for (uint32_t k : t->keys) open = open || k != 0;
    if (any) {
      if (sink.status() != Status::kOk || (t->answers_len != 0 && !before.exists())) {
        sv.task_fail(*t, {"the answers do not fit the task's buffer (StaticTaskStore ResultBytes)"});
      } else {
        t->answers_len = static_cast<uint16_t>(sink.view().size());
        sv.task_touch(*t, TaskSlot::kInputRequired);
        if (!open) {  // every request has its answer: the completion runs again with them
          arena.reset();
          const Value all = parse(StrView(t->buf + t->text_len, t->answers_len), arena);
          if (!all.is_object()) sv.task_fail(*t, {"the answers do not fit the task's arena (StaticTaskStore ArenaBytes)"});
          else sv.task_run(*t, all);
        }
      }
    }
  }
  json::Writer& w = r.result_object();
  if (get) sv.write_task(w, *t, true);
  w.end_object();
  r.end();
  return true;
}

const TaskOps Server::kTaskOps = {
    &Server::task_methods,
    [](Server& sv, ToolCall& call, Pending* out) { return sv.task_defer(call, out); },
    [](Server& sv, Pending p, FinishFn fn, void* ctx) { return sv.task_complete(p, fn, ctx); },
    [](Server& sv) { sv.task_expire(); },
};

}  // namespace mcp
EMCP_NS_END
