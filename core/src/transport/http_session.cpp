// MCP over HTTP: the session table. Each HttpSession slot holds one MCP session of any of the
// three transports, its Mcp-Session-Id, its event streams and its replay buffer; a slot is
// found by id, taken (a free one, or the least recently used Streamable HTTP session without a
// live connection), and freed, which ends the responses and WebSockets still serving it.
#include "emcp/transport/http_server.h"

EMCP_NS_BEGIN
namespace transport {

// With EMCP_LEGACY_ERA=0 a slot is never taken: its channel is left empty, so that none of the
// sessions' routing (http_streamable.cpp) is linked.
HttpSession::HttpSession(char* replay, size_t replay_cap)
    : session_(EMCP_LEGACY_ERA ? mcp::Channel{&HttpSession::open, &HttpSession::close, this, &HttpSession::end_stream,
                                                          &HttpSession::request}
                               : mcp::Channel{}),
      ring_(replay, replay_cap),
      detached_(detached_buf_, sizeof detached_buf_, EMCP_LEGACY_ERA ? &HttpSession::detached_flush : nullptr, this) {}

bool valid_session_prefix(const char* prefix) {
  if (prefix == nullptr) return true;
  size_t n = 0;
  for (; prefix[n] != '\0'; ++n) {
    const char ch = prefix[n];
    const bool unreserved = (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') ||
                            ch == '-' || ch == '.' || ch == '_' || ch == '~';
    if (!unreserved || n == kMaxSessionPrefix) return false;
  }
  return true;
}

// A slot keeps the random digits alone; the prefix is the engine's (HttpOptions::session_prefix).
void HttpServer::write_session_id(json::Sink& out, const HttpSession& s) const {
  if (options_.session_prefix != nullptr) out.write(StrView(options_.session_prefix));
  out.write(s.id());
}

HttpSession* HttpServer::session_by_id(StrView id, HttpSession::Kind kind, const Conn& c) {
  const StrView prefix(options_.session_prefix);
  if (id.size() <= prefix.size() || !id.starts_with(prefix)) return nullptr;
  id = id.sub(prefix.size());
  for (HttpSession& s : sessions_)
    if (s.kind_ == kind && s.id() == id) return options_.auth != nullptr && s.principal_ != c.grant_.principal ? nullptr : &s;
  return nullptr;
}

bool HttpServer::session_gone(const Conn& c) const {
  if (c.session_ < 0) return false;
  const HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  return s.kind_ == HttpSession::Kind::kFree || s.generation_ != c.request_.session_gen;
}

HttpSession* HttpServer::new_session(HttpSession::Kind kind, const PeerAddress& peer, bool* rate_limited) {
  HttpSession* slot = nullptr;
  for (HttpSession& s : sessions_)
    if (s.kind_ == HttpSession::Kind::kFree) {
      slot = &s;
      break;
    }
  if (slot == nullptr) {
    // A session that may give way (http_fair.cpp): its client gets 404 and initializes again.
    slot = evictable_session(peer, server_.now(), rate_limited);
    if (slot == nullptr) return nullptr;
    ++stats_.session_evicted;
    log("http: all sessions taken; the least recently used one that may give way ends");
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
  slot->peer_ = peer;
  ++slot->generation_;
  slot->last_ms_ = server_.now();
  slot->next_stream_ = 0;
  slot->ring_.clear();
  slot->msg_stream_ = -1;
  for (HttpSession::Stream& S : slot->streams_) S = HttpSession::Stream{};
  slot->session_.reset();
  server_.attach(slot->session_);
  return slot;
}

// A new session for connection c (503 when there is no slot it may take, 429 when only another
// peer's is left and its peer's bucket is empty). HTTP+SSE and WebSocket sessions live on c: their only stream is c.
HttpSession* HttpServer::open_session(Conn& c, HttpSession::Kind kind) {
  if (!valid_session_prefix(options_.session_prefix)) {
    log("http: HttpOptions::session_prefix is not valid (up to 16 of A-Z a-z 0-9 - . _ ~): no session opens");
    answer(c, 500, "Internal Server Error: the server's session prefix is not valid");
    return nullptr;
  }
  bool rate_limited = false;
  HttpSession* s = new_session(kind, c.peer_, &rate_limited);
  if (s == nullptr && rate_limited) {
    ++stats_.session_refused_rate;
    c.extra_header_ = "Retry-After: 1\r\n";
    answer(c, 429, "Too Many Requests: this address takes other clients' sessions too fast");
    return nullptr;
  }
  if (s == nullptr) {
    ++stats_.session_refused_full;
    c.extra_header_ = "Retry-After: 5\r\n";
    answer(c, 503, "Service Unavailable: no free session slot");
    return nullptr;
  }
  c.session_ = static_cast<int16_t>(s->index_);
  c.request_.session_gen = s->generation_;
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
  s.ring_.clear();
}

}  // namespace transport
EMCP_NS_END
