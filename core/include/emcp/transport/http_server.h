// emcp/transport/http_server.h - MCP over HTTP: Streamable HTTP (2025-03-26 and later), the
// HTTP+SSE transport of 2024-11-05, and WebSocket, as a byte-in/byte-out engine.
//
// No sockets here: a port (ports/posix: poll(); ports/lwip: the raw API's callbacks, delivered
// from the loop) tells the engine about connections and bytes, and the engine answers through
// HttpPort::write, which never blocks (see HttpPort for what happens to bytes it cannot take). A
// request body goes straight from the HTTP parser into the JSON reader; answers stream out
// through each connection's small buffer. Everything lives in storage the application
// declares (StaticHttpServer<> below holds it all): connection slots with their parser,
// reader, arena and output buffer; session slots with their replay buffer.
//
// Endpoints (HttpOptions; each can be switched off with nullptr):
//   POST   /mcp       JSON-RPC in; the answer as application/json, or as text/event-stream when
//                     something related (progress, logs, requests to the client) goes out first;
//                     202 when the body held only notifications or responses
//   GET    /mcp       the session's stream for server-initiated messages; with Last-Event-ID,
//                     resumes a broken stream from the replay buffer
//   DELETE /mcp       ends the session
//   GET    /sse       2024-11-05 HTTP+SSE: an `endpoint` event, then the session's messages
//   POST   /messages  2024-11-05: ?sessionId=...; 202, the answer goes out on the SSE stream
//   GET    /ws        WebSocket upgrade (subprotocol "mcp"); one JSON-RPC message per text frame
// Built for MCP 2026-07-28 only (EMCP_LEGACY_ERA=0), the engine serves POST /mcp alone, every
// request without a session (GET and DELETE /mcp: 405; /sse, /messages, /ws: 404), and links
// none of the sessions' code (session table, GET stream, resumption, HTTP+SSE, WebSocket).
//
// HTTP errors (each with a short text body) and the server keeps serving:
//   400  bad request line/headers/chunks, no Mcp-Session-Id on a non-initialize request,
//        unsupported MCP-Protocol-Version, body that is not one JSON-RPC message
//   403  Origin or Host not allowed (DNS rebinding protection; http_security.h, which a gateway
//        in front of another server uses too); with HttpOptions::auth, a token
//        without the scope a message needs (WWW-Authenticate: Bearer error="insufficient_scope")
//   401  with HttpOptions::auth: no bearer token, or one that is not valid (WWW-Authenticate:
//        Bearer resource_metadata="..."); 400 for a token in the query string
//   404  unknown path, unknown or ended session
//   405  method not allowed on the path (with Allow)
//   406  Accept without application/json and text/event-stream (POST) / text/event-stream (GET)
//   408  request head or body too slow (HttpOptions timeouts), or slow when a newcomer needed
//        its slot (docs/http.md, "Under attack")
//   409  a second GET stream for a session that has one
//   411/413/414/431/501/505  see emcp/http/http.h
//   415  POST without Content-Type: application/json
//   429  a peer taking other peers' session slots faster than HttpOptions::session_burst allows
//   503  no connection slot, or no session slot, that could be freed (with Retry-After)
//
// Content-Length vs chunked: an answer that fits the connection's output buffer goes out with
// Content-Length; a longer one streams with chunked transfer coding. A second rendering pass to
// count the bytes first would run tool handlers twice (side effects, changing readings), so it
// is not done. HTTP/1.0 clients get the body up to connection close.
//
// Context: the loop that owns the mcp::Server; every call runs there, never from inside a
// network stack's callback. Nothing blocks except a handler's output waiting for the window
// (HttpPort::wait_writable, at most HttpOptions::send_timeout_ms).
#ifndef EMCP_TRANSPORT_HTTP_SERVER_H
#define EMCP_TRANSPORT_HTTP_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include <new>

