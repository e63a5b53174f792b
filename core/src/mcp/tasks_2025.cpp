// MCP tasks at 2025-11-25 (basic/utilities/tasks, experimental; emcp/mcp/tasks.h), over the
// store, runs and answers of tasks.cpp.
//
// A tools/call with params.task creates the task and answers {"task":{...}} at once; the
// tool's handler then runs with the task's channel (TaskCode::run), so whatever it does
// (answer, defer, ask) lands in the task. Tasks belong to the session that created them.
// tasks/result waits as a held request (a deferred entry with the session and the request's
// id, so Streamable HTTP keeps its stream open); while the task is input_required its
// questions go out as requests to the client, related to that tasks/result (on its stream),
// with _meta related-task; each answer (Server::on_response) is stored as tasks/update stores
// one at 2026-07-28, and once all are in the task runs on. Status changes go out as
// notifications/tasks/status (held while the session's channel is busy).
#include "tasks_internal.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr const char* kStatus[] = {"", "working", "input_required", "completed", "failed", "cancelled"};

bool terminal(uint8_t state) { return state >= TaskSlot::kCompleted; }

// A question's params with _meta related-task first.
struct RelatedParams {
  Value params;
  StrView task_id;
};
void write_related_params(json::Writer& w, const void* ctx) {
  const auto* p = static_cast<const RelatedParams*>(ctx);
  w.begin_object();
  w.key("_meta");
  w.begin_object();
  w.key(EMCP_RELATED_TASK_KEY);
  w.begin_object();
  w.member_str("taskId", p->task_id);
  w.end_object();
  w.end_object();
  for (Value a : p->params.members()) {
    if (a.key() == "_meta") continue;
    w.key(a.key());
    json::write_value(w, a);
  }
  w.end_object();
}

// How long the server waits for the client's answer (as Server::elicit, sample, list_roots).
uint32_t answer_timeout_ms(StrView method) {
  return method == "elicitation/create" ? 300000 : method == "sampling/createMessage" ? 60000 : 30000;
}

}  // namespace

// ---- tools/call ---------------------------------------------------------------------------------

bool TaskCode::call_2025(Server& sv, Session& s, const Message& m, Reply& r) {
  const Value task = m.params["task"];
  const Tool* named = ServerCode::tool_named(sv, m.params["name"].as_string().value_or(StrView()));
  if (named == nullptr || (!task.exists() && named->task_support != TaskSupport::kRequired))
    return false;  // an ordinary call (or an error tools/call gives)
  Value args;
  const Tool* checked = ServerCode::tool_to_call(sv, m, r, &args);
  if (checked == nullptr) return true;  // answered: the arguments
  const Tool& tool = *checked;
  // basic/utilities/tasks, "Tool-Level Negotiation": -32601 both ways.
  if (!task.exists()) {
    if (tool.task_support != TaskSupport::kRequired) return false;  // an ordinary call
    r.reject(ErrorCode::kMethodNotFound,
             {"tool \"", tool.name, "\" runs only as a task (execution.taskSupport \"required\"): call it with params.task"});
    return true;
  }
  if (tool.task_support == TaskSupport::kForbidden) {
    r.reject(ErrorCode::kMethodNotFound,
             {"tool \"", tool.name, "\" does not run as a task (execution.taskSupport \"forbidden\"): call it without params.task"});
    return true;
  }
  const Value ttl = task["ttl"];
  if (!task.is_object() || (ttl.exists() && !(ttl.is_int() && ttl.as_int().value() >= 0))) {
    r.reject(ErrorCode::kInvalidParams, {"task must be an object whose ttl, if given, is a non-negative integer (milliseconds)"});
    return true;
  }
  // The client may ask for less time than the policy's, never for more (Receivers MAY override).
  uint32_t ttl_ms = sv.tasks_->policy_.ttl_ms;
  if (ttl.exists() && ttl.as_int().value() < static_cast<int64_t>(ttl_ms))
    ttl_ms = ttl.as_int().value() > 0 ? static_cast<uint32_t>(ttl.as_int().value()) : 1;
  TaskSlot* t = create(sv, r, &tool, &s, ttl_ms);
  if (t == nullptr) return true;
  json::Writer& w = r.result_object();
  w.key("task");
  w.begin_object();
  write(sv, w, *t, false);
  w.end_object();
  w.end_object();
  r.end();
  run(sv, *t, Value(), &args);
  return true;
}

