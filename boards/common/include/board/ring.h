// board/ring.h - a single-producer / single-consumer byte ring for an interrupt (producer) and
// the main loop (consumer). No locks: each index has one writer; N is a power of two.
#ifndef EMCP_BOARD_RING_H
#define EMCP_BOARD_RING_H

#include <stddef.h>
#include <stdint.h>

namespace board {

template <size_t N>
class Ring {
  static_assert(N >= 2 && (N & (N - 1)) == 0, "N must be a power of two");

 public:
  /// Interrupt side: false when full (the byte is lost).
  bool push(uint8_t b) {
    const uint32_t head = head_;
    if (head - tail_ == N) return false;
    buf_[head & (N - 1)] = b;
    __asm__ volatile("" ::: "memory");  // the byte is stored before the index moves
    head_ = head + 1;
    return true;
  }
  /// Main-loop side: up to `cap` bytes.
  size_t pop(uint8_t* out, size_t cap) {
    const uint32_t head = head_;
    uint32_t tail = tail_;
    size_t n = 0;
    while (tail != head && n < cap) out[n++] = buf_[tail++ & (N - 1)];
    __asm__ volatile("" ::: "memory");
    tail_ = tail;
    return n;
  }
  bool empty() const { return head_ == tail_; }
  bool full() const { return head_ - tail_ == N; }

 private:
  volatile uint32_t head_ = 0;
  volatile uint32_t tail_ = 0;
  uint8_t buf_[N];
};

}  // namespace board

#endif  // EMCP_BOARD_RING_H
