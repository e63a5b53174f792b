// emcp/json/writer.h - streaming JSON writer into a Sink.
//
// Writes compact RFC 8259 JSON as it is produced: commas and colons are placed for you, strings
// are escaped, invalid UTF-8 in your strings is repaired (each ill-formed sequence becomes
// U+FFFD, as WHATWG decoders do, so clients never see broken text), integers are exact,
// doubles round-trip (NaN and infinities, which JSON lacks, are written as null - as
// JSON.stringify does), and blobs stream as base64. Nothing is buffered beyond the sink.
//
// Misuse (a value where a key is due, a key in an array, unbalanced ends, nesting deeper than
// EMCP_JSON_WRITER_MAX_DEPTH) sets a sticky status and stops output; check status() once at
// the end, which also reports the sink's error.
//
// Context: the loop that owns the sink.
//
// Example:
//   w.begin_object();
//   w.member_str("name", "temperature");
//   w.member_double("value", 21.5);
//   w.key("tags"); w.begin_array(); w.string("indoor"); w.end_array();
//   w.end_object();           // {"name":"temperature","value":21.5,"tags":["indoor"]}
//   if (w.status() != emcp::Status::kOk) ...
#ifndef EMCP_JSON_WRITER_H
#define EMCP_JSON_WRITER_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/sink.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace json {

class Writer {
 public:
  /// Writes into `sink` (not owned; must outlive the writer).
  explicit Writer(Sink& sink) : sink_(sink) {}
  Writer(const Writer&) = delete;
  Writer& operator=(const Writer&) = delete;

  void begin_object();
  void end_object();
  void begin_array();
  void end_array();
  /// An object key; the next call must write its value.
  void key(StrView k);

  void string(StrView s);
  void int64(int64_t v);
  void uint64(uint64_t v);
  /// Round-trip decimal; NaN and infinities become null.
  void number(double v);
  void boolean(bool v);
  void null();
  /// A complete JSON value already serialized by the caller, copied verbatim (not validated).
  void raw(StrView json);

  /// A string written in parts: string_begin(), any number of string_part(), string_end().
  /// Parts may split UTF-8 characters anywhere.
  void string_begin();
  void string_part(StrView part);
  void string_end();

  /// A string holding the base64 (RFC 4648, with padding) of bytes given in parts of any size.
  void base64_begin();
  void base64_part(const void* data, size_t n);
  void base64_end();

  // Members: key followed by a value.
  void member_str(StrView k, StrView v) {
    key(k);
    string(v);
  }
  void member_int(StrView k, int64_t v) {
    key(k);
    int64(v);
  }
  void member_double(StrView k, double v) {
    key(k);
    number(v);
  }
  void member_bool(StrView k, bool v) {
    key(k);
    boolean(v);
  }

  /// Closes an open string or base64 string and then containers, innermost first, until
  /// depth() is `depth` (a safety net for producers that stop early).
  void close_to(uint32_t depth);

  /// Records an error found by the producer (for example a value it cannot finish); output
  /// stops as for any other error. The first error is kept.
  void set_error(Status s) { fail(s); }

  /// kOk, kInvalidState (misuse), kDepthLimit, or the sink's error.
  Status status() const { return status_ != Status::kOk ? status_ : sink_.status(); }
  /// True when every opened container has been closed and a value was written.
  bool complete() const {
    return depth_ == 0 && wrote_value_ && open_string_ == kNone && status() == Status::kOk;
  }
  uint32_t depth() const { return depth_; }
  Sink& sink() { return sink_; }

 private:
  bool before_value();
  void open(bool object);
  void close(bool object);
  void escape(const uint8_t* p, size_t n);
  void finish_utf8();
  void base64_emit(const uint8_t* in, size_t n);
  bool fail(Status s) {
    if (status_ == Status::kOk) status_ = s;
    return false;
  }
  bool bit(const uint32_t* bits, uint32_t i) const { return (bits[i >> 5] >> (i & 31)) & 1u; }
  void set_bit(uint32_t* bits, uint32_t i, bool v) {
    if (v) bits[i >> 5] |= 1u << (i & 31);
    else bits[i >> 5] &= ~(1u << (i & 31));
  }

  Sink& sink_;
  static constexpr uint32_t kWords = (EMCP_JSON_WRITER_MAX_DEPTH + 31u) / 32u;
  uint32_t object_bits_[kWords] = {};  // level i is an object
  uint32_t used_bits_[kWords] = {};    // level i already holds an element (comma needed)
  uint32_t depth_ = 0;
  Status status_ = Status::kOk;
  bool after_key_ = false;     // a key was written; its value must follow
  enum Open : uint8_t { kNone, kText, kBase64 };
  Open open_string_ = kNone;   // inside string_begin()/base64_begin() ... end
  bool wrote_value_ = false;   // a top-level value exists
  // UTF-8 repair across string_part() calls.
  uint8_t u8_need_ = 0;
  uint8_t u8_lo_ = 0x80;
  uint8_t u8_hi_ = 0xBF;
  uint8_t u8_len_ = 0;
  uint8_t u8_buf_[4] = {};
  // Base64 carry across base64_part() calls.
  uint8_t b64_len_ = 0;
  uint8_t b64_buf_[3] = {};
  // base64_end(), installed by base64_begin() for close_to(): text-only programs link no
  // base64 encoder.
  void (*close_base64_)(Writer& w) = nullptr;
};

}  // namespace json
EMCP_NS_END

#endif  // EMCP_JSON_WRITER_H
