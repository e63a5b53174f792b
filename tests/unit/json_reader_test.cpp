// Reader behaviour beyond accept/reject: decoded values, limits with their distinct statuses,
// error offsets, streaming details. Expected values come from RFC 8259 and the Unicode tables.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "emcp/json/reader.h"
#include "heap_guard.h"
#include "json_test_util.h"

using emcp::Status;
using emcp::json::Event;
using emcp::json::Reader;
using emcp::json::StaticReader;

namespace {

struct Parsed {
  bool ok;
  Status status;
  uint64_t offset;
  std::string log;
};

Parsed parse(Reader& r, const std::string& text, bool byte_by_byte = false) {
  static emcp_test::EventLog log;
  std::vector<size_t> cuts;
  if (byte_by_byte)
    for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
  emcp_test::Outcome o;
  {
    emcp_test::NoHeapScope no_heap;
    o = emcp_test::run_reader(r, reinterpret_cast<const uint8_t*>(text.data()), text.size(),
                              cuts.data(), cuts.size(), log);
  }
  return Parsed{o.accepted, o.status, o.offset, log.str()};
}

Parsed parse(const std::string& text, bool byte_by_byte = false) {
  static StaticReader<> r;
  Parsed a = parse(r, text, false);
  Parsed b = parse(r, text, true);
  EXPECT_EQ(a.ok, b.ok) << text;
  EXPECT_EQ(a.status, b.status) << text;
  EXPECT_EQ(a.offset, b.offset) << text;
  if (a.ok) {
    EXPECT_EQ(a.log, b.log) << text;
  }
  return byte_by_byte ? b : a;
}

std::string dbl(double d) {
  emcp_test::EventLog l;
  uint64_t bits;
  memcpy(&bits, &d, sizeof bits);
  l.put("d");
  l.put_hex(bits);
  l.put(" ");
  return l.str();
}

}  // namespace

TEST(JsonReader, Scalars) {
  EXPECT_EQ(parse("true").log, "T ");
  EXPECT_EQ(parse(" false ").log, "F ");
  EXPECT_EQ(parse("null\n").log, "N ");
  EXPECT_EQ(parse("\"\"").log, "s\"\" ");
  EXPECT_EQ(parse("0").log, "i0 ");
  EXPECT_EQ(parse("-0").log, "i0 ");
  EXPECT_EQ(parse("-0.0").log, dbl(-0.0));
  EXPECT_EQ(parse("12345").log, "i12345 ");
  EXPECT_EQ(parse("-12").log, "i-12 ");
}

TEST(JsonReader, Structures) {
  EXPECT_EQ(parse("{\"a\":[1,{\"b\":null}],\"c\":{}}").log, "{k\"a\":[i1 {k\"b\":N }]k\"c\":{}}");
  EXPECT_EQ(parse(" [ ] ").log, "[]");
  EXPECT_EQ(parse("[[[]]]").log, "[[[]]]");
}

TEST(JsonReader, Escapes) {
  EXPECT_EQ(parse(R"("\"\\\/\b\f\n\r\t")").log, "s\"\"\\/\b\f\n\r\t\" ");
  EXPECT_EQ(parse(R"("\u0041\u00e9\u20AC")").log, "s\"A\xC3\xA9\xE2\x82\xAC\" ");
  // Surrogate pair for U+1F600, in upper and lower case hex.
  EXPECT_EQ(parse(R"("\uD83D\uDE00\ud83d\ude00")").log, "s\"\xF0\x9F\x98\x80\xF0\x9F\x98\x80\" ");
  // Highest code point U+10FFFF.
  EXPECT_EQ(parse(R"("\uDBFF\uDFFF")").log, "s\"\xF4\x8F\xBF\xBF\" ");
  EXPECT_EQ(parse(R"({"k\u0000y":1})").log, std::string("{k\"k\0y\":i1 }", 12));
  EXPECT_EQ(parse(R"("\x")").status, Status::kInvalidEscape);
  EXPECT_EQ(parse(R"("\u12G4")").status, Status::kInvalidEscape);
  EXPECT_EQ(parse(R"("\uDE00")").status, Status::kInvalidSurrogate);
  EXPECT_EQ(parse(R"("\uD83D")").status, Status::kInvalidSurrogate);
  EXPECT_EQ(parse(R"("\uD83Dx")").status, Status::kInvalidSurrogate);
  EXPECT_EQ(parse(R"("\uD83D\n")").status, Status::kInvalidSurrogate);
  EXPECT_EQ(parse(R"("\uD83D\uD83D")").status, Status::kInvalidSurrogate);
}

