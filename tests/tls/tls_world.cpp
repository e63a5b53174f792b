#include "tls_world.h"

#include <stdio.h>

#include "mbedtls/debug.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/x509_crt.h"

#include "../unit/mcp_fixture_app.h"

namespace tls_world {

using emcp::Status;

namespace {

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


}  // namespace

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
  writes = short_writes = writable_calls = waits = 0;
  reset_records();
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
  if (!client_config(&client_conf_, &ca_)) note_fault("client configuration");
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
