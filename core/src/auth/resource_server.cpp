#include "emcp/auth/resource_server.h"

#include "emcp/json/sink.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/error.h"

EMCP_NS_BEGIN
namespace auth {

namespace {

constexpr const char* kWellKnown = "/.well-known/oauth-protected-resource";
constexpr uint32_t kUnknownScope = 1u << 31;

// Appends C strings to a fixed buffer; false once anything did not fit (the buffer then holds
// a NUL-terminated prefix that is not used).
class Text {
 public:
  Text(char* buf, size_t cap) : buf_(buf), cap_(cap) { buf_[0] = '\0'; }
  Text& add(StrView s) {
    for (char ch : s) {
      if (len_ + 1 >= cap_) {
        ok_ = false;
        break;
      }
      buf_[len_++] = ch;
    }
    buf_[len_] = '\0';
    return *this;
  }
  bool ok() const { return ok_; }
  size_t size() const { return len_; }

 private:
  char* buf_;
  size_t cap_;
  size_t len_ = 0;
  bool ok_ = true;
};

// Equality in time that depends only on the lengths, not on where the bytes differ.
bool equal_constant_time(StrView a, StrView b) {
  if (a.size() != b.size()) return false;
  uint8_t diff = 0;
  for (size_t i = 0; i < a.size(); ++i)
    diff = static_cast<uint8_t>(diff | (static_cast<uint8_t>(a[i]) ^ static_cast<uint8_t>(b[i])));
  return diff == 0;
}

// What an Authorization header holds (RFC 9110 11.6.2: credentials = auth-scheme [ 1*SP
// ( token68 / #auth-param ) ]).
enum class Credentials : uint8_t {
  kBearer,       // "Bearer" (any case), 1*SP, one b64token (RFC 6750 2.1): the token
  kOtherScheme,  // another scheme: no bearer credentials at all (RFC 6750 3.1: no error code)
  kMalformed,    // not credentials, or Bearer without exactly one b64token: invalid_request
};

bool b64token_char(char ch) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' ||
         ch == '.' || ch == '_' || ch == '~' || ch == '+' || ch == '/';
}

// Reads the (trimmed) header value: kBearer with `*token`, or why it is malformed in `*why`.
Credentials read_credentials(StrView header, StrView* token, const char** why) {
  size_t i = 0;
  while (i < header.size() && http::is_tchar(static_cast<uint8_t>(header[i]))) ++i;
  if (i == 0 || (i < header.size() && header[i] != ' ')) {
    *why = EMCP_ERRTEXT("the Authorization header is not a scheme and its credentials");
    return Credentials::kMalformed;
  }
  if (!http::ascii_iequal(header.sub(0, i), StrView("Bearer"))) return Credentials::kOtherScheme;
  while (i < header.size() && header[i] == ' ') ++i;
  if (i == header.size()) {
    *why = EMCP_ERRTEXT("no token after Bearer");
    return Credentials::kMalformed;
  }
  // b64token = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"="
  size_t end = i;
  while (end < header.size() && b64token_char(header[end])) ++end;
  const size_t chars = end - i;
  while (end < header.size() && header[end] == '=') ++end;
  if (end < header.size() || chars == 0) {
    size_t space = i;
    while (space < header.size() && header[space] != ' ') ++space;
    *why = space < header.size() ? EMCP_ERRTEXT("more than one token after Bearer")
                                 : EMCP_ERRTEXT("the token is not an RFC 6750 b64token");
    return Credentials::kMalformed;
  }
  *token = header.sub(i, end - i);
  return Credentials::kBearer;
}

// True when the query names an access_token parameter (RFC 6750 2.3), given or empty.
bool token_in_query(StrView query) {
  size_t i = 0;
  while (i < query.size()) {
    size_t end = i;
    while (end < query.size() && query[end] != '&') ++end;
    StrView param = query.sub(i, end - i);
    size_t eq = 0;
    while (eq < param.size() && param[eq] != '=') ++eq;
    if (param.sub(0, eq) == StrView("access_token")) return true;
    i = end + 1;
  }
  return false;
}

// FNV-1a over parts, with a separator between them (a principal's identity, not a secret).
uint32_t fnv(uint32_t h, StrView s) {
  for (char ch : s) h = (h ^ static_cast<uint8_t>(ch)) * 16777619u;
  return (h ^ 0xFFu) * 16777619u;
}

}  // namespace