TEST(JsonReader, Utf8) {
  EXPECT_EQ(parse("\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\"").log,
            "s\"\xC3\xA9\xE2\x82\xAC\xF0\x9F\x98\x80\" ");
  EXPECT_TRUE(parse("\"\xEF\xBF\xBF\xF4\x8F\xBF\xBF\"").ok);  // U+FFFF, U+10FFFF
  EXPECT_TRUE(parse("\"\x7F\"").ok);                            // DEL is not a control char
  const char* bad[] = {
      "\"\x80\"",             // lone continuation
      "\"\xC0\xAF\"",         // overlong
      "\"\xC1\xBF\"",         // overlong
      "\"\xE0\x80\xAF\"",     // overlong 3-byte
      "\"\xED\xA0\x80\"",     // UTF-16 surrogate D800
      "\"\xF0\x80\x80\xAF\"", // overlong 4-byte
      "\"\xF4\x90\x80\x80\"", // above U+10FFFF
      "\"\xF5\x80\x80\x80\"", // invalid lead
      "\"\xC3\"",             // truncated before quote
      "\"\xE2\x82\"",         // truncated
      "\"\xFF\"",
  };
  for (const char* b : bad) EXPECT_EQ(parse(b).status, Status::kInvalidUtf8) << b;
  EXPECT_EQ(parse("\"a\x01\"").status, Status::kControlInString);
  EXPECT_EQ(parse("\"a\nb\"").status, Status::kControlInString);
  EXPECT_EQ(parse("\"\xC3\xA9\x1F\"").offset, 3u);
}

TEST(JsonReader, Numbers) {
  EXPECT_EQ(parse("9223372036854775807").log, "i9223372036854775807 ");
  EXPECT_EQ(parse("-9223372036854775808").log, "i-9223372036854775808 ");
  EXPECT_EQ(parse("9223372036854775808").log, dbl(9223372036854775808.0));
  EXPECT_EQ(parse("100").log, "i100 ");
  EXPECT_EQ(parse("1.5").log, dbl(1.5));
  EXPECT_EQ(parse("100.25").log, dbl(100.25));
  EXPECT_EQ(parse("0.001").log, dbl(0.001));
  EXPECT_EQ(parse("1.50").log, dbl(1.5));
  EXPECT_EQ(parse("1e2").log, dbl(100.0));
  EXPECT_EQ(parse("1E+2").log, dbl(100.0));
  EXPECT_EQ(parse("25e-1").log, dbl(2.5));
  EXPECT_EQ(parse("0e0").log, dbl(0.0));
  EXPECT_EQ(parse("-0e-0").log, dbl(-0.0));
  EXPECT_EQ(parse("0.1").log, dbl(0.1));
  EXPECT_EQ(parse("3.141592653589793").log, dbl(3.141592653589793));
  EXPECT_EQ(parse("2.2250738585072014e-308").log, dbl(2.2250738585072014e-308));
  EXPECT_EQ(parse("4.9e-324").log, dbl(4.9e-324));
  EXPECT_EQ(parse("1.7976931348623157e308").log, dbl(1.7976931348623157e308));
  EXPECT_EQ(parse("1e-400").log, dbl(0.0));
  EXPECT_EQ(parse("-1e-400").log, dbl(-0.0));
  // Many zeros are not significant digits: 1 followed by 300 zeros is 1e300.
  EXPECT_EQ(parse("1" + std::string(300, '0')).log, dbl(1e300));
  EXPECT_EQ(parse("0." + std::string(300, '0') + "1").log, dbl(1e-301));
  EXPECT_EQ(parse("1." + std::string(300, '0')).log, dbl(1.0));
  EXPECT_EQ(parse("[1,-2.5e3,3]").log, "[i1 " + dbl(-2500.0) + "i3 ]");
  // Grammar errors.
  const char* bad[] = {"01", "-", "-a", "1.", "1.e5", ".5", "1e", "1e+", "+1", "0x10", "1.5e-",
                       "--1", "-01", "Infinity", "NaN", "1_000"};
  for (const char* b : bad) {
    Parsed p = parse(b);
    EXPECT_FALSE(p.ok) << b;
    EXPECT_TRUE(p.status == Status::kInvalidNumber || p.status == Status::kUnexpectedChar ||
                p.status == Status::kTrailingData)
        << b << ": " << emcp::status_str(p.status);
  }
  EXPECT_EQ(parse("01").status, Status::kInvalidNumber);
  EXPECT_EQ(parse("1.").status, Status::kInvalidNumber);
  EXPECT_EQ(parse("1e").status, Status::kInvalidNumber);
  EXPECT_EQ(parse("[1.]").status, Status::kInvalidNumber);
}

