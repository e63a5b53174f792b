// MCP over HTTP: the WebSocket route of the engine. GET on ws_path upgrades the connection
// (subprotocol "mcp") and opens a session that lives on it; each text message is one JSON-RPC
// message in, and each message out goes as one text message (frames as the output buffer
// fills). The framing codec itself is emcp/http/websocket.h.
#include "emcp/transport/http_server.h"

#include <string.h>

EMCP_NS_BEGIN
namespace transport {

// The head of a GET to ws_path: an upgrade to WebSocket version 13 (RFC 6455 4.2.1).
void HttpServer::head_websocket(Conn& c, const http::Request& r) {
  if (r.method != http::Method::kGet) return refuse(c, 405, "Method Not Allowed", "Allow: GET\r\n");
  if (!r.upgrade.present || !http::has_token(r.upgrade.view(), "websocket") || !r.connection_upgrade)
    return refuse(c, 426, "Upgrade Required: WebSocket", "Upgrade: websocket\r\nConnection: Upgrade\r\n");
  if (!r.ws_version.present || r.ws_version.view() != "13")
    return refuse(c, 426, "Upgrade Required: WebSocket version 13", "Sec-WebSocket-Version: 13\r\n");
  if (!r.ws_key.present || r.ws_key.view().size() != 24)
    return refuse(c, 400, "Bad Request: Sec-WebSocket-Key missing or malformed");
  c.route_ = Route::kWebSocket;
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
  c.ws_.first = true;
  c.ws_.final = false;
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
        c.request_.handling = true;
        server_.handle(s.session_, d);
        c.request_.handling = false;
        if (c.output_.dead) {
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

// A message from the server: its first frame is a text frame, its frames go out as the sink
// flushes (conn_flush), the last one with FIN (ws_message_end).
json::Sink* HttpServer::ws_message_begin(Conn& c) {
  c.ws_.first = true;
  c.ws_.final = false;
  return &c.sink_;
}

// The message ends: what the sink holds goes out as its last frame.
Status HttpServer::ws_message_end(Conn& c) {
  c.ws_.final = true;
  if (c.sink_.buffered() != 0) {
    push_out(c);
  } else if (!c.ws_.first) {
    const char fin[2] = {static_cast<char>(0x80), 0};  // empty last continuation
    send_tail(c, fin, 2);
  }
  const Status result = c.sink_.status();
  c.ws_.final = false;
  c.ws_.first = true;
  return result;
}

}  // namespace transport
EMCP_NS_END
