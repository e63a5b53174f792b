// JSON-RPC 2.0 decoding and encoding. The fixtures in SpecExamples are the examples of the
// JSON-RPC 2.0 specification (section 7), answered by a small dispatcher implementing its
// methods; the expected codes and ids are the specification's.
#include <gtest/gtest.h>
#include <stdlib.h>

#include <string>
#include <vector>

#include "emcp/json/sink.h"
#include "emcp/json/writer.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/jsonrpc/encode.h"
#include "heap_guard.h"

using emcp::Status;
using emcp::StrView;
using emcp::json::BufferSink;
using emcp::json::Value;
using emcp::json::Writer;
using emcp::jsonrpc::Decoded;
using emcp::jsonrpc::Decoder;
using emcp::jsonrpc::ErrorCode;
using emcp::jsonrpc::Id;
using emcp::jsonrpc::Kind;
using emcp::jsonrpc::Message;

namespace {

// The methods of the JSON-RPC 2.0 specification's examples.
void answer(Writer& w, const Message& m) {
  using namespace emcp::jsonrpc;
  if (m.kind == Kind::kInvalid) {
    write_invalid(w, m);
    return;
  }
  if (m.kind != Kind::kRequest) return;
  if (m.method == "subtract") {
    Value a = m.params.is_array() ? m.params.at(0) : m.params["minuend"];
    Value b = m.params.is_array() ? m.params.at(1) : m.params["subtrahend"];
    if (!a.as_int().ok() || !b.as_int().ok()) {
      write_error(w, m.id, ErrorCode::kInvalidParams, "");
      return;
    }
    begin_response(w, m.id);
    w.int64(a.as_int().value() - b.as_int().value());
    end_message(w);
  } else if (m.method == "sum") {
    int64_t total = 0;
    for (Value v : m.params.elements()) total += v.as_int().value_or(0);
    begin_response(w, m.id);
    w.int64(total);
    end_message(w);
  } else if (m.method == "get_data") {
    begin_response(w, m.id);
    w.begin_array();
    w.string("hello");
    w.int64(5);
    w.end_array();
    end_message(w);
  } else if (m.method == "echo") {
    begin_response(w, m.id);
    emcp::json::write_value(w, m.params);
    end_message(w);
  } else {
    write_error(w, m.id, ErrorCode::kMethodNotFound, "");
  }
}

bool answers(const Message& m) { return m.kind == Kind::kRequest || m.kind == Kind::kInvalid; }

// Serves one input the way a server would: a batch is answered with an array of the responses
// (nothing when there are none), a single message with its response.
std::string serve_decoded(const Decoded& d) {
  static char buf[1 << 16];
  BufferSink sink(buf, sizeof buf);
  {
    emcp_test::NoHeapScope no_heap;
    if (d.batch) {
      bool any = false;
      for (const Message* m = d.first; m; m = m->next) any = any || answers(*m);
      if (any) {
        sink.put('[');
        bool first = true;
        for (const Message* m = d.first; m; m = m->next) {
          if (!answers(*m)) continue;
          if (!first) sink.put(',');
          first = false;
          Writer w(sink);
          answer(w, *m);
          EXPECT_TRUE(w.complete());
        }
        sink.put(']');
      }
    } else {
      Writer w(sink);
      answer(w, *d.first);
    }
  }
  EXPECT_EQ(sink.status(), Status::kOk);
  return std::string(sink.view().data(), sink.view().size());
}

// A canonical description of everything the decoder produced, for split-invariance checks.
std::string describe(const Decoded& d) {
  static char buf[1 << 16];
  BufferSink sink(buf, sizeof buf);
  {
    emcp_test::NoHeapScope no_heap;
    Writer w(sink);
    w.begin_array();
    w.boolean(d.batch);
    for (const Message* m = d.first; m; m = m->next) {
      w.begin_object();
      w.member_int("kind", static_cast<int>(m->kind));
      w.key("id");
      emcp::jsonrpc::write_id(w, m->id);
      w.member_int("idtype", static_cast<int>(m->id.type));
      w.member_str("method", m->method);
      w.key("params");
      emcp::json::write_value(w, m->params);
      w.key("result");
      emcp::json::write_value(w, m->result);
      w.member_int("ecode", m->error.code);
      w.member_str("emsg", m->error.message);
      w.key("edata");
      emcp::json::write_value(w, m->error.data);
      w.member_int("icode", static_cast<int>(m->invalid_code));
      w.member_str("reason", m->reason);
      w.member_int("cause", static_cast<int>(m->cause));
      w.member_int("offset", m->offset);
      w.end_object();
    }
    w.end_array();
    EXPECT_EQ(w.status(), Status::kOk);
  }
  return std::string(sink.view().data(), sink.view().size());
}

struct Fixture {
  emcp::json::StaticReader<> reader;
  emcp::StaticArena<EMCP_ARENA_SIZE> arena;
  Decoder decoder{reader, arena};
};

Fixture& fx() {
  static Fixture f;
  return f;
}

const Decoded& decode_in(Decoder& dec, const std::string& text, const std::vector<size_t>& cuts) {
  emcp_test::NoHeapScope no_heap;
  dec.begin();
  size_t start = 0;
  for (size_t c : cuts) {
    dec.feed(text.data() + start, c - start);
    start = c;
  }
  dec.feed(text.data() + start, text.size() - start);
  return dec.finish();
}

// Decodes `text` whole, byte by byte and split at every position; all must agree. Returns the
// served answer.
std::string serve(const std::string& text) {
  Decoder& dec = fx().decoder;
  const std::string whole = describe(decode_in(dec, text, {}));
  std::vector<size_t> cuts;
  for (size_t i = 1; i < text.size(); ++i) cuts.push_back(i);
  EXPECT_EQ(describe(decode_in(dec, text, cuts)), whole) << "byte by byte: " << text;
  for (size_t c = 0; c <= text.size(); ++c)
    EXPECT_EQ(describe(decode_in(dec, text, {c})), whole) << "split at " << c << ": " << text;
  return serve_decoded(decode_in(dec, text, {}));
}

const Message& single(const std::string& text) {
  const Decoded& d = decode_in(fx().decoder, text, {});
  EXPECT_EQ(d.count, 1u);
  EXPECT_FALSE(d.batch);
  return *d.first;
}

}  // namespace

