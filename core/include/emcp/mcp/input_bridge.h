// emcp/mcp/input_bridge.h - storage with which one handler API asks clients of every revision.
//
// A handler asks for input through Inputs (ToolCall::input(), PromptGet::input(),
// ResourceRead::input(): elicit, sample, list_roots, keep) and returns; it runs again with the
// answers. A 2026-07-28 client carries the round itself (an input-required result, then its
// retry). A client of 2024-11-05 to 2025-11-25 is asked with server-to-client requests
// (elicitation/create, sampling/createMessage, roots/list) when the application gave the server
// an InputBridge: the bridge holds the request meanwhile (a slot: what the handler needs of the
// request, the round's questions, its answers) and runs the handler again once the last answer
// has come, with the same id and the answers where a modern retry has them (Inputs::answer()).
// Without a bridge, such a client cannot be asked (the asks return false).
//
// A slot is taken at a request's first ask and freed when its answer is sent; the request's
// `name`/`uri`, `arguments` and `_meta` are copied into the slot's arena, and each answer but
// the round's last (which is read where it arrived). What does not fit makes the ask return
// false (the request's own members) or ends the request with an error naming the arena (an
// answer). A client that refuses an ask (an error response), does not answer in time (the
// Server::elicit(), sample() and list_roots() timeouts) or closes ends the request: an isError
// result for a tool, -32603 for a prompt or resource. A client's notifications/cancelled of the
// request cancels its asks. Each slot also holds one of the server's EMCP_MAX_DEFERRED entries
// while it waits (the request is then pending like a deferred tool call).
//
// Context: the server's loop. One bridge per server.
//
// Example:
//   static emcp::mcp::StaticInputBridge<2, 512> bridge;   // 2 requests asking at once
//   server.set_input_bridge(bridge);
#ifndef EMCP_MCP_INPUT_BRIDGE_H
#define EMCP_MCP_INPUT_BRIDGE_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/value.h"
#include "emcp/opt.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace mcp {

class Server;
class InputBridge;
struct BridgeSlot;

/// One question of a round (internal to the bridge).
struct BridgeAsk {
  enum State : uint8_t { kFree, kPending, kAnswered };
  BridgeSlot* slot = nullptr;
  json::Node* answer = nullptr;  // kAnswered: its copy in the slot's arena (nullptr: the live one)
  const char* method = "";       // what was sent
  char key[EMCP_INPUT_KEY_MAX];
  uint8_t key_len = 0;
  State state = kFree;
};

/// One request waiting for its answers (internal to the bridge).
struct BridgeSlot {
  InputBridge* bridge = nullptr;
  Arena* arena = nullptr;
  Arena::Mark params_end{0};      // the copied request members end here; answers follow
  json::Node* members = nullptr;  // the copies of name/uri, arguments, _meta (linked)
  json::Node* last_member = nullptr;
  uint16_t hold = 0;              // its entry in the server's deferred table while `held`
  uint8_t method = 0;             // 0 tools/call, 1 prompts/get, 2 resources/read
  uint8_t round = 0;
  uint8_t pending = 0;            // asks not answered yet
  uint8_t kept_len = 0;
  bool used = false;
  bool held = false;
  bool ready = false;             // every answer is in: the handler runs again from Server::poll()
  uint8_t kept[EMCP_REQUEST_STATE_MAX != 0 ? EMCP_REQUEST_STATE_MAX : 1];
  BridgeAsk asks[EMCP_INPUT_ASKS];
};

/// What a server needs to ask clients of the stateful revisions (see above). Use
/// StaticInputBridge, which carries the storage.
class InputBridge {
 public:
  InputBridge(const InputBridge&) = delete;
  InputBridge& operator=(const InputBridge&) = delete;
  /// Requests waiting for answers now.
  size_t in_use() const;
  /// The most arena bytes one slot has used (for the memory reports).
  size_t arena_high_water() const;

 protected:
  InputBridge(BridgeSlot* slots, uint8_t count) : slots_(slots), count_(count) {}

 private:
  friend class Server;
  friend struct BridgeCode;  // core/src/mcp/input_bridge_internal.h
  Server* server_ = nullptr;
  BridgeSlot* slots_;
  uint8_t count_;
  BridgeSlot* replaying_ = nullptr;  // the slot whose request runs again now
};

/// `Slots` requests asking at once, each with `ArenaBytes` for its members and answers (about
/// 24 bytes per JSON value plus its text on 32-bit targets, 40 on 64-bit).
template <size_t Slots = 2, size_t ArenaBytes = 512>
class StaticInputBridge : public InputBridge {
  static_assert(Slots >= 1 && Slots <= 64, "1 to 64 slots");
  static_assert(ArenaBytes >= 64, "an arena of 64 bytes at least");

 public:
  StaticInputBridge() : InputBridge(slots_, static_cast<uint8_t>(Slots)) {
    for (size_t i = 0; i < Slots; ++i) {
      slots_[i].bridge = this;
      slots_[i].arena = &arenas_[i];
      for (BridgeAsk& a : slots_[i].asks) a.slot = &slots_[i];
    }
  }

 private:
  BridgeSlot slots_[Slots];
  StaticArena<ArenaBytes> arenas_[Slots];
};

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_INPUT_BRIDGE_H
