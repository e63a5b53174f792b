// emcp/mcp/server.h - the MCP server: lifecycle, capabilities, tools, resources, prompts,
// completions, logging, progress, cancellation, and requests to the client (sampling,
// elicitation, roots), over any transport.
//
// A Server holds the application's tables (constant data) and the bounded tables of work in
// flight (deferred tool calls, requests to clients). A Session is one client connection: its
// negotiated revision, the client's capabilities, its log level and subscriptions, and the
// Channel its outbound messages go to. Transports decode input with jsonrpc::Decoder and hand
// each decoded input to Server::handle(); the stdio transport (emcp/transport/line.h) does it
// for a byte stream.
//
// The API is in four headers, all included by this one: this one (the server object),
// emcp/mcp/handlers.h (what a handler works with: ToolCall, ResourceRead, PromptGet, Completion,
// ContentWriter), emcp/mcp/text.h (text pieces and number formatting) and emcp/mcp/session.h
// (what transports give the server: Session, Channel). What each protocol revision has is in
// emcp/mcp/revision.h.
//
// Output streams: a handler's result is written straight to the session's channel as it is
// produced (the envelope is started on the first write), so it is bounded by nothing but the
// channel. Notifications a handler sends (progress, log) go out before its result starts; once
// the result has started they are refused with kInvalidState (they would land inside it).
//
// Context: one loop. Every call here, and every handler, runs in the loop that calls handle()
// and poll() (the owner); nothing blocks. Other threads, tasks and interrupts hand work to it
// through the server's Inbox (emcp/mcp/inbox.h, docs/concurrency.md), never by calling here.
//
// Example (stdio, see examples/sensors):
//   static emcp::mcp::Server server(kInfo, emcp::posix::platform());  // or emcp::board::platform()
//   server.set_tools(kTools);
//   static emcp::transport::LineTransport<> stdio(server, &write_stdout, nullptr);
//   ... stdio.feed(bytes, n) as input arrives; server.poll() now and then ...
#ifndef EMCP_MCP_SERVER_H
#define EMCP_MCP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/value.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/jsonrpc/message.h"
#include "emcp/mcp/handlers.h"
#include "emcp/mcp/inbox.h"
#include "emcp/mcp/input_bridge.h"
#include "emcp/mcp/revision.h"
#include "emcp/mcp/schema.h"
#include "emcp/mcp/session.h"
#include "emcp/mcp/tasks.h"
#include "emcp/mcp/text.h"
#include "emcp/mcp/types.h"
#include "emcp/platform.h"

EMCP_NS_BEGIN
namespace mcp {

/// A number or a string, as request ids and progress tokens are. Holds a copy.
struct Token {
  jsonrpc::Id::Type type = jsonrpc::Id::Type::kNone;
  int64_t num = 0;
  uint16_t len = 0;
  char str[EMCP_JSONRPC_MAX_ID_LEN];

  bool present() const { return type == jsonrpc::Id::Type::kInt || type == jsonrpc::Id::Type::kString; }
  /// Copies `id` (kNone when it does not fit, which the decoder already prevents).
  void set(const jsonrpc::Id& id);
  jsonrpc::Id id() const;
};

/// N entries of T in place; none (and no bytes beyond the empty object's) when N is 0.
template <typename T, size_t N>
struct FixedTable {
  T items[N];
  T* begin() { return items; }
  T* end() { return items + N; }
  const T* begin() const { return items; }
  const T* end() const { return items + N; }
};
template <typename T>
struct FixedTable<T, 0> {
  T* begin() { return nullptr; }
  T* end() { return nullptr; }
  const T* begin() const { return nullptr; }
  const T* end() const { return nullptr; }
};

/// How long a 2026-07-28 client may keep a result (server/utilities/caching.mdx): ttlMs of
/// server/discover and the */list results, and of resources/read, and whether they may be
/// shared across authorization contexts (cacheScope "public") or not ("private").
struct CachePolicy {
  uint32_t list_ttl_ms = 60000;  ///< the tables are constants; set_*() changes them rarely
  uint32_t read_ttl_ms = 0;      ///< a reading is stale at once
  bool private_scope = false;    ///< true when results depend on who asks
};

/// The outcome of a request the server sent to a client.
struct Response {
  enum class Outcome : uint8_t { kResult, kError, kTimeout, kClosed };
  Outcome outcome = Outcome::kResult;
  json::Value result;        ///< kResult: valid during the callback only
  int64_t code = 0;          ///< kError
  StrView message;           ///< kError
  json::Value data;          ///< kError
  Session* session = nullptr;
};
using ResponseFn = void (*)(const Response& r, void* ctx);

struct FeatureOps;  // what the server reaches a feature's code through (core/src/mcp/server_internal.h)

class Server {
 public:
  /// `info` and `platform` must outlive the server (constants, usually). The platform's clock
  /// is required (EMCP_ASSERT when it is missing: emcp/platform.h).
  Server(const ServerInfo& info, const Platform& platform);
  /// Detaches every session still attached.
  ~Server();
  Server(const Server&) = delete;
  Server& operator=(const Server&) = delete;

