// Writer and sinks. Expected texts follow RFC 8259 and what JSON.stringify writes; base64 uses
// the RFC 4648 test vectors; UTF-8 repair follows the Unicode "maximal subpart" practice.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <string>

#include "emcp/json/sink.h"
#include "emcp/json/writer.h"
#include "heap_guard.h"

using emcp::Status;
using emcp::StrView;
using emcp::json::BufferSink;
using emcp::json::CountingSink;
using emcp::json::FlushingSink;
using emcp::json::Writer;

namespace {

// Collects what a FlushingSink hands over, and how often.
struct Collector {
  char data[1 << 16];
  size_t len = 0;
  size_t calls = 0;
  size_t fail_after = static_cast<size_t>(-1);
  static Status on_flush(void* ctx, const char* p, size_t n) {
    auto* c = static_cast<Collector*>(ctx);
    if (c->calls++ >= c->fail_after) return Status::kIoError;
    memcpy(c->data + c->len, p, n);
    c->len += n;
    return Status::kOk;
  }
};

template <typename Fn>
std::string render(Fn fn, Status* status = nullptr) {
  static char buf[1 << 16];
  BufferSink sink(buf, sizeof buf);
  {
    emcp_test::NoHeapScope no_heap;
    Writer w(sink);
    fn(w);
    if (status) *status = w.status();
    else EXPECT_EQ(w.status(), Status::kOk);
  }
  return std::string(sink.view().data(), sink.view().size());
}

std::string str(const std::string& s) {
  return render([&](Writer& w) { w.string(StrView(s.data(), s.size())); });
}

}  // namespace

TEST(JsonWriter, Structure) {
  EXPECT_EQ(render([](Writer& w) {
              w.begin_object();
              w.member_str("name", "temp");
              w.member_int("n", -3);
              w.member_bool("ok", true);
              w.key("list");
              w.begin_array();
              w.int64(1);
              w.null();
              w.begin_object();
              w.end_object();
              w.begin_array();
              w.end_array();
              w.end_array();
              w.key("raw");
              w.raw("{\"x\":[1]}");
              w.end_object();
              EXPECT_TRUE(w.complete());
            }),
            R"({"name":"temp","n":-3,"ok":true,"list":[1,null,{},[]],"raw":{"x":[1]}})");
  EXPECT_EQ(render([](Writer& w) { w.uint64(18446744073709551615u); }), "18446744073709551615");
  EXPECT_EQ(render([](Writer& w) { w.int64(INT64_MIN); }), "-9223372036854775808");
  EXPECT_EQ(render([](Writer& w) { w.boolean(false); }), "false");
}

TEST(JsonWriter, EscapesLikeJsonStringify) {
  // JSON.stringify("\"\\/\b\f\n\r\t\u0000\u001f\u007f") ===
  //   '"\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\x7f"'
  EXPECT_EQ(str(std::string("\"\\/\b\f\n\r\t\0\x1f\x7f", 11)),
            "\"\\\"\\\\/\\b\\f\\n\\r\\t\\u0000\\u001f\x7f\"");
  EXPECT_EQ(str("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"),
            "\"caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80\"");
  EXPECT_EQ(render([](Writer& w) {
              w.begin_object();
              w.member_str("a\"b\n", "v");
              w.end_object();
            }),
            "{\"a\\\"b\\n\":\"v\"}");
}

TEST(JsonWriter, RepairsInvalidUtf8) {
  const std::string fffd = "\xEF\xBF\xBD";
  EXPECT_EQ(str("a\x80z"), "\"a" + fffd + "z\"");
  EXPECT_EQ(str("\xC0\xAF"), "\"" + fffd + fffd + "\"");          // C0 never valid
  EXPECT_EQ(str("\xE2\x82z"), "\"" + fffd + "z\"");               // maximal subpart E2 82
  EXPECT_EQ(str("\xED\xA0\x80"), "\"" + fffd + fffd + fffd + "\"");  // surrogate: ED then 2 bad
  EXPECT_EQ(str("\xF4\x90\x80\x80"), "\"" + fffd + fffd + fffd + fffd + "\"");
  EXPECT_EQ(str("\xF0\x9F\x98"), "\"" + fffd + "\"");             // cut by the string's end
  EXPECT_EQ(str("\xFF"), "\"" + fffd + "\"");
}

