// MCP over HTTP: a connection's output (emcp/transport/detail/http_output.h), and the engine's
// side of it: the Link to the port, the answers. Every response is assembled in the
// connection's buffer: the head in the room in front of the body (kHeadroom), the body's
// framing around it (RFC 9112: Content-Length, chunked with its size line and last chunk, or
// until close; RFC 6455 frame headers for WebSocket).
//
// The port takes what it can. Bytes it did not take at the end of a message (`may_defer`) stay
// where they are in the buffer, out_[output_.pend_off, +output_.pend_len); the sink is held
// meanwhile (json::Sink::hold), so the first byte of the next output waits for them (drain)
// and nothing overwrites them. The engine's writable() and poll() move them on. Bytes in the
// middle of a message (the sink is full and the handler still writes) cannot wait there: the
// output waits for the window instead, at most Link::send_timeout_ms.
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

HttpOutput::HttpOutput(char* out, size_t cap, json::FlushingSink::FlushFn flush, void* ctx)
    : sink_(out + kHeadroom, cap - kHeadroom - 2, flush, ctx), out_(out) {
  EMCP_ASSERT(cap >= kHeadroom + 64 && cap <= 0x7FFFFFFFu);
  output_.cap = static_cast<uint32_t>(cap);
}

// ---- Bytes to the peer --------------------------------------------------------------------------

bool HttpOutput::drain(const Link& l, bool wait) {
  const uint64_t deadline = l.ops->now(l.ctx) + l.send_timeout_ms;
  while (output_.pend_len != 0 && !output_.dead) {
    size_t taken = 0;
    const Status st = l.ops->write(l.ctx, *this, out_ + output_.pend_off, output_.pend_len, &taken);
    if (st != Status::kOk || taken > output_.pend_len) {
      output_.dead = true;
      break;
    }
    output_.pend_off += static_cast<uint32_t>(taken);
    output_.pend_len -= static_cast<uint32_t>(taken);
    if (output_.pend_len == 0 || taken != 0) continue;
    if (!wait) return false;
    const uint64_t now = l.ops->now(l.ctx);
    if (l.can_wait && now < deadline &&
        l.ops->wait_writable(l.ctx, *this, static_cast<uint32_t>(deadline - now)) == Status::kOk)
      continue;
    if (l.can_wait && l.ops->now(l.ctx) >= deadline) l.ops->timed_out(l.ctx, *this);
    output_.dead = true;
  }
  if (output_.dead) output_.pend_len = 0;  // dropped with the connection
  output_.pend_off = 0;
  sink_.release();
  return !output_.dead;
}

// Holds the sink while bytes of the buffer wait for the peer.
void HttpOutput::lend() {
  if (output_.pend_len != 0 && !sink_.held() && sink_.buffered() == 0) sink_.hold();
}

// Hands data[0, n) to the peer, after whatever is pending. The bytes are in the buffer (every
// output is assembled there), so what the peer does not take stays pending: with `may_defer`
// until the next drain; otherwise the output waits for it.
Status HttpOutput::send(const Link& l, const char* data, size_t n, bool may_defer) {
  if (output_.dead || !drain(l, true)) return Status::kClosed;
  EMCP_ASSERT(data >= out_ && data + n <= out_ + output_.cap);
  output_.pend_off = static_cast<uint32_t>(data - out_);
  output_.pend_len = static_cast<uint32_t>(n);
  (void)drain(l, !may_defer);
  return output_.dead ? Status::kClosed : Status::kOk;
}

void HttpOutput::send_tail(const Link& l, const char* data, size_t n) {
  if (output_.dead) return;
  EMCP_ASSERT(sink_.buffered() == 0 && n <= output_.cap);
  if (output_.pend_len + n > output_.cap && !drain(l, true)) return;  // no room even compacted
  if (output_.pend_off + output_.pend_len + n > output_.cap) {
    memmove(out_, out_ + output_.pend_off, output_.pend_len);
    output_.pend_off = 0;
  }
  memcpy(out_ + output_.pend_off + output_.pend_len, data, n);  // data: a literal or the caller's array
  output_.pend_len += static_cast<uint32_t>(n);
  (void)drain(l, false);
  lend();
}

// A head with no body bytes in the buffer: after what is pending; one longer than the whole
// buffer (a small buffer) goes through it in pieces, each waited for.
void HttpOutput::send_head(const Link& l, const char* head, size_t k) {
  if (k <= output_.cap) return send_tail(l, head, k);
  while (k != 0 && drain(l, true)) {
    const size_t n = k < output_.cap ? k : output_.cap;
    memcpy(out_, head, n);
    (void)send(l, out_, n, false);
    head += n;
    k -= n;
  }
}