TEST(JsonRpcSpecExamples, PositionalAndNamedParams) {
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1})"),
            R"({"jsonrpc":"2.0","id":1,"result":19})");
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": "subtract", "params": [23, 42], "id": 2})"),
            R"({"jsonrpc":"2.0","id":2,"result":-19})");
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3})"),
            R"({"jsonrpc":"2.0","id":3,"result":19})");
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": 4})"),
            R"({"jsonrpc":"2.0","id":4,"result":19})");
}

TEST(JsonRpcSpecExamples, Notifications) {
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": "update", "params": [1,2,3,4,5]})"), "");
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": "foobar"})"), "");
}

TEST(JsonRpcSpecExamples, Errors) {
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": "foobar", "id": "1"})"),
            R"({"jsonrpc":"2.0","id":"1","error":{"code":-32601,"message":"Method not found"}})");
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz])"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: unexpected character at byte 39"}})");
  EXPECT_EQ(serve(R"({"jsonrpc": "2.0", "method": 1, "params": "bar"})"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: method must be a string"}})");
  EXPECT_EQ(serve(R"([
  {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
  {"jsonrpc": "2.0", "method"
])"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error: unexpected character at byte 101"}})");
  EXPECT_EQ(serve("[]"),
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: empty batch"}})");
  EXPECT_EQ(serve("[1]"),
            R"([{"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batch element is not an object"}}])");
  const std::string e = R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: batch element is not an object"}})";
  EXPECT_EQ(serve("[1,2,3]"), "[" + e + "," + e + "," + e + "]");
}

TEST(JsonRpcSpecExamples, Batches) {
  EXPECT_EQ(serve(R"([
        {"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]},
        {"jsonrpc": "2.0", "method": "subtract", "params": [42,23], "id": "2"},
        {"foo": "boo"},
        {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
        {"jsonrpc": "2.0", "method": "get_data", "id": "9"}
    ])"),
            "["
            R"({"jsonrpc":"2.0","id":"1","result":7},)"
            R"({"jsonrpc":"2.0","id":"2","result":19},)"
            R"({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: jsonrpc must be \"2.0\""}},)"
            R"({"jsonrpc":"2.0","id":"5","error":{"code":-32601,"message":"Method not found"}},)"
            R"({"jsonrpc":"2.0","id":"9","result":["hello",5]})"
            "]");
  EXPECT_EQ(serve(R"([
        {"jsonrpc": "2.0", "method": "notify_sum", "params": [1,2,4]},
        {"jsonrpc": "2.0", "method": "notify_hello", "params": [7]}
    ])"),
            "");
}

