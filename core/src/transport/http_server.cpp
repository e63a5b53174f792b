// MCP over HTTP: connection and session slots, routing of outbound messages to streams,
// response framing (Content-Length, chunked, SSE, WebSocket), the replay buffer.
#include "emcp/transport/http_server.h"

#include <string.h>

#include "emcp/json/number.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/encode.h"

EMCP_NS_BEGIN
namespace transport {

using jsonrpc::Id;

namespace {

constexpr const char* kLocalNames[] = {"localhost", "127.0.0.1", "[::1]"};
constexpr size_t kRecordHeader = 16;  // u32 length, u32 stream, u32 flags, u32 seq
constexpr uint32_t kFinal = 1;        // record flag: the stream's last event

// FNV-1a of an id (type and value); 0 means "no id".
uint32_t id_hash(const Id& id) {
  if (!id.present()) return 0;
  uint32_t h = 2166136261u;
  auto mix = [&](uint8_t b) {
    h ^= b;
    h *= 16777619u;
  };
  mix(static_cast<uint8_t>(id.type));
  if (id.type == Id::Type::kInt) {
    for (int i = 0; i < 8; ++i) mix(static_cast<uint8_t>(static_cast<uint64_t>(id.num) >> (8 * i)));
  } else {
    for (char c : id.str) mix(static_cast<uint8_t>(c));
  }
  return h == 0 ? 1 : h;
}

// The host of an authority ("localhost:8080" -> "localhost", "[::1]:80" -> "[::1]").
StrView host_of(StrView authority) {
  if (!authority.empty() && authority[0] == '[') {
    size_t i = 0;
    while (i < authority.size() && authority[i] != ']') ++i;
    return authority.sub(0, i < authority.size() ? i + 1 : i);
  }
  size_t i = 0;
  while (i < authority.size() && authority[i] != ':') ++i;
  return authority.sub(0, i);
}

bool name_allowed(StrView host, Span<const char* const> list) {
  if (list.empty()) {
    for (const char* n : kLocalNames)
      if (http::ascii_iequal(host, StrView(n))) return true;
    return false;
  }
  for (const char* n : list)
    if (StrView(n) == "*" || http::ascii_iequal(host, StrView(n))) return true;
  return false;
}

void put_u32(char* p, uint32_t v) { memcpy(p, &v, 4); }
uint32_t get_u32(const char* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

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

// "<stream>-<seq>" as this engine writes event ids.
bool parse_event_id(StrView s, uint32_t* stream, uint32_t* seq) {
  uint64_t a = 0, b = 0;
  size_t i = 0;
  if (s.empty()) return false;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    a = a * 10 + static_cast<uint64_t>(s[i] - '0');
    if (a > 0xFFFFFFFFu) return false;
    ++i;
  }
  if (i == 0 || i >= s.size() || s[i] != '-') return false;
  const size_t start = ++i;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') {
    b = b * 10 + static_cast<uint64_t>(s[i] - '0');
    if (b > 0xFFFFFFFFu) return false;
    ++i;
  }
  if (i == start || i != s.size()) return false;
  *stream = static_cast<uint32_t>(a);
  *seq = static_cast<uint32_t>(b);
  return true;
}

}  // namespace

// ---- Slots --------------------------------------------------------------------------------------

HttpConnection::HttpConnection(json::Reader& reader, Arena& arena, char* out, size_t out_cap)
    : decoder_(reader, arena),
      sink_(out + kHeadroom, out_cap - kHeadroom - 2, &HttpServer::conn_flush, this),
      out_(out),
      out_cap_(static_cast<uint32_t>(out_cap)) {
  EMCP_ASSERT(out_cap >= kHeadroom + 64 && out_cap <= 0x7FFFFFFFu);
}

HttpSession::HttpSession(char* replay, size_t replay_cap)
    : session_(mcp::Channel{&HttpSession::open, &HttpSession::close, this, &HttpSession::end_stream}),
      ring_(replay),
      ring_cap_(replay == nullptr ? 0 : replay_cap),
      detached_(detached_buf_, sizeof detached_buf_, &HttpSession::detached_flush, this) {}

HttpServer::HttpServer(mcp::Server& server, const HttpOptions& options, const HttpPort& port,
                       Span<HttpConnection> connections, Span<HttpSession> sessions)
    : server_(server), options_(options), port_(port), conns_(connections), sessions_(sessions) {
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
    if (s.kind_ != HttpSession::Kind::kFree) server_.detach(s.session_);
}

StrView HttpServer::busy_response() {
  return StrView(
      "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 26\r\n"
      "Retry-After: 1\r\nConnection: close\r\n\r\nno free connection, retry\n");
}

