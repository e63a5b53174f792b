// The request metadata of a Streamable HTTP request at 2026-07-28 (MCP-Protocol-Version,
// Mcp-Method, Mcp-Name, Mcp-Param-{Name}) checked against its body before the request is served
// (basic/transports/streamable-http.mdx, "Request Metadata" and "Server Validation"): a
// required header missing, a value that differs from the body's, or a value with characters a
// plain header value may not hold is -32020 HeaderMismatch, HTTP 400.
#include "server_internal.h"

#include <stdint.h>

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

// The text a header value stands for equals `body` (Mcp-Name, string Mcp-Param-*).
bool header_equals(StrView header, StrView body) {
  if (is_b64_form(header))
    return b64_equals(header.sub(kB64Open.size(), header.size() - kB64Open.size() - kB64Close.size()), body);
  return plain(header) && header == body;
}

// An integer as a header writes it: [-]digits, and a fraction of zeros at most ("42.0").
bool header_int(StrView v, int64_t* out) {
  size_t i = 0;
  const bool negative = !v.empty() && v[0] == '-';
  if (negative) ++i;
  int64_t n = 0;
  const size_t first = i;
  for (; i < v.size() && v[i] >= '0' && v[i] <= '9'; ++i) {
    if (n > (INT64_MAX - 9) / 10) return false;
    n = n * 10 + (v[i] - '0');
  }
  if (i == first) return false;
  if (i < v.size() && v[i] == '.') {
    const size_t dot = ++i;
    while (i < v.size() && v[i] == '0') ++i;
    if (i == dot) return false;
  }
  *out = negative ? -n : n;
  return i == v.size();
}

// An Mcp-Param-{Name} value against the argument it mirrors: strings as text, integers
// numerically (42 and 42.0 are equal), booleans as `true`/`false`.
bool param_equals(StrView header, const Value& arg) {
  const Result<StrView> text = arg.as_string();
  if (text.ok()) return header_equals(header, text.value());
  if (is_b64_form(header) || !plain(header)) return false;
  if (arg.is_bool()) return header == (arg.as_bool().value() ? StrView("true") : StrView("false"));
  int64_t h = 0;
  if (!arg.is_number() || !header_int(header, &h)) return false;
  const Result<int64_t> exact = arg.as_int();
  if (exact.ok()) return exact.value() == h;
  const Result<double> b = arg.as_double();  // 42.0 in the body
  return b.ok() && b.value() == static_cast<double>(h) && h > -(int64_t{1} << 53) && h < (int64_t{1} << 53);
}

}  // namespace

bool Server::check_headers(Server& server, const Message& m, StrView version, Reply& r) {
  const RequestHeaders& h = *server.headers_;
  auto mismatch = [&](std::initializer_list<TextPiece> detail) {
    r.refusing().error(ErrorCode::kHeaderMismatch, detail);
    return false;
  };
  if (!h.protocol_version.present)
    return mismatch({"Header mismatch: the MCP-Protocol-Version header is required"});
  if (!(h.protocol_version.value == version))
    return mismatch({"Header mismatch: MCP-Protocol-Version header value '", h.protocol_version.value,
                     "' does not match body value '", version, "'"});
  if (!h.method.present) return mismatch({"Header mismatch: the Mcp-Method header is required"});
  if (!(h.method.value == m.method))
    return mismatch({"Header mismatch: Mcp-Method header value '", h.method.value,
                     "' does not match body value '", m.method, "'"});
  const char* field = m.method == "resources/read"                          ? "uri"
                      : m.method == "tools/call" || m.method == "prompts/get" ? "name"
                                                                               : nullptr;
  if (field == nullptr) return true;
  const Result<StrView> body = m.params[field].as_string();
  if (!body.ok()) return true;  // the feature answers the missing or malformed field
  if (!h.name.present) return mismatch({"Header mismatch: the Mcp-Name header is required for ", m.method});
  if (!header_equals(h.name.value, body.value()))
    return mismatch({"Header mismatch: Mcp-Name header value '", h.name.value, "' does not match body value '",
                     body.value(), "'"});
  return true;
}

bool check_param_header(const RequestHeaders& h, StrView header, StrView path, const Value& arg, Reply& r) {
  StrView value;
  bool present = false;
  // "name:value\n" entries, names in lower case; `header` compared case-insensitively.
  const StrView all = h.params;
  for (size_t i = 0; i < all.size() && !present;) {
    size_t colon = i;
    while (colon < all.size() && all[colon] != ':') ++colon;
    size_t end = colon;
    while (end < all.size() && all[end] != '\n') ++end;
    const StrView name = all.sub(i, colon - i);
    bool same = name.size() == header.size();
    for (size_t k = 0; same && k < name.size(); ++k) {
      char c = header[k];
      if (c >= 'A' && c <= 'Z') c = static_cast<char>(c | 0x20);
      same = name[k] == c;
    }
    if (same) {
      present = true;
      value = all.sub(colon + 1, end - colon - 1);
    }
    i = end + 1;
  }
  const bool has_value = arg.exists() && !arg.is_null();
  if (!has_value && !present) return true;
  if (!present) {
    r.refusing().error(ErrorCode::kHeaderMismatch,
                       {"Header mismatch: the Mcp-Param-", header, " header is required (argument ", path, ")"});
    return false;
  }
  if (!has_value || !param_equals(value, arg)) {
    r.refusing().error(ErrorCode::kHeaderMismatch, {"Header mismatch: Mcp-Param-", header, " header value '", value,
                                                    "' does not match argument ", path});
    return false;
  }
  return true;
}

}  // namespace mcp
EMCP_NS_END
