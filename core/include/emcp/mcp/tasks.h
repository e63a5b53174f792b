// emcp/mcp/tasks.h - MCP tasks: a tool call the client polls for instead of waiting on it.
//
// Two wire forms over one store:
// - 2026-07-28: the extension io.modelcontextprotocol/tasks (SEP-2663). The server decides,
//   per call, to answer a tools/call with a CreateTaskResult (resultType "task"); the client
//   polls tasks/get (which carries the result, the error or the open input requests), answers
//   input requests with tasks/update and may cancel with tasks/cancel. Only a request that
//   declared the extension in its `_meta` capabilities gets a task.
// - 2025-11-25: the experimental tasks of that revision (basic/utilities/tasks). The server
//   offers capability tasks {list, cancel, requests.tools.call} and, per tool,
//   execution.taskSupport; the client asks for a task with params.task ({ttl}) on tools/call
//   and gets {"task":{...}} at once; tasks/get gives the Task, tasks/result waits for the end
//   and returns exactly what the call would have returned (with _meta related-task), tasks/list
//   the session's tasks, tasks/cancel cancels; notifications/tasks/status tells each change.
//   A task that needs input is input_required: its requests (elicitation, sampling, roots) go
//   to the client on the stream of its tasks/result, with _meta related-task, and the task
//   goes on when every one is answered. Tasks belong to the session that created them (no
//   other session sees them; they end with it). A forbidden tool called with params.task, and
//   a required one called without, are -32601; a tool result with isError makes the task
//   "failed" (its tasks/result is still that result).
//
// A task is a tool call whose answer goes into the task's slot instead of to the client: a
// tool declared with Tool::runs_as_task() that defers, for a 2026-07-28 client that allows
// tasks; any call of such a tool that a 2025-11-25 client made with params.task (its handler
// runs with the task's channel from the start). Server::complete() on the deferred call later
// captures its result (the JSON of the CallToolResult, or of the JSON-RPC error) into the
// slot's buffer. A completion that asks for input (ToolCall::input().elicit() ..., and keep())
// puts the task in "input_required"; once every question is answered, the same completion
// function runs again with the answers (Inputs::answer(), accepted()) and what it kept, as an
// input round does. Progress and log messages of a task's call are not sent (the request
// that carried the token was answered with the task): clients poll.
//
// The storage is the application's: a StaticTaskStore<Tasks, ResultBytes, ArenaBytes> handed to
// Server::set_tasks(); a server without one links none of this (--gc-sections). Limits, each a
// clear error and the server keeps serving: all slots taken (tools/call: -32603 naming the
// store), a result or the answers beyond ResultBytes (the task fails with -32603 saying so),
// input requests or answers whose tree does not fit ArenaBytes (the same), a task id unknown,
// expired or another session's (-32602), a second tasks/result while one waits for the same
// task (-32603). A task is freed ttl_ms after its creation (Server::poll()); a 2025-11-25
// client may ask for less (params.task.ttl), never for more.
//
// Context: one loop (see emcp/mcp/server.h).
#ifndef EMCP_MCP_TASKS_H
#define EMCP_MCP_TASKS_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/mcp/handlers.h"
#include "emcp/mcp/session.h"
#include "emcp/opt.h"

