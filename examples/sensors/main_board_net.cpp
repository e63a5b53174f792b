// emcp-sensors-net as firmware: the same application (app.cpp), unchanged, served at once on the
// board's UART and over HTTP on port 80 (Streamable HTTP, HTTP+SSE, WebSocket) through lwIP and
// the board's NIC (board/serve_net.h). One mcp::Server: a UART session and up to kSessions HTTP
// sessions share its tools, resources and notifications.
//
// With EMCP_SENSORS_MQTT (app.h; emcp-sensors-mqtt-net, and emcp-sensors-mqtt without HTTP:
// EMCP_SENSORS_HTTP 0) the same server is also reached through an MQTT broker the board dials
// once it has an address (docs/mqtt.md): the broker, the server-name and the server-id come from
// the board's credentials region (board/credentials.h: scripts/run-board --mqtt puts them
// there), else the broker EMCP_SENSORS_MQTT_BROKER (QEMU's user network: the host's port 1883),
// the name devices/sensors/<board> and the id emcp-sensors-<8 random hex digits>.
#include "app.h"
#include "board/board.h"
#include "board/mdns.h"
#include "board/net.h"
#include "board/serve_net.h"
#include "emcp/lwip/http_listener.h"
#include "emcp/lwip/tcp.h"
#include "emcp/crypto/sha1.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"
#include "emcp/transport/line.h"
#if EMCP_SENSORS_MQTT
#include "board/credentials.h"
#include "emcp/json/number.h"
#include "emcp/mqtt/mcp_transport.h"
#endif
#if EMCP_SENSORS_TLS || EMCP_SENSORS_MQTT_TLS

#include "board/credentials.h"
#include "emcp/auth/resource_server.h"
#include "emcp/mbedtls/jwt_key.h"
#include "emcp/mbedtls/pool.h"
#include "emcp/mbedtls/tls.h"
#endif
#include "lwip/mem.h"
#include "lwip/memp.h"
#include "lwip/stats.h"

#ifndef EMCP_SENSORS_NET_CONNECTIONS
#define EMCP_SENSORS_NET_CONNECTIONS 4
#endif
#ifndef EMCP_SENSORS_NET_SESSIONS
#define EMCP_SENSORS_NET_SESSIONS 2
#endif

namespace {
// A small device's profile by default: 4 connections, 2 sessions (docs/footprint.md measures
// it); emcp-sensors-net8 is built with 8 and 8 for the load test.
constexpr size_t kConnections = EMCP_SENSORS_NET_CONNECTIONS;
constexpr size_t kSessions = EMCP_SENSORS_NET_SESSIONS;
constexpr size_t kHttpArena = 2048;  // per connection (and the UART's): one request's parsed JSON
constexpr size_t kHttpOut = 1024;    // per connection: the output buffer (answers stream through)
constexpr size_t kReplay = 1536;     // per session: events kept for Last-Event-ID
}  // namespace
#if EMCP_SENSORS_TLS && !EMCP_SENSORS_HTTP
#error "EMCP_SENSORS_TLS serves HTTPS: it needs EMCP_SENSORS_HTTP"
#endif
#if EMCP_SENSORS_MQTT_TLS && (!EMCP_SENSORS_MQTT || EMCP_SENSORS_TLS)
#error "EMCP_SENSORS_MQTT_TLS dials the broker over TLS: it needs EMCP_SENSORS_MQTT, and Mbed TLS as a client (not EMCP_SENSORS_TLS's server)"
#endif
#if !EMCP_SENSORS_HTTP && !EMCP_SENSORS_MQTT
#error "a network image serves HTTP (EMCP_SENSORS_HTTP), MQTT (EMCP_SENSORS_MQTT) or both"
#endif

