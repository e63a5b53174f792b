// emcp/mcp/handlers.h - what a handler works with: a ToolCall (arguments in, content blocks
// out, progress, logs, deferring), a ResourceRead, a PromptGet, a Completion, and the
// ContentWriter they write content blocks with. Each is valid only while its handler runs (a
// deferred ToolCall again inside Server::complete()).
//
// Context: one loop (see emcp/mcp/server.h).
#ifndef EMCP_MCP_HANDLERS_H
#define EMCP_MCP_HANDLERS_H

#include <stddef.h>
#include <stdint.h>

#include <initializer_list>

#include "emcp/json/value.h"
#include "emcp/json/writer.h"
#include "emcp/mcp/session.h"
#include "emcp/mcp/text.h"
#include "emcp/mcp/types.h"

EMCP_NS_BEGIN
namespace mcp {

class Server;
class Reply;
struct BridgeSlot;

/// Handle of a deferred tool call (ToolCall::defer()). Copyable; stale handles are detected.
struct Pending {
  uint16_t slot = 0xFFFF;
  uint32_t generation = 0;  ///< 2^32 uses of a slot before a stale handle could look fresh
  bool valid() const { return slot != 0xFFFF; }
};

/// Writes the params object of a request the server sends.
using ParamsFn = void (*)(json::Writer& w, const void* ctx);

/// Input from the client while a request runs (a tools/call, prompts/get or resources/read):
/// elicitation, sampling, roots. At protocol revision 2026-07-28 this is a multi round-trip
/// request (basic/patterns/mrtr.mdx): a handler that needs input asks for it and returns; the
/// client gets an input-required result listing what was asked (`inputRequests`) and the
/// state the handler kept (`requestState`, authenticated by the server), fulfils it and sends
/// the request again with the answers (`inputResponses`). The handler runs again from the
/// start and finds them with answer(); it may ask again (rounds are bounded by
/// EMCP_MAX_INPUT_ROUNDS). Nothing is kept on the server between rounds.
///
///   void greet(ToolCall& call) {
///     const json::Value name = call.input().accepted("user_name");   // missing on round 0
///     if (!name.exists()) {
///       if (!call.input().elicit("user_name", "What is your name?", kNameSchema))
///         return call.fail("Cannot ask the user here.");
///       return;                          // answered with the input-required result
///     }
///     call.text({"Hello, ", name["name"].as_string().value_or("?")});
///   }
///
/// A client of 2024-11-05 to 2025-11-25 is asked the same way when the server has an
/// InputBridge (Server::set_input_bridge(), emcp/mcp/input_bridge.h): the questions go to it as
/// requests (elicitation/create, sampling/createMessage, roots/list) while the bridge holds the
/// request, and the handler runs again, with the same id, once every answer is in. Without a
/// bridge the asks return false for such a client.
///
/// Asking works only before any result is written, only for what the request's client
/// declared (elicit() needs `elicitation`, sample() `sampling`, list_roots() `roots`: false
/// otherwise, and missing_capability() answers -32021 when the handler cannot do without).
/// why_not() says why an ask returned false. Answers and state are the client's word: check
/// them like arguments. A tampered, expired or foreign `requestState` is refused (-32602)
/// before the handler runs.
class Inputs {
 public:
  /// The client's answer to input `key` of the previous round (`inputResponses[key]`: an
  /// ElicitResult, CreateMessageResult or ListRootsResult); missing when it sent none.
  json::Value answer(StrView key) const;
  /// For an elicitation: the `content` object of an answer to `key` whose action is "accept";
  /// missing otherwise (declined, cancelled, not answered, malformed).
  json::Value accepted(StrView key) const;
  /// The bytes keep() gave the previous round (authenticated); empty on the first round.
  Span<const uint8_t> state() const { return Span<const uint8_t>(got_, got_len_); }
  /// 0 on the request's first run, then one more for each retry that carried our state.
  uint8_t round() const { return round_; }

