// emcp/posix/serve.h - the library's run loops on Linux: an mcp::Server over stdio, or over
// HTTP (Streamable HTTP on /mcp, HTTP+SSE on /sse, optionally WebSocket on /ws) on a port,
// with the application's periodic work. A program parses its command line and calls one
// (examples/*/main_posix.cpp). Boards have theirs in boards/common (board/serve.h).
//
// Context: the program's main thread; each loop runs until its end (EOF, SIGINT/SIGTERM).
#ifndef EMCP_POSIX_SERVE_H
#define EMCP_POSIX_SERVE_H

#include <stdint.h>

#include <initializer_list>

#include "emcp/loop.h"
#include "emcp/mcp/server.h"
#include "emcp/posix/loop.h"
#include "emcp/transport/http_server.h"
#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace posix {
namespace serve {

/// The application's periodic work (emcp/loop.h: one struct for every serving loop).
using Loop = emcp::Loop;
/// Writes pieces of text to stderr (emcp/posix/loop.h).
using emcp::posix::say;

struct HttpConfig {
  const char* program = "emcp";         ///< for messages on stderr
  bool enabled = false;                 ///< serve HTTP (--http PORT was given)
  const char* address = "127.0.0.1";
  uint16_t port = 0;                    ///< 0: any free port (printed on stderr)
  bool websocket = false;
  uint32_t timeout_ms = 0;              ///< request head/body timeouts (0: the defaults, 10 s)
  uint32_t keepalive_ms = 0;            ///< idle keep-alive connections (0: the default, 60 s)
  /// How long a request may be young before a newcomer may take its slot as slow (HttpOptions::
  /// reclaim_grace_ms; UINT32_MAX: the default, 1 s).
  uint32_t reclaim_grace_ms = UINT32_MAX;
  /// Extra Host/Origin names besides the localhost names ("*": any).
  emcp::Span<const char* const> allowed_hosts;
  /// One instance of a fleet behind a proxy (docs/deploy.md): what its session ids start with
  /// (--session-prefix; HttpOptions::session_prefix), and a file whose bytes (at least 32; a
  /// final newline is not counted) every instance shares, the key of the 2026-07-28
  /// requestState through SHA-256 (--state-key-file; mcp::Server::set_request_state_key).
  const char* session_prefix = nullptr;
  const char* state_key_file = nullptr;
  /// HTTPS/WSS instead of HTTP/WS (both or neither): the server's certificate chain and its
  /// private key, PEM files (each at most 16 KiB).
  const char* tls_cert = nullptr;
  const char* tls_key = nullptr;
  /// Bearer-token authorization (emcp/auth/resource_server.h), on when any token source is
  /// given. Static tokens (--auth-token, each granting every scope):
  emcp::Span<const char* const> auth_tokens;
  /// JWT access tokens: a public key PEM file (EC P-256: ES256, RSA: RS256), or an HS256
  /// secret file (--jwt-secret), with the issuer they must name (also the metadata's
  /// authorization server).
  const char* jwt_key = nullptr;
  const char* jwt_secret = nullptr;
  const char* issuer = nullptr;
  /// Refuse JWTs whose header "typ" is not "at+jwt" (--require-at-jwt; JwtConfig::require_at_jwt).
  bool require_at_jwt = false;
  /// The server's canonical URI: the tokens' audience and the metadata's resource (default
  /// http(s)://ADDR:PORT/mcp from the bound address).
  const char* audience = nullptr;
  /// The application's scopes (scopes_supported) and the ones every request needs.
  emcp::Span<const char* const> scopes;
  const char* required_scope = nullptr;
  /// MCP over MQTT 5 (docs/mqtt.md): the device dials a broker and serves clients through it,
  /// beside HTTP or alone. --mqtt mqtt://HOST[:PORT] or mqtts://HOST[:PORT] with --mqtt-ca,
  /// --mqtt-name (default emcp/<program>), --mqtt-id (default <program>-<8 random hex digits>),
  /// --mqtt-keepalive (default 30 s).
  struct Mqtt {
    const char* url = nullptr;   ///< nullptr: no MQTT
    const char* host = nullptr;  ///< from the URL
    uint16_t port = 1883;
    const char* name = nullptr;
    const char* id = nullptr;
    bool tls = false;            ///< mqtts:// (default port 8883)
    const char* ca = nullptr;    ///< --mqtt-ca: the CAs the broker's certificate must lead to (PEM)
    const char* cert = nullptr;  ///< --mqtt-cert, --mqtt-key: a client certificate (optional)
    const char* key = nullptr;
    uint16_t keep_alive_s = 0;   ///< 0: the client's default (30 s)
  } mqtt;
};

/// The network options every program shares (kHttpUsage says what each does): argv[*i] is
/// looked at; when it is one of them, *i moves past its value and `config` takes it (1); when
/// it is not, nothing changes (0); when its value is bad or missing, the reason goes to stderr
/// (-1: exit with status 2). check_http_options() then checks the whole.
int parse_http_option(int argc, char** argv, int* i, HttpConfig* config);
/// After the command line: false (with the reason on stderr) when options that need --http
/// were given without it, only one of --tls-cert and --tls-key, or JWT options without a
/// key and an issuer (--require-at-jwt included).
bool check_http_options(const HttpConfig& config);
/// The usage lines of those options (each ends with a newline).
extern const char kHttpUsage[];

/// Serves stdin/stdout until the end of stdin or SIGINT/SIGTERM, with a transport of its own
/// (EMCP_ARENA_SIZE, 256 B of output buffer): posix::serve_stdio() (emcp/posix/loop.h). Returns
/// the process exit code (0 for either end).
int stdio(emcp::mcp::Server& server, const char* program, const Loop& loop);

/// Serves HTTP (config.enabled) and MCP over MQTT (config.mqtt.url) until SIGINT/SIGTERM. Returns
/// the process exit code (0 after a signal).
int http(emcp::mcp::Server& server, const HttpConfig& config, const Loop& loop);

/// Figures of the transport being served (for diagnostics tools): messages handled (stdio
/// only), the most arena any message used, and the arena's size; over HTTP, the engine's slots
/// and counters.
struct Figures {
  uint64_t messages = 0;
  uint64_t arena_high_water = 0;
  uint64_t arena_size = 0;
  const emcp::transport::HttpStats* http = nullptr;  ///< nullptr: not serving HTTP
  uint64_t connections_in_use = 0, connections = 0, sessions_in_use = 0, sessions = 0;
};
Figures figures();

/// Parses a decimal port 0..65535; false when it is not one.
bool parse_port(const char* text, uint16_t* port);

}  // namespace serve
}  // namespace posix
EMCP_NS_END

#endif
