// Internal: what the files of the server share (core/src/mcp/*.cpp; not for applications).
#ifndef EMCP_SRC_MCP_SERVER_INTERNAL_H
#define EMCP_SRC_MCP_SERVER_INTERNAL_H

#include "emcp/mcp/server.h"
#include "reply.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace mcp {

// Names every file of the server uses.
using jsonrpc::ErrorCode;
using jsonrpc::Id;
using jsonrpc::Kind;
using jsonrpc::Message;
using json::Value;

// While a client request is handled (or a deferred one completed), what the server sends on
// that session relates to it.
struct CurrentRequest {
  CurrentRequest(Server& server, Session& s, const jsonrpc::Id& id)
      : server_(server), id_(server.current_), session_(server.current_session_) {
    server.current_ = id;
    server.current_session_ = &s;
  }
  ~CurrentRequest() {
    server_.current_ = id_;
    server_.current_session_ = session_;
  }
  CurrentRequest(const CurrentRequest&) = delete;
  CurrentRequest& operator=(const CurrentRequest&) = delete;
  Server& server_;
  jsonrpc::Id id_;
  Session* session_;
};

// What the server reaches one feature's code through (Server::features_). Each feature that
// is not always linked has one such table, in flash; what first uses the feature (its setter,
// the first request to a client, the first deferred call, the first ask) installs it in its
// slot, and the dispatcher, poll(), detach() and notifications/cancelled walk the slots in
// order. No code refers to a feature's functions but its table and its installer, so an image
// that never installs it links none of it (--gc-sections). A hook left nullptr: nothing to do.
//
// Two hooks, not one per event: a request (answered or not), and every other event, whose kind
// the feature's one function tells apart. Measured on the firmware images, a pointer per event
// (message, session, poll) cost up to 200 B more flash in the tables and the walks.
enum class FeatureEvent : uint8_t {
  kMessage,     // a notification, or a response to one of the server's requests, on `s`: `m`
  kEnding,      // detach(): session `s` ends (nothing is told to its channel)
  kRestarting,  // initialize again on `s`: its requests end (its channel is told)
  kEnded,       // after either (after the new initialize's answer): the server's requests to `s` end
  kPoll,        // Server::poll() (no session, no message)
};
struct FeatureOps {
  // A request to answer; true when answered. The feature checks what the reply's peer was
  // offered (Peer::resources, ::prompts).
  bool (*request)(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  void (*event)(Server& sv, FeatureEvent e, Session* s, const jsonrpc::Message* m);

  // The slots, in the order the walks take them: resources' and prompts' requests before the
  // tasks' (which take a 2025-11-25 tools/call with params.task before the tools do); deferred
  // calls marked cancelled before the InputBridge drops their questions and tasks forget
  // theirs; the requests to clients expire, then the inbox's posts run, before the bridge and
  // the tasks poll.
  enum Slot : uint8_t {
    kResourcesSlot,  // set_resources(), set_templates(): resources/*, completion/complete
    kPromptsSlot,    // set_prompts(): prompts/*, completion/complete
    kRootsSlot,      // on_roots_changed(): notifications/roots/list_changed
    kOutgoingSlot,   // the first request to a client: its answers, timeouts, a session's end
    kDeferredSlot,   // the first held request: notifications/cancelled, a session's end
    kStateSlot,      // the first ask of a 2026-07-28 request: requestState (StateOps)
    kInboxSlot,      // set_inbox(): what other threads posted
    kBridgeSlot,     // set_input_bridge() (BridgeOps, input_bridge_internal.h)
    kTasksSlot,      // set_tasks() (TaskOps, tasks_internal.h)
    kSlots
  };
  static_assert(kSlots == Server::kFeatureSlots, "Server::kFeatureSlots counts the slots");
  static const FeatureOps* at(const Server& sv, Slot slot) { return sv.features_[slot]; }
  static void install(Server& sv, Slot slot, const FeatureOps& ops) { sv.features_[slot] = &ops; }
  // Every installed feature's event hook, in slot order (server.cpp).
  static void walk(Server& sv, FeatureEvent e, Session* s = nullptr, const jsonrpc::Message* m = nullptr);
  // The tables of the features whose code is the server's own (resources.cpp, prompts.cpp,
  // client_requests.cpp, deferred.cpp, inbox.cpp).
  static const FeatureOps kResources, kPrompts, kRoots, kOutgoing, kDeferred, kInbox;
};

// Input rounds' requestState (inputs.cpp; kStateSlot): verify a retry's, write a round's. Until
// the first ask installs it, a presented state is refused. Each hook has one caller
// (Inputs::begin, Inputs::settle), typed here rather than squeezed into FeatureOps.
struct StateOps : FeatureOps {  // (no request, no event)
  bool (*verify)(Inputs& in, StrView state, const char** why);
  void (*write)(Inputs& in, json::Writer& w);
};

// A notification that cannot go out (the channel is busy with another message, or closed) is
// counted in `dropped` (Server::notifications_dropped()).
inline bool open_or_count(Outbound& out, uint32_t& dropped) {
  if (out.open()) return true;
  ++dropped;
  return false;
}

// The head of a held entry; its texts follow. Entries start aligned for it.
struct Server::HeldHead {
  Session* session;
  Resend resend;
  uint16_t size;   // the whole entry, padding included
  uint16_t a_len;
  uint16_t b_len;
  LogLevel level;  // or the list kind
  const char* text() const { return static_cast<const char*>(static_cast<const void*>(this + 1)); }
  StrView a() const { return StrView(text(), a_len); }
  StrView b() const { return StrView(text() + a_len, b_len); }
};

// What a ClientCapabilities object declares, as revision `v` reads it.
ClientCaps read_client_caps(json::Value caps, Version v);
// "capabilities":{...}: what the server offers peer `p` (its initialize answer, or
// server/discover's).
void write_capabilities(json::Writer& w, const Peer& p);
// The same without "capabilities":{ and }: what server/discover adds extensions to.
void write_capability_members(json::Writer& w, const Peer& p);
// The _meta key that ties a 2025-11-25 task's messages to it (basic/utilities/tasks, "Related
// Task Metadata"); a macro, so the literal joins the texts written around it.
#define EMCP_RELATED_TASK_KEY "io.modelcontextprotocol/related-task"
// The tasks extension's name (SEP-2663).
constexpr const char* kTasksExtension = "io.modelcontextprotocol/tasks";
// The `_meta` member of a 2026-07-28 request that holds the client's capabilities.
constexpr const char* kMetaCaps = "io.modelcontextprotocol/clientCapabilities";
// "extensions":{"io.modelcontextprotocol/tasks":{}}: the tasks extension as a capabilities
// object names it (server/discover's, and -32021's requiredCapabilities).
inline void write_tasks_extension(json::Writer& w) {
  w.key("extensions");
  w.begin_object();
  w.key(kTasksExtension);
  w.raw("{}");
  w.end_object();
}
// An Implementation object (serverInfo) as revision `v` has it.
void write_implementation(json::Writer& w, const ServerInfo& info, Version v);
// "_meta":{"io.modelcontextprotocol/serverInfo":{...}}: the server's identity in a 2026-07-28
// result, and the subscriptionId of the listen stream it closes when `subscription` is given.
void write_server_meta(json::Writer& w, const ServerInfo& info, const jsonrpc::Id* subscription = nullptr);
// "_meta":{"io.modelcontextprotocol/subscriptionId":<id>}: what every message of a listen
// stream carries.
void write_subscription_meta(json::Writer& w, const jsonrpc::Id& id);
// client_requests.cpp: `schema` can be an elicitation's requestedSchema at revision `v`.
bool elicit_schema_ok(Span<const Param> schema, Version v);
// Why a question (Inputs) to the client was not asked: `method` (elicitation/create,
// sampling/createMessage, roots/list) needs a capability the client did not declare.
inline const char* undeclared(const char* method) {
  return method[0] == 'e'   ? "the client did not declare the elicitation capability"
         : method[0] == 's' ? "the client did not declare the sampling capability"
                            : "the client did not declare the roots capability";
}
// The member of a request's params that names what it is about (Mcp-Name, the requestState's
// digest): "name" for tools/call and prompts/get, "uri" for resources/read, else nullptr.
// "taskId" for tasks/get, tasks/update and tasks/cancel (SEP-2663, "Routing Headers").
inline const char* name_field(StrView method) {
  return method == "resources/read"                        ? "uri"
         : method == "tools/call" || method == "prompts/get" ? "name"
         : method == "tasks/get" || method == "tasks/update" || method == "tasks/cancel" ? "taskId"
                                                             : nullptr;
}

// FNV-1a of a URI, never 0 (0 marks a free subscription slot): what a session's
// resources/subscribe and a listen's resourceSubscriptions keep of each URI.
inline uint32_t uri_hash(StrView s) {
  uint32_t h = 2166136261u;
  for (char c : s) {
    h ^= static_cast<uint8_t>(c);
    h *= 16777619u;
  }
  return h == 0 ? 1 : h;
}

// A request id given as a JSON value (notifications/cancelled's requestId); none (kNone) when
// it is neither an integer nor a string.
inline Id id_of(Value v) {
  if (v.is_int()) return Id::of(v.as_int().value());
  if (v.is_string()) return Id::of(v.as_string().value());
  return Id{};
}

// The bit of a list in Server::Listen::lists.
inline uint8_t list_bit(uint8_t kind) { return static_cast<uint8_t>(1u << kind); }

// A page of a */list result: begin_page() writes {"<key>":[ , the caller the entries, end_page()
// the end of the array, nextCursor when entries remain (`next` < `total`), and ends the answer.
json::Writer& begin_page(Reply& r, const char* key);
void end_page(Reply& r, json::Writer& w, size_t next, size_t total);

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_SRC_MCP_SERVER_INTERNAL_H
