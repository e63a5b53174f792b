#include "tls_world.h"

#include <stdio.h>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/debug.h"
#include "mbedtls/ecp.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/pk.h"
#include "mbedtls/x509_crt.h"

#include "../unit/mcp_fixture_app.h"

namespace tls_world {

using emcp::Status;

namespace {

// ---- Randomness: a CTR-DRBG whose "entropy" is a fixed function of a seed string.

mbedtls_ctr_drbg_context g_drbg;
bool g_drbg_ready = false;
char g_seed[64];

int fixed_entropy(void* ctx, unsigned char* out, size_t n) {
  const char* s = static_cast<const char*>(ctx);
  const size_t k = strlen(s);
  for (size_t i = 0; i < n; ++i) out[i] = static_cast<unsigned char>(static_cast<size_t>(s[i % k]) * 7u + i);
  return 0;
}

// ---- The platform the engine and the TLS context share.

char g_log[256];

void log_line(const char* text, size_t n) {
  if (n >= sizeof g_log) n = sizeof g_log - 1;
  memcpy(g_log, text, n);
  g_log[n] = '\0';
}

// ---- The alerts a client receives (WorldOptions::client_alerts): Mbed TLS 2.28 reports each at
// debug level 2 as "got an alert message, type: [LEVEL:DESCRIPTION]" (ssl_msg.c), once per
// alert record; it belongs to the client the world is stepping (the clients only read there).
Client* g_stepping = nullptr;

void client_debug(void*, int, const char*, int, const char* text) {
  static const char kAlert[] = "got an alert message, type: [";
  const char* at = strstr(text, kAlert);
  if (at == nullptr || g_stepping == nullptr) return;
  unsigned level = 0, description = 0;
  if (sscanf(at + sizeof kAlert - 1, "%u:%u]", &level, &description) != 2) return;
  ++g_stepping->alerts;
  g_stepping->alert_level = static_cast<uint8_t>(level);
  g_stepping->alert_description = static_cast<uint8_t>(description);
}

bool would_block(int ret) { return ret == MBEDTLS_ERR_SSL_WANT_READ || ret == MBEDTLS_ERR_SSL_WANT_WRITE; }

// ---- Credentials

bool make_key(mbedtls_pk_context* pk) {
  return mbedtls_pk_setup(pk, mbedtls_pk_info_from_type(MBEDTLS_PK_ECKEY)) == 0 &&
         mbedtls_ecp_gen_key(MBEDTLS_ECP_DP_SECP256R1, mbedtls_pk_ec(*pk), &rng, nullptr) == 0;
}

bool pem_len(Pem& out) {
  const void* end = memchr(out.data, '\0', sizeof out.data);
  if (end == nullptr) return false;
  out.len = static_cast<size_t>(static_cast<const uint8_t*>(end) - out.data) + 1;
  return true;
}

bool write_key(mbedtls_pk_context* pk, Pem& out) {
  return mbedtls_pk_write_key_pem(pk, out.data, sizeof out.data) == 0 && pem_len(out);
}

bool write_cert(mbedtls_pk_context* subject_key, mbedtls_pk_context* issuer_key, const char* subject,
                const char* issuer, bool ca, int serial, Pem& out) {
  mbedtls_x509write_cert w;
  mbedtls_x509write_crt_init(&w);
  mbedtls_mpi sn;
  mbedtls_mpi_init(&sn);
  mbedtls_x509write_crt_set_version(&w, MBEDTLS_X509_CRT_VERSION_3);
  mbedtls_x509write_crt_set_md_alg(&w, MBEDTLS_MD_SHA256);
  mbedtls_x509write_crt_set_subject_key(&w, subject_key);
  mbedtls_x509write_crt_set_issuer_key(&w, issuer_key);
  const bool ok =
      mbedtls_mpi_lset(&sn, serial) == 0 && mbedtls_x509write_crt_set_serial(&w, &sn) == 0 &&
      mbedtls_x509write_crt_set_subject_name(&w, subject) == 0 &&
      mbedtls_x509write_crt_set_issuer_name(&w, issuer) == 0 &&
      mbedtls_x509write_crt_set_validity(&w, "20200101000000", "20991231235959") == 0 &&
      mbedtls_x509write_crt_set_basic_constraints(&w, ca ? 1 : 0, ca ? 0 : -1) == 0 &&
      mbedtls_x509write_crt_set_key_usage(
          &w, ca ? MBEDTLS_X509_KU_KEY_CERT_SIGN : MBEDTLS_X509_KU_DIGITAL_SIGNATURE) == 0 &&
      mbedtls_x509write_crt_set_subject_key_identifier(&w) == 0 &&
      mbedtls_x509write_crt_set_authority_key_identifier(&w) == 0 &&
      mbedtls_x509write_crt_pem(&w, out.data, sizeof out.data, &rng, nullptr) == 0 && pem_len(out);
  mbedtls_mpi_free(&sn);
  mbedtls_x509write_crt_free(&w);
  return ok;
}

bool make_credentials(Credentials& c) {
  mbedtls_pk_context ca_key, server_key, other_key;
  mbedtls_pk_init(&ca_key);
  mbedtls_pk_init(&server_key);
  mbedtls_pk_init(&other_key);
  const bool ok = make_key(&ca_key) && make_key(&server_key) && make_key(&other_key) &&
                  write_cert(&ca_key, &ca_key, "CN=emcp test CA,O=emcp", "CN=emcp test CA,O=emcp", true, 1, c.ca) &&
                  write_cert(&server_key, &ca_key, "CN=localhost,O=emcp", "CN=emcp test CA,O=emcp", false, 2, c.cert) &&
                  write_key(&server_key, c.key) && write_key(&other_key, c.other_key);
  mbedtls_pk_free(&other_key);
  mbedtls_pk_free(&server_key);
  mbedtls_pk_free(&ca_key);
  return ok;
}

Credentials g_credentials;
bool g_credentials_made = false;

}  // namespace

void reset_random(const char* seed) {
  if (g_drbg_ready) mbedtls_ctr_drbg_free(&g_drbg);
  snprintf(g_seed, sizeof g_seed, "%s", seed);
  mbedtls_ctr_drbg_init(&g_drbg);
  g_drbg_ready = mbedtls_ctr_drbg_seed(&g_drbg, &fixed_entropy, g_seed,
                                       reinterpret_cast<const unsigned char*>(g_seed), strlen(g_seed)) == 0;
}

bool random(void* out, size_t n) {
  if (!g_drbg_ready) reset_random();
  auto* p = static_cast<unsigned char*>(out);
  while (n != 0) {
    const size_t k = n < MBEDTLS_CTR_DRBG_MAX_REQUEST ? n : MBEDTLS_CTR_DRBG_MAX_REQUEST;
    if (mbedtls_ctr_drbg_random(&g_drbg, p, k) != 0) return false;
    p += k;
    n -= k;
  }
  return true;
}

int rng(void*, unsigned char* out, size_t n) { return random(out, n) ? 0 : MBEDTLS_ERR_CTR_DRBG_ENTROPY_SOURCE_FAILED; }

const Credentials& credentials() {
  if (!g_credentials_made) {
    reset_random("credentials");
    g_credentials.ok = make_credentials(g_credentials);
    g_credentials_made = true;
  }
  return g_credentials;
}

const char* last_log() { return g_log; }
void clear_log() { g_log[0] = '\0'; }

// ---- Pipe

void Pipe::reset() {
  to_server.clear();
  to_client.clear();
  engine_out.clear();
  conn = -1;
  refused = server_closed = engine_closed = client_closed = false;
  window = grant = kUnlimited;
  hold = owes_writable = fail_writes = false;
  writes = short_writes = writable_calls = waits = records = 0;
  for (uint32_t& n : records_of_type) n = 0;
  last_alert_length = 0;
  rec_hdr_len = rec_left = 0;
}

void Pipe::count_records(const uint8_t* p, size_t n) {
  while (n != 0) {
    if (rec_left != 0) {
      const size_t k = n < rec_left ? n : rec_left;
      rec_left -= k;
      p += k;
      n -= k;
      if (rec_left == 0) ++records;
      continue;
    }
    rec_hdr[rec_hdr_len++] = *p++;
    --n;
    if (rec_hdr_len == 5) {
      rec_hdr_len = 0;
      rec_left = static_cast<size_t>(rec_hdr[3]) << 8 | rec_hdr[4];
      if (rec_hdr[0] >= 20 && rec_hdr[0] <= 23) ++records_of_type[rec_hdr[0] - 20];
      if (rec_hdr[0] == 21) last_alert_length = static_cast<uint32_t>(rec_left);
      if (rec_left == 0) ++records;
    }
  }
}

// ---- Client

Client::Client() {
  mbedtls_ssl_init(&ssl);
  mbedtls_ssl_session_init(&session);
}

Client::~Client() {
  release();
  mbedtls_ssl_session_free(&session);
}

void Client::release() {
  if (ssl_ready_) mbedtls_ssl_free(&ssl);
  mbedtls_ssl_init(&ssl);
  ssl_ready_ = false;
}

size_t Client::unread(const char** p) {
  *p = received.chars() + read_cursor;
  const size_t n = received.size() - read_cursor;
  read_cursor = received.size();
  return n;
}

int Client::bio_send(void* ctx, const unsigned char* buf, size_t len) {
  Pipe& p = static_cast<Client*>(ctx)->pipe;
  if (p.client_closed) return MBEDTLS_ERR_NET_CONN_RESET;
  if (p.server_closed) return static_cast<int>(len);  // gone unread, as into a socket the peer closed
  const size_t k = len < p.to_server.space() ? len : p.to_server.space();
  if (k == 0) return MBEDTLS_ERR_SSL_WANT_WRITE;
  (void)p.to_server.append(buf, k);
  return static_cast<int>(k);
}

int Client::bio_recv(void* ctx, unsigned char* buf, size_t len) {
  Pipe& p = static_cast<Client*>(ctx)->pipe;
  if (p.to_client.empty()) return p.server_closed ? 0 : MBEDTLS_ERR_SSL_WANT_READ;
  const size_t k = len < p.to_client.size() ? len : p.to_client.size();
  memcpy(buf, p.to_client.data(), k);
  p.to_client.consume(k);
  return static_cast<int>(k);
}

// ---- World

World::World(const WorldOptions& options)
    : engine_platform_(&fixture::now_ms, options.engine_random != nullptr ? options.engine_random : &tls_world::random,
                       &log_line),
      tls_platform_(&fixture::now_ms, &tls_world::random, &log_line),
      server(fixture::info(), engine_platform_),
      context(options.context != nullptr ? *options.context : own_context_),
      tls(context, net_port()),
      http(server, http_options, tap_port()) {
  fixture::install(server);
  http_options.sha1 = options.sha1;
  layer_port_ = tls.port_interface();
  tls.attach(http.handler());
  handler_ = tls.handler();
  clear_log();
  const Credentials& cred = credentials();
  if (!cred.ok) note_fault("the test credentials could not be made");
  if (options.init_tls && options.context == nullptr)
    init_status_ = context.init(tls_platform_, cred.cert.data, cred.cert.len, cred.key.data, cred.key.len, options.tls);
  mbedtls_ssl_config_init(&client_conf_);
  mbedtls_x509_crt_init(&ca_);
  if (mbedtls_ssl_config_defaults(&client_conf_, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                  MBEDTLS_SSL_PRESET_DEFAULT) != 0 ||
      mbedtls_x509_crt_parse(&ca_, cred.ca.data, cred.ca.len) != 0)
    note_fault("client configuration");
  mbedtls_ssl_conf_authmode(&client_conf_, MBEDTLS_SSL_VERIFY_REQUIRED);
  mbedtls_ssl_conf_ca_chain(&client_conf_, &ca_, nullptr);
  mbedtls_ssl_conf_rng(&client_conf_, &rng, nullptr);
  if (options.client_renegotiation)
    mbedtls_ssl_conf_renegotiation(&client_conf_, MBEDTLS_SSL_RENEGOTIATION_ENABLED);
  if (options.client_alerts) {
    mbedtls_ssl_conf_dbg(&client_conf_, &client_debug, nullptr);
    mbedtls_debug_set_threshold(2);
    debug_raised_ = true;
  }
}

World::~World() {
  if (debug_raised_) mbedtls_debug_set_threshold(0);
  for (Client& c : clients_) c.release();
  for (Pipe*& p : slots_) p = nullptr;
  mbedtls_x509_crt_free(&ca_);
  mbedtls_ssl_config_free(&client_conf_);
}

emcp::transport::HttpPort World::net_port() {
  emcp::transport::HttpPort p;
  p.write = &World::net_write;
  p.wait_writable = &World::net_wait;
  p.close = &World::net_close;
  p.ctx = this;
  return p;
}

emcp::transport::HttpPort World::tap_port() {
  emcp::transport::HttpPort p;
  p.write = &World::tap_write;
  p.wait_writable = &World::tap_wait;
  p.close = &World::tap_close;
  p.ctx = this;
  return p;
}

void World::note_fault(const char* what) {
  if (fault_ == nullptr) fault_ = what;
  ++faults_;
}

Pipe* World::slot(uint16_t conn) { return conn < kConns ? slots_[conn] : nullptr; }

size_t World::slots_in_use() const {
  size_t n = 0;
  for (const Pipe* p : slots_) n += p != nullptr ? 1 : 0;
  return n;
}

// The layer writes ciphertext: the window takes what it can.
Status World::net_write(void* ctx, uint16_t conn, const char* data, size_t n, size_t* taken) {
  auto* self = static_cast<World*>(ctx);
  *taken = 0;
  Pipe* p = self->slot(conn);
  if (p == nullptr) {
    self->note_fault("write for a connection the listener does not hold");
    return Status::kClosed;
  }
  ++p->writes;
  if (p->fail_writes) return Status::kIoError;
  size_t k = n < p->window ? n : p->window;
  if (k > p->to_client.space()) k = p->to_client.space();
  (void)p->to_client.append(data, k);
  p->count_records(reinterpret_cast<const uint8_t*>(data), k);
  if (p->window != kUnlimited) p->window -= k;
  if (k < n) {
    p->owes_writable = true;
    ++p->short_writes;
  }
  *taken = k;
  return Status::kOk;
}

Status World::net_wait(void* ctx, uint16_t conn, uint32_t timeout_ms) {
  auto* self = static_cast<World*>(ctx);
  Pipe* p = self->slot(conn);
  if (p == nullptr) {
    self->note_fault("wait_writable for a connection the listener does not hold");
    return Status::kClosed;
  }
  ++p->waits;
  if (p->grant == 0) {
    fixture::advance_ms(timeout_ms);
    return Status::kWouldBlock;
  }
  p->window = p->grant == kUnlimited || p->window == kUnlimited ? kUnlimited : p->window + p->grant;
  return Status::kOk;
}

void World::net_close(void* ctx, uint16_t conn) {
  auto* self = static_cast<World*>(ctx);
  Pipe* p = self->slot(conn);
  if (p == nullptr) {
    self->note_fault("close for a connection the listener does not hold");
    return;
  }
  p->server_closed = true;
  p->conn = -1;
  p->to_server.clear();  // what the client sent and nobody read is gone with the connection
  p->owes_writable = false;
  self->slots_[conn] = nullptr;
}

Status World::tap_write(void* ctx, uint16_t conn, const char* data, size_t n, size_t* taken) {
  auto* self = static_cast<World*>(ctx);
  const Status s = self->layer_port_.write(self->layer_port_.ctx, conn, data, n, taken);
  if (*taken > n) self->note_fault("the layer took more bytes than offered");
  if (s == Status::kOk && *taken != 0) {
    Pipe* p = self->slot(conn);
    if (p == nullptr) self->note_fault("the layer took engine bytes for a connection that is closed");
    else (void)p->engine_out.append(data, *taken);
  }
  return s;
}

Status World::tap_wait(void* ctx, uint16_t conn, uint32_t timeout_ms) {
  auto* self = static_cast<World*>(ctx);
  return self->layer_port_.wait_writable(self->layer_port_.ctx, conn, timeout_ms);
}

void World::tap_close(void* ctx, uint16_t conn) {
  auto* self = static_cast<World*>(ctx);
  if (Pipe* p = self->slot(conn)) p->engine_closed = true;
  self->layer_port_.close(self->layer_port_.ctx, conn);
}

// The client leaves its slot for good (reset): the listener reports closed().
void World::detach(Client& c) {
  if (c.pipe.conn >= 0) {
    const uint16_t conn = static_cast<uint16_t>(c.pipe.conn);
    slots_[conn] = nullptr;
    c.pipe.conn = -1;
    handler_.closed(conn);
  }
}

int World::connect(size_t i, bool tls_client, const mbedtls_ssl_session* resume) {
  Client& c = clients_[i];
  detach(c);
  c.release();
  c.pipe.reset();
  c.received.clear();
  c.read_cursor = 0;
  c.tls = tls_client;
  c.paused = false;
  c.established = c.peer_closed = c.eof = c.failed = false;
  c.error = 0;
  c.alerts = 0;
  c.alert_level = c.alert_description = 0;
  const int s = handler_.open();
  if (s < 0) {
    const emcp::StrView refusal = handler_.refusal();
    (void)c.pipe.to_client.append(refusal.data(), refusal.size());
    c.pipe.refused = true;
    c.pipe.server_closed = true;
  } else if (s >= kConns || slots_[s] != nullptr) {
    note_fault("open() gave a slot the listener does not have free");
    return -1;
  } else {
    slots_[s] = &c.pipe;
    c.pipe.conn = s;
  }
  if (tls_client) {
    if (mbedtls_ssl_setup(&c.ssl, &client_conf_) != 0 || mbedtls_ssl_set_hostname(&c.ssl, "localhost") != 0 ||
        (resume != nullptr && mbedtls_ssl_set_session(&c.ssl, resume) != 0)) {
      note_fault("client context setup");
    }
    c.ssl_ready_ = true;
    mbedtls_ssl_set_bio(&c.ssl, &c, &Client::bio_send, &Client::bio_recv, nullptr);
  }
  return s;
}

bool World::send(size_t i, const void* data, size_t n, size_t record) {
  Client& c = clients_[i];
  const auto* p = static_cast<const uint8_t*>(data);
  if (!c.tls) {
    if (c.pipe.server_closed || c.pipe.client_closed) return false;
    return c.pipe.to_server.append(p, n);
  }
  if (!c.established || c.ended()) return false;
  while (n != 0) {
    const size_t piece = record == 0 || record > n ? n : record;
    const int ret = mbedtls_ssl_write(&c.ssl, p, piece);
    if (ret <= 0) return false;
    p += ret;
    n -= static_cast<size_t>(ret);
  }
  return true;
}

void World::close_notify(size_t i) {
  Client& c = clients_[i];
  if (c.tls && c.ssl_ready_ && c.established && !c.ended()) (void)mbedtls_ssl_close_notify(&c.ssl);
}

void World::shutdown(size_t i) { clients_[i].pipe.client_closed = true; }

void World::abort(size_t i) {
  Client& c = clients_[i];
  c.pipe.client_closed = true;
  detach(c);
}

bool World::step_client(Client& c) {
  if (!c.tls || !c.ssl_ready_ || c.paused || c.ended()) return false;
  struct Stepping {
    explicit Stepping(Client* c) { g_stepping = c; }
    ~Stepping() { g_stepping = nullptr; }
  } stepping(&c);
  if (!c.established) {
    const int ret = mbedtls_ssl_handshake(&c.ssl);
    if (ret == 0) {
      c.established = true;
      c.has_session = mbedtls_ssl_get_session(&c.ssl, &c.session) == 0;
    } else if (!would_block(ret)) {
      c.failed = true;
      c.error = ret;
      return true;
    } else {
      if (c.pipe.server_closed && c.pipe.to_client.empty()) {
        c.eof = true;  // nothing more will come
        return true;
      }
      return false;
    }
  }
  unsigned char buf[4096];
  for (;;) {
    const int ret = mbedtls_ssl_read(&c.ssl, buf, sizeof buf);
    if (ret > 0) {
      (void)c.received.append(buf, static_cast<size_t>(ret));
      continue;
    }
    if (would_block(ret)) return false;
    if (ret == MBEDTLS_ERR_SSL_PEER_CLOSE_NOTIFY) c.peer_closed = true;
    else if (ret == 0 || ret == MBEDTLS_ERR_SSL_CONN_EOF) c.eof = true;
    else {
      c.failed = true;
      c.error = ret;
    }
    return true;
  }
}

uint64_t World::signature() const {
  uint64_t s = 0;
  for (const Client& c : clients_) {
    const Pipe& p = c.pipe;
    s = s * 31 + p.to_server.total() + (p.to_server.total() - p.to_server.size()) * 3;
    s = s * 31 + p.to_client.total() + (p.to_client.total() - p.to_client.size()) * 5;
    s = s * 31 + p.writable_calls + p.waits * 7u + (p.server_closed ? 11u : 0u) + static_cast<uint64_t>(p.conn + 2) * 13u;
    s = s * 31 + (c.established ? 1u : 0u) + (c.ended() ? 2u : 0u) + c.received.total();
  }
  const emcp::mbedtls::TlsStats& t = tls.stats();
  s = s * 31 + t.handshakes + t.failed + t.timed_out + t.refused_memory + t.record_errors;
  return s;
}

bool World::step() {
  const uint64_t before = signature();
  for (Client& c : clients_) (void)step_client(c);
  // The listener: bytes it holds go to the layer while it wants them; a client's FIN once
  // they are all consumed.
  for (uint16_t s = 0; s < kConns; ++s) {
    Pipe* p = slots_[s];
    if (p == nullptr) continue;
    for (int rounds = 0; rounds < 16 && slots_[s] == p && !p->to_server.empty() && handler_.wants_input(s); ++rounds) {
      const size_t n = p->to_server.size();
      const size_t used = handler_.receive(s, p->to_server.data(), n);
      if (used > n) note_fault("receive() consumed more than offered");
      if (slots_[s] != p) break;  // closed meanwhile: the rest is gone
      p->to_server.consume(used);
      if (used == 0) {
        // A listener offers such bytes again at once (ports/posix: a poll() without timeout):
        // saying yes and taking nothing is a busy loop.
        note_fault("wants_input() said yes, receive() took nothing");
        break;
      }
    }
    if (slots_[s] == p && p->client_closed && p->to_server.empty()) {
      slots_[s] = nullptr;
      p->conn = -1;
      handler_.closed(s);
    }
  }
  // The writable() calls it owes, with the window reopened.
  for (uint16_t s = 0; s < kConns; ++s) {
    Pipe* p = slots_[s];
    // (As a socket's POLLOUT: only with room in the pipe, which the client empties by reading.)
    if (p == nullptr || !p->owes_writable || p->hold || p->grant == 0 || p->to_client.space() == 0) continue;
    p->owes_writable = false;
    p->window = p->grant;
    ++p->writable_calls;
    handler_.writable(s);
  }
  if (poll_each_round) handler_.poll();
  if (http.connections_in_use() != slots_in_use())
    note_fault("the engine's connections and the listener's slots disagree");
  return signature() != before;
}

int World::run(int max_rounds) {
  int rounds = 0;
  int quiet = 0;
  while (rounds < max_rounds && quiet < 2) {
    quiet = step() ? 0 : quiet + 1;
    ++rounds;
  }
  return rounds;
}

void World::writable(size_t i, size_t window) {
  Pipe& p = clients_[i].pipe;
  if (p.conn < 0) return;
  p.owes_writable = false;
  p.window = window;
  ++p.writable_calls;
  handler_.writable(static_cast<uint16_t>(p.conn));
}

const char* World::check_transcripts(bool final) {
  for (const Client& c : clients_) {
    if (!c.tls) continue;
    const Pipe& p = c.pipe;
    if (p.engine_out.overflowed() || c.received.overflowed()) continue;  // too long to compare
    const size_t common = p.engine_out.size() < c.received.size() ? p.engine_out.size() : c.received.size();
    if (memcmp(p.engine_out.data(), c.received.data(), common) != 0)
      return "a client decrypted other bytes than the engine wrote";
    if (c.received.size() > p.engine_out.size())
      return "a client decrypted more bytes than the engine was told went out";
    if (final && !c.ended() && !c.paused && c.established && c.received.size() != p.engine_out.size())
      return "bytes the engine was told went out never reached the client";
  }
  return nullptr;
}

}  // namespace tls_world
