#include "emcp/json/reader.h"

#include <string.h>

#include "emcp/json/number.h"
#include "emcp/util/assert.h"
#include "char_class.h"

EMCP_NS_BEGIN
namespace json {

namespace {

using detail::kStr;
using detail::kPlain;
using detail::kQuote;
using detail::kBackslash;
using detail::kControl;
using detail::kBadByte;

inline bool is_ws(uint8_t c) { return c == ' ' || c == '\n' || c == '\r' || c == '\t'; }
inline bool is_digit(uint8_t c) { return static_cast<uint8_t>(c - '0') < 10; }

// Value of a hex digit, or 16 for anything else.
inline uint8_t hex_value(uint8_t c) {
  if (is_digit(c)) return static_cast<uint8_t>(c - '0');
  uint8_t l = static_cast<uint8_t>(c | 0x20);
  if (l >= 'a' && l <= 'f') return static_cast<uint8_t>(l - 'a' + 10);
  return 16;
}

// UTF-8 encoding of a code point (not a surrogate, at most 0x10FFFF); returns the length.
inline size_t encode_utf8(uint32_t cp, uint8_t* out) {
  if (cp < 0x80) {
    out[0] = static_cast<uint8_t>(cp);
    return 1;
  }
  if (cp < 0x800) {
    out[0] = static_cast<uint8_t>(0xC0 | (cp >> 6));
    out[1] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 2;
  }
  if (cp < 0x10000) {
    out[0] = static_cast<uint8_t>(0xE0 | (cp >> 12));
    out[1] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
    out[2] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
    return 3;
  }
  out[0] = static_cast<uint8_t>(0xF0 | (cp >> 18));
  out[1] = static_cast<uint8_t>(0x80 | ((cp >> 12) & 0x3F));
  out[2] = static_cast<uint8_t>(0x80 | ((cp >> 6) & 0x3F));
  out[3] = static_cast<uint8_t>(0x80 | (cp & 0x3F));
  return 4;
}

constexpr int32_t kExpSaturate = 1000000000;  // beyond any double, far from int32 overflow

}  // namespace

Reader::Reader(const Storage& s)
    : depth_bits_(s.depth_bits),
      key_buf_(s.key_buf),
      digits_(s.digits),
      max_depth_(s.max_depth),
      key_cap_(s.key_cap),
      digits_cap_(s.digits_cap > kMaxDecimalDigits ? static_cast<uint16_t>(kMaxDecimalDigits)
                                                   : s.digits_cap) {
  // Every int64 needs 19 digits (plus a spare); keys and depth need room for MCP's envelope.
  EMCP_ASSERT(s.depth_bits != nullptr && s.max_depth >= 1);
  EMCP_ASSERT(s.key_buf != nullptr && s.key_cap >= 1);
  EMCP_ASSERT(s.digits != nullptr && s.digits_cap >= 20);
}

void Reader::reset() {
  p_ = end_ = chunk_ = nullptr;
  consumed_ = 0;
  eof_ = false;
  state_ = kValue;
  status_ = Status::kOk;
  depth_ = 0;
  text_ = nullptr;
  text_len_ = 0;
  u8_need_ = 0;
  high_ = 0;
}

void Reader::feed(const void* data, size_t size) {
  if (state_ == kFailed || state_ == kEnded) return;
  if (p_ != end_ || eof_) {  // previous input not used up, or input already finished
    status_ = Status::kInvalidState;
    state_ = kFailed;
    return;
  }
  consumed_ += static_cast<uint64_t>(end_ - chunk_);
  chunk_ = p_ = static_cast<const uint8_t*>(data);
  end_ = p_ + size;
}

void Reader::finish() { eof_ = true; }

uint64_t Reader::offset() const { return consumed_ + static_cast<uint64_t>(p_ - chunk_); }

Event Reader::fail(Status s) {
  status_ = s;
  state_ = kFailed;
  return Event::kError;
}

Event Reader::value_done(Event e) {
  state_ = depth_ == 0 ? kDone : kAfterValue;
  return e;
}

Event Reader::push(bool object) {
  if (depth_ >= max_depth_) return fail(Status::kDepthLimit);
  uint32_t word = depth_ >> 5;
  uint32_t bit = 1u << (depth_ & 31);
  depth_bits_[word] = object ? (depth_bits_[word] | bit) : (depth_bits_[word] & ~bit);
  ++depth_;
  ++p_;
  state_ = object ? kObjectFirst : kArrayFirst;
  return object ? Event::kObjectBegin : Event::kArrayBegin;
}

Event Reader::close(bool object) {
  ++p_;
  --depth_;
  return value_done(object ? Event::kObjectEnd : Event::kArrayEnd);
}

Event Reader::end_of_input() {
  if (!eof_) return Event::kNeedInput;
  switch (state_) {
    case kDone:
      state_ = kEnded;
      return Event::kDocumentEnd;
    case kNumber:
      return finish_number();
    case kEnded:
      return Event::kDocumentEnd;
    case kFailed:
      return Event::kError;
    default:
      return fail(Status::kUnexpectedEnd);
  }
}

Event Reader::next() {
  for (;;) {
    switch (state_) {
      case kString:
      case kKeyString: {
        const Event e = scan_string();
        if (e == kAgain) continue;
        return e;
      }
      case kEscape:
      case kUnicode:
      case kLowBackslash:
      case kLowU: {
        const Event e = scan_escape();
        if (e == kAgain) continue;
        return e;
      }
      case kNumber:
        return scan_number();
      case kLiteral:
        return scan_literal();
      case kEnded:
        return Event::kDocumentEnd;
      case kFailed:
        return Event::kError;
      default:
        break;
    }
    const uint8_t* p = p_;
    while (p != end_ && is_ws(*p)) ++p;
    p_ = p;
    if (p == end_) return end_of_input();
    const uint8_t c = *p;
    switch (state_) {
      case kArrayFirst:
        if (c == ']') return close(false);
        [[fallthrough]];
      case kValue:
        switch (c) {
          case '{':
            return push(true);
          case '[':
            return push(false);
          case '"': {
            // Fast path: a string without escapes or non-ASCII that ends in this input.
            const uint8_t* q = detail::skip_plain(p + 1, end_);
            if (q != end_ && *q == '"') {
              text_ = reinterpret_cast<const char*>(p + 1);
              text_len_ = static_cast<size_t>(q - p - 1);
              p_ = q + 1;
              return value_done(Event::kString);
            }
            ++p_;
            state_ = kString;
            str_key_ = false;
            continue;
          }
          case 't':
            literal_ = "true";
            break;
          case 'f':
            literal_ = "false";
            break;
          case 'n':
            literal_ = "null";
            break;
          default:
            if (c == '-' || is_digit(c)) {
              num_neg_ = c == '-';
              if (num_neg_) ++p_;
              num_state_ = kNumSign;
              num_is_int_ = true;
              exp_neg_ = false;
              num_digits_ = 0;
              num_zeros_ = 0;
              num_exp_adj_ = 0;
              num_exp_ = 0;
              state_ = kNumber;
              return scan_number();
            }
            return fail(Status::kUnexpectedChar);
        }
        ++p_;
        literal_pos_ = 1;
        state_ = kLiteral;
        return scan_literal();
      case kObjectFirst:
        if (c == '}') return close(true);
        [[fallthrough]];
      case kObjectKey: {
        if (c != '"') return fail(Status::kUnexpectedChar);
        // Fast path: a plain key that ends in this input, usually followed by its colon.
        const uint8_t* q = detail::skip_plain(p + 1, end_);
        if (q != end_ && *q == '"' && static_cast<size_t>(q - p - 1) <= key_cap_) {
          text_ = reinterpret_cast<const char*>(p + 1);
          text_len_ = static_cast<size_t>(q - p - 1);
          ++q;
          while (q != end_ && is_ws(*q)) ++q;
          if (q != end_ && *q == ':') {
            p_ = q + 1;
            state_ = kValue;
          } else {
            p_ = q;
            state_ = kColon;
          }
          return Event::kKey;
        }
        ++p_;
        state_ = kKeyString;
        str_key_ = true;
        key_len_ = 0;
        key_copying_ = false;
        key_overflow_ = false;
        continue;
      }
      case kColon:
        if (c != ':') return fail(Status::kUnexpectedChar);
        ++p_;
        state_ = kValue;
        continue;
      case kAfterValue: {
        const bool obj = in_object();
        if (c == ',') {
          ++p_;
          state_ = obj ? kObjectKey : kValue;
          continue;
        }
        if (c == (obj ? '}' : ']')) return close(obj);
        return fail(Status::kUnexpectedChar);
      }
      case kDone:
        return fail(Status::kTrailingData);
      default:
        return fail(Status::kInvalidState);
    }
  }
}

void Reader::key_append(const uint8_t* bytes, size_t n) {
  if (key_overflow_) return;
  if (n > static_cast<size_t>(key_cap_ - key_len_)) {
    key_overflow_ = true;  // keep scanning (and validating) to the closing quote
    return;
  }
  if (n != 0) memcpy(key_buf_ + key_len_, bytes, n);
  key_len_ = static_cast<uint16_t>(key_len_ + n);
}

Event Reader::scan_string() {
  const uint8_t* p = p_;
  const uint8_t* const end = end_;
  const uint8_t* const run = p;
  const bool key = str_key_;
  for (;;) {
    // Continuation bytes of a multi-byte character (possibly split across inputs).
    while (u8_need_ != 0 && p != end) {
      const uint8_t c = *p;
      if (c < u8_lo_ || c > u8_hi_) {
        p_ = p;
        return fail(Status::kInvalidUtf8);
      }
      u8_lo_ = 0x80;
      u8_hi_ = 0xBF;
      --u8_need_;
      ++p;
    }
    p = detail::skip_plain(p, end);
    if (p == end) break;
    const uint8_t c = *p;
    switch (kStr.cls[c]) {
      case kPlain:  // unreachable: the loop above stops only on other classes
        break;
      case kQuote:
        if (key) {
          // An over-long key is reported at its closing quote, wherever the input was cut.
          if (key_copying_) {
            key_append(run, static_cast<size_t>(p - run));
            text_ = key_buf_;
            text_len_ = key_len_;
          } else {
            text_ = reinterpret_cast<const char*>(run);
            text_len_ = static_cast<size_t>(p - run);
            if (text_len_ > key_cap_) key_overflow_ = true;
          }
          if (key_overflow_) {
            p_ = p;
            return fail(Status::kKeyTooLong);
          }
          p_ = p + 1;
          state_ = kColon;
          return Event::kKey;
        }
        text_ = reinterpret_cast<const char*>(run);
        text_len_ = static_cast<size_t>(p - run);
        p_ = p + 1;
        return value_done(Event::kString);
      case kBackslash:
        if (key) {
          key_append(run, static_cast<size_t>(p - run));
          key_copying_ = true;
        } else if (p != run) {
          // Hand out the plain run first; the escape is handled on the next call.
          text_ = reinterpret_cast<const char*>(run);
          text_len_ = static_cast<size_t>(p - run);
          p_ = p;
          return Event::kStringPart;
        }
        p_ = p + 1;
        state_ = kEscape;
        return kAgain;  // next() goes on with the escape
      case kControl:
        p_ = p;
        return fail(Status::kControlInString);
      case kBadByte:
        p_ = p;
        return fail(Status::kInvalidUtf8);
      default:  // a lead byte: its continuations are checked at the top of the loop
        detail::utf8_lead(kStr.cls[c], &u8_need_, &u8_lo_, &u8_hi_);
        break;
    }
    ++p;
  }
  // Out of input inside the string.
  p_ = p;
  if (key) {
    key_append(run, static_cast<size_t>(p - run));
    key_copying_ = true;
  } else if (p != run) {
    text_ = reinterpret_cast<const char*>(run);
    text_len_ = static_cast<size_t>(p - run);
    return Event::kStringPart;
  }
  return end_of_input();
}

Event Reader::escape_done(const uint8_t* bytes, size_t n) {
  if (str_key_) {
    // Back to the key's characters through next()'s loop: no recursion, however many escapes.
    state_ = kKeyString;
    key_append(bytes, n);
    return kAgain;
  }
  state_ = kString;
  // (memmove: g++ 12 at -O3 cannot tell that `bytes` is never inside esc_buf_ here and warns.)
  if (bytes != esc_buf_) memmove(esc_buf_, bytes, n < sizeof esc_buf_ ? n : sizeof esc_buf_);
  text_ = reinterpret_cast<const char*>(esc_buf_);
  text_len_ = n;
  return Event::kStringPart;
}

Event Reader::scan_escape() {
  for (;;) {
    if (p_ == end_) return end_of_input();
    const uint8_t c = *p_;
    switch (state_) {
      case kEscape: {
        uint8_t b;
        switch (c) {
          case '"': b = '"'; break;
          case '\\': b = '\\'; break;
          case '/': b = '/'; break;
          case 'b': b = '\b'; break;
          case 'f': b = '\f'; break;
          case 'n': b = '\n'; break;
          case 'r': b = '\r'; break;
          case 't': b = '\t'; break;
          case 'u':
            ++p_;
            state_ = kUnicode;
            hex_count_ = 0;
            unit_ = 0;
            continue;
          default:
            return fail(Status::kInvalidEscape);
        }
        ++p_;
        esc_buf_[0] = b;
        return escape_done(esc_buf_, 1);
      }
      case kUnicode: {
        const uint8_t v = hex_value(c);
        if (v > 15) return fail(Status::kInvalidEscape);
        unit_ = static_cast<uint16_t>((unit_ << 4) | v);
        ++p_;
        if (++hex_count_ < 4) continue;
        uint32_t cp = unit_;
        if (high_ != 0) {
          if (cp < 0xDC00 || cp > 0xDFFF) return fail(Status::kInvalidSurrogate);
          cp = 0x10000u + ((static_cast<uint32_t>(high_) - 0xD800u) << 10) + (cp - 0xDC00u);
          high_ = 0;
        } else if (cp >= 0xD800 && cp <= 0xDBFF) {
          high_ = unit_;
          state_ = kLowBackslash;
          continue;
        } else if (cp >= 0xDC00 && cp <= 0xDFFF) {
          return fail(Status::kInvalidSurrogate);
        }
        return escape_done(esc_buf_, encode_utf8(cp, esc_buf_));
      }
      case kLowBackslash:
        if (c != '\\') return fail(Status::kInvalidSurrogate);
        ++p_;
        state_ = kLowU;
        continue;
      case kLowU:
        if (c != 'u') return fail(Status::kInvalidSurrogate);
        ++p_;
        state_ = kUnicode;
        hex_count_ = 0;
        unit_ = 0;
        continue;
      default:
        return fail(Status::kInvalidState);
    }
  }
}

Event Reader::scan_literal() {
  const uint8_t* p = p_;
  while (p != end_) {
    if (*p != static_cast<uint8_t>(literal_[literal_pos_])) {
      p_ = p;
      return fail(Status::kUnexpectedChar);
    }
    ++p;
    if (literal_[++literal_pos_] == '\0') {
      p_ = p;
      return value_done(literal_[0] == 't'   ? Event::kTrue
                        : literal_[0] == 'f' ? Event::kFalse
                                             : Event::kNull);
    }
  }
  p_ = p;
  return end_of_input();
}

Event Reader::scan_number() {
  const uint8_t* p = p_;
  const uint8_t* const end = end_;
  while (p != end) {
    const uint8_t c = *p;
    switch (num_state_) {
      case kNumSign:
        if (!is_digit(c)) {
          p_ = p;
          return fail(Status::kInvalidNumber);
        }
        num_state_ = c == '0' ? kNumZero : kNumInt;
        if (c == '0') {
          ++p;
          continue;
        }
        break;  // the first digit is handled as an integer digit below
      case kNumZero:
        if (is_digit(c)) {  // leading zero
          p_ = p;
          return fail(Status::kInvalidNumber);
        }
        break;
      default:
        break;
    }
    if (num_state_ == kNumInt || num_state_ == kNumFrac || num_state_ == kNumFrac0) {
      const bool frac = num_state_ != kNumInt;
      // The hot loop: one significant digit per iteration. D grows as stored digits followed
      // by num_zeros_ zeros; a fraction digit also moves the decimal exponent down by one.
      while (p != end && is_digit(*p)) {
        const uint8_t d = static_cast<uint8_t>(*p - '0');
        if (d == 0) {
          if (num_digits_ != 0) ++num_zeros_;
        } else {
          if (num_zeros_ + num_digits_ + 1u > digits_cap_) {
            p_ = p;
            return fail(Status::kNumberTooLong);
          }
          for (; num_zeros_ != 0; --num_zeros_) digits_[num_digits_++] = 0;
          digits_[num_digits_++] = d;
        }
        if (frac && num_exp_adj_ > -kExpSaturate) --num_exp_adj_;
        if (num_zeros_ > static_cast<uint32_t>(kExpSaturate)) num_zeros_ = kExpSaturate;
        ++p;
        if (num_state_ == kNumFrac0) num_state_ = kNumFrac;
      }
      if (p == end) break;
    }
    const uint8_t t = *p;
    switch (num_state_) {
      case kNumZero:
      case kNumInt:
        if (t == '.') {
          num_state_ = kNumFrac0;
          num_is_int_ = false;
          ++p;
          continue;
        }
        [[fallthrough]];
      case kNumFrac:
        if (t == 'e' || t == 'E') {
          num_state_ = kNumExp0;
          num_is_int_ = false;
          ++p;
          continue;
        }
        p_ = p;
        return finish_number();
      case kNumFrac0:
        p_ = p;
        return fail(Status::kInvalidNumber);
      case kNumExp0:
        if (t == '+' || t == '-') {
          exp_neg_ = t == '-';
          num_state_ = kNumExpSign;
          ++p;
          continue;
        }
        [[fallthrough]];
      case kNumExpSign:
        if (!is_digit(t)) {
          p_ = p;
          return fail(Status::kInvalidNumber);
        }
        num_state_ = kNumExp;
        [[fallthrough]];
      case kNumExp:
        while (p != end && is_digit(*p)) {
          // Saturates at kExpSaturate (1e9): beyond it every number is 0 or overflows.
          if (num_exp_ < kExpSaturate / 10) num_exp_ = num_exp_ * 10 + (*p - '0');
          else num_exp_ = kExpSaturate;
          ++p;
        }
        if (p == end) break;
        p_ = p;
        return finish_number();
      default:
        break;
    }
  }
  p_ = p;
  return end_of_input();
}

Event Reader::finish_number() {
  if (num_state_ != kNumZero && num_state_ != kNumInt && num_state_ != kNumFrac &&
      num_state_ != kNumExp)
    return fail(Status::kInvalidNumber);
  if (num_is_int_ && num_digits_ + num_zeros_ <= 19u) {
    uint64_t u = 0;
    for (uint16_t i = 0; i < num_digits_; ++i) u = u * 10u + digits_[i];
    for (uint32_t i = 0; i < num_zeros_; ++i) u *= 10u;
    if (!num_neg_ && u <= static_cast<uint64_t>(INT64_MAX)) {
      int_ = static_cast<int64_t>(u);
      return value_done(Event::kInt);
    }
    if (num_neg_ && u <= static_cast<uint64_t>(INT64_MAX) + 1u) {
      int_ = static_cast<int64_t>(0u - u);
      return value_done(Event::kInt);
    }
  }
  int64_t e = static_cast<int64_t>(num_exp_adj_) + static_cast<int64_t>(num_zeros_) +
              (exp_neg_ ? -static_cast<int64_t>(num_exp_) : static_cast<int64_t>(num_exp_));
  if (e > kExpSaturate) e = kExpSaturate;
  if (e < -kExpSaturate) e = -kExpSaturate;
  if (decimal_overflows_double(digits_, num_digits_, static_cast<int32_t>(e)))
    return fail(Status::kNumberOverflow);
  num_exp10_ = static_cast<int32_t>(e);
  return value_done(Event::kDouble);
}

double Reader::double_value() const {
  double v = 0;
  // Cannot fail: finish_number() checked the range.
  (void)decimal_to_double(num_neg_, digits_, num_digits_, num_exp10_, &v);
  return v;
}

}  // namespace json
EMCP_NS_END
