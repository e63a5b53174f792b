// Internal: MCP tasks' code (tasks.cpp, tasks_store.cpp, tasks_run.cpp, tasks_2025.cpp;
// emcp/mcp/tasks.h) and what the server reaches it through: the TaskOps that set_tasks()
// installs, so an image that never calls it links none of it (--gc-sections).
#ifndef EMCP_SRC_MCP_TASKS_INTERNAL_H
#define EMCP_SRC_MCP_TASKS_INTERNAL_H

#include "server_internal.h"

EMCP_NS_BEGIN
namespace mcp {

// Tasks in the server's features (FeatureOps::kTasksSlot, set_tasks()): its request hook
// answers tasks/* (and a 2025-11-25 tools/call with params.task or of a tool that runs only as a
// task), its event hook forgets a 2025-11-25 session's tasks when the session ends, and on
// kPoll expires tasks and feeds the waiting tasks/result. The hooks below have one caller each (ToolCall::defer,
// Server::complete, subscriptions/listen, initialize, tools/list), so they are typed here
// rather than squeezed into FeatureOps.
struct TaskOpsLegacy;
struct TaskOps : FeatureOps {
  bool (*defer)(Server& sv, ToolCall& call, Pending* out);       // true: the call is a task's
  Status (*complete)(Server& sv, Pending p, Server::FinishFn fn, void* ctx);  // a task's deferred call
  // subscriptions/listen's notifications.taskIds `ids`: the slots of the tasks it will hear of
  // (false: `r` has the error); then the acknowledgement's "taskIds" for those slots.
  bool (*listen)(Server& sv, const jsonrpc::Message& m, Reply& r, json::Value ids, uint32_t* slots);
  void (*write_listened)(const Server& sv, json::Writer& w, uint32_t slots);
  const TaskOpsLegacy* legacy;  // 2025-11-25 (tasks_2025.cpp; nullptr with EMCP_LEGACY_ERA=0)
};
struct TaskOpsLegacy {
  // "capabilities":{...} of initialize, "tasks" among them for a 2025-11-25 session.
  void (*capabilities)(const Server& sv, json::Writer& w, const Session& s);
  // "execution":{...} of a tool in tools/list at `v` (2025-11-25, not forbidden).
  void (*execution)(json::Writer& w, const Tool& tool, Version v);
};

// The tasks' functions, static members of one struct so that Server, TaskStore, ToolCall,
// Inputs and Session each name it once as a friend (their private members are what tasks
// work on).
struct TaskCode {
  using Deferred = Server::Deferred;
  using Outgoing = Server::Outgoing;
  using Listen = Server::Listen;
  using FinishFn = Server::FinishFn;
  using HeldHead = Server::HeldHead;
  // tasks.cpp: tasks/get, tasks/update, tasks/cancel of 2026-07-28, listens.
  static bool methods(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void write(Server& sv, json::Writer& w, const TaskSlot& t, bool detailed);
  static bool listen(Server& sv, const jsonrpc::Message& m, Reply& r, json::Value ids, uint32_t* slots);
  static void notify_listens(Server& sv, const TaskSlot& t);  // notifications/tasks (2026-07-28)
  // tasks_store.cpp: the table.
  static void expire(Server& sv);
  static TaskSlot* find(Server& sv, StrView id);
  // A new task for the call answered by `r` (nullptr: `r` has the error), with its work entry.
  static TaskSlot* create(Server& sv, Reply& r, const Tool* tool, Session* owner, uint32_t ttl_ms);
  static void fail(Server& sv, TaskSlot& t, std::initializer_list<TextPiece> why, bool as_result = false);
  static void touch(Server& sv, TaskSlot& t, uint8_t state);
  static void release(Server& sv, TaskSlot& t);
  // tasks_run.cpp: runs the task's completion (or, with `args`, the tool's handler: a
  // 2025-11-25 task's start) with the task's channel, and keeps its answer.
  static void run(Server& sv, TaskSlot& t, json::Value answers, const json::Value* args = nullptr);
  // Stores answers to the task's open input requests; runs the completion once all are in.
  static void answer(Server& sv, TaskSlot& t, const uint32_t* hashes, const json::Value* values, size_t n);
  static bool defer(Server& sv, ToolCall& call, Pending* out);  // true: the call is a task's
  static Status complete(Server& sv, Pending p, FinishFn fn, void* ctx);
  // tasks_2025.cpp: 2025-11-25.
  static bool call_2025(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static bool methods_2025(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static bool requests_2025(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);  // tasks/*
  static bool for_session(const Server& sv, const Session& s);  // the session's client may use them
  static void settle(Server& sv, TaskSlot& t);       // answers or feeds the waiting tasks/result
  static void end_waiter(Server& sv, TaskSlot& t);   // its tasks/result: the task is gone
  static void withdraw(Server& sv, TaskSlot& t, bool tell);  // its questions still out
  static void notify(Server& sv, Session& s, StrView id);    // notifications/tasks/status
  static void input_answer(const Response& r, void* ctx);
  static void forget(Server& sv, Session& s);
  static const TaskOps kOps;
  // The TaskOps set_tasks() installed (nullptr: none; Server::tasks_ tells as much).
  static const TaskOps* ops(const Server& sv) {
    return static_cast<const TaskOps*>(FeatureOps::at(sv, FeatureOps::kTasksSlot));
  }
  static const TaskOpsLegacy kOps2025;
};

// tasks_store.cpp: the tree of the JSON `text` in `arena` (missing when it is not one JSON value
// or does not fit); what the arena held stays.
json::Value task_parse(StrView text, Arena& arena);
// A task in this state ended (completed, failed, cancelled).
bool task_is_terminal(uint8_t state);
// The request declared the tasks extension in its `_meta` capabilities.
bool task_declared(json::Value params);
// A 2025-11-25 task's result gets _meta related-task first: `rest` is the result object without
// its '{' (in t.buf, after where the text will start); false when it does not fit.
bool task_with_related_meta(TaskSlot& t, StrView rest);
// tasks_run.cpp: -32021 naming the extension ({"requiredCapabilities":{"extensions":{...}}}).
void task_refuse_without_extension(Reply& r, std::initializer_list<TextPiece> message);


}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_SRC_MCP_TASKS_INTERNAL_H
