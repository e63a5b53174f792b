// emcp/json/reader.h - streaming (push) JSON reader, strict RFC 8259.
//
// Feed it bytes as they arrive, any number at a time (one byte, a UART burst, a TCP segment),
// then pull events until it asks for more. It never needs the whole document: strings come in
// chunks, only keys and the significant digits of a number are held, and nesting is tracked in
// one bit per level. No recursion, no heap; all state lives in the object.
//
// What it rejects (each with its own Status): trailing commas, leading zeros, control
// characters and invalid UTF-8 (overlong forms, surrogates, code points above U+10FFFF) in
// strings, invalid escapes, unpaired \uXXXX surrogates, anything after the document, and empty
// input. Limits (nesting depth, key length, significant digits) stop with a distinct status.
// A byte order mark is rejected (RFC 8259 allows either choice; MCP text has none).
//
// Numbers: an integer without fraction or exponent that fits int64 is an kInt, exactly; every
// other number is a kDouble, correctly rounded. Magnitudes beyond the largest double stop with
// kNumberOverflow; values below the smallest subnormal become 0.
//
// Context: one loop (not thread safe, not for ISRs).
//
// Example (see tests/unit/json_reader_test.cpp for a complete consumer):
//   emcp::json::StaticReader<> r;
//   r.feed(bytes, n);               // as many times as data arrives
//   for (;;) {
//     emcp::json::Event e = r.next();
//     if (e == emcp::json::Event::kNeedInput) break;   // feed more, or r.finish()
//     if (e == emcp::json::Event::kError) { report(r.status(), r.offset()); break; }
//     ...                            // kKey: r.text(); kInt: r.int_value(); ...
//   }
#ifndef EMCP_JSON_READER_H
#define EMCP_JSON_READER_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace json {

enum class Event : uint8_t {
  kNeedInput,    ///< every fed byte is used: feed() more, or finish() at the end of input
  kError,        ///< status() says why, offset() where; sticky until reset()
  kObjectBegin,  ///< '{'
  kObjectEnd,    ///< '}'
  kArrayBegin,   ///< '['
  kArrayEnd,     ///< ']'
  kKey,          ///< an object key, whole: text()
  kStringPart,   ///< part of a string value, more follows: text()
  kString,       ///< the last part of a string value (may be empty): text()
  kInt,          ///< int_value()
  kDouble,       ///< double_value()
  kTrue,
  kFalse,
  kNull,
  kDocumentEnd,  ///< after finish(): the input was exactly one JSON value; sticky
};

/// True for the events that complete a value (a scalar, the last part of a string, the end of
/// a container).
constexpr bool completes_value(Event e) {
  return e == Event::kString || e == Event::kInt || e == Event::kDouble || e == Event::kTrue ||
         e == Event::kFalse || e == Event::kNull || e == Event::kObjectEnd ||
         e == Event::kArrayEnd;
}

/// Reader logic over storage supplied by a derived class (StaticReader) or the caller.
class Reader {
 public:
  /// Storage a Reader works in. Not owned; must outlive the reader.
  struct Storage {
    uint32_t* depth_bits;  ///< (max_depth + 31) / 32 words
    uint16_t max_depth;
    char* key_buf;  ///< key_cap bytes
    uint16_t key_cap;
    uint8_t* digits;  ///< digits_cap bytes (at most json::kMaxDecimalDigits are used)
    uint16_t digits_cap;
  };

  explicit Reader(const Storage& storage);
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  /// Starts a new document; forgets any input not yet consumed.
  void reset();

  /// Hands the reader the next bytes of input. `data` is not copied and must stay valid (and
  /// unchanged) until next() returns kNeedInput, kError or kDocumentEnd. Call it only when the
  /// previous input is used up (next() returned kNeedInput); otherwise the call is ignored and
  /// next() reports kError with kInvalidState.
  void feed(const void* data, size_t size);

  /// Declares the end of input: a number at the very end completes, an unfinished value becomes
  /// kUnexpectedEnd, and a complete document then gives kDocumentEnd.
  void finish();

  /// Advances to the next event. O(1) amortised per byte; never blocks.
  Event next();

  /// Why the last kError happened (kOk otherwise).
  Status status() const { return status_; }
  /// Key (kKey) or string chunk (kStringPart / kString): UTF-8 bytes, escapes decoded. Valid
  /// until the next call of next(), feed() or reset(). A chunk may end inside a multi-byte
  /// character; the concatenation of all chunks is the string.
  StrView text() const { return StrView(text_, text_len_); }
  /// The value of the last kInt event.
  int64_t int_value() const { return int_; }
  /// The value of the last kDouble event, correctly rounded. Converted on each call from the
  /// number's digits (decimal()), so programs that never ask link no decimal-to-binary code.
  double double_value() const;
  /// The last kDouble number as it was written: (-1)^negative * D * 10^exp10, D the integer of
  /// the `count` decimal digits (0-9, no leading or trailing zeros; count 0 for zero). Valid
  /// until the next number is read. kDouble is reported for any number with a fraction or an
  /// exponent, and for integers beyond int64; the reader has checked that it fits a double.
  struct Decimal {
    const uint8_t* digits;
    uint16_t count;
    bool negative;
    int32_t exp10;
  };
  Decimal decimal() const { return Decimal{digits_, num_digits_, num_neg_, num_exp10_}; }
  /// Number of containers open around the current position.
  uint32_t depth() const { return depth_; }
  /// True once the top-level value is complete (only whitespace may follow), also after
  /// kDocumentEnd.
  bool done() const { return state_ == kDone || state_ == kEnded; }
  /// Bytes consumed since reset(); after kError, where the error was detected: the offending
  /// byte, or for an escape (\uXXXX surrogates) the byte after it, for an over-long key its
  /// closing quote.
  uint64_t offset() const;