#include "emcp/auth/resource_server.h"
#include "emcp/json/reader.h"
#include "emcp/json/sink.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/connection.h"
#include "emcp/transport/detail/http_slots.h"
#include "emcp/http/http.h"
#include "emcp/transport/http_security.h"
#include "emcp/transport/replay_ring.h"
#include "emcp/http/websocket.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace transport {

class HttpServer;

struct HttpOptions {
  const char* path = "/mcp";               ///< Streamable HTTP endpoint
  const char* sse_path = "/sse";           ///< 2024-11-05 SSE endpoint (nullptr: off)
  const char* messages_path = "/messages"; ///< 2024-11-05 POST endpoint
  const char* ws_path = "/ws";             ///< WebSocket endpoint (nullptr or no sha1: off)
  /// Host names (no port) the Host header may name; empty: localhost, 127.0.0.1, [::1].
  Span<const char* const> allowed_hosts;
  /// Host names an Origin header may name (any scheme and port); empty: the localhost names.
  /// A request without Origin (not a browser) passes.
  Span<const char* const> allowed_origins;
  /// CORS (browser pages of another origin calling the MCP endpoints): the host names whose
  /// pages may (any scheme and port); empty: every origin the Origin check accepts. A preflight
  /// (OPTIONS with Origin) of such a page is answered 204 before authorization, and every
  /// answer to it carries Access-Control-Allow-Origin; an origin the Origin check refuses still
  /// gets 403, one it accepts but this list does not gets no CORS headers (and 403 to a
  /// preflight). `cors` false: no CORS at all.
  Span<const char* const> cors_origins;
  bool cors = true;
  uint32_t cors_max_age_s = 600;           ///< Access-Control-Max-Age of a preflight (at most 86400)
  /// Bearer-token authorization (OAuth 2.1 resource server, emcp/auth/resource_server.h):
  /// every request but the metadata document needs a token; each message the scopes its tool,
  /// resource or prompt declares. nullptr: no authorization (a device on loopback).
  const auth::AuthHooks* auth = nullptr;  ///< ResourceServer::hooks()
  ws::Sha1Fn sha1 = nullptr;               ///< required for WebSocket (emcp/crypto/sha1.h)
  uint32_t max_body = EMCP_MAX_MESSAGE_LEN;  ///< longest request body / WebSocket message
  /// From a request's first byte to its last header; for a connection's first request, from
  /// the accept (a connection that sends nothing is answered 408 and closed then).
  uint32_t head_timeout_ms = 10000;
  uint32_t body_timeout_ms = 10000;        ///< longest pause inside a body
  uint32_t keepalive_ms = 60000;           ///< idle keep-alive connection (the boards: 5 s)
  /// Longest wait for a connection to take output: a handler's answer waiting for the window
  /// (HttpPort::wait_writable), or an answer left in the buffer that the peer does not read.
  uint32_t send_timeout_ms = 5000;
  uint32_t session_idle_ms = 30u * 60u * 1000u;  ///< session without connections or requests
  /// What every session id of this engine starts with (Mcp-Session-Id, HTTP+SSE's sessionId),
  /// before its 32 random hex digits: the tag of one instance of a fleet, so that a proxy in
  /// front of several instances sends each session's requests to the instance that holds it
  /// (docs/deploy.md). Up to kMaxSessionPrefix characters of A-Z a-z 0-9 - . _ ~ (carried as
  /// they are by a header and a query string); nullptr or "": none (the default). An id
  /// without it is unknown (404). One that is not valid_session_prefix(): no session opens
  /// (500, and the log says why).
  const char* session_prefix = nullptr;
  // ---- Fairness when slots are short (docs/http.md, "Under attack")
  /// When every connection slot is taken, a request head still arriving this long after it
  /// began (or after the accept), or a body paused this long, gives its slot to a newcomer (408).
  uint32_t reclaim_grace_ms = 1000;
  /// A peer's share of the connection slots (0: half of them, rounded up): beyond it, its
  /// connections give way to those of a peer below its share when no slot is free.
  uint16_t max_conns_per_peer = 0;
  /// A peer's share of the session slots (0: half of them, rounded up): beyond it, its sessions
  /// may be evicted for other peers' new ones even while active or streaming.
  uint16_t max_sessions_per_peer = 0;
  /// New sessions that take another peer's (unused) session slot, per peer: this many at once
  /// (0: half the session slots, rounded up), then one per session_refill_ms; beyond that, 429
  /// with Retry-After. Taking a free slot, or one of the peer's own sessions, costs nothing.
  uint16_t session_burst = 0;
  uint32_t session_refill_ms = 1000;
  /// A session with a request of its client this recent is not evicted for another peer's
  /// new session (unless its peer is over its share).
  uint32_t session_active_ms = 60000;
  /// An open event stream or WebSocket keeps its session from eviction only while its client
  /// sent a request within this long.
  uint32_t stream_hold_ms = 60000;
  uint32_t heartbeat_ms = 15000;           ///< SSE comment on a quiet stream (0: none)
  uint32_t retry_ms = 2000;                ///< SSE `retry` field of the priming event
};

