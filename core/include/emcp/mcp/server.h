// emcp/mcp/server.h - the MCP server: lifecycle, capabilities, tools, resources, prompts,
// completions, logging, progress, cancellation, and requests to the client (sampling,
// elicitation, roots), over any transport.
//
// A Server holds the application's tables (constant data) and the bounded tables of work in
// flight (deferred tool calls, requests to clients). A Session is one client connection: its
// negotiated revision, the client's capabilities, its log level and subscriptions, and the
// Channel its outbound messages go to. Transports decode input with jsonrpc::Decoder and hand
// each decoded input to Server::handle(); the stdio transport (emcp/transport/stdio.h) does it
// for a byte stream.
//
// Output streams: a handler's result is written straight to the session's channel as it is
// produced (the envelope is started on the first write), so it is bounded by nothing but the
// channel. Notifications a handler sends (progress, log) go out before its result starts; once
// the result has started they are refused with kInvalidState (they would land inside it).
//
// Context: one loop. Every call here, and every handler, runs in the loop that calls handle()
// and poll(); nothing blocks.
//
// Example (stdio, see examples/sensors):
//   static emcp::mcp::Server server(kInfo, emcp::posix::platform());  // or board::platform()
//   server.set_tools(kTools);
//   static emcp::transport::StdioTransport<> stdio(server, &write_stdout, nullptr);
//   ... stdio.feed(bytes, n) as input arrives; server.poll() now and then ...
#ifndef EMCP_MCP_SERVER_H
#define EMCP_MCP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <initializer_list>

#include "emcp/json/sink.h"
#include "emcp/json/value.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/jsonrpc/message.h"
#include "emcp/mcp/schema.h"
#include "emcp/mcp/types.h"
#include "emcp/platform.h"

EMCP_NS_BEGIN
namespace mcp {

class Server;
class Session;
class Reply;
class Outbound;
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
};

/// Where one session's outbound messages go. The transport provides it.
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
};

/// What the client declared at initialize.
struct ClientCaps {
  bool sampling = false;
  bool sampling_tools = false;     ///< 2025-11-25 sampling.tools
  bool elicitation_form = false;   ///< 2025-06-18 elicitation (form)
  bool elicitation_url = false;    ///< 2025-11-25 elicitation.url
  bool roots = false;
  bool roots_list_changed = false;
};

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
  Version version() const { return version_; }
  const ClientCaps& client() const { return caps_; }
  LogLevel log_level() const { return log_level_; }
  /// The client's name from clientInfo (truncated to 31 bytes).
  StrView client_name() const { return StrView(client_name_, client_name_len_); }
  /// Forgets everything negotiated (a new connection on the same object).
  void reset();

 private:
  friend class Server;
  friend class Reply;
  friend class Outbound;
  friend class ToolCall;
  friend struct BatchOut;
  // A log message at `level` would go to this session (it offers logging, the level passes).
  bool wants_log(LogLevel level) const { return offers_logging_ && level >= log_level_; }
  enum State : uint8_t { kNew, kInitialized, kReady };

  Channel channel_;
  State state_ = kNew;
  Version version_ = kLatestVersion;
  ClientCaps caps_;
  LogLevel log_level_ = LogLevel::kInfo;
  // What the initialize answer offered this session (methods and notifications follow it).
  bool offers_tools_ = false, offers_resources_ = false, offers_prompts_ = false;
  bool offers_logging_ = false, offers_completions_ = false;
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

