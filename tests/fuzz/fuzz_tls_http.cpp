// libFuzzer target: the TLS layer (emcp::mbedtls::TlsLayer) between a fake listener and the HTTP
// engine serving the fixture application, with real Mbed TLS clients (tests/tls/tls_world.h).
// A client's handshake resumes a session made once in LLVMFuzzerInitialize (no public-key
// work per input), so the inputs reach the engine through the layer at thousands a second.
//
// The input: two bytes of choices, then the payload.
//   byte 0  bits 0-1  mode: 0, 1  a client sends the payload as plaintext (HTTP requests);
//                          2     the payload goes straight to the layer as the connection's
//                                first bytes (a hostile ClientHello, plain HTTP, garbage);
//                          3     a client does its handshake, then the payload goes to the
//                                layer as raw bytes on that connection (hostile records)
//           bits 2-4  the listener's window: each writable() (and each wait_writable())
//                     opens kWindows[] bytes; 0: shut, writable() only when the fuzzer opens
//                     64 bytes (after each piece, with byte 1 bit 0) or all (at the end)
//           bits 5-7  the payload goes in pieces of kPieces[] bytes (plaintext: one record
//                     each)
//   byte 1  bit 0     the world runs after every piece (else once all of it is sent)
//           bit 1     the listener does not poll() in its rounds (only at pauses)
//           bit 2     two connections: each piece goes on both, one after the other (their
//                     requests meet in the same sessions)
//           bit 3     the client ends with close_notify (else a FIN)
//           bit 4     the client sends two zero-length records before every piece
//           bits 5-7  after every piece the clock moves kPauses[] ms (timeouts)
// The engine's session ids come from a counter reset for every input (the first session of
// an input is 0102...0f10, which the seeds use); everything else random comes from the
// world's CTR-DRBG, reseeded from a fixed string for every input (the server's handshakes too).
//
// Checked (abort): no sanitizer report; the listener is only called for connections it holds,
// and the engine's connections are the listener's; the layer never says it wants input and
// then takes none; what a client decrypts is byte for byte what the engine was told went out,
// and once the window opens at the end all of it arrives; an honest client (modes 0, 1) never
// meets a TLS error, and only the engine ends its connection; at the end of every input, with
// every client gone and the clock an hour on, every slot and session is free.
// (Mbed TLS puts its wall-clock time into the hellos: ciphertext bytes differ from run to run,
// what the layer and the engine see and do does not.)
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <new>

#include "fuzz_fakes.h"
#include "../tls/tls_world.h"
#include "../unit/mcp_fixture_app.h"

