// MCP tasks (emcp/mcp/tasks.h): the store, a task's run and its answer, and the 2026-07-28
// extension io.modelcontextprotocol/tasks (SEP-2663) over the deferred calls (deferred.cpp) and
// the input rounds (inputs.cpp). The 2025-11-25 experimental tasks are tasks_2025.cpp.
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
constexpr size_t kEnvelope = 136;  // StaticTaskStore's room for the captured answer's envelope
// A 2025-11-25 result carries the task's id (basic/utilities/tasks, "Related Task Metadata").
constexpr const char kRelatedMeta[] = "{\"_meta\":{\"" EMCP_RELATED_TASK_KEY "\":{\"taskId\":\"";

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

}  // namespace

// The tree of `text` in `arena` (missing when it is not one JSON value or does not fit); what
// the arena held stays.
Value task_parse(StrView text, Arena& arena) {
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

namespace {

// A 2025-11-25 task's result gets _meta related-task first: `rest` is the result object
// without its '{' (in t.buf, after where the text will start); false when it does not fit.
bool with_related_meta(TaskSlot& t, StrView rest) {
  const size_t head = sizeof kRelatedMeta - 1 + TaskSlot::kIdLen + 3 + (rest.size() > 1 ? 1 : 0);
  if (head + rest.size() > t.cap) return false;
  memmove(t.buf + head, rest.data(), rest.size());
  memcpy(t.buf, kRelatedMeta, sizeof kRelatedMeta - 1);
  char* at = t.buf + sizeof kRelatedMeta - 1;
  memcpy(at, t.id, TaskSlot::kIdLen);
  memcpy(at + TaskSlot::kIdLen, R"("}},)", head - (sizeof kRelatedMeta - 1 + TaskSlot::kIdLen));
  t.text_len = static_cast<uint16_t>(head + rest.size());
  return true;
}

// The input request hashed `h` is still waiting for its answer.
bool still_open(const TaskSlot& t, uint32_t h) {
  for (uint32_t k : t.keys)
    if (k == h) return true;
  return false;
}

bool ends(StrView s, const char* suffix) {
  const size_t n = strlen(suffix);
  return s.size() >= n && memcmp(s.data() + s.size() - n, suffix, n) == 0;
}

}  // namespace

size_t TaskStore::in_use() const {
  size_t n = 0;
  for (size_t i = 0; i < count_; ++i) n += slots_[i].state != TaskSlot::kFree ? 1 : 0;
  return n;
}

void Server::set_tasks(TaskStore& store, const TaskPolicy& policy) {
  tasks_ = &store;
  // A store another server used forgets its tasks (their sessions and deferred calls were that
  // server's).
  for (size_t i = 0; i < store.count_; ++i) {
    store.slots_[i].state = TaskSlot::kFree;
    store.slots_[i].work = Pending{};
    store.slots_[i].waiter = Pending{};
  }
  store.running_ = -1;
  store.ops_ = &kTaskOps;
  store.policy_ = policy;
  if (store.policy_.ttl_ms == 0) store.policy_.ttl_ms = 1;
  if (store.policy_.poll_interval_ms == 0) store.policy_.poll_interval_ms = 1;
  features_.poll = &Server::poll_features;
}

// ---- The table ----------------------------------------------------------------------------------

void Server::task_touch(TaskSlot& t, uint8_t state) {
  const uint8_t was = t.state;
  t.state = static_cast<TaskSlot::State>(state);
  t.updated_ms = now();
  t.updated_s = platform_.unix_time_s != nullptr && platform_.unix_time_s() != 0
                    ? platform_.unix_time_s()
                    : t.created_s + (t.updated_ms - t.created_ms) / 1000;
  if (EMCP_LEGACY_ERA && t.session != nullptr) {
    if (terminal(state) && t.sent != 0) task_withdraw(t, true);  // its questions are moot
    // 2025-11-25: notifications/tasks/status for each change after the creation.
    if (was != TaskSlot::kFree && was != state) task_notify(*t.session, StrView(t.id, TaskSlot::kIdLen));
  } else if (EMCP_MAX_LISTENS > 0 && was != TaskSlot::kFree && was != state) {
    task_notify_listens(t);  // 2026-07-28: the listens whose taskIds named it
  }
}

