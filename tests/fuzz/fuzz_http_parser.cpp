// libFuzzer target: the HTTP/1.1 request parser.
// Properties checked on every input:
//  1. No crash, whatever the bytes, fed whole or cut at a position chosen from the input.
//  2. The same events (head, body bytes, done, error status) for both feeds, and the same
//     kept head at each kHead (method, target, every kept header's bytes and flags): the parser
//     takes names and values in runs, which a cut must not change.
//  3. Body bytes never exceed the limit; an error is always a 4xx/5xx status.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emcp/http/http.h"

namespace {

struct Log {
  uint8_t buf[1 << 18];
  size_t len;
  void put(const void* p, size_t n) {
    if (n > sizeof buf - len) n = sizeof buf - len;
    memcpy(buf + len, p, n);
    len += n;
  }
};

Log g_a, g_b;
emcp::http::RequestParser g_parser;

template <size_t N>
void log_buf(const emcp::http::HeaderBuf<N>& h, Log& log) {
  log.put(&h.len, sizeof h.len);
  log.put(h.data, h.len);
  const uint8_t flags = static_cast<uint8_t>(h.present | h.repeated << 1);
  log.put(&flags, 1);
}

void log_head(const emcp::http::Request& r, Log& log) {
  log.put(&r.method, sizeof r.method);
  log_buf(r.target, log);
  log_buf(r.host, log);
  log_buf(r.origin, log);
  log_buf(r.content_type, log);
  log_buf(r.accept, log);
  log_buf(r.session_id, log);
  log_buf(r.protocol_version, log);
  log_buf(r.last_event_id, log);
  log_buf(r.authorization, log);
  log_buf(r.upgrade, log);
  log_buf(r.ws_key, log);
  log_buf(r.ws_version, log);
  log_buf(r.ws_protocol, log);
  log_buf(r.mcp_method, log);
  log_buf(r.mcp_name, log);
  log_buf(r.mcp_params, log);
  const int64_t length = r.content_length;
  log.put(&length, sizeof length);
  const uint8_t flags = static_cast<uint8_t>(r.chunked | r.keep_alive << 1 | r.connection_upgrade << 2 | r.expect_continue << 3);
  log.put(&flags, 1);
}

void run(const uint8_t* data, size_t size, size_t cut, Log& log) {
  using Event = emcp::http::RequestParser::Event;
  log.len = 0;
  g_parser.reset();
  g_parser.set_max_body(4096);
  const uint8_t* pieces[2] = {data, data + cut};
  const size_t lens[2] = {cut, size - cut};
  uint64_t body = 0;
  for (int k = 0; k < 2; ++k) {
    const uint8_t* p = pieces[k];
    size_t n = lens[k];
    for (;;) {
      size_t used = 0;
      const Event e = g_parser.push(p, n, &used);
      if (used > n) abort();
      p += used;
      n -= used;
      const uint8_t tag = static_cast<uint8_t>(e);
      if (e == Event::kNeedInput) break;
      if (e == Event::kBody) {
        body += g_parser.body().size();
        if (body > 4096) abort();
        log.put(g_parser.body().data(), g_parser.body().size());  // bytes, tagless: pieces may differ
        continue;
      }
      log.put(&tag, 1);
      if (e == Event::kHead) log_head(g_parser.request(), log);
      if (e == Event::kError) {
        const int status = g_parser.error_status();
        if (status < 400 || status > 599) abort();
        log.put(&status, sizeof status);
        return;
      }
      if (e == Event::kDone) {
        body = 0;
        g_parser.reset();
        g_parser.set_max_body(4096);
      }
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  run(data, size, size, g_a);
  const size_t cut = size == 0 ? 0 : (data[0] * 7919u) % (size + 1);
  run(data, size, cut, g_b);
  if (g_a.len != g_b.len || memcmp(g_a.buf, g_b.buf, g_a.len) != 0) abort();
  return 0;
}