/// A piece of text: a string, or a number to format (TextPiece(21.537, 1) -> "21.5").
struct TextPiece {
  /// Formats a number piece into `out` (kMaxChars bytes); returns the length (0: "NaN").
  using Format = size_t (*)(const TextPiece& piece, char* out);
  Format format = nullptr;  ///< nullptr for a string piece
  int8_t decimals = -1;     ///< fixed-point doubles: digits after the point (at most 9)
  StrView s;
  int64_t i = 0;
  double d = 0;
  TextPiece(const char* v) : s(v) {}                            // NOLINT: implicit by design
  TextPiece(StrView v) : s(v) {}                                // NOLINT
  TextPiece(int v) : format(&format_int), i(v) {}               // NOLINT
  TextPiece(long v) : format(&format_int), i(v) {}              // NOLINT
  TextPiece(long long v) : format(&format_int), i(v) {}         // NOLINT
  TextPiece(unsigned v) : format(&format_int), i(v) {}          // NOLINT
  /// The shortest text that reads back as `v` (Number.toString layout).
  TextPiece(double v) : format(&format_shortest), d(v) {}       // NOLINT
  /// `places` digits after the point (0-9; more counts as 9, negative as 0), rounded half away
  /// from zero: 21.537 with 1 gives "21.5". Needs no decimal conversion tables, so firmware
  /// that formats its readings this way stays small. Places are dropped where the scaled
  /// value passes 9e15; from 1.8e19 up the value keeps 12 significant digits ("1.25e+22" from
  /// 1e21 up).
  TextPiece(double v, int8_t places) : format(&format_fixed), decimals(places), d(v) {}
  /// A fixed-point integer: `scaled` / 10^places, e.g. fixed(215, 1) gives "21.5" and
  /// fixed(-5, 2) "-0.05". No floating point at all: the way to report a sensor read in tenths
  /// or milli-units on a core without an FPU (doubles cost ~3 KiB of soft-float on Cortex-M3).
  static TextPiece fixed(int64_t scaled, uint8_t places) {
    TextPiece p(static_cast<long long>(scaled));
    p.format = &format_scaled;
    p.decimals = static_cast<int8_t>(places > 18 ? 18 : places);
    return p;
  }

  /// Longest text of a number piece.
  static constexpr size_t kMaxChars = 40;
  /// The piece as text: a string as it is, a number formatted into `buf`.
  StrView render(char (&buf)[kMaxChars]) const;

  static size_t format_int(const TextPiece& p, char* out);
  static size_t format_shortest(const TextPiece& p, char* out);
  static size_t format_fixed(const TextPiece& p, char* out);
  static size_t format_scaled(const TextPiece& p, char* out);
};

/// Writes `pieces` into an open JSON string (Writer::string_part); numbers are formatted.
void write_text_pieces(json::Writer& w, std::initializer_list<TextPiece> pieces);
/// Writes `pieces` as plain text into `out` (NUL-terminated, cut to `cap` - 1 bytes at a
/// character boundary); returns the length. No printf: for log lines and messages.
size_t format_text(char* out, size_t cap, std::initializer_list<TextPiece> pieces);

/// Handle of a deferred tool call (ToolCall::defer()). Copyable; stale handles are detected.
struct Pending {
  uint16_t slot = 0xFFFF;
  uint32_t generation = 0;  ///< 2^32 uses of a slot before a stale handle could look fresh
  bool valid() const { return slot != 0xFFFF; }
};

/// Writes content blocks: into a tool result's content array (any number), or as a prompt
/// message's content (exactly one: further blocks are ignored, none becomes an empty text).
/// A block is either whole (text(), image()...) or streamed: text_begin() / text_part()... /
/// text_end(), and resource_text_begin() / text_part()... / text_end(), for text of any length
/// without a buffer.
class ContentWriter {
 public:
  ContentWriter() = default;
  ContentWriter(json::Writer& w, Version v, uint16_t max_blocks = 0)
      : w_(&w), version_(v), max_blocks_(max_blocks) {}
  void text(StrView s);
  void text(std::initializer_list<TextPiece> pieces);
  void image(const void* data, size_t n, StrView mime_type);
  /// Audio content (2025-03-26 and later; older clients get a text block saying it was left out).
  void audio(const void* data, size_t n, StrView mime_type);
  /// A link to a resource (2025-06-18 and later; older clients get a text block with the URI).
  void resource_link(StrView uri, StrView name, StrView mime_type = StrView(),
                     StrView description = StrView());
  /// An embedded text resource.
  void resource_text(StrView uri, StrView mime_type, StrView text);
  /// An embedded binary resource (base64-streamed).
  void resource_blob(StrView uri, StrView mime_type, const void* data, size_t n);

