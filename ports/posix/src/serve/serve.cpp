#include "emcp/posix/serve.h"

#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <new>

#include "emcp/crypto/sha256.h"
#include "emcp/json/number.h"
#include "emcp/crypto/sha1.h"
#include "emcp/mbedtls/jwt_key.h"
#include "emcp/mbedtls/tls.h"
#include "emcp/json/sink.h"
#include "emcp/posix/fd.h"
#include "emcp/posix/http_listener.h"
#include "emcp/posix/platform.h"
#include "emcp/transport/http_server.h"
#include "emcp/transport/line.h"
#include "mqtt_serve.h"

EMCP_NS_BEGIN
namespace posix {
namespace serve {

using emcp::StrView;

namespace {

constexpr size_t kConnections = 16;
constexpr size_t kSessions = EMCP_LEGACY_ERA ? 8 : 0;  // a server of MCP 2026-07-28 only opens none

StrView num(uint64_t v, char* buf) { return StrView(buf, emcp::json::format_uint64(v, buf)); }



int g_stdout = 1;
const char* g_hosts[16];

}  // namespace

bool parse_port(const char* text, uint16_t* port) {
  uint32_t v = 0;
  if (*text == '\0') return false;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
    v = v * 10 + static_cast<uint32_t>(*p - '0');
    if (v > 65535) return false;
  }
  *port = static_cast<uint16_t>(v);
  return true;
}

const char kHttpUsage[] =
    "  --http PORT        serve Streamable HTTP on /mcp and HTTP+SSE (2024-11-05) on /sse\n"
    "                     (PORT 0: any free port, printed on stderr)\n"
    "  --ws               also serve WebSocket on /ws (subprotocol mcp)\n"
    "  --bind ADDR        address to listen on (default 127.0.0.1; IPv6 literals work)\n"
    "  --allow-host NAME  a Host/Origin name to accept besides localhost (repeatable, * for any)\n"
    "  --timeout-ms N     longest wait for a request's head (the first one: from the accept),\n"
    "                     between body bytes, and for a TLS handshake (default 10000)\n"
    "  --keepalive-ms N   close a connection idle between requests after N ms (default 60000)\n"
    "  --reclaim-grace-ms N  when every connection slot is taken, a request still arriving N ms\n"
    "                     after it began may give its slot to a newcomer (default 1000)\n"
    "  --session-prefix TAG  session ids start with TAG (up to 16 of A-Z a-z 0-9 - . _ ~):\n"
    "                     one instance of a fleet behind a proxy that routes by it\n"
    "  --state-key-file FILE  the key of 2026-07-28 requestState from FILE (at least 32 bytes),\n"
    "                     the same on every instance of a fleet (default: a random key)\n"
    "  --tls-cert FILE    HTTPS and WSS: the server's certificate chain (PEM) ...\n"
    "  --tls-key FILE     ... and its private key (PEM)\n"
    "  --auth-token TOKEN require a bearer token; this one grants every scope (repeatable)\n"
    "  --jwt-key FILE     require a bearer token; JWT access tokens signed with this public key\n"
    "                     (PEM: EC P-256 for ES256, RSA for RS256) ...\n"
    "  --jwt-secret FILE  ... or HMAC-signed (HS256) with the secret in FILE (at least 32 bytes)\n"
    "  --issuer URL       the tokens' issuer (iss), named as the authorization server\n"
    "  --require-at-jwt   refuse JWTs whose header typ is not at+jwt (RFC 9068; off: many\n"
    "                     authorization servers type access tokens JWT or not at all)\n"
    "  --audience URI     this server's canonical URI, the tokens' audience (default\n"
    "                     http(s)://ADDR:PORT/mcp)\n"
    "  --mqtt URL         also serve MCP over MQTT 5 through the broker at mqtt://HOST[:PORT]\n"
    "                     or mqtts://HOST[:PORT] (TLS; with or without --http; docs/mqtt.md)\n"
    "  --mqtt-ca FILE     mqtts: the CAs (PEM) the broker's certificate must lead to; its name\n"
    "                     must be HOST\n"
    "  --mqtt-cert FILE   mqtts: a client certificate (PEM) ...\n"
    "  --mqtt-key FILE    ... and its private key (PEM)\n"
    "  --mqtt-name NAME   the server-name, topic style (default emcp/<program>)\n"
    "  --mqtt-id ID       the server-id, the MQTT client id (default <program>-<random hex>)\n"
    "  --mqtt-keepalive S the MQTT Keep Alive, 1..65535 seconds (default 30); a broker silent\n"
    "                     after a PINGREQ, or before its CONNACK, this long is dialed again\n";

namespace {
const char* g_allowed[8];
size_t g_allowed_count = 0;
const char* g_tokens[8];
size_t g_token_count = 0;
}  // namespace

int parse_http_option(int argc, char** argv, int* i, HttpConfig* config) {
  const char* arg = argv[*i];
  const char* value = *i + 1 < argc ? argv[*i + 1] : nullptr;
  auto needs = [&](const char* what) {
    // What was given, except a secret (a token).
    const bool shown = value != nullptr && strcmp(arg, "--auth-token") != 0;
    say({config->program, ": ", arg, " needs ", what, shown ? " (given: " : "", shown ? value : "", shown ? ")" : "",
         "\n"});
    return -1;
  };
  if (const int mqtt = parse_mqtt_option(argc, argv, i, config)) return mqtt;
  if (strcmp(arg, "--ws") == 0) {
    config->websocket = true;
    return 1;
  }
  if (strcmp(arg, "--require-at-jwt") == 0) {
    config->require_at_jwt = true;
    return 1;
  }
  static const char* const kWithValue[] = {"--http",     "--bind",       "--allow-host", "--timeout-ms", "--keepalive-ms",
                                           "--reclaim-grace-ms", "--tls-cert", "--tls-key", "--auth-token",
                                           "--jwt-key",  "--jwt-secret", "--issuer",     "--audience",
                                           "--session-prefix", "--state-key-file"};
  bool known = false;
  for (const char* name : kWithValue) known = known || strcmp(arg, name) == 0;
  if (!known) return 0;
  if (value == nullptr) return needs("a value");
  ++*i;
  if (strcmp(arg, "--http") == 0) {
    if (!parse_port(value, &config->port)) return needs("a port 0..65535");
    config->enabled = true;
  } else if (strcmp(arg, "--bind") == 0) {
    config->address = value;
  } else if (strcmp(arg, "--allow-host") == 0) {
    if (g_allowed_count == sizeof g_allowed / sizeof g_allowed[0]) return needs("to be given at most 8 times");
    g_allowed[g_allowed_count++] = value;
    config->allowed_hosts = emcp::Span<const char* const>(g_allowed, g_allowed_count);
  } else if (strcmp(arg, "--timeout-ms") == 0 || strcmp(arg, "--keepalive-ms") == 0) {
    char* end = nullptr;
    const long n = strtol(value, &end, 10);
    if (end == value || *end != '\0' || n < 100 || n > 600000) return needs("a number of milliseconds 100..600000");
    (strcmp(arg, "--timeout-ms") == 0 ? config->timeout_ms : config->keepalive_ms) = static_cast<uint32_t>(n);
  } else if (strcmp(arg, "--reclaim-grace-ms") == 0) {
    char* end = nullptr;
    const long n = strtol(value, &end, 10);
    if (end == value || *end != '\0' || n < 0 || n > 600000) return needs("a number of milliseconds 0..600000");
    config->reclaim_grace_ms = static_cast<uint32_t>(n);
  } else if (strcmp(arg, "--session-prefix") == 0) {
    if (*value == '\0' || !emcp::transport::valid_session_prefix(value))
      return needs("up to 16 characters of A-Z a-z 0-9 - . _ ~");
    config->session_prefix = value;
  } else if (strcmp(arg, "--state-key-file") == 0) {
    config->state_key_file = value;
  } else if (strcmp(arg, "--tls-cert") == 0) {
    config->tls_cert = value;
  } else if (strcmp(arg, "--tls-key") == 0) {
    config->tls_key = value;
  } else if (strcmp(arg, "--auth-token") == 0) {
    if (g_token_count == sizeof g_tokens / sizeof g_tokens[0]) return needs("to be given at most 8 times");
    if (strlen(value) < 16) return needs("a token of at least 16 characters");
    g_tokens[g_token_count++] = value;
    config->auth_tokens = emcp::Span<const char* const>(g_tokens, g_token_count);
  } else if (strcmp(arg, "--jwt-key") == 0) {
    config->jwt_key = value;
  } else if (strcmp(arg, "--jwt-secret") == 0) {
    config->jwt_secret = value;
  } else if (strcmp(arg, "--issuer") == 0) {
    config->issuer = value;
  } else {
    config->audience = value;
  }
  return 1;
}

bool check_http_options(const HttpConfig& config) {
  if (!check_mqtt_options(config)) return false;
  const bool any = config.websocket || config.allowed_hosts.size() != 0 || config.timeout_ms != 0 || config.keepalive_ms != 0 ||
                   config.reclaim_grace_ms != UINT32_MAX || config.tls_cert != nullptr || config.tls_key != nullptr ||
                   config.session_prefix != nullptr || config.state_key_file != nullptr ||
                   strcmp(config.address, "127.0.0.1") != 0;
  if (!config.enabled && any) {
    say({config.program, ": --ws, --bind, --allow-host, --timeout-ms, --keepalive-ms, --reclaim-grace-ms, --session-prefix, "
                         "--state-key-file, --tls-cert and --tls-key need --http PORT\n"});
    return false;
  }
  if ((config.tls_cert == nullptr) != (config.tls_key == nullptr)) {
    say({config.program, ": --tls-cert and --tls-key go together\n"});
    return false;
  }
  const bool jwt = config.jwt_key != nullptr || config.jwt_secret != nullptr;
  if (!config.enabled && (jwt || config.auth_tokens.size() != 0 || config.issuer != nullptr || config.audience != nullptr)) {
    say({config.program, ": --auth-token, --jwt-key, --jwt-secret, --issuer and --audience need --http PORT\n"});
    return false;
  }
  if ((config.jwt_key != nullptr && config.jwt_secret != nullptr) || (jwt != (config.issuer != nullptr))) {
    say({config.program, ": JWT access tokens need one of --jwt-key and --jwt-secret, and --issuer\n"});
    return false;
  }
  if (config.require_at_jwt && !jwt) {
    say({config.program, ": --require-at-jwt needs --jwt-key or --jwt-secret\n"});
    return false;
  }
  if (config.audience != nullptr && config.auth_tokens.size() == 0 && !jwt) {
    say({config.program, ": --audience needs --auth-token or --jwt-key/--jwt-secret\n"});
    return false;
  }
  return true;
}

// Namespace-scope storage (no function-local statics: their guards pull in runtime locking);
// the transports are built in place once the server is known.
using Engine = emcp::transport::StaticHttpServer<kConnections, kSessions>;
emcp::posix::StaticHttpListener<kConnections + 1> g_net;  // and the broker's (--mqtt)
emcp::transport::HttpOptions g_options;
alignas(Engine) unsigned char g_engine_mem[sizeof(Engine)];
Engine* g_engine = nullptr;

// HTTPS: the TLS layer between the listener and the engine, and what its connections share.
using Tls = emcp::mbedtls::StaticTlsLayer<kConnections>;
emcp::mbedtls::TlsContext g_tls_context;
alignas(Tls) unsigned char g_tls_mem[sizeof(Tls)];
Tls* g_tls = nullptr;
constexpr size_t kPemMax = 16 * 1024;
uint8_t g_cert[kPemMax + 1];
uint8_t g_key[kPemMax + 1];


// Reads a whole file into buf (NUL-terminated, as Mbed TLS wants PEM); its length with the NUL,
// or 0 (the reason on stderr).
size_t read_pem(const char* program, const char* path, uint8_t* buf, size_t cap) {
  const int fd = ::open(path, O_RDONLY | O_CLOEXEC);
  if (fd < 0) {
    say({program, ": cannot open ", path, ": ", strerror(errno), "\n"});
    return 0;
  }
  size_t n = 0;
  for (;;) {
    if (n == cap) {
      ::close(fd);
      say({program, ": ", path, " is larger than ", cap >= 65536 ? "64" : "16", " KiB\n"});
      return 0;
    }
    const ssize_t k = ::read(fd, buf + n, cap - n);
    if (k == 0) break;
    if (k < 0 && errno == EINTR) continue;
    if (k < 0) {
      say({program, ": cannot read ", path, ": ", strerror(errno), "\n"});
      ::close(fd);
      return 0;
    }
    n += static_cast<size_t>(k);
  }
  ::close(fd);
  buf[n] = 0;
  return n + 1;
}


// Bearer-token authorization: the resource server, its static tokens, the JWT key.
emcp::auth::StaticToken g_static[8];
emcp::auth::ResourceServerConfig g_auth_config;
emcp::auth::JwtConfig g_jwt;
emcp::mbedtls::JwtKey g_jwt_key;
emcp::auth::ResourceServer g_auth;  // started by start_auth()
char g_resource[160];
const char* g_issuers[1];

// Sets up the resource server once the port is bound (the default audience names it). False
// (the reason on stderr) when a key does not load or the configuration cannot work.
bool start_auth(const HttpConfig& config, const emcp::mcp::Server& server, bool tls, uint16_t port) {
  for (size_t i = 0; i < config.auth_tokens.size(); ++i) {
    g_static[i].token = config.auth_tokens[i];
    g_static[i].scope = nullptr;  // every scope
    g_static[i].subject = "--auth-token";
  }
  g_auth_config.static_tokens = emcp::Span<const emcp::auth::StaticToken>(g_static, config.auth_tokens.size());
  if (config.audience != nullptr) {
    g_auth_config.resource = config.audience;
  } else {
    emcp::json::BufferSink text(g_resource, sizeof g_resource - 1);
    const bool v6 = strchr(config.address, ':') != nullptr;
    char num_buf[24];
    text.write(tls ? "https://" : "http://");
    if (v6) text.write("[");
    text.write(config.address);
    if (v6) text.write("]");
    text.write(":");
    text.write(num_buf, emcp::json::format_uint64(port, num_buf));
    text.write("/mcp");
    g_resource[text.view().size()] = '\0';
    g_auth_config.resource = g_resource;
  }
  g_auth_config.scopes = config.scopes;
  g_auth_config.required_scope = config.required_scope;
  if (config.jwt_key != nullptr || config.jwt_secret != nullptr) {
    const char* path = config.jwt_key != nullptr ? config.jwt_key : config.jwt_secret;
    const size_t n = read_pem(config.program, path, g_key, kPemMax);
    if (n == 0) return false;
    emcp::Status st;
    if (config.jwt_key != nullptr) {
      st = g_jwt_key.load_public_key(emcp::auth::JwtAlg::kES256, g_key, n);
      if (st != emcp::Status::kOk) st = g_jwt_key.load_public_key(emcp::auth::JwtAlg::kRS256, g_key, n);
    } else {
      size_t len = n - 1;  // without the NUL read_pem added
      while (len > 0 && (g_key[len - 1] == '\n' || g_key[len - 1] == '\r')) --len;
      st = g_jwt_key.load_hmac_secret(g_key, len);
    }
    memset(g_key, 0, sizeof g_key);
    if (st != emcp::Status::kOk) {
      say({config.program, ": ", path, config.jwt_key != nullptr
                                             ? " is not an EC P-256 or RSA (2048 bits or more) public key in PEM\n"
                                             : " is not an HS256 secret (at least 32 bytes, not a PEM key)\n"});
      return false;
    }
    g_jwt.issuer = config.issuer;
    g_jwt.audience = g_auth_config.resource;
    g_jwt.require_at_jwt = config.require_at_jwt;
    g_jwt_key.bind(&g_jwt);
    g_issuers[0] = config.issuer;
    g_auth_config.authorization_servers = emcp::Span<const char* const>(g_issuers, 1);
    g_auth_config.jwt = &g_jwt;
    g_auth_config.unix_time_s = server.platform().unix_time_s;
  }
  const char* unknown = nullptr;
  if (g_auth.start(g_auth_config, server) != emcp::Status::kOk) {
    say({config.program, ": authorization not usable: the audience must be an absolute URI (", g_auth_config.resource,
         ")\n"});
    return false;
  }
  if (g_auth.check(&unknown) != emcp::Status::kOk) {
    say({config.program, ": a scope of ", unknown, " is not among the server's scopes\n"});
    return false;
  }
  g_options.auth = g_auth.hooks();
  return true;
}

// The requestState key of a fleet's instances: SHA-256 of the file's bytes (a final newline
// left out). False (the reason on stderr) when it cannot be read or holds fewer than 32 bytes.
bool load_state_key(const char* program, const char* path, emcp::mcp::Server& server) {
  const size_t n = read_pem(program, path, g_key, kPemMax);
  if (n == 0) return false;
  size_t len = n - 1;  // without the NUL read_pem added
  while (len > 0 && (g_key[len - 1] == '\n' || g_key[len - 1] == '\r')) --len;
  uint8_t key[emcp::crypto::kSha256Size];
  emcp::crypto::Sha256::hash(g_key, len, key);
  memset(g_key, 0, sizeof g_key);
  if (len < 32) {
    say({program, ": ", path, " holds fewer than 32 bytes: not a key\n"});
    return false;
  }
  server.set_request_state_key(key);
  memset(key, 0, sizeof key);
  return true;
}

// Loads the certificate and key and builds the layer on the listener's port. False (the
// reason on stderr) when they do not load.
bool start_tls(const HttpConfig& config, const emcp::Platform& platform) {
  const size_t cert_len = read_pem(config.program, config.tls_cert, g_cert, kPemMax);
  const size_t key_len = cert_len == 0 ? 0 : read_pem(config.program, config.tls_key, g_key, kPemMax);
  if (key_len == 0) return false;
  emcp::mbedtls::TlsOptions options;
  if (config.timeout_ms != 0) options.handshake_timeout_ms = config.timeout_ms;
  const emcp::Status st = g_tls_context.init(platform, g_cert, cert_len, g_key, key_len, options);
  memset(g_key, 0, sizeof g_key);  // the parsed key lives in the context; no copy lingers
  if (st != emcp::Status::kOk) {
    say({config.program, ": TLS certificate or key not usable (", config.tls_cert, ", ", config.tls_key, "): ",
         emcp::mbedtls::TlsContext::error_text(g_tls_context.last_error()), "\n"});
    return false;
  }
  g_tls = new (g_tls_mem) Tls(g_tls_context, g_net.port_interface());
  return true;
}

Figures figures() {
  Figures f;
  f.arena_size = EMCP_ARENA_SIZE;
  if (emcp::transport::LineTransport* link = emcp::posix::served_stdio()) {
    f.messages = link->messages();
    f.arena_high_water = link->arena().high_water();
  } else if (g_engine != nullptr) {
    f.arena_high_water = g_engine->arena_high_water();
    f.http = &g_engine->stats();
    f.connections_in_use = g_engine->connections_in_use();
    f.connections = kConnections;
    f.sessions_in_use = g_engine->sessions_in_use();
    f.sessions = kSessions;
  }
  if (mqtt_arena_high_water() > f.arena_high_water) f.arena_high_water = mqtt_arena_high_water();
  return f;
}

int stdio(emcp::mcp::Server& server, const char* program, const Loop& loop) {
  emcp::transport::StaticLineTransport<> transport(server, &emcp::posix::fd_flush, &g_stdout);
  return emcp::posix::serve_stdio(server, transport, program, loop);
}

int http(emcp::mcp::Server& server, const HttpConfig& config, const Loop& loop) {
  const bool tls = config.tls_cert != nullptr;
  if (config.state_key_file != nullptr && !load_state_key(config.program, config.state_key_file, server)) return 1;
  if (tls && !start_tls(config, server.platform())) return 1;
  Engine& engine =
      *new (g_engine_mem) Engine(server, g_options, tls ? g_tls->port_interface() : g_net.port_interface());
  g_engine = &engine;
  size_t n = 0;
  for (const char* h : {"localhost", "127.0.0.1", "[::1]"}) g_hosts[n++] = h;
  for (const char* h : config.allowed_hosts)
    if (n < sizeof g_hosts / sizeof g_hosts[0]) g_hosts[n++] = h;
  g_options.allowed_hosts = emcp::Span<const char* const>(g_hosts, n);
  g_options.allowed_origins = g_options.allowed_hosts;
  g_options.sha1 = config.websocket ? &emcp::crypto::sha1 : nullptr;
  if (config.timeout_ms != 0) g_options.head_timeout_ms = g_options.body_timeout_ms = config.timeout_ms;
  if (config.keepalive_ms != 0) g_options.keepalive_ms = config.keepalive_ms;
  if (config.reclaim_grace_ms != UINT32_MAX) g_options.reclaim_grace_ms = config.reclaim_grace_ms;
  g_options.session_prefix = config.session_prefix;
  if (config.enabled && g_net.listen(config.address, config.port) != emcp::Status::kOk) {
    char p[24];
    say({config.program, ": cannot listen on ", config.address, " port ", num(config.port, p), ": ",
         strerror(errno), "\n"});
    return 1;
  }
  if ((config.auth_tokens.size() != 0 || config.jwt_key != nullptr || config.jwt_secret != nullptr) &&
      !start_auth(config, server, tls, g_net.bound_port()))
    return 1;
  g_net.set_wake_fd(emcp::posix::wake_fd());  // the server's inbox: other threads wake the loop
  if (tls) {
    g_tls->attach(engine.handler());
    g_net.attach(g_tls->handler());
  } else {
    g_net.attach(engine.handler());
  }
  emcp::posix::catch_stop_signals();
  char p[24];
  const bool v6 = strchr(config.address, ':') != nullptr;
  if (config.enabled)
    say({config.program, ": serving MCP on ", tls ? "https://" : "http://", v6 ? "[" : "", config.address,
         v6 ? "]" : "", ":", num(g_net.bound_port(), p), "/mcp (Streamable HTTP), /sse (HTTP+SSE)",
         config.websocket ? (tls ? ", /ws (WebSocket, wss)" : ", /ws (WebSocket)") : "",
         g_options.auth != nullptr ? "; bearer token required (metadata: /.well-known/oauth-protected-resource/mcp)" : "",
         "\n"});
  if (config.mqtt.url != nullptr && !start_mqtt(server, config, g_net.dialer())) return 1;
  while (!emcp::posix::stop_requested()) {
    if (g_net.run_once(static_cast<int>(loop.wait_ms(100))) != emcp::Status::kOk && errno != EINTR) {
      say({config.program, ": poll failed: ", strerror(errno), "\n"});
      return 1;
    }
    poll_mqtt();
    if (loop.tick) loop.tick();
  }
  stop_mqtt(config.program);
  char a[24], b[24], c[24], d[24], e[24];
  const emcp::transport::HttpStats& st = engine.stats();
  char f[24], g[24], h[24], k[24], l[24], m[24], q[24], r[24];
  say({config.program, ": refused ", num(st.refused_busy, a), " connections; reclaimed ", num(st.reclaimed_slow, b),
       " slow, ", num(st.reclaimed_idle, c), " idle, ", num(st.displaced, d), " over their peer's share; closed ",
       num(st.shed_keepalive, r), " after their answer under pressure; timed out ",
       num(st.timeout_head, e), " heads, ", num(st.timeout_body, f), " bodies, ", num(st.timeout_idle, g), " idle, ",
       num(st.timeout_send, h), " sends; sessions refused ", num(st.session_refused_rate, k), " for rate, ",
       num(st.session_refused_full, l), " for slots, ", num(st.session_evicted, m), " evicted, ",
       num(st.session_expired, q), " expired\n"});
  say({config.program, ": stopped after ", num(g_net.accepted(), a), " connections (",
       num(g_net.refused(), b), " refused when full), arena high-water ",
       num(engine.arena_high_water(), c), " bytes; in use at stop: ", num(engine.connections_in_use(), d),
       " connections, ", num(engine.sessions_in_use(), e), " sessions\n"});
  if (tls) {
    const emcp::mbedtls::TlsStats& t = g_tls->stats();
    say({config.program, ": TLS: ", num(t.handshakes, a), " handshakes (", num(t.resumed, b), " resumed), ",
         num(t.failed, c), " failed, ", num(t.timed_out, d), " timed out, ", num(t.refused_memory, e),
         " refused for memory\n"});
  }
  return 0;
}

}  // namespace serve
}  // namespace posix
EMCP_NS_END
