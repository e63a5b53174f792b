// bench/target/tls.cpp - what TLS costs the server on the target, in instructions: a full TLS 1.2
// handshake (ECDHE-ECDSA, P-256), one resumed with a session ticket, and MCP requests over
// Streamable HTTP inside the TLS connection; then the same requests to the same HTTP engine
// without TLS (the HTTP engine's own cost; no network stack in either).
//
// Both ends run in this firmware: the server is what the sensors TLS image runs (emcp's TLS
// layer, emcp::mbedtls::TlsLayer, in front of the HTTP engine and the sensors application), fed
// by a listener of memory; the client is Mbed TLS's own client (the library is built with both
// roles for this image only). The bytes each side writes wait in a buffer until the other side
// reads them. Only the server is counted: every call into the TLS layer (the ciphertext it
// receives, and what it does with it up to the last byte of its answer) is a window between
// emcp_bench_begin() and emcp_bench_end(), which bench/target/insn_plugin.c counts; a case's
// figure is the sum of its windows. The client's work is not counted, nor a connection's opening
// and closing (the listener's accept and close: the TLS layer's record buffers set up, freed).
// Mbed TLS is built with both roles (emcp_bench_mbedtls): the client's settings apply to the
// server too (2 KiB input records where the shipped server has 4 KiB, SNI, the maximum fragment
// length, SHA-1), which a handshake's count barely sees; its flash is more than the server's.
//
// A handshake's first window is the client's hello: the server's ECDHE key, its signature (two
// multiplications of the curve's base point) and its flight; the second the client's key
// exchange: the shared secret (a multiplication of the client's point) and the Finished.
//
// What makes a count the same on every run: the server's random source is a fixed sequence
// (its keys, nonces and tickets are the same every run: a bench, never a device), the clock is
// the firmware's own (fixed), and interrupts are masked in every window.
//
// The firmware runs the cases at start and prints, after each, one line:
//   case NAME windows=K in=BYTES out=BYTES
// (K counts of the plugin's belong to it; the bytes are what went each way, ciphertext over TLS),
// then `end`.
// bench/target/guest_cases.py reads them. The certificate and key come from the board's
// credentials region (board/credentials.h), which the script provisions with a P-256 key and a
// self-signed certificate openssl makes for the run.
//
// Bench-only firmware (bench/target/firmware.cmake): not in docs/footprint.md, no budget.
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "app.h"
#include "common.h"
#include "board/board.h"
#include "board/credentials.h"
#include "emcp/mbedtls/pool.h"
#include "emcp/mbedtls/tls.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/http_server.h"
#include "mbedtls/ctr_drbg.h"
#include "mbedtls/ssl.h"