  /// A text block written in parts.
  void text_begin();
  /// An embedded text resource whose text is written in parts.
  void resource_text_begin(StrView uri, StrView mime_type);
  void text_part(StrView s);
  void text_part(std::initializer_list<TextPiece> pieces);
  void text_end();

  /// Raw access for one block the caller writes itself (one JSON object); counts as a block.
  /// nullptr when no block may be written here.
  json::Writer* writer();
  /// Blocks written so far.
  uint16_t blocks() const { return blocks_; }

 private:
  bool begin_block();
  void blob(const char* type, const void* data, size_t n, StrView mime_type);
  json::Writer* w_ = nullptr;
  Version version_ = kLatestVersion;
  uint16_t max_blocks_ = 0;  // 0: any number
  uint16_t blocks_ = 0;
  uint8_t open_ = 0;         // 1: a streamed text block, 2: a streamed embedded resource
};

/// A tools/call in progress. Valid only during the handler (or during Server::complete()).
class ToolCall {
 public:
  // ---- Input
  const Tool& tool() const { return *tool_; }
  /// The arguments object (missing when the client sent none).
  json::Value args() const { return args_; }
  /// Typed arguments after validation; `fallback` when absent.
  StrView str(StrView name, StrView fallback = StrView()) const;
  int64_t integer(StrView name, int64_t fallback = 0) const;
  double number(StrView name, double fallback = 0) const;
  bool boolean(StrView name, bool fallback = false) const;
  Session& session() const { return *session_; }
  Server& server() const { return *server_; }

  // ---- Result: content blocks, in order
  void text(StrView s) { content().text(s); }
  void text(std::initializer_list<TextPiece> pieces) { content().text(pieces); }
  void image(const void* data, size_t n, StrView mime) { content().image(data, n, mime); }
  void audio(const void* data, size_t n, StrView mime) { content().audio(data, n, mime); }
  void resource_link(StrView uri, StrView name, StrView mime = StrView(), StrView desc = StrView()) {
    content().resource_link(uri, name, mime, desc);
  }
  void resource_text(StrView uri, StrView mime, StrView text) { content().resource_text(uri, mime, text); }
  void resource_blob(StrView uri, StrView mime, const void* data, size_t n) {
    content().resource_blob(uri, mime, data, n);
  }
  /// The content list itself, for blocks written in parts (ContentWriter::text_begin()...).
  ContentWriter& content();
  /// Structured output (2025-06-18 and later): `fn` writes one JSON object; it is called
  /// twice, for a text block holding the JSON (for clients that read text) and for
  /// structuredContent. Ends the content: no block may follow.
  using StructuredFn = void (*)(json::Writer& w, const void* ctx);
  void structured(StructuredFn fn, const void* ctx = nullptr);
  /// A tool error the model should see: adds a text block and sets isError.
  void fail(StrView message);
  void fail(std::initializer_list<TextPiece> pieces);
  /// A protocol error (-32602 Invalid params) instead of a result. Only before any content;
  /// afterwards it turns into fail().
  void invalid_params(StrView message);

  // ---- While working
  /// notifications/progress when the request carried a progressToken (kNotFound otherwise).
  /// Only before the result started (kInvalidState after).
  Status progress(double done, double total = -1, StrView message = StrView());
  /// notifications/message to this session, filtered by its level. After the result started it
  /// is held and follows the answer (kOk; kInvalidState, counted as dropped, when the queue,
  /// EMCP_NOTIFY_QUEUE, has no room).
  Status log(LogLevel level, StrView message, StrView logger = StrView());
  /// Streamable HTTP (SEP-1699 polling): ends the HTTP stream that carries this call and tells
  /// the client to come back after `retry_ms`; progress and the result then wait in the
  /// session's replay buffer until the client reconnects (GET with Last-Event-ID). Frees the
  /// connection during long work. kInvalidState on transports without resumable streams
  /// (stdio, WebSocket, legacy HTTP+SSE) or when the answer has started.
  Status close_stream(uint32_t retry_ms);
  /// Finishes the call later, outside the handler: returns a handle for Server::complete(),
  /// Server::progress() and Server::cancelled(). When EMCP_MAX_DEFERRED calls are pending, the
  /// handle is invalid and the call has been answered with an isError result. Arguments are
  /// gone after the handler returns: copy what you need. The progress token is kept when it
  /// fits EMCP_JSONRPC_MAX_ID_LEN bytes (else progress() of the deferred call is kNotFound).
  Pending defer();

