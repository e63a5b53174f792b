// emcp/transport/detail/http_slots.h - the HTTP engine's connection and session slots: what
// HttpServer keeps per connection (the HTTP parser, the request's decoding, its output and
// response state) and per MCP session over HTTP (its streams and replay buffer). Internals of
// emcp/transport/http_server.h, in a header of their own so that the public header shows the
// engine's API; StaticHttpServer<> declares their storage. Nothing here is meant to be used
// directly.
//
// Context: the loop that owns the HttpServer.
#ifndef EMCP_TRANSPORT_DETAIL_HTTP_SLOTS_H
#define EMCP_TRANSPORT_DETAIL_HTTP_SLOTS_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/auth/resource_server.h"
#include "emcp/http/http.h"
#include "emcp/http/websocket.h"
#include "emcp/json/reader.h"
#include "emcp/json/sink.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/connection.h"
#include "emcp/transport/detail/http_output.h"
#include "emcp/transport/replay_ring.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace transport {

class HttpServer;

/// Connection slot: the HTTP parser and what decodes one request, and its output (the
/// HttpOutput it is, detail/http_output.h). Declare them through StaticHttpServer<> (or
/// construct with storage of your own and pass a Span).
class HttpConnection : public HttpOutput {
 public:
  /// `out` must hold at least kHeadroom + 64 bytes (HttpOutput).
  HttpConnection(json::Reader& reader, Arena& arena, char* out, size_t out_cap);
  HttpConnection(const HttpConnection&) = delete;
  HttpConnection& operator=(const HttpConnection&) = delete;

 private:
  friend class HttpServer;
  enum class Phase : uint8_t {
    kFree,      // not in use
    kIdle,      // open, between requests
    kRequest,   // reading a request (head or body)
    kDiscard,   // reading a body that will be refused (answer after it)
    kWaiting,   // the request is in; answers still to come (deferred calls)
    kStream,    // an SSE stream (GET, the HTTP+SSE /sse) open for events
    kWebSocket, // upgraded
    kClosing,   // the last answer waits in the output buffer; closed once it is out
  };
  enum class Route : uint8_t { kNone, kPost, kGet, kDelete, kSseStream, kSsePost, kWebSocket, kDocument };

  http::RequestParser parser_;
  ws::FrameParser frames_{EMCP_MAX_MESSAGE_LEN};
  jsonrpc::Decoder decoder_;
  HttpServer* server_ = nullptr;
  uint16_t index_ = 0;
  Phase phase_ = Phase::kFree;
  Route route_ = Route::kNone;
  // The request being served.
  struct Request {
    uint32_t session_gen = 0;   // the generation of session_ when the request named it
    uint32_t input_hash = 0;    // hash of the id of the single message being handled (0: none)
    bool keep_alive = true;
    bool feeding = false;       // the body goes into the decoder
    bool handling = false;      // inside Server::handle() for this connection
    bool ended = false;         // the response ended while handling: end the request afterwards
    bool modern = false;        // the request is of the 2026-07-28 era (served on rpc_)
    bool bad_version = false;   // its MCP-Protocol-Version names no revision known here
    bool fresh = false;         // no request yet: the first head's deadline counts from the accept
    bool preflight = false;     // a CORS preflight (OPTIONS)
    bool held = false;          // rpc_: the request's answer comes after handle() (Channel::request)
  } request_;
  // A GET with Last-Event-ID replaying kept events.
  struct Replay {
    uint32_t sid = 0;           // the stream replayed
    uint32_t after = 0;         // the last event number replayed
    bool active = false;
    bool final = false;         // one of the replayed events ended its stream
  } replay_;
  bool msg_response_ = false;  // rpc_: the message being written is the request's answer
  int8_t stream_ = -1;         // its stream slot in the session
  int16_t session_ = -1;       // the HttpSession it belongs to
  auth::Grant grant_;          // what its request's token grants (HttpOptions::auth)
  const char* extra_header_ = nullptr;  // whole header lines for the response head
  const char* error_text_ = nullptr;    // kDiscard: the refusal to answer with
  uint64_t started_ms_ = 0;    // the request's first byte (the first request's: the accept)
  uint64_t last_ms_ = 0;       // last input or output
  uint64_t opened_ms_ = 0;     // the accept
  PeerAddress peer_;           // who connected (all zero: not known)
  // A 2026-07-28 request is served without a session: on this connection's own mcp::Session,
  // whose channel is the request's response (HttpServer::rpc_open / rpc_close).
  static json::Sink* rpc_open(void* ctx, const mcp::OutMessage& m);
  static Status rpc_close(void* ctx);
  static void rpc_request(void* ctx, const jsonrpc::Id& id, mcp::Channel::RequestEvent event);
  mcp::Session rpc_{mcp::Channel{&HttpConnection::rpc_open, &HttpConnection::rpc_close, this, nullptr,
                                 &HttpConnection::rpc_request}};
};