/// The longest HttpOptions::session_prefix.
constexpr size_t kMaxSessionPrefix = 16;
/// True when `prefix` may be HttpOptions::session_prefix: nullptr, "", or up to
/// kMaxSessionPrefix characters of A-Z a-z 0-9 - . _ ~.
bool valid_session_prefix(const char* prefix);

/// What the engine refused, reclaimed, timed out and evicted since construction (an operator
/// sees an attack in them; docs/http.md, "Under attack", says what each counts).
struct HttpStats {
  uint32_t refused_busy = 0;          ///< new connection refused: no slot could be reclaimed (503)
  uint32_t reclaimed_slow = 0;        ///< a slow head or stalled body gave its slot (408)
  uint32_t reclaimed_idle = 0;        ///< an idle keep-alive connection gave its slot
  uint32_t displaced = 0;             ///< a connection of a peer over its share gave its slot
  uint32_t shed_keepalive = 0;        ///< an answer said Connection: close: every slot taken, its session holds another
  uint32_t timeout_head = 0;          ///< 408: head not complete in head_timeout_ms
  uint32_t timeout_body = 0;          ///< 408: body paused longer than body_timeout_ms
  uint32_t timeout_idle = 0;          ///< keep-alive connection closed after keepalive_ms
  uint32_t timeout_send = 0;          ///< peer stopped reading for send_timeout_ms
  uint32_t session_refused_rate = 0;  ///< 429: the peer's new-session bucket was empty
  uint32_t session_refused_full = 0;  ///< 503: no session slot could be freed
  uint32_t session_evicted = 0;       ///< a session ended to make room for a new one
  uint32_t session_expired = 0;       ///< a session ended after session_idle_ms
};

/// A peer's bucket for taking other peers' session slots (HttpOptions::session_burst);
/// StaticHttpServer holds one per connection slot.
struct PeerRate {
  PeerAddress peer;           ///< all zero: the entry is unused
  uint16_t tokens = 0;
  uint64_t refilled_ms = 0;  ///< when the last token was added
  uint64_t used_ms = 0;      ///< the last session asked for (the least recent entry is reused)
};

// The connection and session slots (HttpConnection, HttpSession) are the engine's internals:
// emcp/transport/detail/http_slots.h. Declare them through StaticHttpServer<> below.

class HttpServer {
 public:
  /// `options` is read while serving (not copied): it must outlive the server, and may be
  /// filled in after construction, before the first open().
  /// `peers`: the peers' buckets (HttpOptions::session_burst); empty: no per-peer rate.
  HttpServer(mcp::Server& server, const HttpOptions& options, const HttpPort& port,
             Span<HttpConnection> connections, Span<HttpSession> sessions, Span<PeerRate> peers = Span<PeerRate>());
  ~HttpServer();
  HttpServer(const HttpServer&) = delete;
  HttpServer& operator=(const HttpServer&) = delete;

