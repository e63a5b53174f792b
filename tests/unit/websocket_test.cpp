// RFC 6455 framing: the RFC's own examples (section 5.7, the handshake of section 1.3), any
// byte split, and each violation with its close code. The parser and the frame functions run
// inside a NoHeapScope; the frames are built before it, what comes out goes to FixedTexts.
#include <gtest/gtest.h>
#include <string.h>

#include <string>
#include <string_view>
#include <vector>

#include "emcp/mbedtls/sha1.h"
#include "emcp/http/websocket.h"
#include "heap_guard.h"
#include "no_heap_util.h"

namespace {

using emcp::ws::FrameParser;
using Event = FrameParser::Event;
using namespace std::string_view_literals;

struct Trace {
  emcp_test::FixedText<16> events;  // a letter per event: B D(ata) E P(ing) O(pong) C(lose) X(error)
  emcp_test::FixedText<512> text;   // data of text messages
  emcp_test::FixedText<128> control;
  uint16_t code = 0;
};

// Feeds `bytes` in pieces of `step` bytes (0: whole) and records what comes out.
Trace feed(const std::vector<uint8_t>& bytes, size_t step, uint64_t max = 1 << 20) {
  emcp_test::NoHeapScope no_heap;
  FrameParser p(max);
  Trace t;
  size_t off = 0;
  while (off <= bytes.size()) {
    size_t n = step == 0 ? bytes.size() - off : std::min(step, bytes.size() - off);
    const uint8_t* d = bytes.data() + off;
    for (;;) {
      size_t used = 0;
      const Event e = p.push(d, n, &used);
      d += used;
      n -= used;
      off += used;
      if (e == Event::kNeedInput) break;
      switch (e) {
        case Event::kMessageBegin: t.events.append("B"); break;
        case Event::kData: t.text.append(p.data().data(), p.data().size()); break;
        case Event::kMessageEnd: t.events.append("E"); break;
        case Event::kPing: t.events.append("P"); t.control.assign(p.control_payload().data(), p.control_payload().size()); break;
        case Event::kPong: t.events.append("O"); break;
        case Event::kClose: t.events.append("C"); t.code = p.close_code(); return t;
        case Event::kError: t.events.append("X"); t.code = p.error_code(); return t;
        default: break;
      }
    }
    if (off == bytes.size()) break;
  }
  return t;
}

std::vector<uint8_t> masked(uint8_t first, const std::string& payload, const uint8_t key[4]) {
  std::vector<uint8_t> out{first};
  const size_t n = payload.size();
  if (n < 126) {
    out.push_back(static_cast<uint8_t>(0x80 | n));
  } else {
    out.push_back(0x80 | 126);
    out.push_back(static_cast<uint8_t>(n >> 8));
    out.push_back(static_cast<uint8_t>(n));
  }
  out.insert(out.end(), key, key + 4);
  for (size_t i = 0; i < n; ++i) out.push_back(static_cast<uint8_t>(payload[i] ^ key[i & 3]));
  return out;
}

const uint8_t kKey[4] = {0x37, 0xfa, 0x21, 0x3d};

TEST(WebSocket, RfcMaskedHelloInAnySplit) {
  // RFC 6455 5.7: a single-frame masked text message containing "Hello".
  const std::vector<uint8_t> frame = {0x81, 0x85, 0x37, 0xfa, 0x21, 0x3d, 0x7f, 0x9f, 0x4d, 0x51, 0x58};
  for (size_t step : {0, 1, 2, 3, 5, 7}) {
    const Trace t = feed(frame, step);
    EXPECT_EQ(t.events.view(), "BE"sv) << step;
    EXPECT_EQ(t.text.view(), "Hello"sv) << step;
  }
}

TEST(WebSocket, RfcFragmentsWithPingBetween) {
  // RFC 6455 5.7: "Hel" + "lo" as two fragments; a ping may come between them.
  std::vector<uint8_t> bytes = masked(0x01, "Hel", kKey);
  const std::vector<uint8_t> ping = masked(0x89, "Hello", kKey);
  bytes.insert(bytes.end(), ping.begin(), ping.end());
  const std::vector<uint8_t> last = masked(0x80, "lo", kKey);
  bytes.insert(bytes.end(), last.begin(), last.end());
  for (size_t step : {0, 1, 4}) {
    const Trace t = feed(bytes, step);
    EXPECT_EQ(t.events.view(), "BPE"sv) << step;
    EXPECT_EQ(t.text.view(), "Hello"sv);
    EXPECT_EQ(t.control.view(), "Hello"sv);
  }
}

TEST(WebSocket, LengthsOf126AndEmptyMessages) {
  const std::string big(300, 'x');
  std::vector<uint8_t> bytes = masked(0x81, big, kKey);
  const std::vector<uint8_t> empty = masked(0x81, "", kKey);
  bytes.insert(bytes.end(), empty.begin(), empty.end());
  const Trace t = feed(bytes, 1);
  EXPECT_EQ(t.events.view(), "BEBE"sv);
  EXPECT_EQ(t.text.view(), big);
}

TEST(WebSocket, CloseCarriesTheCode) {
  const Trace t = feed(masked(0x88, std::string("\x03\xe8" "bye", 5), kKey), 1);
  EXPECT_EQ(t.events.view(), "C"sv);
  EXPECT_EQ(t.code, 1000);
  EXPECT_EQ(feed(masked(0x88, "", kKey), 0).code, emcp::ws::kCloseNoStatus);
}

TEST(WebSocket, EachViolationHasItsCloseCode) {
  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    uint16_t code;
  };
  std::vector<uint8_t> unmasked = {0x81, 0x02, 'h', 'i'};
  std::vector<uint8_t> huge = {0x81, 0xFF, 0x80, 0, 0, 0, 0, 0, 0, 0};  // top length bit set
  std::vector<uint8_t> too_long = masked(0x81, std::string(200, 'a'), kKey);
  const Case cases[] = {
      {"unmasked", unmasked, 1002},
      {"reserved bit", masked(0xC1, "x", kKey), 1002},
      {"opcode 3", masked(0x83, "x", kKey), 1002},
      {"opcode 0xB", masked(0x8B, "x", kKey), 1002},
      {"fragmented ping", masked(0x09, "x", kKey), 1002},
      {"ping of 126 bytes", masked(0x89, std::string(126, 'p'), kKey), 1002},
      {"continuation first", masked(0x80, "x", kKey), 1002},
      {"binary", masked(0x82, "x", kKey), 1003},
      {"close of one byte", masked(0x88, "\x03", kKey), 1002},
      {"close code 1005", masked(0x88, std::string("\x03\xed", 2), kKey), 1002},
      {"close code 999", masked(0x88, std::string("\x03\xe7", 2), kKey), 1002},
      {"64-bit length top bit", huge, 1002},
      {"longer than the limit", too_long, 1009},
      {"invalid UTF-8", masked(0x81, "\xff", kKey), 1007},
      {"overlong UTF-8", masked(0x81, "\xc0\xaf", kKey), 1007},
      {"UTF-8 beyond U+10FFFF", masked(0x81, "\xf4\x90\x80\x80", kKey), 1007},
      {"truncated UTF-8", masked(0x81, "\xe2\x82", kKey), 1007},
  };
  for (const Case& c : cases) {
    for (size_t step : {0, 1}) {
      const Trace t = feed(c.bytes, step, 100);
      ASSERT_FALSE(t.events.view().empty()) << c.name;
      EXPECT_EQ(t.events.view().back(), 'X') << c.name;
      EXPECT_EQ(t.code, c.code) << c.name << " step " << step;
    }
  }
  // A new text message inside a fragmented one.
  std::vector<uint8_t> nested = masked(0x01, "a", kKey);
  const std::vector<uint8_t> again = masked(0x81, "b", kKey);
  nested.insert(nested.end(), again.begin(), again.end());
  EXPECT_EQ(feed(nested, 0).code, 1002);
  // UTF-8 split across fragments is fine.
  std::vector<uint8_t> split = masked(0x01, "\xc3", kKey);
  const std::vector<uint8_t> rest = masked(0x80, "\xa9", kKey);
  split.insert(split.end(), rest.begin(), rest.end());
  const Trace t = feed(split, 1);
  EXPECT_EQ(t.events.view(), "BE"sv);
  EXPECT_EQ(t.text.view(), "\xc3\xa9"sv);
}