  // ---- What the server offers (tables must outlive the server). Changing a table after
  // sessions started sends notifications/<kind>/list_changed to them.
  template <size_t N>
  void set_tools(const Tool (&t)[N]) { set_tools(Span<const Tool>(t, N)); }
  void set_tools(Span<const Tool> tools);
  template <size_t N>
  void set_resources(const Resource (&r)[N]) { set_resources(Span<const Resource>(r, N)); }
  void set_resources(Span<const Resource> resources);
  template <size_t N>
  void set_templates(const ResourceTemplate (&t)[N]) { set_templates(Span<const ResourceTemplate>(t, N)); }
  void set_templates(Span<const ResourceTemplate> templates);
  template <size_t N>
  void set_prompts(const Prompt (&p)[N]) { set_prompts(Span<const Prompt>(p, N)); }
  void set_prompts(Span<const Prompt> prompts);
  Span<const Tool> tools() const { return tools_; }
  Span<const Resource> resources() const { return resources_; }
  Span<const ResourceTemplate> templates() const { return templates_; }
  Span<const Prompt> prompts() const { return prompts_; }
  /// The scopes the tool, resource (or template) or prompt a request names declares
  /// (tools/call, resources/read, resources/subscribe, prompts/get); nullptr when it names none
  /// or declares none.
  const char* scope_of(const jsonrpc::Message& m) const;
  /// Entries per tools/list, resources/list, resources/templates/list, prompts/list page.
  void set_page_size(uint16_t n) { page_size_ = n == 0 ? 1 : n; }
  /// Capability `logging` (on by default; notifications/message need it).
  void enable_logging(bool on) { logging_ = on; }
  /// The caching hints of 2026-07-28 results (ttlMs, cacheScope; caching.mdx).
  void set_cache_policy(const CachePolicy& p) { cache_ = p; }
  const CachePolicy& cache_policy() const { return cache_; }

  // ---- The loop
  /// Times out requests sent to clients and sends held notifications (EMCP_NOTIFY_QUEUE) whose
  /// channel is free again. Call it from the loop now and then.
  void poll();

  // ---- Notifications
  /// notifications/resources/updated to every session subscribed to `uri`.
  void resource_updated(StrView uri);
  /// notifications/message to every session whose level lets `level` through.
  void log(LogLevel level, StrView message, StrView logger = StrView());
  /// Notifications that could not go out since the server started: list changes, resource
  /// updates and log messages (also a ToolCall's) that found the session's channel busy with
  /// another message and no room in the queue that holds them until it is free
  /// (EMCP_NOTIFY_QUEUE; see docs/mcp.md); progress (also a ToolCall's) on a busy channel,
  /// which is not held; any of them, or a timed-out request's cancellation, on a closed
  /// channel or, over Streamable HTTP, unrelated to a request while no GET stream is open.
  /// A diagnostic: 0 means nothing was lost.
  uint32_t notifications_dropped() const { return notifications_dropped_; }

  // ---- Subscriptions (2026-07-28: subscriptions/listen, basic/patterns/subscriptions.mdx)
  /// Ends every open listen stream on the server's initiative (before a shutdown, say): each
  /// gets its completion result, {"resultType":"complete"} with its subscriptionId, which on
  /// Streamable HTTP ends its response. kWouldBlock when a channel was busy writing another
  /// message (those listens stay open: call again from the loop); kOk when none is left.
  Status end_listens();
  /// The listen streams open now (at most EMCP_MAX_LISTENS).
  size_t listens() const;

  // ---- Deferred tool calls
  /// Finishes a deferred call: `fn` writes the result through a ToolCall (args() is missing).
  /// Returns kNotFound for a stale handle, kClosed if the client cancelled it (nothing is sent).
  using FinishFn = void (*)(ToolCall& call, void* ctx);
  Status complete(Pending p, FinishFn fn, void* ctx);
  /// Progress of a deferred call (when the request had a progressToken).
  Status progress(Pending p, double done, double total = -1, StrView message = StrView());
  /// True once the client sent notifications/cancelled for it (or its session ended).
  bool cancelled(Pending p) const;
  /// The session of a deferred call (nullptr for a stale handle, and for a task's, which
  /// belongs to no connection).
  Session* session_of(Pending p) const;
  /// True when the deferred call is a task's (emcp/mcp/tasks.h): its client polls for it.
  bool is_task(Pending p) const;