TEST(JsonReader, NumberLimits) {
  // Exactly EMCP_JSON_MAX_NUMBER_DIGITS significant digits are fine, one more is not.
  std::string max(EMCP_JSON_MAX_NUMBER_DIGITS, '7');
  EXPECT_TRUE(parse(max).ok);
  EXPECT_TRUE(parse("0." + max + "000").ok);
  Parsed p = parse(max + "7");
  EXPECT_EQ(p.status, Status::kNumberTooLong);
  EXPECT_EQ(p.offset, static_cast<uint64_t>(EMCP_JSON_MAX_NUMBER_DIGITS));
  EXPECT_EQ(parse("1e309").status, Status::kNumberOverflow);
  EXPECT_EQ(parse("-1e309").status, Status::kNumberOverflow);
  EXPECT_EQ(parse("1e99999999999999999999").status, Status::kNumberOverflow);
  EXPECT_EQ(parse("0e99999999999999999999").log, dbl(0.0));
  EXPECT_EQ(parse("1e-99999999999999999999").log, dbl(0.0));
}

TEST(JsonReader, DepthLimit) {
  StaticReader<4> r;
  EXPECT_TRUE(parse(r, "[[[[]]]]").ok);
  Parsed p = parse(r, "[[[[[]]]]]");
  EXPECT_EQ(p.status, Status::kDepthLimit);
  EXPECT_EQ(p.offset, 4u);
  EXPECT_TRUE(parse(r, "{\"a\":{\"b\":[{}]}}").ok);
  EXPECT_EQ(parse(r, "{\"a\":{\"b\":[{\"c\":[]}]}}").status, Status::kDepthLimit);
  // Many levels in one word boundary region.
  StaticReader<40> r40;
  std::string deep = std::string(40, '[') + std::string(40, ']');
  EXPECT_TRUE(parse(r40, deep).ok);
  EXPECT_EQ(parse(r40, "[" + deep + "]").status, Status::kDepthLimit);
  // Alternating objects and arrays across the 32-bit word boundary keep their kind.
  std::string mixed;
  for (int i = 0; i < 20; ++i) mixed += "{\"k\":[";
  mixed += "1";
  for (int i = 0; i < 20; ++i) mixed += "]}";
  EXPECT_TRUE(parse(r40, mixed).ok);
  std::string wrong = mixed;
  wrong[wrong.size() - 1] = ']';
  EXPECT_EQ(parse(r40, wrong).status, Status::kUnexpectedChar);
}

TEST(JsonReader, KeyLimit) {
  StaticReader<8, 16> r;
  std::string k16(16, 'k');
  EXPECT_TRUE(parse(r, "{\"" + k16 + "\":1}").ok);
  Parsed over = parse(r, "{\"" + k16 + "x\":1}");
  EXPECT_EQ(over.status, Status::kKeyTooLong);
  EXPECT_EQ(over.offset, 19u);  // reported at the key's closing quote
  // The same when the key is assembled from pieces or escapes.
  std::string text = "{\"" + k16 + "x\":1}";
  Parsed p = parse(r, text, true);
  EXPECT_EQ(p.status, Status::kKeyTooLong);
  EXPECT_TRUE(parse(r, "{\"\\u0041" + std::string(15, 'k') + "\":1}", true).ok);
  EXPECT_EQ(parse(r, "{\"\\u0041" + k16 + "\":1}", true).status, Status::kKeyTooLong);
  // Escapes in a key cost no stack: 200,000 of them in one input (this overflowed the stack of
  // a debug build when each escape re-entered the string scanner).
  std::string escapes;
  for (int i = 0; i < 200000; ++i) escapes += "\\n";
  Parsed many = parse(r, "{\"" + escapes + "\":1}");
  EXPECT_EQ(many.status, Status::kKeyTooLong);
  EXPECT_EQ(many.offset, 2u + escapes.size());
  // Long string values are not limited.
  EXPECT_TRUE(parse(r, "{\"k\":\"" + std::string(10000, 'v') + "\"}").ok);
}