TaskSlot* Server::task_find(StrView id) {
  if (id.size() != TaskSlot::kIdLen) return nullptr;
  for (size_t i = 0; i < tasks_->count_; ++i) {
    TaskSlot& t = tasks_->slots_[i];
    if (t.state != TaskSlot::kFree && memcmp(t.id, id.data(), TaskSlot::kIdLen) == 0) return &t;
  }
  return nullptr;
}

// A task that ends before its client saw its end: its work is cancelled (Server::cancelled()
// tells the application, complete() then ends it), a tasks/result that waits for it is told.
void Server::task_free(TaskSlot& t) {
  const uint32_t bit = static_cast<size_t>(&t - tasks_->slots_) < 32 ? 1u << (&t - tasks_->slots_) : 0;
  for (Listen& l : listens_) l.tasks &= ~bit;  // another task may take the slot
  if (Deferred* d = deferred(t.work)) d->cancelled = true;
  t.work = Pending{};
  if (EMCP_LEGACY_ERA && t.session != nullptr) task_end_waiter(t);
  t.state = TaskSlot::kFree;
}

// Frees the tasks whose time to live is over.
void Server::task_expire() {
  const uint64_t t_now = now();
  for (size_t i = 0; i < tasks_->count_; ++i) {
    TaskSlot& t = tasks_->slots_[i];
    if (t.state != TaskSlot::kFree && t_now - t.created_ms >= t.ttl_ms) task_free(t);
  }
}

// Fails the task: with a JSON-RPC error (-32603 and `why`), or `as_result`, with a tool result
// whose isError is true (2025-11-25: a question the client refused).
void Server::task_fail(TaskSlot& t, std::initializer_list<TextPiece> why, bool as_result) {
  json::BufferSink sink(t.buf, t.cap);
  json::Writer w(sink);
  w.begin_object();
  if (as_result) {
    w.key("content");
    w.begin_array();
    w.begin_object();
    w.member_str("type", "text");
    w.key("text");
  } else {
    w.member_int("code", static_cast<int64_t>(ErrorCode::kInternalError));
    w.key("message");
  }
  w.string_begin();
  write_text_pieces(w, why);
  w.string_end();
  if (as_result) {
    w.end_object();
    w.end_array();
    w.member_bool("isError", true);
  }
  w.end_object();
  t.text_len = static_cast<uint16_t>(sink.status() == Status::kOk ? sink.view().size() : 0);
  t.error_answer = !as_result;
  if (as_result && t.session != nullptr && sink.status() == Status::kOk)
    (void)with_related_meta(t, StrView(t.buf + 1, t.text_len - 1));
  t.answers_len = 0;
  t.args_len = 0;
  for (uint32_t& k : t.keys) k = 0;
  task_touch(t, TaskSlot::kFailed);
}

