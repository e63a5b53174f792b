// MCP over HTTP, the engine: connection slots and the port's calls, output (the connection's
// buffer, response heads, Content-Length / chunked / WebSocket framing, bytes the port has not
// taken yet), answers, routing of a request to its transport, and the timers. The transports
// live beside it: http_streamable.cpp (Streamable HTTP, with the outbound routing of messages to
// streams), http_sse.cpp (HTTP+SSE of 2024-11-05), http_websocket.cpp; the session table
// in http_session.cpp; the replay buffer in replay_ring.cpp; the admission of a request
// (Host/Origin, CORS, authorization) in http_security.cpp, shared with tools/bridge's gateway.
#include "emcp/transport/http_server.h"

#include <string.h>

#include "emcp/json/writer.h"
#include "emcp/jsonrpc/encode.h"

EMCP_NS_BEGIN
namespace transport {

using jsonrpc::Id;

namespace {

size_t format_hex(uint64_t v, char* out) {
  char tmp[16];
  size_t n = 0;
  do {
    tmp[n++] = "0123456789abcdef"[v & 15];
    v >>= 4;
  } while (v != 0);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

}  // namespace

// ---- Slots --------------------------------------------------------------------------------------

HttpConnection::HttpConnection(json::Reader& reader, Arena& arena, char* out, size_t out_cap)
    : decoder_(reader, arena),
      sink_(out + kHeadroom, out_cap - kHeadroom - 2, &HttpServer::conn_flush, this),
      out_(out) {
  EMCP_ASSERT(out_cap >= kHeadroom + 64 && out_cap <= 0x7FFFFFFFu);
  output_.cap = static_cast<uint32_t>(out_cap);
}

HttpServer::HttpServer(mcp::Server& server, const HttpOptions& options, const HttpPort& port,
                       Span<HttpConnection> connections, Span<HttpSession> sessions, Span<PeerRate> peers)
    : server_(server), options_(options), port_(port), conns_(connections), sessions_(sessions), peers_(peers) {
  EMCP_ASSERT(connections.size() < 0x7FFF && sessions.size() < 0x7FFF);
  // Session ids come from the platform's random source (emcp/platform.h); the port must write.
  EMCP_ASSERT(server.platform().random != nullptr && port.write != nullptr);
  for (size_t i = 0; i < conns_.size(); ++i) {
    conns_[i].server_ = this;
    conns_[i].index_ = static_cast<uint16_t>(i);
  }
  for (size_t i = 0; i < sessions_.size(); ++i) {
    sessions_[i].server_ = this;
    sessions_[i].index_ = static_cast<uint16_t>(i);
  }
}

HttpServer::~HttpServer() {
  for (HttpSession& s : sessions_)
    if (EMCP_LEGACY_ERA && s.kind_ != HttpSession::Kind::kFree) server_.detach(s.session_);
  for (Conn& c : conns_) server_.detach(c.rpc_);
}

namespace {
const ConnectionHandler::Ops kEngineOps = {
    [](void* ctx, const PeerAddress& peer) { return static_cast<HttpServer*>(ctx)->open(peer); },
    [](void* ctx, uint16_t conn, const void* data, size_t n) {
      return static_cast<HttpServer*>(ctx)->receive(conn, data, n);
    },
    [](void* ctx, uint16_t conn) { return static_cast<HttpServer*>(ctx)->wants_input(conn); },
    [](void* ctx, uint16_t conn) { static_cast<HttpServer*>(ctx)->writable(conn); },
    [](void* ctx, uint16_t conn) { static_cast<HttpServer*>(ctx)->closed(conn); },
    [](void* ctx) { static_cast<HttpServer*>(ctx)->poll(); },
    [](void* ctx) { return static_cast<HttpServer*>(ctx)->mcp().now(); },
    [](void*) { return busy_response(); },
};
}  // namespace

ConnectionHandler HttpServer::handler() { return ConnectionHandler(&kEngineOps, this); }

size_t HttpServer::connections_in_use() const {
  size_t n = 0;
  for (const Conn& c : conns_) n += c.phase_ != Phase::kFree ? 1 : 0;
  return n;
}

size_t HttpServer::sessions_in_use() const {
  size_t n = 0;
  for (const HttpSession& s : sessions_) n += s.kind_ != HttpSession::Kind::kFree ? 1 : 0;
  return n;
}

size_t HttpServer::arena_high_water() const {
  size_t hw = 0;
  for (const Conn& c : conns_) {
    const size_t h = c.decoder_.arena().high_water();
    if (h > hw) hw = h;
  }
  return hw;
}

// ---- Connections --------------------------------------------------------------------------------

int HttpServer::open(const PeerAddress& peer) {
  // Every slot busy: a slow, idle or over-share connection makes room (http_fair.cpp); only
  // when none may is the newcomer refused (busy_response()).
  bool any_free = false;
  for (const Conn& c : conns_) any_free = any_free || c.phase_ == Phase::kFree;
  if (!any_free && !make_room(peer, server_.now())) {
    ++stats_.refused_busy;
    log("http: all connections busy and none may give way: 503");
    return -1;
  }
  for (Conn& c : conns_) {
    if (c.phase_ != Phase::kFree) continue;
    c.parser_.set_max_body(options_.max_body);
    c.parser_.reset();
    c.frames_ = ws::FrameParser(options_.max_body);
    c.sink_.reset();
    c.phase_ = Phase::kIdle;
    c.route_ = Route::kNone;
    c.body_ = Body::kNone;
    c.output_.head_sent = c.output_.head_pending = c.request_.feeding = c.request_.handling = c.output_.dead = c.output_.sse = c.output_.tee = c.request_.ended = false;
    c.output_.force_sse = c.output_.defer = c.replay_.active = c.output_.cors = c.request_.preflight = false;
    c.output_.pend_off = c.output_.pend_len = 0;
    c.request_.input_hash = 0;
    c.ws_.first = true;
    c.ws_.final = false;
    c.request_.keep_alive = true;
    c.session_ = -1;
    c.stream_ = -1;
    c.status_ = 200;
    c.last_ms_ = c.started_ms_ = c.opened_ms_ = server_.now();
    c.request_.fresh = true;
    c.peer_ = peer;
    return c.index_;
  }
  return -1;
}

bool HttpServer::wants_input(uint16_t conn) const {
  if (conn >= conns_.size()) return false;
  const Conn& c = conns_[conn];
  // Output the peer has not taken yet holds its input back too (no new request is answered
  // into a full window).
  if (c.output_.pend_len != 0) return false;
  return c.phase_ == Phase::kIdle || c.phase_ == Phase::kRequest || c.phase_ == Phase::kDiscard ||
         c.phase_ == Phase::kWebSocket;
}

bool HttpServer::output_pending(uint16_t conn) const {
  return conn < conns_.size() && conns_[conn].phase_ != Phase::kFree && conns_[conn].output_.pend_len != 0;
}

void HttpServer::writable(uint16_t conn) {
  if (conn >= conns_.size()) return;
  Conn& c = conns_[conn];
  if (c.phase_ == Phase::kFree || c.request_.handling) return;
  (void)drain_pending(c, false);
  if (c.output_.dead || (c.phase_ == Phase::kClosing && c.output_.pend_len == 0)) {
    drop(c, true);
    return;
  }
  if (c.replay_.active && c.output_.pend_len == 0) continue_replay(c);
}

void HttpServer::closed(uint16_t conn) {
  if (conn >= conns_.size() || conns_[conn].phase_ == Phase::kFree) return;
  drop(conns_[conn], false);
}

// The connection no longer serves its session: its stream is detached, and a session that
// lives on it (HTTP+SSE, WebSocket) ends. Nothing routes to it afterwards.
void HttpServer::leave_session(Conn& c) {
  const Phase was = c.phase_;
  if (EMCP_LEGACY_ERA && c.session_ >= 0) {
    HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
    if (c.stream_ >= 0) detach_stream(s, c.stream_);
    if ((s.kind_ == HttpSession::Kind::kSse && was == Phase::kStream) ||
        (s.kind_ == HttpSession::Kind::kWebSocket && was == Phase::kWebSocket))
      free_session(s);
  }
  c.session_ = -1;
  c.stream_ = -1;
  if (c.request_.modern) {
    c.request_.modern = false;
    server_.detach(c.rpc_);  // a request still running is cancelled
  }
}

// Ends the connection once the port has taken its last bytes (at once when nothing waits).
void HttpServer::close_when_out(Conn& c) {
  if (c.request_.handling || c.output_.dead || c.output_.pend_len == 0) {
    drop(c, true);
    return;
  }
  leave_session(c);
  c.phase_ = Phase::kClosing;  // writable() or poll() closes it
}

void HttpServer::drop(Conn& c, bool tell_port) {
  if (c.phase_ == Phase::kFree) return;
  if (c.request_.handling) {  // inside Server::handle(): finish when it returns
    c.output_.dead = true;
    return;
  }
  leave_session(c);
  c.phase_ = Phase::kFree;
  c.request_.ended = false;
  c.output_.pend_off = c.output_.pend_len = 0;  // whatever the port did not take is lost with the connection
  c.replay_.active = false;
  c.sink_.release();
  c.sink_.reset();
  if (tell_port && port_.close != nullptr) port_.close(port_.ctx, c.index_);
}

// A line of diagnostics through the platform's log (emcp/platform.h), when it has one.
void HttpServer::log(const char* text) const {
  const Platform& p = server_.platform();
  if (p.log != nullptr) p.log(text, strlen(text));
}

// ---- Output -------------------------------------------------------------------------------------
//
// The port takes what it can (HttpPort::write). Bytes it did not take at the end of a message
// (`may_defer`) stay where they are in the connection's output buffer, out_[output_.pend_off,
// +output_.pend_len); the sink is held meanwhile (json::Sink::hold), so the first byte of the next
// output waits for them (drain_pending) and nothing overwrites them. writable() and poll()
// move them on. Bytes in the middle of a message (the sink is full and the handler still
// writes) cannot wait there: the engine waits for the window instead, at most send_timeout_ms.

// Offers out_[output_.pend_off, +output_.pend_len) to the port; with `wait`, until all is taken (or the
// connection failed or timed out: then it is dead). True when nothing is pending any more.
bool HttpServer::drain_pending(Conn& c, bool wait) {
  const uint64_t deadline = server_.now() + options_.send_timeout_ms;
  while (c.output_.pend_len != 0 && !c.output_.dead) {
    size_t taken = 0;
    const Status st = port_.write(port_.ctx, c.index_, c.out_ + c.output_.pend_off, c.output_.pend_len, &taken);
    if (st != Status::kOk || taken > c.output_.pend_len) {
      c.output_.dead = true;
      break;
    }
    if (taken != 0) c.last_ms_ = server_.now();
    c.output_.pend_off += static_cast<uint32_t>(taken);
    c.output_.pend_len -= static_cast<uint32_t>(taken);
    if (c.output_.pend_len == 0 || taken != 0) continue;
    if (!wait) return false;
    const uint64_t now = server_.now();
    if (port_.wait_writable != nullptr && now < deadline &&
        port_.wait_writable(port_.ctx, c.index_, static_cast<uint32_t>(deadline - now)) == Status::kOk)
      continue;
    if (port_.wait_writable != nullptr && server_.now() >= deadline) {  // as poll() counts it
      log("http: connection dropped: its peer stopped reading (send_timeout_ms)");
      ++stats_.timeout_send;
    }
    c.output_.dead = true;
  }
  if (c.output_.dead) c.output_.pend_len = 0;  // dropped with the connection
  c.output_.pend_off = 0;
  c.sink_.release();
  return !c.output_.dead;
}

// Holds the sink while bytes of the buffer wait for the port.
void HttpServer::lend(Conn& c) {
  if (c.output_.pend_len != 0 && !c.sink_.held() && c.sink_.buffered() == 0) c.sink_.hold();
}

// Hands data[0, n) to the port, after whatever is pending. The bytes are in the connection's
// output buffer (every output is assembled there), so what the port does not take stays
// pending: with `may_defer` until writable() or poll(); otherwise the engine waits for it.
Status HttpServer::send(Conn& c, const char* data, size_t n, bool may_defer) {
  if (c.output_.dead || !drain_pending(c, true)) return Status::kClosed;
  EMCP_ASSERT(data >= c.out_ && data + n <= c.out_ + c.output_.cap);
  c.output_.pend_off = static_cast<uint32_t>(data - c.out_);
  c.output_.pend_len = static_cast<uint32_t>(n);
  (void)drain_pending(c, !may_defer);
  return c.output_.dead ? Status::kClosed : Status::kOk;
}

// A few bytes that end a piece of output (a last chunk, a WebSocket control frame, an interim
// response): they go after what is pending, and wait with it if the port cannot take them.
// The sink must be empty.
void HttpServer::send_tail(Conn& c, const char* data, size_t n) {
  if (c.output_.dead) return;
  EMCP_ASSERT(c.sink_.buffered() == 0 && n <= c.output_.cap);
  if (c.output_.pend_len + n > c.output_.cap && !drain_pending(c, true)) return;  // no room even compacted
  if (c.output_.pend_off + c.output_.pend_len + n > c.output_.cap) {
    memmove(c.out_, c.out_ + c.output_.pend_off, c.output_.pend_len);
    c.output_.pend_off = 0;
  }
  memcpy(c.out_ + c.output_.pend_off + c.output_.pend_len, data, n);  // data: a literal or the caller's array
  c.output_.pend_len += static_cast<uint32_t>(n);
  (void)drain_pending(c, false);
  lend(c);
}

// A head with no body bytes in the buffer: after what is pending; one longer than the whole
// buffer (a small OutSize) goes through it in pieces, each waited for.
void HttpServer::send_head(Conn& c, const char* head, size_t k) {
  if (k <= c.output_.cap) return send_tail(c, head, k);
  while (k != 0 && drain_pending(c, true)) {
    const size_t n = k < c.output_.cap ? k : c.output_.cap;
    memcpy(c.out_, head, n);
    (void)send(c, c.out_, n, false);
    head += n;
    k -= n;
  }
}

// Puts head[0, k) in front of the output at `start` (the bytes before it in out_ are free);
// when it is longer than that room, its beginning is sent first, alone (after what is pending),
// from the front of the buffer. Returns where the head's (rest's) bytes start.
char* HttpServer::place_head(Conn& c, const char* head, size_t k, char* start) {
  const size_t room = static_cast<size_t>(start - c.out_);
  if (k > room) {
    const size_t first = k - room;  // <= room: kMaxHead is at most twice the smallest room
    if (drain_pending(c, true)) {
      memcpy(c.out_, head, first);
      (void)send(c, c.out_, first, false);
    }
    head += first;
    k = room;
  }
  start -= k;
  memcpy(start, head, k);
  return start;
}

// An answer starting on `c` gives up its connection after it, and says so with Connection:
// close, when every connection slot is taken and its session holds another one (its GET
// stream, a call's stream): its client keeps several connections and opens another when it
// needs one. Otherwise the next newcomer would take an idle keep-alive connection's slot
// (http_fair.cpp), and a request its client sent on that connection meanwhile would be lost
// with it (a POST is never retried); told now, the client does not reuse this one. Clients
// that fit the slots, one connection each, keep theirs. Decided while `c` still names its
// session (a 202 forgets it before its head is written).
void HttpServer::shed_keepalive(Conn& c) {
  if (!c.request_.keep_alive || c.session_ < 0) return;
  bool shared = false;
  for (const Conn& o : conns_) {
    if (o.phase_ == Phase::kFree) return;
    shared = shared || (&o != &c && o.session_ == c.session_);
  }
  if (!shared) return;
  c.request_.keep_alive = false;
  ++stats_.shed_keepalive;
}

// The head of a response into dst (at most cap bytes); returns its length.
size_t HttpServer::write_head(Conn& c, char* dst, size_t cap, int64_t length) {
  json::BufferSink h(dst, cap);
  http::write_status_line(h, c.status_);
  if (c.content_type_ != nullptr) http::write_header(h, "Content-Type", StrView(c.content_type_));
  if (c.body_ == Body::kChunked) http::write_header(h, "Transfer-Encoding", "chunked");
  else if (length >= 0 && c.status_ != 204) http::write_header(h, "Content-Length", static_cast<uint64_t>(length));
  if (c.output_.sse) http::write_header(h, "Cache-Control", "no-cache");
  if (EMCP_LEGACY_ERA && c.session_ >= 0) {
    HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
    if (s.kind_ == HttpSession::Kind::kStreamable && s.session_.initialized())
      http::write_header(h, "Mcp-Session-Id", s.id());
  }
  if (c.extra_header_ != nullptr) h.write(StrView(c.extra_header_));
  if (c.output_.cors) write_cors_headers(options_, h, c.parser_.request(), c.request_.preflight);
  shed_keepalive(c);
  if (!c.request_.keep_alive) http::write_header(h, "Connection", "close");
  http::write_end_head(h);
  EMCP_ASSERT(h.status() == Status::kOk);
  return h.view().size();
}

// Starts a response whose length is unknown (SSE, or JSON that outgrew the buffer): chunked
// on HTTP/1.1, until close on HTTP/1.0. The head goes out with the first bytes.
void HttpServer::start_stream_body(Conn& c, const char* content_type, bool sse) {
  c.content_type_ = content_type;
  c.output_.sse = sse;
  c.body_ = c.parser_.request().version_minor >= 1 ? Body::kChunked : Body::kUntilClose;
  if (c.body_ == Body::kUntilClose) c.request_.keep_alive = false;
  c.output_.head_pending = true;
}

// Sends what the sink holds (with the pending head); the head alone when the sink is empty.
// It ends a piece of output: what the port cannot take now waits in the buffer.
void HttpServer::push_out(Conn& c) {
  if (c.sink_.buffered() != 0) {
    c.output_.defer = true;
    (void)c.sink_.flush();
    c.output_.defer = false;
    lend(c);
    return;
  }
  if (c.output_.head_pending) {
    char head[HttpConnection::kMaxHead];
    const size_t n = write_head(c, head, sizeof head, -1);
    c.output_.head_pending = false;
    c.output_.head_sent = true;
    send_head(c, head, n);
  }
}

Status HttpServer::conn_flush(void* ctx, const char* data, size_t n) {
  Conn& c = *static_cast<Conn*>(ctx);
  HttpServer& hs = *c.server_;
  if (n == 0) {
    // The sink was held (its buffer still has bytes for the port) and is written again. An
    // event whose connection failed still goes whole into the replay buffer (output_.tee, below).
    const bool ok = hs.drain_pending(c, true);
    return ok || c.output_.tee ? Status::kOk : Status::kClosed;
  }
  if (EMCP_LEGACY_ERA && c.output_.tee && c.session_ >= 0) hs.sessions_[static_cast<size_t>(c.session_)].ring_.append(data, n);
  // data is the sink's buffer: out_ + kHeadroom, with 2 spare bytes after it.
  char* start = const_cast<char*>(data);
  size_t len = n;
  if (c.body_ == Body::kBuffered) {
    // The answer outgrew the buffer: its length is unknown, so it streams.
    c.body_ = c.parser_.request().version_minor >= 1 ? Body::kChunked : Body::kUntilClose;
    if (c.body_ == Body::kUntilClose) c.request_.keep_alive = false;
    c.output_.head_pending = true;
  }
  if (c.body_ == Body::kChunked) {
    char line[12];
    size_t k = format_hex(n, line);
    line[k++] = '\r';
    line[k++] = '\n';
    start -= k;
    memcpy(start, line, k);
    len += k;
    start[len++] = '\r';
    start[len++] = '\n';
  } else if (c.body_ == Body::kWs) {
    uint8_t hdr[10];
    const size_t k = ws::write_frame_header(hdr, c.ws_.first ? ws::Opcode::kText : ws::Opcode::kContinuation,
                                            c.ws_.final, n);
    c.ws_.first = false;
    start -= k;
    memcpy(start, hdr, k);
    len += k;
  }
  if (c.output_.head_pending) {
    char head[HttpConnection::kMaxHead];
    const size_t k = hs.write_head(c, head, sizeof head, -1);
    char* const at = hs.place_head(c, head, k, start);
    len += static_cast<size_t>(start - at);
    start = at;
    c.output_.head_pending = false;
    c.output_.head_sent = true;
  }
  const Status st = hs.send(c, start, len, c.output_.defer);
  // An event whose connection failed still goes whole into the replay buffer (the sink keeps
  // taking its bytes); the connection is dropped at the next safe point.
  return c.output_.tee ? Status::kOk : st;
}

// Ends the response body: Content-Length answer, last chunk, or close.
void HttpServer::finish_body(Conn& c) {
  if (c.body_ == Body::kBuffered) {
    const size_t body = c.sink_.buffered();
    char* const base = c.out_ + HttpConnection::kHeadroom;
    char head[HttpConnection::kMaxHead];
    const size_t k = write_head(c, head, sizeof head, static_cast<int64_t>(body));
    c.output_.head_pending = false;
    c.output_.head_sent = true;
    if (body == 0) {
      send_head(c, head, k);  // the buffer may still hold the previous answer's end
    } else {
      char* const at = place_head(c, head, k, base);
      (void)send(c, at, static_cast<size_t>(base - at) + body, true);
    }
  } else if (c.body_ == Body::kChunked) {
    push_out(c);
    send_tail(c, "0\r\n\r\n", 5);
  } else if (c.body_ == Body::kUntilClose) {
    push_out(c);
    c.request_.keep_alive = false;
  }
  c.sink_.reset();
  lend(c);
  c.body_ = Body::kNone;
  c.output_.sse = false;
  c.output_.tee = false;
}

// Ends the connection's response: what it holds goes out and ends; a request that got nothing
// (its call was cancelled, its session ended) gets an event stream without events rather than
// wait forever.
void HttpServer::close_response(Conn& c) {
  if (c.body_ == Body::kNone && !c.output_.head_pending && !c.output_.head_sent) start_stream_body(c, "text/event-stream", true);
  finish_body(c);
  end_request(c);
}

void HttpServer::answer(Conn& c, int status, const char* text, const char* content_type) {
  c.status_ = status;
  c.content_type_ = text != nullptr ? (content_type ? content_type : "text/plain; charset=utf-8") : nullptr;
  c.body_ = Body::kBuffered;
  c.output_.sse = false;
  c.sink_.reset();
  if (text != nullptr) {
    c.sink_.write(StrView(text));
    c.sink_.put('\n');
  }
  finish_body(c);
  end_request(c);
}

void HttpServer::answer_rpc_error(Conn& c, int status, jsonrpc::ErrorCode code, const char* message,
                                  const jsonrpc::Message* invalid) {
  c.status_ = status;
  c.content_type_ = "application/json";
  c.body_ = Body::kBuffered;
  c.output_.sse = false;
  c.sink_.reset();
  json::Writer w(c.sink_);
  // An id that could not be read is "id":null in JSON-RPC 2.0; the 2026-07-28 schema has no null
  // id, so an error of that era leaves it out (as 2025-11-25 does).
  const bool omit = c.request_.modern;
  if (invalid != nullptr) {
    jsonrpc::Message m = *invalid;
    if (omit && m.id.type == Id::Type::kNull) m.id = Id{};
    jsonrpc::write_invalid(w, m);
  } else {
    jsonrpc::write_error(w, omit ? Id{} : Id::null(), code, StrView(message));
  }
  finish_body(c);
  end_request(c);
}

// The response is complete: the next request may come (keep-alive), or the connection ends.
void HttpServer::end_request(Conn& c) {
  if (c.request_.handling) {
    c.request_.ended = true;  // finished when handle() returns
    return;
  }
  if (EMCP_LEGACY_ERA && c.stream_ >= 0 && c.session_ >= 0) {
    // Never leave a stream naming a connection that moves on.
    detach_stream(sessions_[static_cast<size_t>(c.session_)], c.stream_);
    c.stream_ = -1;
  }
  if (c.request_.modern) {
    c.request_.modern = false;
    server_.detach(c.rpc_);
  }
  if (c.output_.dead || !c.request_.keep_alive) {
    close_when_out(c);
    return;
  }
  c.parser_.reset();
  c.sink_.reset();
  c.phase_ = Phase::kIdle;
  c.route_ = Route::kNone;
  c.body_ = Body::kNone;
  c.output_.head_sent = c.output_.head_pending = c.request_.feeding = c.output_.sse = c.output_.tee = c.request_.ended = c.output_.force_sse = false;
  c.output_.cors = c.request_.preflight = false;  // the next request's Origin decides (a 408 before its head: none)
  c.request_.input_hash = 0;
  c.session_ = -1;
  c.stream_ = -1;
  c.status_ = 200;
  c.extra_header_ = nullptr;
  c.content_type_ = nullptr;
  c.last_ms_ = server_.now();
}

// ---- Input --------------------------------------------------------------------------------------

size_t HttpServer::receive(uint16_t conn, const void* data, size_t n) {
  if (conn >= conns_.size()) return n;
  Conn& c = conns_[conn];
  if (c.phase_ == Phase::kFree || c.phase_ == Phase::kClosing) return n;
  if (c.output_.pend_len != 0 && !drain_pending(c, false)) {
    if (c.output_.dead && !c.request_.handling) drop(c, true);
    return c.phase_ == Phase::kFree ? n : 0;  // the last answer is not out yet: offer it later
  }
  const uint8_t* p = static_cast<const uint8_t*>(data);
  size_t left = n;
  c.last_ms_ = server_.now();
  while (left != 0 || c.phase_ == Phase::kRequest || c.phase_ == Phase::kDiscard) {
    if (c.phase_ == Phase::kFree) return n;  // dropped: the rest is of no use
    if (EMCP_LEGACY_ERA && c.phase_ == Phase::kWebSocket) {
      receive_ws(c, p, left);
      return n;
    }
    if (c.phase_ != Phase::kIdle && c.phase_ != Phase::kRequest && c.phase_ != Phase::kDiscard) break;
    if (c.output_.dead) break;
    if (c.phase_ == Phase::kIdle) {
      // A pipelined request behind an answer still waiting for the window stays with the port
      // (as wants_input() says): answered now, it would make the engine wait for this peer's
      // window, and serve nobody else meanwhile, until the send timeout.
      if (left == 0 || c.output_.pend_len != 0) break;
      c.phase_ = Phase::kRequest;
      c.started_ms_ = c.request_.fresh ? c.opened_ms_ : c.last_ms_;  // the first head: from the accept
      c.request_.fresh = false;
    }
    size_t used = 0;
    const http::RequestParser::Event e = c.parser_.push(p, left, &used);
    p += used;
    left -= used;
    switch (e) {
      case http::RequestParser::Event::kNeedInput:
        if (left == 0) goto out;
        break;
      case http::RequestParser::Event::kHead:
        on_head(c);
        break;
      case http::RequestParser::Event::kBody:
        if (c.request_.feeding) c.decoder_.feed(c.parser_.body().data(), c.parser_.body().size());
        break;
      case http::RequestParser::Event::kDone:
        on_request_done(c);
        break;
      case http::RequestParser::Event::kError:
        c.request_.keep_alive = false;
        c.extra_header_ = nullptr;
        c.output_.cors = false;
        c.request_.preflight = false;
        c.session_ = -1;
        answer(c, c.parser_.error_status(), c.parser_.error_reason());
        return n;
    }
  }
out:
  if (c.output_.dead && !c.request_.handling) drop(c, true);
  return c.phase_ == Phase::kFree ? n : n - left;
}

// An MCP endpoint (Streamable HTTP, or HTTP+SSE's two): where CORS applies.
bool HttpServer::is_endpoint(StrView path) const {
  return path == StrView(options_.path) ||
         (EMCP_LEGACY_ERA && options_.sse_path != nullptr &&
          (path == StrView(options_.sse_path) ||
           (options_.messages_path != nullptr && path == StrView(options_.messages_path))));
}

// A request refused at its head: answered `status` after its body (on_request_done()).
// `extra`: header lines.
void HttpServer::refuse(Conn& c, int status, const char* text, const char* extra) {
  c.phase_ = Phase::kDiscard;
  c.status_ = status;
  c.error_text_ = text;
  c.extra_header_ = extra;
}

// The head is in: admit the request, then the transport its path names decides its route
// (head_streamable, head_sse, head_sse_post, head_websocket); refusals are answered after the
// body.
void HttpServer::on_head(Conn& c) {
  const http::Request& r = c.parser_.request();
  c.request_.keep_alive = r.keep_alive;
  c.status_ = 200;
  c.route_ = Route::kNone;
  c.request_.feeding = false;
  c.session_ = -1;
  c.stream_ = -1;
  c.extra_header_ = nullptr;
  c.error_text_ = nullptr;
  const StrView path = r.path();
  const http::Method m = r.method;
  // Host/Origin, CORS preflight, the metadata document, authorization (http_security.h).
  const Admission a = admit(options_, r, is_endpoint(path), &c.grant_);
  c.output_.cors = a.cors;
  c.request_.preflight = a.preflight;
  if (!a.document.empty()) {
    c.route_ = Route::kDocument;
    c.error_text_ = a.document.data();  // the document (NUL-terminated, the resource server's)
    return;
  }
  if (a.status != 0) return refuse(c, a.status, a.text, a.header);
  // The revision the header names: a 2026-07-28 request is served without a session, and an
  // unknown one may still be a 2026-07-28 request's (its `_meta` decides: -32020 or -32022).
  mcp::Version version = mcp::kLatestVersion;
  c.request_.modern = false;
  c.request_.bad_version = r.protocol_version.present && !mcp::parse_version(r.protocol_version.view(), &version);
  // With EMCP_LEGACY_ERA=0 every request on the endpoint is (the session table, the GET
  // stream, HTTP+SSE and WebSocket are then not linked: their paths are 404, GET 405).
  const bool stateless = !EMCP_LEGACY_ERA || (r.protocol_version.present && !c.request_.bad_version && EMCP_MODERN_ERA &&
                                              mcp::supports(version, mcp::Feature::kModern));
  c.request_.modern = stateless && path == StrView(options_.path) && m == http::Method::kPost;
  if (c.request_.bad_version && !(m == http::Method::kPost && path == StrView(options_.path)))
    return refuse(c, 400, "Bad Request: unsupported MCP-Protocol-Version");

  if (path == StrView(options_.path)) {
    head_streamable(c, r, stateless);
  } else if (EMCP_LEGACY_ERA && options_.sse_path != nullptr && path == StrView(options_.sse_path)) {
    head_sse(c, r);
  } else if (EMCP_LEGACY_ERA && options_.sse_path != nullptr && options_.messages_path != nullptr &&
             path == StrView(options_.messages_path)) {
    head_sse_post(c, r);
  } else if (EMCP_LEGACY_ERA && options_.ws_path != nullptr && options_.sha1 != nullptr &&
             path == StrView(options_.ws_path)) {
    head_websocket(c, r);
  } else {
    return refuse(c, 404, "Not Found");
  }
  if (c.route_ == Route::kPost || c.route_ == Route::kSsePost) {
    c.decoder_.begin();
    c.request_.feeding = true;
    if (r.expect_continue) send_tail(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
  }
}

void HttpServer::on_request_done(Conn& c) {
  if (c.phase_ == Phase::kDiscard) {
    c.session_ = -1;
    answer(c, c.status_, c.error_text_);
    return;
  }
  if (EMCP_LEGACY_ERA && session_gone(c)) {
    // The session ended (DELETE, expiry, eviction) while this request was arriving; its slot
    // may already serve another client.
    c.session_ = -1;
    answer(c, 404, "Not Found: the session ended");
    return;
  }
  c.phase_ = Phase::kWaiting;
  // The routes of sessions exist only with the legacy era (on_head sets none of them without).
  const bool legacy = EMCP_LEGACY_ERA;
  switch (c.route_) {
    case Route::kPost:
      route_post(c);
      break;
    case Route::kGet:
      if (legacy) route_get(c);
      break;
    case Route::kDelete:
      if (legacy) route_delete(c);
      break;
    case Route::kSseStream:
      if (legacy) open_sse(c);
      break;
    case Route::kSsePost:
      if (legacy) route_sse_post(c);
      break;
    case Route::kWebSocket:
      if (legacy) upgrade(c);
      break;
    case Route::kDocument:
      c.extra_header_ = "Cache-Control: max-age=3600\r\n";
      answer(c, 200, c.error_text_, "application/json");
      break;
    case Route::kNone:
      answer(c, 500, "Internal Server Error");
      break;
  }
}

bool HttpServer::permitted(Conn& c, const jsonrpc::Decoded& d) {
  if (options_.auth == nullptr) return true;
  for (const jsonrpc::Message* m = d.first; m != nullptr; m = m->next) {
    const auth::Refusal no = options_.auth->permit(options_.auth->ctx, c.grant_, *m);
    if (no.status == 0) continue;
    c.session_ = -1;
    c.extra_header_ = no.header;
    answer(c, no.status, no.text);
    return false;
  }
  return true;
}

// ---- Time ---------------------------------------------------------------------------------------

// Answers `status` and closes: a request (or the first one) that did not arrive in time (408),
// or one that gives its slot to a newcomer (http_fair.cpp). `extra`: header lines.
void HttpServer::close_with(Conn& c, int status, const char* text, const char* extra) {
  c.request_.keep_alive = false;
  c.session_ = -1;
  c.extra_header_ = extra;
  answer(c, status, text);
}

void HttpServer::poll() {
  server_.poll();
  const uint64_t now = server_.now();
  for (Conn& c : conns_) {
    if (c.phase_ == Phase::kFree) continue;
    if (c.output_.pend_len != 0) {
      // Output the peer has not taken: it moves on, or the peer is dropped after
      // send_timeout_ms without progress. No other timeout or heartbeat meanwhile.
      (void)drain_pending(c, false);
      if (c.output_.pend_len != 0 && now - c.last_ms_ > options_.send_timeout_ms) {
        log("http: connection dropped: its peer stopped reading (send_timeout_ms)");
        ++stats_.timeout_send;
        c.output_.dead = true;
      }
      if (!c.output_.dead && c.output_.pend_len != 0) continue;
      if (!c.output_.dead && c.phase_ == Phase::kClosing) c.output_.dead = true;  // its last answer is out
      if (!c.output_.dead && c.replay_.active) {
        continue_replay(c);
        continue;
      }
    }
    if (c.output_.dead || c.phase_ == Phase::kClosing) {
      drop(c, true);
      continue;
    }
    const bool in_body = c.parser_.in_body();
    if (c.phase_ == Phase::kRequest || c.phase_ == Phase::kDiscard) {
      const bool slow_head = !in_body && now - c.started_ms_ > options_.head_timeout_ms;
      const bool slow_body = in_body && now - c.last_ms_ > options_.body_timeout_ms;
      if (slow_head || slow_body) {
        ++(slow_head ? stats_.timeout_head : stats_.timeout_body);
        close_with(c, 408, slow_head ? "Request Timeout: request head too slow" : "Request Timeout: body too slow");
      }
    } else if (c.phase_ == Phase::kIdle && c.request_.fresh) {
      // Nothing yet since the accept: the first head's deadline runs from there.
      if (now - c.opened_ms_ > options_.head_timeout_ms) {
        ++stats_.timeout_head;
        close_with(c, 408, "Request Timeout: no request");
      }
    } else if (c.phase_ == Phase::kIdle) {
      if (now - c.last_ms_ > options_.keepalive_ms) {
        ++stats_.timeout_idle;
        drop(c, true);
      }
    } else if (options_.heartbeat_ms != 0 && now - c.last_ms_ > options_.heartbeat_ms) {
      if (c.phase_ == Phase::kWebSocket) {
        const char ping[2] = {static_cast<char>(0x89), 0};
        send_tail(c, ping, 2);
      } else if (c.output_.sse && c.body_ != Body::kNone && !c.output_.tee) {
        c.sink_.write(":\n\n", 3);
        push_out(c);
      }
      if (c.output_.dead) drop(c, true);
    }
  }
  if (EMCP_LEGACY_ERA) poll_sessions(now);
}

}  // namespace transport
EMCP_NS_END