  // ---- Requests to the client
  /// Sends `method` with params written by `params(w, params_ctx)` (nullptr: none); `done` is
  /// called once with the response, an error, a timeout (after `timeout_ms`, also sending
  /// notifications/cancelled) or kClosed when the session ends or re-initializes. Returns
  /// kNoSpace when EMCP_MAX_OUTGOING requests are in flight; kInvalidState when another message
  /// is being written on the channel, or before notifications/initialized (any method but
  /// ping: MCP's lifecycle); kClosed when the channel cannot take a message. With
  /// EMCP_LEGACY_ERA=0 this and the calls below fail (kInvalidState; kNotFound where a client
  /// capability is needed) and none of their code is linked: 2026-07-28 has no requests to the
  /// client (a handler asks through ToolCall::input()).
  Status request(Session& s, StrView method, ParamsFn params, const void* params_ctx,
                 ResponseFn done, void* done_ctx, uint32_t timeout_ms = 30000);
  /// sampling/createMessage; kNotFound when the client did not declare `sampling`.
  Status sample(Session& s, ParamsFn params, const void* params_ctx, ResponseFn done, void* ctx,
                uint32_t timeout_ms = 60000);
  /// The same with one user message of text (Inputs::sample_text's request): at most
  /// `max_tokens` back, `system_prompt` when not empty.
  Status sample_text(Session& s, StrView question, uint32_t max_tokens, ResponseFn done, void* ctx,
                     StrView system_prompt = StrView(), uint32_t timeout_ms = 60000);
  /// elicitation/create in form mode with `schema` as requestedSchema; kNotFound without the
  /// client capability (2025-06-18 and later). The form holds flat primitive properties
  /// (string, number, integer, boolean, enums); arrays only as multi-select enums (items a
  /// string enum, or raw()) for 2025-11-25 sessions; anything else is kInvalidArgument.
  Status elicit(Session& s, StrView message, Span<const Param> schema, ResponseFn done, void* ctx,
                uint32_t timeout_ms = 300000);
  /// elicitation/create in URL mode (2025-11-25, client capability elicitation.url).
  Status elicit_url(Session& s, StrView message, StrView url, StrView elicitation_id,
                    ResponseFn done, void* ctx, uint32_t timeout_ms = 300000);
  /// roots/list; kNotFound when the client did not declare `roots`.
  Status list_roots(Session& s, ResponseFn done, void* ctx, uint32_t timeout_ms = 30000);
  /// Calls `fn(s, ctx)` when the client of session `s` (past notifications/initialized)
  /// announces that its roots changed (notifications/roots/list_changed, sent by clients that
  /// declared roots.listChanged): ask again with list_roots(). It runs while the input is
  /// handled, so it may send (inside a 2025-03-26 batch only until the batch's answer starts:
  /// then kInvalidState, retry from the loop). nullptr (the default): the notification is
  /// ignored (always with EMCP_LEGACY_ERA=0).
  using RootsChangedFn = void (*)(Session& s, void* ctx);
  void on_roots_changed(RootsChangedFn fn, void* ctx);
  /// ping to the client.
  Status ping(Session& s, ResponseFn done, void* ctx, uint32_t timeout_ms = 30000);
  /// Lets handlers ask clients of 2024-11-05 to 2025-11-25 through Inputs (elicit, sample,
  /// list_roots, keep) as they ask 2026-07-28 clients: `bridge` holds such requests while their
  /// questions are out (emcp/mcp/input_bridge.h). It must outlive the server; one per server
  /// (given to another, it forgets what it held).
  /// Ignored with EMCP_LEGACY_ERA=0 (no such clients; none of the bridge is linked).
  void set_input_bridge(InputBridge& bridge);
  /// The key of the MAC over each 2026-07-28 `requestState` (input rounds, docs/mcp.md): the
  /// same secret on each instance of a fleet behind a load balancer (docs/deploy.md), so that a
  /// retry that carries a state one instance issued is accepted by any of them, this one
  /// included before it has asked anything itself. `key` is copied; it is the image's (every
  /// server of the process uses it). Without it the key is drawn from the platform's random
  /// source when first needed: each process its own, and a restart invalidates every state.
  /// Call it before serving (a state issued under an earlier key is then refused).
  void set_request_state_key(const uint8_t (&key)[32]);
  /// Lets tool calls run as MCP tasks (emcp/mcp/tasks.h): the calls of tools declared with
  /// Tool::runs_as_task() become tasks for clients that ask for one (2025-11-25 params.task)
  /// or allow one (the 2026-07-28 extension, when the handler defers). `store` must outlive the
  /// server; one per server (given to another, it forgets the tasks it held).
  void set_tasks(TaskStore& store, const TaskPolicy& policy = TaskPolicy());
  /// Lets other threads, tasks and interrupts hand work to this server's loop through `inbox`
  /// (emcp/mcp/inbox.h): poll() runs what they posted. `inbox` must outlive the server; one
  /// per server. Call it from the owner before anything posts. Asserts (EMCP_ASSERT) a
  /// critical section in the platform where the CPU has no atomic read-modify-write.
  void set_inbox(Inbox& inbox);
  /// The inbox set_inbox() gave (nullptr: none); its stats() may be read from anywhere.
  const Inbox* inbox() const { return inbox_; }

