// tools/bridge/http_gateway.cpp - emcp-bridge --http PORT: serves a UART-only board (or QEMU's
// serial port on TCP) to network MCP clients as Streamable HTTP on the host.
//
// Each HTTP request's JSON-RPC message goes to the board as one line (board_link.h does the
// board's side: readiness, pings, resets); the board's answer comes back on the request's own
// response. The HTTP side is the core's: its request parser (emcp/http/http.h), its status
// and header writers, its admission of a request (emcp/transport/http_security.h: Host/Origin,
// CORS and the preflight, bearer tokens through emcp/auth/resource_server.h) with the engine's
// options (transport::HttpOptions) and defaults; messages are read with the core's JSON-RPC
// decoder. One poll() loop, non-blocking sockets, a bounded number of connections: a slow
// client never stalls the board (its output waits in its own buffer, bounded, and it is
// dropped after HttpOptions::send_timeout_ms without progress).
//
// POST /mcp (Content-Type application/json, Accept application/json and text/event-stream):
//   - One message, or a batch where the session's revision has them (2025-03-26): each message
//     goes to the board as its own line, re-written from the decoded message (never the
//     client's text); a batch's invalid elements are answered here. A request's answer is
//     application/json when it is the first thing for it; text/event-stream when something for
//     it comes first or when the body was a batch; its answer ends the stream. Only
//     notifications or responses: 202.
//   - Ids: every forwarded request gets an unguessable gateway-unique id on the wire
//     ("gw-<random>-N"), and its progressToken one too; the answer and notifications/progress
//     are mapped back. A client's notifications/cancelled goes on only for its own request in
//     flight; a client's response only for an open request of the board's to it.
//   - Routing of what the board sends on its own: route_unrelated() (by what the message says;
//     ambiguous: dropped rather than misdelivered).
//   - Limits: bodies over --max-body (at most kMaxQueue) 413; more than 256 requests in flight, or 1 MiB waiting
//     for the board: 503 with Retry-After: 1; --request-timeout-ms per request (-32603 and a
//     cancel); not JSON, or not JSON-RPC: 400 as the engine.
// Sessions (2024-11-05 .. 2025-11-25): the board has one UART session, so the gateway has one
//   HTTP session. initialize without Mcp-Session-Id opens it: the gateway mints a random id
//   (getrandom(), 128 bits, hex) and returns it on the initialize answer (and every answer of
//   the session). Later requests must carry it: 400 without, 404 for another. A second
//   initialize while the session is live (or opening): 503 with Retry-After, the seconds until
//   the live session's idle expiry (at least 1; the whole --session-idle-ms while a request or
//   a GET stream keeps it busy), and a short body. DELETE /mcp ends it (200); so does
//   --session-idle-ms without requests or a GET stream (default 30 min); the gateway then starts
//   the board's UART session afresh with an initialize of its own (core/src/mcp/session.cpp:
//   deferred calls cancelled, subscriptions and log level reset). An initialize inside the
//   session is forwarded; the session id stays (as the engine).
// MCP 2026-07-28 (MCP-Protocol-Version: 2026-07-28, or a request whose `_meta` names a
//   revision): each request is self-contained, so it is forwarded whatever the session's state,
//   beside it, concurrently - when the board speaks 2026-07-28. The gateway asks the board
//   (server/discover, whenever it becomes ready); a board that does not: 400 "unsupported
//   MCP-Protocol-Version", as the engine built without that era. As the engine: a batch or a
//   response 400, a notification 202 (not forwarded); the Mcp-Method header and, for
//   tools/call, prompts/get, resources/read and the tasks' calls, Mcp-Name (plain or base64)
//   must match the body, and the header's revision the `_meta` one (-32020, 400: the core's
//   check_routing_headers; Mcp-Param-* are left to the board, which sees no headers); an error answer's status: -32601 404, -32020..-32022 400.
//   Closing the response cancels the request (notifications/cancelled to the board).
// GET /mcp: the session's stream for what the board sends outside requests (one at a time: 409
//   for a second; Mcp-Session-Id required). No event ids, no resumption (Last-Event-ID is
//   ignored): the gateway keeps no replay buffer. A comment line every heartbeat_ms (15 s).
// Board reset (its banner again, or the connection lost and back): every request in flight is
//   answered with -32603 on its stream, and the session ends (its GET stream too): the next
//   request naming it gets 404 and the client initializes again (the spec's rule for 404). The
//   stdio mode initializes on the client's behalf instead; an HTTP client has a defined way to
//   start over, and one the gateway cannot see (a new client) must not inherit the old state.
// Security: the engine's options as flags: --allow-host, --allow-origin (403), --cors-origin /
//   --no-cors (preflight 204 before authorization, CORS headers on the answers), --bearer-token
//   (401 with WWW-Authenticate resource_metadata, the RFC 9728 document at
//   /.well-known/oauth-protected-resource[/mcp]); --listen 127.0.0.1 by default: any other
//   address only when named. Timeouts and limits as the engine: 408 for a slow head or body,
//   --max-connections (the longest idle keep-alive connection makes room, else 503 and close).
#include "http_gateway.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <map>
#include <memory>

#include "emcp/auth/resource_server.h"
#include "emcp/json/reader.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/jsonrpc/encode.h"
#include "emcp/mcp/server.h"
#include "emcp/http/http.h"
#include "emcp/transport/http_security.h"
#include "emcp/transport/http_server.h"
#include "emcp/util/arena.h"

namespace bridge {

namespace {

namespace http = emcp::http;
namespace jsonrpc = emcp::jsonrpc;
using emcp::StrView;

constexpr const char kModern[] = "2026-07-28";
constexpr const char kDiscoverId[] = "emcp-gw-discover-";
constexpr size_t kMaxOut = 8u << 20;  // a client that reads nothing is dropped beyond this
constexpr size_t kMaxInFlight = 256;  // requests forwarded and not answered yet: 503 beyond
constexpr size_t kMaxQueue = 1u << 20;  // bytes waiting for the board: 503 beyond
constexpr size_t kMaxBoardRequests = 64;  // the board's requests to the session's client kept
constexpr const char kResetId[] = "emcp-gw-reset-";
constexpr uint32_t kMaxRetryAfterS = 60;

// ---- JSON text: the spans of values, to rewrite ids and tokens in place -------------------------

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

// The span [*vb, *ve) of member `key` of the object starting at `obj`.
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

std::string json_string(StrView v) {
  std::string s = "\"";
  for (char c : v) {
    if (c == '"' || c == '\\') s += '\\';
    if (static_cast<unsigned char>(c) < 0x20) continue;
    s += c;
  }
  return s + "\"";
}

// ---- HTTP heads and bodies through the core's writers -------------------------------------------

class StringSink : public emcp::json::Sink {
 public:
  StringSink() : Sink(storage_, sizeof storage_, &drain_to_text, true) {}
  std::string take() {
    (void)Sink::flush();
    std::string r;
    r.swap(text_);
    return r;
  }