TEST(WebSocket, FrameHeaders) {
  emcp_test::NoHeapScope no_heap;
  uint8_t h[10];
  EXPECT_EQ(emcp::ws::write_frame_header(h, emcp::ws::Opcode::kText, true, 5), 2u);
  EXPECT_EQ(h[0], 0x81);
  EXPECT_EQ(h[1], 5);
  EXPECT_EQ(emcp::ws::write_frame_header(h, emcp::ws::Opcode::kContinuation, false, 300), 4u);
  EXPECT_EQ(h[0], 0x00);
  EXPECT_EQ(h[1], 126);
  EXPECT_EQ(h[2] * 256 + h[3], 300);
  EXPECT_EQ(emcp::ws::write_frame_header(h, emcp::ws::Opcode::kText, true, 70000), 10u);
  EXPECT_EQ(h[1], 127);
  EXPECT_EQ((h[7] << 16) | (h[8] << 8) | h[9], 70000);
}

TEST(WebSocket, RfcHandshakeAcceptKey) {
  // RFC 6455 1.3: key "dGhlIHNhbXBsZSBub25jZQ==" gives "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=".
  emcp_test::NoHeapScope no_heap;
  char out[29];
  emcp::ws::accept_key("dGhlIHNhbXBsZSBub25jZQ==", &emcp::mbedtls::sha1, out);
  EXPECT_STREQ(out, "s3pPLMBiTxaQ9kYGzzhZRbK+xOo=");
}

}  // namespace