  const ServerInfo& info() const { return info_; }
  /// The platform's clock (milliseconds).
  uint64_t now() const { return platform_.now_ms(); }
  const Platform& platform() const { return platform_; }

  // ---- For transports (emcp/mcp/session.h): applications call none of these.
  /// Lets the server broadcast to `s` (list changes, resource updates, logs). Transports call
  /// it when a connection starts, detach() when it ends (pending work of it is dropped).
  void attach(Session& s);
  void detach(Session& s);

  /// Answers what one input held (a message or a batch) on the session's channel. `headers`:
  /// what a Streamable HTTP request said in its headers, checked against a 2026-07-28 request
  /// (nullptr for transports without headers: stdio, UART, WebSocket).
  void handle(Session& s, const jsonrpc::Decoded& d, const RequestHeaders* headers = nullptr);
  /// True if request `m` is of the 2026-07-28 era (its `_meta` names a revision or the client's
  /// capabilities, or its method exists only in that era): it is served statelessly, from its
  /// own `_meta`, whatever the session it came on.
  static bool is_modern(const jsonrpc::Message& m);
  /// RequestHeaders::check: a 2026-07-28 request's headers against its body (-32020).
  static bool check_headers(Server& server, const jsonrpc::Message& m, StrView version, Reply& r);

 private:
  friend class ToolCall;
  friend class Inputs;
  friend class InputBridge;
  friend struct BridgeCode;  // the InputBridge's code (input_bridge_internal.h)
  friend struct TaskCode;    // MCP tasks' code (tasks_internal.h)
  friend struct FeatureOps;  // the features' table (server_internal.h)
  friend struct ServerCode;  // the answers to requests (server_internal.h)
  friend bool verify_state(Inputs& in, StrView state, const char** why);
  friend void write_state(Inputs& in, json::Writer& w);
  friend class ResourceRead;
  friend class PromptGet;

  struct Deferred {
    Session* session = nullptr;
    const Tool* tool = nullptr;
    Token id;
    Token progress;
    Peer peer;  // the client's revision and capabilities, for the answer
    uint32_t generation = 0;
    bool used = false;
    bool cancelled = false;
  };
  struct Outgoing {
    Session* session = nullptr;
    ResponseFn done = nullptr;
    void* ctx = nullptr;
    int64_t id = 0;
    uint64_t deadline = 0;
    bool used = false;
  };

  // subscriptions/listen (listen.cpp): one open listen stream.
  struct Listen {
    Session* session = nullptr;  // nullptr: free
    Token id;                    // its request's id, the subscriptionId
    uint8_t lists = 0;           // bit 1 << ListKind: the list changes it wants
    uint32_t subs[EMCP_MAX_SUBSCRIPTIONS] = {};  // FNV-1a of its resourceSubscriptions (0: none)
    uint32_t tasks = 0;          // bit i: notifications/tasks of the task in slot i (its taskIds)
    // It wants a change of the lists in `lists`, or updates of the URI hashed `uri_hash` (0: none).
    bool wants(uint8_t lists, uint32_t uri_hash) const;
  };
  // Held notifications (EMCP_NOTIFY_QUEUE): what a session's busy channel could not take now,
  // sent in order once it is free. An entry is a HeldHead (the session, the function that
  // sends it again, a log level or list kind, lengths), then `a` (the URI, or a log's logger)
  // and `b` (a log's text). Through the function, an image links only the kinds it holds.
  struct HeldHead;
  using Resend = void (*)(Server& sv, Session& s, const HeldHead& h);
  // Before sending on `s`: sends what is held for free channels (so nothing overtakes it);
  // true when `s` is busy, so the new one must be held too.
  bool must_hold(Session& s);
  // Holds a notification for `s`; counts it as dropped when it does not fit.
  Status hold(Session& s, Resend resend, LogLevel level, StrView a, StrView b = StrView());
  // Sends what is held for sessions whose channel is free; with `forget`, instead marks
  // what is held for that session (it is detached) as dropped, for the next pass to remove.
  void send_held(Session* forget);
  void send_held_now() {
    if (held_used_ != 0 && !sending_held_) send_held(nullptr);
  }
  Deferred* deferred(Pending p);
  const Deferred* deferred(Pending p) const;