emcp::mcp::Server g_server(app::kServerInfo, emcp::board::net_platform());
emcp::transport::StaticLineTransport<kHttpArena> g_link(g_server, &emcp::board::uart_flush, nullptr);
// The connection to the broker has a slot of its own, which HTTP clients never take.
#if EMCP_SENSORS_HTTP
emcp::transport::HttpOptions g_http_options;
emcp::lwip::StaticLwipHttpListener<kConnections, EMCP_SENSORS_MQTT> g_listener;
#else
emcp::lwip::StaticLwipHttpListener<0, 1> g_listener;
#endif
#if EMCP_SENSORS_MQTT
// MCP over MQTT: EMCP_SENSORS_MQTT_CLIENTS sessions at once, answers of up to
// EMCP_SENSORS_MQTT_MESSAGE bytes (written whole into the MQTT client's transmit buffer, as a
// PUBLISH needs its length first: the feature set's longest answer, a tools/list page with
// device_stats' output schema, is 6,721 B without HTTP and 9,337 B with it; firmware.cmake
// gives the image with HTTP 10 KiB), the same arena as a UART or HTTP message.
#ifndef EMCP_SENSORS_MQTT_CLIENTS
#define EMCP_SENSORS_MQTT_CLIENTS 2
#endif
#ifndef EMCP_SENSORS_MQTT_MESSAGE
#define EMCP_SENSORS_MQTT_MESSAGE 7168
#endif
#ifndef EMCP_SENSORS_MQTT_BROKER
#if EMCP_SENSORS_MQTT_TLS
#define EMCP_SENSORS_MQTT_BROKER "mqtts://10.0.2.2:8883"
#else
#define EMCP_SENSORS_MQTT_BROKER "mqtt://10.0.2.2:1883"
#endif
#endif
constexpr size_t kMqttClients = EMCP_SENSORS_MQTT_CLIENTS;
#if EMCP_SENSORS_MQTT_TLS
// mqtts:// (emcp-sensors-mqtt-tls): a TLS layer of one connection between the listener's dialer
// and the MQTT client (Mbed TLS built as a client: EMCP_MBEDTLS_CLIENT), the broker's certificate
// checked against the CA the credentials region carries; Mbed TLS's memory a static pool of
// EMCP_SENSORS_MQTT_TLS_POOL bytes (the parsed CA, the connection's record buffers, the
// handshake's state: device_stats reports them; with the tests' P-256 certificates it held
// 10.7 KiB at most, firmware.cmake).
#ifndef EMCP_SENSORS_MQTT_TLS_POOL
#define EMCP_SENSORS_MQTT_TLS_POOL (16 * 1024)
#endif
alignas(8) uint8_t g_tls_pool[EMCP_SENSORS_MQTT_TLS_POOL];
emcp::mbedtls::TlsContext g_tls_context;
emcp::mbedtls::StaticTlsLayer<1> g_tls(g_tls_context, g_listener.dialer().port);
static emcp::transport::Dialer mqtt_dialer() { return g_tls.dialer(g_listener.dialer()); }
#else
static emcp::transport::Dialer mqtt_dialer() { return g_listener.dialer(); }
#endif
emcp::mqtt::StaticMcpTransport<kMqttClients, EMCP_SENSORS_MQTT_MESSAGE, kHttpArena> g_mqtt(
    g_server, emcp::board::net_platform(), mqtt_dialer());
#endif
#if EMCP_SENSORS_TLS
// HTTPS: the TLS layer between the listener and the engine; Mbed TLS's memory is a static pool
// (EMCP_SENSORS_TLS_POOL bytes: the parsed certificate and key, each open connection's record
// buffers, one handshake at a time).
#ifndef EMCP_SENSORS_TLS_POOL
#define EMCP_SENSORS_TLS_POOL (32 * 1024)
#endif
alignas(8) uint8_t g_tls_pool[EMCP_SENSORS_TLS_POOL];
emcp::mbedtls::TlsContext g_tls_context;
emcp::mbedtls::StaticTlsLayer<kConnections> g_tls(g_tls_context, g_listener.port_interface());
emcp::transport::StaticHttpServer<kConnections, kSessions, kHttpArena, kHttpOut, kReplay> g_http(
    g_server, g_http_options, g_tls.port_interface());

