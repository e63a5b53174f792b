// The newline framer of the MCP stdio transport: one JSON-RPC message per line, blank lines
// ignored, over-long lines rejected and skipped, any split of the input.
#include "emcp/transport/line_framer.h"

#include <gtest/gtest.h>

#include <string.h>

#include <string>
#include <vector>

#include "heap_guard.h"

using emcp::StrView;
using emcp::jsonrpc::Id;
using emcp::jsonrpc::Kind;
using emcp::transport::LineFramer;

namespace {

struct Rig {
  emcp::json::StaticReader<> reader;
  emcp::StaticArena<2048> arena;
  emcp::jsonrpc::Decoder decoder{reader, arena};
};

// Runs `input` through a framer in pieces of `piece` bytes (0: whole) and describes each event:
// "R<id>" request, "N" notification, "E<code>" invalid, "e<id>" error response, "L<id>" line
// too long, "K<id>" a line that lost bytes. A '\x01' in `input` is not fed: it marks a place
// where bytes went missing (lose()).
std::vector<std::string> run(const std::string& input, size_t piece, size_t max_line = 64,
                             bool finish = true) {
  static Rig rig;
  LineFramer framer(rig.decoder, max_line);
  std::vector<std::string> out;
  char events[256];
  size_t nev = 0;
  auto note = [&](LineFramer::Event ev, bool gap = false) {
    if (nev >= sizeof events) return;
    if (ev == LineFramer::Event::kMessage) {
      const auto* m = framer.decoded().first;
      events[nev++] = m->kind == Kind::kRequest        ? 'R'
                      : m->kind == Kind::kNotification ? 'N'
                      : m->kind == Kind::kErrorResponse ? 'e'
                                                        : 'E';
      // Keep the id (small ints in these tests) or the error code class.
      events[nev++] = m->kind == Kind::kInvalid
                          ? (m->invalid_code == emcp::jsonrpc::ErrorCode::kParseError ? 'p' : 'i')
                          : static_cast<char>('0' + (m->id.type == Id::Type::kInt ? m->id.num % 10 : 0));
    } else if (ev == LineFramer::Event::kTooLong) {
      const Id id = framer.too_long_id();
      events[nev++] = gap ? 'K' : 'L';
      events[nev++] = id.type == Id::Type::kInt ? static_cast<char>('0' + id.num % 10)
                      : id.type == Id::Type::kNull ? 'n'
                                                   : '?';
    }
  };
  {
    emcp_test::NoHeapScope no_heap;
    size_t pos = 0;
    while (pos < input.size()) {
      size_t n = piece == 0 ? input.size() - pos : std::min(piece, input.size() - pos);
      const char* p = input.data() + pos;
      const char* gap = static_cast<const char*>(memchr(p, '\x01', n));
      if (gap == p) {
        const LineFramer::Event ev = framer.lose();
        if (ev != LineFramer::Event::kNeedInput) note(ev, true);
        ++pos;
        continue;
      }
      if (gap != nullptr) n = static_cast<size_t>(gap - p);
      pos += n;
      while (n != 0) {
        size_t used = 0;
        LineFramer::Event ev = framer.push(p, n, &used);
        p += used;
        n -= used;
        if (ev == LineFramer::Event::kNeedInput) {
          EXPECT_EQ(n, 0u);
          break;
        }
        note(ev);
      }
    }
    if (finish) note(framer.finish());
  }
  for (size_t i = 0; i + 1 < nev; i += 2) out.push_back(std::string(events + i, 2));
  return out;
}

// The same events whatever the split.
std::vector<std::string> run_all(const std::string& input, size_t max_line = 64) {
  auto whole = run(input, 0, max_line);
  for (size_t piece : {1u, 2u, 3u, 7u, 13u}) EXPECT_EQ(run(input, piece, max_line), whole) << piece;
  return whole;
}

using V = std::vector<std::string>;

}  // namespace

TEST(LineFramer, OneMessagePerLine) {
  EXPECT_EQ(run_all("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"ping\"}\n"),
            (V{"R1", "N0", "R2"}));
}