// Puts head[0, k) in front of the output at `start` (the bytes before it in out_ are free);
// when it is longer than that room, its beginning is sent first, alone (after what is pending),
// from the front of the buffer. Returns where the head's (rest's) bytes start.
char* HttpOutput::place_head(const Link& l, const char* head, size_t k, char* start) {
  const size_t room = static_cast<size_t>(start - out_);
  if (k > room) {
    const size_t first = k - room;  // <= room: kMaxHead is at most twice the smallest room
    if (drain(l, true)) {
      memcpy(out_, head, first);
      (void)send(l, out_, first, false);
    }
    head += first;
    k = room;
  }
  start -= k;
  memcpy(start, head, k);
  return start;
}

// ---- Heads and bodies ---------------------------------------------------------------------------

// The head of a response into dst (at most cap bytes); returns its length. `length`: the
// Content-Length of a buffered body (-1: none).
size_t HttpOutput::write_head(const Link& l, char* dst, size_t cap, int64_t length) {
  json::BufferSink h(dst, cap);
  http::write_status_line(h, status_);
  if (content_type_ != nullptr) http::write_header(h, "Content-Type", StrView(content_type_));
  if (body_ == Body::kChunked) http::write_header(h, "Transfer-Encoding", "chunked");
  else if (length >= 0 && status_ != 204) http::write_header(h, "Content-Length", static_cast<uint64_t>(length));
  if (output_.sse) http::write_header(h, "Cache-Control", "no-cache");
  if (!l.ops->head_lines(l.ctx, *this, h)) http::write_header(h, "Connection", "close");
  http::write_end_head(h);
  EMCP_ASSERT(h.status() == Status::kOk);
  return h.view().size();
}

void HttpOutput::begin_buffered(int status, const char* content_type) {
  status_ = status;
  content_type_ = content_type;
  body_ = Body::kBuffered;
  output_.sse = false;
  sink_.reset();
}

void HttpOutput::start_stream(const Link& l, const char* content_type, bool sse) {
  content_type_ = content_type;
  output_.sse = sse;
  body_ = l.ops->chunked(l.ctx, *this) ? Body::kChunked : Body::kUntilClose;
  output_.head_pending = true;
}

void HttpOutput::answer_text(const Link& l, int status, const char* text, const char* content_type) {
  begin_buffered(status, text != nullptr ? (content_type ? content_type : "text/plain; charset=utf-8") : nullptr);
  if (text != nullptr) {
    sink_.write(StrView(text));
    sink_.put('\n');
  }
  finish_body(l);
}

void HttpOutput::push_out(const Link& l) {
  if (sink_.buffered() != 0) {
    output_.defer = true;
    (void)sink_.flush();
    output_.defer = false;
    lend();
    return;
  }
  if (output_.head_pending) {
    char head[kMaxHead];
    const size_t n = write_head(l, head, sizeof head, -1);
    output_.head_pending = false;
    output_.head_sent = true;
    send_head(l, head, n);
  }
}

Status HttpOutput::flushed(const Link& l, const char* data, size_t n) {
  if (n == 0) {
    // The sink was held (its buffer still has bytes for the peer) and is written again. An
    // event whose connection failed still goes whole into the replay buffer (output_.tee, below).
    const bool ok = drain(l, true);
    return ok || output_.tee ? Status::kOk : Status::kClosed;
  }
  if (output_.tee) l.ops->tee(l.ctx, *this, data, n);
  // data is the sink's buffer: out_ + kHeadroom, with 2 spare bytes after it.
  char* start = const_cast<char*>(data);
  size_t len = n;
  if (body_ == Body::kBuffered) {
    // The answer outgrew the buffer: its length is unknown, so it streams.
    body_ = l.ops->chunked(l.ctx, *this) ? Body::kChunked : Body::kUntilClose;
    output_.head_pending = true;
  }
  if (body_ == Body::kChunked) {
    char line[12];
    size_t k = format_hex(n, line);
    line[k++] = '\r';
    line[k++] = '\n';
    start -= k;
    memcpy(start, line, k);
    len += k;
    start[len++] = '\r';
    start[len++] = '\n';
  } else if (body_ == Body::kWs) {
    uint8_t hdr[10];
    const size_t k = ws::write_frame_header(hdr, ws_.first ? ws::Opcode::kText : ws::Opcode::kContinuation,
                                            ws_.final, n);
    ws_.first = false;
    start -= k;
    memcpy(start, hdr, k);
    len += k;
  }
  if (output_.head_pending) {
    char head[kMaxHead];
    const size_t k = write_head(l, head, sizeof head, -1);
    char* const at = place_head(l, head, k, start);
    len += static_cast<size_t>(start - at);
    start = at;
    output_.head_pending = false;
    output_.head_sent = true;
  }
  const Status st = send(l, start, len, output_.defer);
  // An event whose connection failed still goes whole into the replay buffer (the sink keeps
  // taking its bytes); the connection is dropped at the next safe point.
  return output_.tee ? Status::kOk : st;
}

