// emcp/util/span.h - non-owning views: Span<T> over contiguous objects and StrView over bytes.
//
// Views never own what they point to; the API that hands one out says how long it stays valid.
// StrView is emcp's string_view: length-delimited (may contain NUL), no exceptions, no
// allocation, and none of std::string_view's throwing members (which drag abort/malloc into
// newlib firmware).
//
// Context: any.
#ifndef EMCP_UTIL_SPAN_H
#define EMCP_UTIL_SPAN_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/opt.h"

EMCP_NS_BEGIN

template <typename T>
class Span {
 public:
  constexpr Span() = default;
  constexpr Span(T* data, size_t size) : data_(data), size_(size) {}
  template <size_t N>
  constexpr Span(T (&array)[N]) : data_(array), size_(N) {}  // NOLINT: implicit like std::span

  constexpr T* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr T& operator[](size_t i) const { return data_[i]; }
  constexpr T* begin() const { return data_; }
  constexpr T* end() const { return data_ + size_; }

 private:
  T* data_ = nullptr;
  size_t size_ = 0;
};

class StrView {
 public:
  constexpr StrView() = default;
  constexpr StrView(const char* data, size_t size) : data_(data), size_(size) {}
  /// From a NUL-terminated string (nullptr gives the empty view). Always inlined: for a literal
  /// (keys, method names) the length is then a constant; an outlined copy, which -Os chose on
  /// the boards, measured every literal at run time (bench/target: 11 % of a tools/call).
  __attribute__((always_inline)) constexpr StrView(const char* cstr)  // NOLINT: implicit from literals by design
      : data_(cstr), size_(cstr ? length(cstr) : 0) {}

  constexpr const char* data() const { return data_; }
  constexpr size_t size() const { return size_; }
  constexpr bool empty() const { return size_ == 0; }
  constexpr char operator[](size_t i) const { return data_[i]; }
  constexpr const char* begin() const { return data_; }
  constexpr const char* end() const { return data_ + size_; }

  constexpr bool operator==(StrView o) const {
    if (size_ != o.size_) return false;
    // At run time the C library's memcmp (a word at a time: session ids, versions, names).
    if (!__builtin_is_constant_evaluated()) return size_ == 0 || __builtin_memcmp(data_, o.data_, size_) == 0;
    for (size_t i = 0; i < size_; ++i)
      if (data_[i] != o.data_[i]) return false;
    return true;
  }
  constexpr bool operator!=(StrView o) const { return !(*this == o); }
  /// Equal to the NUL-terminated `cstr`, without measuring it first.
  constexpr bool equals(const char* cstr) const {
    for (size_t i = 0; i < size_; ++i)
      if (cstr[i] == '\0' || cstr[i] != data_[i]) return false;
    return cstr[size_] == '\0';
  }
  constexpr bool starts_with(StrView p) const {
    return p.size_ <= size_ && StrView(data_, p.size_) == p;
  }
  /// The bytes [pos, pos+n), clamped to the view (never fails).
  constexpr StrView sub(size_t pos, size_t n = static_cast<size_t>(-1)) const {
    if (pos > size_) pos = size_;
    if (n > size_ - pos) n = size_ - pos;
    return StrView(data_ + pos, n);
  }

 private:
  // __builtin_strlen folds to a constant for string literals (the common case: keys, method
  // names) and is usable in constant expressions.
  static constexpr size_t length(const char* s) { return __builtin_strlen(s); }
  const char* data_ = "";
  size_t size_ = 0;
};

EMCP_NS_END

#endif  // EMCP_UTIL_SPAN_H