namespace {

// ---- a fixed clock and a fixed random sequence ------------------------------------------------

uint64_t g_now_ms = 1000;
uint64_t bench_now_ms() { return g_now_ms; }

const emcp::Platform g_platform = bench::fixed_platform(&bench_now_ms);

// ---- the wire ---------------------------------------------------------------------------------

// What one side wrote and the other has not read yet.
struct Pipe {
  uint8_t bytes[12 * 1024];
  size_t len = 0;
  size_t pos = 0;
  size_t total = 0;  // written since the case began
  size_t put(const void* data, size_t n) {
    if (pos == len) pos = len = 0;
    if (n > sizeof bytes - len) n = sizeof bytes - len;
    memcpy(bytes + len, data, n);
    len += n;
    total += n;
    return n;
  }
  size_t take(void* out, size_t n) {
    if (n > len - pos) n = len - pos;
    memcpy(out, bytes + pos, n);
    pos += n;
    return n;
  }
  bool empty() const { return pos == len; }
};

Pipe g_to_server;
Pipe g_to_client;

// The listener the TLS layer writes its ciphertext to.
struct Listener {
  emcp::Status port_write(uint16_t, const char* data, size_t n, size_t* taken) {
    *taken = g_to_client.put(data, n);
    return emcp::Status::kOk;
  }
  emcp::Status port_wait_writable(uint16_t, uint32_t) { return emcp::Status::kOk; }
  void port_close(uint16_t) { closed = true; }
  bool closed = false;
};
Listener g_listener;

// ---- the server: the sensors application behind HTTP behind TLS ---------------------------------

alignas(8) uint8_t g_tls_pool[64 * 1024];  // both ends' Mbed TLS memory
emcp::mcp::Server g_server(app::kServerInfo, g_platform);
emcp::mbedtls::TlsContext g_tls_context;
emcp::mbedtls::StaticTlsLayer<1> g_tls(g_tls_context, emcp::transport::HttpPort::of(&g_listener));
emcp::transport::HttpOptions g_http_options;
emcp::transport::StaticHttpServer<1, 1, 4096, 2048, 2048> g_http(g_server, g_http_options, g_tls.port_interface());
// The same engine without TLS, on the listener itself: what the HTTP engine alone costs a request
// (the network stack's part, lwIP's, is not in it).
emcp::transport::StaticHttpServer<1, 1, 4096, 2048, 2048> g_plain_http(g_server, g_http_options,
                                                                       emcp::transport::HttpPort::of(&g_listener));
bool g_plain = false;  // the cases over g_plain_http (else over TLS)
emcp::transport::ConnectionHandler server() { return g_plain ? g_plain_http.handler() : g_tls.handler(); }

// ---- the client: Mbed TLS's ---------------------------------------------------------------------

mbedtls_ctr_drbg_context g_client_drbg;
mbedtls_ssl_config g_client_conf;
mbedtls_ssl_context g_client;
mbedtls_ssl_session g_saved;

int client_entropy(void*, unsigned char* out, size_t n) { return bench::fixed_random(out, n) ? 0 : -1; }
int client_send(void*, const unsigned char* data, size_t n) {
  const size_t put = g_to_server.put(data, n);
  return put == 0 ? MBEDTLS_ERR_SSL_WANT_WRITE : static_cast<int>(put);
}
int client_recv(void*, unsigned char* out, size_t n) {
  const size_t got = g_to_client.take(out, n);
  return got == 0 ? MBEDTLS_ERR_SSL_WANT_READ : static_cast<int>(got);
}

// ---- the count --------------------------------------------------------------------------------

uint32_t g_windows = 0;
int g_conn = -1;

using bench::fail;
using bench::say;
using bench::say_number;

// Hands the server what the client wrote, each piece in a counted window.
void deliver() {
  while (!g_to_server.empty()) {
    const uint8_t* data = g_to_server.bytes + g_to_server.pos;
    const size_t n = g_to_server.len - g_to_server.pos;
    const uint32_t mask = emcp::board::critical_enter();
    emcp_bench_begin();
    const size_t taken = server().receive(static_cast<uint16_t>(g_conn), data, n);
    emcp_bench_end();
    emcp::board::critical_exit(mask);
    ++g_windows;
    if (taken == 0) fail("the server took none of the client's bytes", 0);
    g_to_server.pos += taken;
  }
}

void begin_case() {
  g_windows = 0;
  g_to_server.total = 0;
  g_to_client.total = 0;
  g_now_ms += 100;
}

void end_case(const char* name) { bench::case_line(name, g_windows, g_to_server.total, g_to_client.total); }

// A new connection: the server's slot opened (not counted: the listener's accept), the client's
// context set up (over TLS), with the saved session when `resume`.
void connect(bool plain, bool resume) {
  if (g_conn >= 0) server().closed(static_cast<uint16_t>(g_conn));
  g_plain = plain;
  g_to_server.pos = g_to_server.len = 0;
  g_to_client.pos = g_to_client.len = 0;
  g_conn = server().open(emcp::transport::PeerAddress());
  if (g_conn < 0) fail("the server refused the connection", g_conn);
  if (plain) return;
  mbedtls_ssl_free(&g_client);
  mbedtls_ssl_init(&g_client);
  int ret = mbedtls_ssl_setup(&g_client, &g_client_conf);
  if (ret != 0) fail("mbedtls_ssl_setup", ret);
  mbedtls_ssl_set_bio(&g_client, nullptr, client_send, client_recv, nullptr);
  if (resume && (ret = mbedtls_ssl_set_session(&g_client, &g_saved)) != 0) fail("mbedtls_ssl_set_session", ret);
}

// The handshake, the client's steps alternating with the server's (counted) until both are done.
void handshake(const char* name, bool resume) {
  connect(false, resume);
  const uint32_t tickets = g_tls_context.tickets_accepted();
  begin_case();
  for (int round = 0; round < 20; ++round) {
    const int ret = mbedtls_ssl_handshake(&g_client);
    deliver();
    if (ret == 0 && g_to_server.empty() && g_to_client.empty()) {
      if (mbedtls_ssl_get_session(&g_client, &g_saved) != 0) fail("mbedtls_ssl_get_session", 0);
      // Resumed: the server took the client's ticket (the TLS layer counts the tickets it accepts).
      if (resume != (g_tls_context.tickets_accepted() != tickets))
        fail(resume ? "the session was not resumed" : "a full handshake was expected", 0);
      end_case(name);
      return;
    }
    if (ret != 0 && ret != MBEDTLS_ERR_SSL_WANT_READ && ret != MBEDTLS_ERR_SSL_WANT_WRITE)
      fail("the client's handshake", ret);
  }
  fail("the handshake did not end", 0);
}

// One HTTP request through the connection; the answer's head and body read back by the client.
// Returns the answer (NUL-terminated, in `answer`).
char g_answer[4096];
const char* request(const char* name, const char* head, const char* body) {
  begin_case();
  char text[1024];
  const size_t n = bench::request_text(text, sizeof text, head, body);
  int ret = 0;
  if (g_plain) {
    if (g_to_server.put(text, n) != n) fail("the request does not fit the wire", 0);
  } else if ((ret = mbedtls_ssl_write(&g_client, reinterpret_cast<const unsigned char*>(text), n)) !=
             static_cast<int>(n)) {
    fail("the client's write", ret);
  }
  deliver();
  size_t got = 0;
  while (got + 1 < sizeof g_answer) {
    if (g_plain) {
      ret = static_cast<int>(g_to_client.take(g_answer + got, sizeof g_answer - 1 - got));
    } else {
      ret = mbedtls_ssl_read(&g_client, reinterpret_cast<unsigned char*>(g_answer + got), sizeof g_answer - 1 - got);
    }
    if (ret <= 0) break;
    got += static_cast<size_t>(ret);
  }
  g_answer[got] = '\0';
  if (got == 0) fail("no answer", ret);
  end_case(name);
  return g_answer;
}

}  // namespace