 private:
  friend class Server;
  bool begin_result();
  void finish();

  Server* server_ = nullptr;
  Session* session_ = nullptr;
  const Tool* tool_ = nullptr;
  json::Value args_;
  Reply* reply_ = nullptr;
  ContentWriter content_;
  json::Value progress_value_;  // the request's _meta.progressToken (defer() copies it)
  enum Phase : uint8_t { kIdle, kContent, kStructured, kDone, kDeferred, kErrored };
  Phase phase_ = kIdle;
  bool is_error_ = false;
};

/// A resources/read in progress: write one or more contents.
class ResourceRead {
 public:
  StrView uri() const { return uri_; }
  /// A variable of the matched template ("" when absent or for plain resources).
  StrView var(StrView name) const;
  const void* user() const { return user_; }
  Session& session() const { return *session_; }
  /// A text content for uri() (mime type of the resource unless given).
  void text(StrView s, StrView mime_type = StrView());
  void text(std::initializer_list<TextPiece> pieces, StrView mime_type = StrView());
  /// A text content written in parts (text of any length without a buffer).
  void text_begin(StrView mime_type = StrView());
  void text_part(StrView s);
  void text_part(std::initializer_list<TextPiece> pieces);
  void text_end();
  /// A binary content, base64-streamed.
  void blob(const void* data, size_t n, StrView mime_type = StrView());
  /// -32002 Resource not found (only before any content), e.g. a template value that does not exist.
  void not_found();

 private:
  friend class Server;
  bool begin();
  Server* server_ = nullptr;
  Session* session_ = nullptr;
  Reply* reply_ = nullptr;
  StrView uri_;
  const char* mime_ = nullptr;
  const void* user_ = nullptr;
  StrView names_[EMCP_MAX_TEMPLATE_VARS];
  StrView values_[EMCP_MAX_TEMPLATE_VARS];
  uint8_t vars_ = 0;
  bool started_ = false;
  bool missing_ = false;
  bool in_text_ = false;
};

/// A prompts/get in progress: write the messages.
class PromptGet {
 public:
  const Prompt& prompt() const { return *prompt_; }
  /// An argument ("" / fallback when absent).
  StrView arg(StrView name, StrView fallback = StrView()) const;
  json::Value args() const { return args_; }
  Session& session() const { return *session_; }
  /// Starts a message of `role`; write its content (one block) with the returned writer. A
  /// message left without a block gets an empty text; further blocks are ignored.
  ContentWriter& message(Role role);
  void user(StrView text) { message(Role::kUser).text(text); }
  void user(std::initializer_list<TextPiece> pieces) { message(Role::kUser).text(pieces); }
  void assistant(StrView text) { message(Role::kAssistant).text(text); }
  /// -32602 instead of messages (only before the first message).
  void invalid_params(StrView message);

 private:
  friend class Server;
  void end_message();
  Server* server_ = nullptr;
  Session* session_ = nullptr;
  const Prompt* prompt_ = nullptr;
  json::Value args_;
  Reply* reply_ = nullptr;
  ContentWriter content_;
  bool started_ = false;
  bool in_message_ = false;
  bool failed_ = false;
};

/// A completion/complete in progress: offer values starting with prefix().
class Completion {
 public:
  /// The argument or template variable being completed, and what the user typed so far.
  StrView name() const { return name_; }
  StrView prefix() const { return prefix_; }
  /// Another argument already chosen (context.arguments, 2025-06-18 and later).
  StrView context(StrView name) const;
  /// Offers a value (at most 100 are sent, as MCP requires; the rest set hasMore).
  void add(StrView value);
  /// Offers each of `values` that starts with prefix().
  void add_matching(Span<const char* const> values);
  template <size_t N>
  void add_matching(const char* const (&values)[N]) {
    add_matching(Span<const char* const>(values, N));
  }