TaskSlot* Server::task_create(Reply& r, const Tool* tool, Session* owner, uint32_t ttl_ms) {
  TaskStore& st = *tasks_;
  task_expire();
  TaskSlot* t = nullptr;
  for (size_t i = 0; i < st.count_ && t == nullptr; ++i)
    if (st.slots_[i].state == TaskSlot::kFree) t = &st.slots_[i];
  uint8_t rnd[TaskSlot::kIdLen / 2];
  const char* busy = nullptr;
  if (t == nullptr) busy = "all task slots are in use (StaticTaskStore Tasks); try again later";
  else if (platform_.random == nullptr || !platform_.random(rnd, sizeof rnd)) busy = "no random source for a task id";
  Pending work;
  if (busy == nullptr && owner == nullptr) {  // 2026-07-28: the handler deferred already
    const int i = hold_request(nullptr, jsonrpc::Id{}, r.peer(), Value(), tool);  // no connection waits
    if (i < 0) busy = "the server is busy: its deferred calls (EMCP_MAX_DEFERRED) are in progress";
    else work = Pending{static_cast<uint16_t>(i), deferred_[i].generation};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  char id[TaskSlot::kIdLen];
  if (busy == nullptr) {
    for (size_t i = 0; i < sizeof rnd; ++i) {
      id[2 * i] = kHex[rnd[i] >> 4];
      id[2 * i + 1] = kHex[rnd[i] & 15];
    }
    if (task_find(StrView(id, sizeof id)) != nullptr) {  // 2^-128 with a real random source
      if (work.valid()) deferred_[work.slot].used = false;
      busy = "the random source repeated a task id";
    }
  }
  if (busy != nullptr) {
    r.error(ErrorCode::kInternalError, {"Cannot create a task: ", busy});
    return nullptr;
  }
  memcpy(t->id, id, sizeof id);
  t->created_ms = now();
  t->created_s = platform_.unix_time_s != nullptr && platform_.unix_time_s() != 0 ? platform_.unix_time_s()
                                                                                   : t->created_ms / 1000;
  t->ttl_ms = ttl_ms;
  t->tool = tool;
  t->fn = nullptr;
  t->ctx = nullptr;
  t->work = work;
  t->peer = r.peer();
  t->peer.logs = false;  // no log messages for tasks (SEP-2663)
  t->session = owner;
  t->waiter = Pending{};
  t->text_len = 0;
  t->args_len = 0;
  t->answers_len = 0;
  t->round = 0;
  t->sent = 0;
  t->error_answer = false;
  t->kept_len = 0;
  for (uint32_t& k : t->keys) k = 0;
  task_touch(*t, TaskSlot::kWorking);
  return t;
}

// ---- Running a task's completion ----------------------------------------------------------------

void Server::task_run(TaskSlot& t, Value answers, const Value* args) {
  TaskStore& st = *tasks_;
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
    call.server_ = this;
    call.session_ = &own;
    call.tool_ = t.tool;
    call.reply_ = &r;
    call.args_ = call_args;
    call.inputs_.server_ = this;
    call.inputs_.reply_ = &r;
    call.inputs_.responses_ = answers;
    call.inputs_.method_ = "tools/call";
    call.inputs_.round_ = t.round;
    call.inputs_.in_task_ = true;
    call.inputs_.got_len_ = t.kept_len;
    if (t.kept_len != 0) memcpy(call.inputs_.got_, t.kept, t.kept_len);
    const CurrentRequest current(*this, own, id);
    if (handler) {
      if (t.tool->handler != nullptr) t.tool->handler(call);
    } else if (t.fn != nullptr) {
      t.fn(call, t.ctx);
    }
    // A task's input requests carry no requestState (SEP-2663): the task holds what it asked
    // and kept. (An ask installs the state's writer: it is set aside while the answer ends.)
    const auto write_state_fn = features_.write_state;
    features_.write_state = nullptr;
    if (call.phase_ != ToolCall::kDeferred) call.finish();
    r.end();
    features_.write_state = write_state_fn;
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
    task_touch(t, TaskSlot::kWorking);
    return;
  }
  const size_t limit = t.cap > kEnvelope ? t.cap - kEnvelope : t.cap;
  if (sink.status() != Status::kOk)
    return task_fail(t, {"the tool's result is larger than the task's ", static_cast<long long>(limit),
                         " bytes (StaticTaskStore ResultBytes)"});
  // {"jsonrpc":"2.0","id":0,"result":{"resultType":"complete",...}} or ..."error":{...}}
  // (a 2025-11-25 task's: {"jsonrpc":"2.0","id":0,"result":{"content":...}}, or
  // "result":{"inputRequests":{...}} when it asked)
  StrView body;
  StrView text = sink.view();
  if (text.size() < 2 || !starts(text, R"({"jsonrpc":"2.0","id":0,")", &text))
    return task_fail(t, {"the tool wrote no answer"});
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
    return task_fail(t, {"the tool kept state without asking for input, which a task cannot carry"});
  } else if (starts(text, R"(result":{"resultType":"complete")", &body)) {
    out[n++] = '{';
    if (body.size() > 0 && body[0] == ',') body = StrView(body.data() + 1, body.size() - 1);
  } else if (!starts(text, R"(result":)", &body)) {
    return task_fail(t, {"the tool wrote no answer"});
  }
  if (t.session != nullptr && state == TaskSlot::kCompleted) {
    // 2025-11-25: a result with isError fails the task (its tasks/result is still the result).
    if (ends(body, R"("isError":true})")) state = TaskSlot::kFailed;
    if (body.size() < 2 || !with_related_meta(t, StrView(body.data() + 1, body.size() - 1)))
      return task_fail(t, {"the tool's result is larger than the task's ", static_cast<long long>(limit),
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
        return task_fail(t, {"the tool's arguments and questions are larger than the task's ", static_cast<long long>(limit),
                             " bytes (StaticTaskStore ResultBytes)"});
      t.args_len = static_cast<uint16_t>(at.view().size());
    }
    Arena arena(Span<uint8_t>(st.arena_, st.arena_size_));
    const Value asked = task_parse(StrView(t.buf, t.text_len), arena);
    if (!asked.is_object()) return task_fail(t, {"the task's input requests do not fit its arena (StaticTaskStore ArenaBytes)"});
    size_t i = 0;
    for (Value a : asked.members()) {
      if (i == EMCP_INPUT_ASKS) return task_fail(t, {"the task asked more than EMCP_INPUT_ASKS questions at once"});
      t.keys[i++] = uri_hash(a.key());
    }
    ++t.round;
  }
  task_touch(t, state);
  if (EMCP_LEGACY_ERA && t.session != nullptr) task_settle(t);
}

// Answers to open input requests: stored after the requests (and the arguments), with those
// stored before; when none is open any more, the completion runs again with all of them.
void Server::task_answer(TaskSlot& t, const uint32_t* hashes, const Value* values, size_t n) {
  if (t.state != TaskSlot::kInputRequired) return;
  TaskStore& st = *tasks_;
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
    return task_fail(t, {"the answers do not fit the task's arena (StaticTaskStore ArenaBytes)"});
  if (sink.status() != Status::kOk) return task_fail(t, {"the answers do not fit the task's buffer (StaticTaskStore ResultBytes)"});
  t.answers_len = static_cast<uint16_t>(sink.view().size());
  task_touch(t, TaskSlot::kInputRequired);
  if (open) return;
  // Every request has its answer: the completion (or the handler, with its arguments, which
  // follow the answers in the arena) runs again.
  arena.reset();
  const Value all = task_parse(StrView(t.buf + at, t.answers_len), arena);
  const Value args = t.args_len != 0 ? task_parse(StrView(t.buf + t.text_len, t.args_len), arena) : Value();
  if (!all.is_object() || (t.args_len != 0 && !args.is_object()))
    return task_fail(t, {"the answers do not fit the task's arena (StaticTaskStore ArenaBytes)"});
  if (t.args_len != 0) {
    t.args_len = 0;
    return task_run(t, all, &args);
  }
  task_run(t, all);
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
  if (st.running_ >= 0) {  // deferred inside a task's run
    TaskSlot& t = st.slots_[st.running_];
    const int i = hold_request(nullptr, jsonrpc::Id{}, t.peer, Value(), call.tool_);  // no connection waits
    if (i < 0) return false;  // defer() answers that the server is busy (an isError result)
    t.work = Pending{static_cast<uint16_t>(i), deferred_[i].generation};
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
  TaskSlot* t = task_create(r, tool, nullptr, st.policy_.ttl_ms);
  call.phase_ = t != nullptr ? ToolCall::kDeferred : ToolCall::kErrored;
  if (t == nullptr) return true;
  json::Writer& w = r.result();
  w.begin_object();
  w.member_str("resultType", "task");
  write_server_meta(w, info_);
  write_task(w, *t, false);
  w.end_object();
  r.end();
  *out = t->work;
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
  const bool legacy = EMCP_LEGACY_ERA && t.session != nullptr;
  w.member_str("taskId", StrView(t.id, TaskSlot::kIdLen));
  w.member_str("status", kStates[t.state]);
  if (t.state == TaskSlot::kFailed)
    w.member_str("statusMessage", t.error_answer ? "The tool call ended with a JSON-RPC error."
                                                 : "The tool reported an error (isError); tasks/result has its result.");
  if (t.state == TaskSlot::kCancelled) w.member_str("statusMessage", "Cancelled at the client's request.");
  if (legacy && t.state == TaskSlot::kInputRequired)
    w.member_str("statusMessage", "The tool needs input: tasks/result carries its requests.");
  char when[21];
  iso8601(t.created_s, when);
  w.member_str("createdAt", when);
  iso8601(t.updated_s, when);
  w.member_str("lastUpdatedAt", when);
  w.member_int(legacy ? "ttl" : "ttlMs", t.ttl_ms);
  w.member_int(legacy ? "pollInterval" : "pollIntervalMs", tasks_->policy_.poll_interval_ms);
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
    const Value asked = task_parse(text, arena);
    w.key("inputRequests");
    w.begin_object();
    for (Value a : asked.members()) {
      if (!still_open(t, uri_hash(a.key()))) continue;
      w.key(a.key());
      json::write_value(w, a);
    }
    w.end_object();
  }
}

bool Server::task_methods(Server& sv, Session& /*s*/, const Message& m, Reply& r) {
  const StrView method = m.method;
  const bool get = method == "tasks/get", update = method == "tasks/update", cancel = method == "tasks/cancel";
  if (!(get || update || cancel)) return false;  // tasks/result, tasks/list: -32601
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
  if (t == nullptr || t->session != nullptr) {
    r.reject(ErrorCode::kInvalidParams, {"Failed to retrieve task: no task \"", id.value(), "\" (unknown, or expired)"});
    return true;
  }
  if (cancel && !terminal(t->state)) {
    if (Deferred* d = sv.deferred(t->work)) d->cancelled = true;  // the application sees cancelled()
    t->answers_len = 0;
    sv.task_touch(*t, TaskSlot::kCancelled);
  }
  if (update && t->state == TaskSlot::kInputRequired) {
    // The answers to open requests; the others are ignored.
    uint32_t hashes[EMCP_INPUT_ASKS];
    Value values[EMCP_INPUT_ASKS];
    size_t n = 0;
    for (Value a : responses.members()) {
      const uint32_t h = uri_hash(a.key());
      if (still_open(*t, h) && n < EMCP_INPUT_ASKS) {
        hashes[n] = h;
        values[n++] = a;
      }
    }
    sv.task_answer(*t, hashes, values, n);
  }
  json::Writer& w = r.result_object();
  if (get) sv.write_task(w, *t, true);
  w.end_object();
  r.end();
  return true;
}

// ---- notifications/tasks on listen streams (SEP-2663, "Task Status Notifications") -------------

bool Server::task_listen(Server& sv, const Message& m, Reply& r, Value ids, uint32_t* slots) {
  bool strings = ids.is_array();
  for (const Value v : ids.elements()) strings = strings && v.is_string();
  if (!strings) {
    r.reject(ErrorCode::kInvalidParams, {"notifications.taskIds must be an array of strings"});
    return false;
  }
  if (!declared(m.params)) {
    refuse_without_extension(r, {"notifications.taskIds needs client capability extensions[\"", kTasksExtension,
                                 "\"], which the request did not declare"});
    return false;
  }
  // The tasks it may hear of: those of this era that exist now, in the first 32 slots.
  sv.task_expire();
  for (const Value v : ids.elements()) {
    const TaskSlot* t = sv.task_find(v.as_string().value());
    const size_t i = t != nullptr ? static_cast<size_t>(t - sv.tasks_->slots_) : 32;
    if (i < 32 && t->session == nullptr) *slots |= 1u << i;
  }
  return true;
}

void Server::task_notify_listens(const TaskSlot& t) {
  const size_t i = static_cast<size_t>(&t - tasks_->slots_);
  if (i >= 32) return;
  for (Listen& l : listens_) {
    if (l.session == nullptr || (l.tasks & (1u << i)) == 0) continue;
    const Id id = l.id.id();
    Outbound out(*l.session, OutMessage{OutMessage::Kind::kNotification, id, false});
    if (!open_or_count(out, notifications_dropped_)) continue;
    json::Writer& w = out.w();
    jsonrpc::begin_notification(w, "notifications/tasks");
    w.begin_object();
    write_subscription_meta(w, id);
    write_task(w, t, true);  // the DetailedTask tasks/get would give now
    w.end_object();
    jsonrpc::end_message(w);
  }
}

const TaskOps Server::kTaskOps = {
    &Server::task_methods,
    [](Server& sv, ToolCall& call, Pending* out) { return sv.task_defer(call, out); },
    [](Server& sv, Pending p, FinishFn fn, void* ctx) { return sv.task_complete(p, fn, ctx); },
    [](Server& sv) {
      sv.task_expire();
      if (!EMCP_LEGACY_ERA) return;
      for (size_t i = 0; i < sv.tasks_->count_; ++i)
        if (sv.tasks_->slots_[i].session != nullptr && sv.tasks_->slots_[i].state != TaskSlot::kFree)
          sv.task_settle(sv.tasks_->slots_[i]);
    },
    &Server::task_listen,
    [](const Server& sv, json::Writer& w, uint32_t slots) {
      w.key("taskIds");
      w.begin_array();
      for (size_t i = 0; i < sv.tasks_->count_ && i < 32; ++i)
        if ((slots & (1u << i)) != 0) w.string(StrView(sv.tasks_->slots_[i].id, TaskSlot::kIdLen));
      w.end_array();
    },
    EMCP_LEGACY_ERA ? &Server::kTaskOps2025 : nullptr,
};

}  // namespace mcp
EMCP_NS_END