EMCP_NS_BEGIN
namespace mcp {

class Server;

/// How long tasks live and how often clients should poll (Server::set_tasks()).
struct TaskPolicy {
  uint32_t ttl_ms = 60000;           ///< ttlMs (ttl): freed this long after creation; the most a
                                     ///< 2025-11-25 client's params.task.ttl may ask for
  uint32_t poll_interval_ms = 1000;  ///< pollIntervalMs
};

/// One task. Application code never touches it; its size is what a task costs.
struct TaskSlot {
  enum State : uint8_t { kFree, kWorking, kInputRequired, kCompleted, kFailed, kCancelled };
  static constexpr size_t kIdLen = 32;  ///< 16 random bytes in hex
  char id[kIdLen] = {};
  uint64_t created_ms = 0;   ///< the platform's clock
  uint64_t updated_ms = 0;
  uint64_t created_s = 0;    ///< wall clock (Platform::unix_time_s, else seconds of the clock)
  uint64_t updated_s = 0;
  uint32_t ttl_ms = 0;       ///< TaskPolicy::ttl_ms, or less when the client asked (2025-11-25)
  const Tool* tool = nullptr;
  void (*fn)(ToolCall& call, void* ctx) = nullptr;  ///< runs again when the answers are in
  void* ctx = nullptr;
  Pending work;              ///< the deferred call it waits for (invalid: none)
  Peer peer;                 ///< the creating request's client (revision, capabilities)
  Session* session = nullptr;  ///< 2025-11-25: the session it belongs to (nullptr: 2026-07-28)
  Pending waiter;            ///< 2025-11-25: the tasks/result that waits for its end
  uint32_t keys[EMCP_INPUT_ASKS] = {};  ///< FNV-1a of the open input requests' keys (0: none)
  char* buf = nullptr;       ///< result / error / inputRequests, then arguments and answers
  uint16_t cap = 0;
  uint16_t text_len = 0;     ///< the result, error or inputRequests object
  uint16_t args_len = 0;     ///< the arguments after it (input_required, asked by the handler)
  uint16_t answers_len = 0;  ///< the answers object after them (input_required)
  State state = kFree;
  uint8_t round = 0;
  uint8_t sent = 0;          ///< 2025-11-25: bit i: input request keys[i] is out to the client
  bool error_answer = false; ///< failed with a JSON-RPC error (else a result, isError at 2025-11-25)
  uint8_t kept_len = 0;      ///< what the completion kept (Inputs::keep()) for its next round
  uint8_t kept[EMCP_REQUEST_STATE_MAX != 0 ? EMCP_REQUEST_STATE_MAX : 1] = {};
};

/// The tasks' storage, without its capacities (StaticTaskStore has them).
class TaskStore {
 public:
  TaskStore(const TaskStore&) = delete;
  TaskStore& operator=(const TaskStore&) = delete;
  /// Tasks held now (any state).
  size_t in_use() const;
  size_t capacity() const { return count_; }

 protected:
  TaskStore(TaskSlot* slots, uint8_t count, unsigned char* arena, size_t arena_size)
      : slots_(slots), count_(count), arena_(arena), arena_size_(arena_size) {}

 private:
  friend class Server;
  friend struct TaskCode;  // core/src/mcp/tasks_internal.h
  TaskSlot* slots_;
  uint8_t count_;
  unsigned char* arena_;  // where stored input requests and answers are read back
  size_t arena_size_;
  TaskPolicy policy_;
  int running_ = -1;      // the slot whose completion runs now
};

/// `Tasks` slots of `ResultBytes` each for a result (its JSON), and one arena of `ArenaBytes`
/// shared by all to read back stored input requests and answers (a tree node is 24 bytes on a
/// 32-bit target). On a 32-bit target a slot costs about 200 bytes plus ResultBytes + 136.
template <size_t Tasks = 4, size_t ResultBytes = 1024, size_t ArenaBytes = 2048>
class StaticTaskStore : public TaskStore {
  static_assert(Tasks >= 1 && Tasks <= 255, "1 to 255 tasks");
  static_assert(ResultBytes >= 64 && ResultBytes <= 60000, "64 to 60000 bytes per result");
  static_assert(ArenaBytes >= 256, "an arena of 256 bytes at least");

 public:
  StaticTaskStore() : TaskStore(slots_, static_cast<uint8_t>(Tasks), arena_, ArenaBytes) {
    for (size_t i = 0; i < Tasks; ++i) {
      slots_[i].buf = bufs_[i];
      slots_[i].cap = static_cast<uint16_t>(sizeof bufs_[i]);
    }
  }

 private:
  // The answer's envelope while it is captured, and a 2025-11-25 result's related-task _meta.
  static constexpr size_t kEnvelope = 136;
  TaskSlot slots_[Tasks];
  char bufs_[Tasks][ResultBytes + kEnvelope];
  alignas(8) unsigned char arena_[ArenaBytes];
};

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_TASKS_H
