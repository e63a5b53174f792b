// tools/bridge/gateway_session.cpp - the HTTP gateway's one session (gateway.h), for revisions
// 2024-11-05 .. 2025-11-25: the board has one UART session, so the gateway has one HTTP session.
//
// initialize without Mcp-Session-Id opens it (gateway_routes.cpp sends it on); when the board
// answers it, the gateway mints a random id (the posix port's getrandom(), 128 bits, hex) and
// returns it on the initialize answer (and every answer of the session). A second initialize
// while the session is live (or opening): 503 with Retry-After (retry_after_s()). DELETE /mcp
// ends it; so does --session-idle-ms without requests or a GET stream (default 30 min); so does
// a board reset (gateway_board.cpp). The gateway then starts the board's UART session afresh
// with an initialize of its own (core/src/mcp/session.cpp: deferred calls cancelled,
// subscriptions and log level reset). An initialize inside the session is forwarded; the
// session id stays (as the engine).
#include "emcp/posix/platform.h"
#include "gateway.h"

namespace bridge {
namespace gateway {

using emcp::StrView;

bool random_hex(char* out, size_t bytes) {
  unsigned char b[32];
  if (bytes > sizeof b || !emcp::posix::random_bytes(b, bytes)) return false;
  for (size_t i = 0; i < bytes; ++i) {
    out[2 * i] = "0123456789abcdef"[b[i] >> 4];
    out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
  }
  out[2 * bytes] = 0;
  return true;
}

// The board answered an initialize: the one that opens the session mints its id; one inside
// the session starts the board's session afresh and keeps the id (as the engine).
void Gateway::initialize_answered(const Pending& pd, const emcp::jsonrpc::Message& m) {
  const emcp::Result<StrView> v = m.result["protocolVersion"].as_string();
  if (!v.ok()) {
    if (pd.opening && session_ == SessionState::kOpening) session_ = SessionState::kNone;
    return;
  }
  if (!emcp::mcp::parse_version(v.value(), &session_version_)) session_version_ = emcp::mcp::kLatestVersion;
  const std::string vs(v.value().data(), v.value().size());
  if (pd.opening && session_ == SessionState::kOpening) {
    if (!random_hex(session_id_, 16)) {
      log("no random bytes for a session id");
      session_ = SessionState::kNone;
      return;
    }
    session_ = SessionState::kOpen;
    ++session_gen_;
    session_last_ = emcp::posix::now_ms();
    log("session opened (" + vs + ")");
    if (conn_live(pd)) conns_[pd.conn]->extra = session_header();
  } else if (!pd.opening) {
    log("session initialized again (" + vs + ")");
    board_reqs_.clear();
  }
}

void Gateway::end_session(const char* why, const std::string& message) {
  if (session_ != SessionState::kNone) {
    log(std::string("session ended (") + why + ")");
    reset_due_ = true;  // the board's UART session still has its state (reset_board_session())
  }
  fail_pending(true, message);
  forget_streams();
  session_ = SessionState::kNone;
  session_id_[0] = 0;
  board_reqs_.clear();
  if (get_conn_ >= 0 && conns_[static_cast<size_t>(get_conn_)] &&
      conns_[static_cast<size_t>(get_conn_)]->serial == get_serial_) {
    Conn& g = *conns_[static_cast<size_t>(get_conn_)];
    g.st = Conn::St::kWaiting;
    end_response(g);
  }
  get_conn_ = -1;
}

// The session: busy while a request or its GET stream is open; otherwise it expires after
// --session-idle-ms. Judged by the loop (tick()) and again when a request's head comes
// (on_head()), before the request is routed: a request that comes after the idle time never
// finds the session alive because the loop had not looked yet (a gateway the host did not
// run for a while), and a second initialize then finds the board free.
bool Gateway::session_busy() const {
  bool busy = get_conn_ >= 0;
  for (const auto& kv : pending_) busy = busy || kv.second.session;
  return busy;
}

void Gateway::expire_idle_session(uint64_t now) {
  if (session_ != SessionState::kOpen) return;
  const bool busy = session_busy();
  if (busy) session_last_ = now;
  else if (now - session_last_ > o_.session_idle_ms) end_session("idle for --session-idle-ms", "");
}

// The board's UART session after the HTTP session ended: started afresh (its subscriptions,
// log level and deferred calls gone: core/src/mcp/session.cpp, on_initialize) by an initialize
// of the gateway's own, whose answer is dropped - once no 2026-07-28 request is in flight (a
// repeated initialize cancels the deferred calls on the UART session, theirs too). tick() calls
// it when due.
void Gateway::reset_board_session() {
  reset_due_ = false;
  const std::string n = std::to_string(++board_resets_sent_);
  link_->send(std::string("{\"jsonrpc\":\"2.0\",\"id\":\"") + kResetId + n +
             "\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"emcp-bridge-gateway\",\"version\":\"1\"}}}");
  link_->send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  log("the board's session started afresh");
}

// A second initialize's Retry-After: the seconds until the live session's idle expiry (a
// session kept busy by a request or a GET stream: 10), at least 1, at most kMaxRetryAfterS.
uint32_t Gateway::retry_after_s() const {
  const uint64_t now = emcp::posix::now_ms();
  const bool busy = session_busy() || session_ == SessionState::kOpening;
  uint64_t left = o_.session_idle_ms;
  if (busy) left = 10000;
  else if (now - session_last_ < o_.session_idle_ms) left = o_.session_idle_ms - (now - session_last_);
  uint64_t s = (left + 999) / 1000;
  if (s > kMaxRetryAfterS) s = kMaxRetryAfterS;
  return static_cast<uint32_t>(s < 1 ? 1 : s);
}

}  // namespace gateway
}  // namespace bridge
