// emcp/jsonrpc/decoder.h - decodes one JSON-RPC 2.0 message (or batch) as its bytes arrive.
//
// The decoder pulls events from a json::Reader and keeps what it needs in the arena: the
// method, the id, and `params` / `result` / `error` as a json::Value tree. It never needs the
// whole message in a buffer. When the input ends (finish()), it classifies every message:
// request, notification, response, error response, or invalid with the error to answer.
//
// Whole-input failures come back as one kInvalid message, never as a crash:
//   invalid JSON                -> -32700 Parse error, id null, with the reader's status/offset
//   JSON beyond a reader limit  -> -32600, with a request's id when it was read before the limit
//   more than the arena holds   -> -32600 "message too large for the arena", with a request's id
//   not an object or array, []  -> -32600, id null
// A response (result or error, no method) beyond the arena or a reader limit, whose id was read
// intact, comes back instead as an error response to that id (-32603, "response too large for
// the arena" / "response beyond a JSON reader limit") once keep_lost_responses() was called:
// the server's request it answers ends at once with that error rather than by its timeout,
// and nothing is sent to the client (a response is never answered). See lost_response() for
// framers that give up on an input.
// Inside a batch (an array; the server decides whether the negotiated revision allows it),
// each element is classified on its own.
//
// Duplicate members are invalid (-32600): a known envelope member twice ("id" twice) and a
// duplicate key anywhere inside params/result/error alike, so no two readers of a message can
// disagree on what it says. Unknown envelope members are ignored. Ids are strings or JSON
// integers within int64; 1.0 or 2^63 are refused rather than converted.
//
// Context: the loop that owns the reader and the arena.
//
// Example:
//   emcp::json::StaticReader<> reader;
//   emcp::StaticArena<EMCP_ARENA_SIZE> arena;
//   emcp::jsonrpc::Decoder dec(reader, arena);
//   dec.begin();
//   dec.feed(line, len);                       // any number of times
//   const emcp::jsonrpc::Decoded& d = dec.finish();
//   for (const emcp::jsonrpc::Message* m = d.first; m; m = m->next) { ... }
#ifndef EMCP_JSONRPC_DECODER_H
#define EMCP_JSONRPC_DECODER_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "emcp/json/reader.h"
#include "emcp/json/value.h"
#include "emcp/jsonrpc/message.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace jsonrpc {

/// What one input held. Valid until the decoder's next begin().
struct Decoded {
  const Message* first = nullptr;  ///< never null after finish()
  uint32_t count = 0;              ///< messages in the list
  bool batch = false;              ///< the input was a JSON array (answer with an array)
};

class Decoder {
 public:
  /// Uses `reader` and the part of `arena` above its current use (both not owned). Everything
  /// the decoder places in the arena is released by the next begin().
  Decoder(json::Reader& reader, Arena& arena);
  Decoder(const Decoder&) = delete;
  Decoder& operator=(const Decoder&) = delete;

  /// Starts a new message: resets the reader and rewinds the arena to where it was when the
  /// decoder was made.
  void begin();
  /// Feeds the next bytes (any split). They are not retained after the call returns.
  void feed(const void* data, size_t n);
  /// Ends the input and classifies what it held.
  const Decoded& finish();

  /// True once the input can no longer become a valid message (invalid JSON or a reader
  /// limit); a framer may stop feeding and skip to the message end.
  bool failed() const { return reader_.status() != Status::kOk; }
  /// True once the top-level value is complete (only whitespace may follow).
  bool value_complete() const { return reader_.done(); }
  /// The reader's status (kInvalidUtf8... after a failure).
  Status reader_status() const { return reader_.status(); }
  const Arena& arena() const { return arena_; }
  /// The id of a single (non-batch) message if it has been read intact so far, else null. A
  /// framer that gives up on an input (too long) answers with it.
  Id known_id() const;
  /// From now on, every decoder turns a response it cannot keep into an error response to its
  /// id (above). The first request a server sends to a client calls this: an image that never
  /// sends one does not link that code, and has no request a response could answer.
  static void keep_lost_responses();
  /// Why a response could not be kept.
  enum class Lost : uint8_t { kArena, kReaderLimit, kLineLimit, kInput };
  /// For a framer that gives up on the input (a line too long: kLineLimit; bytes of it lost on
  /// the way in: kInput): if it is a single
  /// response whose id was read intact and keep_lost_responses() was called, makes decoded()
  /// one error response to that id, -32603 with the reason as its message, and returns true.
  /// The framer hands that to the server, so the request it answers ends now, with the reason.
  bool lost_response(Lost why) { return lost_ != nullptr && lost_(*this, why); }
  /// What finish() or lost_response() decoded; valid until the next begin().
  const Decoded& decoded() const { return decoded_; }

 private:
  enum Phase : uint8_t { kTop, kBatch, kMember, kValue, kCapture, kSkip, kAfterTop };
  enum Field : uint8_t { kJsonrpc, kId, kMethod, kParams, kResult, kError, kOther };

  // The message being decoded, kept outside the arena so that an arena overflow cannot lose
  // its id.
  struct Element {
    uint8_t seen;               // bit per known field
    uint8_t jsonrpc_len;
    char jsonrpc[4];
    bool jsonrpc_string;
    bool has_method;
    bool method_string;
    char* method;
    uint32_t method_len;
    bool has_id;
    Id id;                      // kString ids point into id_buf_
    const char* id_problem;     // why the id is unusable, or nullptr
    json::Value params, result, error;
    bool has_params, has_result, has_error;
    bool error_object;          // the error member's value began as an object
    const char* problem;        // first structural problem, or nullptr
    bool jsonrpc_ok() const { return jsonrpc_string && jsonrpc_len == 3 && memcmp(jsonrpc, "2.0", 3) == 0; }
    bool saw(Field f) const { return (seen >> f) & 1u; }
    bool responds() const { return saw(kResult) || saw(kError); }  // shaped like a response
  };

  void pump();
  void on_event(json::Event e);
  void on_value(json::Event e);
  void skip_from(json::Event e, Phase then);
  void start_element();
  void end_element();
  void add_message(Message* m);
  bool alloc_message(Message** out);
  void capture(json::Event e);
  void store_capture();
  void note_problem(const char* why) {
    if (el_.problem == nullptr) el_.problem = why;
  }
  Message& whole_error(ErrorCode code, const char* reason, Status cause, int64_t offset, Id id);
  static bool make_lost_response(Decoder& d, Lost why);
  static bool (*lost_)(Decoder& d, Lost why);  // make_lost_response once kept

  json::Reader& reader_;
  Arena& arena_;
  Arena::Mark base_;
  json::TreeBuilder builder_;
  Phase phase_ = kTop;
  Phase skip_return_ = kTop;
  uint32_t skip_depth_ = 0;
  Field field_ = kOther;
  bool batch_ = false;
  bool top_invalid_ = false;
  bool too_large_ = false;
  Element el_ = {};
  uint16_t id_len_ = 0;
  char id_buf_[EMCP_JSONRPC_MAX_ID_LEN];
  Message* last_ = nullptr;
  Message error_;  // whole-input failures live here, not in the (maybe full) arena
  Decoded decoded_;
};

}  // namespace jsonrpc
EMCP_NS_END

#endif  // EMCP_JSONRPC_DECODER_H
