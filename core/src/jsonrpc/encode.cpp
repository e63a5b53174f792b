#include "emcp/jsonrpc/encode.h"

#include "emcp/json/number.h"

EMCP_NS_BEGIN
namespace jsonrpc {

void write_id(json::Writer& w, const Id& id) {
  switch (id.type) {
    case Id::Type::kInt: w.int64(id.num); break;
    case Id::Type::kString: w.string(id.str); break;
    default: w.null(); break;
  }
}

void write_id_member(json::Writer& w, const Id& id) {
  if (id.type == Id::Type::kNone) return;
  w.key("id");
  write_id(w, id);
}

namespace {
void envelope(json::Writer& w) {
  w.begin_object();
  w.member_str("jsonrpc", "2.0");
}

void error_head(json::Writer& w, const Id& id, ErrorCode code) {
  envelope(w);
  write_id_member(w, id);
  w.key("error");
  w.begin_object();
  w.member_int("code", static_cast<int64_t>(code));
}
}  // namespace

void begin_response(json::Writer& w, const Id& id) {
  envelope(w);
  write_id_member(w, id);
  w.key("result");
}

void begin_request(json::Writer& w, const Id& id, StrView method) {
  envelope(w);
  w.key("id");
  write_id(w, id);
  w.member_str("method", method);
  w.key("params");
}

void begin_notification(json::Writer& w, StrView method) {
  envelope(w);
  w.member_str("method", method);
  w.key("params");
}

void write_notification(json::Writer& w, StrView method) {
  envelope(w);
  w.member_str("method", method);
  w.end_object();
}

void end_message(json::Writer& w) { w.end_object(); }

void write_error(json::Writer& w, const Id& id, ErrorCode code, StrView message) {
  write_error_with_raw_data(w, id, code, message, StrView());
}

void write_error_with_raw_data(json::Writer& w, const Id& id, ErrorCode code, StrView message, StrView data) {
  error_head(w, id, code);
  w.member_str("message", message.empty() ? StrView(error_code_message(code)) : message);
  if (!data.empty()) {
    w.key("data");
    w.raw(data);
  }
  w.end_object();
  w.end_object();
}

void begin_error_message(json::Writer& w, const Id& id, ErrorCode code, bool standard) {
  error_head(w, id, code);
  w.key("message");
  w.string_begin();
  if (standard) w.string_part(error_code_message(code));
}

void begin_error_with_data(json::Writer& w, const Id& id, ErrorCode code, StrView message) {
  error_head(w, id, code);
  w.member_str("message", message.empty() ? StrView(error_code_message(code)) : message);
  w.key("data");
}

void end_error(json::Writer& w) {
  w.end_object();
  w.end_object();
}

void write_invalid(json::Writer& w, const Message& m) {
  // "Invalid Request" / "Parse error", then ": <reason>", ": <cause>", " at byte <n>".
  begin_error_message(w, m.id, m.invalid_code, true);
  const StrView reason(m.reason);
  if (!reason.empty()) {
    w.string_part(": ");
    w.string_part(reason);
  }
#if EMCP_ERROR_STRINGS
  if (m.cause != Status::kOk) {
    w.string_part(": ");
    w.string_part(status_str(m.cause));
  }
  if (m.offset >= 0) {
    char num[24];
    w.string_part(" at byte ");
    w.string_part(StrView(num, json::format_int64(m.offset, num)));
  }
#endif
  w.string_end();
  w.end_object();
  w.end_object();
}

}  // namespace jsonrpc
EMCP_NS_END