 private:
  friend class Server;
  json::Writer* w_ = nullptr;
  StrView name_;
  StrView prefix_;
  json::Value context_;
  uint32_t count_ = 0;
  bool more_ = false;
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
/// Writes the params object of a request the server sends.
using ParamsFn = void (*)(json::Writer& w, const void* ctx);

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

  // ---- Sessions
  /// Lets the server broadcast to `s` (list changes, resource updates, logs). Transports call
  /// it when a connection starts, detach() when it ends (pending work of it is dropped).
  void attach(Session& s);
  void detach(Session& s);

  // ---- Input
  /// Answers what one input held (a message or a batch) on the session's channel.
  void handle(Session& s, const jsonrpc::Decoded& d);
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

  // ---- Deferred tool calls
  /// Finishes a deferred call: `fn` writes the result through a ToolCall (args() is missing).
  /// Returns kNotFound for a stale handle, kClosed if the client cancelled it (nothing is sent).
  using FinishFn = void (*)(ToolCall& call, void* ctx);
  Status complete(Pending p, FinishFn fn, void* ctx);
  /// Progress of a deferred call (when the request had a progressToken).
  Status progress(Pending p, double done, double total = -1, StrView message = StrView());
  /// True once the client sent notifications/cancelled for it (or its session ended).
  bool cancelled(Pending p) const;
  /// The session of a deferred call (nullptr for a stale handle).
  Session* session_of(Pending p) const;
  /// True while a deferred call of session `s` answers request `id` (transports use it to
  /// know which requests are still to be answered after handle() returns).
  bool is_deferred(const Session& s, const jsonrpc::Id& id) const;
  /// The request ids of session `s`'s deferred calls still to be answered (not cancelled):
  /// up to `cap` into `out` (valid while those calls are pending); returns how many.
  size_t deferred_ids(const Session& s, jsonrpc::Id* out, size_t cap) const;

  // ---- Requests to the client
  /// Sends `method` with params written by `params(w, params_ctx)` (nullptr: none); `done` is
  /// called once with the response, an error, a timeout (after `timeout_ms`, also sending
  /// notifications/cancelled) or kClosed when the session ends or re-initializes. Returns
  /// kNoSpace when EMCP_MAX_OUTGOING requests are in flight; kInvalidState when another message
  /// is being written on the channel, or before notifications/initialized (any method but
  /// ping: MCP's lifecycle); kClosed when the channel cannot take a message.
  Status request(Session& s, StrView method, ParamsFn params, const void* params_ctx,
                 ResponseFn done, void* done_ctx, uint32_t timeout_ms = 30000);
  /// sampling/createMessage; kNotFound when the client did not declare `sampling`.
  Status sample(Session& s, ParamsFn params, const void* params_ctx, ResponseFn done, void* ctx,
                uint32_t timeout_ms = 60000);
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
  /// ignored.
  using RootsChangedFn = void (*)(Session& s, void* ctx);
  void on_roots_changed(RootsChangedFn fn, void* ctx) {
    roots_changed_ = fn;
    roots_changed_ctx_ = ctx;
    notification_methods_ = &Server::roots_notification;  // linked only when called
  }
  /// ping to the client.
  Status ping(Session& s, ResponseFn done, void* ctx, uint32_t timeout_ms = 30000);

  const ServerInfo& info() const { return info_; }
  /// The platform's clock (milliseconds).
  uint64_t now() const { return platform_.now_ms(); }
  const Platform& platform() const { return platform_; }

 private:
  friend class ToolCall;
  friend class ResourceRead;
  friend class PromptGet;
  friend class Reply;

  struct Deferred {
    Session* session = nullptr;
    const Tool* tool = nullptr;
    Token id;
    Token progress;
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

