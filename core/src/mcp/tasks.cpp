// MCP tasks (emcp/mcp/tasks.h): the 2026-07-28 extension io.modelcontextprotocol/tasks
// (SEP-2663) over the deferred calls (deferred.cpp) and the input rounds (inputs.cpp). The
// 2025-11-25 experimental tasks are tasks_2025.cpp.
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
// Reached only through the TaskOps that set_tasks() installs (tasks_internal.h).
//
// This file: tasks/get, tasks/update, tasks/cancel and the notifications/tasks of listen
// streams. The store is tasks_store.cpp, a task's run tasks_run.cpp.
#include "tasks_internal.h"

#include <string.h>

#include "emcp/json/reader.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr const char* kStates[] = {"", "working", "input_required", "completed", "failed", "cancelled"};

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

// The input request hashed `h` is still waiting for its answer.
bool still_open(const TaskSlot& t, uint32_t h) {
  for (uint32_t k : t.keys)
    if (k == h) return true;
  return false;
}

}  // namespace

// ---- tasks/get, tasks/update, tasks/cancel ------------------------------------------------------

void TaskCode::write(Server& sv, json::Writer& w, const TaskSlot& t, bool detailed) {
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
  w.member_int(legacy ? "pollInterval" : "pollIntervalMs", sv.tasks_->policy_.poll_interval_ms);
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
    Arena arena(Span<uint8_t>(sv.tasks_->arena_, sv.tasks_->arena_size_));
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

bool TaskCode::methods(Server& sv, Session& /*s*/, const Message& m, Reply& r) {
  const StrView method = m.method;
  const bool get = method == "tasks/get", update = method == "tasks/update", cancel = method == "tasks/cancel";
  if (!(get || update || cancel)) return false;  // tasks/result, tasks/list: -32601
  if (!task_declared(m.params)) {
    task_refuse_without_extension(
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
  expire(sv);
  TaskSlot* t = find(sv, id.value());
  if (t == nullptr || t->session != nullptr) {
    r.reject(ErrorCode::kInvalidParams, {"Failed to retrieve task: no task \"", id.value(), "\" (unknown, or expired)"});
    return true;
  }
  if (cancel && !task_is_terminal(t->state)) {
    if (Deferred* d = sv.deferred(t->work)) d->cancelled = true;  // the application sees cancelled()
    t->answers_len = 0;
    touch(sv, *t, TaskSlot::kCancelled);
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
    answer(sv, *t, hashes, values, n);
  }
  json::Writer& w = r.result_object();
  if (get) write(sv, w, *t, true);
  w.end_object();
  r.end();
  return true;
}

// ---- notifications/tasks on listen streams (SEP-2663, "Task Status Notifications") -------------

bool TaskCode::listen(Server& sv, const Message& m, Reply& r, Value ids, uint32_t* slots) {
  bool strings = ids.is_array();
  for (const Value v : ids.elements()) strings = strings && v.is_string();
  if (!strings) {
    r.reject(ErrorCode::kInvalidParams, {"notifications.taskIds must be an array of strings"});
    return false;
  }
  if (!task_declared(m.params)) {
    task_refuse_without_extension(r, {"notifications.taskIds needs client capability extensions[\"", kTasksExtension,
                                 "\"], which the request did not declare"});
    return false;
  }
  // The tasks it may hear of: those of this era that exist now, in the first 32 slots.
  expire(sv);
  for (const Value v : ids.elements()) {
    const TaskSlot* t = find(sv, v.as_string().value());
    const size_t i = t != nullptr ? static_cast<size_t>(t - sv.tasks_->slots_) : 32;
    if (i < 32 && t->session == nullptr) *slots |= 1u << i;
  }
  return true;
}

void TaskCode::notify_listens(Server& sv, const TaskSlot& t) {
  const size_t i = static_cast<size_t>(&t - sv.tasks_->slots_);
  if (i >= 32) return;
  for (Listen& l : sv.listens_) {
    if (l.session == nullptr || (l.tasks & (1u << i)) == 0) continue;
    const Id id = l.id.id();
    Outbound out(*l.session, OutMessage{OutMessage::Kind::kNotification, id, false});
    if (!open_or_count(out, sv.notifications_dropped_)) continue;
    json::Writer& w = out.w();
    jsonrpc::begin_notification(w, "notifications/tasks");
    w.begin_object();
    write_subscription_meta(w, id);
    write(sv, w, t, true);  // the DetailedTask tasks/get would give now
    w.end_object();
    jsonrpc::end_message(w);
  }
}

const TaskOps TaskCode::kOps = {
    {
        // tasks/* of the 2026-07-28 extension; for a 2025-11-25 session (tasks_2025.cpp) tasks/*
        // and a tools/call with params.task or of a tool that runs only as a task.
        [](Server& sv, Session& s, const Message& m, Reply& r) {
          if (r.peer().modern()) return methods(sv, s, m, r);
          return EMCP_LEGACY_ERA && methods_2025(sv, s, m, r);
        },
        [](Server& sv, FeatureEvent e, Session* s, const Message*) {
          // A 2025-11-25 session that ends or starts afresh: its tasks end with it.
          if (EMCP_LEGACY_ERA && (e == FeatureEvent::kEnding || e == FeatureEvent::kRestarting)) return forget(sv, *s);
          if (e != FeatureEvent::kPoll) return;
          // Expiry; the waiting tasks/result of 2025-11-25.
          expire(sv);
          if (!EMCP_LEGACY_ERA) return;
          for (size_t i = 0; i < sv.tasks_->count_; ++i)
            if (sv.tasks_->slots_[i].session != nullptr && sv.tasks_->slots_[i].state != TaskSlot::kFree)
              settle(sv, sv.tasks_->slots_[i]);
        },
    },
    [](Server& sv, ToolCall& call, Pending* out) { return defer(sv, call, out); },
    [](Server& sv, Pending p, FinishFn fn, void* ctx) { return complete(sv, p, fn, ctx); },
    &TaskCode::listen,
    [](const Server& sv, json::Writer& w, uint32_t slots) {
      w.key("taskIds");
      w.begin_array();
      for (size_t i = 0; i < sv.tasks_->count_ && i < 32; ++i)
        if ((slots & (1u << i)) != 0) w.string(StrView(sv.tasks_->slots_[i].id, TaskSlot::kIdLen));
      w.end_array();
    },
    EMCP_LEGACY_ERA ? &TaskCode::kOps2025 : nullptr,
};

}  // namespace mcp
EMCP_NS_END