  const ServerInfo& info_;
  const Platform& platform_;
  Span<const Tool> tools_;
  Span<const Resource> resources_;
  Span<const ResourceTemplate> templates_;
  Span<const Prompt> prompts_;
  TaskStore* tasks_ = nullptr;  // set_tasks() (tasks.cpp)
  Inbox* inbox_ = nullptr;      // set_inbox() (inbox.cpp)
  friend class Inbox;
  uint16_t page_size_ = EMCP_PAGE_SIZE;
  CachePolicy cache_;
  bool logging_ = true;
  bool has_tools_ = false, has_resources_ = false, has_prompts_ = false;
  RootsChangedFn roots_changed_ = nullptr;  // on_roots_changed()
  void* roots_changed_ctx_ = nullptr;
  // The InputBridge (input_bridge.cpp, input_bridge_internal.h): the one set_input_bridge() gave.
  InputBridge* bridge_ = nullptr;
  // The server's features (resources, prompts, requests to the client, deferred calls, the
  // InputBridge, tasks...), each installed when the application first uses it: the dispatcher,
  // poll(), detach() and notifications/cancelled reach a feature's code only through its
  // FeatureOps here (core/src/mcp/server_internal.h), so a firmware image links only what it
  // installs (--gc-sections). nullptr: not in use.
  static constexpr size_t kFeatureSlots = 9;
  const FeatureOps* features_[kFeatureSlots] = {};
  Session* sessions_ = nullptr;
  // The client request being handled or completed: what the server sends meanwhile relates to it.
  friend struct CurrentRequest;
  jsonrpc::Id current_;
  Session* current_session_ = nullptr;
  const RequestHeaders* headers_ = nullptr;  // the HTTP headers of the input being handled
  Deferred deferred_[EMCP_MAX_DEFERRED];
  FixedTable<Listen, EMCP_MAX_LISTENS> listens_;
  FixedTable<Outgoing, EMCP_MAX_OUTGOING> outgoing_;  // none with EMCP_LEGACY_ERA=0 (by default)
  int64_t next_request_id_ = 1;
  uint32_t notifications_dropped_ = 0;
  // The held notifications' queue (see hold()).
  uint16_t held_used_ = 0;
  bool sending_held_ = false;
  alignas(void*) unsigned char held_[EMCP_NOTIFY_QUEUE > 0 ? EMCP_NOTIFY_QUEUE : 1];
  Status drop_notification() {
    ++notifications_dropped_;
    return Status::kInvalidState;
  }
};

/// A 2026-07-28 request header value (Mcp-Name, a string Mcp-Param-*) stands for `body`: the
/// plain value equal to it, or its "=?base64?...?=" form (canonical base64 of its bytes).
/// What the engine's header check uses (headers.cpp); no heap, nothing buffered.
bool header_equals(StrView header, StrView body);

/// The routing headers of a 2026-07-28 request against its body (headers.cpp): MCP-Protocol-
/// Version against `version` (the body's `_meta` revision), Mcp-Method against the method,
/// Mcp-Name against the member it names (`name` of tools/call and prompts/get, `uri` of
/// resources/read, `taskId` of tasks/get, tasks/update and tasks/cancel). On the first
/// mismatch calls `mismatch(ctx, message)` with the -32020 error's message and returns false.
/// The Mcp-Param-* headers need the tool's Param table: Server::check_headers checks them
/// after this. One check for every front end that has the headers: the HTTP engine's, and
/// emcp-bridge's gateway in front of a board, which sees none.
using HeaderMismatch = void (*)(void* ctx, std::initializer_list<TextPiece> message);
bool check_routing_headers(const RequestHeaders& h, const jsonrpc::Message& m, StrView version,
                           HeaderMismatch mismatch, void* ctx);

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_SERVER_H
