// board/ring.h - a single-producer / single-consumer byte ring for an interrupt (producer) and
// the main loop (consumer), that keeps the place where bytes went missing. No locks: each index
// has one writer; N is a power of two.
//
// A loss (lose(), or a push() the ring had no room for) is kept at the point it happened: the
// ring takes no byte after it until the loop has popped every byte before it and taken the loss
// (take_loss()), so what the loop reads is always the bytes before a gap, then the gap, then
// what came after it, never a gap it cannot see.
#ifndef EMCP_BOARD_RING_H
#define EMCP_BOARD_RING_H

#include <stddef.h>
#include <stdint.h>

namespace emcp {
namespace board {

template <size_t N>
class Ring {
  static_assert(N >= 2 && (N & (N - 1)) == 0, "N must be a power of two");

 public:
  static constexpr size_t kCapacity = N;

  /// Interrupt side: true when a byte pushed now is kept (not full, no loss waiting).
  bool room() const { return !loss_ && head_ - tail_ != N; }
  /// Interrupt side: how many bytes pushed now are kept (0 while a loss waits).
  size_t space() const { return loss_ ? 0 : N - (head_ - tail_); }
  /// Interrupt side: keeps `b`, or (no room()) loses it: false.
  bool push(uint8_t b) {
    if (!room()) {
      lose();
      return false;
    }
    const uint32_t head = head_;
    buf_[head & (N - 1)] = b;
    __asm__ volatile("" ::: "memory");  // the byte is stored before the index moves
    head_ = head + 1;
    return true;
  }
  /// Interrupt side: bytes went missing here (after every byte pushed so far).
  void lose() { loss_ = true; }

  /// Main-loop side: up to `cap` bytes, never past a loss.
  size_t pop(uint8_t* out, size_t cap) {
    const uint32_t head = head_;
    uint32_t tail = tail_;
    size_t n = 0;
    while (tail != head && n < cap) out[n++] = buf_[tail++ & (N - 1)];
    __asm__ volatile("" ::: "memory");
    tail_ = tail;
    return n;
  }
  /// Main-loop side: true once for each loss, when every byte before it has been popped; the
  /// ring takes bytes again from then on.
  bool take_loss() {
    if (!loss_ || head_ != tail_) return false;  // no byte is pushed while a loss waits
    loss_ = false;
    return true;
  }
  /// A loss waits to be taken.
  bool loss_waiting() const { return loss_; }
  bool empty() const { return head_ == tail_; }
  bool full() const { return head_ - tail_ == N; }

 private:
  volatile uint32_t head_ = 0;
  volatile uint32_t tail_ = 0;
  volatile bool loss_ = false;        // set by the producer, cleared by the consumer once empty
  uint8_t buf_[N] = {};
};

}  // namespace board
}  // namespace emcp

#endif  // EMCP_BOARD_RING_H
