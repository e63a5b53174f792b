// Logging: level names, logging/setLevel, notifications/message to a session or to all.
#include "server_internal.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr const char* kLevelNames[] = {"debug", "info",     "notice", "warning",
                                       "error", "critical", "alert",  "emergency"};

}  // namespace

const char* log_level_str(LogLevel l) { return kLevelNames[static_cast<uint8_t>(l)]; }

bool parse_log_level(StrView s, LogLevel* out) {
  for (uint8_t i = 0; i < 8; ++i) {
    if (s == StrView(kLevelNames[i])) {
      *out = static_cast<LogLevel>(i);
      return true;
    }
  }
  return false;
}

Status ServerCode::send_log(Server& sv, Session& s, const Peer& p, LogLevel level, StrView message,
                        StrView logger, const Id& related) {
  if (!p.wants_log(level)) return Status::kOk;
  if (sv.must_hold(s)) {
    // A modern request's log belongs on its own stream, before its answer: too late now.
    if (!EMCP_LEGACY_ERA || p.modern()) return sv.drop_notification();
    return sv.hold(s, [](Server& server, Session& s2, const HeldHead& h) {
      if (s2.initialized()) (void)send_log(server, s2, s2.peer_, h.level, h.b(), h.a(), Id{});
    }, level, logger, message);
  }
  Outbound out(s, OutMessage{OutMessage::Kind::kNotification, related, false});
  if (!open_or_count(out, sv.notifications_dropped_)) return Status::kInvalidState;
  json::Writer& w = out.w();
  jsonrpc::begin_notification(w, "notifications/message");
  w.begin_object();
  w.member_str("level", log_level_str(level));
  if (!logger.empty()) w.member_str("logger", logger);
  w.member_str("data", message);
  w.end_object();
  jsonrpc::end_message(w);
  return out.close();
}

void Server::log(LogLevel level, StrView message, StrView logger) {
  if (!EMCP_LEGACY_ERA) return;  // 2026-07-28: logs go only with the request that asked (ToolCall::log)
  for (Session* s = sessions_; s != nullptr; s = s->next_)
    if (s->initialized()) (void)ServerCode::send_log(*this, *s, s->peer_, level, message, logger, s == current_session_ ? current_ : Id{});
}

void ServerCode::on_set_level(Session& s, const Message& m, Reply& r) {
  LogLevel level;
  const Result<StrView> name = m.params["level"].as_string();
  if (!name.ok() || !parse_log_level(name.value(), &level)) {
    r.reject(ErrorCode::kInvalidParams,
            {"level must be one of debug, info, notice, warning, error, "
             "critical, alert, emergency"});
    return;
  }
  s.peer_.log_level = level;
  json::Writer& w = r.result_object();
  w.end_object();
  r.end();
}

}  // namespace mcp
EMCP_NS_END