TEST(JsonWriter, StringPartsMaySplitCharactersAnywhere) {
  const std::string text = "x\xC3\xA9y\xE2\x82\xAC\xF0\x9F\x98\x80\"\n\\z";
  const std::string expected = str(text);
  for (size_t a = 0; a <= text.size(); ++a) {
    for (size_t b = a; b <= text.size(); ++b) {
      std::string got = render([&](Writer& w) {
        w.string_begin();
        w.string_part(StrView(text.data(), a));
        w.string_part(StrView(text.data() + a, b - a));
        w.string_part(StrView(text.data() + b, text.size() - b));
        w.string_end();
      });
      ASSERT_EQ(got, expected) << "split at " << a << "," << b;
    }
  }
  // An invalid sequence split across parts is repaired the same way as when whole.
  const std::string bad = "\xE2\x82z\xF0\x9F";
  const std::string bad_expected = str(bad);
  for (size_t a = 0; a <= bad.size(); ++a) {
    std::string got = render([&](Writer& w) {
      w.string_begin();
      w.string_part(StrView(bad.data(), a));
      w.string_part(StrView(bad.data() + a, bad.size() - a));
      w.string_end();
    });
    EXPECT_EQ(got, bad_expected) << "split at " << a;
  }
}

TEST(JsonWriter, Base64Rfc4648Vectors) {
  const char* in[] = {"", "f", "fo", "foo", "foob", "fooba", "foobar"};
  const char* out[] = {"", "Zg==", "Zm8=", "Zm9v", "Zm9vYg==", "Zm9vYmE=", "Zm9vYmFy"};
  for (size_t i = 0; i < 7; ++i) {
    const std::string s = in[i];
    // Every way of cutting the input in three parts gives the same text.
    for (size_t a = 0; a <= s.size(); ++a) {
      for (size_t b = a; b <= s.size(); ++b) {
        std::string got = render([&](Writer& w) {
          w.base64_begin();
          w.base64_part(s.data(), a);
          w.base64_part(s.data() + a, b - a);
          w.base64_part(s.data() + b, s.size() - b);
          w.base64_end();
        });
        EXPECT_EQ(got, std::string("\"") + out[i] + "\"") << s << " cut " << a << "," << b;
      }
    }
  }
  // A long blob (more than the internal 64-character block) with all byte values.
  std::string blob;
  for (int i = 0; i < 1000; ++i) blob.push_back(static_cast<char>(i * 7));
  std::string whole = render([&](Writer& w) {
    w.base64_begin();
    w.base64_part(blob.data(), blob.size());
    w.base64_end();
  });
  std::string bytewise = render([&](Writer& w) {
    w.base64_begin();
    for (char c : blob) w.base64_part(&c, 1);
    w.base64_end();
  });
  EXPECT_EQ(whole, bytewise);
  EXPECT_EQ(whole.size(), 2 + (blob.size() + 2) / 3 * 4);
}

TEST(JsonWriter, Doubles) {
  EXPECT_EQ(render([](Writer& w) { w.number(21.5); }), "21.5");
  EXPECT_EQ(render([](Writer& w) { w.number(3.0); }), "3");
  EXPECT_EQ(render([](Writer& w) { w.number(0.1); }), "0.1");
  EXPECT_EQ(render([](Writer& w) { w.number(1e21); }), "1e+21");
  EXPECT_EQ(render([](Writer& w) { w.number(-1.5e-7); }), "-1.5e-7");
  EXPECT_EQ(render([](Writer& w) { w.number(std::numeric_limits<double>::quiet_NaN()); }), "null");
  EXPECT_EQ(render([](Writer& w) { w.number(-std::numeric_limits<double>::infinity()); }), "null");
}

TEST(JsonWriter, MisuseIsStickyInvalidState) {
  Status s;
  render([](Writer& w) {
    w.begin_object();
    w.int64(1);  // value without key
  }, &s);
  EXPECT_EQ(s, Status::kInvalidState);
  render([](Writer& w) {
    w.begin_array();
    w.key("k");
  }, &s);
  EXPECT_EQ(s, Status::kInvalidState);
  render([](Writer& w) {
    w.begin_array();
    w.end_object();
  }, &s);
  EXPECT_EQ(s, Status::kInvalidState);
  render([](Writer& w) { w.end_array(); }, &s);
  EXPECT_EQ(s, Status::kInvalidState);
  render([](Writer& w) {
    w.int64(1);
    w.int64(2);  // two top-level values
  }, &s);
  EXPECT_EQ(s, Status::kInvalidState);
  render([](Writer& w) {
    w.begin_object();
    w.key("a");
    w.end_object();  // key without value
  }, &s);
  EXPECT_EQ(s, Status::kInvalidState);
  render([](Writer& w) {
    w.string_begin();
    w.int64(1);
  }, &s);
  EXPECT_EQ(s, Status::kInvalidState);
  render([](Writer& w) {
    w.base64_begin();
    w.string_part("x");
  }, &s);
  EXPECT_EQ(s, Status::kInvalidState);
  std::string out = render([](Writer& w) {
    for (int i = 0; i < EMCP_JSON_WRITER_MAX_DEPTH + 1; ++i) w.begin_array();
  }, &s);
  EXPECT_EQ(s, Status::kDepthLimit);
  EXPECT_EQ(out, std::string(EMCP_JSON_WRITER_MAX_DEPTH, '['));
}

