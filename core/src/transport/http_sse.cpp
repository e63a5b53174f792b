// MCP over HTTP: the HTTP+SSE transport of 2024-11-05. GET on sse_path opens the session and
// its event stream, whose first event (`endpoint`) names where to POST; each POST to
// messages_path?sessionId=... is answered 202, and what the server sends goes out on the
// stream as `message` events. The session lives on the stream's connection: it ends with it.
#include "emcp/transport/http_server.h"

EMCP_NS_BEGIN
namespace transport {

// The head of a GET to sse_path: the stream that opens a session.
void HttpServer::head_sse(Conn& c, const http::Request& r) {
  if (r.method != http::Method::kGet) return refuse(c, 405, "Method Not Allowed", "Allow: GET\r\n");
  if (r.accept.present && !r.accepts("text/event-stream"))
    return refuse(c, 406, "Not Acceptable: Accept must list text/event-stream");
  c.route_ = Route::kSseStream;
}

// The head of a POST to messages_path: the session its sessionId names.
void HttpServer::head_sse_post(Conn& c, const http::Request& r) {
  if (r.method != http::Method::kPost) return refuse(c, 405, "Method Not Allowed", "Allow: POST\r\n");
  if (!r.content_type_is("application/json"))
    return refuse(c, 415, "Unsupported Media Type: Content-Type must be application/json");
  const StrView sid = r.query_param("sessionId");
  if (sid.empty()) return refuse(c, 400, "Bad Request: sessionId query parameter required");
  HttpSession* s = session_by_id(sid, HttpSession::Kind::kSse, c);
  if (s == nullptr) return refuse(c, 404, "Not Found: unknown or ended session");
  c.session_ = static_cast<int16_t>(s->index_);
  c.request_.session_gen = s->generation_;
  c.route_ = Route::kSsePost;
}

void HttpServer::open_sse(Conn& c) {
  HttpSession* s = open_session(c, HttpSession::Kind::kSse);
  if (s == nullptr) return;
  c.phase_ = Phase::kStream;
  start_stream_body(c, "text/event-stream", true);
  c.sink_.write("event: endpoint\ndata: ", 22);
  c.sink_.write(StrView(options_.messages_path));
  c.sink_.write("?sessionId=", 11);
  write_session_id(c.sink_, *s);
  c.sink_.write("\n\n", 2);
  push_out(c);
}

// POST to messages_path: the messages are handled in the session the stream opened; the POST
// itself is answered 202, the answers go out on the stream.
void HttpServer::route_sse_post(Conn& c) {
  HttpSession& s = sessions_[static_cast<size_t>(c.session_)];
  const jsonrpc::Decoded& d = c.decoder_.finish();
  if (!permitted(c, d)) {
    c.session_ = -1;
    return;
  }
  s.last_ms_ = server_.now();
  c.request_.handling = true;
  server_.handle(s.session_, d);
  c.request_.handling = false;
  c.session_ = -1;  // the answer to the POST itself belongs to no session
  if (c.output_.dead) {
    drop(c, true);
    return;
  }
  answer(c, 202, "Accepted");
}

// A message from the server: a `message` event on the stream (without id: this transport does
// not resume).
json::Sink* HttpServer::sse_message_begin(Conn& c) {
  c.sink_.write("event: message\ndata: ", 21);
  return &c.sink_;
}

}  // namespace transport
EMCP_NS_END
