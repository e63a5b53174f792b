// tools/bridge/gateway_output.cpp - what the HTTP gateway sends back to a client (gateway.h):
// the response head through the core's writers (emcp/http/http.h; the CORS headers of
// emcp/transport/http_security.h), one answer with Content-Length, or an event stream (chunked
// on HTTP/1.1, up to the close on HTTP/1.0) whose events carry the board's messages for the
// request; and the end of a request (keep-alive, or close).
//
// A request's answer is application/json when it is the first thing for it; text/event-stream
// when something for it comes first or when the body was a batch; its answer ends the stream.
// In a session at 2025-11-25 or later every POST with requests is an event stream from the start
// (a priming event first, gateway_streams.cpp).
// At 2026-07-28 an answer's status follows its error, as the engine's (http_modern.cpp): -32601
// 404, -32020..-32022 400.

#include "gateway.h"
#include "emcp/transport/http_security.h"

namespace bridge {
namespace gateway {

namespace http = emcp::http;
using emcp::StrView;

std::string Gateway::head(Conn& c, int status, const char* type, int64_t length) {
  StringSink h;
  http::write_status_line(h, status);
  if (type != nullptr) http::write_header(h, "Content-Type", StrView(type));
  if (c.chunked) http::write_header(h, "Transfer-Encoding", "chunked");
  else if (length >= 0 && status != 204 && status >= 200) http::write_header(h, "Content-Length", static_cast<uint64_t>(length));
  if (c.sse) http::write_header(h, "Cache-Control", "no-cache");
  h.write(StrView(c.extra.data(), c.extra.size()));
  if (c.cors) emcp::transport::write_cors_headers(http_, h, c.parser.request(), c.preflight);
  if (!c.keep_alive) http::write_header(h, "Connection", "close");
  http::write_end_head(h);
  return h.take();
}

void Gateway::answer(Conn& c, int status, const std::string& body, const char* type) {
  c.chunked = c.sse = false;
  c.out += head(c, status, type, static_cast<int64_t>(body.size()));
  if (status != 204) c.out += body;
  c.head_sent = true;
  end_request(c);
}

void Gateway::start_sse(Conn& c) {
  c.sse = true;
  c.chunked = c.parser.request().version_minor >= 1;
  if (!c.chunked) c.keep_alive = false;  // HTTP/1.0: the body ends with the connection
  c.out += head(c, 200, "text/event-stream", -1);
  c.head_sent = true;
}

void Gateway::event(Conn& c, const std::string& json) { write_events(c, "event: message\ndata: " + json + "\n\n"); }

void Gateway::end_response(Conn& c) {
  if (!c.head_sent) start_sse(c);  // nothing came for it (a cancelled request): an empty stream
  if (c.chunked) c.out += "0\r\n\r\n";
  end_request(c);
}

void Gateway::end_request(Conn& c) {
  c.parser.reset();
  c.body.clear();
  c.head_sent = c.sse = c.chunked = false;
  c.awaiting = 0;
  c.stream = 0;
  c.last_ms = emcp::posix::now_ms();
  if (!c.keep_alive) {
    c.st = Conn::St::kClosing;
    c.in.clear();
    return;
  }
  c.st = Conn::St::kIdle;
  // Pipelined requests go on from the poll loop (process() for connections with input).
}

// An answer or a message of connection `conn`'s request. `answer_msg`: it is the answer (ends it
// when the connection awaits nothing else).
void Gateway::deliver(size_t conn, const std::string& json, bool answer_msg, int error_code) {
  Conn& c = *conns_[conn];
  if (c.st != Conn::St::kWaiting && c.st != Conn::St::kStream) return;
  if (answer_msg && !c.head_sent && !c.batch && c.awaiting == 1) {
    int status = 200;
    if (c.modern && error_code == -32601) status = 404;
    if (c.modern && error_code <= -32020 && error_code >= -32022) status = 400;
    return answer(c, status, json, "application/json");
  }
  if (!c.head_sent) {
    start_sse(c);
    // A session's stream from 2025-11-25 on: a priming event, ids, resumable (gateway_streams.cpp).
    if (resumable(c)) open_stream(c);
  }
  if (c.stream != 0) return stream_event(c.stream, json, answer_msg);
  event(c, json);
  if (answer_msg && --c.awaiting <= 0 && c.st == Conn::St::kWaiting) end_response(c);
}

}  // namespace gateway
}  // namespace bridge
