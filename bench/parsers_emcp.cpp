// emcp's rows: the streaming reader (events only, nothing stored) and the JSON-RPC decoder
// (which builds the params/result tree in the arena: emcp's equivalent of a DOM parse).
#include <emcp/json/reader.h>
#include <emcp/json/value.h>
#include <emcp/jsonrpc/decoder.h>
#include <emcp/util/arena.h>

#include "parsers.h"

namespace bench {

namespace {

using emcp::json::Event;

// All emcp state is static storage: no heap anywhere on these paths.
emcp::json::StaticReader<> g_reader;
// 20 KB of tools/list becomes ~1,300 tree nodes (40 bytes each on x86-64) plus the text of its
// keys and strings; the output reports the high-water mark.
constexpr size_t kArenaSize = 128 * 1024;
emcp::StaticArena<kArenaSize> g_arena;
emcp::json::StaticReader<> g_dec_reader;
emcp::jsonrpc::Decoder g_decoder(g_dec_reader, g_arena);

// Pulls every event of one document out of the reader, feeding `in` in pieces of `Chunk` bytes
// (0: all at once), and tallies what it sees: the minimal per-event work of a streaming
// consumer, the same as the SAX handlers of the peers do.
template <size_t Chunk>
bool reader_parse(const std::string& in, Tally* t) {
  emcp::json::Reader& r = g_reader;
  r.reset();
  const char* p = in.data();
  size_t left = in.size();
  bool finished = false;
  auto feed_next = [&] {
    const size_t n = (Chunk == 0 || left < Chunk) ? left : Chunk;
    r.feed(p, n);
    p += n;
    left -= n;
  };
  feed_next();
  for (;;) {
    switch (r.next()) {
      case Event::kNeedInput:
        if (left != 0) {
          feed_next();
        } else if (!finished) {
          r.finish();
          finished = true;
        } else {
          return false;
        }
        break;
      case Event::kError:
        return false;
      case Event::kDocumentEnd:
        return true;
      case Event::kObjectBegin:
      case Event::kArrayBegin:
        ++t->containers;
        break;
      case Event::kObjectEnd:
      case Event::kArrayEnd:
        break;
      case Event::kKey:
        ++t->keys;
        t->key_bytes += r.text().size();
        break;
      case Event::kStringPart:
        t->string_bytes += r.text().size();
        break;
      case Event::kString:
        ++t->scalars;
        t->string_bytes += r.text().size();
        break;
      case Event::kInt:
        ++t->scalars;
        t->num_sum += static_cast<double>(r.int_value());
        break;
      case Event::kDouble:
        ++t->scalars;
        t->num_sum += r.double_value();
        break;
      case Event::kTrue:
      case Event::kFalse:
      case Event::kNull:
        ++t->scalars;
        break;
    }
  }
}

template <size_t Chunk>
bool reader_count(const std::string& in, Tally* t) {
  return reader_parse<Chunk>(in, t);
}

template <size_t Chunk>
bool reader_run(const std::string& in, uint64_t iters, uint64_t* sink) {
  for (uint64_t i = 0; i < iters; ++i) {
    Tally t;
    if (!reader_parse<Chunk>(in, &t)) return false;
    *sink += t.mix();
  }
  return true;
}

// Decodes one message, fed in pieces of `Chunk` bytes (0: all at once). Accepts exactly what
// the inputs are: a request (tools/call) or a response (tools/list).
template <size_t Chunk>
const emcp::jsonrpc::Message* decode(const std::string& in) {
  g_decoder.begin();
  if (Chunk == 0) {
    g_decoder.feed(in.data(), in.size());
  } else {
    for (size_t off = 0; off < in.size(); off += Chunk) {
      const size_t n = in.size() - off < Chunk ? in.size() - off : Chunk;
      g_decoder.feed(in.data() + off, n);
    }
  }
  const emcp::jsonrpc::Decoded& d = g_decoder.finish();
  const emcp::jsonrpc::Message* m = d.first;
  if (d.count != 1 || m == nullptr) return nullptr;
  if (m->kind != emcp::jsonrpc::Kind::kRequest && m->kind != emcp::jsonrpc::Kind::kResponse)
    return nullptr;
  return m;
}

void walk(emcp::json::Value v, Tally* t) {
  using emcp::json::Type;
  switch (v.type()) {
    case Type::kObject:
      ++t->containers;
      for (emcp::json::Value c : v.members()) {
        ++t->keys;
        t->key_bytes += c.key().size();
        walk(c, t);
      }
      break;
    case Type::kArray:
      ++t->containers;
      for (emcp::json::Value c : v.elements()) walk(c, t);
      break;
    case Type::kString:
      ++t->scalars;
      t->string_bytes += v.as_string().value().size();
      break;
    case Type::kInt:
      ++t->scalars;
      t->num_sum += static_cast<double>(v.as_int().value());
      break;
    case Type::kDouble:
      ++t->scalars;
      t->num_sum += v.as_double().value();
      break;
    case Type::kNull:
    case Type::kBool:
      ++t->scalars;
      break;
    case Type::kMissing:
      break;
  }
}

// The decoder keeps the envelope (jsonrpc, id, method) outside the tree; count it as the
// document has it: one object with "jsonrpc":"2.0", an integer or string id, then method +
// params (request) or result (response).
template <size_t Chunk>
bool decoder_count(const std::string& in, Tally* t) {
  const emcp::jsonrpc::Message* m = decode<Chunk>(in);
  if (m == nullptr) return false;
  t->containers += 1;
  t->keys += 2;  // "jsonrpc", "id"
  t->key_bytes += 7 + 2;
  t->scalars += 2;
  t->string_bytes += 3;  // "2.0"
  if (m->id.type == emcp::jsonrpc::Id::Type::kInt) {
    t->num_sum += static_cast<double>(m->id.num);
  } else {
    t->string_bytes += m->id.str.size();
  }
  if (m->kind == emcp::jsonrpc::Kind::kRequest) {
    t->keys += 1;  // "method"
    t->key_bytes += 6;
    t->scalars += 1;
    t->string_bytes += m->method.size();
    if (m->params.exists()) {
      t->keys += 1;
      t->key_bytes += 6;  // "params"
      walk(m->params, t);
    }
  } else {
    t->keys += 1;
    t->key_bytes += 6;  // "result"
    walk(m->result, t);
  }
  return true;
}

template <size_t Chunk>
bool decoder_run(const std::string& in, uint64_t iters, uint64_t* sink) {
  for (uint64_t i = 0; i < iters; ++i) {
    const emcp::jsonrpc::Message* m = decode<Chunk>(in);
    if (m == nullptr) return false;
    *sink += g_arena.used() + static_cast<uint64_t>(m->kind);
  }
  return true;
}

}  // namespace

size_t emcp_arena_capacity() { return g_arena.capacity(); }
size_t emcp_arena_high_water() { return g_arena.high_water(); }
void emcp_arena_reset_high_water() { g_arena.reset_high_water(); }

void add_emcp_parsers(std::vector<Parser>* out) {
  //              id, label, kind, is_emcp, is_dom, checks_utf8, count, run
  out->push_back({"emcp-reader", "emcp reader", "streaming push, no heap, UTF-8 checked", true,
                  false, true, reader_count<0>, reader_run<0>});
  out->push_back({"emcp-reader-256", "emcp reader, 256 B chunks",
                  "streaming push, no heap, UTF-8 checked", true, false, true, reader_count<256>,
                  reader_run<256>});
  out->push_back({"emcp-decoder", "emcp JSON-RPC decoder",
                  "streaming push -> tree in arena, no heap, UTF-8 checked", true, true, true,
                  decoder_count<0>, decoder_run<0>});
  out->push_back({"emcp-decoder-256", "emcp JSON-RPC decoder, 256 B chunks",
                  "streaming push -> tree in arena, no heap, UTF-8 checked", true, true, true,
                  decoder_count<256>, decoder_run<256>});
}

}  // namespace bench