 private:
  enum State : uint8_t {
    kValue,       // a value must come (top level, after ':' or after ',' in an array)
    kArrayFirst,  // after '[': a value or ']'
    kObjectFirst, // after '{': a key or '}'
    kObjectKey,   // after ',' in an object: a key
    kColon,       // after a key
    kAfterValue,  // in a container after a value: ',' or the closer
    kDone,        // the top-level value is complete
    kString,      // inside a string value
    kKeyString,   // inside a key
    kEscape,      // after '\'
    kUnicode,     // inside \uXXXX
    kLowBackslash,// after a high surrogate escape: '\' must follow
    kLowU,        // ... then 'u'
    kNumber,
    kLiteral,
    kEnded,       // kDocumentEnd was reported
    kFailed,      // kError was reported
  };
  enum NumState : uint8_t { kNumSign, kNumZero, kNumInt, kNumFrac0, kNumFrac, kNumExp0,
                            kNumExpSign, kNumExp };

  /// Internal: the state changed and next() should go on (never returned to callers).
  static constexpr Event kAgain = static_cast<Event>(0xFF);
  Event scan_string();
  Event scan_escape();
  Event scan_number();
  Event scan_literal();
  Event end_of_input();
  Event fail(Status s);
  Event push(bool object);
  Event close(bool object);
  Event value_done(Event e);
  Event finish_number();
  void key_append(const uint8_t* bytes, size_t n);
  Event escape_done(const uint8_t* bytes, size_t n);
  bool in_object() const {
    return (depth_bits_[(depth_ - 1) >> 5] >> ((depth_ - 1) & 31)) & 1u;
  }

  // Storage.
  uint32_t* depth_bits_;
  char* key_buf_;
  uint8_t* digits_;
  uint16_t max_depth_;
  uint16_t key_cap_;
  uint16_t digits_cap_;

  // Input.
  const uint8_t* p_ = nullptr;
  const uint8_t* end_ = nullptr;
  const uint8_t* chunk_ = nullptr;  // start of the current input chunk
  uint64_t consumed_ = 0;           // bytes of earlier chunks
  bool eof_ = false;

  // Structure.
  State state_ = kValue;
  Status status_ = Status::kOk;
  uint32_t depth_ = 0;

  // Current token.
  const char* text_ = nullptr;
  size_t text_len_ = 0;
  uint16_t key_len_ = 0;       // bytes copied into key_buf_
  bool str_key_ = false;       // the string being read is a key
  bool key_copying_ = false;   // the key is being assembled in key_buf_
  bool key_overflow_ = false;  // the key is longer than key_cap_
  uint8_t u8_need_ = 0;        // continuation bytes still expected in a UTF-8 sequence
  uint8_t u8_lo_ = 0x80;       // allowed range of the next continuation byte
  uint8_t u8_hi_ = 0xBF;
  uint8_t hex_count_ = 0;      // hex digits of \uXXXX seen
  uint16_t unit_ = 0;          // the \uXXXX code unit being read
  uint16_t high_ = 0;          // pending high surrogate, 0 if none
  uint8_t esc_buf_[4] = {};
  const char* literal_ = nullptr;  // "true", "false" or "null"
  uint8_t literal_pos_ = 0;
  NumState num_state_ = kNumSign;
  bool num_neg_ = false;
  bool num_is_int_ = true;
  bool exp_neg_ = false;
  uint16_t num_digits_ = 0;    // significant digits stored in digits_
  uint32_t num_zeros_ = 0;     // zeros seen but not stored (may become significant)
  int32_t num_exp_adj_ = 0;    // decimal exponent implied by the digit positions
  int32_t num_exp_ = 0;        // explicit exponent (saturated)
  int32_t num_exp10_ = 0;     // exponent of the last kDouble (decimal())
  int64_t int_ = 0;
};

/// A Reader with its own storage. The defaults come from emcp/opt.h.
template <uint16_t MaxDepth = EMCP_JSON_MAX_DEPTH, uint16_t MaxKey = EMCP_JSON_MAX_KEY_LEN,
          uint16_t MaxDigits = EMCP_JSON_MAX_NUMBER_DIGITS>
class StaticReader : public Reader {
  static_assert(MaxDepth >= 1, "MaxDepth must be at least 1");
  static_assert(MaxDigits >= 20 && MaxDigits <= 64,
                "MaxDigits must hold any int64 (20) and at most 64 (json::kMaxDecimalDigits)");

 public:
  StaticReader() : Reader(Storage{bits_, MaxDepth, key_, MaxKey, digits_, MaxDigits}) {}

 private:
  uint32_t bits_[(MaxDepth + 31u) / 32u];
  char key_[MaxKey];
  uint8_t digits_[MaxDigits];
};

}  // namespace json
EMCP_NS_END

#endif  // EMCP_JSON_READER_H