  /// What a listener (or a layer in front of the engine, such as TLS) calls: the functions
  /// below, as a ConnectionHandler.
  ConnectionHandler handler();

  // ---- The port's calls (through handler(), or directly)
  /// A new connection from `peer` (all zero: not known): its slot number, or -1 when no slot
  /// could be had (send transport::busy_response() and close). When all are taken, a slow, idle or
  /// over-share connection gives way first (docs/http.md, "Under attack"; HttpPort::close is
  /// called for it from here).
  int open(const PeerAddress& peer = PeerAddress());
  /// Bytes from connection `conn`. Returns how many were consumed: fewer than `n` when the
  /// connection cannot take a new request yet (an answer still streams); offer the rest again
  /// once wants_input() says so.
  size_t receive(uint16_t conn, const void* data, size_t n);
  /// True when connection `conn` would consume input now.
  bool wants_input(uint16_t conn) const;
  /// Connection `conn` can take more output (after HttpPort::write took fewer bytes than
  /// offered): the engine goes on from where it stopped.
  void writable(uint16_t conn);
  /// True when connection `conn` holds output the port has not taken yet.
  bool output_pending(uint16_t conn) const;
  /// The peer closed connection `conn` (or it failed). The slot is free afterwards.
  void closed(uint16_t conn);
  /// Timeouts, heartbeats, session expiry, and mcp::Server::poll(). Call it now and then
  /// (every 100 ms or so) and after input.
  void poll();

  // ---- Observation (tests, diagnostics)
  size_t connections_in_use() const;
  size_t sessions_in_use() const;
  /// Largest arena use of any connection since construction.
  size_t arena_high_water() const;
  /// Refusals, reclaims, timeouts and evictions since construction.
  const HttpStats& stats() const { return stats_; }
  const HttpOptions& options() const { return options_; }
  mcp::Server& mcp() { return server_; }

 private:
  friend class HttpSession;
  friend class HttpConnection;
  using Conn = HttpConnection;
  using Phase = HttpConnection::Phase;
  using Route = HttpConnection::Route;
  using Body = HttpConnection::Body;

  // ---- Output and answers (http_output.cpp; the framing is HttpOutput's,
  // detail/http_output.h)
  static const HttpOutput::Link::Ops kOutputOps;
  /// What a connection's output asks of this engine: the port, the clock, the head's lines.
  HttpOutput::Link link() { return {&kOutputOps, this, options_.send_timeout_ms, port_.wait_writable != nullptr}; }
  static Status conn_flush(void* ctx, const char* data, size_t n);
  void send_tail(Conn& c, const char* data, size_t n) { c.send_tail(link(), data, n); }
  bool drain_pending(Conn& c, bool wait) { return c.drain(link(), wait); }
  void push_out(Conn& c) { c.push_out(link()); }
  void start_stream_body(Conn& c, const char* content_type, bool sse);
  void finish_body(Conn& c);
  void answer(Conn& c, int status, const char* text, const char* content_type = nullptr);
  // An HTTP error status with a JSON-RPC error (id null) as its body: `code` and `message`,
  // or `invalid` as write_invalid words it.
  void answer_rpc_error(Conn& c, int status, jsonrpc::ErrorCode code, const char* message,
                        const jsonrpc::Message* invalid = nullptr);
  void close_response(Conn& c);

  // ---- Connections, routing, poll (http_server.cpp)
  void end_request(Conn& c);
  void drop(Conn& c, bool tell_port);
  void leave_session(Conn& c);
  void log(const char* text) const;
  void close_when_out(Conn& c);
  void close_with(Conn& c, int status, const char* text, const char* extra = nullptr);
  void on_head(Conn& c);
  void refuse(Conn& c, int status, const char* text, const char* extra = nullptr);
  void on_request_done(Conn& c);
  /// With HttpOptions::auth: true when the token grants every message of `d` its scopes;
  /// otherwise answers 403 and returns false.
  bool permitted(Conn& c, const jsonrpc::Decoded& d);
  bool is_endpoint(StrView path) const;

