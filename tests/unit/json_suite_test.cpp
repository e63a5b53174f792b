// The reader against the JSONTestSuite corpus (../shared/testdata/JSONTestSuite/test_parsing):
// every y_ file accepted, every n_ file rejected, every i_ file handled as documented in
// docs/json.md, and every file read identically whole, one byte at a time, and split in two at
// every position. json::copy_value against the same corpus.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>

#include "emcp/json/reader.h"
#include "emcp/json/sink.h"
#include "emcp/json/value.h"
#include "heap_guard.h"
#include "json_test_util.h"

using emcp::Status;
using emcp_test::EventLog;
using emcp_test::Outcome;

namespace {

const std::string kSuiteDir = std::string(EMCP_SHARED_DIR) + "/testdata/JSONTestSuite/test_parsing";

std::vector<std::string> suite_files(char prefix) {
  std::vector<std::string> names;
  for (const auto& e : std::filesystem::directory_iterator(kSuiteDir)) {
    std::string name = e.path().filename().string();
    if (name.size() > 2 && name[0] == prefix && name[1] == '_') names.push_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

// The choices for the implementation-defined i_ files (documented in docs/json.md).
// kOk means accepted.
const std::map<std::string, Status>& i_choices() {
  static const std::map<std::string, Status> m = {
      {"i_number_double_huge_neg_exp.json", Status::kOk},  // underflows to 0
      {"i_number_huge_exp.json", Status::kNumberOverflow},
      {"i_number_neg_int_huge_exp.json", Status::kNumberOverflow},
      {"i_number_pos_double_huge_exp.json", Status::kNumberOverflow},
      {"i_number_real_neg_overflow.json", Status::kNumberOverflow},
      {"i_number_real_pos_overflow.json", Status::kNumberOverflow},
      {"i_number_real_underflow.json", Status::kOk},       // underflows to 0
      {"i_number_too_big_neg_int.json", Status::kOk},      // beyond int64: a double
      {"i_number_too_big_pos_int.json", Status::kOk},      // beyond int64: a double
      {"i_number_very_big_negative_int.json", Status::kNumberTooLong},  // 48 digits > 40
      {"i_object_key_lone_2nd_surrogate.json", Status::kInvalidSurrogate},
      {"i_string_1st_surrogate_but_2nd_missing.json", Status::kInvalidSurrogate},
      {"i_string_1st_valid_surrogate_2nd_invalid.json", Status::kInvalidSurrogate},
      {"i_string_UTF-16LE_with_BOM.json", Status::kUnexpectedChar},
      {"i_string_UTF-8_invalid_sequence.json", Status::kInvalidUtf8},
      {"i_string_UTF8_surrogate_U+D800.json", Status::kInvalidUtf8},
      {"i_string_incomplete_surrogate_and_escape_valid.json", Status::kInvalidSurrogate},
      {"i_string_incomplete_surrogate_pair.json", Status::kInvalidSurrogate},
      {"i_string_incomplete_surrogates_escape_valid.json", Status::kInvalidSurrogate},
      {"i_string_invalid_lonely_surrogate.json", Status::kInvalidSurrogate},
      {"i_string_invalid_surrogate.json", Status::kInvalidSurrogate},
      {"i_string_invalid_utf-8.json", Status::kInvalidUtf8},
      {"i_string_inverted_surrogates_U+1D11E.json", Status::kInvalidSurrogate},
      {"i_string_iso_latin_1.json", Status::kInvalidUtf8},
      {"i_string_lone_second_surrogate.json", Status::kInvalidSurrogate},
      {"i_string_lone_utf8_continuation_byte.json", Status::kInvalidUtf8},
      {"i_string_not_in_unicode_range.json", Status::kInvalidUtf8},
      {"i_string_overlong_sequence_2_bytes.json", Status::kInvalidUtf8},
      {"i_string_overlong_sequence_6_bytes.json", Status::kInvalidUtf8},
      {"i_string_overlong_sequence_6_bytes_null.json", Status::kInvalidUtf8},
      {"i_string_truncated-utf-8.json", Status::kInvalidUtf8},
      {"i_string_utf16BE_no_BOM.json", Status::kUnexpectedChar},
      {"i_string_utf16LE_no_BOM.json", Status::kUnexpectedChar},
      {"i_structure_500_nested_arrays.json", Status::kDepthLimit},
      {"i_structure_UTF-8_BOM_empty_object.json", Status::kUnexpectedChar},
  };
  return m;
}

struct Runs {
  Outcome whole;
  std::string whole_log;
  std::vector<std::string> mismatches;  // descriptions of split runs that differ
};

// Runs the default-configured reader on `data` whole, byte by byte, and split at each position.
Runs run_all_ways(const std::vector<uint8_t>& data) {
  static emcp::json::StaticReader<> reader;  // default configuration from emcp/opt.h
  static EventLog log;
  static EventLog other;
  Runs runs;
  const uint8_t* bytes = data.data();
  const size_t n = data.size();
  {
    emcp_test::NoHeapScope no_heap;
    runs.whole = emcp_test::run_reader(reader, bytes, n, nullptr, 0, log);
  }
  runs.whole_log = log.str();
  // Same verdict, same error and position; for accepted input also the same events (before an
  // error, string parts already handed out legitimately depend on how the input was cut).
  auto same = [&](const Outcome& o) {
    return o.accepted == runs.whole.accepted && o.status == runs.whole.status &&
           o.offset == runs.whole.offset &&
           (!o.accepted || (other.len == log.len && memcmp(other.buf, log.buf, log.len) == 0));
  };
  // One byte at a time.
  std::vector<size_t> cuts;
  for (size_t i = 1; i < n; ++i) cuts.push_back(i);
  Outcome o;
  {
    emcp_test::NoHeapScope no_heap;
    o = emcp_test::run_reader(reader, bytes, n, cuts.data(), cuts.size(), other);
  }
  if (!same(o)) runs.mismatches.push_back("byte-by-byte");
  // Two pieces, split at every position (including empty first and last pieces).
  for (size_t cut = 0; cut <= n; ++cut) {
    {
      emcp_test::NoHeapScope no_heap;
      o = emcp_test::run_reader(reader, bytes, n, &cut, 1, other);
    }
    if (!same(o)) runs.mismatches.push_back("split at " + std::to_string(cut));
  }
  return runs;
}

}  // namespace

TEST(JsonTestSuite, CorpusIsPresent) {
  EXPECT_EQ(suite_files('y').size(), 95u);
  EXPECT_EQ(suite_files('n').size(), 188u);
  EXPECT_EQ(suite_files('i').size(), 35u);
}

TEST(JsonTestSuite, AcceptsEveryY) {
  for (const std::string& name : suite_files('y')) {
    auto data = emcp_test::read_file(kSuiteDir + "/" + name);
    Runs r = run_all_ways(data);
    EXPECT_TRUE(r.whole.accepted) << name << ": rejected with " << emcp::status_str(r.whole.status)
                                  << " at byte " << r.whole.offset;
    EXPECT_TRUE(r.mismatches.empty()) << name << ": differs when " << r.mismatches.front();
  }
}

TEST(JsonTestSuite, RejectsEveryN) {
  for (const std::string& name : suite_files('n')) {
    auto data = emcp_test::read_file(kSuiteDir + "/" + name);
    Runs r = run_all_ways(data);
    EXPECT_FALSE(r.whole.accepted) << name << ": accepted, events " << r.whole_log;
    EXPECT_NE(r.whole.status, Status::kInvalidState) << name;
    EXPECT_TRUE(r.mismatches.empty()) << name << ": differs when " << r.mismatches.front();
  }
}

TEST(JsonTestSuite, HandlesEveryIAsDocumented) {
  auto files = suite_files('i');
  EXPECT_EQ(files.size(), i_choices().size());
  for (const std::string& name : files) {
    auto it = i_choices().find(name);
    ASSERT_NE(it, i_choices().end()) << name << " has no documented choice";
    auto data = emcp_test::read_file(kSuiteDir + "/" + name);
    Runs r = run_all_ways(data);
    if (it->second == Status::kOk) {
      EXPECT_TRUE(r.whole.accepted) << name << ": " << emcp::status_str(r.whole.status);
    } else {
      EXPECT_FALSE(r.whole.accepted) << name;
      EXPECT_EQ(r.whole.status, it->second)
          << name << ": got " << emcp::status_str(r.whole.status);
    }
    EXPECT_TRUE(r.mismatches.empty()) << name << ": differs when " << r.mismatches.front();
  }
}

// Values of the test_transform files: what the reader makes of the edge cases.
TEST(JsonTestSuite, TransformValues) {
  const std::string dir = std::string(EMCP_SHARED_DIR) + "/testdata/JSONTestSuite/test_transform";
  auto log_of = [&](const std::string& name) {
    auto data = emcp_test::read_file(dir + "/" + name);
    Runs r = run_all_ways(data);
    EXPECT_TRUE(r.mismatches.empty()) << name;
    return r.whole.accepted ? r.whole_log : std::string("error: ") + emcp::status_str(r.whole.status);
  };
  auto dbl = [](double d) {
    EventLog l;
    uint64_t bits;
    memcpy(&bits, &d, sizeof bits);
    l.put("[d");
    l.put_hex(bits);
    l.put(" ]");
    return l.str();
  };
  EXPECT_EQ(log_of("number_-9223372036854775808.json"), "[i-9223372036854775808 ]");
  EXPECT_EQ(log_of("number_-9223372036854775809.json"), dbl(-9223372036854775809.0));
  EXPECT_EQ(log_of("number_9223372036854775807.json"), "[i9223372036854775807 ]");
  EXPECT_EQ(log_of("number_9223372036854775808.json"), dbl(9223372036854775808.0));
  EXPECT_EQ(log_of("number_1.0.json"), dbl(1.0));
  EXPECT_EQ(log_of("number_1.000000000000000005.json"), dbl(1.0));
  EXPECT_EQ(log_of("number_1000000000000000.json"), "[i1000000000000000 ]");
  EXPECT_EQ(log_of("number_10000000000000000999.json"), dbl(10000000000000000999.0));
  EXPECT_EQ(log_of("number_1e-999.json"), dbl(0.0));
  EXPECT_EQ(log_of("number_1e6.json"), dbl(1e6));
  EXPECT_EQ(log_of("string_with_escaped_NULL.json"), std::string("[s\"A\0B\" ]", 9));
  EXPECT_EQ(log_of("string_1_escaped_invalid_codepoint.json"), "error: unpaired UTF-16 surrogate");
  EXPECT_EQ(log_of("string_1_invalid_codepoint.json"), "error: invalid UTF-8");
  // Duplicate keys are reported as they come; the JSON-RPC layer decides what they mean.
  EXPECT_EQ(log_of("object_same_key_different_values.json"), "{k\"a\":i1 k\"a\":i2 }");
  EXPECT_EQ(log_of("object_key_nfc_nfd.json"),
            "{k\"\xC3\xA9\":s\"NFC\" k\"e\xCC\x81\":s\"NFD\" }");
}

// json::copy_value: a copy of every accepted file, made into a second arena, writes exactly
// what the original wrote, even once the original's arena is overwritten; a copy that does
// not fit leaves the arena as it was.
namespace {
bool build_tree(const std::vector<uint8_t>& data, emcp::Arena& arena, emcp::json::Value* out) {
  emcp::json::StaticReader<> reader;
  emcp::json::TreeBuilder tree(arena);
  tree.begin();
  reader.feed(data.data(), data.size());
  reader.finish();
  for (emcp::json::Event e = reader.next(); e != emcp::json::Event::kDocumentEnd; e = reader.next()) {
    if (e == emcp::json::Event::kError || e == emcp::json::Event::kNeedInput) return false;
    if (tree.on_event(e, reader) != Status::kOk) return false;
  }
  *out = tree.root();
  return out->exists();
}
std::string written(emcp::json::Value v) {
  std::vector<char> buf(1 << 16);
  emcp::json::BufferSink sink(buf.data(), buf.size());
  emcp::json::Writer w(sink);
  emcp::json::write_value(w, v);
  return std::string(sink.view().data(), sink.view().size());
}
}  // namespace

TEST(JsonTestSuite, CopyValueOfEveryYWritesTheSame) {
  std::vector<uint8_t> a_bytes(1 << 16), b_bytes(1 << 16);
  size_t copied = 0;
  for (const std::string& name : suite_files('y')) {
    emcp::Arena a(emcp::Span<uint8_t>(a_bytes.data(), a_bytes.size()));
    emcp::Arena b(emcp::Span<uint8_t>(b_bytes.data(), b_bytes.size()));
    emcp::json::Value original;
    // The tree refuses duplicate keys (y_object_duplicated_key*): the decoder's choice.
    if (!build_tree(emcp_test::read_file(kSuiteDir + "/" + name), a, &original)) continue;
    ++copied;
    const std::string expect = written(original);
    emcp::json::Node* copy = nullptr;
    {
      emcp_test::NoHeapScope no_heap;
      ASSERT_EQ(emcp::json::copy_value(b, original, emcp::StrView("k"), &copy), Status::kOk) << name;
    }
    std::fill(a_bytes.begin(), a_bytes.end(), 0xA5);  // the original is gone
    EXPECT_EQ(written(emcp::json::Value(copy)), expect) << name;
    EXPECT_EQ(emcp::json::Value(copy).key(), emcp::StrView("k")) << name;
    EXPECT_EQ(copy->next, nullptr) << name;
  }
  EXPECT_EQ(copied, 93u);
}

TEST(JsonTestSuite, CopyValueThatDoesNotFitLeavesTheArena) {
  std::vector<uint8_t> a_bytes(4096);
  emcp::Arena a(emcp::Span<uint8_t>(a_bytes.data(), a_bytes.size()));
  emcp::json::Value v;
  const std::string text = R"({"name":"calibrate","arguments":{"x":[1,2.5e3,"three",null,true,{"y":-0.0}]}})";
  ASSERT_TRUE(build_tree(std::vector<uint8_t>(text.begin(), text.end()), a, &v));
  const std::string expect = written(v);  // (the writer's spelling of the numbers)
  for (size_t cap = 0; cap < 1024; cap += 7) {
    std::vector<uint8_t> small(cap);
    emcp::Arena b(emcp::Span<uint8_t>(small.data(), small.size()));
    emcp::json::Node* copy = nullptr;
    const Status s = emcp::json::copy_value(b, v, emcp::StrView(), &copy);
    if (s == Status::kOk) {
      EXPECT_EQ(written(emcp::json::Value(copy)), expect) << cap;
      EXPECT_TRUE(emcp::json::Value(copy).key().empty());
    } else {
      EXPECT_EQ(s, Status::kNoSpace) << cap;
      EXPECT_EQ(b.mark().used, 0u) << cap;
      EXPECT_EQ(copy, nullptr) << cap;
    }
  }
  emcp::json::Node* none = nullptr;
  EXPECT_EQ(emcp::json::copy_value(a, emcp::json::Value(), emcp::StrView(), &none), Status::kNotFound);
}