namespace detail {
// A count of up to EMCP_MAX_DEFERRED (opt.h allows 1000): one byte when that fits.
template <bool OneByte>
struct CountOf {
  using Type = uint16_t;
};
template <>
struct CountOf<true> {
  using Type = uint8_t;
};
}  // namespace detail

/// Session slot: one MCP session over HTTP, with its event streams and replay buffer.
class HttpSession {
 public:
  /// `replay` (may be nullptr/0: no resumability) holds the events kept for Last-Event-ID.
  HttpSession(char* replay, size_t replay_cap);
  HttpSession(const HttpSession&) = delete;
  HttpSession& operator=(const HttpSession&) = delete;
  mcp::Session& session() { return session_; }
  /// The Mcp-Session-Id ("" when the slot is free).
  StrView id() const { return StrView(id_, id_len_); }

 private:
  friend class HttpServer;
  enum class Kind : uint8_t { kFree, kStreamable, kSse, kWebSocket };
  struct Stream {
    bool used = false;
    bool get = false;          // the session's standalone GET stream
    bool sse = false;          // events went out with ids (resumable)
    // Requests held (Channel::request) whose answers go on it.
    detail::CountOf<(EMCP_MAX_DEFERRED <= 255)>::Type awaiting = 0;
    int16_t conn = -1;         // live connection, or -1 (detached: events go to the replay buffer)
    uint32_t id = 0;           // unique in the session (0: none)
    uint32_t seq = 0;          // last event number used
    uint32_t await[EMCP_MAX_DEFERRED];  // FNV-1a hashes of the ids of those requests
    // Awaits the request whose id hashes to `h`; false when as many as the server can hold are.
    bool await_id(uint32_t h) {
      if (awaiting == EMCP_MAX_DEFERRED) return false;
      await[awaiting++] = h;
      return true;
    }
  };

  static json::Sink* open(void* ctx, const mcp::OutMessage& m);
  static Status close(void* ctx);
  static Status end_stream(void* ctx, const jsonrpc::Id& related, uint32_t retry_ms);
  static void request(void* ctx, const jsonrpc::Id& id, mcp::Channel::RequestEvent event);
  static Status detached_flush(void* ctx, const char* data, size_t n);

  mcp::Session session_;
  HttpServer* server_ = nullptr;
  uint16_t index_ = 0;
  Kind kind_ = Kind::kFree;
  uint8_t id_len_ = 0;
  char id_[33] = {};
  uint32_t next_stream_ = 0;
  uint32_t generation_ = 0;    // changes whenever the slot is taken or freed
  uint64_t last_ms_ = 0;
  uint32_t principal_ = 0;     // who opened it (HttpOptions::auth): only they may use it
  PeerAddress peer_;           // the address it was opened from (shares and eviction)
  Stream streams_[EMCP_HTTP_STREAMS];
  // The message being written (between open and close).
  int8_t msg_stream_ = -1;
  bool msg_detached_ = false;
  ReplayRing ring_;           // the events kept for Last-Event-ID
  char detached_buf_[64];
  json::FlushingSink detached_;
};

}  // namespace transport
EMCP_NS_END

#endif  // EMCP_TRANSPORT_DETAIL_HTTP_SLOTS_H
