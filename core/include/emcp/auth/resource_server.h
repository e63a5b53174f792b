// emcp/auth/resource_server.h - the MCP server as an OAuth 2.1 resource server (MCP
// authorization, 2025-03-26 and later): bearer tokens from the Authorization header only,
// static tokens compared in constant time, JWT access tokens (emcp/auth/jwt.h) bound to this
// server's canonical URI, scopes per tool, resource and prompt, and the protected resource
// metadata document of RFC 9728.
//
// The HTTP engine asks it (HttpOptions::auth):
//   - GET /.well-known/oauth-protected-resource and /.well-known/oauth-protected-resource<path>
//     (the MCP endpoint's path): the metadata document, without a token;
//   - every other request: its Authorization header (RFC 6750 3.1, MCP authorization "Error
//     Handling"). None, or another scheme's credentials: 401 with `WWW-Authenticate: Bearer
//     resource_metadata="..."` and no error code. A malformed one ("Bearer" without exactly one
//     b64token, a character outside it, not `scheme credentials` at all, or the header twice)
//     and an access_token query parameter (never used): 400 with error="invalid_request". A
//     well-formed token that is not accepted: 401 with error="invalid_token". Both errors carry
//     an error_description saying why (the JWT check that failed: jwt_result_text(); none
//     when EMCP_ERROR_STRINGS is 0). A valid token without the server-wide scope
//     (Config::required_scope): 403;
//   - each JSON-RPC message of a POST: the scopes its tool, resource or prompt declares
//     (mcp::Tool::scope...); one the token does not grant: 403 with `WWW-Authenticate: Bearer
//     error="insufficient_scope", scope="..."`.
//
// Scopes are matched as bits over Config::scopes (at most 32): a token's scopes outside that
// list are ignored, and a scope a table declares must be in it (one that is not can never be
// granted; check() finds them at start-up).
//
// Context: the engine's loop. Holds fixed buffers (the metadata document, header lines, JWT
// scratch): declare it with static storage.
//
// Example:
//   static const char* const kScopes[] = {"mcp", "relay:write"};
//   static const emcp::auth::StaticToken kTokens[] = {{"s3cret-token", "mcp relay:write"}};
//   static emcp::auth::ResourceServerConfig cfg;            // kept by reference
//   cfg.resource = "https://sensor.local:8443/mcp";
//   cfg.scopes = kScopes;
//   cfg.static_tokens = kTokens;
//   emcp::auth::ResourceServer g_auth;                    // a plain static
//   if (g_auth.start(cfg, server) != emcp::Status::kOk) { /* the configuration is wrong */ }
//   options.auth = g_auth.hooks();
#ifndef EMCP_AUTH_RESOURCE_SERVER_H
#define EMCP_AUTH_RESOURCE_SERVER_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/auth/jwt.h"
#include "emcp/jsonrpc/message.h"
#include "emcp/mcp/server.h"
#include "emcp/http/http.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace auth {

/// A token the server accepts as it is (the device's API key): compared in constant time.
struct StaticToken {
  const char* token = "";
  const char* scope = nullptr;    ///< scopes it grants, space-separated; nullptr: all of Config::scopes
  const char* subject = nullptr;  ///< who it stands for (diagnostics)
};

struct ResourceServerConfig {
  /// The server's canonical URI (RFC 8707), e.g. "https://sensor.local:8443/mcp": the metadata's
  /// "resource", a JWT's required "aud" (JwtConfig::audience must equal it), and where the
  /// metadata URL comes from. Required.
  const char* resource = nullptr;
  /// The authorization servers (issuer URLs) the metadata names.
  Span<const char* const> authorization_servers;
  /// Every scope the server knows (scopes_supported), at most 32.
  Span<const char* const> scopes;
  /// Scopes every request needs besides a valid token (nullptr: none).
  const char* required_scope = nullptr;
  Span<const StaticToken> static_tokens;
  /// JWT access tokens (nullptr: none): the pinned algorithm, the key, iss, aud, skew.
  const JwtConfig* jwt = nullptr;
  /// Seconds since 1970 (the Platform's unix_time_s): required with jwt.
  uint64_t (*unix_time_s)() = nullptr;
  const char* resource_name = nullptr;  ///< "resource_name" of the metadata (optional)
};

/// What a request's token grants, kept with its connection.
struct Grant {
  uint32_t scopes = 0;     ///< bits over ResourceServerConfig::scopes
  uint32_t principal = 0;  ///< who it stands for (a hash of iss and sub, or of the static token's
                           ///< place): a session answers only its opener's principal
  int64_t expires = 0;     ///< a JWT's exp (0: never): a WebSocket ends at its next message after
};

