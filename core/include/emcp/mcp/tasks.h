// emcp/mcp/tasks.h - MCP tasks: a tool call the client polls for instead of waiting on it.
//
// At 2026-07-28 this is the extension io.modelcontextprotocol/tasks (SEP-2663): the server
// decides, per call, to answer a tools/call with a CreateTaskResult (resultType "task"); the
// client then polls tasks/get, answers the task's input requests with tasks/update and may
// cancel it with tasks/cancel. Only a client whose request declared the extension in its
// `_meta` capabilities gets a task.
//
// A task is a deferred tool call (ToolCall::defer()) whose answer goes into the task's slot
// instead of to the client: a tool declared with Tool::runs_as_task() that defers, for a
// client that allows tasks, gets a task; Server::complete() later captures its result (the
// JSON of the CallToolResult, or of the JSON-RPC error) into the slot's buffer, where tasks/get
// finds it. A completion that asks for input (ToolCall::input().elicit() ...) puts the task in
// "input_required"; once tasks/update has answered every question, the same completion
// function runs again with the answers (Inputs::answer(), accepted()), as an input round does.
//
// The storage is the application's: a StaticTaskStore<Tasks, ResultBytes, ArenaBytes> handed to
// Server::set_tasks(); a server without one links none of this (--gc-sections). Limits, each a
// clear error and the server keeps serving: all slots taken (tools/call: -32603 naming the
// store), a result or the answers beyond ResultBytes (the task fails with -32603 saying so),
// input requests or answers whose tree does not fit ArenaBytes (the same), a task id unknown
// or expired (-32602). A task is freed ttl_ms after its creation (Server::poll()).
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
struct TaskOps;  // what the server reaches tasks through (core/src/mcp/server_internal.h)

/// How long tasks live and how often clients should poll (Server::set_tasks()).
struct TaskPolicy {
  uint32_t ttl_ms = 60000;           ///< ttlMs: freed this long after creation
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
  const Tool* tool = nullptr;
  void (*fn)(ToolCall& call, void* ctx) = nullptr;  ///< runs again when the answers are in
  void* ctx = nullptr;
  Pending work;              ///< the deferred call it waits for (invalid: none)
  Peer peer;                 ///< the creating request's client (revision, capabilities)
  uint32_t keys[EMCP_INPUT_ASKS] = {};  ///< FNV-1a of the open input requests' keys (0: none)
  char* buf = nullptr;       ///< result / error / inputRequests, then the answers so far
  uint16_t cap = 0;
  uint16_t text_len = 0;     ///< the result, error or inputRequests object
  uint16_t answers_len = 0;  ///< the answers object after it (input_required)
  State state = kFree;
  uint8_t round = 0;
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
  friend class ToolCall;
  const TaskOps* ops_ = nullptr;  // set by Server::set_tasks()
  TaskSlot* slots_;
  uint8_t count_;
  unsigned char* arena_;  // where stored input requests and answers are read back
  size_t arena_size_;
  TaskPolicy policy_;
  int running_ = -1;      // the slot whose completion runs now
};

/// `Tasks` slots of `ResultBytes` each for a result (its JSON), and one arena of `ArenaBytes`
/// shared by all to read back stored input requests and answers (a tree node is 24 bytes on a
/// 32-bit target). On a 32-bit target a slot costs about 130 bytes plus ResultBytes + 72.
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
  static constexpr size_t kEnvelope = 72;  // the answer's envelope while it is captured
  TaskSlot slots_[Tasks];
  char bufs_[Tasks][ResultBytes + kEnvelope];
  alignas(8) unsigned char arena_[ArenaBytes];
};

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_TASKS_H
