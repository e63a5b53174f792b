// MCP over HTTP: fair shares of the slots under attack (docs/http.md, "Under attack"). When
// every connection slot is taken, a newcomer gets the slot of a slow, idle or over-share
// connection; when every session slot is taken, a new session gets the slot of the least
// recently used one that may give way. Peers are told apart by the address the port reports
// with each connection (PeerAddress; all zero: not known, no share applies).
#include "emcp/transport/http_server.h"

EMCP_NS_BEGIN
namespace transport {

namespace {
// A share of `slots` (0 in the options: half, rounded up; at least 1).
size_t share_of(uint16_t configured, size_t slots) {
  const size_t n = configured != 0 ? configured : (slots + 1) / 2;
  return n == 0 ? 1 : n;
}
}  // namespace

size_t HttpServer::conns_of(const PeerAddress& peer) const {
  size_t n = 0;
  for (const Conn& c : conns_) if (c.phase_ != Phase::kFree && c.peer_ == peer) ++n;
  return n;
}

size_t HttpServer::sessions_of(const PeerAddress& peer) const {
  size_t n = 0;
  for (const HttpSession& s : sessions_) if (s.kind_ != HttpSession::Kind::kFree && s.peer_ == peer) ++n;
  return n;
}

bool HttpServer::over_conn_share(const PeerAddress& peer) const {
  return peer.known() && conns_of(peer) > share_of(options_.max_conns_per_peer, conns_.size());
}

bool HttpServer::over_session_share(const PeerAddress& peer) const {
  return peer.known() && sessions_of(peer) > share_of(options_.max_sessions_per_peer, sessions_.size());
}

// The candidates, best first: (0) a slow connection of a peer over its share, (1) any slow
// one, (2) an idle one of a peer over its share, (3) any idle one, (4) when the newcomer's peer
// is below its share, any connection of another peer over its share. Slow: a head still
// arriving reclaim_grace_ms after it began (the first: after the accept), or a body paused that
// long. Within a rank the oldest goes first.
bool HttpServer::make_room(const PeerAddress& peer, uint64_t now) {
  const uint32_t grace = options_.reclaim_grace_ms;
  const bool below = peer.known() && conns_of(peer) < share_of(options_.max_conns_per_peer, conns_.size());
  Conn* best = nullptr;
  int best_rank = 5;
  uint64_t best_since = 0;
  for (Conn& c : conns_) {
    if (c.phase_ == Phase::kFree || c.request_.handling) continue;
    const bool over = over_conn_share(c.peer_);
    const bool reading = c.phase_ == Phase::kRequest || c.phase_ == Phase::kDiscard;
    int rank = 5;
    uint64_t since = 0;
    if (c.output_.pend_len != 0) {
      // Output its peer has not taken yet: not slow by this rule (send_timeout_ms ends it).
    } else if (c.phase_ == Phase::kIdle && c.request_.fresh) {
      if (now - c.opened_ms_ > grace) rank = over ? 0 : 1, since = c.opened_ms_;
    } else if (reading && !c.parser_.in_body()) {
      if (now - c.started_ms_ > grace) rank = over ? 0 : 1, since = c.started_ms_;
    } else if (reading) {
      if (now - c.last_ms_ > grace) rank = over ? 0 : 1, since = c.last_ms_;
    } else if (c.phase_ == Phase::kIdle) {
      rank = over ? 2 : 3, since = c.last_ms_;
    }
    if (rank == 5 && below && over && c.peer_ != peer) rank = 4, since = c.opened_ms_;
    if (rank < best_rank || (rank == best_rank && since < best_since)) {
      best = &c;
      best_rank = rank;
      best_since = since;
    }
  }
  if (best == nullptr) return false;
  Conn& c = *best;
  if (best_rank <= 1) {
    ++stats_.reclaimed_slow;
    log("http: all connections busy; a slow one gives way (408)");
    close_with(c, 408, "Request Timeout: too slow while others wait");
  } else if (best_rank <= 3) {
    ++stats_.reclaimed_idle;
    log("http: all connections busy; an idle one gives way");
  } else {
    ++stats_.displaced;
    log("http: all connections busy; one of a peer over its share gives way");
    const bool arriving = c.phase_ == Phase::kRequest || c.phase_ == Phase::kDiscard || c.phase_ == Phase::kIdle;
    if (c.output_.pend_len == 0 && arriving) {  // told why, and when to come back
      close_with(c, 503, "Service Unavailable: this address holds more than its share of connections",
                 "Retry-After: 1\r\n");
    } else if (EMCP_LEGACY_ERA && c.phase_ == Phase::kWebSocket && c.output_.pend_len == 0) {
      ws_close(c, ws::kCloseGoingAway);
    }
  }
  drop(c, true);  // whatever of its last words the port did not take now is lost
  return true;
}

// ---- Sessions -----------------------------------------------------------------------------------

// Takes a token of `peer`'s bucket (taking another peer's session slot); false when it is empty.
bool HttpServer::take_session_token(const PeerAddress& peer, uint64_t now) {
  if (peers_.size() == 0 || !peer.known()) return true;
  // At most 0x7FFF session slots (the constructor's check): the burst fits the bucket.
  const uint16_t burst = static_cast<uint16_t>(share_of(options_.session_burst, sessions_.size()));
  PeerRate* e = nullptr;
  for (PeerRate& r : peers_)
    if (r.peer == peer) e = &r;
  if (e == nullptr) {  // an unused entry, or the least recently used one
    for (PeerRate& r : peers_)
      if (e == nullptr || !r.peer.known() || (e->peer.known() && r.used_ms < e->used_ms)) e = &r;
    e->peer = peer;
    e->tokens = burst;
    e->refilled_ms = now;
  }
  e->used_ms = now;
  if (options_.session_refill_ms != 0 && now > e->refilled_ms) {
    const uint64_t n = (now - e->refilled_ms) / options_.session_refill_ms;
    if (e->tokens + n >= burst) {
      e->tokens = burst;
      e->refilled_ms = now;
    } else {
      e->tokens = static_cast<uint16_t>(e->tokens + n);
      e->refilled_ms += n * options_.session_refill_ms;
    }
  }
  if (e->tokens == 0) return false;
  --e->tokens;
  return true;
}

// The session a new one of `peer` may take the slot of, or nullptr (*rate_limited: only
// another peer's session could go, and `peer`'s bucket is empty). A session may go when no
// request of it is in flight; no stream or WebSocket holds it (one whose client sent a request
// within stream_hold_ms does, except towards other peers when its peer is over its share); and
// it was opened by `peer`, or is unused for session_active_ms, or its peer (not `peer`) is over
// its share. First the least recently used of a peer over its share; otherwise the least
// recently used of the rest, where taking another peer's session costs a token of `peer`'s
// bucket (without one, only `peer`'s own sessions are taken).
HttpSession* HttpServer::evictable_session(const PeerAddress& peer, uint64_t now, bool* rate_limited) {
  HttpSession* over_lru = nullptr;
  HttpSession* own_lru = nullptr;
  HttpSession* any_lru = nullptr;
  auto older = [](HttpSession* best, HttpSession& s) { return best == nullptr || s.last_ms_ < best->last_ms_; };
  for (HttpSession& s : sessions_) {
    if (s.kind_ == HttpSession::Kind::kFree) continue;
    // A request the server holds (a deferred call) is a request in flight, even once its
    // connection has gone (its answer goes to the stream it can resume) or, for HTTP+SSE and
    // WebSocket, when it answers on the session's own stream.
    bool request = false, stream = false;
    for (const HttpSession::Stream& S : s.streams_) request = request || (S.used && S.awaiting != 0);
    for (const Conn& c : conns_) {
      if (c.phase_ == Phase::kFree || c.session_ != static_cast<int16_t>(s.index_) || c.request_.session_gen != s.generation_)
        continue;
      const bool streaming = (c.phase_ == Phase::kStream && (c.route_ == Route::kGet || c.route_ == Route::kSseStream)) ||
                             c.phase_ == Phase::kWebSocket;
      (streaming ? stream : request) = true;
    }
    if (request) continue;
    const bool own = s.peer_ == peer;
    const bool over = !own && over_session_share(s.peer_);
    const uint64_t unused = now - s.last_ms_;
    if (stream && !over && unused <= options_.stream_hold_ms) continue;
    if (over) {
      if (older(over_lru, s)) over_lru = &s;
      continue;
    }
    if (!own && unused <= options_.session_active_ms) continue;
    if (own && older(own_lru, s)) own_lru = &s;
    if (older(any_lru, s)) any_lru = &s;
  }
  if (over_lru != nullptr) return over_lru;
  if (any_lru == nullptr || any_lru == own_lru) return any_lru;
  if (take_session_token(peer, now)) return any_lru;  // another peer's, unused for a while
  *rate_limited = own_lru == nullptr;
  return own_lru;
}

// An answer starting on `c` gives up its connection after it, and says so with Connection:
// close, when every connection slot is taken and its session holds another one (its GET
// stream, a call's stream): its client keeps several connections and opens another when it
// needs one. Otherwise the next newcomer would take an idle keep-alive connection's slot
// (make_room() above), and a request its client sent on that connection meanwhile would be lost
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


}  // namespace transport
EMCP_NS_END
