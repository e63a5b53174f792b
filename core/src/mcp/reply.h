// Internal: writing one answer (or notification, or request) to a session's channel.
#ifndef EMCP_SRC_MCP_REPLY_H
#define EMCP_SRC_MCP_REPLY_H

#include <new>

#include "emcp/jsonrpc/encode.h"
#include "emcp/mcp/server.h"

EMCP_NS_BEGIN
namespace mcp {

/// One outbound message on a session's channel: open() starts it, the writer writes it,
/// close() ends it. When the channel cannot start a message, writes go to a counting sink
/// (dropped) and failed() tells.
class Outbound {
 public:
  Outbound(Session& s, const OutMessage& m) : session_(s), message_(m) {}
  Outbound(const Outbound&) = delete;
  Outbound& operator=(const Outbound&) = delete;
  ~Outbound() { (void)close(); }

  /// Starts the message; false when the channel is busy or closed (writes are then dropped).
  bool open();
  json::Writer& w() { return *writer_; }
  Status close();
  bool is_open() const { return writer_ != nullptr; }
  /// Before open(): the message is an error answer (OutMessage::error, ::refused).
  void set_error(jsonrpc::ErrorCode code, bool refused) {
    message_.error = static_cast<int32_t>(code);
    message_.refused = refused;
  }
  bool failed() const { return failed_; }

 private:
  Session& session_;
  OutMessage message_;
  json::Writer* writer_ = nullptr;
  bool owns_channel_ = false;
  bool failed_ = false;
  json::CountingSink discard_;
  alignas(json::Writer) unsigned char storage_[sizeof(json::Writer)];
};

/// A batch being answered: one array on the channel, opened with the first answer.
struct BatchOut {
  Session& session;
  json::Sink* sink = nullptr;
  bool started = false;
  bool failed = false;
  json::CountingSink discard;
  explicit BatchOut(Session& s) : session(s) {}
  /// The sink for the next element (writes '[' or ',').
  json::Sink& element();
  /// Writes ']' and ends the message if any answer was written.
  void finish();
};

/// The answer to one request: the envelope is written lazily by result() or error().
class Reply {
 public:
  /// An unknown id (null) is written as MCP 2025-11-25 has it (no "id" member) for sessions
  /// at that revision or not yet initialized, as JSON-RPC 2.0 has it ("id": null) for older ones.
  /// `peer`: the client behind the request (the session's own, or a modern request's); it
  /// must outlive the reply.
  Reply(Session& s, const Peer& peer, const jsonrpc::Id& id, BatchOut* batch)
      : session_(s), peer_(peer), id_(answer_id(s, id)), batch_(batch) {}
  Reply(const Reply&) = delete;
  Reply& operator=(const Reply&) = delete;
  /// Ends the answer (end()) and tells the channel the request is done, unless suppressed.
  ~Reply();

  /// Opens the answer and writes {"jsonrpc":"2.0","id":..,"result": ; returns the writer for
  /// the result value. Never null: a dead channel, or an answer already ended (an error was
  /// written), gives a writer whose bytes go nowhere.
  json::Writer& result();
  /// result() and the result object's start: {"jsonrpc":"2.0","id":..,"result":{ and, for a
  /// modern peer, "resultType":"complete" and the server's identity in _meta. The handler
  /// writes its members and end() closes the object.
  /// `input_required`: the result is an InputRequiredResult (2026-07-28 multi round-trip
  /// requests) rather than a complete one.
  json::Writer& result_object(bool input_required = false);
  /// For a modern peer, the caching hints of a cacheable result (ttlMs, cacheScope) from the
  /// server's CachePolicy: a list's (server/discover, */list) or a read's (resources/read);
  /// nothing for a legacy peer. Written into the open result object.
  enum class Cacheable : uint8_t { kList, kRead };
  void cache_hints(Cacheable kind);
  /// A whole error answer instead (ignored once anything was written).
  void error(jsonrpc::ErrorCode code, std::initializer_list<TextPiece> message);
  /// The same with the standard message of `code` first: "Invalid params: " + detail.
  void reject(jsonrpc::ErrorCode code, std::initializer_list<TextPiece> detail);
  /// Marks the error written next as refusing the request before it is served (its `_meta`,
  /// headers, revision, a capability it lacks: OutMessage::refused, HTTP 400).
  Reply& refusing() {
    refused_ = true;
    return *this;
  }
  /// An error answer whose `data` the caller writes next with the returned writer.
  json::Writer& error_with_data(jsonrpc::ErrorCode code, std::initializer_list<TextPiece> message);
  /// A whole error answer whose error object (code, message, data) is `object`, JSON written
  /// before (a task's; ignored once anything was written).
  void error_object(jsonrpc::ErrorCode code, StrView object);
  /// The decoder's answer to an invalid message.
  void invalid(const jsonrpc::Message& m);
  /// Closes the envelope and ends the message (not needed for error()).
  void end();
  bool begun() const { return begun_; }
  /// No answer at all (a deferred call, a notification).
  void suppress() { suppressed_ = true; }
  bool suppressed() const { return suppressed_; }
  Session& session() { return session_; }
  const Peer& peer() const { return peer_; }
  const jsonrpc::Id& id() const { return id_; }

 private:
  void error_message(jsonrpc::ErrorCode code, bool standard, std::initializer_list<TextPiece> pieces);
  json::Writer& start(jsonrpc::ErrorCode error = jsonrpc::ErrorCode{});
  OutMessage response_message() const {
    OutMessage m;
    m.kind = OutMessage::Kind::kResponse;
    m.related = id_;
    return m;
  }
  Session& session_;
  const Peer& peer_;
  jsonrpc::Id id_;
  BatchOut* batch_;
  Outbound out_{session_, response_message()};
  json::Writer* element_writer_ = nullptr;
  bool begun_ = false;
  bool ended_ = false;
  bool suppressed_ = false;
  bool refused_ = false;
  alignas(json::Writer) unsigned char storage_[sizeof(json::Writer)];
  json::CountingSink dead_sink_;
  json::Writer dead_{dead_sink_};
};

}  // namespace mcp
EMCP_NS_END

#endif
