// emcp/mcp/session.h - what a transport gives the server and gets from it: a Session per client
// connection (the negotiated revision, the client's capabilities, its log level and
// subscriptions) and the Channel its outbound messages go to. Applications meet a Session in
// handlers (ToolCall::session()) and when they ask the client something; transports declare
// one per connection and hand decoded input to Server::handle().
//
// Context: one loop (see emcp/mcp/server.h).
#ifndef EMCP_MCP_SESSION_H
#define EMCP_MCP_SESSION_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/sink.h"
#include "emcp/jsonrpc/message.h"
#include "emcp/mcp/revision.h"
#include "emcp/mcp/types.h"

EMCP_NS_BEGIN
namespace mcp {

class Server;
class Reply;
class Outbound;
class ToolCall;
struct BatchOut;

/// What an outbound message is, for transports that route messages (Streamable HTTP sends a
/// request's answer and what relates to it on that request's stream, the rest on the session's
/// own stream).
struct OutMessage {
  enum class Kind : uint8_t { kResponse, kNotification, kRequest };
  Kind kind = Kind::kNotification;
  /// The client request it answers or relates to (progress, logs and requests to the client
  /// while that request is being handled or completed); kNone when unrelated.
  jsonrpc::Id related;
  bool batch = false;  ///< the answer to a batch (a JSON array of answers)
  /// An answer that is an error: its JSON-RPC code (0: a result, or not an answer).
  int32_t error = 0;
  /// The error refuses the request as a whole before it was served (2026-07-28: its `_meta`,
  /// its HTTP headers, its revision or a client capability it lacks), which Streamable HTTP
  /// answers with status 400.
  bool refused = false;
  /// A notification of the server's capabilities that every session it goes to gets alike
  /// (notifications/{tools,resources,prompts}/list_changed, notifications/resources/updated):
  /// MCP over MQTT sends it once, on the server's capability topic, not once per session.
  bool capability = false;
};

/// Where one session's outbound messages go. The transport provides it.
/// The request metadata a Streamable HTTP request carries in headers at 2026-07-28
/// (basic/transports/streamable-http.mdx, "Request Metadata"), which the server checks against
/// the body before it serves the request: -32020 HeaderMismatch (HTTP 400) when one is
/// missing, differs from the body or holds characters a header value may not. Values are the
/// headers' own text (trimmed), `Mcp-Name` and `Mcp-Param-*` possibly `=?base64?...?=`.
struct RequestHeaders {
  struct Field {
    StrView value;
    bool present = false;
  };
  Field protocol_version;  ///< MCP-Protocol-Version
  Field method;            ///< Mcp-Method
  Field name;              ///< Mcp-Name
  StrView params;          ///< the Mcp-Param-{Name} headers, each "name:value\n", name in lower case
  /// The check itself: Server::check_headers, set by the transport that has headers (so an
  /// image without one links none of it).
  bool (*check)(Server& server, const jsonrpc::Message& m, StrView version, Reply& r) = nullptr;
};

struct Channel {
  /// Starts one outbound message and returns the sink to write it to, or nullptr when no
  /// message can be started now (closed; or the transport cannot interleave).
  json::Sink* (*open)(void* ctx, const OutMessage& m) = nullptr;
  /// Ends the message started by open() (stdio: newline and flush). Returns the sink status.
  Status (*close)(void* ctx) = nullptr;
  void* ctx = nullptr;
  /// Optional: ends the stream that carries the answer to client request `related` and tells
  /// the client to reconnect after `retry_ms` (Streamable HTTP SSE polling, SEP-1699); what is
  /// sent for that request afterwards waits for the client's GET with Last-Event-ID. nullptr
  /// on transports without resumable streams.
  Status (*end_stream)(void* ctx, const jsonrpc::Id& related, uint32_t retry_ms) = nullptr;
  /// Optional: what becomes of a client request, for transports that route its messages or
  /// hold its response open until it is answered (Streamable HTTP); nullptr elsewhere. Never
  /// called after the session is detached (its pending requests end with it).
  /// - kHeld: request `id` outlives the handle() that brought it: its answer comes later (a
  ///   deferred call, an InputBridge round, a waiting tasks/result, a listen). May come again
  ///   for the same id (a call deferred again).
  /// - kDone: request `id` has ended: its answer was written (or could not be: the channel was
  ///   closed or busy), or it was cancelled and will never be answered. Once per request with
  ///   an id, held or not, after its answer's close(); a batch element's after its element is
  ///   written, before the batch's closing bracket and close() (the transport is still inside
  ///   handle() then).
  enum class RequestEvent : uint8_t { kHeld, kDone };
  void (*request)(void* ctx, const jsonrpc::Id& id, RequestEvent event) = nullptr;
};

/// What the client declared: at initialize (legacy), or in a request's `_meta` (modern).
struct ClientCaps {
  bool sampling = false;
  bool sampling_tools = false;     ///< 2025-11-25 sampling.tools
  bool elicitation_form = false;   ///< 2025-06-18 elicitation (form)
  bool elicitation_url = false;    ///< 2025-11-25 elicitation.url
  bool roots = false;
  bool roots_list_changed = false;
};

/// What the server knows of the client behind one request: its revision, its capabilities, the
/// log level it asked for and what the server offers it. A legacy session keeps one from
/// initialize (Session::peer()); a 2026-07-28 request brings its own in `_meta`.
struct Peer {
  constexpr Peer() = default;
  constexpr explicit Peer(Version v) : version(v) {}
  Version version = Version::k2024_11_05;  // zero: a table of peers needs no initializing code
  ClientCaps caps;
  LogLevel log_level = LogLevel::kInfo;
  bool logs = false;  ///< notifications/message may go to it (legacy: `logging` offered;
                      ///< modern: the request's `_meta` named a level)
  // What the server offers it (methods and notifications follow it).
  bool tools = false, resources = false, prompts = false, completions = false;
  /// A request of the stateless era (2026-07-28): no session, `_meta` on every request. Always
  /// with EMCP_LEGACY_ERA=0 (a constant: the legacy branches that test it are not linked).
  bool modern() const { return !EMCP_LEGACY_ERA || (EMCP_MODERN_ERA && supports(version, Feature::kModern)); }
  /// A log message at `level` may go to it.
  bool wants_log(LogLevel level) const { return logs && level >= log_level; }
};

/// One client connection. Declare one per connection the transport can hold (stdio: one).
class Session {
 public:
  explicit Session(const Channel& channel) : channel_(channel) {}
  /// Detaches from the server it was attached to (its pending work is dropped).
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  /// True after a successful initialize.
  bool initialized() const { return state_ != kNew; }
  /// True once notifications/initialized arrived.
  bool ready() const { return state_ == kReady; }
  Version version() const { return peer_.version; }
  const ClientCaps& client() const { return peer_.caps; }
  LogLevel log_level() const { return peer_.log_level; }
  /// What initialize negotiated (a 2026-07-28 request brings its own: ToolCall::peer()).
  const Peer& peer() const { return peer_; }
  /// The client's name from clientInfo (truncated to 31 bytes).
  StrView client_name() const { return StrView(client_name_, client_name_len_); }
  /// Forgets everything negotiated (a new connection on the same object).
  void reset();

