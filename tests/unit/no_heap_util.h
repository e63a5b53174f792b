// Test support for code that runs inside a NoHeapScope (heap_guard.h): a text of fixed size for
// what the code under test writes or reports (output captures, what callbacks record), so that
// capturing it does not allocate. Inputs that need std::string are built before the scope.
#ifndef EMCP_TESTS_NO_HEAP_UTIL_H
#define EMCP_TESTS_NO_HEAP_UTIL_H

#include <gtest/gtest.h>
#include <stddef.h>
#include <string.h>

#include <string>
#include <string_view>

#include "emcp/util/status.h"

namespace emcp_test {

/// Up to N bytes of text held in the object itself (no heap). Appending past N keeps what fits
/// and fails the test: a capture too small for its test is a test bug, never a silent cut.
template <size_t N>
class FixedText {
 public:
  /// Appends; false (and a test failure) when the bytes do not all fit.
  bool append(const char* p, size_t n) {
    if (n == 0) return true;  // p may be null then
    if (n > N - len_) {
      memcpy(buf_ + len_, p, N - len_);
      len_ = N;
      ADD_FAILURE() << "FixedText<" << N << "> is full: make it larger for this test";
      return false;
    }
    memcpy(buf_ + len_, p, n);
    len_ += n;
    return true;
  }
  bool append(std::string_view s) { return append(s.data(), s.size()); }
  void assign(const char* p, size_t n) {
    len_ = 0;
    (void)append(p, n);
  }
  void clear() { len_ = 0; }
  /// Drops the first `n` bytes (what a reader consumed).
  void consume(size_t n) {
    if (n > len_) n = len_;
    memmove(buf_, buf_ + n, len_ - n);
    len_ -= n;
  }

  std::string_view view() const { return std::string_view(buf_, len_); }
  /// Everything so far, and the text is empty again. The view is valid until the next append.
  std::string_view take() {
    const std::string_view v = view();
    len_ = 0;
    return v;
  }
  /// A copy (allocates: outside a NoHeapScope only).
  std::string str() const { return std::string(buf_, len_); }
  size_t size() const { return len_; }

  /// An output callback (json::FlushingSink::FlushFn) that appends to the FixedText `ctx`;
  /// kNoSpace when it is full.
  static emcp::Status write(void* ctx, const char* p, size_t n) {
    return static_cast<FixedText*>(ctx)->append(p, n) ? emcp::Status::kOk : emcp::Status::kNoSpace;
  }

 private:
  char buf_[N];
  size_t len_ = 0;
};

}  // namespace emcp_test

#endif