ResourceServer::ResourceServer() {
  hooks_.document = [](void* ctx, StrView path, StrView mcp_path) {
    return static_cast<const ResourceServer*>(ctx)->document(path, mcp_path);
  };
  hooks_.authenticate = [](void* ctx, const http::Request& request, Grant* grant) {
    return static_cast<ResourceServer*>(ctx)->authenticate(request, grant);
  };
  hooks_.permit = [](void* ctx, const Grant& grant, const jsonrpc::Message& message) {
    return static_cast<ResourceServer*>(ctx)->permit(grant, message);
  };
  hooks_.ctx = this;
}

ResourceServer::ResourceServer(const ResourceServerConfig& config, const mcp::Server& server) : ResourceServer() {
  (void)start(config, server);
}

Status ResourceServer::start(const ResourceServerConfig& config, const mcp::Server& server) {
  config_ = &config;
  server_ = &server;
  status_ = Status::kOk;
  required_ = 0;
  build();
  return status_;
}

void ResourceServer::build() {
  metadata_url_[0] = metadata_[0] = h401_[0] = challenge_[0] = '\0';
  const StrView resource(config_->resource);
  size_t scheme = 0;
  while (scheme + 2 < resource.size() && !(resource[scheme] == ':' && resource[scheme + 1] == '/' && resource[scheme + 2] == '/'))
    ++scheme;
  if (resource.empty() || scheme + 2 >= resource.size() || config_->scopes.size() > 31 ||
      (config_->jwt != nullptr && (config_->unix_time_s == nullptr || config_->jwt->audience == nullptr ||
                                  StrView(config_->jwt->audience) != resource))) {
    status_ = Status::kInvalidArgument;
    return;
  }
  size_t slash = scheme + 3;
  while (slash < resource.size() && resource[slash] != '/') ++slash;
  const StrView origin = resource.sub(0, slash);
  StrView path = resource.sub(slash, resource.size() - slash);
  if (path == StrView("/")) path = StrView();
  resource_path_ = path;
  Text url(metadata_url_, sizeof metadata_url_);
  url.add(origin).add(kWellKnown).add(path);

  json::BufferSink sink(metadata_, sizeof metadata_ - 1);
  json::Writer w(sink);
  w.begin_object();
  w.member_str("resource", resource);
  w.key("authorization_servers");
  w.begin_array();
  for (const char* as : config_->authorization_servers) w.string(StrView(as));
  w.end_array();
  if (!config_->scopes.empty()) {
    w.key("scopes_supported");
    w.begin_array();
    for (const char* sc : config_->scopes) w.string(StrView(sc));
    w.end_array();
  }
  w.key("bearer_methods_supported");
  w.begin_array();
  w.string("header");
  w.end_array();
  if (config_->resource_name != nullptr) w.member_str("resource_name", StrView(config_->resource_name));
  w.end_object();
  metadata_len_ = static_cast<uint16_t>(sink.view().size());
  metadata_[metadata_len_] = '\0';

  Text a(h401_, sizeof h401_);
  a.add("WWW-Authenticate: Bearer resource_metadata=\"").add(metadata_url_).add("\"");
  if (config_->required_scope != nullptr) a.add(", scope=\"").add(config_->required_scope).add("\"");
  a.add("\r\n");
  if (!url.ok() || w.status() != Status::kOk || !a.ok()) status_ = Status::kInvalidArgument;
  // Every challenge but a long scope list fits: the longest error, a description of up to 64
  // bytes (jwt_result_text() and the texts here; tests/unit/jwt_test.cpp checks them), the URL.
  static_assert(sizeof "WWW-Authenticate: Bearer error=\"invalid_request\", error_description=\"\", resource_metadata=\"\"\r\n" +
                        64 + sizeof metadata_url_ <= sizeof challenge_,
                "challenge_ holds every challenge without a scope");
  required_ = config_->required_scope != nullptr ? mask_of(StrView(config_->required_scope), true) : 0;
}