  /// Asks the user through the client (elicitation/create, form mode) with `schema` as the
  /// requested schema (flat properties). False when it cannot be asked here (see above).
  bool elicit(StrView key, StrView message, Span<const Param> schema);
  /// Asks the client's model (sampling/createMessage); `params` writes its params object.
  bool sample(StrView key, ParamsFn params, const void* params_ctx);
  /// The common case of sample(): one user message of text, at most `max_tokens` tokens back,
  /// and `system_prompt` when not empty. The model's text is answer(key)["content"]["text"].
  bool sample_text(StrView key, StrView question, uint32_t max_tokens, StrView system_prompt = StrView());
  /// Asks for the client's roots (roots/list).
  bool list_roots(StrView key);
  /// Carries `n` bytes (at most EMCP_REQUEST_STATE_MAX) to the next round, and makes this
  /// round end with an input-required result even if nothing was asked (the client then
  /// retries at once). False when they do not fit or cannot be carried here.
  bool keep(const void* data, size_t n);
  /// True once this round asked for something (or kept state).
  bool asked() const { return asked_; }
  /// Why the last ask or keep() returned false (a sentence for a tool error: "the client did
  /// not declare ..."); "" when none did.
  const char* why_not() const { return why_; }
  /// At 2026-07-28: answers the request with -32021 (it did not declare client capability
  /// `name`, e.g. "sampling", which the handler cannot do without; HTTP 400) and returns true.
  /// For an older client (or once a result is being written) it returns false: answer in your
  /// own way (call.fail("...")).
  bool missing_capability(StrView name);

 private:
  friend class Server;
  friend struct ServerCode;  // core/src/mcp/server_internal.h
  friend struct BridgeCode;  // core/src/mcp/input_bridge_internal.h
  friend struct TaskCode;    // core/src/mcp/tasks_internal.h
  friend class ToolCall;
  friend class PromptGet;
  friend class ResourceRead;
  bool begin(Server& server, Reply& r, const jsonrpc::Message& m);
  // The answer is the inputs' own (an input-required result, or -32021): the handler's
  // results are not written.
  bool owns_answer() const { return asked_ || refused_; }
  // After the handler: ends an input-required result; true when the answer was the inputs' own.
  bool settle();
  bool begin_ask(StrView key, const char* method, bool declared);
  // Nothing is written yet, rounds are left, no -32021 was answered (else why_ says why).
  bool may_ask();
  bool no(const char* why) {
    why_ = why;
    return false;
  }
  bool legacy() const;
  void install();
  friend bool verify_state(Inputs& in, StrView state, const char** why);
  friend void write_state(Inputs& in, json::Writer& w);
  Server* server_ = nullptr;
  Reply* reply_ = nullptr;
  json::Value responses_;
  json::Value params_;              // the request's (an InputBridge copies what it needs)
  StrView method_, name_;           // the request's method and name or uri, bound into the state
  BridgeSlot* slot_ = nullptr;      // a legacy client's request held by the InputBridge
  const char* why_ = "";
  static constexpr size_t kStateCap = EMCP_REQUEST_STATE_MAX != 0 ? EMCP_REQUEST_STATE_MAX : 1;
  uint8_t got_[kStateCap];
  uint8_t kept_[kStateCap];
  uint8_t got_len_ = 0;
  uint8_t kept_len_ = 0;
  uint8_t round_ = 0;
  bool asked_ = false;             // the answer is an input-required result
  bool listed_ = false;            // ... and its inputRequests object is open
  bool refused_ = false;           // missing_capability() answered
  bool in_task_ = false;           // a task's run: asked as at 2026-07-28 for any client (tasks.cpp)
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
  /// Typed arguments after validation. Absent, an argument is the default its Param declares
  /// (`Param::integer("samples").with_default(10)`: integer("samples") is 10), else "", 0 or false.
  StrView str(StrView name) const;
  int64_t integer(StrView name) const;
  double number(StrView name) const;
  bool boolean(StrView name) const;
  /// The same with a fallback of the caller's instead of the declared default.
  StrView str(StrView name, StrView fallback) const;
  int64_t integer(StrView name, int64_t fallback) const;
  double number(StrView name, double fallback) const;
  bool boolean(StrView name, bool fallback) const;
  Session& session() const { return *session_; }
  Server& server() const { return *server_; }
  /// The client behind this call: its revision and capabilities (its session's, or those a
  /// 2026-07-28 request declared in `_meta`).
  const Peer& peer() const;

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
  /// Any JSON-RPC error instead of a result (a task then fails with it); only before any
  /// content, afterwards it turns into fail().
  void error(jsonrpc::ErrorCode code, StrView message);