 private:
  static emcp::Status drain_to_text(Sink& s) {
    StringSink& me = static_cast<StringSink&>(s);
    me.text_.append(me.storage_, me.len_);
    me.len_ = 0;
    return emcp::Status::kOk;
  }
  char storage_[512];
  std::string text_;
};

// {"jsonrpc":"2.0","id":null|<none>,"error":{"code":..,"message":..}}
std::string rpc_error(const std::string& id, int code, const std::string& message) {
  return "{\"jsonrpc\":\"2.0\"" + (id.empty() ? std::string() : ",\"id\":" + id) + ",\"error\":{\"code\":" +
         std::to_string(code) + ",\"message\":" + json_string(StrView(message.data(), message.size())) + "}}";
}

// JSON text written with the core's writer.
template <typename F>
std::string written(F&& f) {
  StringSink s;
  emcp::json::Writer w(s);
  f(w);
  return s.take();
}

// An id as JSON text, canonical (the same id always the same text): "" when none.
std::string id_json(const jsonrpc::Id& id) {
  if (id.type == jsonrpc::Id::Type::kInt) return std::to_string(id.num);
  if (id.type == jsonrpc::Id::Type::kString) return written([&](emcp::json::Writer& w) { w.string(id.str); });
  return "";
}

std::string value_json(emcp::json::Value v) {
  return written([&](emcp::json::Writer& w) { emcp::json::write_value(w, v); });
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

// A client's request or notification re-written from what the decoder read (never the client's
// text: a key written with escapes, or anything the decoder accepts and a text scan would not,
// cannot reach the board unmapped): `id` and the progressToken `token` as JSON text ("": none).
std::string message_line(const jsonrpc::Message& m, const std::string& id, const std::string& token) {
  return written([&](emcp::json::Writer& w) {
    w.begin_object();
    w.member_str("jsonrpc", "2.0");
    if (!id.empty()) {
      w.key("id");
      w.raw(StrView(id.data(), id.size()));
    }
    w.member_str("method", m.method);
    if (m.params.exists()) {
      w.key("params");
      write_params(w, m.params, token);
    }
    w.end_object();
  });
}

// A client's response to one of the board's requests, re-written.
std::string response_line(const jsonrpc::Message& m) {
  return written([&](emcp::json::Writer& w) {
    w.begin_object();
    w.member_str("jsonrpc", "2.0");
    const std::string id = id_json(m.id);
    w.key("id");
    w.raw(StrView(id.data(), id.size()));
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

std::string invalid_json(const jsonrpc::Message& m) {
  return written([&](emcp::json::Writer& w) { jsonrpc::write_invalid(w, m); });
}

bool starts_with(const std::string& s, const std::string& prefix) { return s.compare(0, prefix.size(), prefix) == 0; }

// Messages the board sends only for the session (its subscriptions and lists): never to a
// 2026-07-28 request's stream.
bool session_only(StrView method) {
  return method == StrView("notifications/resources/updated") || method == StrView("notifications/resources/list_changed") ||
         method == StrView("notifications/tools/list_changed") || method == StrView("notifications/prompts/list_changed") ||
         method == StrView("notifications/roots/list_changed");
}

bool random_hex(char* out, size_t bytes) {
  unsigned char b[32];
  if (bytes > sizeof b) return false;
  size_t got = 0;
  while (got < bytes) {
    const ssize_t k = getrandom(b + got, bytes - got, 0);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    got += static_cast<size_t>(k);
  }
  for (size_t i = 0; i < bytes; ++i) {
    out[2 * i] = "0123456789abcdef"[b[i] >> 4];
    out[2 * i + 1] = "0123456789abcdef"[b[i] & 15];
  }
  out[2 * bytes] = 0;
  return true;
}

emcp::json::StaticReader<> g_reader;
emcp::StaticArena<(8u << 20)> g_arena;  // a request body, or a board line (at most 1 MiB)
emcp::jsonrpc::Decoder g_decoder(g_reader, g_arena);

uint64_t platform_now() { return now_ms(); }
bool platform_random(void* out, size_t n) {
  return getrandom(out, n, 0) == static_cast<ssize_t>(n);
}
const emcp::Platform kPlatform{&platform_now, &platform_random, nullptr};

// ---- The gateway --------------------------------------------------------------------------------

struct Conn {
  enum class St { kIdle, kRequest, kWaiting, kStream, kClosing };
  int fd = -1;
  uint64_t serial = 0;
  uint64_t gen = 0;          // the request being served (Pending::gen)
  St st = St::kIdle;
  http::RequestParser parser;
  std::string in;            // bytes read, not parsed yet
  std::string body;
  std::string out;           // bytes for the client, not written yet
  uint64_t started_ms = 0, last_ms = 0, out_ms = 0;
  // The request being served.
  int refuse = 0;            // a refusal decided from the head, answered after the body
  const char* refuse_text = nullptr;
  std::string refuse_header;
  bool cors = false, preflight = false;
  std::string document;      // the metadata document to answer
  bool keep_alive = true;
  bool head_sent = false, sse = false, chunked = false;
  bool session_req = false;  // names (or opens) the session
  bool modern = false;       // a 2026-07-28 request
  bool bad_version = false;
  bool batch = false;
  int awaiting = 0;          // its requests the board has not answered
  int status = 200;
  std::string extra;         // header lines for its answer (Mcp-Session-Id)
};

struct Pending {
  std::string orig_id;       // the client's id (JSON text)
  std::string orig_token;    // its progressToken (JSON text), "" when none
  size_t conn = 0;
  uint64_t serial = 0;
  uint64_t gen = 0;          // the HTTP request on that connection
  uint64_t seq = 0;
  uint64_t deadline = 0;     // --request-timeout-ms
  bool session = false;
  bool initialize = false;
  bool opening = false;      // the initialize that opens the session
};

class Gateway final : public BoardLink::Listener {
 public:
  Gateway(const LinkOptions& lo, const GatewayOptions& o) : lo_(lo), o_(o), link_(lo, *this) {}
  int run();

  void on_board_line(const std::string& line) override;
  void on_board_reset(const char* why) override;
  void on_board_ready() override;
  void on_board_lost_input(const std::vector<std::string>& ids) override;

 private:
  enum class SessionState { kNone, kOpening, kOpen };
  enum class Modern { kUnknown, kYes, kNo };

  bool setup();
  void accept_all();
  void on_input(size_t i);
  void process(size_t i);
  void on_head(Conn& c);
  void on_done(Conn& c);
  void on_post(Conn& c);
  void post_stateless(Conn& c, const jsonrpc::Decoded& d);
  void post_session(Conn& c, const jsonrpc::Decoded& d);
  void forward(Conn& c, const jsonrpc::Message& m, bool session, bool initialize, bool opening);
  bool cancel_for(Conn& c, const jsonrpc::Message& m, bool session);
  void route_unrelated(const std::string& line, const jsonrpc::Message& m);
  bool refuse_busy(Conn& c, size_t requests);
  void reset_board_session();
  void deliver(size_t conn, const std::string& json, bool answer, int error_code);
  void start_sse(Conn& c);
  void event(Conn& c, const std::string& json);
  void answer(Conn& c, int status, const std::string& body, const char* type);
  void answer_text(Conn& c, int status, const char* text) {
    answer(c, status, text ? std::string(text) + "\n" : std::string(), text ? "text/plain; charset=utf-8" : nullptr);
  }
  void answer_rpc(Conn& c, int status, int code, const std::string& message, const std::string& id = "null") {
    answer(c, status, rpc_error(c.modern && id == "null" ? "" : id, code, message), "application/json");
  }
  std::string head(Conn& c, int status, const char* type, int64_t length);
  void end_response(Conn& c);
  void end_request(Conn& c);
  void flush(Conn& c);
  void drop(size_t i, const char* why);
  void end_session(const char* why, const std::string& message);
  void fail_pending(bool session_only_, const std::string& message);
  void tick();
  void expire_idle_session(uint64_t now);
  bool conn_live(const Pending& p) const {
    return p.conn < conns_.size() && conns_[p.conn] && conns_[p.conn]->serial == p.serial &&
           conns_[p.conn]->gen == p.gen;
  }
  uint32_t retry_after_s() const;
  bool headers_match(const http::Request& r, const jsonrpc::Message& m, std::string* why) const;
  void log(const std::string& s) { bridge::log(lo_.quiet, s); }

  const LinkOptions& lo_;
  const GatewayOptions& o_;
  BoardLink link_;
  emcp::transport::HttpOptions http_;
  std::vector<const char*> hosts_, origins_, cors_;
  std::vector<emcp::auth::StaticToken> tokens_;
  std::string resource_;                              // the canonical URI (--resource)
  emcp::auth::ResourceServerConfig auth_config_;
  std::unique_ptr<emcp::mcp::Server> auth_server_;   // empty tables: the scopes' owner
  std::unique_ptr<emcp::auth::ResourceServer> auth_;
  int listen_fd_ = -1;
  int port_ = 0;
  std::vector<std::unique_ptr<Conn>> conns_;
  uint64_t serial_ = 0;
  uint64_t gen_ = 0;
  uint64_t next_id_ = 0;
  std::string wire_prefix_;                 // "gw-<random>-": wire ids nobody can guess
  std::vector<std::string> board_reqs_;     // ids (JSON) of the board's requests to the session's client
  bool reset_due_ = false;                  // the board's session is to be started afresh
  int board_resets_sent_ = 0;
  uint64_t accept_pause_until_ = 0;         // accept4 failed for want of fds
  std::map<std::string, Pending> pending_;  // by wire id (JSON text)
  // The session.
  SessionState session_ = SessionState::kNone;
  char session_id_[33] = {};
  emcp::mcp::Version session_version_ = emcp::mcp::kLatestVersion;
  uint64_t session_last_ = 0;
  int get_conn_ = -1;
  uint64_t get_serial_ = 0;
  Modern board_modern_ = Modern::kUnknown;
  int discovers_ = 0;
};

// ---- Set-up -------------------------------------------------------------------------------------

bool Gateway::setup() {
  for (const std::string& s : o_.allow_hosts) hosts_.push_back(s.c_str());
  for (const std::string& s : o_.allow_origins) origins_.push_back(s.c_str());
  for (const std::string& s : o_.cors_origins) cors_.push_back(s.c_str());
  http_.allowed_hosts = emcp::Span<const char* const>(hosts_.data(), hosts_.size());
  http_.allowed_origins = emcp::Span<const char* const>(origins_.data(), origins_.size());
  http_.cors_origins = emcp::Span<const char* const>(cors_.data(), cors_.size());
  http_.cors = o_.cors;
  if (o_.max_body != 0) http_.max_body = o_.max_body;

  char rnd[9];
  wire_prefix_ = std::string("gw-") + (random_hex(rnd, 4) ? rnd : std::to_string(now_ms() & 0xffffffu).c_str()) + "-";
  // An IPv6 literal may come in brackets ("[::1]"): getaddrinfo() takes it without.
  std::string laddr = o_.listen;
  if (laddr.size() > 2 && laddr.front() == '[' && laddr.back() == ']') laddr = laddr.substr(1, laddr.size() - 2);
  addrinfo hints{};
  hints.ai_socktype = SOCK_STREAM;
  hints.ai_flags = AI_PASSIVE | AI_NUMERICHOST;
  addrinfo* res = nullptr;
  if (getaddrinfo(laddr.c_str(), std::to_string(o_.port).c_str(), &hints, &res) != 0 || res == nullptr) {
    log("--listen " + o_.listen + ": not a numeric address");
    return false;
  }
  listen_fd_ = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
  const int one = 1;
  setsockopt(listen_fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  if (listen_fd_ < 0 || bind(listen_fd_, res->ai_addr, res->ai_addrlen) != 0 || listen(listen_fd_, 64) != 0) {
    log("cannot listen on " + o_.listen + ":" + std::to_string(o_.port) + ": " + strerror(errno));
    freeaddrinfo(res);
    return false;
  }
  freeaddrinfo(res);
  sockaddr_storage sa{};
  socklen_t len = sizeof sa;
  getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&sa), &len);
  port_ = ntohs(sa.ss_family == AF_INET6 ? reinterpret_cast<sockaddr_in6*>(&sa)->sin6_port
                                         : reinterpret_cast<sockaddr_in*>(&sa)->sin_port);
  // An IPv6 literal in a URI: in brackets, a zone's '%' as "%25" (RFC 6874).
  std::string host = laddr;
  if (host.find(':') != std::string::npos) {
    const size_t pct = host.find('%');
    if (pct != std::string::npos) host.replace(pct, 1, "%25");
    host = "[" + host + "]";
  }

  if (!o_.bearer_tokens.empty()) {
    // A wildcard address names no host a client can use: the first --allow-host name, else
    // localhost (--resource says otherwise).
    std::string rhost = host;
    if (laddr == "0.0.0.0" || laddr == "::") {
      rhost = "localhost";
      for (const std::string& h : o_.allow_hosts)
        if (h != "*") {
          rhost = h;
          break;
        }
      if (o_.resource.empty())
        log("--listen " + laddr + " with --bearer-token and no --resource: the resource is http://" + rhost + ":" +
            std::to_string(port_) + "/mcp (name the real one with --resource)");
    }
    resource_ = o_.resource.empty() ? "http://" + rhost + ":" + std::to_string(port_) + "/mcp" : o_.resource;
    for (const std::string& t : o_.bearer_tokens) {
      emcp::auth::StaticToken st;
      st.token = t.c_str();
      tokens_.push_back(st);
    }
    auth_config_.resource = resource_.c_str();
    auth_config_.static_tokens = emcp::Span<const emcp::auth::StaticToken>(tokens_.data(), tokens_.size());
    auth_server_.reset(new emcp::mcp::Server(emcp::mcp::ServerInfo("emcp-bridge", "1"), kPlatform));
    auth_.reset(new emcp::auth::ResourceServer(auth_config_, *auth_server_));
    if (auth_->status() != emcp::Status::kOk) {
      log("--bearer-token/--resource: the resource server cannot work with these (resource URI too long?)");
      return false;
    }
    http_.auth = auth_->hooks();
  }
  conns_.resize(static_cast<size_t>(o_.max_connections));
  // The line tests and scripts wait for.
  fprintf(stderr, "[emcp-bridge] serving MCP on http://%s:%d/mcp (the board: %s)\n", host.c_str(), port_,
          lo_.serial.empty() ? (lo_.host + ":" + std::to_string(lo_.port)).c_str() : lo_.serial.c_str());
  return true;
}

// ---- Connections --------------------------------------------------------------------------------

void Gateway::accept_all() {
  for (;;) {
    const int fd = accept4(listen_fd_, nullptr, nullptr, SOCK_NONBLOCK | SOCK_CLOEXEC);
    if (fd < 0) {
      if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM) {
        // No fd for it: the listener stays readable; stop polling it for a while.
        accept_pause_until_ = now_ms() + 200;
        log(std::string("http: accept: ") + strerror(errno) + "; pausing for 200 ms");
      }
      return;
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    size_t slot = conns_.size();
    for (size_t i = 0; i < conns_.size(); ++i)
      if (!conns_[i]) {
        slot = i;
        break;
      }
    if (slot == conns_.size()) {
      // Every slot busy: the keep-alive connection idle the longest makes room (as the engine).
      size_t idlest = conns_.size();
      for (size_t i = 0; i < conns_.size(); ++i)
        if (conns_[i]->st == Conn::St::kIdle && conns_[i]->in.empty() && conns_[i]->out.empty() &&
            (idlest == conns_.size() || conns_[i]->last_ms < conns_[idlest]->last_ms))
          idlest = i;
      if (idlest == conns_.size()) {
        const StrView busy = emcp::transport::busy_response();
        (void)!write(fd, busy.data(), busy.size());
        close(fd);
        log("http: every connection busy: 503");
        continue;
      }
      drop(idlest, "all connections busy; closing the longest idle one");
      slot = idlest;
    }
    conns_[slot].reset(new Conn);
    Conn& c = *conns_[slot];
    c.fd = fd;
    c.serial = ++serial_;
    c.parser.set_max_body(http_.max_body);
    c.last_ms = c.started_ms = now_ms();
  }
}

void Gateway::drop(size_t i, const char* why) {
  if (!conns_[i]) return;
  Conn& c = *conns_[i];
  if (why != nullptr) log(std::string("http: connection dropped: ") + why);
  // Its requests: a 2026-07-28 one is cancelled (closing its response is cancellation); the
  // session's go on on the board, their answers dropped.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (it->second.conn == i && it->second.serial == c.serial) {
      if (!it->second.session)
        link_.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" + it->first +
                   ",\"reason\":\"the HTTP client closed its response\"}}");
      if (it->second.initialize && session_ == SessionState::kOpening) session_ = SessionState::kNone;
      it = pending_.erase(it);
    } else {
      ++it;
    }
  }
  if (get_conn_ == static_cast<int>(i) && get_serial_ == c.serial) get_conn_ = -1;
  close(c.fd);
  conns_[i].reset();
}

void Gateway::flush(Conn& c) {
  while (!c.out.empty()) {
    const ssize_t k = send(c.fd, c.out.data(), c.out.size(), MSG_NOSIGNAL);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    c.out.erase(0, static_cast<size_t>(k));
    c.out_ms = now_ms();
  }
  if (c.out.empty()) c.out_ms = 0;  // set again when output waits (tick())
}

void Gateway::on_input(size_t i) {
  Conn& c = *conns_[i];
  char buf[16384];
  const ssize_t k = recv(c.fd, buf, sizeof buf, 0);
  if (k < 0 && (errno == EINTR || errno == EAGAIN)) return;
  if (k <= 0) return drop(i, nullptr);
  c.in.append(buf, static_cast<size_t>(k));
  c.last_ms = now_ms();
  process(i);
}

// Feeds the parser while the connection takes requests; the rest waits in `in` (pipelining).
void Gateway::process(size_t i) {
  if (link_.resetting()) return;  // run(): held until the board is back
  while (conns_[i]) {
    Conn& c = *conns_[i];
    if (c.st != Conn::St::kIdle && c.st != Conn::St::kRequest) return;
    if (c.st == Conn::St::kIdle) {
      if (c.in.empty()) return;
      c.st = Conn::St::kRequest;
      c.started_ms = now_ms();
    }
    size_t used = 0;
    const http::RequestParser::Event e = c.parser.push(c.in.data(), c.in.size(), &used);
    // The body piece is a view into `in`: used before `in` moves on.
    struct Consume {
      std::string& in;
      size_t n;
      ~Consume() { in.erase(0, n); }
    };
    const Consume consume{c.in, used};
    switch (e) {
      case http::RequestParser::Event::kNeedInput:
        return;  // every byte given is used
      case http::RequestParser::Event::kHead:
        on_head(c);
        break;
      case http::RequestParser::Event::kBody:
        if (c.refuse == 0 && c.body.size() + c.parser.body().size() <= http_.max_body)
          c.body.append(c.parser.body().data(), c.parser.body().size());
        break;
      case http::RequestParser::Event::kDone:
        on_done(c);
        break;
      case http::RequestParser::Event::kError:
        c.keep_alive = false;
        c.cors = false;
        c.extra.clear();
        answer_text(c, c.parser.error_status(), c.parser.error_reason());
        c.in.clear();
        return;
    }
  }
}

// ---- Requests -----------------------------------------------------------------------------------

void Gateway::on_head(Conn& c) {
  const http::Request& r = c.parser.request();
  expire_idle_session(now_ms());
  c.keep_alive = r.keep_alive;
  c.gen = ++gen_;
  c.refuse = 0;
  c.refuse_text = nullptr;
  c.refuse_header.clear();
  c.document.clear();
  c.body.clear();
  c.extra.clear();
  c.status = 200;
  c.session_req = c.modern = c.bad_version = c.batch = false;
  auto refuse = [&](int status, const char* text, const char* header = nullptr) {
    c.refuse = status;
    c.refuse_text = text;
    c.refuse_header = header ? header : "";
  };
  const StrView p = r.path();
  emcp::auth::Grant grant;
  const emcp::transport::Admission a = emcp::transport::admit(http_, r, p == StrView(http_.path), &grant);
  c.cors = a.cors;
  c.preflight = a.preflight;
  if (!a.document.empty()) {
    c.document.assign(a.document.data(), a.document.size());
    return;
  }
  if (a.status != 0) return refuse(a.status, a.text, a.header);
  if (p != StrView(http_.path)) return refuse(404, "Not Found");
  emcp::mcp::Version v = emcp::mcp::kLatestVersion;
  c.bad_version = r.protocol_version.present && !emcp::mcp::parse_version(r.protocol_version.view(), &v);
  const bool modern_header = r.protocol_version.present && !c.bad_version &&
                             emcp::mcp::supports(v, emcp::mcp::Feature::kModern);
  const http::Method m = r.method;
  if (modern_header && m != http::Method::kPost)
    return refuse(405, "Method Not Allowed: protocol revision 2026-07-28 uses POST only", "Allow: POST\r\n");
  if (c.bad_version && m != http::Method::kPost) return refuse(400, "Bad Request: unsupported MCP-Protocol-Version");
  c.modern = modern_header;
  auto session_named = [&]() -> bool {
    if (!r.session_id.present) {
      refuse(400, "Bad Request: Mcp-Session-Id header required");
      return false;
    }
    if (session_ != SessionState::kOpen || r.session_id.view() != StrView(session_id_)) {
      refuse(404, "Not Found: unknown or ended session");
      return false;
    }
    c.session_req = true;
    return true;
  };
  if (m == http::Method::kPost) {
    if (!r.content_type_is("application/json"))
      return refuse(415, "Unsupported Media Type: Content-Type must be application/json");
    if (!r.accepts("application/json") || !r.accepts("text/event-stream"))
      return refuse(406, "Not Acceptable: Accept must list application/json and text/event-stream");
    if (r.session_id.present && !modern_header && !c.bad_version) (void)session_named();
    if (r.expect_continue && c.refuse == 0) c.out += "HTTP/1.1 100 Continue\r\n\r\n";
  } else if (m == http::Method::kGet) {
    if (!r.accepts("text/event-stream")) return refuse(406, "Not Acceptable: Accept must list text/event-stream");
    (void)session_named();
  } else if (m == http::Method::kDelete) {
    (void)session_named();
  } else if (m == http::Method::kOptions) {
    refuse(204, nullptr, "Allow: GET, POST, DELETE, OPTIONS\r\n");
  } else {
    refuse(405, "Method Not Allowed", "Allow: GET, POST, DELETE, OPTIONS\r\n");
  }
}

void Gateway::on_done(Conn& c) {
  c.st = Conn::St::kWaiting;
  if (!c.document.empty()) {
    c.extra = "Cache-Control: max-age=3600\r\n";
    return answer(c, 200, c.document + "\n", "application/json");
  }
  if (c.refuse != 0) {
    c.extra = c.refuse_header;
    return answer_text(c, c.refuse, c.refuse_text);
  }
  const http::Method m = c.parser.request().method;
  if (m == http::Method::kGet) {
    if (get_conn_ >= 0) return answer_text(c, 409, "Conflict: this session has a GET stream already");
    for (size_t i = 0; i < conns_.size(); ++i)
      if (conns_[i].get() == &c) get_conn_ = static_cast<int>(i);
    get_serial_ = c.serial;
    session_last_ = now_ms();
    c.st = Conn::St::kStream;
    c.extra = std::string("Mcp-Session-Id: ") + session_id_ + "\r\n";
    start_sse(c);
    flush(c);
    return;
  }
  if (m == http::Method::kDelete) {
    end_session("DELETE", "The session ended (DELETE) before this request was answered.");
    return answer_text(c, 200, "session ended");
  }
  on_post(c);
}

void Gateway::on_post(Conn& c) {
  // The body as it came (a raw line break inside a string is invalid JSON, as for the engine);
  // what goes to the board is re-written from what was decoded, one line per message.
  g_decoder.begin();
  g_decoder.feed(c.body.data(), c.body.size());
  const jsonrpc::Decoded& d = g_decoder.finish();
  if (d.first == nullptr) return answer_rpc(c, 400, -32600, "Invalid Request: empty body");
  const jsonrpc::Message& first = *d.first;
  const bool modern = c.modern || (!d.batch && first.kind == jsonrpc::Kind::kRequest &&
                                   emcp::mcp::Server::is_modern(first));
  if (modern) {
    c.modern = true;
    return post_stateless(c, d);
  }
  if (c.bad_version) return answer_text(c, 400, "Bad Request: unsupported MCP-Protocol-Version");
  post_session(c, d);
}

// More requests in flight than kMaxInFlight, or more bytes waiting for the board than
// kMaxQueue (a board that stopped reading): 503, Retry-After: 1.
bool Gateway::refuse_busy(Conn& c, size_t requests) {
  const bool many = pending_.size() + requests > kMaxInFlight;
  if (!many && link_.queued() + c.body.size() <= kMaxQueue) return false;
  c.extra += "Retry-After: 1\r\n";
  answer_text(c, 503, many ? "Service Unavailable: too many requests in flight to the board"
                           : "Service Unavailable: the board is not taking what was sent to it");
  return true;
}

// The header checks of 2026-07-28 the board cannot make (it sees no headers): the core's own
// (emcp::mcp::check_routing_headers, the engine's check and its texts): MCP-Protocol-Version
// against `_meta`, Mcp-Method, Mcp-Name against the member it names (plain or base64 form). The
// Mcp-Param-* headers need the tool's table, which only the board has: not checked here.
bool Gateway::headers_match(const http::Request& r, const jsonrpc::Message& m, std::string* why) const {
  const emcp::Result<StrView> version = m.params["_meta"]["io.modelcontextprotocol/protocolVersion"].as_string();
  if (!version.ok()) return true;  // the board answers the missing field (-32602)
  emcp::mcp::RequestHeaders h;
  h.protocol_version = {r.protocol_version.view(), r.protocol_version.present};
  h.method = {r.mcp_method.view(), r.mcp_method.present};
  h.name = {r.mcp_name.view(), r.mcp_name.present};
  const emcp::mcp::HeaderMismatch say = [](void* out, std::initializer_list<emcp::mcp::TextPiece> message) {
    std::string& text = *static_cast<std::string*>(out);
    text.clear();
    for (const emcp::mcp::TextPiece& piece : message) {
      char buf[emcp::mcp::TextPiece::kMaxChars];
      const StrView v = piece.render(buf);
      text.append(v.data(), v.size());
    }
  };
  return emcp::mcp::check_routing_headers(h, m, version.value(), say, why);
}

void Gateway::post_stateless(Conn& c, const jsonrpc::Decoded& d) {
  const jsonrpc::Message& m = *d.first;
  if (d.batch)
    return answer_rpc(c, 400, -32600,
                      "Invalid Request: a POST carries one message at protocol revision 2026-07-28, not a batch");
  switch (m.kind) {
    case jsonrpc::Kind::kInvalid: {
      jsonrpc::Message inv = m;
      if (inv.id.type == jsonrpc::Id::Type::kNull) inv.id = jsonrpc::Id{};
      return answer(c, 400, invalid_json(inv), "application/json");
    }
    case jsonrpc::Kind::kResponse:
    case jsonrpc::Kind::kErrorResponse:
      return answer_rpc(c, 400, -32600, "Invalid Request: a client sends no responses at protocol revision 2026-07-28");
    case jsonrpc::Kind::kNotification:
      return answer_text(c, 202, nullptr);  // none is defined over HTTP at this revision (not forwarded)
    case jsonrpc::Kind::kRequest:
      break;
  }
  if (board_modern_ == Modern::kNo) return answer_text(c, 400, "Bad Request: unsupported MCP-Protocol-Version");
  std::string why;
  if (!headers_match(c.parser.request(), m, &why)) return answer_rpc(c, 400, -32020, why, id_json(m.id));
  if (refuse_busy(c, 1)) return;
  forward(c, m, false, false, false);
}

// A client's notifications/cancelled: forwarded (under the wire id) only for one of its own
// requests in flight (the session's, or this connection's 2026-07-28 one); that request's
// answer is then not awaited. Anything else is dropped: a client cannot cancel another's.
bool Gateway::cancel_for(Conn& c, const jsonrpc::Message& m, bool session) {
  const emcp::json::Value rid = m.params["requestId"];
  jsonrpc::Id id;
  if (rid.is_int()) id = jsonrpc::Id::of(rid.as_int().value());
  else if (rid.is_string()) id = jsonrpc::Id::of(rid.as_string().value());
  const std::string want = id_json(id);
  if (want.empty()) return false;
  for (auto it = pending_.begin(); it != pending_.end(); ++it) {
    const Pending& pd = it->second;
    if (pd.orig_id != want) continue;
    if (session ? !pd.session : (pd.session || pd.conn >= conns_.size() || conns_[pd.conn].get() != &c)) continue;
    const std::string wire = it->first;
    const size_t conn = pd.conn;
    const bool live = conn_live(pd);
    pending_.erase(it);
    link_.send(written([&](emcp::json::Writer& w) {
      w.begin_object();
      w.member_str("jsonrpc", "2.0");
      w.member_str("method", "notifications/cancelled");
      w.key("params");
      w.begin_object();
      w.key("requestId");
      w.raw(StrView(wire.data(), wire.size()));
      const emcp::Result<StrView> reason = m.params["reason"].as_string();
      if (reason.ok()) w.member_str("reason", reason.value());
      w.end_object();
      w.end_object();
    }));
    if (live) {
      Conn& o = *conns_[conn];
      if (o.awaiting > 0) --o.awaiting;
      // The POST being handled ends after its last message (post_session()).
      if (&o != &c && o.awaiting == 0 && o.st == Conn::St::kWaiting) end_response(o);
    }
    return true;
  }
  log("dropped a notifications/cancelled for no request of the client's own in flight");
  return false;
}

void Gateway::post_session(Conn& c, const jsonrpc::Decoded& d) {
  const jsonrpc::Message& first = *d.first;
  if (!c.session_req) {
    if (d.batch || first.kind != jsonrpc::Kind::kRequest || first.method != "initialize") {
      if (!d.batch && first.kind == jsonrpc::Kind::kInvalid) return answer(c, 400, invalid_json(first), "application/json");
      return answer_rpc(c, 400, -32000, "Bad Request: Mcp-Session-Id header required (initialize first)");
    }
    if (session_ != SessionState::kNone) {
      // The board has one UART session, and it is taken.
      c.extra = "Retry-After: " + std::to_string(retry_after_s()) + "\r\n";
      return answer_text(c, 503,
                         "Service Unavailable: the board's one session is in use by another client; retry later");
    }
    if (refuse_busy(c, 1)) return;
    session_ = SessionState::kOpening;
    reset_due_ = false;  // this initialize starts the board's session afresh
    c.session_req = true;
    return forward(c, first, true, true, true);
  }
  session_last_ = now_ms();
  c.extra = std::string("Mcp-Session-Id: ") + session_id_ + "\r\n";
  if (!d.batch && first.kind == jsonrpc::Kind::kInvalid) return answer(c, 400, invalid_json(first), "application/json");
  if (d.batch && !emcp::mcp::supports(session_version_, emcp::mcp::Feature::kBatches))
    return answer_rpc(c, 400, -32600, "Invalid Request: no JSON-RPC batches at this protocol revision");
  size_t requests = 0;
  for (const jsonrpc::Message* m = d.first; m != nullptr; m = m->next) requests += m->kind == jsonrpc::Kind::kRequest;
  if (refuse_busy(c, requests)) return;
  c.batch = d.batch;
  std::vector<std::string> local;  // answers of the gateway's own (a batch's invalid elements)
  for (const jsonrpc::Message* mp = d.first; mp != nullptr; mp = mp->next) {
    const jsonrpc::Message& m = *mp;
    switch (m.kind) {
      case jsonrpc::Kind::kInvalid:
        local.push_back(invalid_json(m));  // never forwarded
        break;
      case jsonrpc::Kind::kRequest:
        forward(c, m, true, m.method == "initialize", false);
        break;
      case jsonrpc::Kind::kNotification:
        if (m.method == "notifications/cancelled") (void)cancel_for(c, m, true);
        else link_.send(message_line(m, "", ""));
        break;
      case jsonrpc::Kind::kResponse:
      case jsonrpc::Kind::kErrorResponse: {
        // Only an answer to one of the board's requests to this client reaches the board.
        const std::string id = id_json(m.id);
        bool known = false;
        for (size_t i = 0; i < board_reqs_.size() && !known; ++i)
          if (board_reqs_[i] == id) {
            board_reqs_.erase(board_reqs_.begin() + static_cast<long>(i));
            known = true;
          }
        if (known) link_.send(response_line(m));
        else log("dropped a client's response to no request of the board's: id " + (id.empty() ? "null" : id));
        break;
      }
    }
  }
  if (c.st != Conn::St::kWaiting) return;
  if (!local.empty()) {
    if (!c.head_sent) start_sse(c);
    for (const std::string& l : local) event(c, l);
  }
  if (c.awaiting == 0) {
    if (requests == 0 && local.empty()) answer_text(c, 202, nullptr);
    else end_response(c);
  }
}

// A request to the board under a wire id (and its progressToken under the same).
void Gateway::forward(Conn& c, const jsonrpc::Message& m, bool session, bool initialize, bool opening) {
  const std::string wire = "\"" + wire_prefix_ + std::to_string(++next_id_) + "\"";
  Pending pd;
  pd.session = session;
  pd.initialize = initialize;
  pd.opening = opening;
  pd.seq = next_id_;
  pd.serial = c.serial;
  pd.gen = c.gen;
  pd.deadline = now_ms() + o_.request_timeout_ms;
  for (size_t i = 0; i < conns_.size(); ++i)
    if (conns_[i].get() == &c) pd.conn = i;
  pd.orig_id = id_json(m.id);
  const emcp::json::Value token = m.params["_meta"]["progressToken"];
  if (token.exists()) pd.orig_token = value_json(token);
  pending_[wire] = pd;
  ++c.awaiting;
  link_.send(message_line(m, wire, token.exists() ? wire : std::string()));
}

// ---- Answers ------------------------------------------------------------------------------------

std::string Gateway::head(Conn& c, int status, const char* type, int64_t length) {
  StringSink h;
  http::write_status_line(h, status);
  if (type != nullptr) http::write_header(h, "Content-Type", StrView(type));
  if (c.chunked) http::write_header(h, "Transfer-Encoding", "chunked");
  else if (length >= 0 && status != 204 && status >= 200) http::write_header(h, "Content-Length", static_cast<uint64_t>(length));
  if (c.sse) http::write_header(h, "Cache-Control", "no-cache");
  h.write(StrView(c.extra.data(), c.extra.size()));
  if (c.cors) emcp::transport::write_cors_headers(http_, h, c.parser.request(), c.preflight);
  if (!c.keep_alive) http::write_header(h, "Connection", "close");
  http::write_end_head(h);
  return h.take();
}

void Gateway::answer(Conn& c, int status, const std::string& body, const char* type) {
  c.chunked = c.sse = false;
  c.out += head(c, status, type, static_cast<int64_t>(body.size()));
  if (status != 204) c.out += body;
  c.head_sent = true;
  end_request(c);
}

void Gateway::start_sse(Conn& c) {
  c.sse = true;
  c.chunked = c.parser.request().version_minor >= 1;
  if (!c.chunked) c.keep_alive = false;  // HTTP/1.0: the body ends with the connection
  c.out += head(c, 200, "text/event-stream", -1);
  c.head_sent = true;
}

void Gateway::event(Conn& c, const std::string& json) {
  const std::string ev = "event: message\ndata: " + json + "\n\n";
  c.last_ms = now_ms();
  if (c.chunked) {
    char n[20];
    snprintf(n, sizeof n, "%zx\r\n", ev.size());
    c.out += n;
    c.out += ev;
    c.out += "\r\n";
  } else {
    c.out += ev;
  }
}

void Gateway::end_response(Conn& c) {
  if (!c.head_sent) start_sse(c);  // nothing came for it (a cancelled request): an empty stream
  if (c.chunked) c.out += "0\r\n\r\n";
  end_request(c);
}

void Gateway::end_request(Conn& c) {
  c.parser.reset();
  c.body.clear();
  c.head_sent = c.sse = c.chunked = false;
  c.awaiting = 0;
  c.last_ms = now_ms();
  if (!c.keep_alive) {
    c.st = Conn::St::kClosing;
    c.in.clear();
    return;
  }
  c.st = Conn::St::kIdle;
  // Pipelined requests go on from the poll loop (process() for connections with input).
}

// An answer or a message of connection `conn`'s request. `answer`: it is the answer (ends it
// when the connection awaits nothing else).
void Gateway::deliver(size_t conn, const std::string& json, bool answer_msg, int error_code) {
  Conn& c = *conns_[conn];
  if (c.st != Conn::St::kWaiting && c.st != Conn::St::kStream) return;
  if (answer_msg && !c.head_sent && !c.batch && c.awaiting == 1) {
    int status = 200;
    if (c.modern && error_code == -32601) status = 404;
    if (c.modern && error_code <= -32020 && error_code >= -32022) status = 400;
    return answer(c, status, json, "application/json");
  }
  if (!c.head_sent) start_sse(c);
  event(c, json);
  if (answer_msg && --c.awaiting <= 0 && c.st == Conn::St::kWaiting) end_response(c);
}

// ---- The board ----------------------------------------------------------------------------------

void Gateway::on_board_line(const std::string& line) {
  g_decoder.begin();
  g_decoder.feed(line.data(), line.size());
  const jsonrpc::Decoded& d = g_decoder.finish();
  if (d.first == nullptr || d.batch) {
    log("dropped from the board (not one message): " + line.substr(0, 200));
    return;
  }
  const jsonrpc::Message& m = *d.first;
  const bool response = m.kind == jsonrpc::Kind::kResponse || m.kind == jsonrpc::Kind::kErrorResponse ||
                        (m.kind == jsonrpc::Kind::kInvalid && m.id.present());
  if (response) {
    const std::string id = id_json(m.id);
    if (starts_with(id, std::string("\"") + kDiscoverId)) {
      bool yes = false;
      for (const emcp::json::Value v : m.result["supportedVersions"].elements())
        yes = yes || (v.as_string().ok() && v.as_string().value() == StrView(kModern));
      board_modern_ = yes ? Modern::kYes : Modern::kNo;
      log(std::string("the board ") + (yes ? "speaks" : "does not speak") + " MCP 2026-07-28");
      return;
    }
    if (starts_with(id, std::string("\"") + kResetId)) return;  // the gateway's own session reset
    auto it = pending_.find(id);
    if (id.empty() && pending_.size() == 1) {
      // An error with a null id (a line the board could not read: torn, or its id damaged)
      // while exactly one request is in flight on the link: it can only be that one's.
      it = pending_.begin();
      log("an error with a null id from the board, attributed to the one request in flight");
    }
    if (it == pending_.end()) {
      log("dropped an answer nobody waits for: " + line.substr(0, 200));
      return;
    }
    const Pending pd = it->second;
    pending_.erase(it);
    std::string out = line;
    size_t b, e;  // the board's own writer: "id" is a plain key
    if (member(out, 0, "id", &b, &e)) out = replaced(out, b, e, pd.orig_id);
    const int code = m.kind == jsonrpc::Kind::kErrorResponse ? static_cast<int>(m.error.code) : 0;
    if (pd.initialize) {
      const emcp::Result<StrView> v = m.result["protocolVersion"].as_string();
      if (!v.ok()) {
        if (pd.opening && session_ == SessionState::kOpening) session_ = SessionState::kNone;
      } else {
        if (!emcp::mcp::parse_version(v.value(), &session_version_)) session_version_ = emcp::mcp::kLatestVersion;
        const std::string vs(v.value().data(), v.value().size());
        if (pd.opening && session_ == SessionState::kOpening) {
          // Only the initialize that opens the session mints its id; one inside it starts the
          // board's session afresh and keeps the id (as the engine).
          if (!random_hex(session_id_, 16)) {
            log("no random bytes for a session id");
            session_ = SessionState::kNone;
          } else {
            session_ = SessionState::kOpen;
            session_last_ = now_ms();
            log("session opened (" + vs + ")");
            if (conn_live(pd)) conns_[pd.conn]->extra = std::string("Mcp-Session-Id: ") + session_id_ + "\r\n";
          }
        } else if (!pd.opening) {
          log("session initialized again (" + vs + ")");
          board_reqs_.clear();
        }
      }
    }
    if (conn_live(pd)) deliver(pd.conn, out, true, code);
    return;
  }
  if (m.kind == jsonrpc::Kind::kNotification && m.method == "notifications/progress") {
    const std::string token = value_json(m.params["progressToken"]);
    size_t b, e;
    auto it = pending_.find(token);
    if (it == pending_.end() || !path(line, {"params", "progressToken"}, &b, &e)) {
      // Its request was answered (or is not one of this gateway's): the token means nothing
      // to any client.
      log("dropped progress for no request in flight: " + line.substr(0, 200));
      return;
    }
    if (conn_live(it->second) && !it->second.orig_token.empty())
      deliver(it->second.conn, replaced(line, b, e, it->second.orig_token), false, 0);
    return;
  }
  if (m.kind != jsonrpc::Kind::kRequest && m.kind != jsonrpc::Kind::kNotification) {
    log("dropped from the board (not JSON-RPC): " + line.substr(0, 200));
    return;
  }
  route_unrelated(line, m);
}

// What the board sends on its own (the UART carries no request id with it), by what it says:
//  - the session's own (resource updates, list changes): the session's oldest request's
//    stream, else its GET stream; never a 2026-07-28 stream; nothing before the answer to the
//    initialize that opens the session (dropped, logged);
//  - a request to the client (sampling, elicitation, roots): the session's, as above, unless a
//    2026-07-28 request is in flight (it may be that one's, and its client cannot answer):
//    then, and with no session stream, answered -32603 at once;
//  - anything else (a log line): the one request in flight when there is exactly one; else the
//    session's when only its requests are in flight, or none is (its GET stream); else dropped.
// Ambiguous: dropped (logged) rather than sent to a client it may not be for.
void Gateway::route_unrelated(const std::string& line, const jsonrpc::Message& m) {
  const Pending* oldest_session = nullptr;
  const Pending* only_modern = nullptr;
  size_t session_n = 0, modern_n = 0;
  for (const auto& kv : pending_) {
    if (kv.second.session) {
      ++session_n;
      if (conn_live(kv.second) && (oldest_session == nullptr || kv.second.seq < oldest_session->seq))
        oldest_session = &kv.second;
    } else {
      ++modern_n;
      only_modern = &kv.second;
    }
  }
  Conn* get = nullptr;
  if (session_ == SessionState::kOpen && get_conn_ >= 0 && conns_[static_cast<size_t>(get_conn_)] &&
      conns_[static_cast<size_t>(get_conn_)]->serial == get_serial_)
    get = conns_[static_cast<size_t>(get_conn_)].get();
  auto to_session = [&]() -> bool {
    // Not while the initialize that opens a session is on its way: whatever the board sends
    // before that answer is the old session's or the gateway's reset's, never the new client's
    // (and on that POST it would start the stream before the session's id is minted).
    if (session_ != SessionState::kOpen) return false;
    if (oldest_session != nullptr) {
      deliver(oldest_session->conn, line, false, 0);
      return true;
    }
    if (get != nullptr) {
      event(*get, line);
      flush(*get);
      return true;
    }
    return false;
  };
  const bool request = m.kind == jsonrpc::Kind::kRequest;
  bool sent = false;
  if (session_only(m.method)) {
    sent = to_session();
  } else if (request) {
    sent = modern_n == 0 && to_session();
  } else if (session_n + modern_n == 1 && modern_n == 1) {
    if (conn_live(*only_modern)) deliver(only_modern->conn, line, false, 0);
    sent = true;
  } else if (modern_n == 0) {
    sent = to_session();
  }
  if (sent) {
    if (request) {
      board_reqs_.push_back(id_json(m.id));
      if (board_reqs_.size() > kMaxBoardRequests) board_reqs_.erase(board_reqs_.begin());
    }
    return;
  }
  if (request) {
    log("the board asked the client (" + std::string(m.method.data(), m.method.size()) +
        ") with no stream that is surely its client's: answered -32603");
    link_.send(rpc_error(id_json(m.id), -32603, "No client stream is open to carry this request (emcp-bridge --http)"));
    return;
  }
  log("dropped (no stream surely for it): " + line.substr(0, 200));
}

void Gateway::fail_pending(bool session_only_, const std::string& message) {
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (session_only_ && !it->second.session) {
      ++it;
      continue;
    }
    const Pending pd = it->second;
    it = pending_.erase(it);
    if (pd.opening && session_ == SessionState::kOpening) session_ = SessionState::kNone;
    if (conn_live(pd)) deliver(pd.conn, rpc_error(pd.orig_id, -32603, message), true, -32603);
  }
}

void Gateway::end_session(const char* why, const std::string& message) {
  if (session_ != SessionState::kNone) {
    log(std::string("session ended (") + why + ")");
    reset_due_ = true;  // the board's UART session still has its state (reset_board_session())
  }
  fail_pending(true, message);
  session_ = SessionState::kNone;
  session_id_[0] = 0;
  board_reqs_.clear();
  if (get_conn_ >= 0 && conns_[static_cast<size_t>(get_conn_)] &&
      conns_[static_cast<size_t>(get_conn_)]->serial == get_serial_) {
    Conn& g = *conns_[static_cast<size_t>(get_conn_)];
    g.st = Conn::St::kWaiting;
    end_response(g);
  }
  get_conn_ = -1;
}

// The board's UART session after the HTTP session ended: started afresh (its subscriptions,
// log level and deferred calls gone: core/src/mcp/session.cpp, on_initialize) by an initialize
// of the gateway's own, whose answer is dropped - once no 2026-07-28 request is in flight (a
// repeated initialize cancels the deferred calls on the UART session, theirs too).
void Gateway::reset_board_session() {
  reset_due_ = false;
  const std::string n = std::to_string(++board_resets_sent_);
  link_.send(std::string("{\"jsonrpc\":\"2.0\",\"id\":\"") + kResetId + n +
             "\",\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
             "\"clientInfo\":{\"name\":\"emcp-bridge-gateway\",\"version\":\"1\"}}}");
  link_.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
  log("the board's session started afresh");
}

void Gateway::on_board_reset(const char* why) {
  const std::string message = "The board reset; this request was lost. Send it again.";
  fail_pending(false, message);
  end_session(why, message);
  reset_due_ = false;  // a new firmware has no old session
  board_modern_ = Modern::kUnknown;
}

// The board lost input: the requests that were on the way fail now, and are cancelled in case
// one reached it after all (its answer, if it comes, finds nobody waiting).
void Gateway::on_board_lost_input(const std::vector<std::string>& ids) {
  for (const std::string& wire : ids) {
    auto it = pending_.find(wire);
    if (it == pending_.end()) continue;
    const Pending pd = it->second;
    pending_.erase(it);
    link_.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" + wire +
               ",\"reason\":\"the board lost input\"}}");
    if (pd.opening && session_ == SessionState::kOpening) session_ = SessionState::kNone;
    if (conn_live(pd))
      deliver(pd.conn,
              rpc_error(pd.orig_id, -32603,
                        "The board lost input on its UART (its receive buffer overflowed); this request may not have "
                        "reached it. Send it again."),
              true, -32603);
  }
}

