// emcp/transport/http_security.h - the HTTP engine's admission of a request, as free functions
// a layer in front of another MCP server can use too (tools/bridge's HTTP gateway): the
// Host/Origin check (DNS rebinding protection), the CORS decision and the CORS headers of an
// answer, the CORS preflight, and bearer-token authorization (HttpOptions::auth), each with
// exactly the engine's statuses and texts. The options are the engine's (HttpOptions).
//
// Context: any; pure functions over the request and the options (no heap, no state).
//
// Example (what HttpServer does with a request's head):
//   auth::Grant grant;
//   const Admission a = admit(options, request, is_mcp_endpoint, &grant);
//   if (!a.document.empty()) answer(200, a.document);            // RFC 9728 metadata
//   else if (a.status != 0) answer(a.status, a.text, a.header);  // 403, 204 preflight, 401, ...
//   ... and every answer to it: if (a.cors) write_cors_headers(options, head, request, a.preflight);
#ifndef EMCP_TRANSPORT_HTTP_SECURITY_H
#define EMCP_TRANSPORT_HTTP_SECURITY_H

#include "emcp/auth/resource_server.h"
#include "emcp/json/sink.h"
#include "emcp/http/http.h"

EMCP_NS_BEGIN
namespace transport {

struct HttpOptions;  // emcp/transport/http_server.h

/// What becomes of a request, decided from its head alone.
struct Admission {
  /// 0: admitted (go on routing it). Otherwise the answer: 403 (Host or Origin not allowed, or
  /// a preflight of an origin CORS does not admit), 204 (a CORS preflight, answered before
  /// authorization), 405 (the metadata document asked for with another method than GET), or
  /// the authorization's refusal (401, 400, 403).
  int status = 0;
  const char* text = nullptr;    ///< the short body (nullptr: none); static or the hooks' own
  const char* header = nullptr;  ///< whole header lines to add ("Allow: GET\r\n"), or nullptr
  bool cors = false;             ///< every answer to it carries the CORS headers
  bool preflight = false;        ///< ... of a preflight (write_cors_headers)
  /// With HttpOptions::auth: the protected resource metadata document this GET asks for (RFC
  /// 9728; answer it 200, application/json), NUL-terminated after the view. Empty otherwise.
  StrView document;
};

/// The Host header names a host of HttpOptions::allowed_hosts and the Origin header (if any)
/// one of allowed_origins (each: empty list = the localhost names).
bool host_origin_allowed(const HttpOptions& o, const http::Request& r);
/// True when a page of the request's Origin may call the endpoint (HttpOptions::cors,
/// cors_origins); `endpoint`: the request's path is an MCP endpoint.
bool cors_allowed(const HttpOptions& o, const http::Request& r, bool endpoint);
/// The CORS headers of an answer to `r` (its Origin echoed, Vary: Origin; a preflight's
/// allowed methods, headers and max age; otherwise the headers a script may read).
void write_cors_headers(const HttpOptions& o, json::Sink& out, const http::Request& r, bool preflight);
/// Host/Origin, CORS preflight, metadata document and authorization, in the engine's order.
/// `*grant` is what the token grants (reset first; left as is for a preflight).
Admission admit(const HttpOptions& o, const http::Request& r, bool endpoint, auth::Grant* grant);

}  // namespace transport
EMCP_NS_END

#endif  // EMCP_TRANSPORT_HTTP_SECURITY_H