 private:
  friend class Server;
  friend struct ServerCode;  // core/src/mcp/server_internal.h
  friend struct BridgeCode;  // core/src/mcp/input_bridge_internal.h
  friend struct TaskCode;    // core/src/mcp/tasks_internal.h
  friend class Reply;
  friend class Outbound;
  friend class ToolCall;
  friend struct BatchOut;
  enum State : uint8_t { kNew, kInitialized, kReady };

  Channel channel_;
  State state_ = kNew;
  Peer peer_{kLatestVersion};
  bool open_ = false;                       // a message is being written to the channel
  Server* server_ = nullptr;                // attached to (nullptr: not attached)
  uint8_t client_name_len_ = 0;
  char client_name_[31] = {};
  uint32_t subs_[EMCP_MAX_SUBSCRIPTIONS] = {};  // FNV-1a hashes of subscribed URIs (0: free)
  Session* next_ = nullptr;                 // the server's list of sessions
};

/// The id to write in an answer on session `s`: an unknown id (null) is left out as MCP
/// 2025-11-25 has it for sessions at that revision or not yet initialized (Id{}), and written
/// as null, as JSON-RPC 2.0 has it, for older ones. Transports use it for their own errors.
jsonrpc::Id answer_id(const Session& s, const jsonrpc::Id& id);

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_SESSION_H