TEST(LineFramer, CrLfAndBlankLinesAndLastLineWithoutNewline) {
  EXPECT_EQ(run_all("\n\r\n  \t\n{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}\r\n\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"b\"}"),
            (V{"R1", "R2"}));
  // Without finish() the unterminated last line is still pending.
  EXPECT_EQ(run("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"}", 0, 64, false), V{});
}

TEST(LineFramer, BadLinesAreAnsweredAndTheNextLineWorks) {
  EXPECT_EQ(run_all("{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"\n"   // truncated
                    "not json\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"a\"} {}\n"  // two values
                    "{\"jsonrpc\":\"2.0\",\"method\":1}\n"
                    "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"ok\"}\n"),
            (V{"Ep", "Ep", "Ep", "Ei", "R3"}));
}

TEST(LineFramer, OverLongLinesAreSkipped) {
  const std::string ok = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n";
  // The id comes before the limit, so the answer can carry it.
  const std::string long_line =
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"params\":{\"t\":\"" + std::string(200, 'a') +
      "\"}}\n";
  EXPECT_EQ(run_all(long_line + ok), (V{"L7", "R4"}));
  // Garbage that never ends a line is skipped too, with id null.
  EXPECT_EQ(run_all(std::string(500, '[') + "\n" + ok), (V{"Ln", "R4"}));
  // Exactly at the limit is fine; one more byte is not.
  std::string exact = "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"p\"}";
  exact += std::string(64 - exact.size(), ' ');
  ASSERT_EQ(exact.size(), 64u);
  EXPECT_EQ(run_all(exact + "\n"), V{"R5"});
  EXPECT_EQ(run_all(exact + " \n" + ok), (V{"L5", "R4"}));
  // An over-long last line without newline is dropped at the end of the stream.
  EXPECT_EQ(run_all(ok + std::string(100, 'x')), (V{"R4", "Ln"}));
}

TEST(LineFramer, FinishLeavesNoStateBehind) {
  static Rig rig;
  LineFramer framer(rig.decoder, 32);
  const std::string junk(40, 'x');
  const std::string line = "{\"jsonrpc\":\"2.0\",\"method\":\"a\"}\n";
  size_t used = 0;
  EXPECT_EQ(framer.push(junk.data(), junk.size(), &used), LineFramer::Event::kTooLong);
  EXPECT_EQ(framer.finish(), LineFramer::Event::kNeedInput);
  // A new stream on the same framer starts clean.
  EXPECT_EQ(framer.push(line.data(), line.size(), &used), LineFramer::Event::kMessage);
  EXPECT_EQ(framer.decoded().first->kind, Kind::kNotification);
  // Also after a partial line.
  EXPECT_EQ(framer.push("{\"jsonrpc\"", 11, &used), LineFramer::Event::kNeedInput);
  EXPECT_EQ(framer.finish(), LineFramer::Event::kMessage);  // the partial line is decoded...
  EXPECT_EQ(framer.decoded().first->invalid_code, emcp::jsonrpc::ErrorCode::kParseError);
  EXPECT_EQ(framer.push(line.data(), line.size(), &used), LineFramer::Event::kMessage);
  EXPECT_EQ(framer.decoded().first->kind, Kind::kNotification);  // ...and forgotten
}

TEST(LineFramer, TooLongResponsesEndTheRequestTheyAnswer) {
  // A client's response (to a server request) that is too long must not be answered with its
  // id (the client would take the error for the answer to a request it never sent): it is
  // handed over as an error response to that id, so the server's request ends now (once a
  // server has sent a request: that turns it on).
  emcp::jsonrpc::Decoder::keep_lost_responses();
  const std::string response =
      "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":{\"t\":\"" + std::string(100, 'a') + "\"}}\n";
  EXPECT_EQ(run_all(response + "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"m\"}\n"), (V{"e7", "R3"}));
  // The id after the limit: nothing to match it with; reported as too long, without id.
  const std::string late =
      "{\"jsonrpc\":\"2.0\",\"result\":{\"t\":\"" + std::string(100, 'a') + "\"},\"id\":7}\n";
  EXPECT_EQ(run_all(late), V{"Ln"});
  // Nor when the line is not JSON: reported as too long.
  const std::string broken = "{\"jsonrpc\":\"2.0\",\"id\":7,\"result\":nope" + std::string(100, ' ') + "\n";
  EXPECT_EQ(run_all(broken), V{"Ln"});
}

TEST(LineFramer, ALineThatLostBytesIsReportedNotParsed) {
  const std::string ok = "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"ping\"}\n";
  // Bytes lost after the id: the line is reported with it, whatever the rest still says (here
  // the loss took its end and the next line's start: what remains would parse as garbage).
  EXPECT_EQ(run_all("{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"par\x01ing\"}\n" + ok),
            (V{"K7", "R4"}));
  // Lost before the id was read, or between lines: the damaged line's id is not known.
  EXPECT_EQ(run_all("{\"jsonrpc\":\"2.0\",\"i\x01" "d\":7,\"method\":\"ping\"}\n" + ok), (V{"Kn", "R4"}));
  EXPECT_EQ(run_all(ok + "\x01" + "\"id\":3,\"method\":\"ping\"}\n" + ok), (V{"R4", "Kn", "R4"}));
  // A notification's loss is reported too (its answer has a null id), never taken for one.
  EXPECT_EQ(run_all("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/\x01led\"}\n" + ok), (V{"Kn", "R4"}));
  // Two losses before the line ends are one gap: one report.
  EXPECT_EQ(run_all("{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"a\",\x01\"x\x01y\"}\n" + ok), (V{"K6", "R4"}));
  // Only a request's id is answered: an id without its method yet may be a response's.
  EXPECT_EQ(run_all("{\"jsonrpc\":\"2.0\",\"id\":6,\x01\"method\":\"a\"}\n" + ok), (V{"Kn", "R4"}));
  // A loss inside an over-long line already answered: the line ends as a damaged one (its
  // newline may have been lost), with no id (its answer was given).
  const std::string long_line = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"x\",\"params\":\"" + std::string(80, 'a');
  EXPECT_EQ(run_all(long_line + "\x01" + "bbb\"}\n" + ok), (V{"L7", "Kn", "R4"}));
  // At the end of the stream a damaged line is still reported.
  EXPECT_EQ(run_all(ok + "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"a\"\x01"), (V{"R4", "K5"}));
}

TEST(LineFramer, ALossIsAnsweredWhereItHappens) {
  static Rig rig;
  LineFramer framer(rig.decoder, 64);
  size_t used = 0;
  const std::string part = "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"a\"";
  EXPECT_EQ(framer.push(part.data(), part.size(), &used), LineFramer::Event::kNeedInput);
  EXPECT_EQ(framer.lose(), LineFramer::Event::kTooLong);  // answered now, not at the newline
  EXPECT_EQ(framer.too_long_id().num, 3);
  EXPECT_EQ(framer.lose(), LineFramer::Event::kNeedInput);  // the same gap: answered once
  EXPECT_EQ(framer.push("xx\n", 3, &used), LineFramer::Event::kNeedInput);
  EXPECT_EQ(used, 3u);
  EXPECT_EQ(framer.messages(), 0u);
  EXPECT_EQ(framer.too_long(), 0u);
  // After the newline a gap is a new one.
  EXPECT_EQ(framer.lose(), LineFramer::Event::kTooLong);
  EXPECT_EQ(framer.too_long_id().type, Id::Type::kNull);
}
