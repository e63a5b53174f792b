// tools/bridge/gateway_routes.cpp - a request to the HTTP gateway, from its head to the board
// (gateway.h): its admission, the rules of GET, POST and DELETE /mcp, and a POST's messages
// forwarded under wire ids. The engine's rules, in its order (http_server.cpp on_head,
// http_streamable.cpp, http_modern.cpp), for a server that is a board behind a UART.
//
// The head: Host/Origin, the CORS preflight, the metadata document and bearer tokens are the
// core's (transport::admit); then the path, the MCP-Protocol-Version header (a 2026-07-28 one:
// POST only, 405), Content-Type (415), Accept (406), Mcp-Session-Id (400 without, 404 for
// another; 404 too when the session it named ends before its body is in). A refusal decided
// from the head is answered after the body.
//
// POST /mcp: one message, or a batch where the session's revision has them (2025-03-26): each
// message goes to the board as its own line, re-written from the decoded message (never the
// client's text); a batch's invalid elements are answered here. Only notifications or
// responses: 202. Not JSON, or not JSON-RPC: 400.
//   - Ids: every forwarded request gets an unguessable gateway-unique id on the wire
//     ("gw-<random>-N"), and its progressToken one too; gateway_board.cpp maps the answer and
//     notifications/progress back. A client's notifications/cancelled goes on only for its own
//     request in flight; a client's response only for an open request of the board's to it.
//   - Limits: more than kMaxInFlight requests in flight, or kMaxQueue bytes waiting for the
//     board: 503 with Retry-After: 1; bodies over --max-body: 413 (the parser's).
// MCP 2026-07-28 (MCP-Protocol-Version: 2026-07-28, or a request whose `_meta` names a
//   revision): each request is self-contained, so it is forwarded whatever the session's state,
//   beside it, concurrently - when the board speaks 2026-07-28 (gateway_board.cpp asks it with
//   server/discover); a board that does not: 400 "unsupported MCP-Protocol-Version", as the
//   engine built without that era. A batch or a response 400, a notification 202 (not
//   forwarded). What the engine checks before it serves such a request (its `_meta`: -32602;
//   the routing headers: -32020; the revision: -32022) the gateway's own mcp::Server checks -
//   the core's code, on a server with empty tables - and a refusal is answered here with the
//   engine's status (400): the board sees no headers, and a request without `_meta` would be
//   served there as one of the UART session's. Mcp-Param-* need the tool's table, which only
//   the board has: not checked. Closing the response cancels the request.
// GET /mcp: the session's stream for what the board sends outside requests (one at a time: 409
//   for a second); no event ids, not resumable. With Last-Event-ID naming one of the session's
//   resumable POST streams (2025-11-25 on): that stream's missed events, then the stream goes
//   on there (gateway_streams.cpp). A comment line every heartbeat_ms (http_gateway.cpp).
// DELETE /mcp: ends the session (gateway_session.cpp), 200.
#include "emcp/posix/platform.h"
#include "emcp/transport/http_security.h"
#include "gateway.h"