namespace {

constexpr size_t kWindows[8] = {tls_world::kUnlimited, 1, 7, 31, 100, 512, 1500, 0};
constexpr size_t kPieces[8] = {0, 1, 5, 16, 64, 200, 700, 4000};
constexpr uint64_t kPauses[8] = {0, 0, 10, 300, 2000, 5001, 10001, 60000};

emcp::mbedtls::TlsContext g_context;
mbedtls_ssl_session g_session;  // resumed by every client
alignas(tls_world::World) unsigned char g_world_mem[sizeof(tls_world::World)];
tls_world::World* g_world = nullptr;
bool g_verbose = false;  // EMCP_FUZZ_VERBOSE=1: what each client read, and the layer's counters

[[noreturn]] void fail(const char* what, int code = 0) {
  fprintf(stderr, "fuzz_tls_http: %s (%d)\n", what, code);
  abort();
}

tls_world::World& fresh_world() {
  if (g_world != nullptr) g_world->~World();
  fuzz_fakes::g_counter = 0;
  tls_world::reset_random("fuzz_tls_http");
  // The server's handshakes draw from the world's generator too (reseeded above), so each input
  // repeats; the context itself (certificate, key, ticket key) is made once.
  mbedtls_ssl_conf_rng(g_context.config(), &tls_world::rng, nullptr);
  g_context.note_error(0);  // what a failure reports is this input's
  tls_world::WorldOptions options;
  options.context = &g_context;
  options.engine_random = &fuzz_fakes::random;
  options.sha1 = &fuzz_fakes::sha1;
  g_world = new (g_world_mem) tls_world::World(options);
  g_world->http_options.max_body = 8192;
  // Short timeouts: more of them happen within an input.
  g_world->http_options.send_timeout_ms = 500;
  g_world->http_options.head_timeout_ms = 2000;
  g_world->http_options.body_timeout_ms = 2000;
  g_world->http_options.keepalive_ms = 5000;
  g_world->http_options.heartbeat_ms = 1000;
  return *g_world;
}

void check(tls_world::World& w, bool honest) {
  if (w.fault() != nullptr) fail(w.fault());
  if (const char* wrong = w.check_transcripts(false)) fail(wrong);
  if (!honest) return;
  for (size_t i = 0; i < 2; ++i) {
    const tls_world::Client& c = w.client(i);
    if (c.failed) fail("an honest client met a TLS error", c.error);
    if (c.pipe.server_closed && !c.pipe.engine_closed && !c.pipe.client_closed)
      fail("the layer ended an honest client's connection", w.context.last_error());
  }
}

void run(tls_world::World& w, bool honest) {
  w.run();
  check(w, honest);
}

// The listener of a shut window (kWindows 0) opens it a little now and then.
void open_some(tls_world::World& w, size_t clients) {
  for (size_t i = 0; i < clients; ++i) {
    tls_world::Pipe& p = w.client(i).pipe;
    if (p.hold && p.conn >= 0) w.writable(i, 64);
  }
}

}  // namespace