void Gateway::on_board_ready() {
  link_.send(std::string("{\"jsonrpc\":\"2.0\",\"id\":\"") + kDiscoverId + std::to_string(++discovers_) +
             "\",\"method\":\"server/discover\",\"params\":{\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"" +
             kModern + "\",\"io.modelcontextprotocol/clientCapabilities\":{}}}}");
}

// A second initialize's Retry-After: the seconds until the live session's idle expiry (a
// session kept busy by a request or a GET stream: 10), at least 1, at most kMaxRetryAfterS.
uint32_t Gateway::retry_after_s() const {
  const uint64_t now = now_ms();
  bool busy = get_conn_ >= 0 || session_ == SessionState::kOpening;
  for (const auto& kv : pending_) busy = busy || kv.second.session;
  uint64_t left = o_.session_idle_ms;
  if (busy) left = 10000;
  else if (now - session_last_ < o_.session_idle_ms) left = o_.session_idle_ms - (now - session_last_);
  uint64_t s = (left + 999) / 1000;
  if (s > kMaxRetryAfterS) s = kMaxRetryAfterS;
  return static_cast<uint32_t>(s < 1 ? 1 : s);
}

// ---- Time ---------------------------------------------------------------------------------------

void Gateway::tick() {
  const uint64_t now = now_ms();
  for (size_t i = 0; i < conns_.size(); ++i) {
    if (!conns_[i]) continue;
    Conn& c = *conns_[i];
    if (!c.out.empty()) {
      if (c.out_ms == 0) c.out_ms = now;  // output began to wait
      flush(c);
      if (!c.out.empty() && (now - c.out_ms > http_.send_timeout_ms || c.out.size() > kMaxOut)) {
        drop(i, "its peer stopped reading (send_timeout_ms)");
        continue;
      }
      if (!c.out.empty()) continue;
    }
    if (c.st == Conn::St::kClosing) {
      drop(i, nullptr);
      continue;
    }
    if (c.st == Conn::St::kRequest) {
      const bool in_body = c.parser.in_body();
      const bool slow_head = !in_body && now - c.started_ms > http_.head_timeout_ms;
      const bool slow_body = in_body && now - c.last_ms > http_.body_timeout_ms;
      if (slow_head || slow_body) {
        c.keep_alive = false;
        c.extra.clear();
        c.cors = false;
        answer_text(c, 408, slow_head ? "Request Timeout: request head too slow" : "Request Timeout: body too slow");
        flush(c);
      }
    } else if (c.st == Conn::St::kIdle) {
      if (now - c.last_ms > http_.keepalive_ms) drop(i, nullptr);
    } else if (c.sse && c.head_sent && http_.heartbeat_ms != 0 && now - c.last_ms > http_.heartbeat_ms) {
      // A comment line: proxies and clients see a live stream.
      c.out += c.chunked ? "3\r\n:\n\n\r\n" : ":\n\n";
      c.last_ms = now;
      flush(c);
    }
  }
  // Requests the board has not answered within --request-timeout-ms: -32603, and cancelled.
  for (auto it = pending_.begin(); it != pending_.end();) {
    if (now < it->second.deadline) {
      ++it;
      continue;
    }
    const Pending pd = it->second;
    const std::string wire = it->first;
    it = pending_.erase(it);
    log("no answer from the board within --request-timeout-ms: " + wire + " failed and cancelled");
    if (link_.ready())
      link_.send("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{\"requestId\":" + wire +
                 ",\"reason\":\"no answer within the gateway's --request-timeout-ms\"}}");
    if (pd.opening && session_ == SessionState::kOpening) session_ = SessionState::kNone;
    if (conn_live(pd))
      deliver(pd.conn, rpc_error(pd.orig_id, -32603, "The board did not answer within " +
                                                          std::to_string(o_.request_timeout_ms) + " ms (--request-timeout-ms)"),
              true, -32603);
  }
  expire_idle_session(now);
  if (reset_due_ && session_ == SessionState::kNone && link_.ready() && !link_.resetting()) {
    bool modern = false;
    for (const auto& kv : pending_) modern = modern || !kv.second.session;
    if (!modern) reset_board_session();
  }
}

