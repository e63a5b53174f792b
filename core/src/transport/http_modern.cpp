// Streamable HTTP at 2026-07-28 (basic/transports/streamable-http.mdx): every POST carries one
// request or notification and is served on its own, without a session: no Mcp-Session-Id is
// minted, echoed or looked up, no GET stream, no resumption. The request is handled on the
// connection's own mcp::Session (HttpConnection::rpc_), whose channel is the POST's response:
// plain JSON when the answer comes first, an event stream when notifications of the request
// (progress, logs) come before it. Closing that response cancels the request (the session is
// detached, which cancels its deferred call). The answer's HTTP status follows its error:
// 400 for a request refused before it was served (_meta, headers, revision, a missing client
// capability), 404 for -32601.
#include "emcp/transport/http_server.h"

#include "emcp/jsonrpc/encode.h"

EMCP_NS_BEGIN
namespace transport {

namespace {

mcp::RequestHeaders headers_of(const http::Request& r) {
  mcp::RequestHeaders h;
  h.protocol_version = {r.protocol_version.view(), r.protocol_version.present};
  h.method = {r.mcp_method.view(), r.mcp_method.present};
  h.name = {r.mcp_name.view(), r.mcp_name.present};
  h.params = r.mcp_params.view();
  h.check = &mcp::Server::check_headers;
  return h;
}

}  // namespace

// The body of a POST of the 2026-07-28 era (its MCP-Protocol-Version header, or its `_meta`).
void HttpServer::route_modern_post(Conn& c, const jsonrpc::Decoded& d) {
  c.session_ = -1;  // an Mcp-Session-Id header is ignored at this revision
  c.request_.modern = true;
  const jsonrpc::Message& first = *d.first;
  if (d.batch) {
    answer_rpc_error(c, 400, jsonrpc::ErrorCode::kInvalidRequest,
                     "Invalid Request: a POST carries one message at protocol revision 2026-07-28, not a batch");
    return;
  }
  switch (first.kind) {
    case jsonrpc::Kind::kInvalid:
      return answer_rpc_error(c, 400, first.invalid_code, nullptr, &first);
    case jsonrpc::Kind::kResponse:
    case jsonrpc::Kind::kErrorResponse:
      answer_rpc_error(c, 400, jsonrpc::ErrorCode::kInvalidRequest,
                       "Invalid Request: a client sends no responses at protocol revision 2026-07-28");
      return;
    case jsonrpc::Kind::kNotification:
      // This revision defines no client notification over HTTP (cancellation is the closing
      // of the response): accepted, nothing to do.
      answer(c, 202, nullptr);
      return;
    case jsonrpc::Kind::kRequest:
      break;
  }
  if (!permitted(c, d)) return;
  serve_modern_request(c, d);
}

void HttpServer::serve_modern_request(Conn& c, const jsonrpc::Decoded& d) {
  const mcp::RequestHeaders h = headers_of(c.parser_.request());
  c.request_.held = false;
  c.request_.handling = true;
  server_.handle(c.rpc_, d, &h);
  c.request_.handling = false;
  if (c.output_.dead) return drop(c, true);
  if (c.request_.ended) {
    c.request_.ended = false;
    end_request(c);
    return;
  }
  // Not answered yet: a held request (a deferred call, a listen) is answered later on this
  // connection (or the client closes it: cancellation). Anything else that ended without an
  // answer gets an empty event stream.
  if (!c.request_.held) close_response(c);
}

// ---- The connection's channel ----------------------------------------------------------------------

json::Sink* HttpConnection::rpc_open(void* ctx, const mcp::OutMessage& m) {
  HttpConnection& c = *static_cast<HttpConnection*>(ctx);
  return c.server_->rpc_open(c, m);
}

Status HttpConnection::rpc_close(void* ctx) {
  HttpConnection& c = *static_cast<HttpConnection*>(ctx);
  return c.server_->rpc_close(c);
}

void HttpConnection::rpc_request(void* ctx, const jsonrpc::Id& id, mcp::Channel::RequestEvent event) {
  (void)id;  // a connection carries one request
  HttpConnection& c = *static_cast<HttpConnection*>(ctx);
  c.server_->rpc_request(c, event);
}

json::Sink* HttpServer::rpc_open(Conn& c, const mcp::OutMessage& m) {
  // Only what relates to the request in flight; never a request to the client (MRTR
  // replaces them at this revision).
  if (!c.request_.modern || c.output_.dead || c.phase_ != Phase::kWaiting || m.kind == mcp::OutMessage::Kind::kRequest)
    return nullptr;
  c.msg_response_ = m.kind == mcp::OutMessage::Kind::kResponse;
  if (c.body_ == Body::kNone && !c.output_.head_sent) {
    if (c.msg_response_) {
      // The answer first: plain JSON, its status from its error.
      c.status_ = m.refused ? 400 : m.error == static_cast<int32_t>(jsonrpc::ErrorCode::kMethodNotFound) ? 404 : 200;
      c.body_ = Body::kBuffered;
      c.content_type_ = "application/json";
      c.sink_.reset();
      return &c.sink_;
    }
    // Notifications of the request go first: an event stream, without event ids (nothing
    // resumes at this revision).
    c.extra_header_ = "X-Accel-Buffering: no\r\n";
    start_stream_body(c, "text/event-stream", true);
  } else if (!c.output_.sse) {
    return nullptr;  // a JSON answer is out already
  }
  c.sink_.write("event: message\ndata: ", 21);
  return &c.sink_;
}

Status HttpServer::rpc_close(Conn& c) {
  Status result = c.sink_.status();
  if (c.output_.sse) {
    c.sink_.write("\n\n", 2);
    push_out(c);
    result = c.sink_.status();
  }
  if (c.output_.dead) result = Status::kClosed;
  if (c.msg_response_) {
    c.msg_response_ = false;
    finish_body(c);
    end_request(c);  // after handle() returns when inside it
  }
  return result;
}

// A held request that ends unanswered after handle() (its answer could not be written) ends
// its response; an answered one was ended by rpc_close().
void HttpServer::rpc_request(Conn& c, mcp::Channel::RequestEvent event) {
  c.request_.held = event == mcp::Channel::RequestEvent::kHeld;
  if (!c.request_.held && !c.request_.handling && c.request_.modern && c.phase_ == Phase::kWaiting) close_response(c);
}

}  // namespace transport
EMCP_NS_END