  /// Input from the client (elicitation, sampling, roots; 2026-07-28): see Inputs.
  Inputs& input() { return inputs_; }

  // ---- While working
  /// notifications/progress when the request carried a progressToken (kNotFound otherwise).
  /// Only before the result started (kInvalidState after).
  Status progress(double done, double total = -1, StrView message = StrView());
  /// notifications/message to this session, filtered by its level (a 2026-07-28 request's: by
  /// the logLevel its _meta named; none without one). After the result started it is held and
  /// follows the answer (kOk; kInvalidState, counted as dropped, when the queue,
  /// EMCP_NOTIFY_QUEUE, has no room, and always for a 2026-07-28 request, whose logs belong
  /// before its answer).
  Status log(LogLevel level, StrView message, StrView logger = StrView());
  /// Streamable HTTP (SEP-1699 polling): ends the HTTP stream that carries this call and tells
  /// the client to come back after `retry_ms`; progress and the result then wait in the
  /// session's replay buffer until the client reconnects (GET with Last-Event-ID). Frees the
  /// connection during long work. kInvalidState on transports without resumable streams
  /// (stdio, WebSocket, HTTP+SSE) or when the answer has started.
  Status close_stream(uint32_t retry_ms);
  /// Finishes the call later, outside the handler: returns a handle for Server::complete(),
  /// Server::progress() and Server::cancelled(). When EMCP_MAX_DEFERRED calls are pending, the
  /// handle is invalid and the call has been answered with an isError result. Arguments are
  /// gone after the handler returns: copy what you need. The progress token is kept when it
  /// fits EMCP_JSONRPC_MAX_ID_LEN bytes (else progress() of the deferred call is kNotFound).
  Pending defer();

 private:
  friend class Server;
  friend struct ServerCode;  // core/src/mcp/server_internal.h
  friend struct BridgeCode;  // core/src/mcp/input_bridge_internal.h
  friend struct TaskCode;    // core/src/mcp/tasks_internal.h
  bool begin_result();
  void finish();
  const Param* declared_default(StrView name, Param::DefaultKind kind) const;
  int64_t declared_integer(StrView name) const;

  Server* server_ = nullptr;
  Session* session_ = nullptr;
  const Tool* tool_ = nullptr;
  json::Value args_;
  Reply* reply_ = nullptr;
  ContentWriter content_;
  json::Value progress_value_;  // the request's _meta.progressToken (defer() copies it)
  Inputs inputs_;
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
  /// Input from the client (elicitation, sampling, roots; 2026-07-28): see Inputs.
  Inputs& input() { return inputs_; }

 private:
  friend class Server;
  friend struct ServerCode;  // core/src/mcp/server_internal.h
  bool begin();
  Inputs inputs_;
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
  /// Input from the client (elicitation, sampling, roots; 2026-07-28): see Inputs.
  Inputs& input() { return inputs_; }

 private:
  friend class Server;
  friend struct ServerCode;  // core/src/mcp/server_internal.h
  void end_message();
  Inputs inputs_;
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
  friend struct ServerCode;  // core/src/mcp/server_internal.h
  json::Writer* w_ = nullptr;
  StrView name_;
  StrView prefix_;
  json::Value context_;
  uint32_t count_ = 0;
  bool more_ = false;
};


}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_HANDLERS_H
