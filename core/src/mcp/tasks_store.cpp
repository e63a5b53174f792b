// MCP tasks (emcp/mcp/tasks.h), the store: the application's TaskStore, a task's slot (its id,
// state, TTL, the captured answer) and its life from creation to expiry. Shared by the 2026-07-28
// extension (tasks.cpp) and the 2025-11-25 experimental tasks (tasks_2025.cpp); a task's run is
// tasks_run.cpp.
#include "tasks_internal.h"

#include <string.h>

#include "emcp/json/reader.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

// A 2025-11-25 result carries the task's id (basic/utilities/tasks, "Related Task Metadata").
constexpr const char kRelatedMeta[] = "{\"_meta\":{\"" EMCP_RELATED_TASK_KEY "\":{\"taskId\":\"";

}  // namespace

bool task_is_terminal(uint8_t state) { return state >= TaskSlot::kCompleted; }

// The request declared the extension in its `_meta` capabilities.
bool task_declared(Value params) {
  return params["_meta"][kMetaCaps]["extensions"][kTasksExtension].is_object();
}

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

// A 2025-11-25 task's result gets _meta related-task first: `rest` is the result object
// without its '{' (in t.buf, after where the text will start); false when it does not fit.
bool task_with_related_meta(TaskSlot& t, StrView rest) {
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
  store.policy_ = policy;
  if (store.policy_.ttl_ms == 0) store.policy_.ttl_ms = 1;
  if (store.policy_.poll_interval_ms == 0) store.policy_.poll_interval_ms = 1;
  FeatureOps::install(*this, FeatureOps::kTasksSlot, TaskCode::kOps);
}

// ---- The table ----------------------------------------------------------------------------------

void TaskCode::touch(Server& sv, TaskSlot& t, uint8_t state) {
  const uint8_t was = t.state;
  t.state = static_cast<TaskSlot::State>(state);
  t.updated_ms = sv.now();
  t.updated_s = sv.platform_.unix_time_s != nullptr && sv.platform_.unix_time_s() != 0
                    ? sv.platform_.unix_time_s()
                    : t.created_s + (t.updated_ms - t.created_ms) / 1000;
  if (EMCP_LEGACY_ERA && t.session != nullptr) {
    if (task_is_terminal(state) && t.sent != 0) withdraw(sv, t, true);  // its questions are moot
    // 2025-11-25: notifications/tasks/status for each change after the creation.
    if (was != TaskSlot::kFree && was != state) notify(sv, *t.session, StrView(t.id, TaskSlot::kIdLen));
  } else if (EMCP_MAX_LISTENS > 0 && was != TaskSlot::kFree && was != state) {
    notify_listens(sv, t);  // 2026-07-28: the listens whose taskIds named it
  }
}

TaskSlot* TaskCode::find(Server& sv, StrView id) {
  if (id.size() != TaskSlot::kIdLen) return nullptr;
  for (size_t i = 0; i < sv.tasks_->count_; ++i) {
    TaskSlot& t = sv.tasks_->slots_[i];
    if (t.state != TaskSlot::kFree && memcmp(t.id, id.data(), TaskSlot::kIdLen) == 0) return &t;
  }
  return nullptr;
}

// A task that ends before its client saw its end: its work is cancelled (Server::cancelled()
// tells the application, complete() then ends it), a tasks/result that waits for it is told.
void TaskCode::release(Server& sv, TaskSlot& t) {
  const uint32_t bit = static_cast<size_t>(&t - sv.tasks_->slots_) < 32 ? 1u << (&t - sv.tasks_->slots_) : 0;
  for (Listen& l : sv.listens_) l.tasks &= ~bit;  // another task may take the slot
  if (Deferred* d = sv.deferred(t.work)) d->cancelled = true;
  t.work = Pending{};
  if (EMCP_LEGACY_ERA && t.session != nullptr) end_waiter(sv, t);
  t.state = TaskSlot::kFree;
}

// Frees the tasks whose time to live is over.
void TaskCode::expire(Server& sv) {
  const uint64_t t_now = sv.now();
  for (size_t i = 0; i < sv.tasks_->count_; ++i) {
    TaskSlot& t = sv.tasks_->slots_[i];
    if (t.state != TaskSlot::kFree && t_now - t.created_ms >= t.ttl_ms) release(sv, t);
  }
}

// Fails the task: with a JSON-RPC error (-32603 and `why`), or `as_result`, with a tool result
// whose isError is true (2025-11-25: a question the client refused).
void TaskCode::fail(Server& sv, TaskSlot& t, std::initializer_list<TextPiece> why, bool as_result) {
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
    (void)task_with_related_meta(t, StrView(t.buf + 1, t.text_len - 1));
  t.answers_len = 0;
  t.args_len = 0;
  for (uint32_t& k : t.keys) k = 0;
  touch(sv, t, TaskSlot::kFailed);
}

TaskSlot* TaskCode::create(Server& sv, Reply& r, const Tool* tool, Session* owner, uint32_t ttl_ms) {
  TaskStore& st = *sv.tasks_;
  expire(sv);
  TaskSlot* t = nullptr;
  for (size_t i = 0; i < st.count_ && t == nullptr; ++i)
    if (st.slots_[i].state == TaskSlot::kFree) t = &st.slots_[i];
  uint8_t rnd[TaskSlot::kIdLen / 2];
  const char* busy = nullptr;
  if (t == nullptr) busy = "all task slots are in use (StaticTaskStore Tasks); try again later";
  else if (sv.platform_.random == nullptr || !sv.platform_.random(rnd, sizeof rnd)) busy = "no random source for a task id";
  Pending work;
  if (busy == nullptr && owner == nullptr) {  // 2026-07-28: the handler deferred already
    const int i = ServerCode::hold_request(sv, nullptr, jsonrpc::Id{}, r.peer(), Value(), tool);  // no connection waits
    if (i < 0) busy = "the server is busy: its deferred calls (EMCP_MAX_DEFERRED) are in progress";
    else work = Pending{static_cast<uint16_t>(i), sv.deferred_[i].generation};
  }
  static constexpr char kHex[] = "0123456789abcdef";
  char id[TaskSlot::kIdLen];
  if (busy == nullptr) {
    for (size_t i = 0; i < sizeof rnd; ++i) {
      id[2 * i] = kHex[rnd[i] >> 4];
      id[2 * i + 1] = kHex[rnd[i] & 15];
    }
    if (find(sv, StrView(id, sizeof id)) != nullptr) {  // 2^-128 with a real random source
      if (work.valid()) sv.deferred_[work.slot].used = false;
      busy = "the random source repeated a task id";
    }
  }
  if (busy != nullptr) {
    r.error(ErrorCode::kInternalError, {"Cannot create a task: ", busy});
    return nullptr;
  }
  memcpy(t->id, id, sizeof id);
  t->created_ms = sv.now();
  t->created_s = sv.platform_.unix_time_s != nullptr && sv.platform_.unix_time_s() != 0 ? sv.platform_.unix_time_s()
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
  touch(sv, *t, TaskSlot::kWorking);
  return t;
}
}  // namespace mcp
EMCP_NS_END