// ---- tasks/get, tasks/result, tasks/list, tasks/cancel ------------------------------------------

namespace {
// What tasks/result returns for a task that ended: exactly what the call would have returned
// (a stored error object is read back in `arena` for its code).
void answer_ended(Reply& r, const TaskSlot& t, Arena& arena) {
  const StrView text(t.buf, t.text_len);
  if (t.state == TaskSlot::kCancelled) {
    r.error(ErrorCode::kInternalError, {"Task ", StrView(t.id, TaskSlot::kIdLen), " was cancelled: it has no result"});
  } else if (t.error_answer) {
    const int64_t code = task_parse(text, arena)["code"].as_int().value_or(static_cast<int64_t>(ErrorCode::kInternalError));
    r.error_object(static_cast<ErrorCode>(code), text);
  } else {
    r.result().raw(text);
    r.end();
  }
}
}  // namespace

bool TaskCode::for_session(const Server& sv, const Session& s) { return sv.has_tools_ && supports(s.version(), Feature::kTasks); }

bool TaskCode::methods_2025(Server& sv, Session& s, const Message& m, Reply& r) {
  if (!for_session(sv, s)) return false;  // other revisions: ordinary calls, -32601 for tasks/*
  if (m.method == "tools/call") return call_2025(sv, s, m, r);
  return requests_2025(sv, s, m, r);
}

bool TaskCode::requests_2025(Server& sv, Session& s, const Message& m, Reply& r) {
  const StrView method = m.method;
  const bool get = method == "tasks/get", result = method == "tasks/result", list = method == "tasks/list",
             cancel = method == "tasks/cancel";
  if (!(get || result || list || cancel)) return false;  // -32601
  expire(sv);
  TaskStore& st = *sv.tasks_;
  if (list) {  // the session's tasks, oldest slot first
    size_t total = 0;
    for (size_t i = 0; i < st.count_; ++i) total += st.slots_[i].state != TaskSlot::kFree && st.slots_[i].session == &s;
    size_t start = 0;
    if (!ServerCode::page_start(m, r, total, &start)) return true;
    json::Writer& w = begin_page(r, "tasks");
    size_t seen = 0, shown = 0;
    for (size_t i = 0; i < st.count_; ++i) {
      const TaskSlot& t = st.slots_[i];
      if (t.state == TaskSlot::kFree || t.session != &s) continue;
      if (seen++ < start || shown == sv.page_size_) continue;
      w.begin_object();
      write(sv, w, t, false);
      w.end_object();
      ++shown;
    }
    end_page(r, w, start + shown, total);
    return true;
  }
  const Result<StrView> id = m.params["taskId"].as_string();
  if (!id.ok()) {
    r.reject(ErrorCode::kInvalidParams, {"taskId must be a string"});
    return true;
  }
  TaskSlot* t = find(sv, id.value());
  if (t == nullptr || t->session != &s) {
    r.reject(ErrorCode::kInvalidParams, {"Failed to retrieve task: no task \"", id.value(),
                                         "\" in this session (unknown, or expired)"});
    return true;
  }
  if (cancel) {
    if (terminal(t->state)) {
      r.reject(ErrorCode::kInvalidParams, {"Cannot cancel task: already in terminal status '", kStatus[t->state], "'"});
      return true;
    }
    if (Deferred* d = sv.deferred(t->work)) d->cancelled = true;  // the application sees cancelled()
    t->answers_len = 0;
    t->args_len = 0;
    touch(sv, *t, TaskSlot::kCancelled);
    settle(sv, *t);  // a waiting tasks/result learns it first
  }
  if (result) {
    if (terminal(t->state)) {
      Arena arena(Span<uint8_t>(st.arena_, st.arena_size_));
      answer_ended(r, *t, arena);
      return true;
    }
    const Deferred* waiting = sv.deferred(t->waiter);
    if (waiting != nullptr && !waiting->cancelled) {
      r.error(ErrorCode::kInternalError, {"a tasks/result for task ", id.value(), " is already waiting; one at a time"});
      return true;
    }
    if (waiting != nullptr) sv.deferred_[t->waiter.slot].used = false;  // its stream is gone
    const int i = ServerCode::hold_request(sv, &s, m.id, r.peer(), Value(), nullptr);
    if (i < 0) {
      r.error(ErrorCode::kInternalError, {"The server is busy: ", static_cast<long long>(EMCP_MAX_DEFERRED),
                                          " requests are already held (EMCP_MAX_DEFERRED). Poll tasks/get."});
      return true;
    }
    t->waiter = Pending{static_cast<uint16_t>(i), sv.deferred_[i].generation};
    r.suppress();
    settle(sv, *t);  // its questions go out on this request's stream now
    return true;
  }
  json::Writer& w = r.result_object();
  write(sv, w, *t, false);
  w.end_object();
  r.end();
  return true;
}