TEST(JsonRpcDecoder, Kinds) {
  const Message& req = single(R"({"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"cursor":"abc"}})");
  EXPECT_EQ(req.kind, Kind::kRequest);
  EXPECT_EQ(req.id, Id::of(7));
  EXPECT_TRUE(req.method == "tools/list");
  EXPECT_TRUE(req.params["cursor"].as_string().value() == "abc");

  const Message& note = single(R"({"method":"notifications/initialized","jsonrpc":"2.0"})");
  EXPECT_EQ(note.kind, Kind::kNotification);
  EXPECT_EQ(note.id.type, Id::Type::kNone);
  EXPECT_FALSE(note.params.exists());

  const Message& resp = single(R"({"jsonrpc":"2.0","id":"s-1","result":{"roots":[]}})");
  EXPECT_EQ(resp.kind, Kind::kResponse);
  EXPECT_EQ(resp.id, Id::of(StrView("s-1")));
  EXPECT_TRUE(resp.result["roots"].is_array());

  const Message& err = single(R"({"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"User rejected","data":{"x":1}}})");
  EXPECT_EQ(err.kind, Kind::kErrorResponse);
  EXPECT_EQ(err.error.code, -1);
  EXPECT_TRUE(err.error.message == "User rejected");
  EXPECT_EQ(err.error.data["x"].as_int().value(), 1);

  // An error response may carry id null (the client could not read our request's id).
  const Message& err_null = single(R"({"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}})");
  EXPECT_EQ(err_null.kind, Kind::kErrorResponse);
  EXPECT_EQ(err_null.id.type, Id::Type::kNull);
}

TEST(JsonRpcDecoder, Ids) {
  EXPECT_EQ(single(R"({"jsonrpc":"2.0","id":-9223372036854775808,"method":"m"})").id,
            Id::of(INT64_MIN));
  EXPECT_EQ(single(R"({"jsonrpc":"2.0","id":"","method":"m"})").id, Id::of(StrView("")));
  EXPECT_EQ(single(R"({"jsonrpc":"2.0","id":"a\"b\u00e9","method":"m"})").id,
            Id::of(StrView("a\"b\xC3\xA9")));
  struct Bad {
    const char* text;
    const char* reason;
  };
  const Bad bad[] = {
      {R"({"jsonrpc":"2.0","id":1.5,"method":"m"})", "id must be a string or an integer"},
      {R"({"jsonrpc":"2.0","id":true,"method":"m"})", "id must be a string or an integer"},
      {R"({"jsonrpc":"2.0","id":[1],"method":"m"})", "id must be a string or an integer"},
      {R"({"jsonrpc":"2.0","id":{"a":1},"method":"m"})", "id must be a string or an integer"},
      {R"({"jsonrpc":"2.0","id":null,"method":"m"})", "id must not be null"},
      {R"({"jsonrpc":"2.0","id":1e300,"method":"m"})", "id must be a string or an integer"},
      // Not exact int64 ids: taking them would answer with an id the client never sent.
      {R"({"jsonrpc":"2.0","id":1.0,"method":"m"})", "id must be a string or an integer"},
      {R"({"jsonrpc":"2.0","id":9007199254740993.0,"method":"m"})", "id must be a string or an integer"},
      {R"({"jsonrpc":"2.0","id":-9223372036854775809,"method":"m"})", "id must be a string or an integer"},
      {R"({"jsonrpc":"2.0","id":99999999999999999999,"method":"m"})", "id must be a string or an integer"},
  };
  for (const Bad& b : bad) {
    const Message& m = single(b.text);
    EXPECT_EQ(m.kind, Kind::kInvalid) << b.text;
    EXPECT_STREQ(m.reason, b.reason) << b.text;
    EXPECT_EQ(m.id.type, Id::Type::kNull) << b.text;
  }
  // The longest id that fits, and one byte more (answered with id null).
  std::string max_id(EMCP_JSONRPC_MAX_ID_LEN, 'x');
  const Message& ok = single(R"({"jsonrpc":"2.0","id":")" + max_id + R"(","method":"m"})");
  EXPECT_EQ(ok.kind, Kind::kRequest);
  EXPECT_EQ(ok.id.str.size(), max_id.size());
  const Message& huge = single(R"({"jsonrpc":"2.0","id":")" + max_id + R"(x","method":"m"})");
  EXPECT_EQ(huge.kind, Kind::kInvalid);
  EXPECT_STREQ(huge.reason, "id too long");
  EXPECT_EQ(huge.id.type, Id::Type::kNull);
}