TEST(JsonWriter, OpenStringIsNotComplete) {
  char buf[64];
  BufferSink sink(buf, sizeof buf);
  Writer w(sink);
  w.string_begin();
  w.string_part("abc");
  EXPECT_FALSE(w.complete());
  w.string_end();
  EXPECT_TRUE(w.complete());
  BufferSink sink2(buf, sizeof buf);
  Writer w2(sink2);
  w2.base64_begin();
  EXPECT_FALSE(w2.complete());
}

TEST(JsonSink, BufferOverflowIsNoSpaceAndSticky) {
  emcp_test::NoHeapScope no_heap;
  char buf[8];
  BufferSink sink(buf, sizeof buf);
  Writer w(sink);
  w.string("0123456789");
  EXPECT_EQ(w.status(), Status::kNoSpace);
  EXPECT_EQ(sink.status(), Status::kNoSpace);
  EXPECT_EQ(sink.view().size(), 8u);
  sink.put('x');
  EXPECT_EQ(sink.total(), 8u);
  EXPECT_EQ(sink.flush(), Status::kNoSpace);
  sink.reset();
  EXPECT_EQ(sink.status(), Status::kOk);
  EXPECT_EQ(sink.total(), 0u);
}

TEST(JsonSink, CountingMatchesRealOutput) {
  static char text[1001];
  memset(text, 'x', 1000);
  auto message = [](Writer& w) {
    w.begin_object();
    w.member_str("jsonrpc", "2.0");
    w.member_int("id", 12345);
    w.key("result");
    w.begin_object();
    w.member_str("text", text);
    w.member_double("v", 0.30000000000000004);
    w.key("blob");
    w.base64_begin();
    w.base64_part("abcdefgh", 8);
    w.base64_end();
    w.end_object();
    w.end_object();
  };
  std::string real = render(message);
  CountingSink counter;
  {
    emcp_test::NoHeapScope no_heap;
    Writer w(counter);
    message(w);
    EXPECT_EQ(counter.flush(), Status::kOk);
  }
  EXPECT_EQ(counter.total(), real.size());
}

TEST(JsonSink, FlushingThroughTinyBuffers) {
  auto message = [](Writer& w) {
    w.begin_array();
    for (int i = 0; i < 100; ++i) {
      w.begin_object();
      w.member_int("i", i);
      w.member_str("s", "caf\xC3\xA9");
      w.end_object();
    }
    w.end_array();
  };
  std::string expected = render(message);
  for (size_t cap : {1u, 2u, 3u, 7u, 64u, 4096u}) {
    static Collector c;
    c.len = 0;
    c.calls = 0;
    char buf[4096];
    {
      emcp_test::NoHeapScope no_heap;
      FlushingSink sink(buf, cap, &Collector::on_flush, &c);
      Writer w(sink);
      message(w);
      EXPECT_EQ(sink.flush(), Status::kOk);
      EXPECT_EQ(sink.total(), expected.size());
    }
    EXPECT_EQ(std::string(c.data, c.len), expected) << "buffer of " << cap;
    EXPECT_EQ(c.calls, (expected.size() + cap - 1) / cap) << "buffer of " << cap;
  }
}

TEST(JsonSink, PortErrorIsStickyAndStopsOutput) {
  static Collector c;
  c.len = 0;
  c.calls = 0;
  c.fail_after = 2;
  char buf[4];
  FlushingSink sink(buf, sizeof buf, &Collector::on_flush, &c);
  Writer w(sink);
  w.string("0123456789abcdef");
  EXPECT_EQ(w.status(), Status::kIoError);
  EXPECT_EQ(sink.flush(), Status::kIoError);
  EXPECT_EQ(c.len, 8u);    // two buffers made it out
  EXPECT_EQ(c.calls, 3u);  // the third failed and nothing was tried after it
  // Every later byte is dropped, and not counted as accepted.
  const uint64_t accepted = sink.total();
  sink.put('x');
  sink.write("yz", 2);
  EXPECT_EQ(sink.total(), accepted);
  EXPECT_EQ(c.calls, 3u);
}