/// An HTTP status to answer with, and header lines to send with it (valid until the next call
/// of the same object; the engine writes them at once).
struct Refusal {
  int status = 0;                 ///< 0: allowed
  const char* header = nullptr;   ///< whole header lines ("WWW-Authenticate: ...\r\n")
  const char* text = nullptr;     ///< the short body
};

/// What the HTTP engine calls (HttpOptions::auth): a table of functions, so that an image
/// without authorization links none of it.
struct AuthHooks {
  StrView (*document)(void* ctx, StrView path, StrView mcp_path) = nullptr;
  Refusal (*authenticate)(void* ctx, const http::Request& request, Grant* grant) = nullptr;
  Refusal (*permit)(void* ctx, const Grant& grant, const jsonrpc::Message& message) = nullptr;
  void* ctx = nullptr;
};

class ResourceServer {
 public:
  /// Not started: status() is kInvalidState and every request is refused (500) until start().
  ResourceServer();
  /// ResourceServer() and start().
  ResourceServer(const ResourceServerConfig& config, const mcp::Server& server);
  /// Takes the configuration (kept by reference: a static) and `server`, whose tables' scopes are
  /// checked. kOk, or kInvalidArgument when the configuration cannot work (no resource, more
  /// than 32 scopes, a URI that does not fit); status() says the same afterwards.
  Status start(const ResourceServerConfig& config, const mcp::Server& server);
  ResourceServer(const ResourceServer&) = delete;
  ResourceServer& operator=(const ResourceServer&) = delete;
  Status status() const { return status_; }
  /// For HttpOptions::auth.
  const AuthHooks* hooks() const { return &hooks_; }

  /// The metadata document for `path` (GET): /.well-known/oauth-protected-resource, alone or
  /// followed by the canonical URI's path or `mcp_path`; an empty view when `path` is not one.
  /// The text is NUL-terminated after the view and lives as long as this object.
  StrView document(StrView path, StrView mcp_path) const;
  /// Checks a request's credentials: status 0 and `*grant`, or the refusal.
  Refusal authenticate(const http::Request& request, Grant* grant);
  /// Checks one message against what the token grants: status 0; 401 when the token expired
  /// meanwhile (a WebSocket's); 403 when it lacks a scope the message needs.
  Refusal permit(const Grant& grant, const jsonrpc::Message& message);
  /// The scope bits of a space-separated list (unknown scopes: bit 31 when `strict`, which no
  /// token grants; ignored otherwise).
  uint32_t mask_of(StrView scopes, bool strict) const;
  /// Finds a tool, resource, template or prompt whose scope is not in Config::scopes: kNotFound
  /// naming it in `*what`, or kOk.
  Status check(const char** what) const;

  /// Counters (diagnostics, tests).
  uint32_t refused_400() const { return refused_400_; }
  uint32_t refused_401() const { return refused_401_; }
  uint32_t refused_403() const { return refused_403_; }

 private:
  bool match_static(StrView token, Grant* grant) const;
  void build();
  // A refusal with `WWW-Authenticate: Bearer error="<error>"[, error_description=...][,
  // scope="<scope> <more_scope>"], resource_metadata=...` built in challenge_; counted.
  Refusal challenge(int status, const char* error, const char* description, const char* text,
                    const char* scope = nullptr, const char* more_scope = nullptr);

  const ResourceServerConfig* config_ = nullptr;
  const mcp::Server* server_ = nullptr;
  AuthHooks hooks_;
  Status status_ = Status::kInvalidState;
  uint32_t required_ = 0;
  uint32_t refused_400_ = 0;
  uint32_t refused_401_ = 0;
  uint32_t refused_403_ = 0;
  uint16_t metadata_len_ = 0;
  StrView resource_path_;        // the path of the canonical URI ("/mcp")
  char metadata_url_[192];       // https://host/.well-known/oauth-protected-resource/path
  char metadata_[768];           // the RFC 9728 document
  char h401_[256];               // WWW-Authenticate, no token
  char challenge_[448];          // invalid_request, invalid_token, insufficient_scope (per refusal)
  uint8_t scratch_[EMCP_AUTH_MAX_TOKEN];  // JWT decoding
};

}  // namespace auth
EMCP_NS_END

#endif  // EMCP_AUTH_RESOURCE_SERVER_H