TEST(JsonRpcDecoder, InvalidEnvelopes) {
  struct Case {
    const char* text;
    const char* reason;
    Id id;
  };
  const Case cases[] = {
      {R"({"id":1,"method":"m"})", "jsonrpc must be \"2.0\"", Id::of(1)},
      {R"({"jsonrpc":"1.0","id":1,"method":"m"})", "jsonrpc must be \"2.0\"", Id::of(1)},
      {R"({"jsonrpc":"2.00","id":1,"method":"m"})", "jsonrpc must be \"2.0\"", Id::of(1)},
      {R"({"jsonrpc":2.0,"id":1,"method":"m"})", "jsonrpc must be \"2.0\"", Id::of(1)},
      {R"({"jsonrpc":"2.0","id":1})", "missing method", Id::of(1)},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":5})", "params must be an object or an array", Id::of(1)},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":"x"})", "params must be an object or an array", Id::of(1)},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","result":{}})", "a request has no result or error", Id::of(1)},
      {R"({"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}})", "both result and error", Id::null()},
      {R"({"jsonrpc":"2.0","result":{}})", "response without id", Id::null()},
      {R"({"jsonrpc":"2.0","id":null,"result":{}})", "response without id", Id::null()},
      {R"({"jsonrpc":"2.0","error":{"code":1,"message":"x"}})", "error response without id", Id::null()},
      {R"({"jsonrpc":"2.0","id":2,"error":{"code":"1","message":"x"}})", "error must have an integer code and a string message", Id::null()},
      {R"({"jsonrpc":"2.0","id":2,"error":{"code":1}})", "error must have an integer code and a string message", Id::null()},
      {R"({"jsonrpc":"2.0","id":2,"error":5})", "error must have an integer code and a string message", Id::null()},
      // Malformed responses are answered without their id (it numbers the server's requests).
      {R"({"jsonrpc":"1.0","id":3,"result":{}})", "jsonrpc must be \"2.0\"", Id::null()},
      {R"({"jsonrpc":"2.0","id":3,"id":4,"result":{}})", "duplicate member", Id::null()},
      {R"({"jsonrpc":"2.0","id":1,"id":2,"method":"m"})", "duplicate member", Id::of(1)},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","method":"n"})", "duplicate member", Id::of(1)},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"b":{"c":2,"c":3}}})", "duplicate key", Id::of(1)},
      {R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1,"a":1}})", "duplicate key", Id::of(1)},
      {"42", "expected a JSON-RPC object or a batch array", Id::null()},
      {"\"hello\"", "expected a JSON-RPC object or a batch array", Id::null()},
      {"null", "expected a JSON-RPC object or a batch array", Id::null()},
  };
  for (const Case& c : cases) {
    serve(c.text);  // split invariance
    const Message& m = single(c.text);
    EXPECT_EQ(m.kind, Kind::kInvalid) << c.text;
    EXPECT_STREQ(m.reason, c.reason) << c.text;
    EXPECT_EQ(m.id, c.id) << c.text;
    EXPECT_EQ(m.invalid_code, ErrorCode::kInvalidRequest) << c.text;
  }
  // Unknown members are ignored, whatever they hold.
  const Message& m = single(R"({"jsonrpc":"2.0","x":{"deep":[1,{"y":"z"}]},"id":1,"method":"m","z":"s\u0041"})");
  EXPECT_EQ(m.kind, Kind::kRequest);
}