StrView ResourceServer::document(StrView path, StrView mcp_path) const {
  if (status_ != Status::kOk) return StrView();
  const StrView wk(kWellKnown);
  if (path.size() < wk.size() || path.sub(0, wk.size()) != wk) return StrView();
  const StrView rest = path.sub(wk.size(), path.size() - wk.size());
  if (rest.empty() || rest == mcp_path || rest == resource_path_) return StrView(metadata_, metadata_len_);
  return StrView();
}

uint32_t ResourceServer::mask_of(StrView scopes, bool strict) const {
  uint32_t mask = 0;
  if (config_ == nullptr) return strict ? kUnknownScope : 0;
  size_t i = 0;
  while (i < scopes.size()) {
    while (i < scopes.size() && scopes[i] == ' ') ++i;
    size_t end = i;
    while (end < scopes.size() && scopes[end] != ' ') ++end;
    if (end > i) {
      const StrView one = scopes.sub(i, end - i);
      bool known = false;
      for (size_t k = 0; k < config_->scopes.size(); ++k) {
        if (one == StrView(config_->scopes[k])) {
          mask |= 1u << k;
          known = true;
        }
      }
      if (!known && strict) mask |= kUnknownScope;
    }
    i = end;
  }
  return mask;
}

bool ResourceServer::match_static(StrView token, Grant* grant) const {
  // Every table entry is compared (no early exit): the time says nothing of which matched.
  bool found = false;
  Grant g;
  uint32_t index = 0;
  for (const StaticToken& t : config_->static_tokens) {
    if (equal_constant_time(token, StrView(t.token)) && !found) {
      found = true;
      g.scopes = t.scope == nullptr ? (1u << config_->scopes.size()) - 1u : mask_of(StrView(t.scope), false);
      g.principal = fnv(fnv(2166136261u, "static"), StrView(reinterpret_cast<const char*>(&index), sizeof index));
    }
    ++index;
  }
  if (found) *grant = g;
  return found;
}

Refusal ResourceServer::challenge(int status, const char* error, const char* description, const char* text,
                                  const char* scope, const char* more_scope) {
  Text h(challenge_, sizeof challenge_);
  h.add("WWW-Authenticate: Bearer error=\"").add(error).add("\"");
  if (description != nullptr && description[0] != '\0') h.add(", error_description=\"").add(description).add("\"");
  if (scope != nullptr) {
    h.add(", scope=\"").add(scope);
    if (more_scope != nullptr) h.add(" ").add(more_scope);
    h.add("\"");
  }
  h.add(", resource_metadata=\"").add(metadata_url_).add("\"\r\n");
  Refusal r;
  r.status = status;
  r.header = h.ok() ? challenge_ : nullptr;
  r.text = text;
  if (status == 400) ++refused_400_;
  else if (status == 401) ++refused_401_;
  else ++refused_403_;
  return r;
}