namespace bridge {
namespace gateway {

namespace http = emcp::http;
namespace jsonrpc = emcp::jsonrpc;
using emcp::StrView;

void Gateway::on_head(Conn& c) {
  const http::Request& r = c.parser.request();
  expire_idle_session(emcp::posix::now_ms());
  c.keep_alive = r.keep_alive;
  c.gen = ++gen_;
  c.refuse = 0;
  c.refuse_text = nullptr;
  c.refuse_header.clear();
  c.document.clear();
  c.body.clear();
  c.extra.clear();
  c.session_req = c.modern = c.bad_version = c.batch = false;
  auto refuse = [&](int status, const char* text, const char* header = nullptr) {
    c.refuse = status;
    c.refuse_text = text;
    c.refuse_header = header ? header : "";
  };
  const StrView p = r.path();
  emcp::auth::Grant grant;
  const emcp::transport::Admission a = emcp::transport::admit(http_, r, p == StrView(http_.path), &grant);
  c.cors = a.cors;
  c.preflight = a.preflight;
  if (!a.document.empty()) {
    c.document.assign(a.document.data(), a.document.size());
    return;
  }
  if (a.status != 0) return refuse(a.status, a.text, a.header);
  if (p != StrView(http_.path)) return refuse(404, "Not Found");
  emcp::mcp::Version v = emcp::mcp::kLatestVersion;
  c.bad_version = r.protocol_version.present && !emcp::mcp::parse_version(r.protocol_version.view(), &v);
  const bool modern_header = r.protocol_version.present && !c.bad_version &&
                             emcp::mcp::supports(v, emcp::mcp::Feature::kModern);
  const http::Method m = r.method;
  if (modern_header && m != http::Method::kPost)
    return refuse(405, "Method Not Allowed: protocol revision 2026-07-28 uses POST only", "Allow: POST\r\n");
  if (c.bad_version && m != http::Method::kPost) return refuse(400, "Bad Request: unsupported MCP-Protocol-Version");
  c.modern = modern_header;
  auto session_named = [&]() -> bool {
    if (!r.session_id.present) {
      refuse(400, "Bad Request: Mcp-Session-Id header required");
      return false;
    }
    if (!session_open() || r.session_id.view() != StrView(session_id_)) {
      refuse(404, "Not Found: unknown or ended session");
      return false;
    }
    c.session_req = true;
    c.session_gen = session_gen_;
    return true;
  };
  if (m == http::Method::kPost) {
    if (!r.content_type_is("application/json"))
      return refuse(415, "Unsupported Media Type: Content-Type must be application/json");
    if (!r.accepts("application/json") || !r.accepts("text/event-stream"))
      return refuse(406, "Not Acceptable: Accept must list application/json and text/event-stream");
    if (r.session_id.present && !modern_header && !c.bad_version) (void)session_named();
    if (r.expect_continue && c.refuse == 0) c.out += "HTTP/1.1 100 Continue\r\n\r\n";
  } else if (m == http::Method::kGet) {
    if (!r.accepts("text/event-stream")) return refuse(406, "Not Acceptable: Accept must list text/event-stream");
    (void)session_named();
  } else if (m == http::Method::kDelete) {
    (void)session_named();
  } else if (m == http::Method::kOptions) {
    refuse(204, nullptr, "Allow: GET, POST, DELETE, OPTIONS\r\n");
  } else {
    refuse(405, "Method Not Allowed", "Allow: GET, POST, DELETE, OPTIONS\r\n");
  }
}

void Gateway::on_done(Conn& c) {
  c.st = Conn::St::kWaiting;
  if (!c.document.empty()) {
    c.extra = "Cache-Control: max-age=3600\r\n";
    return answer(c, 200, c.document + "\n", "application/json");
  }
  if (c.refuse != 0) {
    c.extra = c.refuse_header;
    return answer_text(c, c.refuse, c.refuse_text);
  }
  // The session its head named ended (DELETE, idle expiry, a board reset) while its body was
  // arriving; another may have opened since (as the engine: on_request_done).
  if (c.session_req && !session_still(c)) {
    c.session_req = false;
    return answer_text(c, 404, "Not Found: the session ended");
  }
  const http::Method m = c.parser.request().method;
  if (m == http::Method::kGet) {
    // Last-Event-ID naming one of the session's resumable streams: its missed events, then it
    // goes on here (gateway_streams.cpp); any other id: the session's plain stream.
    if (!c.parser.request().last_event_id.view().empty() && resume_stream(c)) return;
    if (get_conn_ >= 0) return answer_text(c, 409, "Conflict: this session has a GET stream already");
    get_conn_ = static_cast<int>(slot_of(c));
    get_serial_ = c.serial;
    session_last_ = emcp::posix::now_ms();
    c.st = Conn::St::kStream;
    c.extra = session_header();
    start_sse(c);
    flush(c);
    return;
  }
  if (m == http::Method::kDelete) {
    end_session("DELETE", "The session ended (DELETE) before this request was answered.");
    return answer_text(c, 200, "session ended");
  }
  on_post(c);
}

void Gateway::on_post(Conn& c) {
  // A link may answer within its send() (the fleet answers ping and tools/list itself; an MQTT
  // device's link refuses a message too long to publish): what it says while the POST is
  // handled waits until the POST's messages are all forwarded and its response is begun (the
  // decoder's arena holds them, and the response's stream is opened after them).
  posting_ = true;
  post_body(c);
  posting_ = false;
  while (!held_lines_.empty()) {
    const std::string line = std::move(held_lines_.front());
    held_lines_.pop_front();
    on_board_line(line);
  }
}

void Gateway::post_body(Conn& c) {
  // The body as it came (a raw line break inside a string is invalid JSON, as for the engine);
  // what goes to the board is re-written from what was decoded, one line per message.
  decoder_.begin();
  decoder_.feed(c.body.data(), c.body.size());
  const jsonrpc::Decoded& d = decoder_.finish();
  if (d.first == nullptr) return answer_rpc(c, 400, -32600, "Invalid Request: empty body");
  const jsonrpc::Message& first = *d.first;
  const bool modern = c.modern || (!d.batch && first.kind == jsonrpc::Kind::kRequest &&
                                   emcp::mcp::Server::is_modern(first));
  if (modern) {
    c.modern = true;
    return post_stateless(c, d);
  }
  if (c.bad_version) return answer_text(c, 400, "Bad Request: unsupported MCP-Protocol-Version");
  post_session(c, d);
}

// More requests in flight than kMaxInFlight, or more bytes waiting for the board than
// kMaxQueue (a board that stopped reading): 503, Retry-After: 1.
bool Gateway::refuse_busy(Conn& c, size_t requests) {
  const bool many = pending_.size() + requests > kMaxInFlight;
  if (!many && link_->queued() + c.body.size() <= kMaxQueue) return false;
  c.extra += "Retry-After: 1\r\n";
  answer_text(c, 503, many ? "Service Unavailable: too many requests in flight to the board"
                           : "Service Unavailable: the board is not taking what was sent to it");
  return true;
}

namespace {

// What the gateway's own server answers a 2026-07-28 request: the one answer, and whether it
// refuses the request before serving it (mcp::OutMessage::refused).
struct Verdict {
  StringSink text;
  bool answered = false;
  bool refused = false;
};

emcp::json::Sink* verdict_open(void* ctx, const emcp::mcp::OutMessage& m) {
  Verdict& v = *static_cast<Verdict*>(ctx);
  if (m.kind != emcp::mcp::OutMessage::Kind::kResponse || v.answered) return nullptr;
  v.answered = true;
  v.refused = m.refused;
  return &v.text;
}

emcp::Status verdict_close(void*) { return emcp::Status::kOk; }

}  // namespace

// The checks the engine makes before it serves a 2026-07-28 request, which the board cannot
// make (it sees no headers) or makes otherwise (without headers, a request lacking `_meta` is
// the UART session's): the core's own, run on the gateway's server, whose tables are empty, so
// that nothing is served there. Its refusal (`_meta` -32602, headers -32020, revision -32022)
// is answered here as the engine answers it (400); anything else goes to the board.
bool Gateway::refused_here(Conn& c, const jsonrpc::Decoded& d) {
  const http::Request& r = c.parser.request();
  emcp::mcp::RequestHeaders h;
  h.protocol_version = {r.protocol_version.view(), r.protocol_version.present};
  h.method = {r.mcp_method.view(), r.mcp_method.present};
  h.name = {r.mcp_name.view(), r.mcp_name.present};
  h.params = r.mcp_params.view();
  h.check = &emcp::mcp::Server::check_headers;
  Verdict v;
  {
    emcp::mcp::Session s(emcp::mcp::Channel{&verdict_open, &verdict_close, &v, nullptr});
    local_.handle(s, d, &h);
  }  // detached: whatever it left pending there is dropped
  if (!v.refused) return false;
  answer(c, 400, v.text.take(), "application/json");
  return true;
}

void Gateway::post_stateless(Conn& c, const jsonrpc::Decoded& d) {
  const jsonrpc::Message& m = *d.first;
  if (d.batch)
    return answer_rpc(c, 400, -32600,
                      "Invalid Request: a POST carries one message at protocol revision 2026-07-28, not a batch");
  switch (m.kind) {
    case jsonrpc::Kind::kInvalid: {
      jsonrpc::Message inv = m;
      if (inv.id.type == jsonrpc::Id::Type::kNull) inv.id = jsonrpc::Id{};
      return answer(c, 400, invalid_json(inv), "application/json");
    }
    case jsonrpc::Kind::kResponse:
    case jsonrpc::Kind::kErrorResponse:
      return answer_rpc(c, 400, -32600, "Invalid Request: a client sends no responses at protocol revision 2026-07-28");
    case jsonrpc::Kind::kNotification:
      return answer_text(c, 202, nullptr);  // none is defined over HTTP at this revision (not forwarded)
    case jsonrpc::Kind::kRequest:
      break;
  }
  if (board_modern_ == Modern::kNo) return answer_text(c, 400, "Bad Request: unsupported MCP-Protocol-Version");
  if (refused_here(c, d)) return;
  if (refuse_busy(c, 1)) return;
  forward(c, m, false, false, false);
}

// A client's notifications/cancelled: forwarded (under the wire id) only for one of its own
// requests in flight (the session's, or this connection's 2026-07-28 one); that request's
// answer is then not awaited. Anything else is dropped: a client cannot cancel another's.
bool Gateway::cancel_for(Conn& c, const jsonrpc::Message& m, bool session) {
  const emcp::json::Value rid = m.params["requestId"];
  jsonrpc::Id id;
  if (rid.is_int()) id = jsonrpc::Id::of(rid.as_int().value());
  else if (rid.is_string()) id = jsonrpc::Id::of(rid.as_string().value());
  const std::string want = id_json(id);
  if (want.empty()) return false;
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    const Pending& pd = it->second;
    if (pd.orig_id != want) continue;
    if (session ? !pd.session : (pd.session || pd.conn >= conns_.size() || conns_[pd.conn].get() != &c)) continue;
    const std::string wire = it->first;
    const size_t conn = pd.conn;
    const bool live = conn_live(pd);
    const uint32_t stream = pd.stream;
    pending_.erase(it);
    const emcp::Result<StrView> reason = m.params["reason"].as_string();
    link_->send(cancel_line(wire, reason.ok() ? &reason.value() : nullptr));
    if (stream != 0) {
      // A resumable stream's: no answer will come for it (gateway_streams.cpp).
      stream_request_gone(stream, &c);
    } else if (live) {
      Conn& o = *conns_[conn];
      if (o.awaiting > 0) --o.awaiting;
      // The POST being handled ends after its last message (post_session()).
      if (&o != &c && o.awaiting == 0 && o.st == Conn::St::kWaiting) end_response(o);
    }
    return true;
  }
  log("dropped a notifications/cancelled for no request of the client's own in flight");
  return false;
}

void Gateway::post_session(Conn& c, const jsonrpc::Decoded& d) {
  const jsonrpc::Message& first = *d.first;
  if (!c.session_req) {
    if (d.batch || first.kind != jsonrpc::Kind::kRequest || first.method != "initialize") {
      if (!d.batch && first.kind == jsonrpc::Kind::kInvalid) return answer(c, 400, invalid_json(first), "application/json");
      return answer_rpc(c, 400, -32000, "Bad Request: Mcp-Session-Id header required (initialize first)");
    }
    if (o_.session_takeover && session_ == SessionState::kOpen && !session_busy()) {
      // --session-takeover: the idle session ends (its client's next request gets 404 and, as
      // Streamable HTTP has it, that client initializes again) and this one opens.
      end_session("taken over by a new initialize (--session-takeover)", "");
    }
    if (session_ != SessionState::kNone) {
      // The board has one UART session, and it is taken.
      c.extra = "Retry-After: " + std::to_string(retry_after_s()) + "\r\n";
      return answer_text(c, 503,
                         "Service Unavailable: the board's one session is in use by another client; retry later");
    }
    if (refuse_busy(c, 1)) return;
    session_ = SessionState::kOpening;
    reset_due_ = false;  // this initialize starts the board's session afresh
    c.session_req = true;
    return forward(c, first, true, true, true);
  }
  session_last_ = emcp::posix::now_ms();
  c.extra = session_header();
  // The engine's answers where the server refuses what the session sent before serving it
  // (core/src/mcp/dispatch.cpp): an unknown id left out from 2025-11-25 on (answer_id()).
  const bool omit_null = emcp::mcp::supports(session_version_, emcp::mcp::Feature::kOmitUnknownId);
  if (!d.batch && first.kind == jsonrpc::Kind::kInvalid) {
    jsonrpc::Message inv = first;
    if (omit_null && inv.id.type == jsonrpc::Id::Type::kNull) inv.id = jsonrpc::Id{};
    return answer(c, 400, invalid_json(inv), "application/json");
  }
  if (d.batch && !emcp::mcp::supports(session_version_, emcp::mcp::Feature::kBatches))
    return answer_rpc(c, 400, -32600,
                      std::string("Invalid Request: JSON-RPC batches are not part of protocol revision ") +
                          emcp::mcp::version_str(session_version_),
                      omit_null ? "" : "null");
  size_t requests = 0;
  for (const jsonrpc::Message* m = d.first; m != nullptr; m = m->next) requests += m->kind == jsonrpc::Kind::kRequest;
  if (refuse_busy(c, requests)) return;
  c.batch = d.batch;
  std::vector<std::string> local;  // answers of the gateway's own (a batch's invalid elements)
  for (const jsonrpc::Message* mp = d.first; mp != nullptr; mp = mp->next) {
    const jsonrpc::Message& m = *mp;
    switch (m.kind) {
      case jsonrpc::Kind::kInvalid:
        local.push_back(invalid_json(m));  // never forwarded
        break;
      case jsonrpc::Kind::kRequest:
        // As the engine (dispatch.cpp): initialize alone, never in a batch; not forwarded.
        if (d.batch && m.method == "initialize")
          local.push_back(rpc_error(id_json(m.id), -32600, "Invalid Request: initialize must not be part of a batch"));
        else
          forward(c, m, true, m.method == "initialize", false);
        break;
      case jsonrpc::Kind::kNotification:
        if (m.method == "notifications/cancelled") (void)cancel_for(c, m, true);
        else link_->send(message_line(m, "", ""));
        break;
      case jsonrpc::Kind::kResponse:
      case jsonrpc::Kind::kErrorResponse: {
        // Only an answer to one of the board's requests to this client reaches the board.
        const std::string id = id_json(m.id);
        bool known = false;
        for (size_t i = 0; i < board_reqs_.size() && !known; ++i)
          if (board_reqs_[i] == id) {
            board_reqs_.erase(board_reqs_.begin() + static_cast<long>(i));
            known = true;
          }
        if (known) link_->send(response_line(m));
        else log("dropped a client's response to no request of the board's: id " + (id.empty() ? "null" : id));
        break;
      }
    }
  }
  if (c.st != Conn::St::kWaiting) return;
  // From 2025-11-25 on a POST with requests is an event stream from its first byte, the priming
  // event first (gateway_streams.cpp): whatever the connection's fate, its answers are kept for
  // the client's GET with Last-Event-ID. (The engine answers JSON when the answer comes first;
  // the gateway cannot know that it will, and a board's answer can take seconds.)
  if (c.awaiting > 0 && !c.head_sent && resumable(c)) {
    start_sse(c);
    open_stream(c);
  }
  if (!local.empty()) {
    if (!c.head_sent) start_sse(c);
    for (const std::string& l : local) event(c, l);
  }
  if (c.awaiting == 0) {
    if (requests == 0 && local.empty()) answer_text(c, 202, nullptr);
    else end_response(c);
  }
}

// A request to the board under a wire id (and its progressToken under the same).
void Gateway::forward(Conn& c, const jsonrpc::Message& m, bool session, bool initialize, bool opening) {
  const std::string wire = "\"" + wire_prefix_ + std::to_string(++next_id_) + "\"";
  Pending pd;
  pd.session = session;
  pd.initialize = initialize;
  pd.opening = opening;
  pd.seq = next_id_;
  pd.serial = c.serial;
  pd.gen = c.gen;
  pd.deadline = emcp::posix::now_ms() + o_.request_timeout_ms;
  pd.conn = slot_of(c);
  pd.orig_id = id_json(m.id);
  const emcp::json::Value token = m.params["_meta"]["progressToken"];
  if (token.exists()) pd.orig_token = value_json(token);
  pending_[wire] = pd;
  ++c.awaiting;
  link_->send(message_line(m, wire, token.exists() ? wire : std::string()));
}

}  // namespace gateway
}  // namespace bridge
