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

// The server's answers to requests: static functions of one struct (a friend of Server and of
// the classes whose private members they fill in) rather than members of Server, so that what
// only these files use (Reply among it) stays out of the public header. Each is in the file
// that serves its method.
struct ServerCode {
  using Deferred = Server::Deferred;
  using Outgoing = Server::Outgoing;
  using Listen = Server::Listen;
  using HeldHead = Server::HeldHead;
  // dispatch.cpp: a message, a request of the legacy era, what both eras serve (tools,
  // resources, prompts, completion, tasks, as the reply's peer has them).
  static void handle_message(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_request(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void serve_features(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  // modern.cpp: a request of the 2026-07-28 era, server/discover; listen.cpp: subscriptions/listen.
  static void serve_modern(Server& sv, Session& s, const jsonrpc::Message& m);
  static void on_discover(Server& sv, Reply& r);
  static void on_listen(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_initialize(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);  // session.cpp
  static void on_set_level(Session& s, const jsonrpc::Message& m, Reply& r);  // logging.cpp
  // tools.cpp.
  static void on_tools_list(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_tools_call(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  // The tool a tools/call names, its arguments checked (nullptr: `r` has the error).
  static const Tool* tool_to_call(Server& sv, const jsonrpc::Message& m, Reply& r, json::Value* arguments);
  static void run_tool(ToolCall& call, Reply& r);
  // resources.cpp, prompts.cpp (FeatureOps::kResources, kPrompts), completion.cpp.
  static bool resource_methods(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_resources_list(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_templates_list(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_resources_read(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_subscribe(Session& s, const jsonrpc::Message& m, Reply& r, bool on);
  static bool prompt_methods(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_prompts_list(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_prompts_get(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static void on_complete(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  // lists.cpp: a */list request's cursor (false: `r` has the error).
  static bool page_start(const jsonrpc::Message& m, Reply& r, size_t total, size_t* start);
  // dispatch.cpp: what one input held; a notification. client_requests.cpp: a response to the
  // server's request, the requests of a session that ends or time out, a cancellation of one.
  static void handle_input(Server& sv, Session& s, const jsonrpc::Decoded& d);
  static void on_notification(Server& sv, Session& s, const jsonrpc::Message& m);
  static void on_response(Server& sv, Session& s, const jsonrpc::Message& m);
  static Status send_request(Server& sv, Session& s, StrView method, ParamsFn params, const void* params_ctx,
                             ResponseFn done, void* done_ctx, uint32_t timeout_ms);
  static void close_outgoing(Server& sv, Session& s);
  static void expire_outgoing(Server& sv);
  // notifications/cancelled of the server's own request `request_id` to `s`.
  static void send_cancelled(Server& sv, Session& s, int64_t request_id, const char* reason);
  // listen.cpp: notifications/cancelled of a listen on `s` (stdio): it ends, unanswered. True
  // when a listen on `s` wants the list change `lists` (uri_hash 0) or updates of the URI hashed
  // `uri_hash`; `method` to each such listen on `s`, tagged with its subscriptionId.
  static void cancel_listen(Server& sv, Session& s, json::Value request_id);
  static bool listening(const Server& sv, const Session& s, uint8_t lists, uint32_t uri_hash);
  static void notify_listens(Server& sv, Session& s, const char* method, uint8_t lists, uint32_t uri_hash,
                             StrView uri);
  static void write_tool(Server& sv, json::Writer& w, const Tool& t, Version v);  // tools.cpp
  // The tool or prompt of that name in the application's table (nullptr: none; server.cpp).
  static const Tool* tool_named(const Server& sv, StrView name);
  static const Prompt* prompt_named(const Server& sv, StrView name);
  // notify.cpp, logging.cpp: list changes, resource updates, progress, log messages.
  static void list_changed(Server& sv, ListKind kind);
  static void send_list_changed(Server& sv, Session& s, ListKind kind);
  static void send_updated(Server& sv, Session& s, StrView uri);
  static Status notify_progress(Server& sv, Session& s, Version v, const jsonrpc::Id& token, double done,
                                double total, StrView msg, const jsonrpc::Id& related);
  static Status send_log(Server& sv, Session& s, const Peer& p, LogLevel level, StrView message, StrView logger,
                         const jsonrpc::Id& related);
  // deferred.cpp: holds request `id` of session `s` (nullptr: a task's work, which no connection
  // waits for) in the deferred table: a deferred call, one an InputBridge asks for, a task's.
  // Its entry, or -1 when all EMCP_MAX_DEFERRED are taken.
  static int hold_request(Server& sv, Session* s, const jsonrpc::Id& id, const Peer& peer, json::Value progress,
                          const Tool* tool);
  // inputs.cpp: the key of the MAC over each requestState, drawn from the platform's random
  // source when first needed, in storage of inputs.cpp (linked only by an application that
  // asks); a restart makes every earlier state invalid.
  static const uint8_t* state_key(Server& sv);
  // Tells session `s`'s channel what became of its request `id` (Channel::request).
  static void request_event(Session& s, const jsonrpc::Id& id, Channel::RequestEvent event) {
    if (s.channel_.request != nullptr && s.server_ != nullptr && id.present())
      s.channel_.request(s.channel_.ctx, id, event);
  }
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