  using Methods = bool (*)(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static bool resource_methods(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static bool prompt_methods(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  static bool completion_methods(Server& sv, Session& s, const jsonrpc::Message& m, Reply& r);
  void handle_message(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_request(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_notification(Session& s, const jsonrpc::Message& m);
  void on_response(Session& s, const jsonrpc::Message& m);
  void on_initialize(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_tools_list(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_tools_call(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_resources_list(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_templates_list(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_resources_read(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_subscribe(Session& s, const jsonrpc::Message& m, Reply& r, bool on);
  void on_prompts_list(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_prompts_get(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_complete(Session& s, const jsonrpc::Message& m, Reply& r);
  void on_set_level(Session& s, const jsonrpc::Message& m, Reply& r);
  void run_tool(ToolCall& call, Reply& r);
  bool page_start(const jsonrpc::Message& m, Reply& r, size_t total, size_t* start);
  void write_tool(json::Writer& w, const Tool& t, Version v);
  enum class ListKind : uint8_t { kTools, kResources, kPrompts };
  void list_changed(ListKind kind);
  void cancel_deferred(Session& s);
  void close_outgoing(Session& s);
  Status notify_progress(Session& s, const jsonrpc::Id& token, double done, double total, StrView msg,
                         const jsonrpc::Id& related);
  Status send_log(Session& s, LogLevel level, StrView message, StrView logger, const jsonrpc::Id& related);
  void send_list_changed(Session& s, ListKind kind);
  void send_updated(Session& s, StrView uri);
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
  void handle_input(Session& s, const jsonrpc::Decoded& d);
  Deferred* deferred(Pending p);
  const Deferred* deferred(Pending p) const;

  Status send_request(Session& s, StrView method, ParamsFn params, const void* params_ctx,
                      ResponseFn done, void* done_ctx, uint32_t timeout_ms);

  const ServerInfo& info_;
  const Platform& platform_;
  Span<const Tool> tools_;
  Span<const Resource> resources_;
  Span<const ResourceTemplate> templates_;
  Span<const Prompt> prompts_;
  uint16_t page_size_ = EMCP_PAGE_SIZE;
  bool logging_ = true;
  bool has_tools_ = false, has_resources_ = false, has_prompts_ = false;
  Methods resource_methods_ = nullptr;    // installed by set_resources() / set_templates()
  Methods prompt_methods_ = nullptr;      // installed by set_prompts()
  Methods completion_methods_ = nullptr;  // installed by either
  // Client notifications beyond the lifecycle ones: installed by on_roots_changed().
  using NotificationMethods = bool (*)(Server& sv, Session& s, const jsonrpc::Message& m);
  static bool roots_notification(Server& sv, Session& s, const jsonrpc::Message& m);
  NotificationMethods notification_methods_ = nullptr;
  RootsChangedFn roots_changed_ = nullptr;
  void* roots_changed_ctx_ = nullptr;
  // Requests to the client (answers, close, timeouts): installed by the first send_request(),
  // so servers that never ask the client link none of it.
  struct OutgoingOps {
    void (*response)(Server& sv, Session& s, const jsonrpc::Message& m);
    void (*close)(Server& sv, Session& s);
    void (*expire)(Server& sv);
  };
  static const OutgoingOps kOutgoingOps;
  const OutgoingOps* outgoing_ops_ = nullptr;
  // Deferred tool calls (cancellation by request id): installed by the first defer().
  struct DeferredOps {
    void (*cancel_request)(Server& sv, Session& s, json::Value request_id);
  };
  static const DeferredOps kDeferredOps;
  const DeferredOps* deferred_ops_ = nullptr;
  void cancel_request(Session& s, json::Value request_id);
  void expire_outgoing();
  Session* sessions_ = nullptr;
  // The client request being handled or completed: what the server sends meanwhile relates to it.
  friend struct CurrentRequest;
  jsonrpc::Id current_;
  Session* current_session_ = nullptr;
  Deferred deferred_[EMCP_MAX_DEFERRED];
  Outgoing outgoing_[EMCP_MAX_OUTGOING];
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

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_SERVER_H
