// tools/bridge/gateway_board.cpp - the board's side of the HTTP gateway (gateway.h): what the
// board sends, back to the request it belongs to (board_link.h reads its lines, pings it and
// notices its resets).
//
// - An answer carries the wire id its request was forwarded under (gateway_routes.cpp): the
//   client's own id goes back in its place, on that request's response. An error with a null id
//   (a line the board could not read) goes to the one request in flight when exactly one is.
// - notifications/progress carries the wire progressToken: mapped back likewise; progress for a
//   request already answered is dropped.
// - What the board sends on its own (the UART carries no request id with it): route_unrelated().
// - Board reset (its banner again, or the connection lost and back): every request in flight is
//   answered with -32603 on its stream, and the session ends (its GET stream too): the next
//   request naming it gets 404 and the client initializes again (the spec's rule for 404). The
//   stdio mode initializes on the client's behalf instead; an HTTP client has a defined way to
//   start over, and one the gateway cannot see (a new client) must not inherit the old state.
//   After a reset the gateway asks the board again which revisions it speaks (server/discover).
// - Lost input (the board's inputLost error), and a request the board leaves unanswered for
//   --request-timeout-ms: -32603, and notifications/cancelled to the board.
#include "emcp/posix/platform.h"
#include "gateway.h"

namespace bridge {
namespace gateway {

namespace jsonrpc = emcp::jsonrpc;
using emcp::StrView;

namespace {

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Messages the board sends only for the session (its subscriptions and lists): never to a
// 2026-07-28 request's stream.
bool session_only(StrView method) {
  return method == StrView("notifications/resources/updated") || method == StrView("notifications/resources/list_changed") ||
         method == StrView("notifications/tools/list_changed") || method == StrView("notifications/prompts/list_changed") ||
         method == StrView("notifications/roots/list_changed");
}

}  // namespace

void Gateway::on_board_line(const std::string& line) {
  if (posting_) {  // from within a link's send(): after the POST (on_post())
    held_lines_.push_back(line);
    return;
  }
  decoder_.begin();
  decoder_.feed(line.data(), line.size());
  const jsonrpc::Decoded& d = decoder_.finish();
  if (d.first == nullptr || d.batch) {
    log("dropped from the board (not one message): " + line.substr(0, 200));
    return;
  }
  const jsonrpc::Message& m = *d.first;
  const bool response = m.kind == jsonrpc::Kind::kResponse || m.kind == jsonrpc::Kind::kErrorResponse ||
                        (m.kind == jsonrpc::Kind::kInvalid && m.id.present());
  if (response) {
    const std::string id = id_json(m.id);
    if (starts_with(id, std::string("\"") + kDiscoverId)) {
      bool yes = false;
      for (const emcp::json::Value v : m.result["supportedVersions"].elements())
        yes = yes || (v.as_string().ok() && v.as_string().value() == StrView(kModern));
      board_modern_ = yes ? Modern::kYes : Modern::kNo;
      log(std::string("the board ") + (yes ? "speaks" : "does not speak") + " MCP 2026-07-28");
      return;
    }
    if (starts_with(id, std::string("\"") + kResetId)) return;  // the gateway's own session reset
    auto it = pending_.find(id);
    if (id.empty() && pending_.size() == 1) {
      // An error with a null id (a line the board could not read: torn, or its id damaged)
      // while exactly one request is in flight on the link: it can only be that one's.
      it = pending_.begin();
      log("an error with a null id from the board, attributed to the one request in flight");
    }
    if (it == pending_.end()) {
      log("dropped an answer nobody waits for: " + line.substr(0, 200));
      return;
    }
    const Pending pd = it->second;
    pending_.erase(it);
    std::string out = line;
    size_t b, e;  // the board's own writer: "id" is a plain key
    if (member(out, 0, "id", &b, &e)) out = replaced(out, b, e, pd.orig_id);
    const int code = m.kind == jsonrpc::Kind::kErrorResponse ? static_cast<int>(m.error.code) : 0;
    if (pd.initialize) initialize_answered(pd, m);
    to_request(pd, out, true, code);
    return;
  }
  if (m.kind == jsonrpc::Kind::kNotification && m.method == "notifications/progress") {
    const std::string token = value_json(m.params["progressToken"]);
    size_t b, e;
    auto it = pending_.find(token);
    if (it == pending_.end() || !path(line, {"params", "progressToken"}, &b, &e)) {
      // Its request was answered (or is not one of this gateway's): the token means nothing
      // to any client.
      log("dropped progress for no request in flight: " + line.substr(0, 200));
      return;
    }
    if (!it->second.orig_token.empty()) to_request(it->second, replaced(line, b, e, it->second.orig_token), false, 0);
    return;
  }
  if (m.kind != jsonrpc::Kind::kRequest && m.kind != jsonrpc::Kind::kNotification) {
    log("dropped from the board (not JSON-RPC): " + line.substr(0, 200));
    return;
  }
  route_unrelated(line, m);
}

// What the board sends on its own (the UART carries no request id with it), by what it says:
//  - the session's own (resource updates, list changes): the session's oldest request's
//    stream, else its GET stream; never a 2026-07-28 stream; nothing before the answer to the
//    initialize that opens the session (dropped, logged);
//  - a request to the client (sampling, elicitation, roots): the session's, as above, unless a
//    2026-07-28 request is in flight (it may be that one's, and its client cannot answer):
//    then, and with no session stream, answered -32603 at once;
//  - anything else (a log line): the one request in flight when there is exactly one; else the
//    session's when only its requests are in flight, or none is (its GET stream); else dropped.
// Ambiguous: dropped (logged) rather than sent to a client it may not be for.
void Gateway::route_unrelated(const std::string& line, const jsonrpc::Message& m) {
  const Pending* oldest_session = nullptr;   // ... whose response a connection carries now
  const Pending* oldest_detached = nullptr;  // ... whose resumable stream waits for the client's GET
  const Pending* only_modern = nullptr;
  size_t session_n = 0, modern_n = 0;
  for (const auto& kv : pending_) {
    if (kv.second.session) {
      ++session_n;
      const Pending*& pick = carried(kv.second) ? oldest_session : oldest_detached;
      if ((carried(kv.second) || kv.second.stream != 0) && (pick == nullptr || kv.second.seq < pick->seq)) pick = &kv.second;
    } else {
      ++modern_n;
      only_modern = &kv.second;
    }
  }
  Conn* get = nullptr;
  if (session_ == SessionState::kOpen && get_conn_ >= 0 && conns_[static_cast<size_t>(get_conn_)] &&
      conns_[static_cast<size_t>(get_conn_)]->serial == get_serial_)
    get = conns_[static_cast<size_t>(get_conn_)].get();
  auto to_session = [&]() -> bool {
    // Not while the initialize that opens a session is on its way: whatever the board sends
    // before that answer is the old session's or the gateway's reset's, never the new client's
    // (and on that POST it would start the stream before the session's id is minted).
    if (session_ != SessionState::kOpen) return false;
    if (oldest_session != nullptr) {
      to_request(*oldest_session, line, false, 0);
      return true;
    }
    if (get != nullptr) {
      event(*get, line);
      flush(*get);
      return true;
    }
    if (oldest_detached != nullptr) {  // kept, for when its client resumes the stream
      to_request(*oldest_detached, line, false, 0);
      return true;
    }
    return false;
  };
  const bool request = m.kind == jsonrpc::Kind::kRequest;
  bool sent = false;
  if (session_only(m.method)) {
    sent = to_session();
  } else if (request) {
    sent = modern_n == 0 && to_session();
  } else if (session_n + modern_n == 1 && modern_n == 1) {
    to_request(*only_modern, line, false, 0);
    sent = true;
  } else if (modern_n == 0) {
    sent = to_session();
  }
  if (sent) {
    if (request) {
      board_reqs_.push_back(id_json(m.id));
      if (board_reqs_.size() > kMaxBoardRequests) board_reqs_.erase(board_reqs_.begin());
    }
    return;
  }
  if (request) {
    log("the board asked the client (" + std::string(m.method.data(), m.method.size()) +
        ") with no stream that is surely its client's: answered -32603");
    link_->send(rpc_error(id_json(m.id), -32603, "No client stream is open to carry this request (emcp-bridge --http)"));
    return;
  }
  log("dropped (no stream surely for it): " + line.substr(0, 200));
}

// Every request in flight (`session_only`: the session's) answered with -32603 `message`.
void Gateway::fail_pending(bool session_only_requests, const std::string& message) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (session_only_requests && !it->second.session) {
      ++it;
      continue;
    }
    const Pending pd = it->second;
    it = pending_.erase(it);
    if (pd.opening && session_ == SessionState::kOpening) session_ = SessionState::kNone;
    to_request(pd, rpc_error(pd.orig_id, -32603, message), true, -32603);
  }
}

