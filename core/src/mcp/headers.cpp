// The request metadata of a Streamable HTTP request at 2026-07-28 (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name, Mcp-Param-{Name}) checked against its body before the request is served
// (basic/transports/streamable-http.mdx, "Request Metadata" and "Server Validation"): a
// required header missing, a value that differs from the body's, or a value with characters a
// plain header value may not hold is -32020 HeaderMismatch, HTTP 400.
#include "server_internal.h"


EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr StrView kB64Open("=?base64?", 9);
constexpr StrView kB64Close("?=", 2);

// The standard base64 alphabet (RFC 4648 4); 64 for '=' and 255 for anything else.
uint8_t b64_value(char c) {
  if (c >= 'A' && c <= 'Z') return static_cast<uint8_t>(c - 'A');
  if (c >= 'a' && c <= 'z') return static_cast<uint8_t>(c - 'a' + 26);
  if (c >= '0' && c <= '9') return static_cast<uint8_t>(c - '0' + 52);
  if (c == '+') return 62;
  if (c == '/') return 63;
  if (c == '=') return 64;
  return 255;
}

// Compares the base64 text `b64` (whole quads, padding only at the end, zero unused bits:
// anything else is no match) with the bytes `body`, decoding as it goes: nothing is buffered.
bool b64_equals(StrView b64, StrView body) {
  if (b64.size() % 4 != 0) return false;
  size_t at = 0;  // bytes of `body` matched
  for (size_t q = 0; q < b64.size(); q += 4) {
    uint8_t v[4];
    for (int i = 0; i < 4; ++i) v[i] = b64_value(b64[q + static_cast<size_t>(i)]);
    const bool last = q + 4 == b64.size();
    int bytes = 3;
    if (v[3] == 64) {
      if (!last) return false;
      bytes = v[2] == 64 ? 1 : 2;
    }
    if (v[0] > 63 || v[1] > 63 || (bytes >= 2 && v[2] > 63) || (bytes == 3 && v[3] > 63)) return false;
    // Unused bits of the last character before the padding must be zero (canonical form).
    if (bytes == 1 && (v[1] & 0x0F) != 0) return false;
    if (bytes == 2 && (v[2] & 0x03) != 0) return false;
    const uint32_t n = (static_cast<uint32_t>(v[0]) << 18) | (static_cast<uint32_t>(v[1]) << 12) |
                       (static_cast<uint32_t>(bytes >= 2 ? v[2] : 0) << 6) | (bytes == 3 ? v[3] : 0);
    for (int i = 0; i < bytes; ++i) {
      const char c = static_cast<char>((n >> (16 - 8 * i)) & 0xFF);
      if (at >= body.size() || body[at] != c) return false;
      ++at;
    }
  }
  return at == body.size();
}

// A plain header value may hold visible ASCII, spaces and tabs only.
bool plain(StrView v) {
  for (char c : v) {
    const unsigned char u = static_cast<unsigned char>(c);
    if ((u < 0x20 && u != '\t') || u >= 0x7F) return false;
  }
  return true;
}

bool is_b64_form(StrView v) {
  return v.size() >= kB64Open.size() + kB64Close.size() && v.starts_with(kB64Open) &&
         v.sub(v.size() - kB64Close.size()) == kB64Close;
}

}  // namespace

// The text a header value stands for equals `body` (Mcp-Name, string Mcp-Param-*): server.h.
bool header_equals(StrView header, StrView body) {
  if (is_b64_form(header))
    return b64_equals(header.sub(kB64Open.size(), header.size() - kB64Open.size() - kB64Close.size()), body);
  return plain(header) && header == body;
}

namespace {

// The Mcp-Param-{name} header among `params` ("name:value\n" entries, names in lower case).
RequestHeaders::Field find_param(StrView params, const char* name) {
  RequestHeaders::Field f;
  for (size_t at = 0; at < params.size();) {
    size_t end = at;
    while (end < params.size() && params[end] != '\n') ++end;
    const StrView entry = params.sub(at, end - at);
    size_t colon = 0;
    while (colon < entry.size() && entry[colon] != ':') ++colon;
    size_t i = 0;
    for (; i < colon && name[i] != '\0'; ++i) {
      const char c = name[i] >= 'A' && name[i] <= 'Z' ? static_cast<char>(name[i] - 'A' + 'a') : name[i];
      if (entry[i] != c) break;
    }
    if (i == colon && name[i] == '\0' && colon < entry.size()) {
      f.value = entry.sub(colon + 1);
      f.present = true;
      return f;
    }
    at = end + 1;
  }
  return f;
}

// A header value equals the argument `v` as a client mirrors it (streamable-http.mdx, "Value
// Encoding"): a string as it is, an integer in decimal (compared as a number), a boolean as
// true/false. Arguments of other kinds are left to the argument check (-32602).
bool param_equals(StrView header, Value v) {
  if (v.is_string()) return header_equals(header, v.as_string().value());
  if (v.is_bool()) return header == (v.as_bool().value() ? StrView("true") : StrView("false"));
  const Result<int64_t> n = v.as_int();
  if (!n.ok()) return true;
  // Optional '-', then decimal digits (leading zeros allowed), the value within int64.
  size_t i = header.size() != 0 && header[0] == '-' ? 1 : 0;
  if (i == header.size()) return false;
  uint64_t mag = 0;
  for (; i < header.size(); ++i) {
    const char c = header[i];
    if (c < '0' || c > '9' || mag > (UINT64_MAX - 9) / 10) return false;
    mag = mag * 10 + static_cast<uint64_t>(c - '0');
  }
  const int64_t want = n.value();
  const uint64_t want_mag = want < 0 ? 0 - static_cast<uint64_t>(want) : static_cast<uint64_t>(want);
  return mag == want_mag && (mag == 0 || (header[0] == '-') == (want < 0));
}

}  // namespace