// Bearer-token authorization when the credentials region carries it (board/credentials.h):
// static tokens, a JWT public key with its issuer, the canonical URI; the sensors scopes.
emcp::auth::StaticToken g_tokens[4];
emcp::auth::ResourceServerConfig g_auth_config;
emcp::auth::JwtConfig g_jwt;
emcp::mbedtls::JwtKey g_jwt_key;
const char* g_issuers[1];
emcp::auth::ResourceServer g_auth;  // started by start_auth()

// nullptr when the region asks for no authorization or it is set up; otherwise why not, and
// then it fails closed: the resource server is built without a canonical URI, so every request
// is answered 500 ("authorization misconfigured") and none passes unchecked.
const char* set_up_auth() {
  using emcp::board::Entry;
  size_t n = 0;
  for (; n < sizeof g_tokens / sizeof g_tokens[0]; ++n) {
    const char* t = emcp::board::credential_entry(Entry::kStaticToken, static_cast<unsigned>(n));
    if (t == nullptr) break;
    g_tokens[n].token = t;
    g_tokens[n].scope = nullptr;  // every scope
  }
  const char* key = emcp::board::credential_entry(Entry::kJwtKey);
  const char* issuer = emcp::board::credential_entry(Entry::kIssuer);
  const char* type = emcp::board::credential_entry(Entry::kJwtType);
  const char* clock = emcp::board::credential_entry(Entry::kClock);
  if (clock != nullptr && emcp::StrView(clock) == emcp::StrView("semihosting"))
    emcp::board::set_unix_time(emcp::board::semihosting_time());
  g_auth_config.resource = emcp::board::credential_entry(Entry::kAudience);
  g_auth_config.scopes = app::kScopes;
  g_auth_config.required_scope = app::kRequiredScope;
  g_auth_config.static_tokens = emcp::Span<const emcp::auth::StaticToken>(g_tokens, n);
  if (key == nullptr) return nullptr;
  if (issuer == nullptr) return "a JWT key without its issuer";
  if (type != nullptr && emcp::StrView(type) != emcp::StrView("at+jwt")) return "a JWT type other than at+jwt";
  if (g_jwt_key.load_public_key_pem(emcp::auth::JwtAlg::kES256, key) != emcp::Status::kOk &&
      g_jwt_key.load_public_key_pem(emcp::auth::JwtAlg::kRS256, key) != emcp::Status::kOk)
    return "the JWT key is no EC P-256 or RSA public key";
  if (emcp::board::unix_time_s() == 0) return "JWTs need a wall clock (none set)";
  g_jwt.issuer = issuer;
  g_jwt.audience = g_auth_config.resource;
  g_jwt.require_at_jwt = type != nullptr;
  g_jwt_key.bind(&g_jwt);
  g_issuers[0] = issuer;
  g_auth_config.authorization_servers = emcp::Span<const char* const>(g_issuers, 1);
  g_auth_config.jwt = &g_jwt;
  g_auth_config.unix_time_s = &emcp::board::unix_time_s;
  return nullptr;
}

const char* start_auth() {
  const bool wanted = emcp::board::credential_entry(emcp::board::Entry::kStaticToken) != nullptr ||
                      emcp::board::credential_entry(emcp::board::Entry::kJwtKey) != nullptr;
  if (!wanted) return nullptr;
  const char* why = set_up_auth();
  if (why != nullptr) g_auth_config.resource = nullptr;  // fail closed
  g_http_options.auth = g_auth.hooks();  // refuses everything (500) unless start() succeeds
  if (g_auth.start(g_auth_config, g_server) != emcp::Status::kOk && why == nullptr)
    why = "authorization needs an absolute audience URI";
  return why;
}
#elif EMCP_SENSORS_HTTP
emcp::transport::StaticHttpServer<kConnections, kSessions, kHttpArena, kHttpOut, kReplay> g_http(
    g_server, g_http_options, g_listener.port_interface());