void Gateway::cancel_on_board(const std::string& wire, const char* reason) {
  const StrView why(reason);
  link_->send(cancel_line(wire, &why));
}

void Gateway::on_board_reset(const char* why) {
  const std::string message = "The board reset; this request was lost. Send it again.";
  fail_pending(false, message);
  end_session(why, message);
  reset_due_ = false;  // a new firmware has no old session
  board_modern_ = Modern::kUnknown;
}

// The board lost input: the requests that were on the way fail now, and are cancelled in case
// one reached it after all (its answer, if it comes, finds nobody waiting).
void Gateway::on_board_lost_input(const std::vector<std::string>& ids) {
  for (const std::string& wire : ids) {
    auto it = pending_.find(wire);
    if (it == pending_.end()) continue;
    const Pending pd = it->second;
    pending_.erase(it);
    cancel_on_board(wire, "the board lost input");
    if (pd.opening && session_ == SessionState::kOpening) session_ = SessionState::kNone;
    to_request(pd,
               rpc_error(pd.orig_id, -32603,
                         "The board lost input on its UART (its receive buffer overflowed); this request may not have "
                         "reached it. Send it again."),
               true, -32603);
  }
}

void Gateway::on_board_ready() {
  link_->send(std::string("{\"jsonrpc\":\"2.0\",\"id\":\"") + kDiscoverId + std::to_string(++discovers_) +
             "\",\"method\":\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" +
             kModern + "\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
}

// Requests the board has not answered within --request-timeout-ms: -32603, and cancelled.
void Gateway::expire_requests(uint64_t now) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now < it->second.deadline) {
      ++it;
      continue;
    }
    const Pending pd = it->second;
    const std::string wire = it->first;
    it = pending_.erase(it);
    log("no answer from the board within --request-timeout-ms: " + wire + " failed and cancelled");
    if (link_->ready()) cancel_on_board(wire, "no answer within the gateway's --request-timeout-ms");
    if (pd.opening && session_ == SessionState::kOpening) session_ = SessionState::kNone;
    to_request(pd,
               rpc_error(pd.orig_id, -32603,
                         "The board did not answer within " + std::to_string(o_.request_timeout_ms) + " ms (--request-timeout-ms)"),
               true, -32603);
  }
}

}  // namespace gateway
}  // namespace bridge
