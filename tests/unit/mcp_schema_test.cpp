// Param tables: the schema write_object_schema() publishes and what validate() accepts must say
// the same (tests/mcp/params_differential.test.mjs checks the example servers' tools against
// ajv; this checks the integer bounds a JSON Schema validator working in doubles cannot decide:
// int64's ends, and declared bounds beyond them).
#include <gtest/gtest.h>

#include <string.h>

#include <string>

#include "emcp/json/reader.h"
#include "emcp/json/sink.h"
#include "emcp/json/value.h"
#include "emcp/json/writer.h"
#include "emcp/mcp/schema.h"
#include "emcp/util/arena.h"
#include "heap_guard.h"

using emcp::StaticArena;
using emcp::Status;
using emcp::json::BufferSink;
using emcp::json::Event;
using emcp::json::StaticReader;
using emcp::json::TreeBuilder;
using emcp::json::Value;
using emcp::json::Writer;
using emcp::mcp::Param;
using emcp::mcp::SchemaError;

namespace {

constexpr Param kInts[] = {
    Param::integer("any"),
    Param::integer("small").range(0, 10),
    Param::integer("wide").range(-1e30, 1e19),  // declared beyond int64 on both sides
    Param::integer("low").minimum(-5),
    Param::number("ratio"),
};

std::string schema_of(emcp::Span<const Param> props) {
  char buf[1024];
  size_t n = 0;
  {
    emcp_test::NoHeapScope no_heap;
    BufferSink sink(buf, sizeof buf);
    Writer w(sink);
    emcp::mcp::write_object_schema(w, props);
    n = sink.view().size();
  }
  return std::string(buf, n);
}

// Parses `json` and validates it against kInts (without allocating); "" when valid, else the
// argument's name and the reason.
std::string check(const char* json) {
  StaticArena<2048> arena;
  StaticReader<> reader;
  TreeBuilder tree(arena);
  SchemaError err;
  bool valid = false;
  {
    emcp_test::NoHeapScope no_heap;
    tree.begin();
    reader.feed(json, strlen(json));
    reader.finish();
    for (Event e = reader.next(); e != Event::kDocumentEnd; e = reader.next()) {
      if (e == Event::kError || e == Event::kNeedInput) return "unreadable";
      if (tree.on_event(e, reader) != Status::kOk) return "no tree";
    }
    valid = emcp::mcp::validate(tree.root(), kInts, &err);
  }
  if (valid) return "";
  return std::string(err.name.data(), err.name.size()) + " " + err.reason;
}

TEST(McpSchema, IntegersPublishTheInt64BoundsTheValidatorApplies) {
  EXPECT_EQ(schema_of(kInts),
            R"({"type":"object","properties":{)"
            R"("any":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807},)"
            R"("small":{"type":"integer","minimum":0,"maximum":10},)"
            R"("wide":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807},)"
            R"("low":{"type":"integer","minimum":-5,"maximum":9223372036854775807},)"
            R"("ratio":{"type":"number"}}})");
}

TEST(McpSchema, IntegersBeyondInt64AreOutsideTheBounds) {
  // int64's ends pass, as the schema says; the integral numbers just beyond them do not.
  EXPECT_EQ(check(R"({"any":9223372036854775807,"wide":-9223372036854775808})"), "");
  EXPECT_EQ(check(R"({"any":92233720368547758.07e2})"), "");
  EXPECT_EQ(check(R"({"any":9223372036854775808})"), "any is above the maximum");
  EXPECT_EQ(check(R"({"any":-9223372036854775809})"), "any is below the minimum");
  EXPECT_EQ(check(R"({"any":1e20})"), "any is above the maximum");
  EXPECT_EQ(check(R"({"wide":1e19})"), "wide is above the maximum");  // declared 1e19: int64 rules
  EXPECT_EQ(check(R"({"wide":-1e20})"), "wide is below the minimum");
  EXPECT_EQ(check(R"({"low":-6})"), "low is below the minimum");
  EXPECT_EQ(check(R"({"low":1e300})"), "low is above the maximum");
  // A fraction stays a type error, and numbers have no implied bounds.
  EXPECT_EQ(check(R"({"any":2.5})"), "any must be an integer");
  EXPECT_EQ(check(R"({"small":1e1,"ratio":1e300})"), "");
  EXPECT_EQ(check(R"({"small":1.0e2})"), "small is above the maximum");
}

constexpr Param kId = Param::integer("");
constexpr Param kDefaults[] = {
    Param::string("unit").with_default("\xC2\xB0" "C \"x\""),  // text, escaped as a JSON string
    Param::integer("samples").range(1, 100).with_default(10),
    Param::integer("offset").with_default(-9007199254740992LL),  // -2^53: the last exact one
    Param::number("ratio").with_default(0.25),
    Param::number("whole").with_default(3),
    Param::boolean("fast").with_default(false),
    Param::array("ids", kId).with_default_json("[1,2]"),
};

TEST(McpSchema, TypedDefaultsAreWrittenAsTheirJsonValues) {
  EXPECT_EQ(schema_of(kDefaults),
            R"({"type":"object","properties":{)"
            "\"unit\":{\"type\":\"string\",\"default\":\"\xC2\xB0" R"(C \"x\""},)"
            R"("samples":{"type":"integer","minimum":1,"maximum":100,"default":10},)"
            R"("offset":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807,"default":-9007199254740992},)"
            R"("ratio":{"type":"number","default":0.25},)"
            R"("whole":{"type":"number","default":3},)"
            R"("fast":{"type":"boolean","default":false},)"
            R"("ids":{"type":"array","items":{"type":"integer","minimum":-9223372036854775808,"maximum":9223372036854775807},"default":[1,2]}}})");
}

}  // namespace