Refusal ResourceServer::authenticate(const http::Request& request, Grant* grant) {
  *grant = Grant();
  Refusal r;
  if (status_ != Status::kOk) {
    r.status = 500;
    r.text = "Internal Server Error: authorization misconfigured";
    return r;
  }
  const char* const kBadRequest = "Bad Request: malformed authorization";
  if (token_in_query(request.query()))
    return challenge(400, "invalid_request", EMCP_ERRTEXT("token in the query string"),
                     "Bad Request: access tokens go in the Authorization header, never in the URL");
  // No credentials at all, or another scheme's (RFC 6750 3.1: then no error code).
  const auto no_credentials = [&] {
    r.status = 401;
    r.header = h401_;
    r.text = "Unauthorized: a bearer token is required";
    ++refused_401_;
    return r;
  };
  if (!request.authorization.present) return no_credentials();
  // RFC 6750 3.1 invalid_request: the request "repeats the same parameter ... or is otherwise
  // malformed" (400); MCP authorization: 400 for a malformed authorization request.
  if (request.authorization.repeated)
    return challenge(400, "invalid_request", EMCP_ERRTEXT("more than one Authorization header"), kBadRequest);
  StrView token;
  const char* why = nullptr;
  const Credentials kind = read_credentials(request.authorization.view(), &token, &why);
  if (kind == Credentials::kMalformed) return challenge(400, "invalid_request", why, kBadRequest);
  if (kind == Credentials::kOtherScheme) return no_credentials();
  // Well-formed: from here on a token that is not accepted is invalid_token (401).
  const char* invalid = EMCP_ERRTEXT("unknown token");
  bool valid = false;
  Grant g;
  if (token.size() > sizeof scratch_) {
    invalid = jwt_result_text(JwtResult::kTooLarge);
  } else if (match_static(token, &g)) {
    valid = true;
  } else if (config_->jwt != nullptr) {
    JwtClaims claims;
    const JwtResult jr = verify_jwt(token, *config_->jwt, config_->unix_time_s(),
                                    Span<uint8_t>(scratch_, sizeof scratch_), &claims);
    if (jr == JwtResult::kOk) {
      valid = true;
      g.scopes = mask_of(claims.scope, false);
      g.principal = fnv(fnv(fnv(2166136261u, "jwt"), StrView(config_->jwt->issuer)), claims.sub);
      g.expires = claims.exp;
    } else {
      invalid = jwt_result_text(jr);
    }
  }
  if (!valid) return challenge(401, "invalid_token", invalid, "Unauthorized: the bearer token is not valid");
  if ((g.scopes & required_) != required_)
    return challenge(403, "insufficient_scope", nullptr, "Forbidden: insufficient scope", config_->required_scope);
  *grant = g;
  return r;
}

Refusal ResourceServer::permit(const Grant& grant, const jsonrpc::Message& message) {
  Refusal r;
  if (status_ != Status::kOk) {  // never started, or misconfigured: nothing passes
    r.status = 500;
    r.text = "Internal Server Error: authorization misconfigured";
    return r;
  }
  if (grant.expires != 0 && config_->jwt != nullptr && config_->unix_time_s != nullptr &&
      static_cast<int64_t>(config_->unix_time_s()) > grant.expires + static_cast<int64_t>(config_->jwt->skew_s))
    return challenge(401, "invalid_token", jwt_result_text(JwtResult::kExpired), "Unauthorized: the bearer token expired");
  const char* scope = server_->scope_of(message);
  if (scope == nullptr) return r;
  const uint32_t need = mask_of(StrView(scope), true);
  if ((grant.scopes & need) == need) return r;
  // Every scope the operation needs: the server-wide one and the operation's.
  return config_->required_scope != nullptr
             ? challenge(403, "insufficient_scope", nullptr, "Forbidden: insufficient scope", config_->required_scope, scope)
             : challenge(403, "insufficient_scope", nullptr, "Forbidden: insufficient scope", scope);
}

Status ResourceServer::check(const char** what) const {
  *what = nullptr;
  if (status_ != Status::kOk) return status_;
  for (const mcp::Tool& t : server_->tools())
    if (t.scope != nullptr && (mask_of(StrView(t.scope), true) & kUnknownScope) != 0) *what = t.name;
  for (const mcp::Resource& res : server_->resources())
    if (res.scope != nullptr && (mask_of(StrView(res.scope), true) & kUnknownScope) != 0) *what = res.uri;
  for (const mcp::ResourceTemplate& t : server_->templates())
    if (t.scope != nullptr && (mask_of(StrView(t.scope), true) & kUnknownScope) != 0) *what = t.uri_template;
  for (const mcp::Prompt& p : server_->prompts())
    if (p.scope != nullptr && (mask_of(StrView(p.scope), true) & kUnknownScope) != 0) *what = p.name;
  if (config_->required_scope != nullptr && (required_ & kUnknownScope) != 0) *what = config_->required_scope;
  return *what == nullptr ? Status::kOk : Status::kNotFound;
}

}  // namespace auth
EMCP_NS_END