  // ---- Session table (http_session.cpp)
  /// The session `id` names, if connection `c`'s principal opened it (with HttpOptions::auth;
  /// another principal is told it does not exist).
  HttpSession* session_by_id(StrView id, HttpSession::Kind kind, const Conn& c);
  bool bind_session(Conn& c, const http::Request& r);
  bool session_gone(const Conn& c) const;
  HttpSession* new_session(HttpSession::Kind kind, const PeerAddress& peer, bool* rate_limited);
  HttpSession* evictable_session(const PeerAddress& peer, uint64_t now, bool* rate_limited);
  bool take_session_token(const PeerAddress& peer, uint64_t now);
  // ---- Fair shares of the slots (http_fair.cpp)
  /// Every connection slot is taken: frees the one that gives way to a newcomer from `peer`
  /// (docs/http.md, "Under attack"). False when none may.
  bool make_room(const PeerAddress& peer, uint64_t now);
  void shed_keepalive(Conn& c);
  size_t conns_of(const PeerAddress& peer) const;
  size_t sessions_of(const PeerAddress& peer) const;
  bool over_conn_share(const PeerAddress& peer) const;
  bool over_session_share(const PeerAddress& peer) const;
  HttpSession* open_session(Conn& c, HttpSession::Kind kind);
  /// Writes session `s`'s id as clients see it: HttpOptions::session_prefix, then its digits.
  void write_session_id(json::Sink& out, const HttpSession& s) const;
  void free_session(HttpSession& s);

  // ---- Streamable HTTP: POST, streams, GET stream, resumption, outbound routing
  // (http_streamable.cpp)
  void head_streamable(Conn& c, const http::Request& r, bool stateless);
  void route_post(Conn& c);
  void route_modern_post(Conn& c, const jsonrpc::Decoded& d);
  void serve_modern_request(Conn& c, const jsonrpc::Decoded& d);
  json::Sink* rpc_open(Conn& c, const mcp::OutMessage& m);
  Status rpc_close(Conn& c);
  void rpc_request(Conn& c, mcp::Channel::RequestEvent event);
  void handle_post(Conn& c, const jsonrpc::Decoded& d);
  void route_get(Conn& c);
  void route_delete(Conn& c);
  void open_get_stream(Conn& c, HttpSession& s);
  void resume_stream(Conn& c, HttpSession& s);
  void continue_replay(Conn& c);
  int find_stream(HttpSession& s, uint32_t related_hash) const;
  int handled_stream(const HttpSession& s, uint32_t related_hash) const;
  int new_stream(HttpSession& s, bool get);
  void finish_stream(HttpSession& s, int stream);
  void detach_stream(HttpSession& s, int stream);
  void write_event_prefix(json::Sink& sink, HttpSession& s, HttpSession::Stream& st);
  void write_priming(Conn& c, HttpSession& s, HttpSession::Stream& st, uint32_t retry_ms);
  void poll_sessions(uint64_t now);
  json::Sink* channel_open(HttpSession& s, const mcp::OutMessage& m);
  Status channel_close(HttpSession& s);
  Status channel_end_stream(HttpSession& s, const jsonrpc::Id& related, uint32_t retry_ms);
  void channel_request(HttpSession& s, const jsonrpc::Id& id, mcp::Channel::RequestEvent event);

  // ---- HTTP+SSE of 2024-11-05 (http_sse.cpp)
  void head_sse(Conn& c, const http::Request& r);
  void head_sse_post(Conn& c, const http::Request& r);
  void open_sse(Conn& c);
  void route_sse_post(Conn& c);
  json::Sink* sse_message_begin(Conn& c);