extern "C" int LLVMFuzzerInitialize(int*, char***) {
  g_verbose = getenv("EMCP_FUZZ_VERBOSE") != nullptr;
  const tls_world::Credentials& cred = tls_world::credentials();
  if (!cred.ok) fail("credentials");
  tls_world::reset_random("fuzz_tls_http context");
  static const emcp::Platform platform(&fixture::now_ms, &tls_world::random);
  const emcp::Status s = g_context.init(platform, cred.cert.data, cred.cert.len, cred.key.data, cred.key.len);
  if (s != emcp::Status::kOk) fail("TlsContext::init", g_context.last_error());
  // One full handshake: its session (with the server's ticket) is what every input resumes.
  tls_world::World& w = fresh_world();
  if (w.connect(0) < 0) fail("connect");
  w.run();
  if (!w.client(0).established || !w.client(0).has_session) fail("first handshake", w.client(0).error);
  mbedtls_ssl_session_init(&g_session);
  if (mbedtls_ssl_get_session(&w.client(0).ssl, &g_session) != 0 || g_session.ticket_len == 0)
    fail("no session ticket");
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 2 || size > 8192) return 0;
  const uint8_t mode = data[0] & 3;
  const size_t window = kWindows[(data[0] >> 2) & 7];
  const size_t piece = kPieces[data[0] >> 5];
  const bool run_each = (data[1] & 1) != 0;
  const bool two = (data[1] & 4) != 0 && mode != 2;
  const bool close_notify = (data[1] & 8) != 0;
  const bool empties = (data[1] & 16) != 0;
  const uint64_t pause = kPauses[data[1] >> 5];
  const bool honest = mode <= 1;
  const uint8_t* payload = data + 2;
  size_t left = size - 2;

  tls_world::World& w = fresh_world();
  w.poll_each_round = (data[1] & 2) == 0;
  const size_t clients = two ? 2 : 1;
  for (size_t i = 0; i < clients; ++i) {
    if (w.connect(i, mode != 2, &g_session) < 0) fail("connect refused");
    tls_world::Pipe& p = w.client(i).pipe;
    p.window = window == 0 ? 0 : window;
    p.grant = window == 0 ? 64 : window;
    p.hold = window == 0;
  }
  if (mode != 2) {
    for (int round = 0; round < 64; ++round) {
      run(w, honest);
      open_some(w, clients);
      if (w.client(0).established && (!two || w.client(1).established)) break;
    }
    for (size_t i = 0; i < clients; ++i)
      if (!w.client(i).established) fail("the client's handshake did not finish", w.client(i).error);
    if (w.tls.stats().handshakes != clients) fail("the server's handshake did not finish", w.context.last_error());
    if (w.tls.stats().resumed != clients) fail("the session was not resumed");
  }
  if (mode == 3)
    for (size_t i = 0; i < clients; ++i) w.client(i).paused = true;  // its bytes are the fuzzer's now

  while (left != 0) {
    const size_t n = piece == 0 || piece > left ? left : piece;
    for (size_t i = 0; i < clients; ++i) {
      tls_world::Client& c = w.client(i);
      if (mode <= 1) {
        if (!c.ended() && c.pipe.conn >= 0) {
          if (empties)
            for (int e = 0; e < 2; ++e) (void)mbedtls_ssl_write(&c.ssl, nullptr, 0);
          (void)w.send(i, payload, n);
        }
      } else if (c.pipe.conn >= 0) {
        (void)c.pipe.to_server.append(payload, n);
      }
      if (run_each && i + 1 < clients) run(w, honest);
    }
    payload += n;
    left -= n;
    if (run_each) {
      run(w, honest);
      open_some(w, clients);
    }
    if (pause != 0) {
      fixture::advance_ms(pause);
      w.poll();
      run(w, honest);
    }
  }
  run(w, honest);
  // The window opens for good: everything the engine was told went out reaches its client.
  for (size_t i = 0; i < clients; ++i) {
    tls_world::Pipe& p = w.client(i).pipe;
    p.hold = false;
    p.grant = tls_world::kUnlimited;
    if (p.conn >= 0) w.writable(i, tls_world::kUnlimited);
  }
  if (mode == 3)
    for (size_t i = 0; i < clients; ++i) w.client(i).paused = false;
  w.run();
  check(w, honest);
  if (honest)
    if (const char* wrong = w.check_transcripts(true)) fail(wrong);
  if (g_verbose) {
    const emcp::mbedtls::TlsStats& t = w.tls.stats();
    fprintf(stderr, "handshakes %u resumed %u failed %u timed_out %u record_errors %u\n", t.handshakes, t.resumed,
            t.failed, t.timed_out, t.record_errors);
    for (size_t i = 0; i < clients; ++i) {
      const tls_world::Client& c = w.client(i);
      const tls_world::Pipe& p = c.pipe;
      fprintf(stderr, "client %zu: %s%s, %u writes (%u short), %u records, read %zu bytes:\n%.*s\n", i,
              c.ended() ? "ended" : "open", p.server_closed ? ", closed by the server" : "", p.writes,
              p.short_writes, p.records, c.received.size(), static_cast<int>(c.received.size()), c.received.chars());
      if (!c.tls)
        fprintf(stderr, "raw: %.*s\n", static_cast<int>(p.to_client.size()), p.to_client.chars());
    }
  }
  // The end: the clients go, time passes, everything is free again.
  for (size_t i = 0; i < clients; ++i) {
    if (close_notify) w.close_notify(i);
    else w.shutdown(i);
  }
  run(w, false);
  for (size_t i = 0; i < clients; ++i) w.abort(i);
  while (fixture::pending_slow() > 0) (void)fixture::complete_slow();
  run(w, false);
  fixture::advance_ms(3600u * 1000u);
  w.poll();
  run(w, false);
  if (w.slots_in_use() != 0 || w.http.connections_in_use() != 0) fail("a connection outlived its client");
  if (w.http.sessions_in_use() != 0) fail("a session outlived the idle timeout");
  return 0;
}
