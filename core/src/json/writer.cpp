#include "emcp/json/writer.h"

#include <string.h>

#include "char_class.h"
#include "emcp/json/number.h"

EMCP_NS_BEGIN
namespace json {

namespace {

using detail::kStr;

constexpr char kHex[] = "0123456789abcdef";
constexpr char kReplacement[] = "\xEF\xBF\xBD";  // U+FFFD
constexpr char kB64Alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

// Length of the run of well-formed UTF-8 starting at a lead byte `p` (class `cls`) that lies
// entirely before `end`: 1 + continuations when valid and complete, 0 when it is ill-formed or
// cut by `end`. `*valid_prefix` gets the number of valid bytes from p (at least 1).
size_t utf8_sequence(const uint8_t* p, const uint8_t* end, uint8_t cls, size_t* valid_prefix) {
  uint8_t need, lo, hi;
  *valid_prefix = 1;
  if (!detail::utf8_lead(cls, &need, &lo, &hi)) return 0;
  for (uint8_t i = 1; i <= need; ++i) {
    if (p + i >= end) return 0;  // cut
    if (p[i] < lo || p[i] > hi) return 0;
    lo = 0x80;
    hi = 0xBF;
    ++*valid_prefix;
  }
  return static_cast<size_t>(need) + 1;
}

}  // namespace

bool Writer::before_value() {
  if (status_ != Status::kOk) return false;
  if (open_string_ != kNone) return fail(Status::kInvalidState);
  if (depth_ == 0) {
    if (wrote_value_) return fail(Status::kInvalidState);
    wrote_value_ = true;
    return true;
  }
  const uint32_t level = depth_ - 1;
  if (bit(object_bits_, level)) {
    if (!after_key_) return fail(Status::kInvalidState);
    after_key_ = false;
    return true;
  }
  if (bit(used_bits_, level)) sink_.put(',');
  else set_bit(used_bits_, level, true);
  return true;
}

void Writer::open(bool object) {
  if (!before_value()) return;
  if (depth_ >= EMCP_JSON_WRITER_MAX_DEPTH) {
    fail(Status::kDepthLimit);
    return;
  }
  sink_.put(object ? '{' : '[');
  set_bit(object_bits_, depth_, object);
  set_bit(used_bits_, depth_, false);
  ++depth_;
}

void Writer::close(bool object) {
  if (status_ != Status::kOk) return;
  if (open_string_ != kNone || depth_ == 0 || bit(object_bits_, depth_ - 1) != object ||
      after_key_) {
    fail(Status::kInvalidState);
    return;
  }
  sink_.put(object ? '}' : ']');
  --depth_;
}

void Writer::begin_object() { open(true); }
void Writer::end_object() { close(true); }
void Writer::begin_array() { open(false); }
void Writer::end_array() { close(false); }

void Writer::key(StrView k) {
  if (status_ != Status::kOk) return;
  if (open_string_ != kNone || depth_ == 0 || !bit(object_bits_, depth_ - 1) || after_key_) {
    fail(Status::kInvalidState);
    return;
  }
  const uint32_t level = depth_ - 1;
  const bool comma = bit(used_bits_, level);
  set_bit(used_bits_, level, true);
  after_key_ = true;
  // Fast path: a key of plain ASCII that fits the sink's buffer goes in with one pass (what is
  // put there is committed only when the whole key was plain).
  const uint8_t* p = reinterpret_cast<const uint8_t*>(k.data());
  const size_t n = k.size();
  if (char* out = sink_.reserve(n + 4)) {
    size_t o = 0;
    if (comma) out[o++] = ',';
    out[o++] = '"';
    if (detail::copy_plain(out + o, p, n) == n) {  // (an empty StrView's pointer is not read)
      o += n;
      out[o++] = '"';
      out[o++] = ':';
      sink_.commit(o);
      return;
    }
  }
  if (comma) sink_.put(',');
  sink_.put('"');
  escape(p, n);
  finish_utf8();
  sink_.write("\":", 2);
}

void Writer::escape(const uint8_t* p, size_t n) {
  const uint8_t* const end = p + n;
  while (p != end) {
    if (u8_need_ != 0) {
      // Completing a character split across parts, one byte at a time.
      const uint8_t c = *p;
      if (c < u8_lo_ || c > u8_hi_) {
        sink_.write(kReplacement, 3);
        u8_need_ = 0;
        u8_len_ = 0;
        continue;  // c starts afresh
      }
      u8_buf_[u8_len_++] = c;
      u8_lo_ = 0x80;
      u8_hi_ = 0xBF;
      ++p;
      if (--u8_need_ == 0) {
        sink_.write(u8_buf_, u8_len_);
        u8_len_ = 0;
      }
      continue;
    }
    // A run of bytes that need no change: plain ASCII and complete well-formed characters.
    const uint8_t* run = p;
    uint8_t cls = 0;
    size_t valid = 0;
    for (;;) {
      p = detail::skip_plain(p, end);
      if (p == end) break;
      cls = kStr.cls[*p];
      if (cls < detail::kLead2) break;
      size_t len = utf8_sequence(p, end, cls, &valid);
      if (len == 0) break;
      p += len;
    }
    if (p != run) sink_.write(run, static_cast<size_t>(p - run));
    if (p == end) break;
    const uint8_t c = *p;
    switch (cls) {
      case detail::kQuote:
        sink_.write("\\\"", 2);
        ++p;
        break;
      case detail::kBackslash:
        sink_.write("\\\\", 2);
        ++p;
        break;
      case detail::kControl: {
        char e[6] = {'\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15]};
        switch (c) {
          case '\b': sink_.write("\\b", 2); break;
          case '\f': sink_.write("\\f", 2); break;
          case '\n': sink_.write("\\n", 2); break;
          case '\r': sink_.write("\\r", 2); break;
          case '\t': sink_.write("\\t", 2); break;
          default: sink_.write(e, 6); break;
        }
        ++p;
        break;
      }
      case detail::kBadByte:
        sink_.write(kReplacement, 3);
        ++p;
        break;
      default:
        if (p + valid == end) {
          // Valid so far but cut by the end of this part: keep it for the next part.
          uint8_t lo, hi;
          detail::utf8_lead(cls, &u8_need_, &lo, &hi);
          for (size_t i = 0; i < valid && i < sizeof u8_buf_; ++i) u8_buf_[i] = p[i];  // valid < 4
          u8_len_ = static_cast<uint8_t>(valid);
          u8_need_ = static_cast<uint8_t>(u8_need_ - (valid - 1));
          u8_lo_ = valid == 1 ? lo : 0x80;
          u8_hi_ = valid == 1 ? hi : 0xBF;
          p = end;
        } else {
          // Ill-formed: one U+FFFD for the maximal valid prefix, then go on after it.
          sink_.write(kReplacement, 3);
          p += valid;
        }
        break;
    }
  }
}

void Writer::finish_utf8() {
  if (u8_need_ != 0) sink_.write(kReplacement, 3);  // a character cut by the string's end
  u8_need_ = 0;
  u8_len_ = 0;
}

void Writer::string(StrView s) {
  if (!before_value()) return;
  const uint8_t* p = reinterpret_cast<const uint8_t*>(s.data());
  const size_t n = s.size();
  if (n <= 64) {  // short plain strings: one pass, committed only when all of it was plain
    if (char* out = sink_.reserve(n + 2)) {
      out[0] = '"';
      if (detail::copy_plain(out + 1, p, n) == n) {
        out[n + 1] = '"';
        sink_.commit(n + 2);
        return;
      }
    }
  }
  sink_.put('"');
  escape(reinterpret_cast<const uint8_t*>(s.data()), s.size());
  finish_utf8();
  sink_.put('"');
}

void Writer::string_begin() {
  if (!before_value()) return;
  sink_.put('"');
  u8_need_ = 0;
  u8_len_ = 0;
  open_string_ = kText;
}

void Writer::string_part(StrView part) {
  if (status_ != Status::kOk) return;
  if (open_string_ != kText) {
    fail(Status::kInvalidState);
    return;
  }
  escape(reinterpret_cast<const uint8_t*>(part.data()), part.size());
}

void Writer::string_end() {
  if (status_ != Status::kOk) return;
  if (open_string_ != kText) {
    fail(Status::kInvalidState);
    return;
  }
  finish_utf8();
  sink_.put('"');
  open_string_ = kNone;
}

void Writer::base64_emit(const uint8_t* in, size_t n) {
  // n is a multiple of 3 (or the final 1-2 bytes, padded).
  char out[64];
  size_t o = 0;
  for (size_t i = 0; i < n; i += 3) {
    const size_t k = n - i < 3 ? n - i : 3;
    uint32_t v = static_cast<uint32_t>(in[i]) << 16;
    if (k > 1) v |= static_cast<uint32_t>(in[i + 1]) << 8;
    if (k > 2) v |= in[i + 2];
    out[o++] = kB64Alphabet[(v >> 18) & 63];
    out[o++] = kB64Alphabet[(v >> 12) & 63];
    out[o++] = k > 1 ? kB64Alphabet[(v >> 6) & 63] : '=';
    out[o++] = k > 2 ? kB64Alphabet[v & 63] : '=';
    if (o == sizeof out) {
      sink_.write(out, o);
      o = 0;
    }
  }
  if (o != 0) sink_.write(out, o);
}

void Writer::base64_begin() {
  if (!before_value()) return;
  sink_.put('"');
  b64_len_ = 0;
  open_string_ = kBase64;
  close_base64_ = [](Writer& w) { w.base64_end(); };
}

void Writer::base64_part(const void* data, size_t n) {
  if (status_ != Status::kOk) return;
  if (open_string_ != kBase64) {
    fail(Status::kInvalidState);
    return;
  }
  const uint8_t* p = static_cast<const uint8_t*>(data);
  while (b64_len_ != 0 && b64_len_ < 3 && n != 0) {
    b64_buf_[b64_len_++] = *p++;
    --n;
  }
  if (b64_len_ == 3) {
    base64_emit(b64_buf_, 3);
    b64_len_ = 0;
  }
  const size_t whole = n - n % 3;
  if (whole != 0) base64_emit(p, whole);
  p += whole;
  n -= whole;
  while (n != 0) {
    b64_buf_[b64_len_++] = *p++;
    --n;
  }
}

void Writer::base64_end() {
  if (status_ != Status::kOk) return;
  if (open_string_ != kBase64) {
    fail(Status::kInvalidState);
    return;
  }
  if (b64_len_ != 0) base64_emit(b64_buf_, b64_len_);
  b64_len_ = 0;
  sink_.put('"');
  open_string_ = kNone;
}

void Writer::close_to(uint32_t depth) {
  if (open_string_ == kText) string_end();
  if (open_string_ == kBase64 && close_base64_ != nullptr) close_base64_(*this);
  while (depth_ > depth && status_ == Status::kOk) {
    if (after_key_) null();  // a key without its value
    close(bit(object_bits_, depth_ - 1));
  }
}

void Writer::int64(int64_t v) {
  if (!before_value()) return;
  char buf[24];
  sink_.write(buf, format_int64(v, buf));
}

void Writer::uint64(uint64_t v) {
  if (!before_value()) return;
  char buf[24];
  sink_.write(buf, format_uint64(v, buf));
}

void Writer::number(double v) {
  if (!before_value()) return;
  char buf[kMaxDoubleChars];
  const size_t n = format_double(v, buf);
  if (n == 0) sink_.write("null", 4);
  else sink_.write(buf, n);
}

void Writer::boolean(bool v) {
  if (!before_value()) return;
  if (v) sink_.write("true", 4);
  else sink_.write("false", 5);
}

void Writer::null() {
  if (!before_value()) return;
  sink_.write("null", 4);
}

void Writer::raw(StrView json) {
  if (!before_value()) return;
  sink_.write(json.data(), json.size());
}

}  // namespace json
EMCP_NS_END