// The session: busy while a request or its GET stream is open; otherwise it expires after
// --session-idle-ms. Judged by the loop (tick()) and again when a request's head comes
// (on_head()), before the request is routed: a request that comes after the idle time never
// finds the session alive because the loop had not looked yet (a gateway the host did not
// run for a while), and a second initialize then finds the board free.
void Gateway::expire_idle_session(uint64_t now) {
  if (session_ != SessionState::kOpen) return;
  bool busy = get_conn_ >= 0;
  for (const auto& kv : pending_) busy = busy || kv.second.session;
  if (busy) session_last_ = now;
  else if (now - session_last_ > o_.session_idle_ms) end_session("idle for --session-idle-ms", "");
}

int Gateway::run() {
  if (!setup()) return 1;
  if (!link_.start()) return 1;
  std::vector<pollfd> fds;
  while (!stop_requested()) {
    if (!link_.tick()) return 1;
    fds.clear();
    const bool accepting = now_ms() >= accept_pause_until_;
    fds.push_back({accepting ? listen_fd_ : -1, POLLIN, 0});
    fds.push_back({link_.fd(), static_cast<short>(POLLIN | (link_.wants_write() ? POLLOUT : 0)), 0});
    // While a lost board connection is being replaced, what clients send waits (unread, or
    // unparsed): it must not be failed with what was in flight, nor reach the new board late.
    const bool hold = link_.resetting();
    for (const auto& c : conns_) {
      if (!c) {
        fds.push_back({-1, 0, 0});
        continue;
      }
      short ev = 0;
      if (!hold && c->in.size() < http_.max_body + 65536u) ev |= POLLIN;  // bounded read-ahead
      if (!c->out.empty()) ev |= POLLOUT;
      fds.push_back({c->fd, ev, 0});
    }
    const int r = poll(fds.data(), fds.size(), 100);
    if (r < 0 && errno != EINTR) return 1;
    if (r < 0) continue;
    if (fds[1].revents & POLLOUT) {
      if (!link_.flush()) return 1;
    }
    if (fds[1].revents & (POLLIN | POLLHUP | POLLERR)) {
      if (!link_.on_readable()) return 1;
    }
    for (size_t i = 0; i < conns_.size(); ++i) {
      if (!conns_[i]) continue;
      const short re = fds[i + 2].revents;
      if (re & POLLOUT) flush(*conns_[i]);
      if (re & (POLLIN | POLLHUP | POLLERR)) on_input(i);
      if (conns_[i] && conns_[i]->st == Conn::St::kIdle && !conns_[i]->in.empty()) process(i);
      if (conns_[i] && !conns_[i]->out.empty()) flush(*conns_[i]);
    }
    if (fds[0].revents & POLLIN) accept_all();
    tick();
  }
  log("stopped; " + std::to_string(link_.resets()) + " board reset(s) seen");
  return 0;
}

}  // namespace

int run_gateway(const LinkOptions& link, const GatewayOptions& o) {
  catch_stop_signals();
  static Gateway g(link, o);  // large: static storage
  return g.run();
}

}  // namespace bridge