// The Mcp-Param-* headers of the arguments `args` that the properties `props` mirror
// (x-mcp-header, also in nested objects): each present argument needs its header with the
// same value, an absent one no header. Recursion follows the Param table (at most
// EMCP_SCHEMA_MAX_DEPTH deep), never the input.
static bool params_match(Span<const Param> props, Value args, StrView headers, Reply& r) {
  for (const Param& p : props) {
    if (!p.has_header) continue;
    const Value v = args[p.name];
    if (p.type == ParamType::kObject) {
      if (!params_match(Span<const Param>(p.props, p.prop_count), v, headers, r)) return false;
      continue;
    }
    const RequestHeaders::Field f = find_param(headers, p.header);
    const bool given = v.exists() && !v.is_null();
    if (given && !f.present) {
      r.refusing().error(ErrorCode::kHeaderMismatch,
                         {"Header mismatch: the Mcp-Param-", p.header, " header is required: argument '", p.name,
                          "' is present"});
      return false;
    }
    if (!given && f.present) {
      r.refusing().error(ErrorCode::kHeaderMismatch,
                         {"Header mismatch: Mcp-Param-", p.header, " header without argument '", p.name, "'"});
      return false;
    }
    if (given && !param_equals(f.value, v)) {
      r.refusing().error(ErrorCode::kHeaderMismatch,
                         {"Header mismatch: Mcp-Param-", p.header, " header value '", f.value,
                          "' does not match argument '", p.name, "'"});
      return false;
    }
  }
  return true;
}

bool check_routing_headers(const RequestHeaders& h, const Message& m, StrView version, HeaderMismatch mismatch,
                           void* ctx) {
  auto refuse = [&](std::initializer_list<TextPiece> message) {
    mismatch(ctx, message);
    return false;
  };
  if (!h.protocol_version.present) return refuse({"Header mismatch: the MCP-Protocol-Version header is required"});
  if (!(h.protocol_version.value == version))
    return refuse({"Header mismatch: MCP-Protocol-Version header value '", h.protocol_version.value,
                   "' does not match body value '", version, "'"});
  if (!h.method.present) return refuse({"Header mismatch: the Mcp-Method header is required"});
  if (!(h.method.value == m.method))
    return refuse({"Header mismatch: Mcp-Method header value '", h.method.value, "' does not match body value '",
                   m.method, "'"});
  const char* field = name_field(m.method);
  if (field == nullptr) return true;
  const Result<StrView> body = m.params[field].as_string();
  if (!body.ok()) {
    // An Mcp-Name the body does not bear out is a mismatch; without one the feature answers
    // the missing or malformed field (-32602).
    if (h.name.present)
      return refuse({"Header mismatch: Mcp-Name header value '", h.name.value, "' but the body has no ", field,
                     " string"});
    return true;
  }
  if (!h.name.present) return refuse({"Header mismatch: the Mcp-Name header is required for ", m.method});
  if (!header_equals(h.name.value, body.value()))
    return refuse({"Header mismatch: Mcp-Name header value '", h.name.value, "' does not match body value '",
                   body.value(), "'"});
  return true;
}

bool Server::check_headers(Server& server, const Message& m, StrView version, Reply& r) {
  const RequestHeaders& h = *server.headers_;
  const HeaderMismatch refuse = [](void* reply, std::initializer_list<TextPiece> message) {
    static_cast<Reply*>(reply)->refusing().error(ErrorCode::kHeaderMismatch, message);
  };
  if (!check_routing_headers(h, m, version, refuse, &r)) return false;
  // tools/call: the arguments its tool mirrors in Mcp-Param-* headers.
  if (!(m.method == "tools/call")) return true;
  const StrView name = m.params["name"].as_string().value_or(StrView());
  const Tool* tool = ServerCode::tool_named(server, name);
  return tool == nullptr || params_match(tool->params, m.params["arguments"], h.params, r);  // unknown: the feature answers
}

}  // namespace mcp
EMCP_NS_END