#endif

namespace {

// The network's figures, read once per device_stats call (board_stats) and written from this
// copy (the tool writes its object twice: text and structuredContent must agree).
struct NetFigures {
  int64_t connections_in_use, sessions_in_use, http_arena_high_water, accepted, refused;  // HTTP's first three
  int64_t pool_used, pool_max, pool_size, pcb_used, pcb_max, pcb_size, seg_max, seg_size;
  int64_t heap_used, heap_max, heap_size;
  // What can cost a client its connection or a frame (issue 28): pools found empty, frames the
  // NIC or the driver dropped, SYNs lwIP had no pcb for, TIME_WAIT connections a newer SYN
  // reopened, and lwIP's pcbs per state.
  int64_t pool_failures, pcb_failures, seg_failures, heap_failures, rx_dropped, rx_overrun, syn_dropped, reopened;
  uint16_t tcp_states[EMCP_LWIP_TCP_STATES];
};
NetFigures g_net;
#if EMCP_SENSORS_HTTP
app::PlatformStats::Http g_http_figures;
#endif

void read_network() {
  const emcp::lwip::LwipHttpStats& ls = g_listener.stats();
  const emcp::board::NetCounters nic = emcp::board::net_counters();
  NetFigures& n = g_net;
  n = NetFigures{};
#if EMCP_SENSORS_HTTP
  n.connections_in_use = static_cast<int64_t>(g_http.connections_in_use());
  n.sessions_in_use = static_cast<int64_t>(g_http.sessions_in_use());
  n.http_arena_high_water = static_cast<int64_t>(g_http.arena_high_water());
#endif
  n.accepted = ls.accepted;
  n.refused = static_cast<int64_t>(ls.refused_busy) + ls.refused_reset;
#if MEMP_STATS && MEM_STATS
  const stats_mem& pool = *lwip_stats.memp[MEMP_PBUF_POOL];
  const stats_mem& pcb = *lwip_stats.memp[MEMP_TCP_PCB];
  const stats_mem& seg = *lwip_stats.memp[MEMP_TCP_SEG];
  n.pool_used = pool.used, n.pool_max = pool.max, n.pool_size = pool.avail, n.pool_failures = pool.err;
  n.pcb_used = pcb.used, n.pcb_max = pcb.max, n.pcb_size = pcb.avail, n.pcb_failures = pcb.err;
  n.seg_max = seg.max, n.seg_size = seg.avail, n.seg_failures = seg.err;
  n.heap_used = static_cast<int64_t>(lwip_stats.mem.used), n.heap_max = static_cast<int64_t>(lwip_stats.mem.max);
  n.heap_size = static_cast<int64_t>(lwip_stats.mem.avail), n.heap_failures = lwip_stats.mem.err;
#endif
  // An lwIP without pools and heap of its own (ESP-IDF's: MEMP_MEM_MALLOC, MEM_LIBC_MALLOC) keeps
  // no figures of them: 0.
  n.rx_dropped = nic.rx_dropped;
  n.rx_overrun = nic.rx_overrun;
  n.syn_dropped = ls.syn_dropped;
  n.reopened = emcp_lwip_time_wait_reopened();
  emcp_lwip_tcp_states(n.tcp_states);
}

void write_network(emcp::json::Writer& w) {
  const NetFigures& n = g_net;
#if EMCP_SENSORS_HTTP
  w.member_int("connections_in_use", n.connections_in_use);
  w.member_int("connections", static_cast<int64_t>(kConnections));
  w.member_int("sessions_in_use", n.sessions_in_use);
  w.member_int("sessions", static_cast<int64_t>(kSessions));
  w.member_int("http_arena_high_water", n.http_arena_high_water);
#endif
  w.member_int("accepted", n.accepted);
  w.member_int("refused", n.refused);
  w.member_int("pbuf_pool_used", n.pool_used);
  w.member_int("pbuf_pool_max", n.pool_max);
  w.member_int("pbuf_pool_size", n.pool_size);
  w.member_int("tcp_pcb_used", n.pcb_used);
  w.member_int("tcp_pcb_max", n.pcb_max);
  w.member_int("tcp_pcb_size", n.pcb_size);
  w.member_int("tcp_seg_max", n.seg_max);
  w.member_int("tcp_seg_size", n.seg_size);
  w.member_int("heap_used", n.heap_used);
  w.member_int("heap_max", n.heap_max);
  w.member_int("heap_size", n.heap_size);
  w.member_int("pbuf_pool_failures", n.pool_failures);
  w.member_int("tcp_pcb_failures", n.pcb_failures);
  w.member_int("tcp_seg_failures", n.seg_failures);
  w.member_int("heap_failures", n.heap_failures);
  w.member_int("rx_dropped", n.rx_dropped);
  w.member_int("rx_overrun", n.rx_overrun);
  w.member_int("syn_dropped", n.syn_dropped);
  w.member_int("time_wait_reopened", n.reopened);
  w.key("tcp_states");
  w.begin_array();
  for (uint16_t c : n.tcp_states) w.int64(c);
  w.end_array();
#if EMCP_SENSORS_TLS || EMCP_SENSORS_MQTT_TLS
  const emcp::mbedtls::PoolStats& pool = emcp::mbedtls::pool_stats();
  const emcp::mbedtls::TlsStats& tls = g_tls.stats();
  w.member_int("tls_pool_used", static_cast<int64_t>(pool.in_use));
  w.member_int("tls_pool_max", static_cast<int64_t>(pool.high_water));
  w.member_int("tls_pool_size", static_cast<int64_t>(pool.size));
  w.member_int("tls_pool_failures", pool.failures);
  w.member_int("tls_handshake_peak", static_cast<int64_t>(tls.handshake_peak));
  w.member_int("tls_established_size", static_cast<int64_t>(tls.established_size));
  w.member_int("tls_handshakes", tls.handshakes);
  w.member_int("tls_resumed", tls.resumed);
  w.member_int("tls_failed", tls.failed);
  w.member_int("tls_refused_memory", tls.refused_memory);
#endif
}

#if EMCP_SENSORS_MQTT
app::PlatformStats::Mqtt g_mqtt_figures;
#endif

void board_stats(app::PlatformStats* out) {
  out->platform = emcp::board::name();
  out->messages = g_link.messages();
  // The most any message arena ever held, the UART's, an HTTP connection's or MQTT's (all 2 KiB).
  size_t most = g_link.arena().high_water();
#if EMCP_SENSORS_HTTP
  if (g_http.arena_high_water() > most) most = g_http.arena_high_water();
#endif
#if EMCP_SENSORS_MQTT
  if (g_mqtt.arena().high_water() > most) most = g_mqtt.arena().high_water();
#endif
  out->arena_high_water = most;
  out->arena_size = kHttpArena;  // the UART's arena is as large
  out->stack_high_water = emcp::board::stack_high_water();
  out->stack_size = emcp::board::stack_size();
  out->input_dropped = emcp::board::uart_dropped();
  out->input_held = emcp::board::uart_held();
  read_network();
  out->write_network = &write_network;
#if EMCP_SENSORS_HTTP
  g_http_figures = app::PlatformStats::Http{g_http.connections_in_use(), kConnections, g_http.sessions_in_use(), kSessions,
                                            g_http.stats()};
  out->http = &g_http_figures;
#endif
#if EMCP_SENSORS_MQTT
  const emcp::mqtt::McpStats& m = g_mqtt.stats();
  const emcp::mqtt::ClientStats& c = g_mqtt.client().stats();
  g_mqtt_figures = app::PlatformStats::Mqtt{g_mqtt.client().connected(), g_mqtt.sessions(), kMqttClients,
                                            g_mqtt.arena().high_water(), kHttpArena, c.dials, c.connects, m.sessions,
                                            m.refused, m.too_large + c.too_large, c.qos0_fallbacks, m.stray};
  out->mqtt = &g_mqtt_figures;
#endif
}

#if EMCP_SENSORS_MQTT
// Where the board finds its broker and what it calls itself (board/credentials.h's entries, else
// the defaults above), and whether it serves MQTT: `problem` says why not.
struct MqttSettings {
  char host[16];
  uint16_t port;
  char id[65];
  char name[129];
  const char* problem;
};
MqttSettings g_mqtt_settings;
bool g_mqtt_started = false;

// Copies `text` into `out` (`cap` bytes with the NUL); false when it is empty or does not fit.
bool copy_text(const char* text, char* out, size_t cap) {
  size_t n = 0;
  while (text[n] != '\0' && n + 1 < cap) {
    out[n] = text[n];
    ++n;
  }
  out[n] = '\0';
  return n != 0 && text[n] == '\0';
}

// "mqtt://A.B.C.D[:PORT][/]" (mqtts:// in the image that dials over TLS) into host and port;
// false when it is not one (a name: the board has no resolver, ports/lwip's dialer).
bool parse_broker(const char* url, MqttSettings* s) {
#if EMCP_SENSORS_MQTT_TLS
  static const char kScheme[] = "mqtts://";
  uint32_t port = 8883;
#else
  static const char kScheme[] = "mqtt://";
  uint32_t port = 1883;
#endif
  for (size_t i = 0; i + 1 < sizeof kScheme; ++i)
    if (url[i] != kScheme[i]) return false;
  const char* p = url + sizeof kScheme - 1;
  size_t n = 0;
  while ((p[n] >= '0' && p[n] <= '9') || p[n] == '.') ++n;
  if (n < 7 || n >= sizeof s->host) return false;
  for (size_t i = 0; i < n; ++i) s->host[i] = p[i];
  s->host[n] = '\0';
  p += n;
  if (*p == ':') {
    port = 0;
    ++p;
    const char* digits = p;
    while (*p >= '0' && *p <= '9' && port <= 65535) port = port * 10 + static_cast<uint32_t>(*p++ - '0');
    if (p == digits || port == 0 || port > 65535) return false;
  }
  if (*p == '/') ++p;
  s->port = static_cast<uint16_t>(port);
  return *p == '\0';
}

#if EMCP_SENSORS_MQTT_TLS
// The TLS client's settings from the credentials region: the CA (required), a client certificate
// and key (optional, together), the name the broker's certificate carries when the URL gives an
// address. nullptr when they load; otherwise why not (the board then does not dial).
const char* set_up_mqtt_tls() {
  using emcp::board::Entry;
  emcp::mbedtls::pool_init(g_tls_pool, sizeof g_tls_pool);
  const char* ca = emcp::board::credential_entry(Entry::kMqttCa);
  const char* cert = emcp::board::credential_entry(Entry::kMqttCert);
  const char* key = emcp::board::credential_entry(Entry::kMqttKey);
  if (ca == nullptr) return "mqtts:// needs the broker's CA in the credentials region";
  if ((cert == nullptr) != (key == nullptr)) return "the MQTT client certificate and key go together";
  emcp::mbedtls::TlsOptions options;
  options.server_name = emcp::board::credential_entry(Entry::kMqttTlsName);
  const auto bytes = [](const char* text) { return reinterpret_cast<const uint8_t*>(text); };
  const auto size = [](const char* text) { return text == nullptr ? 0 : emcp::StrView(text).size() + 1; };
  if (g_tls_context.init_client(emcp::board::net_platform(), bytes(ca), size(ca), bytes(cert), size(cert), bytes(key),
                                size(key), options) != emcp::Status::kOk)
    return "the MQTT TLS settings do not load (the CA, or the client certificate and key)";
  return nullptr;
}
#endif

void set_up_mqtt() {
  using emcp::board::Entry;
  MqttSettings& s = g_mqtt_settings;
  s = MqttSettings{};
  const char* broker = emcp::board::credential_entry(Entry::kMqttBroker);
  if (!parse_broker(broker != nullptr ? broker : EMCP_SENSORS_MQTT_BROKER, &s)) {
#if EMCP_SENSORS_MQTT_TLS
    s.problem = "the MQTT broker is not mqtts://IPv4[:PORT] (this image dials over TLS)";
#else
    s.problem = "the MQTT broker is not mqtt://IPv4[:PORT] (mqtts://: the image emcp-sensors-mqtt-tls)";
#endif
    return;
  }
#if EMCP_SENSORS_MQTT_TLS
  if ((s.problem = set_up_mqtt_tls()) != nullptr) return;
#endif
  const char* name = emcp::board::credential_entry(Entry::kMqttName);
  const char* id = emcp::board::credential_entry(Entry::kMqttId);
  emcp::json::BufferSink text(s.name, sizeof s.name - 1);
  if (name == nullptr) {
    text.write("devices/sensors/");
    text.write(emcp::board::name());
    s.name[text.view().size()] = '\0';
  } else if (!copy_text(name, s.name, sizeof s.name)) {
    s.problem = "the MQTT server-name is empty or longer than 128 bytes";
    return;
  }
  if (id == nullptr) {
    uint8_t r[4] = {};
    (void)emcp::board::net_random(r, sizeof r);
    static const char kHex[] = "0123456789abcdef";
    static const char kPrefix[] = "emcp-sensors-";
    size_t n = 0;
    for (; kPrefix[n] != '\0'; ++n) s.id[n] = kPrefix[n];
    for (uint8_t b : r) {
      s.id[n++] = kHex[b >> 4];
      s.id[n++] = kHex[b & 15];
    }
    s.id[n] = '\0';
  } else if (!copy_text(id, s.id, sizeof s.id)) {
    s.problem = "the MQTT server-id is empty or longer than 64 bytes";
    return;
  }
  g_mqtt.options().server_id = s.id;
  g_mqtt.options().server_name = s.name;
  g_mqtt.options().description = app::kServerInfo.description;
}

// From net_poll(), outside lwIP's processing: the first address the board gets starts MQTT (the
// client keeps the connection up from then on, dialing again after any loss).
void on_address(const emcp::board::NetState& state) {
  if (!state.bound || g_mqtt_started || g_mqtt_settings.problem != nullptr) return;
  if (g_mqtt.start(g_mqtt_settings.host, g_mqtt_settings.port) == emcp::Status::kOk) {
    g_mqtt_started = true;
  } else {
    g_mqtt_settings.problem = "the MQTT server-id or server-name has a character MCP over MQTT forbids";
    app::log(emcp::mcp::LogLevel::kError, g_mqtt_settings.problem);
  }
}

void tick() {
  app::tick();
  if (g_mqtt_started) g_mqtt.poll();
}

// The banner's program text: what it serves over MQTT, and where.
const char* mqtt_banner(const char* program) {
  static char line[384];
  emcp::json::BufferSink text(line, sizeof line - 1);
  text.write(program);
#if EMCP_SENSORS_MQTT_TLS
  if (!emcp::board::net_random_is_cryptographic())
    text.write(" (TEST-ONLY entropy for TLS's keys: this board has no TRNG; do not deploy)");
#endif
  if (g_mqtt_settings.problem != nullptr) {
    text.write(" (not over MQTT: ");
    text.write(g_mqtt_settings.problem);
  } else {
#if EMCP_SENSORS_MQTT_TLS
    text.write(" (MCP over MQTT (TLS) through ");
#else
    text.write(" (MCP over MQTT through ");
#endif
    text.write(g_mqtt_settings.host);
    text.write(":");
    char num[24];
    text.write(num, emcp::json::format_uint64(g_mqtt_settings.port, num));
#if EMCP_SENSORS_MQTT_TLS
    if (g_tls_context.options().server_name != nullptr) {
      text.write(", certificate name ");
      text.write(g_tls_context.options().server_name);
    }
#endif
    text.write(" as server id ");
    text.write(g_mqtt_settings.id);
    text.write(", name ");
    text.write(g_mqtt_settings.name);
  }
  text.write(")");
  line[text.view().size()] = '\0';
  return line;
}
#endif

}  // namespace