  // ---- WebSocket (http_websocket.cpp; the framing codec is emcp/http/websocket.h)
  void head_websocket(Conn& c, const http::Request& r);
  void upgrade(Conn& c);
  void receive_ws(Conn& c, const uint8_t* p, size_t n);
  void ws_close(Conn& c, uint16_t code);
  json::Sink* ws_message_begin(Conn& c);
  Status ws_message_end(Conn& c);

  mcp::Server& server_;
  const HttpOptions& options_;
  HttpPort port_;
  Span<HttpConnection> conns_;
  Span<HttpSession> sessions_;
  Span<PeerRate> peers_;
  HttpStats stats_;
};

namespace detail {
template <size_t Conns, size_t Sessions, size_t ArenaSize, size_t OutSize, size_t ReplaySize>
struct HttpStorage {
  json::StaticReader<> readers[Conns];
  StaticArena<ArenaSize> arenas[Conns];
  char out[Conns][OutSize];
  // (No session slots: a byte each, for the arrays' sake.)
  char replay[Sessions == 0 ? 1 : Sessions][ReplaySize == 0 || Sessions == 0 ? 1 : ReplaySize];
  alignas(HttpConnection) unsigned char conn_mem[Conns * sizeof(HttpConnection)];
  alignas(HttpSession) unsigned char session_mem[Sessions == 0 ? 1 : Sessions * sizeof(HttpSession)];
  PeerRate peers[Sessions == 0 ? 1 : Conns];  // the new-session buckets (none without sessions)

  HttpConnection* conns() { return static_cast<HttpConnection*>(static_cast<void*>(conn_mem)); }
  HttpSession* sessions() { return static_cast<HttpSession*>(static_cast<void*>(session_mem)); }
  HttpStorage() {
    for (size_t i = 0; i < Conns; ++i) new (&conns()[i]) HttpConnection(readers[i], arenas[i], out[i], OutSize);
    for (size_t i = 0; i != Sessions; ++i)
      new (&sessions()[i]) HttpSession(ReplaySize == 0 ? nullptr : replay[i], ReplaySize);
  }
  ~HttpStorage() {
    for (size_t i = 0; i < Conns; ++i) conns()[i].~HttpConnection();
    for (size_t i = 0; i != Sessions; ++i) sessions()[i].~HttpSession();
  }
};
}  // namespace detail

/// An HttpServer with its own storage: `Conns` connections (each ArenaSize + OutSize bytes
/// plus about 1.9 KiB of parser and reader state) and `Sessions` sessions (each ReplaySize
/// bytes of replay buffer plus about 400 bytes). A server of MCP 2026-07-28 only
/// (EMCP_LEGACY_ERA=0) opens no session: give it 0 (with the legacy era, 0 sessions means
/// every initialize is refused with 503).
template <size_t Conns = 8, size_t Sessions = 4, size_t ArenaSize = EMCP_ARENA_SIZE,
          size_t OutSize = 1536, size_t ReplaySize = 4096>
class StaticHttpServer : private detail::HttpStorage<Conns, Sessions, ArenaSize, OutSize, ReplaySize>,
                         public HttpServer {
  using Storage = detail::HttpStorage<Conns, Sessions, ArenaSize, OutSize, ReplaySize>;
  static_assert(OutSize >= HttpConnection::kHeadroom + 64, "OutSize too small");

 public:
  StaticHttpServer(mcp::Server& server, const HttpOptions& options, const HttpPort& port)
      : Storage(),
        HttpServer(server, options, port, Span<HttpConnection>(Storage::conns(), Conns),
                   Span<HttpSession>(Storage::sessions(), Sessions),
                   Span<PeerRate>(Storage::peers, Sessions == 0 ? 0 : Conns)) {}
};

}  // namespace transport
EMCP_NS_END

#endif  // EMCP_TRANSPORT_HTTP_SERVER_H
