// libFuzzer target: the JSON-RPC decoder and encoder.
// Properties checked on every input:
//  1. Decoding never crashes, always yields at least one message, and the same messages
//     whether the input comes whole or cut at a position chosen from the input.
//  2. The answers a server would write (results echoing params, errors for invalid messages)
//     are well-formed: the writer reports no misuse and the output is accepted by the reader.
//  3. A small arena (the first input byte picks its size) gives either the messages or the
//     clean "too large" error, never a crash.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emcp/json/reader.h"
#include "emcp/json/sink.h"
#include "emcp/json/value.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/jsonrpc/encode.h"

namespace {

using emcp::json::Writer;
using emcp::jsonrpc::Decoded;
using emcp::jsonrpc::Kind;
using emcp::jsonrpc::Message;

emcp::json::StaticReader<> g_reader;
emcp::StaticArena<EMCP_ARENA_SIZE> g_arena;
uint8_t g_small_storage[EMCP_ARENA_SIZE];
char g_out_a[1 << 20];
char g_out_b[1 << 20];

// Writes every answer (and a description of the other messages) as one JSON array.
size_t render(const Decoded& d, char* out, size_t cap) {
  emcp::json::BufferSink sink(out, cap);
  Writer w(sink);
  w.begin_array();
  w.boolean(d.batch);
  size_t n = 0;
  for (const Message* m = d.first; m; m = m->next, ++n) {
    switch (m->kind) {
      case Kind::kInvalid:
        emcp::jsonrpc::write_invalid(w, *m);
        break;
      case Kind::kRequest:
        emcp::jsonrpc::begin_response(w, m->id);
        w.begin_object();
        w.member_str("method", m->method);
        w.key("params");
        emcp::json::write_value(w, m->params);
        w.end_object();
        emcp::jsonrpc::end_message(w);
        break;
      case Kind::kNotification:
        emcp::jsonrpc::begin_notification(w, m->method);
        emcp::json::write_value(w, m->params);
        emcp::jsonrpc::end_message(w);
        break;
      case Kind::kResponse:
        emcp::jsonrpc::begin_response(w, m->id);
        emcp::json::write_value(w, m->result);
        emcp::jsonrpc::end_message(w);
        break;
      case Kind::kErrorResponse:
        emcp::jsonrpc::begin_error_with_data(w, m->id, emcp::jsonrpc::ErrorCode::kInternalError,
                                             m->error.message);
        emcp::json::write_value(w, m->error.data);
        emcp::jsonrpc::end_error(w);
        break;
    }
  }
  w.end_array();
  if (n != d.count || n == 0) abort();
  // Writer misuse would be a bug; running out of the 1 MiB buffer is not possible for the
  // inputs we accept (at most 64 KiB in, and each byte expands to at most 6 when escaped).
  // The description nests params three levels deeper than the input, so it may pass the
  // writer's depth limit, which must then be reported as such.
  if (w.status() == emcp::Status::kDepthLimit) return sink.view().size();
  if (w.status() != emcp::Status::kOk || !w.complete()) abort();
  return sink.view().size();
}

const Decoded& decode(emcp::jsonrpc::Decoder& dec, const uint8_t* data, size_t size, size_t cut) {
  dec.begin();
  dec.feed(data, cut);
  dec.feed(data + cut, size - cut);
  return dec.finish();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size > 1 << 16) return 0;
  static emcp::jsonrpc::Decoder dec(g_reader, g_arena);
  const size_t a = render(decode(dec, data, size, size), g_out_a, sizeof g_out_a);
  const size_t cut = size == 0 ? 0 : (data[size - 1] * 7919u) % (size + 1);
  const size_t b = render(decode(dec, data, size, cut), g_out_b, sizeof g_out_b);
  if (a != b || memcmp(g_out_a, g_out_b, a) != 0) abort();

  // What we wrote is JSON.
  g_reader.reset();
  g_reader.feed(g_out_a, a);
  g_reader.finish();
  for (;;) {
    const emcp::json::Event e = g_reader.next();
    if (e == emcp::json::Event::kDocumentEnd) break;
    // Output nesting can exceed the reader's depth limit only if the input already did.
    if (e == emcp::json::Event::kError && g_reader.status() != emcp::Status::kDepthLimit) abort();
    if (e == emcp::json::Event::kError) break;
  }

  // A small arena: messages or the clean error.
  const size_t cap = size == 0 ? 0 : (static_cast<size_t>(data[0]) * 16u) % sizeof g_small_storage;
  emcp::Arena small(emcp::Span<uint8_t>(g_small_storage, cap));
  emcp::jsonrpc::Decoder small_dec(g_reader, small);
  const Decoded& d = decode(small_dec, data, size, size);
  if (d.first == nullptr || d.count == 0) abort();
  if (small.used() > cap) abort();
  render(d, g_out_b, sizeof g_out_b);
  return 0;
}
