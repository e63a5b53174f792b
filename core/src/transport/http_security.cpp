// The HTTP engine's admission of a request (emcp/transport/http_security.h): Host/Origin,
// CORS, preflight, authorization. Used by HttpServer::on_head and by tools/bridge's gateway.
#include "emcp/transport/http_security.h"

#include "emcp/transport/http_server.h"

EMCP_NS_BEGIN
namespace transport {

namespace {

constexpr const char* kLocalNames[] = {"localhost", "127.0.0.1", "[::1]"};

// The host of an authority ("localhost:8080" -> "localhost", "[::1]:80" -> "[::1]").
StrView host_of(StrView authority) {
  if (!authority.empty() && authority[0] == '[') {
    size_t i = 0;
    while (i < authority.size() && authority[i] != ']') ++i;
    return authority.sub(0, i < authority.size() ? i + 1 : i);
  }
  size_t i = 0;
  while (i < authority.size() && authority[i] != ':') ++i;
  return authority.sub(0, i);
}

bool name_allowed(StrView host, Span<const char* const> list) {
  if (list.empty()) {
    for (const char* n : kLocalNames)
      if (http::ascii_iequal(host, StrView(n))) return true;
    return false;
  }
  for (const char* n : list)
    if (StrView(n) == "*" || http::ascii_iequal(host, StrView(n))) return true;
  return false;
}

// The host an Origin names (scheme://host[:port]); false for "null" and anything else.
bool origin_host(StrView o, StrView* host) {
  size_t i = 0;
  while (i + 2 < o.size() && !(o[i] == ':' && o[i + 1] == '/' && o[i + 2] == '/')) ++i;
  if (i + 2 >= o.size()) return false;
  StrView authority = o.sub(i + 3);
  size_t slash = 0;
  while (slash < authority.size() && authority[slash] != '/') ++slash;
  *host = host_of(authority.sub(0, slash));
  return true;
}

}  // namespace

bool host_origin_allowed(const HttpOptions& o, const http::Request& r) {
  if (r.host.present && !name_allowed(host_of(r.host.view()), o.allowed_hosts)) return false;
  StrView host;
  if (r.origin.present && !(origin_host(r.origin.view(), &host) && name_allowed(host, o.allowed_origins)))
    return false;
  return true;
}

// CORS (Fetch standard, "CORS protocol"): the request's Origin echoed (with Vary: Origin, as
// the answer depends on it); a preflight gets the methods and headers the MCP endpoints take
// (Authorization by name: a wildcard does not cover it; the Mcp-Param-{Name} headers by the
// wildcard), the others the response headers a script may read.
void write_cors_headers(const HttpOptions& o, json::Sink& h, const http::Request& r, bool preflight) {
  http::write_header(h, "Access-Control-Allow-Origin", r.origin.view());
  http::write_header(h, "Vary", "Origin");
  if (preflight) {
    http::write_header(h, "Access-Control-Allow-Methods", EMCP_LEGACY_ERA ? "GET, POST, DELETE" : "POST");
    http::write_header(h, "Access-Control-Allow-Headers",
                       "Authorization, Content-Type, Accept, MCP-Protocol-Version, Mcp-Session-Id, Last-Event-ID, "
                       "Mcp-Method, Mcp-Name, *");
    const uint32_t age = o.cors_max_age_s < 86400 ? o.cors_max_age_s : 86400;
    http::write_header(h, "Access-Control-Max-Age", age);
    return;
  }
  http::write_header(h, "Access-Control-Expose-Headers", "Mcp-Session-Id, MCP-Protocol-Version, WWW-Authenticate");
}

bool cors_allowed(const HttpOptions& o, const http::Request& r, bool endpoint) {
  if (!o.cors || !r.origin.present || !endpoint) return false;
  if (o.cors_origins.empty()) return true;  // the Origin check passed
  StrView host;
  return origin_host(r.origin.view(), &host) && name_allowed(host, o.cors_origins);
}

Admission admit(const HttpOptions& o, const http::Request& r, bool endpoint, auth::Grant* grant) {
  Admission a;
  auto refuse = [&](int status, const char* text, const char* header = nullptr) {
    a.status = status;
    a.text = text;
    a.header = header;
    return a;
  };
  if (!host_origin_allowed(o, r)) return refuse(403, "Forbidden: Host or Origin not allowed");
  a.cors = cors_allowed(o, r, endpoint);
  // A CORS preflight carries no credentials: it is answered before authorization.
  if (r.method == http::Method::kOptions && r.origin.present) {
    if (!a.cors) return refuse(403, "Forbidden: this origin may not call the endpoint from a page (CORS)");
    a.preflight = true;
    return refuse(204, nullptr);
  }
  *grant = auth::Grant();
  if (o.auth != nullptr) {
    // The protected resource metadata (RFC 9728) is for everyone: it says how to get a token.
    const StrView doc = o.auth->document(o.auth->ctx, r.path(), StrView(o.path));
    if (!doc.empty()) {
      if (r.method != http::Method::kGet) return refuse(405, "Method Not Allowed", "Allow: GET\r\n");
      a.document = doc;
      return a;
    }
    const auth::Refusal no = o.auth->authenticate(o.auth->ctx, r, grant);
    if (no.status != 0) return refuse(no.status, no.text, no.header);
  }
  return a;
}

}  // namespace transport
EMCP_NS_END
