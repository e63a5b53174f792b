// tools/bridge/gateway_streams.cpp - resumable event streams of the HTTP gateway (gateway.h), as
// the engine has them for a session at 2025-11-25 or later (docs/http.md "Event streams and
// resuming"; SEP-1699): every POST of the session that carries requests is answered with an
// event stream from its first byte (gateway_routes.cpp post_session()), whose first event is a
// priming event (an id, empty data) with a `retry` field, and every event after
// it has an id `<stream>-<n>` and is kept in a replay buffer (kMaxReplay bytes for the session,
// the oldest pushed out). When the client's connection drops, the stream's requests go on on the
// board and what comes for them is kept; `GET /mcp` with `Last-Event-ID: <stream>-<n>` replays
// that stream's events after `n` and then, when its requests are not all answered, goes on as
// that stream (progress and answers come on it). Unlike the engine, which answers
// application/json when the answer is the first thing for a request, the gateway cannot know
// that it will be: a board's or a device's answer can take seconds, and a connection lost before
// it would lose it. The session's GET stream has no ids (not resumable).
#include <stdio.h>
#include <stdlib.h>

#include "emcp/posix/platform.h"
#include "gateway.h"

namespace bridge {
namespace gateway {

bool Gateway::resumable(const Conn& c) const {
  return c.session_req && !c.modern && !c.batch && session_open() &&
         emcp::mcp::supports(session_version_, emcp::mcp::Feature::kSsePolling);
}

// Writes `text` (whole SSE events) on `c`'s response body (chunked or not).
void Gateway::write_events(Conn& c, const std::string& text) {
  c.last_ms = emcp::posix::now_ms();
  if (c.chunked) {
    char n[20];
    snprintf(n, sizeof n, "%zx\r\n", text.size());
    c.out += n;
    c.out += text;
    c.out += "\r\n";
  } else {
    c.out += text;
  }
}

void Gateway::open_stream(Conn& c) {
  // The oldest streams that ended are forgotten beyond kMaxStreams (a GET naming one then gets
  // the session's plain stream, as for an id that is not the gateway's).
  for (auto it = streams_.begin(); streams_.size() >= kMaxStreams && it != streams_.end();)
    it = it->second.ended ? streams_.erase(it) : std::next(it);
  const uint32_t sid = ++next_stream_;
  Stream& s = streams_[sid];
  s.conn = slot_of(c);
  s.serial = c.serial;
  s.gen = c.gen;
  s.awaiting = c.awaiting;
  c.stream = sid;
  for (auto& kv : pending_)
    if (kv.second.conn == s.conn && kv.second.serial == c.serial && kv.second.gen == c.gen) kv.second.stream = sid;
  write_events(c, "id: " + std::to_string(sid) + "-0\nretry: " + std::to_string(http_.retry_ms) + "\ndata: \n\n");
}

// The connection carrying stream `sid` now, if one does (its request, and the stream still its).
Conn* Gateway::stream_conn(uint32_t sid, const Stream& s) {
  if (s.serial == 0 || s.conn >= conns_.size() || !conns_[s.conn]) return nullptr;
  Conn& c = *conns_[s.conn];
  return c.serial == s.serial && c.gen == s.gen && c.stream == sid ? &c : nullptr;
}


void Gateway::stream_event(uint32_t sid, const std::string& json, bool answer_msg) {
  auto it = streams_.find(sid);
  if (it == streams_.end()) return;
  Stream& s = it->second;
  const uint64_t n = ++s.n;
  std::string ev = "id: " + std::to_string(sid) + "-" + std::to_string(n) + "\nevent: message\ndata: " + json + "\n\n";
  if (answer_msg && --s.awaiting <= 0) s.ended = true;
  replay_.push_back(Replayed{sid, n, ev});
  replay_bytes_ += ev.size();
  while (replay_bytes_ > kMaxReplay && !replay_.empty()) {
    replay_bytes_ -= replay_.front().text.size();
    replay_.pop_front();
  }
  Conn* c = stream_conn(sid, s);
  if (s.ended) s.serial = 0;  // no connection carries it any more
  if (c == nullptr) return;  // kept for the client's GET with Last-Event-ID
  write_events(*c, ev);
  if (s.ended) {
    c->stream = 0;
    end_response(*c);
  }
  flush(*c);
}

// A request of stream `sid` that will get no answer (its client cancelled it): when it was the
// stream's last, the stream ends, and so does the response carrying it, unless that is
// `handling`, the POST being handled now (post_session() ends it after its last message).
void Gateway::stream_request_gone(uint32_t sid, const Conn* handling) {
  auto it = streams_.find(sid);
  if (it == streams_.end()) return;
  Stream& s = it->second;
  if (--s.awaiting > 0) return;
  s.ended = true;
  Conn* c = stream_conn(sid, s);
  s.serial = 0;
  if (c == nullptr) return;
  c->stream = 0;
  if (c == handling) {
    c->awaiting = 0;
    return;
  }
  end_response(*c);
  flush(*c);
}

void Gateway::detach_stream(size_t conn, uint64_t serial) {
  for (auto& kv : streams_)
    if (kv.second.conn == conn && kv.second.serial == serial) kv.second.serial = 0;  // no connection
}

// GET /mcp with Last-Event-ID naming one of the session's streams.
bool Gateway::resume_stream(Conn& c) {
  const emcp::StrView id = c.parser.request().last_event_id.view();
  const std::string text(id.data(), id.size());
  char* end = nullptr;
  const unsigned long sid = strtoul(text.c_str(), &end, 10);
  if (end == text.c_str() || *end != '-') return false;
  const char* after_text = end + 1;
  const unsigned long long after = strtoull(after_text, &end, 10);
  if (end == after_text || *end != '\0') return false;
  auto it = streams_.find(static_cast<uint32_t>(sid));
  if (it == streams_.end()) return false;
  Stream& s = it->second;
  if (Conn* old = stream_conn(it->first, s)) {
    // The old connection still has the stream: it ends (the client has moved on).
    old->stream = 0;
    end_response(*old);
    flush(*old);
  }
  c.extra = session_header();
  c.st = Conn::St::kWaiting;
  start_sse(c);
  for (const Replayed& r : replay_)
    if (r.stream == it->first && r.n > after) write_events(c, r.text);
  if (s.ended) {
    end_response(c);
  } else {
    s.conn = slot_of(c);
    s.serial = c.serial;
    s.gen = c.gen;
    c.stream = it->first;
  }
  flush(c);
  return true;
}

void Gateway::forget_streams() {
  // (The session ended: its requests were answered -32603 first, which ended their streams.)
  for (auto& c : conns_)
    if (c && c->stream != 0) {
      c->stream = 0;
      end_response(*c);
      flush(*c);
    }
  streams_.clear();
  replay_.clear();
  replay_bytes_ = 0;
}

bool Gateway::carried(const Pending& pd) {
  if (pd.stream == 0) return conn_live(pd);
  auto it = streams_.find(pd.stream);
  return it != streams_.end() && stream_conn(it->first, it->second) != nullptr;
}

// What comes for a forwarded request: on its stream (resumable), else on its connection while
// that is the request's.
void Gateway::to_request(const Pending& pd, const std::string& json, bool answer_msg, int error_code) {
  if (pd.stream != 0) return stream_event(pd.stream, json, answer_msg);
  if (conn_live(pd)) deliver(pd.conn, json, answer_msg, error_code);
}

}  // namespace gateway
}  // namespace bridge