TEST(JsonRpcDecoder, ParseErrorsAnswerIdNull) {
  const char* texts[] = {
      R"({"jsonrpc":"2.0","id":5,"method":"m",})",  // trailing comma
      R"({"jsonrpc":"2.0","id":5,"method":"m")",    // truncated
      R"({"jsonrpc":"2.0","id":5,"method":"m\x"})",
      "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"m\xFF\"}",
      "",
      "   ",
      R"({"jsonrpc":"2.0","id":5,"method":"m"} x)",
  };
  for (const char* t : texts) {
    serve(t);
    const Message& m = single(t);
    EXPECT_EQ(m.kind, Kind::kInvalid) << t;
    EXPECT_EQ(m.invalid_code, ErrorCode::kParseError) << t;
    EXPECT_EQ(m.id.type, Id::Type::kNull) << t;
  }
}

TEST(JsonRpcDecoder, LimitErrorsKeepAKnownId) {
  std::string deep = R"({"jsonrpc":"2.0","id":"d1","method":"m","params":)" +
                     std::string(EMCP_JSON_MAX_DEPTH, '[') + std::string(EMCP_JSON_MAX_DEPTH, ']') +
                     "}";
  EXPECT_EQ(serve(deep),
            R"({"jsonrpc":"2.0","id":"d1","error":{"code":-32600,"message":"Invalid Request: nesting too deep at byte 80"}})");
  std::string long_key = R"({"jsonrpc":"2.0","id":9,"method":"m","params":{")" +
                         std::string(EMCP_JSON_MAX_KEY_LEN + 1, 'k') + R"(":1}})";
  const Message& m = single(long_key);
  EXPECT_EQ(m.cause, Status::kKeyTooLong);
  EXPECT_EQ(m.id, Id::of(9));
  // When the limit strikes before the id, the answer has id null.
  std::string first = R"({"params":)" + std::string(EMCP_JSON_MAX_DEPTH + 1, '[') + "]";
  EXPECT_EQ(single(first).id.type, Id::Type::kNull);
}

TEST(JsonRpcDecoder, ReaderDeeperThanTheTree) {
  // A reader configured deeper than EMCP_JSON_MAX_DEPTH: the tree cannot follow, and says so.
  static emcp::json::StaticReader<EMCP_JSON_MAX_DEPTH + 16> deep_reader;
  static emcp::StaticArena<8192> arena;
  static Decoder dec(deep_reader, arena);
  std::string text = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":)" +
                     std::string(EMCP_JSON_MAX_DEPTH + 4, '[') +
                     std::string(EMCP_JSON_MAX_DEPTH + 4, ']') + "}}";
  const Decoded& d = decode_in(dec, text, {});
  ASSERT_EQ(d.count, 1u);
  EXPECT_EQ(d.first->kind, Kind::kInvalid);
  EXPECT_STREQ(d.first->reason, "nesting too deep");
  EXPECT_EQ(d.first->id, Id::of(1));
}

