// MCP over HTTP, the engine: connection slots and the port's calls, a connection's life
// (open, a request's end, keep-alive or close, drop), the input (the HTTP parser, the admission
// of a head and its dispatch to the transport its path names, the dispatch of a complete
// request to its route), and the timers. Beside it: the output and the answers in
// http_output.cpp (heads, Content-Length / chunked / WebSocket framing, bytes the port has not
// taken yet); the transports, each with its routes, in http_streamable.cpp (Streamable HTTP,
// with the outbound routing of messages to streams), http_modern.cpp (a 2026-07-28 POST),
// http_sse.cpp (HTTP+SSE of 2024-11-05) and http_websocket.cpp; the session table in
// http_session.cpp; fair shares of the slots in http_fair.cpp; the replay buffer in
// replay_ring.cpp; the admission of a request (Host/Origin, CORS, authorization) in
// http_security.cpp, shared with tools/bridge's gateway.
#include "emcp/transport/http_server.h"

#include <string.h>

EMCP_NS_BEGIN
namespace transport {

// ---- Slots --------------------------------------------------------------------------------------

HttpConnection::HttpConnection(json::Reader& reader, Arena& arena, char* out, size_t out_cap)
    : HttpOutput(out, out_cap, &HttpServer::conn_flush, this), decoder_(reader, arena) {}

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
