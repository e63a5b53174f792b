// The replay buffer of an HTTP session (emcp/transport/replay_ring.h).
#include "emcp/transport/replay_ring.h"

#include <string.h>

EMCP_NS_BEGIN
namespace transport {

namespace {

void put_u32(char* p, uint32_t v) { memcpy(p, &v, 4); }
uint32_t get_u32(const char* p) {
  uint32_t v;
  memcpy(&v, p, 4);
  return v;
}

}  // namespace

bool ReplayRing::make_room(size_t need) {
  // Drops the oldest complete records until `need` more bytes fit after the data.
  while (cap_ - len_ < need) {
    const size_t oldest = rec_open_ && rec_ == 0 ? SIZE_MAX : 0;
    if (oldest == SIZE_MAX || len_ == 0) return false;
    const size_t len = get_u32(buf_);
    memmove(buf_, buf_ + len, len_ - len);
    len_ -= len;
    if (rec_open_) rec_ -= len;
  }
  return true;
}

void ReplayRing::begin(uint32_t stream, uint32_t seq) {
  rec_open_ = false;
  rec_dead_ = cap_ == 0;
  if (rec_dead_ || !make_room(kRecordHeader)) {
    rec_dead_ = true;
    return;
  }
  rec_ = len_;
  char* rec = buf_ + rec_;
  put_u32(rec, kRecordHeader);
  put_u32(rec + 4, stream);
  put_u32(rec + 8, 0);
  put_u32(rec + 12, seq);
  len_ += kRecordHeader;
  rec_open_ = true;
}

void ReplayRing::append(const char* data, size_t n) {
  if (!rec_open_ || rec_dead_) return;
  if (!make_room(n)) {
    // The event alone is larger than the buffer: it cannot be replayed.
    len_ = rec_;
    rec_open_ = false;
    rec_dead_ = true;
    return;
  }
  memcpy(buf_ + len_, data, n);
  len_ += n;
  put_u32(buf_ + rec_, static_cast<uint32_t>(len_ - rec_));
}

void ReplayRing::mark_final(uint32_t stream) {
  size_t last = SIZE_MAX;
  for (size_t off = 0; off + kRecordHeader <= len_; off += get_u32(buf_ + off))
    if (get_u32(buf_ + off + 4) == stream) last = off;
  if (last != SIZE_MAX) put_u32(buf_ + last + 8, kFinal);
}

bool ReplayRing::next(uint32_t stream, uint32_t after, Event* event) const {
  for (size_t off = 0; off + kRecordHeader <= len_; off += get_u32(buf_ + off)) {
    const char* rec = buf_ + off;
    // The record being written is not an event yet.
    if (get_u32(rec + 4) != stream || get_u32(rec + 12) <= after || (rec_open_ && off == rec_)) continue;
    event->text = StrView(rec + kRecordHeader, get_u32(rec) - kRecordHeader);
    event->seq = get_u32(rec + 12);
    event->last = (get_u32(rec + 8) & kFinal) != 0;
    return true;
  }
  return false;
}

}  // namespace transport
EMCP_NS_END
