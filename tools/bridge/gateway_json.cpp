// tools/bridge/gateway_json.cpp - JSON text for the HTTP gateway (gateway_json.h): spans of
// values in a board line, and messages written with the core's writer.
#include "gateway_json.h"

#include "emcp/jsonrpc/encode.h"

namespace bridge {
namespace gateway {

namespace {

using emcp::StrView;
namespace jsonrpc = emcp::jsonrpc;

size_t skip_ws(const std::string& s, size_t i) {
  while (i < s.size() && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r' || s[i] == '\n')) ++i;
  return i;
}

// The end of the value starting at i (npos when malformed).
size_t skip_value(const std::string& s, size_t i) {
  if (i >= s.size()) return std::string::npos;
  if (s[i] == '"') {
    for (++i; i < s.size(); ++i) {
      if (s[i] == '\\') ++i;
      else if (s[i] == '"') return i + 1;
    }
    return std::string::npos;
  }
  if (s[i] == '{' || s[i] == '[') {
    int depth = 0;
    for (; i < s.size(); ++i) {
      const char c = s[i];
      if (c == '"') {
        const size_t e = skip_value(s, i);
        if (e == std::string::npos) return e;
        i = e - 1;
      } else if (c == '{' || c == '[') {
        ++depth;
      } else if (c == '}' || c == ']') {
        if (--depth == 0) return i + 1;
      }
    }
    return std::string::npos;
  }
  while (i < s.size() && s[i] != ',' && s[i] != '}' && s[i] != ']' && s[i] != ' ' && s[i] != '\t' && s[i] != '\r' &&
         s[i] != '\n')
    ++i;
  return i;
}

// `params` as JSON, its `_meta.progressToken` replaced by the JSON text `token` (when not "").
void write_params(emcp::json::Writer& w, emcp::json::Value params, const std::string& token) {
  if (!params.is_object() || token.empty()) return emcp::json::write_value(w, params);
  w.begin_object();
  for (const emcp::json::Value m : params.members()) {
    w.key(m.key());
    if (m.key() != StrView("_meta") || !m.is_object()) {
      emcp::json::write_value(w, m);
      continue;
    }
    w.begin_object();
    for (const emcp::json::Value x : m.members()) {
      w.key(x.key());
      if (x.key() == StrView("progressToken")) w.raw(StrView(token.data(), token.size()));
      else emcp::json::write_value(w, x);
    }
    w.end_object();
  }
  w.end_object();
}

// {"jsonrpc":"2.0" and the id (JSON text; "": none), the object left open.
void open_message(emcp::json::Writer& w, const std::string& id) {
  w.begin_object();
  w.member_str("jsonrpc", "2.0");
  if (!id.empty()) {
    w.key("id");
    w.raw(StrView(id.data(), id.size()));
  }
}

}  // namespace

// ---- Spans ------------------------------------------------------------------------------------

bool member(const std::string& s, size_t obj, const char* key, size_t* vb, size_t* ve) {
  size_t i = skip_ws(s, obj);
  if (i >= s.size() || s[i] != '{') return false;
  i = skip_ws(s, i + 1);
  const std::string quoted = std::string("\"") + key + "\"";
  while (i < s.size() && s[i] == '"') {
    const size_t ke = skip_value(s, i);
    if (ke == std::string::npos) return false;
    const bool match = s.compare(i, ke - i, quoted) == 0;
    i = skip_ws(s, ke);
    if (i >= s.size() || s[i] != ':') return false;
    i = skip_ws(s, i + 1);
    const size_t e = skip_value(s, i);
    if (e == std::string::npos) return false;
    if (match) {
      *vb = i;
      *ve = e;
      return true;
    }
    i = skip_ws(s, e);
    if (i < s.size() && s[i] == ',') i = skip_ws(s, i + 1);
  }
  return false;
}

bool path(const std::string& s, std::initializer_list<const char*> keys, size_t* vb, size_t* ve) {
  size_t at = 0;
  for (const char* k : keys) {
    if (!member(s, at, k, vb, ve)) return false;
    at = *vb;
  }
  return true;
}

std::string replaced(const std::string& s, size_t b, size_t e, const std::string& with) {
  return s.substr(0, b) + with + s.substr(e);
}

// ---- Written ----------------------------------------------------------------------------------

std::string StringSink::take() {
  (void)Sink::flush();
  std::string r;
  r.swap(text_);
  return r;
}

emcp::Status StringSink::drain_to_text(Sink& s) {
  StringSink& me = static_cast<StringSink&>(s);
  me.text_.append(me.storage_, me.len_);
  me.len_ = 0;
  return emcp::Status::kOk;
}

std::string written(void (*write)(emcp::json::Writer&, const void*), const void* arg) {
  StringSink s;
  emcp::json::Writer w(s);
  write(w, arg);
  return s.take();
}

std::string rpc_error(const std::string& id, int code, const std::string& message) {
  return written([&](emcp::json::Writer& w) {
    open_message(w, id);
    w.key("error");
    w.begin_object();
    w.member_int("code", code);
    w.member_str("message", StrView(message.data(), message.size()));
    w.end_object();
    w.end_object();
  });
}

std::string id_json(const jsonrpc::Id& id) {
  if (id.type == jsonrpc::Id::Type::kInt) return std::to_string(id.num);
  if (id.type == jsonrpc::Id::Type::kString) return written([&](emcp::json::Writer& w) { w.string(id.str); });
  return "";
}

std::string value_json(emcp::json::Value v) {
  return written([&](emcp::json::Writer& w) { emcp::json::write_value(w, v); });
}

std::string message_line(const jsonrpc::Message& m, const std::string& id, const std::string& token) {
  return written([&](emcp::json::Writer& w) {
    open_message(w, id);
    w.member_str("method", m.method);
    if (m.params.exists()) {
      w.key("params");
      write_params(w, m.params, token);
    }
    w.end_object();
  });
}

std::string response_line(const jsonrpc::Message& m) {
  return written([&](emcp::json::Writer& w) {
    open_message(w, id_json(m.id));
    if (m.kind == jsonrpc::Kind::kResponse) {
      w.key("result");
      emcp::json::write_value(w, m.result);
    } else {
      w.key("error");
      w.begin_object();
      w.member_int("code", m.error.code);
      w.member_str("message", m.error.message);
      if (m.error.data.exists()) {
        w.key("data");
        emcp::json::write_value(w, m.error.data);
      }
      w.end_object();
    }
    w.end_object();
  });
}

std::string cancel_line(const std::string& wire, const StrView* reason) {
  return written([&](emcp::json::Writer& w) {
    w.begin_object();
    w.member_str("jsonrpc", "2.0");
    w.member_str("method", "notifications/cancelled");
    w.key("params");
    w.begin_object();
    w.key("requestId");
    w.raw(StrView(wire.data(), wire.size()));
    if (reason != nullptr) w.member_str("reason", *reason);
    w.end_object();
    w.end_object();
  });
}

std::string invalid_json(const jsonrpc::Message& m) {
  return written([&](emcp::json::Writer& w) { jsonrpc::write_invalid(w, m); });
}

}  // namespace gateway
}  // namespace bridge