TEST(JsonRpcDecoder, TooLargeForTheArena) {
  static emcp::json::StaticReader<> reader;
  static emcp::StaticArena<512> arena;
  static Decoder dec(reader, arena);
  std::string big = R"({"jsonrpc":"2.0","id":"big-1","method":"tools/call","params":{"text":")" +
                    std::string(2000, 'a') + R"("}})";
  const Decoded& d = decode_in(dec, big, {});
  ASSERT_EQ(d.count, 1u);
  EXPECT_EQ(d.first->kind, Kind::kInvalid);
  EXPECT_STREQ(d.first->reason, "message too large for the arena");
  EXPECT_EQ(d.first->id, Id::of(StrView("big-1")));
  EXPECT_EQ(serve_decoded(d),
            R"({"jsonrpc":"2.0","id":"big-1","error":{"code":-32600,"message":"Invalid Request: message too large for the arena"}})");
  // The id may come after the part that did not fit.
  std::string late = R"({"jsonrpc":"2.0","method":"m","params":{"text":")" + std::string(2000, 'a') +
                     R"("},"id":77})";
  EXPECT_EQ(decode_in(dec, late, {}).first->id, Id::of(77));
  // A response that does not fit becomes an error response to its id (the server's request
  // ends now, with the reason) and is not answered; with its id after the overflow as well.
  // (A server's first request to a client turns this on, for every decoder.)
  Decoder::keep_lost_responses();
  for (const std::string& r :
       {R"({"jsonrpc":"2.0","id":"s-9","result":{"t":")" + std::string(2000, 'a') + R"("}})",
        R"({"jsonrpc":"2.0","result":{"t":")" + std::string(2000, 'a') + R"("},"id":"s-9"})"}) {
    const Decoded& lost = decode_in(dec, r, {});
    ASSERT_EQ(lost.count, 1u);
    EXPECT_EQ(lost.first->kind, Kind::kErrorResponse);
    EXPECT_TRUE(lost.first->lost);
    EXPECT_EQ(lost.first->id, Id::of(StrView("s-9")));
    EXPECT_EQ(lost.first->error.code, -32603);
    EXPECT_TRUE(lost.first->error.message == "response too large for the arena (EMCP_ARENA_SIZE)");
    EXPECT_EQ(serve_decoded(lost), "");
  }
  // Only what would have been a valid response: anything invalid whatever its size stays
  // invalid (a batch, a method, a duplicate id, result and error, no "jsonrpc":"2.0", an error
  // that is not an object, a syntax error).
  const std::string a2000(2000, 'a');
  for (const std::string& bad : {
           R"({"jsonrpc":"2.0","id":4,"method":"m","result":{"t":")" + a2000 + R"("}})",
           R"([{"jsonrpc":"2.0","id":4,"result":{"t":")" + a2000 + R"("}}])",
           R"({"jsonrpc":"2.0","id":1,"id":2,"result":{"t":")" + a2000 + R"("}})",
           R"({"jsonrpc":"2.0","id":1,"result":1,"error":{"t":")" + a2000 + R"("}})",
           R"({"jsonrpc":"1.0","id":1,"result":{"t":")" + a2000 + R"("}})",
           R"({"id":1,"result":{"t":")" + a2000 + R"("}})",
           R"({"jsonrpc":"2.0","id":1,"error":")" + a2000 + R"("})",
           R"({"jsonrpc":"2.0","id":1,"result":{"t":")" + a2000 + R"("}x)",
       }) {
    const Decoded& kept = decode_in(dec, bad, {});
    EXPECT_TRUE(kept.first->kind == Kind::kInvalid && !kept.first->lost) << bad.substr(0, 60);
  }
  // A syntax error after the overflow is still a parse error.
  std::string broken = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"t":")" + std::string(2000, 'a') + "\"}";
  EXPECT_EQ(decode_in(dec, broken, {}).first->invalid_code, ErrorCode::kParseError);
  // Every arena size from tiny to enough gives either the message or the clean error.
  std::string msg = R"({"jsonrpc":"2.0","id":"abc","method":"tools/call","params":{"name":"x","arguments":{"a":[1,2,{"b":"c"}]}}})";
  size_t needed = 0;
  for (size_t cap = 0; cap <= 1024 && needed == 0; cap += 8) {
    static uint8_t storage[1024];
    emcp::Arena a(emcp::Span<uint8_t>(storage, cap));
    Decoder small(reader, a);
    const Decoded& r = decode_in(small, msg, {});
    ASSERT_EQ(r.count, 1u);
    if (r.first->kind == Kind::kRequest) {
      needed = cap;
      EXPECT_TRUE(r.first->params["arguments"]["a"].at(2)["b"].as_string().value() == "c");
    } else {
      EXPECT_STREQ(r.first->reason, "message too large for the arena");
      EXPECT_EQ(r.first->id, Id::of(StrView("abc"))) << cap;
    }
  }
  EXPECT_GT(needed, 0u);
  EXPECT_LT(needed, 1024u);
}

