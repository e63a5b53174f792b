// emcp/json/sink.h - where the JSON writer's bytes go.
//
// A Sink is a small buffer plus a drain function that empties it when it fills. The three
// kinds differ only in the drain:
//   BufferSink    the buffer is the whole output; when it is full the sink fails (kNoSpace).
//   CountingSink  counts and drops bytes; renders a message once to learn its length
//                 (Content-Length) before rendering it again for real.
//   FlushingSink  hands each full buffer to a port callback (UART, socket, stdout), so output of
//                 any size passes through a buffer of any size (even a few bytes).
//
// Errors are sticky: after the first failure the sink drops every further byte and status()
// keeps the first error, so a writer can produce a whole message and check once at the end.
// Non-virtual: the fast path (a byte into a buffer that has room) is inline.
//
// Context: the loop that owns it.
//
// Example:
//   char buf[256];
//   emcp::json::FlushingSink out(buf, sizeof buf, &uart_write, &uart);  // see FlushFn
//   emcp::json::Writer w(out);
//   ... write a message ...
//   out.put('\n');
//   emcp::Status s = out.flush();
#ifndef EMCP_JSON_SINK_H
#define EMCP_JSON_SINK_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "emcp/util/assert.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace json {

class Sink {
 public:
  Sink(const Sink&) = delete;
  Sink& operator=(const Sink&) = delete;

  /// Appends one byte (dropped after an error).
  void put(char c) {
    if (len_ == cap_ && !drain()) return;
    buf_[len_++] = c;
  }
  /// Appends `n` bytes from `data` (not retained after the call).
  void write(const void* data, size_t n) {
    if (n <= cap_ - len_) {  // the common case: it fits (after an error cap_ == len_)
      if (n != 0) memcpy(buf_ + len_, data, n);
      len_ += n;
      return;
    }
    write_slow(data, n);
  }
  void write(StrView s) { write(s.data(), s.size()); }

  /// Room for `n` bytes written straight into the buffer, or nullptr when they do not fit now
  /// (or after an error). Follow with commit(n). A fast path for short writes.
  char* reserve(size_t n) { return n <= cap_ - len_ ? buf_ + len_ : nullptr; }
  void commit(size_t n) { len_ += n; }

  /// Drains what is buffered (FlushingSink: to the port). Returns the sticky status: kOk, or
  /// the first error of any write or drain.
  Status flush();

  /// kOk, or the first error: kNoSpace (BufferSink full) or whatever the port callback returned.
  Status status() const { return status_; }
  /// Bytes in the buffer, not yet drained.
  size_t buffered() const { return len_; }
  /// Bytes accepted so far (including those already drained), since construction or reset().
  uint64_t total() const { return drained_ + len_; }
  /// Forgets buffered bytes, the count and any error (a hold stays).
  void reset() {
    len_ = 0;
    cap_ = held_ ? 0 : full_cap_;
    drained_ = 0;
    status_ = Status::kOk;
  }

  /// Holds an empty sink: the buffer is lent out (its bytes still wait for the port), so the
  /// next byte written first calls the drain function with nothing buffered, which must make
  /// the buffer free again (return kOk) or fail. FlushingSink: the callback gets n == 0.
  void hold() {
    EMCP_ASSERT(len_ == 0);
    held_ = true;
    cap_ = 0;
  }
  /// Ends a hold without the drain function (the lent bytes went out, or are dropped).
  void release() {
    if (!held_) return;
    held_ = false;
    if (status_ == Status::kOk) cap_ = full_cap_;
  }
  bool held() const { return held_; }

 protected:
  /// Empties buf_[0, len_) completely (return kOk) or fails (any other status).
  using DrainFn = Status (*)(Sink& self);
  /// `cap` must be at least 1.
  Sink(char* buf, size_t cap, DrainFn drain_fn, bool drain_on_flush)
      : buf_(buf), cap_(cap), full_cap_(cap), drain_fn_(drain_fn), drain_on_flush_(drain_on_flush) {
    EMCP_ASSERT(buf != nullptr && cap != 0);
  }

  char* buf_;
  size_t cap_;  // shrinks to len_ after an error (or 0 while held), so every later byte goes to
                // drain() first
  size_t full_cap_;
  size_t len_ = 0;
  bool held_ = false;

 private:
  bool drain();
  void write_slow(const void* data, size_t n);

  uint64_t drained_ = 0;
  DrainFn drain_fn_;
  bool drain_on_flush_;
  Status status_ = Status::kOk;
};

/// Writes into a caller's buffer; kNoSpace when the output does not fit.
class BufferSink : public Sink {
 public:
  BufferSink(char* buf, size_t cap) : Sink(buf, cap, &full, false) {}
  /// What has been written (all of it when status() is kOk).
  StrView view() const { return StrView(buf_, len_); }

 private:
  static Status full(Sink&) { return Status::kNoSpace; }
};

/// Counts bytes without keeping them.
class CountingSink : public Sink {
 public:
  CountingSink() : Sink(scratch_, sizeof scratch_, &discard, false) {}

 private:
  static Status discard(Sink&) { return Status::kOk; }
  char scratch_[32];
};

/// Hands full buffers to a port callback.
class FlushingSink : public Sink {
 public:
  /// Called with each full buffer (and the rest on flush()), and with n == 0 when the sink was
  /// held (hold()) and is written again. Must take all `n` bytes and return kOk, or return an
  /// error (kIoError, kClosed, kWouldBlock...), which becomes the
  /// sink's sticky status: the bytes of that buffer and everything written after are dropped,
  /// so a port that cannot take bytes now must render the message again later (output is
  /// deterministic; emcp/json/sink.h's total() tells how many bytes were accepted before).
  /// `ctx` is the pointer given to the constructor.
  using FlushFn = Status (*)(void* ctx, const char* data, size_t n);

  /// `buf` (not owned, at least 1 byte) must outlive the sink.
  FlushingSink(char* buf, size_t cap, FlushFn fn, void* ctx)
      : Sink(buf, cap, &hand_over, true), fn_(fn), ctx_(ctx) {}

 private:
  static Status hand_over(Sink& self);
  FlushFn fn_;
  void* ctx_;
};

}  // namespace json
EMCP_NS_END

#endif  // EMCP_JSON_SINK_H