// ---- The waiting tasks/result -------------------------------------------------------------------

void TaskCode::settle(Server& sv, TaskSlot& t) {
  Deferred* d = sv.deferred(t.waiter);
  if (d == nullptr || d->cancelled) {  // none, or the client went away from it
    if (d != nullptr) d->used = false;
    t.waiter = Pending{};
    return;
  }
  Session& ws = *d->session;
  if (ws.open_) return;  // busy: poll() comes back
  const Id id = d->id.id();
  if (terminal(t.state)) {
    const Peer peer = d->peer;
    d->used = false;
    t.waiter = Pending{};
    Reply r(ws, peer, id, nullptr);
    const CurrentRequest current(sv, ws, id);
    Arena arena(Span<uint8_t>(sv.tasks_->arena_, sv.tasks_->arena_size_));
    answer_ended(r, t, arena);
    return;
  }
  if (t.state != TaskSlot::kInputRequired) return;
  Arena arena(Span<uint8_t>(sv.tasks_->arena_, sv.tasks_->arena_size_));
  const Value asked = task_parse(StrView(t.buf, t.text_len), arena);
  const CurrentRequest current(sv, ws, id);  // on the stream of the tasks/result
  size_t k = 0;
  for (Value a : asked.members()) {
    const size_t i = k++;
    if (i >= EMCP_INPUT_ASKS || t.keys[i] == 0 || (t.sent & (1u << i)) != 0) continue;
    const StrView method = a["method"].as_string().value_or(StrView());
    const RelatedParams params{a["params"], StrView(t.id, TaskSlot::kIdLen)};
    if (ServerCode::send_request(sv, ws, method, &write_related_params, &params, &TaskCode::input_answer, &t.keys[i],
                     answer_timeout_ms(method)) != Status::kOk)
      return;  // the outgoing table is full or the channel busy: poll() comes back
    t.sent = static_cast<uint8_t>(t.sent | (1u << i));
  }
}

// Questions still out are withdrawn (the client is told when `tell`): their answers would find
// no task, or another task in the same slot.
void TaskCode::withdraw(Server& sv, TaskSlot& t, bool tell) {
  for (Outgoing& o : sv.outgoing_) {
    if (!o.used || o.done != &TaskCode::input_answer) continue;
    const uint32_t* key = static_cast<const uint32_t*>(o.ctx);
    if (key < t.keys || key >= t.keys + EMCP_INPUT_ASKS) continue;
    o.used = false;
    if (tell) ServerCode::send_cancelled(sv, *o.session, o.id, "the task ended");
  }
  t.sent = 0;
}

void TaskCode::end_waiter(Server& sv, TaskSlot& t) {
  withdraw(sv, t, true);
  Deferred* d = sv.deferred(t.waiter);
  t.waiter = Pending{};
  if (d == nullptr) return;
  d->used = false;
  if (d->cancelled) return;
  const Id id = d->id.id();
  if (d->session->open_) return ServerCode::request_event(*d->session, id, Channel::RequestEvent::kDone);  // unanswered
  Reply r(*d->session, d->peer, id, nullptr);
  const CurrentRequest current(sv, *d->session, id);
  r.reject(ErrorCode::kInvalidParams, {"Failed to retrieve task: task ", StrView(t.id, TaskSlot::kIdLen),
                                       " expired before it ended (its ttl)"});
}