namespace {
const ConnectionHandler::Ops kEngineOps = {
    [](void* ctx) { return static_cast<HttpServer*>(ctx)->open(); },
    [](void* ctx, uint16_t conn, const void* data, size_t n) {
      return static_cast<HttpServer*>(ctx)->receive(conn, data, n);
    },
    [](void* ctx, uint16_t conn) { return static_cast<HttpServer*>(ctx)->wants_input(conn); },
    [](void* ctx, uint16_t conn) { static_cast<HttpServer*>(ctx)->writable(conn); },
    [](void* ctx, uint16_t conn) { static_cast<HttpServer*>(ctx)->closed(conn); },
    [](void* ctx) { static_cast<HttpServer*>(ctx)->poll(); },
    [](void* ctx) { return static_cast<HttpServer*>(ctx)->mcp().now(); },
    [](void*) { return HttpServer::busy_response(); },
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

int HttpServer::open() {
  // Every slot busy: the keep-alive connection idle the longest makes room (no request of its
  // is in flight; its client opens a new one when it needs it). Only when none is idle is the
  // newcomer refused (busy_response()).
  bool any_free = false;
  Conn* idlest = nullptr;
  for (Conn& c : conns_) {
    any_free = any_free || c.phase_ == Phase::kFree;
    if (c.phase_ == Phase::kIdle && c.pend_len_ == 0 && (idlest == nullptr || c.last_ms_ < idlest->last_ms_)) idlest = &c;
  }
  if (!any_free && idlest != nullptr) {
    log("http: all connections busy; closing the longest idle one");
    drop(*idlest, true);
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
    c.head_sent_ = c.head_pending_ = c.feeding_ = c.handling_ = c.dead_ = c.sse_ = c.tee_ = c.ended_ = false;
    c.force_sse_ = c.defer_ = c.replaying_ = false;
    c.pend_off_ = c.pend_len_ = 0;
    c.input_hash_ = 0;
    c.ws_first_ = true;
    c.ws_final_ = false;
    c.keep_alive_ = true;
    c.session_ = -1;
    c.stream_ = -1;
    c.status_ = 200;
    c.last_ms_ = c.started_ms_ = server_.now();
    return c.index_;
  }
  return -1;
}

bool HttpServer::wants_input(uint16_t conn) const {
  if (conn >= conns_.size()) return false;
  const Conn& c = conns_[conn];
  // Output the peer has not taken yet holds its input back too (no new request is answered
  // into a full window).
  if (c.pend_len_ != 0) return false;
  return c.phase_ == Phase::kIdle || c.phase_ == Phase::kRequest || c.phase_ == Phase::kDiscard ||
         c.phase_ == Phase::kWebSocket;
}

bool HttpServer::output_pending(uint16_t conn) const {
  return conn < conns_.size() && conns_[conn].phase_ != Phase::kFree && conns_[conn].pend_len_ != 0;
}

void HttpServer::writable(uint16_t conn) {
  if (conn >= conns_.size()) return;
  Conn& c = conns_[conn];
  if (c.phase_ == Phase::kFree || c.handling_) return;
  (void)drain_pending(c, false);
  if (c.dead_ || (c.phase_ == Phase::kClosing && c.pend_len_ == 0)) {
    drop(c, true);
    return;
  }
  if (c.replaying_ && c.pend_len_ == 0) continue_replay(c);
}

void HttpServer::closed(uint16_t conn) {
  if (conn >= conns_.size() || conns_[conn].phase_ == Phase::kFree) return;
  drop(conns_[conn], false);
}

// The connection no longer serves its session: its stream is detached, and a session that
// lives on it (legacy SSE, WebSocket) ends. Nothing routes to it afterwards.
void HttpServer::leave_session(Conn& c) {
  const Phase was = c.phase_;
  if (c.session_ >= 0) {
    HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
    if (c.stream_ >= 0) detach_stream(s, c.stream_);
    if ((s.kind_ == HttpSession::Kind::kLegacy && was == Phase::kStream) ||
        (s.kind_ == HttpSession::Kind::kWebSocket && was == Phase::kWebSocket))
      free_session(s);
  }
  c.session_ = -1;
  c.stream_ = -1;
}

// Ends the connection once the port has taken its last bytes (at once when nothing waits).
void HttpServer::close_when_out(Conn& c) {
  if (c.handling_ || c.dead_ || c.pend_len_ == 0) {
    drop(c, true);
    return;
  }
  leave_session(c);
  c.phase_ = Phase::kClosing;  // writable() or poll() closes it
}

void HttpServer::drop(Conn& c, bool tell_port) {
  if (c.phase_ == Phase::kFree) return;
  if (c.handling_) {  // inside Server::handle(): finish when it returns
    c.dead_ = true;
    return;
  }
  leave_session(c);
  c.phase_ = Phase::kFree;
  c.ended_ = false;
  c.pend_off_ = c.pend_len_ = 0;  // whatever the port did not take is lost with the connection
  c.replaying_ = false;
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
// (`may_defer`) stay where they are in the connection's output buffer, out_[pend_off_,
// +pend_len_); the sink is held meanwhile (json::Sink::hold), so the first byte of the next
// output waits for them (drain_pending) and nothing overwrites them. writable() and poll()
// move them on. Bytes in the middle of a message (the sink is full and the handler still
// writes) cannot wait there: the engine waits for the window instead, at most send_timeout_ms.

// Offers out_[pend_off_, +pend_len_) to the port; with `wait`, until all is taken (or the
// connection failed or timed out: then it is dead). True when nothing is pending any more.
bool HttpServer::drain_pending(Conn& c, bool wait) {
  const uint64_t deadline = server_.now() + options_.send_timeout_ms;
  while (c.pend_len_ != 0 && !c.dead_) {
    size_t taken = 0;
    const Status st = port_.write(port_.ctx, c.index_, c.out_ + c.pend_off_, c.pend_len_, &taken);
    if (st != Status::kOk || taken > c.pend_len_) {
      c.dead_ = true;
      break;
    }
    if (taken != 0) c.last_ms_ = server_.now();
    c.pend_off_ += static_cast<uint32_t>(taken);
    c.pend_len_ -= static_cast<uint32_t>(taken);
    if (c.pend_len_ == 0 || taken != 0) continue;
    if (!wait) return false;
    const uint64_t now = server_.now();
    if (port_.wait_writable == nullptr || now >= deadline ||
        port_.wait_writable(port_.ctx, c.index_, static_cast<uint32_t>(deadline - now)) != Status::kOk)
      c.dead_ = true;
  }
  if (c.dead_) c.pend_len_ = 0;  // dropped with the connection
  c.pend_off_ = 0;
  c.sink_.release();
  return !c.dead_;
}

// Holds the sink while bytes of the buffer wait for the port.
void HttpServer::lend(Conn& c) {
  if (c.pend_len_ != 0 && !c.sink_.held() && c.sink_.buffered() == 0) c.sink_.hold();
}

// Hands data[0, n) to the port, after whatever is pending. The bytes are in the connection's
// output buffer (every output is assembled there), so what the port does not take stays
// pending: with `may_defer` until writable() or poll(); otherwise the engine waits for it.
Status HttpServer::send(Conn& c, const char* data, size_t n, bool may_defer) {
  if (c.dead_ || !drain_pending(c, true)) return Status::kClosed;
  EMCP_ASSERT(data >= c.out_ && data + n <= c.out_ + c.out_cap_);
  c.pend_off_ = static_cast<uint32_t>(data - c.out_);
  c.pend_len_ = static_cast<uint32_t>(n);
  (void)drain_pending(c, !may_defer);
  return c.dead_ ? Status::kClosed : Status::kOk;
}

// A few bytes that end a piece of output (a last chunk, a WebSocket control frame, an interim
// response): they go after what is pending, and wait with it if the port cannot take them.
// The sink must be empty.
void HttpServer::send_tail(Conn& c, const char* data, size_t n) {
  if (c.dead_) return;
  EMCP_ASSERT(c.sink_.buffered() == 0 && n <= c.out_cap_);
  if (c.pend_len_ + n > c.out_cap_ && !drain_pending(c, true)) return;  // no room even compacted
  if (c.pend_off_ + c.pend_len_ + n > c.out_cap_) {
    memmove(c.out_, c.out_ + c.pend_off_, c.pend_len_);
    c.pend_off_ = 0;
  }
  memcpy(c.out_ + c.pend_off_ + c.pend_len_, data, n);  // data: a literal or the caller's array
  c.pend_len_ += static_cast<uint32_t>(n);
  (void)drain_pending(c, false);
  lend(c);
}

// The head of a response into dst (at most cap bytes); returns its length.
size_t HttpServer::write_head(Conn& c, char* dst, size_t cap, int64_t length) {
  json::BufferSink h(dst, cap);
  http::write_status_line(h, c.status_);
  if (c.content_type_ != nullptr) http::write_header(h, "Content-Type", StrView(c.content_type_));
  if (c.body_ == Body::kChunked) http::write_header(h, "Transfer-Encoding", "chunked");
  else if (length >= 0) http::write_header(h, "Content-Length", static_cast<uint64_t>(length));
  if (c.sse_) http::write_header(h, "Cache-Control", "no-cache");
  if (c.session_ >= 0) {
    HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
    if (s.kind_ == HttpSession::Kind::kStreamable && s.session_.initialized())
      http::write_header(h, "Mcp-Session-Id", s.id());
  }
  if (c.extra_header_ != nullptr) h.write(StrView(c.extra_header_));
  if (!c.keep_alive_) http::write_header(h, "Connection", "close");
  http::write_end_head(h);
  EMCP_ASSERT(h.status() == Status::kOk);
  return h.view().size();
}

// Starts a response whose length is unknown (SSE, or JSON that outgrew the buffer): chunked
// on HTTP/1.1, until close on HTTP/1.0. The head goes out with the first bytes.
void HttpServer::start_stream_body(Conn& c, const char* content_type, bool sse) {
  c.content_type_ = content_type;
  c.sse_ = sse;
  c.body_ = c.parser_.request().version_minor >= 1 ? Body::kChunked : Body::kUntilClose;
  if (c.body_ == Body::kUntilClose) c.keep_alive_ = false;
  c.head_pending_ = true;
}

// Sends what the sink holds (with the pending head); the head alone when the sink is empty.
// It ends a piece of output: what the port cannot take now waits in the buffer.
void HttpServer::push_out(Conn& c) {
  if (c.sink_.buffered() != 0) {
    c.defer_ = true;
    (void)c.sink_.flush();
    c.defer_ = false;
    lend(c);
    return;
  }
  if (c.head_pending_) {
    char head[HttpConnection::kHeadroom];
    const size_t n = write_head(c, head, sizeof head, -1);
    c.head_pending_ = false;
    c.head_sent_ = true;
    send_tail(c, head, n);
  }
}

Status HttpServer::conn_flush(void* ctx, const char* data, size_t n) {
  Conn& c = *static_cast<Conn*>(ctx);
  HttpServer& hs = *c.server_;
  if (n == 0) {
    // The sink was held (its buffer still has bytes for the port) and is written again. An
    // event whose connection failed still goes whole into the replay buffer (tee_, below).
    const bool ok = hs.drain_pending(c, true);
    return ok || c.tee_ ? Status::kOk : Status::kClosed;
  }
  if (c.tee_ && c.session_ >= 0) hs.ring_append(hs.sessions_[static_cast<size_t>(c.session_)], data, n);
  // data is the sink's buffer: out_ + kHeadroom, with 2 spare bytes after it.
  char* start = const_cast<char*>(data);
  size_t len = n;
  if (c.body_ == Body::kBuffered) {
    // The answer outgrew the buffer: its length is unknown, so it streams.
    c.body_ = c.parser_.request().version_minor >= 1 ? Body::kChunked : Body::kUntilClose;
    if (c.body_ == Body::kUntilClose) c.keep_alive_ = false;
    c.head_pending_ = true;
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
    const size_t k = ws::write_frame_header(hdr, c.ws_first_ ? ws::Opcode::kText : ws::Opcode::kContinuation,
                                            c.ws_final_, n);
    c.ws_first_ = false;
    start -= k;
    memcpy(start, hdr, k);
    len += k;
  }
  if (c.head_pending_) {
    char head[HttpConnection::kHeadroom];
    const size_t k = hs.write_head(c, head, sizeof head - 16, -1);
    start -= k;
    memcpy(start, head, k);
    len += k;
    c.head_pending_ = false;
    c.head_sent_ = true;
  }
  const Status st = hs.send(c, start, len, c.defer_);
  // An event whose connection failed still goes whole into the replay buffer (the sink keeps
  // taking its bytes); the connection is dropped at the next safe point.
  return c.tee_ ? Status::kOk : st;
}

// Ends the response body: Content-Length answer, last chunk, or close.
void HttpServer::finish_body(Conn& c) {
  if (c.body_ == Body::kBuffered) {
    const size_t body = c.sink_.buffered();
    char* const base = c.out_ + HttpConnection::kHeadroom;
    char head[HttpConnection::kHeadroom];
    const size_t k = write_head(c, head, sizeof head, static_cast<int64_t>(body));
    c.head_pending_ = false;
    c.head_sent_ = true;
    if (body == 0) {
      send_tail(c, head, k);  // the buffer may still hold the previous answer's end
    } else {
      memcpy(base - k, head, k);
      (void)send(c, base - k, k + body, true);
    }
  } else if (c.body_ == Body::kChunked) {
    push_out(c);
    send_tail(c, "0\r\n\r\n", 5);
  } else if (c.body_ == Body::kUntilClose) {
    push_out(c);
    c.keep_alive_ = false;
  }
  c.sink_.reset();
  lend(c);
  c.body_ = Body::kNone;
  c.sse_ = false;
  c.tee_ = false;
}

void HttpServer::answer(Conn& c, int status, const char* text, const char* content_type) {
  c.status_ = status;
  c.content_type_ = text != nullptr ? (content_type ? content_type : "text/plain; charset=utf-8") : nullptr;
  c.body_ = Body::kBuffered;
  c.sse_ = false;
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
  c.sse_ = false;
  c.sink_.reset();
  json::Writer w(c.sink_);
  if (invalid != nullptr) jsonrpc::write_invalid(w, *invalid);
  else jsonrpc::write_error(w, Id::null(), code, StrView(message));
  finish_body(c);
  end_request(c);
}

// The response is complete: the next request may come (keep-alive), or the connection ends.
void HttpServer::end_request(Conn& c) {
  if (c.handling_) {
    c.ended_ = true;  // finished when handle() returns
    return;
  }
  if (c.stream_ >= 0 && c.session_ >= 0) {
    // Never leave a stream naming a connection that moves on.
    detach_stream(sessions_[static_cast<size_t>(c.session_)], c.stream_);
    c.stream_ = -1;
  }
  if (c.dead_ || !c.keep_alive_) {
    close_when_out(c);
    return;
  }
  c.parser_.reset();
  c.sink_.reset();
  c.phase_ = Phase::kIdle;
  c.route_ = Route::kNone;
  c.body_ = Body::kNone;
  c.head_sent_ = c.head_pending_ = c.feeding_ = c.sse_ = c.tee_ = c.ended_ = c.force_sse_ = false;
  c.input_hash_ = 0;
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
  if (c.pend_len_ != 0 && !drain_pending(c, false)) {
    if (c.dead_ && !c.handling_) drop(c, true);
    return c.phase_ == Phase::kFree ? n : 0;  // the last answer is not out yet: offer it later
  }
  const uint8_t* p = static_cast<const uint8_t*>(data);
  size_t left = n;
  c.last_ms_ = server_.now();
  while (left != 0 || c.phase_ == Phase::kRequest || c.phase_ == Phase::kDiscard) {
    if (c.phase_ == Phase::kFree) return n;  // dropped: the rest is of no use
    if (c.phase_ == Phase::kWebSocket) {
      receive_ws(c, p, left);
      return n;
    }
    if (c.phase_ != Phase::kIdle && c.phase_ != Phase::kRequest && c.phase_ != Phase::kDiscard) break;
    if (c.dead_) break;
    if (c.phase_ == Phase::kIdle) {
      if (left == 0) break;
      c.phase_ = Phase::kRequest;
      c.started_ms_ = c.last_ms_;
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
        if (c.feeding_) c.decoder_.feed(c.parser_.body().data(), c.parser_.body().size());
        break;
      case http::RequestParser::Event::kDone:
        on_request_done(c);
        break;
      case http::RequestParser::Event::kError:
        c.keep_alive_ = false;
        c.extra_header_ = nullptr;
        c.session_ = -1;
        answer(c, c.parser_.error_status(), c.parser_.error_reason());
        return n;
    }
  }
out:
  if (c.dead_ && !c.handling_) drop(c, true);
  return c.phase_ == Phase::kFree ? n : n - left;
}

bool HttpServer::check_host_origin(const http::Request& r) const {
  if (r.host.present && !name_allowed(host_of(r.host.view()), options_.allowed_hosts)) return false;
  if (r.origin.present) {
    const StrView o = r.origin.view();
    size_t i = 0;
    while (i + 2 < o.size() && !(o[i] == ':' && o[i + 1] == '/' && o[i + 2] == '/')) ++i;
    if (i + 2 >= o.size()) return false;  // "null" and anything that is not scheme://host
    StrView authority = o.sub(i + 3);
    size_t slash = 0;
    while (slash < authority.size() && authority[slash] != '/') ++slash;
    authority = authority.sub(0, slash);
    if (!name_allowed(host_of(authority), options_.allowed_origins)) return false;
  }
  return true;
}

HttpSession* HttpServer::session_by_id(StrView id, HttpSession::Kind kind, const Conn& c) {
  if (id.empty()) return nullptr;
  for (HttpSession& s : sessions_)
    if (s.kind_ == kind && s.id() == id) return options_.auth != nullptr && s.principal_ != c.grant_.principal ? nullptr : &s;
  return nullptr;
}

bool HttpServer::session_gone(const Conn& c) const {
  if (c.session_ < 0) return false;
  const HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  return s.kind_ == HttpSession::Kind::kFree || s.generation_ != c.session_gen_;
}

// The head is in: decide where the request goes; refusals are answered after the body.
void HttpServer::on_head(Conn& c) {
  const http::Request& r = c.parser_.request();
  c.keep_alive_ = r.keep_alive;
  c.status_ = 200;
  c.route_ = Route::kNone;
  c.feeding_ = false;
  c.session_ = -1;
  c.stream_ = -1;
  c.extra_header_ = nullptr;
  c.error_text_ = nullptr;
  auto refuse = [&](int status, const char* text, const char* extra = nullptr) {
    c.phase_ = Phase::kDiscard;
    c.status_ = status;
    c.error_text_ = text;
    c.extra_header_ = extra;
  };
  if (!check_host_origin(r)) return refuse(403, "Forbidden: Host or Origin not allowed");
  const StrView path = r.path();
  const http::Method m = r.method;
  c.grant_ = auth::Grant();
  if (options_.auth != nullptr) {
    // The protected resource metadata (RFC 9728) is for everyone: it says how to get a token.
    const StrView doc = options_.auth->document(options_.auth->ctx, path, StrView(options_.path));
    if (!doc.empty()) {
      if (m != http::Method::kGet) return refuse(405, "Method Not Allowed", "Allow: GET\r\n");
      c.route_ = Route::kDocument;
      c.error_text_ = doc.data();  // the document (NUL-terminated, the resource server's)
      return;
    }
    const auth::Refusal no = options_.auth->authenticate(options_.auth->ctx, r, &c.grant_);
    if (no.status != 0) return refuse(no.status, no.text, no.header);
  }
  mcp::Version version;
  if (r.protocol_version.present && !mcp::parse_version(r.protocol_version.view(), &version))
    return refuse(400, "Bad Request: unsupported MCP-Protocol-Version");

  if (path == StrView(options_.path)) {
    if (m == http::Method::kPost) {
      if (!r.content_type_is("application/json"))
        return refuse(415, "Unsupported Media Type: Content-Type must be application/json");
      if (!r.accepts("application/json") || !r.accepts("text/event-stream"))
        return refuse(406, "Not Acceptable: Accept must list application/json and text/event-stream");
      if (r.session_id.present) {
        HttpSession* s = session_by_id(r.session_id.view(), HttpSession::Kind::kStreamable, c);
        if (s == nullptr) return refuse(404, "Not Found: unknown or ended session");
        c.session_ = static_cast<int16_t>(s->index_);
        c.session_gen_ = s->generation_;
      }
      c.route_ = Route::kPost;
    } else if (m == http::Method::kGet) {
      if (!r.accepts("text/event-stream")) return refuse(406, "Not Acceptable: Accept must list text/event-stream");
      if (!r.session_id.present) return refuse(400, "Bad Request: Mcp-Session-Id header required");
      HttpSession* s = session_by_id(r.session_id.view(), HttpSession::Kind::kStreamable, c);
      if (s == nullptr) return refuse(404, "Not Found: unknown or ended session");
      c.session_ = static_cast<int16_t>(s->index_);
      c.session_gen_ = s->generation_;
      c.route_ = Route::kGet;
    } else if (m == http::Method::kDelete) {
      if (!r.session_id.present) return refuse(400, "Bad Request: Mcp-Session-Id header required");
      HttpSession* s = session_by_id(r.session_id.view(), HttpSession::Kind::kStreamable, c);
      if (s == nullptr) return refuse(404, "Not Found: unknown or ended session");
      c.session_ = static_cast<int16_t>(s->index_);
      c.session_gen_ = s->generation_;
      c.route_ = Route::kDelete;
    } else {
      return refuse(405, "Method Not Allowed", "Allow: GET, POST, DELETE\r\n");
    }
  } else if (options_.sse_path != nullptr && path == StrView(options_.sse_path)) {
    if (m != http::Method::kGet) return refuse(405, "Method Not Allowed", "Allow: GET\r\n");
    if (r.accept.present && !r.accepts("text/event-stream"))
      return refuse(406, "Not Acceptable: Accept must list text/event-stream");
    c.route_ = Route::kLegacySse;
  } else if (options_.sse_path != nullptr && options_.messages_path != nullptr &&
             path == StrView(options_.messages_path)) {
    if (m != http::Method::kPost) return refuse(405, "Method Not Allowed", "Allow: POST\r\n");
    if (!r.content_type_is("application/json"))
      return refuse(415, "Unsupported Media Type: Content-Type must be application/json");
    const StrView sid = r.query_param("sessionId");
    if (sid.empty()) return refuse(400, "Bad Request: sessionId query parameter required");
    HttpSession* s = session_by_id(sid, HttpSession::Kind::kLegacy, c);
    if (s == nullptr) return refuse(404, "Not Found: unknown or ended session");
    c.session_ = static_cast<int16_t>(s->index_);
    c.session_gen_ = s->generation_;
    c.route_ = Route::kLegacyPost;
  } else if (options_.ws_path != nullptr && options_.sha1 != nullptr && path == StrView(options_.ws_path)) {
    if (m != http::Method::kGet) return refuse(405, "Method Not Allowed", "Allow: GET\r\n");
    if (!r.upgrade.present || !http::has_token(r.upgrade.view(), "websocket") || !r.connection_upgrade)
      return refuse(426, "Upgrade Required: WebSocket", "Upgrade: websocket\r\nConnection: Upgrade\r\n");
    if (!r.ws_version.present || r.ws_version.view() != "13")
      return refuse(426, "Upgrade Required: WebSocket version 13", "Sec-WebSocket-Version: 13\r\n");
    if (!r.ws_key.present || r.ws_key.view().size() != 24)
      return refuse(400, "Bad Request: Sec-WebSocket-Key missing or malformed");
    c.route_ = Route::kWebSocket;
  } else {
    return refuse(404, "Not Found");
  }
  if (c.route_ == Route::kPost || c.route_ == Route::kLegacyPost) {
    c.decoder_.begin();
    c.feeding_ = true;
    if (r.expect_continue) send_tail(c, "HTTP/1.1 100 Continue\r\n\r\n", 25);
  }
}

void HttpServer::on_request_done(Conn& c) {
  if (c.phase_ == Phase::kDiscard) {
    c.session_ = -1;
    answer(c, c.status_, c.error_text_);
    return;
  }
  if (session_gone(c)) {
    // The session ended (DELETE, expiry, eviction) while this request was arriving; its slot
    // may already serve another client.
    c.session_ = -1;
    answer(c, 404, "Not Found: the session ended");
    return;
  }
  c.phase_ = Phase::kWaiting;
  switch (c.route_) {
    case Route::kPost:
      route_post(c);
      break;
    case Route::kGet: {
      HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
      s.last_ms_ = server_.now();
      if (c.parser_.request().last_event_id.present) resume_stream(c, s);
      else open_get_stream(c, s);
      break;
    }
    case Route::kDelete: {
      HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
      c.session_ = -1;
      free_session(s);
      answer(c, 200, "session ended");
      break;
    }
    case Route::kLegacySse:
      open_legacy(c);
      break;
    case Route::kLegacyPost: {
      HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
      const jsonrpc::Decoded& d = c.decoder_.finish();
      if (!permitted(c, d)) {
        c.session_ = -1;
        break;
      }
      s.last_ms_ = server_.now();
      c.handling_ = true;
      server_.handle(s.session_, d);
      c.handling_ = false;
      c.session_ = -1;  // the answer to the POST itself belongs to no session
      if (c.dead_) {
        drop(c, true);
        break;
      }
      answer(c, 202, "Accepted");
      break;
    }
    case Route::kWebSocket:
      upgrade(c);
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

void HttpServer::route_post(Conn& c) {
  const jsonrpc::Decoded& d = c.decoder_.finish();
  const jsonrpc::Message& first = *d.first;
  if (!permitted(c, d)) return;
  if (c.session_ < 0) {
    if (d.batch || first.kind != jsonrpc::Kind::kRequest || first.method != "initialize") {
      if (!d.batch && first.kind == jsonrpc::Kind::kInvalid) {
        // Not JSON-RPC at all: the decoder's error, with HTTP 400.
        c.status_ = 400;
        c.content_type_ = "application/json";
        c.body_ = Body::kBuffered;
        c.sink_.reset();
        json::Writer w(c.sink_);
        jsonrpc::write_invalid(w, first);
        finish_body(c);
        end_request(c);
        return;
      }
      answer_rpc_error(c, 400, jsonrpc::ErrorCode::kServerError,
                       "Bad Request: Mcp-Session-Id header required (initialize first)");
      return;
    }
    if (open_session(c, HttpSession::Kind::kStreamable) == nullptr) return;
  }
  handle_post(c, d);
}

// A new session for connection c (503 when there is no slot). Legacy and WebSocket sessions
// live on c: their only stream is c.
HttpSession* HttpServer::open_session(Conn& c, HttpSession::Kind kind) {
  HttpSession* s = new_session(kind);
  if (s == nullptr) {
    c.extra_header_ = "Retry-After: 5\r\n";
    answer(c, 503, "Service Unavailable: no free session slot");
    return nullptr;
  }
  c.session_ = static_cast<int16_t>(s->index_);
  s->principal_ = c.grant_.principal;
  if (kind != HttpSession::Kind::kStreamable) {
    HttpSession::Stream& S = s->streams_[0];
    S = HttpSession::Stream{};
    S.used = true;
    S.conn = static_cast<int16_t>(c.index_);
    c.stream_ = 0;
  }
  return s;
}

void HttpServer::handle_post(Conn& c, const jsonrpc::Decoded& d) {
  HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  const bool fresh = !s.session_.initialized();
  s.last_ms_ = server_.now();
  bool answers = false;
  for (const jsonrpc::Message* m = d.first; m != nullptr; m = m->next)
    answers = answers || m->kind == jsonrpc::Kind::kRequest || m->kind == jsonrpc::Kind::kInvalid;
  if (!answers) {
    // Only notifications and responses: 202, once they are handled.
    c.handling_ = true;
    server_.handle(s.session_, d);
    c.handling_ = false;
    c.session_ = -1;
    if (c.dead_) return drop(c, true);
    if (!d.batch && d.first->lost) {
      // A response the server could not keep: the request it answers has ended (above), but
      // the input was not accepted, which MCP answers with an HTTP error status.
      jsonrpc::Message invalid;
      invalid.id = Id::null();
      invalid.reason = d.first->reason;
      return answer_rpc_error(c, 400, invalid.invalid_code, nullptr, &invalid);
    }
    answer(c, 202, nullptr);
    return;
  }
  const int st = new_stream(s, false);
  if (st < 0) {
    c.extra_header_ = "Retry-After: 1\r\n";
    answer(c, 503, "Service Unavailable: too many requests in flight for this session");
    return;
  }
  HttpSession::Stream& S = s.streams_[st];
  S.conn = static_cast<int16_t>(c.index_);
  c.stream_ = static_cast<int8_t>(st);
  c.force_sse_ = d.batch;  // a batch's deferred answers come as further events
  c.input_hash_ = d.batch ? 0 : id_hash(d.first->id);
  // Input the server cannot accept gets an HTTP error status with the JSON-RPC error: not
  // JSON-RPC at all, or a batch where the session's revision has none.
  if (!d.batch && d.first->kind == jsonrpc::Kind::kInvalid) c.status_ = 400;
  if (d.batch && (!s.session_.initialized() || s.session_.version() != mcp::Version::k2025_03_26)) {
    c.status_ = 400;
    c.force_sse_ = false;
  }
  if (!d.batch && (d.first->kind == jsonrpc::Kind::kRequest || d.first->kind == jsonrpc::Kind::kInvalid) &&
      d.first->id.present())
    S.await[S.awaiting++] = id_hash(d.first->id);

  c.handling_ = true;
  server_.handle(s.session_, d);
  c.handling_ = false;

  // What is still to be answered: deferred calls.
  if (d.batch) {
    for (const jsonrpc::Message* m = d.first; m != nullptr; m = m->next) {
      if (m->kind != jsonrpc::Kind::kRequest || !server_.is_deferred(s.session_, m->id)) continue;
      if (S.used && S.awaiting < EMCP_MAX_DEFERRED + 1) S.await[S.awaiting++] = id_hash(m->id);
    }
  } else if (S.used && S.awaiting != 0 &&
             (d.first->kind != jsonrpc::Kind::kRequest || !server_.is_deferred(s.session_, d.first->id))) {
    S.awaiting = 0;  // answered (or its answer could not go out)
  }
  if (fresh && !s.session_.initialized()) {
    // initialize failed: no session comes of it.
    if (S.used && S.conn == static_cast<int16_t>(c.index_)) finish_stream(s, st);
    free_session(s);
  } else if (S.used && S.awaiting == 0) {
    finish_stream(s, st);
  }
  if (c.dead_) return drop(c, true);
  if (c.ended_) {
    c.ended_ = false;
    end_request(c);
  }
}

// ---- Streams ------------------------------------------------------------------------------------

int HttpServer::new_stream(HttpSession& s, bool get) {
  int slot = -1;
  for (int i = 0; i < EMCP_HTTP_STREAMS; ++i)
    if (!s.streams_[i].used) {
      slot = i;
      break;
    }
  if (slot < 0) {
    // Reuse the oldest detached stream (a client that never came back to resume it).
    for (int i = 0; i < EMCP_HTTP_STREAMS; ++i) {
      const HttpSession::Stream& x = s.streams_[i];
      if (x.conn >= 0 || x.get) continue;
      if (slot < 0 || x.id < s.streams_[slot].id) slot = i;
    }
    if (slot < 0) return -1;
  }
  HttpSession::Stream& S = s.streams_[slot];
  S = HttpSession::Stream{};
  S.used = true;
  S.get = get;
  // Unique in the session, also after the counter wraps (0 is no id).
  for (;;) {
    uint32_t id = ++s.next_stream_;
    bool taken = id == 0;
    for (const HttpSession::Stream& x : s.streams_) taken = taken || (x.used && x.id == id);
    if (!taken) {
      S.id = id;
      break;
    }
  }
  return slot;
}

int HttpServer::find_stream(HttpSession& s, uint32_t h) const {
  if (h == 0) return -1;
  for (int i = 0; i < EMCP_HTTP_STREAMS; ++i) {
    const HttpSession::Stream& S = s.streams_[i];
    if (!S.used) continue;
    for (uint8_t k = 0; k < S.awaiting; ++k)
      if (S.await[k] == h) return i;
  }
  return -1;
}

// The stream's last answer is out: end its HTTP response and free the slot.
void HttpServer::finish_stream(HttpSession& s, int st) {
  HttpSession::Stream& S = s.streams_[st];
  if (!S.used) return;
  if (S.sse) ring_mark_final(s, S.id);
  const int16_t conn = S.conn;
  S.used = false;
  S.conn = -1;
  if (conn < 0) return;
  Conn& c = conns_[static_cast<size_t>(conn)];
  c.stream_ = -1;
  close_response(c);
}

// Ends the connection's response: what it holds goes out and ends; a request that got nothing
// (its call was cancelled, its session ended) gets an event stream without events rather than
// wait forever.
void HttpServer::close_response(Conn& c) {
  if (c.body_ == Body::kNone && !c.head_pending_ && !c.head_sent_) start_stream_body(c, "text/event-stream", true);
  finish_body(c);
  end_request(c);
}

// The stream's connection is gone (closed by the client, or by end_stream()).
void HttpServer::detach_stream(HttpSession& s, int st) {
  HttpSession::Stream& S = s.streams_[st];
  S.conn = -1;
  // Without event ids the client cannot resume: nothing is worth keeping.
  if (!S.sse || s.ring_cap_ == 0) S.used = false;
}

void HttpServer::write_event_prefix(json::Sink& out, HttpSession& s, HttpSession::Stream& S) {
  (void)s;
  char num[24];
  out.write("id: ", 4);
  out.write(num, json::format_uint64(S.id, num));
  out.put('-');
  out.write(num, json::format_uint64(S.seq, num));
  out.write("\nevent: message\ndata: ", 22);
}

void HttpServer::write_priming(Conn& c, HttpSession& s, HttpSession::Stream& S, uint32_t retry_ms) {
  char num[24];
  json::Sink& out = c.sink_;
  if (s.session_.version() >= mcp::Version::k2025_11_25 && s.ring_cap_ != 0) {
    out.write("id: ", 4);
    out.write(num, json::format_uint64(S.id, num));
    out.write("-0\n", 3);
  }
  out.write("retry: ", 7);
  out.write(num, json::format_uint64(retry_ms, num));
  out.write("\ndata: \n\n", 9);
}

void HttpServer::open_get_stream(Conn& c, HttpSession& s) {
  int st = -1;
  for (int i = 0; i < EMCP_HTTP_STREAMS; ++i) {
    const HttpSession::Stream& S = s.streams_[i];
    if (S.used && S.get) st = i;
  }
  if (st >= 0 && s.streams_[st].conn >= 0) {
    c.session_ = -1;
    answer(c, 409, "Conflict: the session already has a GET stream");
    return;
  }
  if (st < 0) st = new_stream(s, true);
  if (st < 0) {
    c.extra_header_ = "Retry-After: 1\r\n";
    c.session_ = -1;
    answer(c, 503, "Service Unavailable: no free stream slot in this session");
    return;
  }
  HttpSession::Stream& S = s.streams_[st];
  S.conn = static_cast<int16_t>(c.index_);
  S.sse = true;
  c.stream_ = static_cast<int8_t>(st);
  c.phase_ = Phase::kStream;
  start_stream_body(c, "text/event-stream", true);
  write_priming(c, s, S, options_.retry_ms);
  push_out(c);
}

// GET with Last-Event-ID: the missed events of that stream, then the stream goes on here.
void HttpServer::resume_stream(Conn& c, HttpSession& s) {
  uint32_t sid = 0;
  uint32_t after = 0;
  if (!parse_event_id(c.parser_.request().last_event_id.view(), &sid, &after)) {
    open_get_stream(c, s);  // not one of ours: a plain GET
    return;
  }
  start_stream_body(c, "text/event-stream", true);
  c.replaying_ = true;
  c.replay_final_ = false;
  c.replay_sid_ = sid;
  c.replay_after_ = after;
  continue_replay(c);
}

// Replays the kept events of the stream a GET with Last-Event-ID names, one at a time, from
// the cursor on (events kept meanwhile included): each goes out as it is written, and when the
// window is full the replay stops and goes on from writable() or poll(). Then the stream goes
// on live on this connection (or it ended: the response ends).
void HttpServer::continue_replay(Conn& c) {
  if (session_gone(c)) {
    c.replaying_ = false;
    c.session_ = -1;
    finish_body(c);
    end_request(c);
    return;
  }
  HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  const uint32_t sid = c.replay_sid_;
  for (;;) {
    const char* next = nullptr;
    for (size_t off = 0; off + kRecordHeader <= s.ring_len_ && next == nullptr; off += get_u32(s.ring_ + off)) {
      const char* rec = s.ring_ + off;
      if (get_u32(rec + 4) == sid && get_u32(rec + 12) > c.replay_after_ && !(s.rec_open_ && off == s.rec_)) next = rec;
    }
    if (next == nullptr) break;
    c.sink_.write(next + kRecordHeader, get_u32(next) - kRecordHeader);
    c.replay_after_ = get_u32(next + 12);
    c.replay_final_ = c.replay_final_ || (get_u32(next + 8) & kFinal) != 0;
    push_out(c);
    if (c.dead_) {
      c.replaying_ = false;
      drop(c, true);
      return;
    }
    if (c.pend_len_ != 0) return;  // the rest once the window opens
  }
  c.replaying_ = false;
  if (c.replay_final_) {
    finish_body(c);
    c.session_ = -1;
    end_request(c);
    return;
  }
  int st = -1;
  for (int i = 0; i < EMCP_HTTP_STREAMS; ++i)
    if (s.streams_[i].used && s.streams_[i].id == sid) st = i;
  if (st < 0) {
    // Gone (finished and evicted, or never ours): continue as the session's GET stream.
    for (int i = 0; i < EMCP_HTTP_STREAMS; ++i)
      if (s.streams_[i].used && s.streams_[i].get) st = i;
    if (st >= 0 && s.streams_[st].conn >= 0) {
      finish_body(c);
      c.session_ = -1;
      end_request(c);
      return;
    }
    if (st < 0) st = new_stream(s, true);
    if (st < 0) {
      finish_body(c);
      c.session_ = -1;
      end_request(c);
      return;
    }
    s.streams_[st].sse = true;
    write_priming(c, s, s.streams_[st], options_.retry_ms);
  }
  HttpSession::Stream& S = s.streams_[st];
  if (S.conn >= 0 && S.conn != static_cast<int16_t>(c.index_)) {
    // The client left that connection for this one.
    Conn& old = conns_[static_cast<size_t>(S.conn)];
    old.stream_ = -1;
    S.conn = -1;
    drop(old, true);
  }
  S.conn = static_cast<int16_t>(c.index_);
  c.stream_ = static_cast<int8_t>(st);
  c.phase_ = Phase::kStream;
  push_out(c);
}

// ---- Legacy HTTP+SSE and WebSocket --------------------------------------------------------------

void HttpServer::open_legacy(Conn& c) {
  HttpSession* s = open_session(c, HttpSession::Kind::kLegacy);
  if (s == nullptr) return;
  c.phase_ = Phase::kStream;
  start_stream_body(c, "text/event-stream", true);
  c.sink_.write("event: endpoint\ndata: ", 22);
  c.sink_.write(StrView(options_.messages_path));
  c.sink_.write("?sessionId=", 11);
  c.sink_.write(s->id());
  c.sink_.write("\n\n", 2);
  push_out(c);
}

void HttpServer::upgrade(Conn& c) {
  const http::Request& r = c.parser_.request();
  if (open_session(c, HttpSession::Kind::kWebSocket) == nullptr) return;
  char key[29];
  ws::accept_key(r.ws_key.view(), options_.sha1, key);
  char head[256];
  json::BufferSink h(head, sizeof head);
  http::write_status_line(h, 101);
  http::write_header(h, "Upgrade", "websocket");
  http::write_header(h, "Connection", "Upgrade");
  http::write_header(h, "Sec-WebSocket-Accept", StrView(key, 28));
  if (r.ws_protocol.present && http::has_token(r.ws_protocol.view(), "mcp"))
    http::write_header(h, "Sec-WebSocket-Protocol", "mcp");
  http::write_end_head(h);
  c.phase_ = Phase::kWebSocket;
  c.frames_.reset();
  c.ws_first_ = true;
  c.ws_final_ = false;
  c.body_ = Body::kWs;
  c.sink_.reset();
  send_tail(c, head, h.view().size());
}

void HttpServer::ws_close(Conn& c, uint16_t code) {
  const char frame[4] = {static_cast<char>(0x88), 2, static_cast<char>(code >> 8), static_cast<char>(code & 0xFF)};
  send_tail(c, frame, sizeof frame);
  close_when_out(c);
}

void HttpServer::receive_ws(Conn& c, const uint8_t* p, size_t n) {
  HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  for (;;) {
    size_t used = 0;
    const ws::FrameParser::Event e = c.frames_.push(p, n, &used);
    p += used;
    n -= used;
    switch (e) {
      case ws::FrameParser::Event::kNeedInput:
        return;
      case ws::FrameParser::Event::kMessageBegin:
        c.decoder_.begin();
        break;
      case ws::FrameParser::Event::kData:
        if (!c.decoder_.failed()) c.decoder_.feed(c.frames_.data().data(), c.frames_.data().size());
        break;
      case ws::FrameParser::Event::kMessageEnd: {
        const jsonrpc::Decoded& d = c.decoder_.finish();
        if (options_.auth != nullptr) {
          // A message the upgrade's token has no scope for: no HTTP status to say it with
          // any more, so the WebSocket ends with "policy violation".
          // (So does one after the token expired.)
          bool ok = true;
          for (const jsonrpc::Message* m = d.first; m != nullptr && ok; m = m->next)
            ok = options_.auth->permit(options_.auth->ctx, c.grant_, *m).status == 0;
          if (!ok) {
            ws_close(c, 1008);
            return;
          }
        }
        s.last_ms_ = server_.now();
        c.handling_ = true;
        server_.handle(s.session_, d);
        c.handling_ = false;
        if (c.dead_) {
          drop(c, true);
          return;
        }
        break;
      }
      case ws::FrameParser::Event::kPing: {
        const StrView payload = c.frames_.control_payload();
        char frame[2 + 125];
        frame[0] = static_cast<char>(0x8A);
        frame[1] = static_cast<char>(payload.size());
        memcpy(frame + 2, payload.data(), payload.size());
        send_tail(c, frame, 2 + payload.size());
        break;
      }
      case ws::FrameParser::Event::kPong:
        break;
      case ws::FrameParser::Event::kClose:
        ws_close(c, c.frames_.close_code() == ws::kCloseNoStatus ? static_cast<uint16_t>(ws::kCloseNormal)
                                                                    : c.frames_.close_code());
        return;
      case ws::FrameParser::Event::kError:
        ws_close(c, c.frames_.error_code());
        return;
    }
    if (c.phase_ == Phase::kFree) return;
  }
}

// ---- Sessions -----------------------------------------------------------------------------------

HttpSession* HttpServer::new_session(HttpSession::Kind kind) {
  HttpSession* slot = nullptr;
  for (HttpSession& s : sessions_)
    if (s.kind_ == HttpSession::Kind::kFree) {
      slot = &s;
      break;
    }
  if (slot == nullptr) {
    // Evict the least recently used Streamable HTTP session that has no live connection:
    // a client that went away without DELETE (it gets 404 and initializes again).
    for (HttpSession& s : sessions_) {
      if (s.kind_ != HttpSession::Kind::kStreamable) continue;
      bool live = false;
      for (const HttpSession::Stream& S : s.streams_) live = live || (S.used && S.conn >= 0);
      // A request of the session still arriving (or being handled) counts as live too.
      for (const Conn& c : conns_) live = live || (c.phase_ != Phase::kFree && c.session_ == static_cast<int16_t>(s.index_));
      if (live) continue;
      if (slot == nullptr || s.last_ms_ < slot->last_ms_) slot = &s;
    }
    if (slot == nullptr) return nullptr;
    free_session(*slot);
  }
  uint8_t raw[16];
  if (!server_.platform().random(raw, sizeof raw)) return nullptr;
  for (size_t i = 0; i < sizeof raw; ++i) {
    slot->id_[2 * i] = "0123456789abcdef"[raw[i] >> 4];
    slot->id_[2 * i + 1] = "0123456789abcdef"[raw[i] & 15];
  }
  slot->id_len_ = 32;
  slot->id_[32] = '\0';
  slot->kind_ = kind;
  ++slot->generation_;
  slot->last_ms_ = server_.now();
  slot->next_stream_ = 0;
  slot->ring_len_ = 0;
  slot->rec_open_ = false;
  slot->msg_stream_ = -1;
  for (HttpSession::Stream& S : slot->streams_) S = HttpSession::Stream{};
  slot->session_.reset();
  server_.attach(slot->session_);
  return slot;
}

void HttpServer::free_session(HttpSession& s) {
  if (s.kind_ == HttpSession::Kind::kFree) return;
  s.kind_ = HttpSession::Kind::kFree;  // from here on nothing routes to it
  ++s.generation_;
  server_.detach(s.session_);
  for (HttpSession::Stream& S : s.streams_) {
    if (!S.used) continue;
    const int16_t conn = S.conn;
    S = HttpSession::Stream{};
    if (conn < 0) continue;
    Conn& c = conns_[static_cast<size_t>(conn)];
    c.stream_ = -1;
    c.session_ = -1;
    if (c.phase_ == Phase::kWebSocket) {
      ws_close(c, ws::kCloseGoingAway);
      continue;
    }
    close_response(c);
  }
  s.session_.reset();
  s.id_len_ = 0;
  s.id_[0] = '\0';
  s.ring_len_ = 0;
  s.rec_open_ = false;
}

// ---- Outbound messages (the session's mcp::Channel) ------------------------------------------

json::Sink* HttpSession::open(void* ctx, const mcp::OutMessage& m) {
  HttpSession& s = *static_cast<HttpSession*>(ctx);
  return s.server_->channel_open(s, m);
}

Status HttpSession::close(void* ctx) {
  HttpSession& s = *static_cast<HttpSession*>(ctx);
  return s.server_->channel_close(s);
}

Status HttpSession::end_stream(void* ctx, const Id& related, uint32_t retry_ms) {
  HttpSession& s = *static_cast<HttpSession*>(ctx);
  return s.server_->channel_end_stream(s, related, retry_ms);
}

Status HttpSession::detached_flush(void* ctx, const char* data, size_t n) {
  HttpSession& s = *static_cast<HttpSession*>(ctx);
  s.server_->ring_append(s, data, n);
  return Status::kOk;
}

json::Sink* HttpServer::channel_open(HttpSession& s, const mcp::OutMessage& m) {
  if (s.kind_ == HttpSession::Kind::kFree) return nullptr;
  const uint32_t h = id_hash(m.related);
  int st = -1;
  if (s.kind_ != HttpSession::Kind::kStreamable) {
    st = s.streams_[0].used && s.streams_[0].conn >= 0 ? 0 : -1;
  } else {
    st = find_stream(s, h);
    if (st < 0 && (m.batch || m.kind == mcp::OutMessage::Kind::kResponse)) {
      // The answer to what is being handled right now (a batch, an input without usable id).
      for (const Conn& c : conns_)
        if (c.handling_ && c.session_ == static_cast<int16_t>(s.index_) && c.stream_ >= 0 &&
            (m.batch || h == 0 || h == c.input_hash_))
          st = c.stream_;
    }
    if (st < 0 && m.kind != mcp::OutMessage::Kind::kResponse) {
      for (int i = 0; i < EMCP_HTTP_STREAMS; ++i)
        if (s.streams_[i].used && s.streams_[i].get) st = i;
    }
  }
  if (st < 0) return nullptr;
  HttpSession::Stream& S = s.streams_[st];
  s.msg_stream_ = static_cast<int8_t>(st);
  s.msg_related_ = h;
  s.msg_response_ = m.kind == mcp::OutMessage::Kind::kResponse;
  s.msg_detached_ = false;
  if (S.conn >= 0 && conns_[static_cast<size_t>(S.conn)].dead_) {
    // Its connection failed: the stream goes on in the replay buffer, as if the client left.
    conns_[static_cast<size_t>(S.conn)].stream_ = -1;
    detach_stream(s, st);
    if (!S.used) {
      s.msg_stream_ = -1;
      return nullptr;
    }
  }
  if (S.conn < 0) {
    // The client left; it may come back with Last-Event-ID.
    if (!S.sse || s.ring_cap_ == 0) {
      s.msg_stream_ = -1;
      return nullptr;
    }
    ++S.seq;
    s.detached_.reset();
    s.msg_detached_ = true;
    ring_begin(s, S.id, S.seq);
    write_event_prefix(s.detached_, s, S);
    return &s.detached_;
  }
  Conn& c = conns_[static_cast<size_t>(S.conn)];
  if (s.kind_ == HttpSession::Kind::kWebSocket) {
    c.ws_first_ = true;
    c.ws_final_ = false;
    return &c.sink_;
  }
  if (s.kind_ == HttpSession::Kind::kLegacy) {
    c.sink_.write("event: message\ndata: ", 21);
    return &c.sink_;
  }
  if (c.body_ == Body::kNone && !c.head_sent_) {
    if (m.kind == mcp::OutMessage::Kind::kResponse && !c.force_sse_) {
      // A plain JSON answer: its length is known if it fits the buffer.
      c.body_ = Body::kBuffered;
      c.content_type_ = "application/json";
      c.sink_.reset();
      return &c.sink_;
    }
    start_stream_body(c, "text/event-stream", true);
    S.sse = true;
    write_priming(c, s, S, options_.retry_ms);
    push_out(c);
  } else if (!c.sse_) {
    s.msg_stream_ = -1;
    return nullptr;  // a JSON answer is out already: nothing more fits in this response
  }
  ++S.seq;
  c.tee_ = s.ring_cap_ != 0;
  if (c.tee_) ring_begin(s, S.id, S.seq);
  write_event_prefix(c.sink_, s, S);
  return &c.sink_;
}

Status HttpServer::channel_close(HttpSession& s) {
  const int st = s.msg_stream_;
  s.msg_stream_ = -1;
  if (st < 0) return Status::kClosed;
  HttpSession::Stream& S = s.streams_[st];
  Status result = Status::kOk;
  if (s.msg_detached_) {
    s.detached_.write("\n\n", 2);
    result = s.detached_.flush();
    ring_end(s);
    s.msg_detached_ = false;
  } else if (S.conn >= 0) {
    Conn& c = conns_[static_cast<size_t>(S.conn)];
    if (c.body_ == Body::kWs) {
      c.ws_final_ = true;
      if (c.sink_.buffered() != 0) {
        push_out(c);
      } else if (!c.ws_first_) {
        const char fin[2] = {static_cast<char>(0x80), 0};  // empty last continuation
        send_tail(c, fin, 2);
      }
      result = c.sink_.status();
      c.ws_final_ = false;
      c.ws_first_ = true;
    } else if (!c.sse_) {
      // A JSON answer (buffered, or chunked once it outgrew the buffer) is whole: its end goes
      // out when the stream finishes (below, or after handle()).
      result = c.sink_.status();
    } else {
      c.sink_.write("\n\n", 2);
      push_out(c);
      result = c.sink_.status();
      if (c.tee_) ring_end(s);
      c.tee_ = false;
    }
    if (c.dead_) result = Status::kClosed;
  }
  if (s.kind_ != HttpSession::Kind::kStreamable) return result;
  if (s.msg_response_ && s.msg_related_ != 0) {
    for (uint8_t k = 0; k < S.awaiting; ++k) {
      if (S.await[k] != s.msg_related_) continue;
      S.await[k] = S.await[--S.awaiting];
      break;
    }
  }
  if (S.used && S.awaiting == 0 && !S.get) {
    bool handling = false;
    if (S.conn >= 0) handling = conns_[static_cast<size_t>(S.conn)].handling_;
    if (!handling) finish_stream(s, st);
  }
  return result;
}

Status HttpServer::channel_end_stream(HttpSession& s, const Id& related, uint32_t retry_ms) {
  // Before 2025-11-25 a stream has no priming event with an id: its client could not resume.
  if (s.kind_ != HttpSession::Kind::kStreamable || s.ring_cap_ == 0 ||
      s.session_.version() < mcp::Version::k2025_11_25)
    return Status::kInvalidState;
  const int st = find_stream(s, id_hash(related));
  if (st < 0) return Status::kNotFound;
  HttpSession::Stream& S = s.streams_[st];
  if (S.conn < 0) return Status::kOk;
  Conn& c = conns_[static_cast<size_t>(S.conn)];
  if (c.body_ == Body::kBuffered) return Status::kInvalidState;
  if (!c.sse_) {
    start_stream_body(c, "text/event-stream", true);
    S.sse = true;
    write_priming(c, s, S, retry_ms);
  } else {
    char num[24];
    c.sink_.write("retry: ", 7);
    c.sink_.write(num, json::format_uint64(retry_ms, num));
    c.sink_.write("\n\n", 2);
  }
  finish_body(c);
  S.conn = -1;
  c.stream_ = -1;
  end_request(c);
  return Status::kOk;
}

// ---- Replay buffer ------------------------------------------------------------------------------

bool HttpServer::ring_make_room(HttpSession& s, size_t need) {
  // Drops the oldest complete records until `need` more bytes fit after the data.
  while (s.ring_cap_ - s.ring_len_ < need) {
    const size_t oldest = s.rec_open_ && s.rec_ == 0 ? SIZE_MAX : 0;
    if (oldest == SIZE_MAX || s.ring_len_ == 0) return false;
    const size_t len = get_u32(s.ring_);
    memmove(s.ring_, s.ring_ + len, s.ring_len_ - len);
    s.ring_len_ -= len;
    if (s.rec_open_) s.rec_ -= len;
  }
  return true;
}

void HttpServer::ring_begin(HttpSession& s, uint32_t stream, uint32_t seq) {
  s.rec_open_ = false;
  s.rec_dead_ = s.ring_cap_ == 0;
  if (s.rec_dead_ || !ring_make_room(s, kRecordHeader)) {
    s.rec_dead_ = true;
    return;
  }
  s.rec_ = s.ring_len_;
  char* rec = s.ring_ + s.rec_;
  put_u32(rec, kRecordHeader);
  put_u32(rec + 4, stream);
  put_u32(rec + 8, 0);
  put_u32(rec + 12, seq);
  s.ring_len_ += kRecordHeader;
  s.rec_open_ = true;
}

void HttpServer::ring_append(HttpSession& s, const char* data, size_t n) {
  if (!s.rec_open_ || s.rec_dead_) return;
  if (!ring_make_room(s, n)) {
    // The event alone is larger than the buffer: it cannot be replayed.
    s.ring_len_ = s.rec_;
    s.rec_open_ = false;
    s.rec_dead_ = true;
    return;
  }
  memcpy(s.ring_ + s.ring_len_, data, n);
  s.ring_len_ += n;
  put_u32(s.ring_ + s.rec_, static_cast<uint32_t>(s.ring_len_ - s.rec_));
}

void HttpServer::ring_end(HttpSession& s) {
  s.rec_open_ = false;
  s.rec_dead_ = false;
}

void HttpServer::ring_mark_final(HttpSession& s, uint32_t stream) {
  size_t last = SIZE_MAX;
  for (size_t off = 0; off + kRecordHeader <= s.ring_len_; off += get_u32(s.ring_ + off))
    if (get_u32(s.ring_ + off + 4) == stream) last = off;
  if (last != SIZE_MAX) put_u32(s.ring_ + last + 8, kFinal);
}

// ---- Time ---------------------------------------------------------------------------------------

void HttpServer::poll() {
  server_.poll();
  const uint64_t now = server_.now();
  for (Conn& c : conns_) {
    if (c.phase_ == Phase::kFree) continue;
    if (c.pend_len_ != 0) {
      // Output the peer has not taken: it moves on, or the peer is dropped after
      // send_timeout_ms without progress. No other timeout or heartbeat meanwhile.
      (void)drain_pending(c, false);
      if (c.pend_len_ != 0 && now - c.last_ms_ > options_.send_timeout_ms) {
        log("http: connection dropped: its peer stopped reading (send_timeout_ms)");
        c.dead_ = true;
      }
      if (!c.dead_ && c.pend_len_ != 0) continue;
      if (!c.dead_ && c.phase_ == Phase::kClosing) c.dead_ = true;  // its last answer is out
      if (!c.dead_ && c.replaying_) {
        continue_replay(c);
        continue;
      }
    }
    if (c.dead_ || c.phase_ == Phase::kClosing) {
      drop(c, true);
      continue;
    }
    const bool in_body = c.parser_.in_body();
    if (c.phase_ == Phase::kRequest || c.phase_ == Phase::kDiscard) {
      const bool slow_head = !in_body && now - c.started_ms_ > options_.head_timeout_ms;
      const bool slow_body = in_body && now - c.last_ms_ > options_.body_timeout_ms;
      if (slow_head || slow_body) {
        c.keep_alive_ = false;
        c.session_ = -1;
        c.extra_header_ = nullptr;
        answer(c, 408, slow_head ? "Request Timeout: request head too slow" : "Request Timeout: body too slow");
      }
    } else if (c.phase_ == Phase::kIdle) {
      if (now - c.last_ms_ > options_.keepalive_ms) drop(c, true);
    } else if (options_.heartbeat_ms != 0 && now - c.last_ms_ > options_.heartbeat_ms) {
      if (c.phase_ == Phase::kWebSocket) {
        const char ping[2] = {static_cast<char>(0x89), 0};
        send_tail(c, ping, 2);
      } else if (c.sse_ && c.body_ != Body::kNone && !c.tee_) {
        c.sink_.write(":\n\n", 3);
        push_out(c);
      }
      if (c.dead_) drop(c, true);
    }
  }
  jsonrpc::Id ids[EMCP_MAX_DEFERRED];
  for (HttpSession& s : sessions_) {
    if (s.kind_ != HttpSession::Kind::kStreamable) continue;
    bool live = false;
    for (int i = 0; i < EMCP_HTTP_STREAMS; ++i) {
      HttpSession::Stream& S = s.streams_[i];
      if (!S.used) continue;
      live = live || S.conn >= 0;
      if (S.awaiting == 0 || S.get) continue;
      // Requests whose deferred call ended without an answer (cancelled) are not awaited.
      const size_t n = server_.deferred_ids(s.session_, ids, EMCP_MAX_DEFERRED);
      for (uint8_t k = 0; k < S.awaiting;) {
        bool pending = false;
        for (size_t j = 0; j < n; ++j) pending = pending || id_hash(ids[j]) == S.await[k];
        if (pending) ++k;
        else S.await[k] = S.await[--S.awaiting];
      }
      if (S.awaiting == 0) finish_stream(s, i);
    }
    if (!live && now - s.last_ms_ > options_.session_idle_ms) free_session(s);
  }
}

}  // namespace transport
EMCP_NS_END
