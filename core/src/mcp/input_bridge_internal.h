// Internal: the InputBridge's code (input_bridge.cpp; emcp/mcp/input_bridge.h), what Inputs
// (inputs.cpp) and the server reach it through. Linked only by an application that calls
// Server::set_input_bridge(): the server holds it in its feature table.
#ifndef EMCP_SRC_MCP_INPUT_BRIDGE_INTERNAL_H
#define EMCP_SRC_MCP_INPUT_BRIDGE_INTERNAL_H

#include "server_internal.h"

EMCP_NS_BEGIN
namespace mcp {

// The bridge in the server's features (FeatureOps::kBridgeSlot): its event hook drops the
// questions of a request the client cancelled (kMessage) and runs again the requests whose
// answers are all in (kPoll). Two hooks more, each with one caller on the path of a request that asks
// (Inputs::settle, Inputs::begin), are typed here rather than squeezed into FeatureOps.
struct BridgeOps : FeatureOps {
  bool (*settle)(Server& sv, Inputs& in);  // after a handler that asked a legacy client
  void (*resume)(Server& sv, Inputs& in);  // a handler starts: is it running again?
};

// The bridge's functions, static members of one struct so that Server, Inputs, ToolCall,
// Session and InputBridge each name it once as a friend (their private members are what the bridge works on).
struct BridgeCode {
  using Deferred = Server::Deferred;
  using Outgoing = Server::Outgoing;
  // A question for ask `key` of the request `in` (Inputs::elicit, sample, list_roots): takes
  // the request's slot at its first ask; nullptr (and `in` says why) when it cannot be asked.
  static BridgeAsk* ask(Server& sv, Inputs& in, StrView key, const char* method);
  // After Server::elicit(), sample() or list_roots() sent (or not) ask `a`.
  static bool sent(Server& sv, Inputs& in, BridgeAsk* a, Status status);
  // A slot for the request `in`, its members copied (nullptr: none free, or they do not fit).
  static BridgeSlot* take(Server& sv, Inputs& in);
  static void give_back(Server& sv, Inputs& in);
  static void release(Server& sv, BridgeSlot& slot);
  // The client's answer to an ask (ResponseFn; `ctx` is the BridgeAsk).
  static void answer(const Response& r, void* ctx);
  static void replay(Server& sv, BridgeSlot& slot, json::Value live, BridgeAsk* live_ask);
  static void fail(Server& sv, BridgeSlot& slot, std::initializer_list<TextPiece> why);
  static void drop_asks(Server& sv, BridgeSlot& slot, const char* reason);
  static bool settle(Server& sv, Inputs& in);
  static const BridgeOps kOps;
  // The bridge set_input_bridge() installed (nullptr: none).
  static const BridgeOps* ops(const Server& sv) {
    return static_cast<const BridgeOps*>(FeatureOps::at(sv, FeatureOps::kBridgeSlot));
  }
};

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_SRC_MCP_INPUT_BRIDGE_INTERNAL_H
