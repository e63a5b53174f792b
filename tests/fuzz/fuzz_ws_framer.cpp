// libFuzzer target: the WebSocket frame parser.
// Properties checked on every input:
//  1. No crash, whatever the bytes, fed whole or cut at a position chosen from the input.
//  2. The same events, close codes and message texts for both feeds (the text of a message the
//     connection dies in may have been delivered in part: only whole messages are compared).
//  3. A text message never delivers more than the limit; errors carry a close code of RFC 6455.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emcp/http/websocket.h"

namespace {

constexpr uint64_t kMax = 4096;

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
uint8_t g_message[kMax];
size_t g_message_len;

void run(const uint8_t* data, size_t size, size_t cut, Log& log) {
  using Event = emcp::ws::FrameParser::Event;
  log.len = 0;
  emcp::ws::FrameParser p(kMax);
  const uint8_t* pieces[2] = {data, data + cut};
  const size_t lens[2] = {cut, size - cut};
  uint64_t message = 0;
  for (int k = 0; k < 2; ++k) {
    const uint8_t* d = pieces[k];
    size_t n = lens[k];
    for (;;) {
      size_t used = 0;
      const Event e = p.push(d, n, &used);
      if (used > n) abort();
      d += used;
      n -= used;
      if (e == Event::kNeedInput) break;
      if (e == Event::kData) {
        message += p.data().size();
        if (message > kMax || p.data().size() > 256) abort();
        memcpy(g_message + g_message_len, p.data().data(), p.data().size());
        g_message_len += p.data().size();
        continue;
      }
      const uint8_t tag = static_cast<uint8_t>(e);
      log.put(&tag, 1);
      if (e == Event::kMessageBegin) message = g_message_len = 0;
      if (e == Event::kMessageEnd) log.put(g_message, g_message_len);  // whole messages only
      if (e == Event::kPing || e == Event::kPong) {
        if (p.control_payload().size() > 125) abort();
        log.put(p.control_payload().data(), p.control_payload().size());
      }
      if (e == Event::kClose || e == Event::kError) {
        const uint16_t code = e == Event::kClose ? p.close_code() : p.error_code();
        if (e == Event::kError && code != 1002 && code != 1003 && code != 1007 && code != 1009) abort();
        log.put(&code, sizeof code);
        return;
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
