// emcp-echo: a JSON-RPC 2.0 echo server over stdio, built only on emcp's zero-heap core.
//
// Every request is answered with {"method": <its method>, "params": <its params>}; requests
// for "echo/fail" get a -32601 error; notifications and responses get no answer; invalid input
// gets the JSON-RPC error the decoder chose (parse error, invalid request, too large...);
// batches get an array. One message per line on stdin, one per line on stdout, a summary on
// stderr at end of input. Output passes through a 256-byte buffer however large it is.
//
//   $ echo '{"jsonrpc":"2.0","id":1,"method":"hello","params":{"x":[1,2]}}' | emcp-echo
//   {"jsonrpc":"2.0","id":1,"result":{"method":"hello","params":{"x":[1,2]}}}
#include <string.h>

#include <initializer_list>

#include "emcp/json/number.h"
#include "emcp/json/sink.h"
#include "emcp/json/value.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/jsonrpc/encode.h"
#include "emcp/posix/fd.h"
#include "emcp/transport/line_framer.h"

namespace {

using emcp::jsonrpc::Kind;
using emcp::jsonrpc::Message;

int g_stdout = 1;
char g_out_buf[256];
emcp::json::FlushingSink g_out(g_out_buf, sizeof g_out_buf, &emcp::posix::fd_flush, &g_stdout);

emcp::json::StaticReader<> g_reader;
emcp::StaticArena<EMCP_ARENA_SIZE> g_arena;
emcp::jsonrpc::Decoder g_decoder(g_reader, g_arena);
emcp::transport::LineFramer g_framer(g_decoder);

bool answered(const Message& m) { return m.kind == Kind::kRequest || m.kind == Kind::kInvalid; }

void answer(const Message& m) {
  emcp::json::Writer w(g_out);
  if (m.kind == Kind::kInvalid) {
    emcp::jsonrpc::write_invalid(w, m);
  } else if (m.method == "echo/fail") {
    emcp::jsonrpc::write_error(w, m.id, emcp::jsonrpc::ErrorCode::kMethodNotFound,
                               "Method not found: echo/fail always fails");
  } else {
    emcp::jsonrpc::begin_response(w, m.id);
    w.begin_object();
    w.member_str("method", m.method);
    if (m.params.exists()) {
      w.key("params");
      emcp::json::write_value(w, m.params);
    }
    w.end_object();
    emcp::jsonrpc::end_message(w);
  }
}

void answer_all(const emcp::jsonrpc::Decoded& d) {
  if (!d.batch) {
    if (!answered(*d.first)) return;
    answer(*d.first);
  } else {
    bool first = true;
    for (const Message* m = d.first; m; m = m->next) {
      if (!answered(*m)) continue;
      g_out.put(first ? '[' : ',');
      first = false;
      answer(*m);
    }
    if (first) return;  // only notifications: no answer at all
    g_out.put(']');
  }
  g_out.put('\n');
  (void)g_out.flush();
}

}  // namespace

// Diagnostics on stderr without stdio (which allocates).
void say(std::initializer_list<emcp::StrView> parts) {
  for (emcp::StrView s : parts) (void)emcp::posix::write_all(2, s.data(), s.size());
}
emcp::StrView num(uint64_t v, char* buf) { return emcp::StrView(buf, emcp::json::format_uint64(v, buf)); }

int main(int argc, char** argv) {
  if (argc > 1 && (strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0)) {
    char a[24], b[24];
    say({"usage: emcp-echo < requests.jsonl\n"
         "JSON-RPC 2.0 echo over stdio: one message per line in, one answer per line out.\n"
         "Limits: line ", num(EMCP_MAX_MESSAGE_LEN, a), " bytes, arena ", num(EMCP_ARENA_SIZE, b),
         " bytes.\n"});
    return 0;
  }
  uint8_t in[512];
  for (;;) {
    size_t n = 0;
    const emcp::Status s = emcp::posix::read_some(0, in, sizeof in, &n);
    if (s == emcp::Status::kWouldBlock) continue;
    const bool eof = s != emcp::Status::kOk;
    const uint8_t* p = in;
    for (;;) {
      size_t used = 0;
      const auto ev = eof ? g_framer.finish() : g_framer.push(p, n, &used);
      p += used;
      n -= used;
      if (ev == emcp::transport::LineFramer::Event::kMessage) {
        answer_all(g_framer.decoded());
      } else if (ev == emcp::transport::LineFramer::Event::kTooLong) {
        emcp::json::Writer w(g_out);
        emcp::jsonrpc::write_error(w, g_framer.too_long_id(),
                                   emcp::jsonrpc::ErrorCode::kInvalidRequest,
                                   "Invalid Request: message longer than the line limit");
        g_out.put('\n');
        (void)g_out.flush();
      } else {
        break;
      }
      if (eof) break;
    }
    if (g_out.status() != emcp::Status::kOk) {
      say({"emcp-echo: stdout failed: ", emcp::status_str(g_out.status()), "\n"});
      return 1;
    }
    if (eof) break;
  }
  char a[24], b[24], c[24], d[24];
  say({"emcp-echo: ", num(g_framer.messages(), a), " messages, ", num(g_framer.too_long(), b),
       " over-long lines, arena high-water ", num(g_arena.high_water(), c), " of ",
       num(g_arena.capacity(), d), " bytes\n"});
  return 0;
}