int main() {
  emcp::board::init();
  app::init(g_server, &bench_now_ms);
  g_server.set_page_size(5);
  emcp::mbedtls::pool_init(g_tls_pool, sizeof g_tls_pool);
  say("emcp-bench-tls on ");
  say(emcp::board::name());
  say(": a TLS handshake and requests over it, the server's part counted\n");
  emcp::board::Credentials creds;
  if (!emcp::board::credentials(&creds)) fail("no certificate and key in the credentials region", 0);
  if (g_tls_context.init(g_platform, creds.cert, creds.cert_len, creds.key, creds.key_len) != emcp::Status::kOk)
    fail("the certificate or key does not load", g_tls_context.last_error());
  g_tls.attach(g_http.handler());

  mbedtls_ctr_drbg_init(&g_client_drbg);
  mbedtls_ssl_config_init(&g_client_conf);
  mbedtls_ssl_init(&g_client);
  mbedtls_ssl_session_init(&g_saved);
  int ret = mbedtls_ctr_drbg_seed(&g_client_drbg, client_entropy, nullptr, nullptr, 0);
  if (ret != 0) fail("the client's random generator", ret);
  if ((ret = mbedtls_ssl_config_defaults(&g_client_conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                         MBEDTLS_SSL_PRESET_DEFAULT)) != 0)
    fail("mbedtls_ssl_config_defaults", ret);
  // The server's certificate is not what is measured: the client does not check it.
  mbedtls_ssl_conf_authmode(&g_client_conf, MBEDTLS_SSL_VERIFY_NONE);
  mbedtls_ssl_conf_rng(&g_client_conf, mbedtls_ctr_drbg_random, &g_client_drbg);

  // The first handshake after start, then another: whether anything the first builds (Mbed TLS's
  // fixed-point tables, MBEDTLS_ECP_FIXED_POINT_OPTIM) is kept for the next (it is not: a
  // signature copies the key's group, and the ECDH context loads its own, each table built anew).
  handshake("full handshake, the first", false);
  handshake("full handshake, a later one", false);
  handshake("resumed handshake (session ticket)", true);
  bench::session_requests("over TLS", request);
  connect(true, false);
  bench::session_requests("over HTTP, without TLS", request);
  say("pool high-water ");
  say_number(emcp::mbedtls::pool_stats().high_water);
  say("\nend\n");
  for (;;) {
  }
}