void TaskCode::input_answer(const Response& resp, void* ctx) {
  Server& sv = *resp.session->server_;
  const uint32_t* key = static_cast<const uint32_t*>(ctx);
  TaskSlot* t = nullptr;
  for (size_t i = 0; i < sv.tasks_->count_ && t == nullptr; ++i) {
    TaskSlot& slot = sv.tasks_->slots_[i];
    if (key >= slot.keys && key < slot.keys + EMCP_INPUT_ASKS) t = &slot;
  }
  if (t == nullptr || t->session == nullptr || t->state != TaskSlot::kInputRequired || *key == 0) return;
  const size_t i = static_cast<size_t>(key - t->keys);
  t->sent = static_cast<uint8_t>(t->sent & ~(1u << i));
  if (resp.outcome == Response::Outcome::kClosed) return;  // asked again on the next tasks/result
  if (resp.outcome == Response::Outcome::kResult) {
    const uint32_t h = *key;
    answer(sv, *t, &h, &resp.result, 1);
  } else {
    // A question refused or left unanswered ends the call, as the InputBridge ends a call's.
    Arena arena(Span<uint8_t>(sv.tasks_->arena_, sv.tasks_->arena_size_));
    const Value asked = task_parse(StrView(t->buf, t->text_len), arena);
    StrView name, method;
    size_t k = 0;
    for (Value a : asked.members()) {
      if (k++ != i) continue;
      name = a.key();
      method = a["method"].as_string().value_or(StrView());
    }
    char why[96];
    (void)format_text(why, sizeof why, {resp.outcome == Response::Outcome::kTimeout ? "it did not answer in time" : "",
                                        resp.outcome == Response::Outcome::kError ? resp.message : StrView()});
    fail(sv, *t, {"The client did not give input \"", name, "\" (", method, "): ", StrView(why)}, true);
  }
  settle(sv, *t);
}

// ---- Status notifications and the session's end -------------------------------------------------

void TaskCode::notify(Server& sv, Session& s, StrView id) {
  if (sv.must_hold(s)) {
    (void)sv.hold(s, [](Server& server, Session& s2, const HeldHead& h) { notify(server, s2, h.a()); }, LogLevel{}, id);
    return;
  }
  const TaskSlot* t = find(sv, id);
  if (t == nullptr || t->session != &s) return;  // gone meanwhile
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, Id{}, false});
  if (!open_or_count(out, sv.notifications_dropped_)) return;
  json::Writer& w = out.w();
  jsonrpc::begin_notification(w, "notifications/tasks/status");
  w.begin_object();
  write(sv, w, *t, false);
  w.end_object();
  jsonrpc::end_message(w);
}

// The session ends (or starts afresh): its tasks end, without a word to it.
void TaskCode::forget(Server& sv, Session& s) {
  for (size_t i = 0; i < sv.tasks_->count_; ++i) {
    TaskSlot& t = sv.tasks_->slots_[i];
    if (t.state == TaskSlot::kFree || t.session != &s) continue;
    if (Deferred* d = sv.deferred(t.work)) d->cancelled = true;
    if (Deferred* d = sv.deferred(t.waiter)) d->used = false;
    withdraw(sv, t, false);
    t.work = Pending{};
    t.waiter = Pending{};
    t.state = TaskSlot::kFree;
  }
}

const TaskOpsLegacy TaskCode::kOps2025 = {
    // basic/utilities/tasks, "Server Capabilities": task-augmented tools/call, list, cancel.
    [](const Server& sv, json::Writer& w, const Session& s) {
      w.key("capabilities");
      w.begin_object();
      write_capability_members(w, s.peer_);
      if (for_session(sv, s)) {
        w.key("tasks");
        w.raw(R"({"list":{},"cancel":{},"requests":{"tools":{"call":{}}}})");
      }
      w.end_object();
    },
    // "Tool-Level Negotiation": absent means "forbidden".
    [](json::Writer& w, const Tool& t, Version v) {
      if (t.task_support == TaskSupport::kForbidden || !supports(v, Feature::kTasks)) return;
      w.key("execution");
      w.raw(t.task_support == TaskSupport::kRequired ? R"({"taskSupport":"required"})" : R"({"taskSupport":"optional"})");
    },
};

}  // namespace mcp
EMCP_NS_END
