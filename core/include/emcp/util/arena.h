// emcp/util/arena.h - the per-message arena: a fixed-size bump allocator.
//
// The JSON-RPC decoder places what it keeps of one message here (ids, method, the params tree)
// and handlers may take scratch space; the owner rewinds it when the response is done. Nothing
// is freed individually. Capacity is fixed when the arena is made: Arena works on a span the
// caller hands in, StaticArena<N> carries its own storage.
//
// Out of space is an explicit Status::kNoSpace, never a crash; the high-water mark records the
// largest use since construction (or reset_high_water()) for the memory reports.
//
// Context: the loop that owns it (not thread safe, not for ISRs).
//
// Example:
//   emcp::StaticArena<2048> arena;
//   auto mark = arena.mark();
//   void* p = nullptr;
//   if (arena.alloc(24, 8, &p) != emcp::Status::kOk) { /* answer "message too large" */ }
//   arena.rewind(mark);
#ifndef EMCP_UTIL_ARENA_H
#define EMCP_UTIL_ARENA_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN

class Arena {
 public:
  /// A position to rewind to; valid until the arena is rewound to an earlier mark.
  struct Mark {
    size_t used;
  };

  /// Manages `storage` (not owned; must outlive the arena). Any alignment is accepted: the
  /// arena aligns each allocation itself.
  explicit Arena(Span<uint8_t> storage) : base_(storage.data()), cap_(storage.size()) {}
  Arena(const Arena&) = delete;
  Arena& operator=(const Arena&) = delete;

  /// Reserves `size` bytes aligned to `align` (a power of two, at most 16). On success `*out`
  /// points to them (uninitialised) and stays valid until a rewind below this allocation.
  /// Returns kNoSpace (and leaves the arena unchanged, *out = nullptr) when they do not fit,
  /// kInvalidArgument for a bad alignment.
  Status alloc(size_t size, size_t align, void** out) {
    *out = nullptr;
    if (align == 0 || align > 16 || (align & (align - 1)) != 0) return Status::kInvalidArgument;
    const uintptr_t addr = reinterpret_cast<uintptr_t>(base_) + used_;
    const size_t pad = static_cast<size_t>((align - (addr & (align - 1))) & (align - 1));
    if (pad > cap_ - used_ || size > cap_ - used_ - pad) return Status::kNoSpace;
    *out = base_ + used_ + pad;
    used_ += pad + size;
    if (used_ > high_water_) high_water_ = used_;
    return Status::kOk;
  }

  /// Copies `bytes` into the arena (alignment 1). Consecutive append() calls with nothing
  /// else in between produce one contiguous run, which is how strings grow chunk by chunk.
  /// Returns kNoSpace when they do not fit (nothing is copied then).
  Status append(const void* bytes, size_t size, char** out) {
    if (size > cap_ - used_) {
      *out = nullptr;
      return Status::kNoSpace;
    }
    *out = reinterpret_cast<char*>(base_ + used_);
    if (size != 0) memcpy(*out, bytes, size);
    used_ += size;
    if (used_ > high_water_) high_water_ = used_;
    return Status::kOk;
  }

  Mark mark() const { return Mark{used_}; }
  /// Forgets everything allocated after `m`. Rewinding forward is ignored.
  void rewind(Mark m) {
    if (m.used < used_) used_ = m.used;
  }
  void reset() { used_ = 0; }

  size_t capacity() const { return cap_; }
  size_t used() const { return used_; }
  size_t available() const { return cap_ - used_; }
  /// Largest `used()` seen, including the size of failed requests' successful predecessors.
  size_t high_water() const { return high_water_; }
  void reset_high_water() { high_water_ = used_; }
  /// True when `p` points into this arena's storage.
  bool contains(const void* p) const {
    auto* b = static_cast<const uint8_t*>(p);
    return b >= base_ && b < base_ + cap_;
  }

 private:
  uint8_t* base_;
  size_t cap_;
  size_t used_ = 0;
  size_t high_water_ = 0;
};

/// An arena with its own storage of N bytes (aligned for any scalar).
template <size_t N>
class StaticArena : public Arena {
  static_assert(N > 0, "StaticArena needs at least one byte");

 public:
  StaticArena() : Arena(Span<uint8_t>(storage_, N)) {}

 private:
  alignas(16) uint8_t storage_[N];
};

EMCP_NS_END

#endif  // EMCP_UTIL_ARENA_H