void HttpOutput::finish_body(const Link& l) {
  if (body_ == Body::kBuffered) {
    const size_t body = sink_.buffered();
    char* const base = out_ + kHeadroom;
    char head[kMaxHead];
    const size_t k = write_head(l, head, sizeof head, static_cast<int64_t>(body));
    output_.head_pending = false;
    output_.head_sent = true;
    if (body == 0) {
      send_head(l, head, k);  // the buffer may still hold the previous answer's end
    } else {
      char* const at = place_head(l, head, k, base);
      (void)send(l, at, static_cast<size_t>(base - at) + body, true);
    }
  } else if (body_ == Body::kChunked) {
    push_out(l);
    send_tail(l, "0\r\n\r\n", 5);
  } else if (body_ == Body::kUntilClose) {
    push_out(l);
  }
  sink_.reset();
  lend();
  body_ = Body::kNone;
  output_.sse = false;
  output_.tee = false;
}

// ---- The engine's side --------------------------------------------------------------------------

const HttpOutput::Link::Ops HttpServer::kOutputOps = {
    [](void* ctx, HttpOutput& o, const char* data, size_t n, size_t* taken) {
      HttpServer& hs = *static_cast<HttpServer*>(ctx);
      Conn& c = static_cast<Conn&>(o);
      const Status st = hs.port_.write(hs.port_.ctx, c.index_, data, n, taken);
      if (st == Status::kOk && *taken != 0 && *taken <= n) c.last_ms_ = hs.server_.now();
      return st;
    },
    [](void* ctx, HttpOutput& o, uint32_t timeout_ms) {
      HttpServer& hs = *static_cast<HttpServer*>(ctx);
      return hs.port_.wait_writable(hs.port_.ctx, static_cast<Conn&>(o).index_, timeout_ms);
    },
    [](void* ctx, HttpOutput&) {  // as poll() counts it
      HttpServer& hs = *static_cast<HttpServer*>(ctx);
      hs.log("http: connection dropped: its peer stopped reading (send_timeout_ms)");
      ++hs.stats_.timeout_send;
    },
    [](void* ctx, HttpOutput& o, json::Sink& h) {
      HttpServer& hs = *static_cast<HttpServer*>(ctx);
      Conn& c = static_cast<Conn&>(o);
      if (EMCP_LEGACY_ERA && c.session_ >= 0) {
        HttpSession& s = hs.sessions_[static_cast<size_t>(c.session_)];
        if (s.kind_ == HttpSession::Kind::kStreamable && s.session_.initialized())
        {
          h.write("Mcp-Session-Id: ", 16);
          hs.write_session_id(h, s);
          h.write("\r\n", 2);
        }
      }
      if (c.extra_header_ != nullptr) h.write(StrView(c.extra_header_));
      if (c.output_.cors) write_cors_headers(hs.options_, h, c.parser_.request(), c.request_.preflight);
      if (c.body_ == Body::kUntilClose) c.request_.keep_alive = false;  // its end is the connection's
      hs.shed_keepalive(c);
      return c.request_.keep_alive;
    },
    [](void*, HttpOutput& o) { return static_cast<Conn&>(o).parser_.request().version_minor >= 1; },
    [](void* ctx, HttpOutput& o, const char* data, size_t n) {
      HttpServer& hs = *static_cast<HttpServer*>(ctx);
      Conn& c = static_cast<Conn&>(o);
      if (EMCP_LEGACY_ERA && c.session_ >= 0) hs.sessions_[static_cast<size_t>(c.session_)].ring_.append(data, n);
    },
    [](void* ctx) { return static_cast<HttpServer*>(ctx)->server_.now(); },
};

Status HttpServer::conn_flush(void* ctx, const char* data, size_t n) {
  Conn& c = *static_cast<Conn*>(ctx);
  return c.flushed(c.server_->link(), data, n);
}

// Starts a response whose length is unknown (SSE, or JSON that outgrew the buffer): chunked
// on HTTP/1.1, until close on HTTP/1.0. The head goes out with the first bytes.
void HttpServer::start_stream_body(Conn& c, const char* content_type, bool sse) {
  c.start_stream(link(), content_type, sse);
  if (c.body_ == Body::kUntilClose) c.request_.keep_alive = false;
}

// Ends the response body: Content-Length answer, last chunk, or close.
void HttpServer::finish_body(Conn& c) {
  const bool until_close = c.body_ == Body::kUntilClose;
  c.finish_body(link());
  if (until_close) c.request_.keep_alive = false;
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
  c.answer_text(link(), status, text, content_type);
  end_request(c);
}

void HttpServer::answer_rpc_error(Conn& c, int status, jsonrpc::ErrorCode code, const char* message,
                                  const jsonrpc::Message* invalid) {
  c.begin_buffered(status, "application/json");
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

}  // namespace transport
EMCP_NS_END