/// The firmware; never returns. main() on the Cortex-M boards, a FreeRTOS task on ESP-IDF
/// (boards/esp32/examples/sensors_net builds this file with EMCP_SENSORS_NO_MAIN).
void sensors_net_firmware() {
  emcp::board::init();
  app::init(g_server, &emcp::board::now_ms);
  app::set_stats_source(&board_stats);
  g_server.set_page_size(5);
  emcp::board::HttpService net;
#if EMCP_SENSORS_HTTP
  g_http_options.sha1 = &emcp::crypto::sha1;  // WebSocket on /ws
  net.http = &g_http;
  net.options = &g_http_options;
#endif
#if EMCP_SENSORS_TLS
  // The certificate and key from the board's credentials region. Without them the layer
  // refuses every connection (a TLS alert), and the banner says why.
  emcp::mbedtls::pool_init(g_tls_pool, sizeof g_tls_pool);
  emcp::board::Credentials creds;
  const char* program = emcp::board::net_random_is_cryptographic()
                            ? "emcp-sensors-tls"
                            : "emcp-sensors-tls (TEST-ONLY entropy: this board has no TRNG; do not deploy)";
  if (!emcp::board::credentials(&creds)) {
    program = "emcp-sensors-tls (no TLS credentials provisioned: connections refused)";
  } else if (g_tls_context.init(emcp::board::net_platform(), creds.cert, creds.cert_len, creds.key, creds.key_len) !=
             emcp::Status::kOk) {
    program = "emcp-sensors-tls (the provisioned certificate or key does not load: connections refused)";
  } else if (start_auth() != nullptr) {
    program = "emcp-sensors-tls (the provisioned authorization is not usable: every request refused)";
  } else if (g_http_options.auth != nullptr) {
    program = emcp::board::net_random_is_cryptographic()
                  ? "emcp-sensors-tls (bearer token required)"
                  : "emcp-sensors-tls (bearer token required; TEST-ONLY entropy: this board has no TRNG; do not deploy)";
  }
  g_tls.attach(g_http.handler());
  net.front = g_tls.handler();
#elif EMCP_SENSORS_HTTP
  const char* program = "emcp-sensors-net";
#else
  const char* program = "emcp-sensors";
#endif
  net.listener = &g_listener;
  emcp::board::Loop loop;
  emcp::board::NetConfig config;
#if EMCP_SENSORS_MQTT
  set_up_mqtt();
  program = mqtt_banner(program);
  loop.tick = &tick;
  config.on_address = &on_address;
#else
  loop.tick = &app::tick;
#endif
  // Announced on the LAN over mDNS once the board has an address (board/mdns.h): `_mcp._tcp`,
  // the board's name, the TXT records of what it serves (an image without HTTP announces
  // nothing: the call gives `config` back).
  emcp::board::MdnsOptions mdns;
#if EMCP_SENSORS_TLS
  mdns.tls = true;
#endif
  emcp::board::serve_uart_and_http(g_server, g_link, program, loop, net,
                                   emcp::board::announce_over_mdns(config, net, mdns));
}

#ifndef EMCP_SENSORS_NO_MAIN
int main() { sensors_net_firmware(); }
#endif