TEST(JsonRpcDecoder, ParamsTreeAccessors) {
  const Message& m = single(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{
      "i":-5,"d":2.5,"di":3.0,"big":1e300,"s":"x\u0000y","t":true,"f":false,"n":null,
      "arr":[1,"two",[3]],"obj":{"k":"v"},"empty":{}}})");
  ASSERT_EQ(m.kind, Kind::kRequest);
  Value p = m.params;
  EXPECT_EQ(p.size(), 11u);
  EXPECT_EQ(p["i"].as_int().value(), -5);
  EXPECT_EQ(p["i"].as_double().value(), -5.0);
  EXPECT_EQ(p["d"].as_double().value(), 2.5);
  EXPECT_EQ(p["d"].as_int().status(), Status::kOutOfRange);
  EXPECT_EQ(p["di"].as_int().value(), 3);
  EXPECT_EQ(p["big"].as_int().status(), Status::kOutOfRange);
  EXPECT_EQ(p["s"].as_string().value().size(), 3u);
  EXPECT_EQ(p["t"].as_bool().value(), true);
  EXPECT_EQ(p["f"].as_bool().value(), false);
  EXPECT_TRUE(p["n"].is_null());
  EXPECT_EQ(p["n"].as_bool().status(), Status::kWrongType);
  EXPECT_EQ(p["missing"].as_int().status(), Status::kNotFound);
  EXPECT_EQ(p["s"].as_int().status(), Status::kWrongType);
  EXPECT_EQ(p["arr"].size(), 3u);
  EXPECT_TRUE(p["arr"].at(1).as_string().value() == "two");
  EXPECT_EQ(p["arr"].at(2).at(0).as_int().value(), 3);
  EXPECT_FALSE(p["arr"].at(3).exists());
  EXPECT_FALSE(p["arr"]["k"].exists());  // not an object
  EXPECT_TRUE(p["obj"]["k"].as_string().value() == "v");
  EXPECT_TRUE(p["empty"].is_object());
  EXPECT_EQ(p["empty"].size(), 0u);
  std::vector<std::string> keys;
  for (Value v : p.members()) keys.emplace_back(v.key().data(), v.key().size());
  EXPECT_EQ(keys.front(), "i");
  EXPECT_EQ(keys.back(), "empty");
  // Serialized back, the tree is the same JSON (compact).
  EXPECT_EQ(serve(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":{"a":[1,2.5,"x",true,null,{}],"b":{"c":[]}}})"),
            R"({"jsonrpc":"2.0","id":1,"result":{"a":[1,2.5,"x",true,null,{}],"b":{"c":[]}}})");
}

TEST(JsonRpcDecoder, NumbersWithFractionsStayExact) {
  // Kept as digits in the tree: the sign survives, as_int is exact beyond 2^53, as_double is
  // correctly rounded (judged by strtod), and write_value writes what was read.
  const Message& m = single(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{
      "neg":-0.25,"big":9007199254740993.0,"min":-9223372036854775808.0,
      "over":9223372036854775808.0,"e":1.5e3,"tiny":-1e-400,"x":0.1e-6,
      "z1":0.0,"z2":-0.0,"z3":0e30,"z4":0e-5}})");
  ASSERT_EQ(m.kind, Kind::kRequest);
  Value p = m.params;
  EXPECT_EQ(p["neg"].as_double().value(), -0.25);
  EXPECT_EQ(p["neg"].as_int().status(), Status::kOutOfRange);
  EXPECT_EQ(p["big"].as_int().value(), 9007199254740993);
  EXPECT_EQ(p["big"].as_double().value(), strtod("9007199254740993", nullptr));
  EXPECT_EQ(p["min"].as_int().value(), INT64_MIN);
  EXPECT_EQ(p["over"].as_int().status(), Status::kOutOfRange);
  EXPECT_EQ(p["e"].as_int().value(), 1500);
  EXPECT_EQ(p["tiny"].as_double().value(), 0.0);
  EXPECT_EQ(p["tiny"].as_int().status(), Status::kOutOfRange);
  EXPECT_EQ(p["x"].as_double().value(), strtod("0.1e-6", nullptr));
  for (const char* zero : {"z1", "z2", "z3", "z4"}) EXPECT_EQ(p[zero].as_int().value(), 0) << zero;
  EXPECT_EQ(serve(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":[-0.25,-0.250,1e2,-1.5E-7,0.1e-6,1e21,-0.0,123456789012345678901234567890]})"),
            R"({"jsonrpc":"2.0","id":1,"result":[-0.25,-0.25,100,-1.5e-7,1e-7,1e+21,0,1.2345678901234567890123456789e+29]})");
  // Exponents saturate at 10^9 (every such number is 0 or overflows), whatever their digits.
  EXPECT_EQ(serve(R"({"jsonrpc":"2.0","id":1,"method":"echo","params":[1e-2000000000,1e-9999999999,123e-1000000005]})"),
            R"({"jsonrpc":"2.0","id":1,"result":[1e-1000000000,1e-1000000000,1.23e-999999998]})");
}

