// MCP over HTTP: Streamable HTTP (2025-03-26 and later). A POST's messages are handled and
// answered on their own stream (JSON, or an event stream when something related goes out
// first); the session's GET stream carries server-initiated messages; a broken stream resumes
// with Last-Event-ID from the replay buffer; DELETE ends the session. The session's outbound
// channel (mcp::Channel) routes each message to its stream here, also for the HTTP+SSE and
// WebSocket sessions, whose only stream is their connection.
#include "emcp/transport/http_server.h"

#include "emcp/json/number.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/encode.h"

EMCP_NS_BEGIN
namespace transport {

using jsonrpc::Id;

namespace {

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

// ---- Requests -----------------------------------------------------------------------------------

// The head names a Streamable HTTP session by its Mcp-Session-Id: the connection serves it.
// False, answered 404, when there is none of that id (or it is another principal's).
bool HttpServer::bind_session(Conn& c, const http::Request& r) {
  HttpSession* s = session_by_id(r.session_id.view(), HttpSession::Kind::kStreamable, c);
  if (s == nullptr) {
    refuse(c, 404, "Not Found: unknown or ended session");
    return false;
  }
  c.session_ = static_cast<int16_t>(s->index_);
  c.request_.session_gen = s->generation_;
  return true;
}

// The head of a request to the endpoint (HttpOptions::path): its method, media types and
// session; `stateless`: of the 2026-07-28 era (POST only, no session). With EMCP_LEGACY_ERA=0
// every request is, and the session lookups below are not linked.
void HttpServer::head_streamable(Conn& c, const http::Request& r, bool stateless) {
  stateless = stateless || !EMCP_LEGACY_ERA;
  const http::Method m = r.method;
  if (stateless && m != http::Method::kPost)
    return refuse(c, 405, "Method Not Allowed: protocol revision 2026-07-28 uses POST only", "Allow: POST\r\n");
  if (m == http::Method::kPost) {
    if (!r.content_type_is("application/json"))
      return refuse(c, 415, "Unsupported Media Type: Content-Type must be application/json");
    if (!r.accepts("application/json") || !r.accepts("text/event-stream"))
      return refuse(c, 406, "Not Acceptable: Accept must list application/json and text/event-stream");
    if (EMCP_LEGACY_ERA && r.session_id.present && !stateless && !c.request_.bad_version && !bind_session(c, r))
      return;
    c.route_ = Route::kPost;
  } else if (m == http::Method::kGet) {
    if (!r.accepts("text/event-stream")) return refuse(c, 406, "Not Acceptable: Accept must list text/event-stream");
    if (!r.session_id.present) return refuse(c, 400, "Bad Request: Mcp-Session-Id header required");
    if (!bind_session(c, r)) return;
    c.route_ = Route::kGet;
  } else if (m == http::Method::kDelete) {
    if (!r.session_id.present) return refuse(c, 400, "Bad Request: Mcp-Session-Id header required");
    if (!bind_session(c, r)) return;
    c.route_ = Route::kDelete;
  } else if (m == http::Method::kOptions) {
    return refuse(c, 204, nullptr, "Allow: GET, POST, DELETE, OPTIONS\r\n");
  } else {
    return refuse(c, 405, "Method Not Allowed", "Allow: GET, POST, DELETE, OPTIONS\r\n");
  }
}

void HttpServer::route_post(Conn& c) {
  const jsonrpc::Decoded& d = c.decoder_.finish();
  const jsonrpc::Message& first = *d.first;
  // The 2026-07-28 era, from the header or from the request's `_meta`: no session. Every POST
  // with EMCP_LEGACY_ERA=0 (what follows, the sessions' part, is then not linked).
  if (EMCP_MODERN_ERA && (!EMCP_LEGACY_ERA || c.request_.modern ||
                          (!d.batch && first.kind == jsonrpc::Kind::kRequest && mcp::Server::is_modern(first))))
    return route_modern_post(c, d);
  if (c.request_.bad_version) return answer(c, 400, "Bad Request: unsupported MCP-Protocol-Version");
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

// GET: the session's stream for server-initiated messages, or with Last-Event-ID the rest of a
// broken stream.
void HttpServer::route_get(Conn& c) {
  HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  s.last_ms_ = server_.now();
  if (c.parser_.request().last_event_id.present) resume_stream(c, s);
  else open_get_stream(c, s);
}

// DELETE: the client ends its session.
void HttpServer::route_delete(Conn& c) {
  HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  c.session_ = -1;
  free_session(s);
  answer(c, 200, "session ended");
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
    c.request_.handling = true;
    server_.handle(s.session_, d);
    c.request_.handling = false;
    shed_keepalive(c);
    c.session_ = -1;
    if (c.output_.dead) return drop(c, true);
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
  c.output_.force_sse = d.batch;  // a batch's deferred answers come as further events
  c.request_.input_hash = d.batch ? 0 : id_hash(d.first->id);
  // Input the server cannot accept gets an HTTP error status with the JSON-RPC error: not
  // JSON-RPC at all, or a batch where the session's revision has none.
  if (!d.batch && d.first->kind == jsonrpc::Kind::kInvalid) c.status_ = 400;
  if (d.batch && (!s.session_.initialized() || !mcp::supports(s.session_.version(), mcp::Feature::kBatches))) {
    c.status_ = 400;
    c.output_.force_sse = false;
  }

  // What the server holds past handle() (deferred calls) is awaited on this stream: the
  // server tells (Channel::request, channel_request below), and tells again when each ends.
  c.request_.handling = true;
  server_.handle(s.session_, d);
  c.request_.handling = false;

  if (fresh && !s.session_.initialized()) {
    // initialize failed: no session comes of it.
    if (S.used && S.conn == static_cast<int16_t>(c.index_)) finish_stream(s, st);
    free_session(s);
  } else if (S.used && S.awaiting == 0) {
    finish_stream(s, st);
  }
  if (c.output_.dead) return drop(c, true);
  if (c.request_.ended) {
    c.request_.ended = false;
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
    // Reuse the oldest detached stream (a client that never came back to resume it). What it
    // still awaited is forgotten with it: those answers, if they come, go to the GET stream or
    // nowhere, and they no longer count as in flight for eviction (http_fair.cpp).
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

// The stream of the POST being handled right now for session `s` whose input is request `h`
// (or any request when `h` is 0: a batch's answer, an input without a usable id), or -1.
int HttpServer::handled_stream(const HttpSession& s, uint32_t h) const {
  for (const Conn& c : conns_)
    if (c.request_.handling && c.session_ == static_cast<int16_t>(s.index_) && c.stream_ >= 0 &&
        (h == 0 || h == c.request_.input_hash))
      return c.stream_;
  return -1;
}

// The stream's last answer is out: end its HTTP response and free the slot.
void HttpServer::finish_stream(HttpSession& s, int st) {
  HttpSession::Stream& S = s.streams_[st];
  if (!S.used) return;
  if (S.sse) s.ring_.mark_final(S.id);
  const int16_t conn = S.conn;
  S.used = false;
  S.conn = -1;
  if (conn < 0) return;
  Conn& c = conns_[static_cast<size_t>(conn)];
  c.stream_ = -1;
  close_response(c);
}

// The stream's connection is gone (closed by the client, or by end_stream()).
void HttpServer::detach_stream(HttpSession& s, int st) {
  HttpSession::Stream& S = s.streams_[st];
  S.conn = -1;
  // Without event ids the client cannot resume: nothing is worth keeping, but the requests
  // still held stay counted (in flight: http_fair.cpp) until the server says they ended.
  if ((!S.sse || !s.ring_.enabled()) && S.awaiting == 0) S.used = false;
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
  if (mcp::supports(s.session_.version(), mcp::Feature::kSsePolling) && s.ring_.enabled()) {
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
  c.replay_.active = true;
  c.replay_.final = false;
  c.replay_.sid = sid;
  c.replay_.after = after;
  continue_replay(c);
}

// Replays the kept events of the stream a GET with Last-Event-ID names, one at a time, from
// the cursor on (events kept meanwhile included): each goes out as it is written, and when the
// window is full the replay stops and goes on from writable() or poll(). Then the stream goes
// on live on this connection (or it ended: the response ends).
void HttpServer::continue_replay(Conn& c) {
  if (session_gone(c)) {
    c.replay_.active = false;
    c.session_ = -1;
    finish_body(c);
    end_request(c);
    return;
  }
  HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  const uint32_t sid = c.replay_.sid;
  ReplayRing::Event e;
  while (s.ring_.next(sid, c.replay_.after, &e)) {
    c.sink_.write(e.text);
    c.replay_.after = e.seq;
    c.replay_.final = c.replay_.final || e.last;
    push_out(c);
    if (c.output_.dead) {
      c.replay_.active = false;
      drop(c, true);
      return;
    }
    if (c.output_.pend_len != 0) return;  // the rest once the window opens
  }
  c.replay_.active = false;
  if (c.replay_.final) {
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

// ---- Time ---------------------------------------------------------------------------------------

// poll()'s part for the sessions: a session without live connections that was idle for
// session_idle_ms ends.
void HttpServer::poll_sessions(uint64_t now) {
  for (HttpSession& s : sessions_) {
    if (s.kind_ != HttpSession::Kind::kStreamable) continue;
    bool live = false;
    for (const HttpSession::Stream& S : s.streams_) live = live || (S.used && S.conn >= 0);
    if (!live && now - s.last_ms_ > options_.session_idle_ms) {
      ++stats_.session_expired;
      free_session(s);
    }
  }
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
  static_cast<HttpSession*>(ctx)->ring_.append(data, n);
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
    // What relates to the request being handled right now, and the answer to a batch or to an
    // input without a usable id.
    if (st < 0 && (h != 0 || m.batch || m.kind == mcp::OutMessage::Kind::kResponse))
      st = handled_stream(s, m.batch ? 0 : h);
    if (st < 0 && m.kind != mcp::OutMessage::Kind::kResponse) {
      for (int i = 0; i < EMCP_HTTP_STREAMS; ++i)
        if (s.streams_[i].used && s.streams_[i].get) st = i;
    }
  }
  if (st < 0) return nullptr;
  HttpSession::Stream& S = s.streams_[st];
  s.msg_stream_ = static_cast<int8_t>(st);
  s.msg_detached_ = false;
  if (S.conn >= 0 && conns_[static_cast<size_t>(S.conn)].output_.dead) {
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
    if (!S.sse || !s.ring_.enabled()) {
      s.msg_stream_ = -1;
      return nullptr;
    }
    ++S.seq;
    s.detached_.reset();
    s.msg_detached_ = true;
    s.ring_.begin(S.id, S.seq);
    write_event_prefix(s.detached_, s, S);
    return &s.detached_;
  }
  Conn& c = conns_[static_cast<size_t>(S.conn)];
  if (s.kind_ == HttpSession::Kind::kWebSocket) return ws_message_begin(c);
  if (s.kind_ == HttpSession::Kind::kSse) return sse_message_begin(c);
  if (c.body_ == Body::kNone && !c.output_.head_sent) {
    if (m.kind == mcp::OutMessage::Kind::kResponse && !c.output_.force_sse) {
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
  } else if (!c.output_.sse) {
    s.msg_stream_ = -1;
    return nullptr;  // a JSON answer is out already: nothing more fits in this response
  }
  ++S.seq;
  c.output_.tee = s.ring_.enabled();
  if (c.output_.tee) s.ring_.begin(S.id, S.seq);
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
    s.ring_.end();
    s.msg_detached_ = false;
  } else if (S.conn >= 0) {
    Conn& c = conns_[static_cast<size_t>(S.conn)];
    if (c.body_ == Body::kWs) {
      result = ws_message_end(c);
    } else if (!c.output_.sse) {
      // A JSON answer (buffered, or chunked once it outgrew the buffer) is whole: its end goes
      // out when the stream finishes (below, or after handle()).
      result = c.sink_.status();
    } else {
      c.sink_.write("\n\n", 2);
      push_out(c);
      result = c.sink_.status();
      if (c.output_.tee) s.ring_.end();
      c.output_.tee = false;
    }
    if (c.output_.dead) result = Status::kClosed;
  }
  return result;
}

Status HttpServer::channel_end_stream(HttpSession& s, const Id& related, uint32_t retry_ms) {
  // Before 2025-11-25 a stream has no priming event with an id: its client could not resume.
  if (s.kind_ != HttpSession::Kind::kStreamable || !s.ring_.enabled() ||
      !mcp::supports(s.session_.version(), mcp::Feature::kSsePolling))
    return Status::kInvalidState;
  const uint32_t h = id_hash(related);
  int st = find_stream(s, h);
  if (st < 0) {
    // The request being handled: from here on it is awaited like a held one (its answer goes to
    // the replay buffer for the client's GET), until the server says it is done.
    st = h != 0 ? handled_stream(s, h) : -1;
    if (st < 0 || !s.streams_[st].await_id(h)) return Status::kNotFound;
  }
  HttpSession::Stream& S = s.streams_[st];
  if (S.conn < 0) return Status::kOk;
  Conn& c = conns_[static_cast<size_t>(S.conn)];
  if (c.body_ == Body::kBuffered) return Status::kInvalidState;
  if (!c.output_.sse) {
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

void HttpSession::request(void* ctx, const Id& id, mcp::Channel::RequestEvent event) {
  HttpSession& s = *static_cast<HttpSession*>(ctx);
  s.server_->channel_request(s, id, event);
}

// What the server says of a request (mcp::Channel::request). Held: its id is awaited on the
// stream of the POST that brought it (HTTP+SSE and WebSocket: the session's stream), where
// what relates to it goes and which stays open for its answer. Done: no longer awaited; a POST's
// stream awaiting nothing more ends (after handle() when inside it).
void HttpServer::channel_request(HttpSession& s, const Id& id, mcp::Channel::RequestEvent event) {
  const uint32_t h = id_hash(id);
  const bool streamable = s.kind_ == HttpSession::Kind::kStreamable;
  if (event == mcp::Channel::RequestEvent::kHeld) {
    if (find_stream(s, h) >= 0) return;  // held again
    const int st = streamable ? handled_stream(s, 0) : 0;  // (one POST is handled at a time)
    if (st < 0 || !s.streams_[st].used) return;
    (void)s.streams_[st].await_id(h);  // (never full: the server holds no more)
    return;
  }
  const int st = find_stream(s, h);
  if (st < 0) return;  // not held: answered while handled
  HttpSession::Stream& S = s.streams_[st];
  for (uint8_t k = 0; k < S.awaiting; ++k) {
    if (S.await[k] != h) continue;
    S.await[k] = S.await[--S.awaiting];
    break;
  }
  if (!streamable || S.awaiting != 0 || S.get) return;
  if (S.conn >= 0 && conns_[static_cast<size_t>(S.conn)].request_.handling) return;
  finish_stream(s, st);
}

}  // namespace transport
EMCP_NS_END
