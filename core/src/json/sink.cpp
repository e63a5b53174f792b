#include "emcp/json/sink.h"

EMCP_NS_BEGIN
namespace json {

bool Sink::drain() {
  if (status_ != Status::kOk) return false;
  Status s = drain_fn_(*this);
  if (s != Status::kOk) {
    status_ = s;
    cap_ = len_;  // the fast path of put() now always comes here, and drops the byte
    return false;
  }
  drained_ += len_;
  len_ = 0;
  if (held_) {
    held_ = false;
    cap_ = full_cap_;
  }
  return true;
}

void Sink::write_slow(const void* data, size_t n) {
  const char* p = static_cast<const char*>(data);
  while (n != 0) {
    if (len_ == cap_ && !drain()) return;
    size_t room = cap_ - len_;
    size_t k = n < room ? n : room;
    memcpy(buf_ + len_, p, k);
    len_ += k;
    p += k;
    n -= k;
  }
}

Status Sink::flush() {
  // Only a FlushingSink hands bytes on; a BufferSink keeps them and a CountingSink's count
  // already includes them.
  if (drain_on_flush_ && len_ != 0) (void)drain();
  return status_;
}

Status FlushingSink::hand_over(Sink& self) {
  auto& s = static_cast<FlushingSink&>(self);
  if (s.len_ == 0 && !s.held_) return Status::kOk;
  return s.fn_(s.ctx_, s.buf_, s.len_);
}

}  // namespace json
EMCP_NS_END