TEST(JsonReader, SyntaxErrorsAndOffsets) {
  struct Case {
    const char* text;
    Status status;
    uint64_t offset;
  };
  const Case cases[] = {
      {"", Status::kUnexpectedEnd, 0},
      {"   ", Status::kUnexpectedEnd, 3},
      {"[1,]", Status::kUnexpectedChar, 3},
      {"{\"a\":1,}", Status::kUnexpectedChar, 7},
      {"[1 2]", Status::kUnexpectedChar, 3},
      {"{\"a\" 1}", Status::kUnexpectedChar, 5},
      {"{1:2}", Status::kUnexpectedChar, 1},
      {"[}", Status::kUnexpectedChar, 1},
      {"{]", Status::kUnexpectedChar, 1},
      {"[1}", Status::kUnexpectedChar, 2},
      {"{} {}", Status::kTrailingData, 3},
      {"1 2", Status::kTrailingData, 2},
      {"tru", Status::kUnexpectedEnd, 3},
      {"trUe", Status::kUnexpectedChar, 2},
      {"nul", Status::kUnexpectedEnd, 3},
      {"[\"abc", Status::kUnexpectedEnd, 5},
      {"[\"abc\\", Status::kUnexpectedEnd, 6},
      {"{\"ab", Status::kUnexpectedEnd, 4},
      {"[1", Status::kUnexpectedEnd, 2},
      {"'a'", Status::kUnexpectedChar, 0},
      {"\xEF\xBB\xBF{}", Status::kUnexpectedChar, 0},
  };
  for (const Case& c : cases) {
    Parsed p = parse(c.text);
    EXPECT_FALSE(p.ok) << c.text;
    EXPECT_EQ(p.status, c.status) << c.text << ": " << emcp::status_str(p.status);
    EXPECT_EQ(p.offset, c.offset) << c.text;
  }
}

TEST(JsonReader, StringsStreamWithoutCopying) {
  emcp_test::NoHeapScope no_heap;
  StaticReader<> r;
  const char text[] = "[\"hello world\",\"a\\nb\"]";
  r.feed(text, sizeof text - 1);
  ASSERT_EQ(r.next(), Event::kArrayBegin);
  ASSERT_EQ(r.next(), Event::kString);
  // A string inside one input chunk without escapes points into the input.
  EXPECT_EQ(r.text().data(), text + 2);
  EXPECT_EQ(r.text().size(), 11u);
  ASSERT_EQ(r.next(), Event::kStringPart);
  EXPECT_TRUE(r.text() == "a");
  ASSERT_EQ(r.next(), Event::kStringPart);
  EXPECT_TRUE(r.text() == "\n");
  ASSERT_EQ(r.next(), Event::kString);
  EXPECT_TRUE(r.text() == "b");
  ASSERT_EQ(r.next(), Event::kArrayEnd);
  EXPECT_TRUE(r.done());
  EXPECT_EQ(r.next(), Event::kNeedInput);
  r.finish();
  EXPECT_EQ(r.next(), Event::kDocumentEnd);
  EXPECT_EQ(r.next(), Event::kDocumentEnd);  // sticky
}

TEST(JsonReader, StringSplitAcrossFeeds) {
  emcp_test::NoHeapScope no_heap;
  StaticReader<> r;
  r.feed("\"abc", 4);
  ASSERT_EQ(r.next(), Event::kStringPart);
  EXPECT_TRUE(r.text() == "abc");
  ASSERT_EQ(r.next(), Event::kNeedInput);
  r.feed("def\"", 4);
  ASSERT_EQ(r.next(), Event::kString);
  EXPECT_TRUE(r.text() == "def");
  EXPECT_TRUE(r.done());
}

TEST(JsonReader, MisuseIsReported) {
  emcp_test::NoHeapScope no_heap;
  StaticReader<> r;
  r.feed("[1,2]", 5);
  ASSERT_EQ(r.next(), Event::kArrayBegin);
  r.feed("[", 1);  // previous input not used up
  EXPECT_EQ(r.next(), Event::kError);
  EXPECT_EQ(r.status(), Status::kInvalidState);
  EXPECT_EQ(r.next(), Event::kError);  // sticky
  r.reset();
  r.feed("7", 1);
  EXPECT_EQ(r.next(), Event::kNeedInput);  // a number ends only at a delimiter or the end
  r.finish();
  EXPECT_EQ(r.next(), Event::kInt);
  EXPECT_EQ(r.int_value(), 7);
  EXPECT_EQ(r.next(), Event::kDocumentEnd);
}

TEST(JsonReader, OffsetCountsAcrossFeeds) {
  StaticReader<> r;
  r.feed("[1,", 3);
  EXPECT_EQ(r.next(), Event::kArrayBegin);
  EXPECT_EQ(r.next(), Event::kInt);
  EXPECT_EQ(r.next(), Event::kNeedInput);
  r.feed(" x]", 3);
  EXPECT_EQ(r.next(), Event::kError);
  EXPECT_EQ(r.status(), Status::kUnexpectedChar);
  EXPECT_EQ(r.offset(), 4u);
}