TEST(JsonRpcDecoder, BatchMixesKindsAndResponses) {
  const Decoded& d = decode_in(fx().decoder, R"([
    {"jsonrpc":"2.0","id":1,"result":{}},
    {"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}},
    {"jsonrpc":"2.0","id":2,"method":"ping"},
    [1,2],
    "x",
    {"jsonrpc":"2.0","id":3,"error":{"code":-1,"message":"no"}}
  ])", {});
  ASSERT_TRUE(d.batch);
  ASSERT_EQ(d.count, 6u);
  const Message* m = d.first;
  EXPECT_EQ(m->kind, Kind::kResponse);
  m = m->next;
  EXPECT_EQ(m->kind, Kind::kNotification);
  m = m->next;
  EXPECT_EQ(m->kind, Kind::kRequest);
  m = m->next;
  EXPECT_EQ(m->kind, Kind::kInvalid);
  m = m->next;
  EXPECT_EQ(m->kind, Kind::kInvalid);
  m = m->next;
  EXPECT_EQ(m->kind, Kind::kErrorResponse);
  EXPECT_EQ(m->next, nullptr);
}

TEST(JsonRpcEncode, RequestsNotificationsAndErrors) {
  char buf[512];
  BufferSink sink(buf, sizeof buf);
  {
    emcp_test::NoHeapScope no_heap;
    Writer w(sink);
    emcp::jsonrpc::begin_request(w, Id::of(StrView("s1")), "sampling/createMessage");
    w.begin_object();
    w.member_int("maxTokens", 100);
    w.end_object();
    emcp::jsonrpc::end_message(w);
    EXPECT_TRUE(w.complete());
  }
  EXPECT_EQ(std::string(sink.view().data(), sink.view().size()),
            R"({"jsonrpc":"2.0","id":"s1","method":"sampling/createMessage","params":{"maxTokens":100}})");
  sink.reset();
  {
    Writer w(sink);
    emcp::jsonrpc::write_notification(w, "notifications/tools/list_changed");
  }
  EXPECT_EQ(std::string(sink.view().data(), sink.view().size()),
            R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})");
  sink.reset();
  {
    Writer w(sink);
    emcp::jsonrpc::begin_error_with_data(w, Id::of(4), ErrorCode::kResourceNotFound, "Resource not found");
    w.begin_object();
    w.member_str("uri", "file:///x");
    w.end_object();
    emcp::jsonrpc::end_error(w);
    EXPECT_TRUE(w.complete());
  }
  EXPECT_EQ(std::string(sink.view().data(), sink.view().size()),
            R"({"jsonrpc":"2.0","id":4,"error":{"code":-32002,"message":"Resource not found","data":{"uri":"file:///x"}}})");
}

TEST(JsonRpcError, CodesFromStatus) {
  using emcp::jsonrpc::error_code_for;
  EXPECT_EQ(error_code_for(Status::kUnexpectedChar), ErrorCode::kParseError);
  EXPECT_EQ(error_code_for(Status::kInvalidUtf8), ErrorCode::kParseError);
  EXPECT_EQ(error_code_for(Status::kDepthLimit), ErrorCode::kInvalidRequest);
  EXPECT_EQ(error_code_for(Status::kNoSpace), ErrorCode::kInvalidRequest);
  EXPECT_EQ(error_code_for(Status::kNotFound), ErrorCode::kInvalidParams);
  EXPECT_EQ(error_code_for(Status::kWrongType), ErrorCode::kInvalidParams);
  EXPECT_EQ(error_code_for(Status::kIoError), ErrorCode::kInternalError);
  EXPECT_EQ(static_cast<int>(ErrorCode::kParseError), -32700);
  EXPECT_EQ(static_cast<int>(ErrorCode::kInvalidRequest), -32600);
  EXPECT_EQ(static_cast<int>(ErrorCode::kMethodNotFound), -32601);
  EXPECT_EQ(static_cast<int>(ErrorCode::kInvalidParams), -32602);
  EXPECT_EQ(static_cast<int>(ErrorCode::kInternalError), -32603);
}
