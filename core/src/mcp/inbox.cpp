// The inbox (emcp/mcp/inbox.h): a bounded multi-producer, single-consumer queue of work for the
// server's loop. Each slot carries a sequence number: equal to a position, the slot is free for
// the post that claims that position; one more, the post is published and the owner may run
// it; after running it, the owner sets it to the position one lap later (free again). A
// producer claims a position by advancing head_ with a compare-and-swap (or, without atomic
// read-modify-write, inside the platform's critical section), copies its bytes, and publishes
// with a release store; the owner reads the sequence with an acquire load before the bytes.
#include "emcp/mcp/inbox.h"

#include <string.h>

#include <new>

#include "emcp/mcp/server.h"
#include "server_internal.h"
#include "emcp/util/assert.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

// Without atomic read-modify-write the whole post runs inside the platform's critical section.
struct Critical {
  explicit Critical(const Platform* p) : platform(EMCP_ATOMIC_RMW ? nullptr : p) {
    // Without atomics, a post from another context counts only under the critical section.
    if (platform != nullptr) state = platform->critical_enter();
  }
  ~Critical() {
    if (platform != nullptr) platform->critical_exit(state);
  }
  Critical(const Critical&) = delete;
  Critical& operator=(const Critical&) = delete;
  const Platform* platform;
  uint32_t state = 0;
};

// An increment that is atomic with respect to every poster: a fetch_add where the CPU has one,
// else a load and a store, which the caller's critical section makes atomic.
void bump(Atomic32& counter) {
#if EMCP_ATOMIC_RMW
  counter.add(1);
#else
  counter.store(counter.load(Atomic32::kRelaxed) + 1, Atomic32::kRelaxed);
#endif
}

}  // namespace

Inbox::Inbox(unsigned char* storage, uint16_t count, uint16_t payload, size_t stride)
    : storage_(storage), count_(count), payload_(payload), stride_(stride) {
  for (uint32_t i = 0; i < count_; ++i) {
    Slot* s = new (storage_ + i * stride_) Slot;
    s->seq.store(i, Atomic32::kRelaxed);
    s->work = nullptr;
    s->ctx = nullptr;
    s->len = 0;
  }
}

void Server::set_inbox(Inbox& inbox) {
  // A CPU without atomic read-modify-write posts inside the platform's critical section.
  EMCP_ASSERT(EMCP_ATOMIC_RMW || (platform_.critical_enter != nullptr && platform_.critical_exit != nullptr));
  if (inbox_ != nullptr && inbox_ != &inbox) inbox_->server_ = nullptr;
  inbox_ = &inbox;
  inbox.server_ = this;
  FeatureOps::install(*this, FeatureOps::kInboxSlot, FeatureOps::kInbox);
}

// Server::poll() runs what other threads, tasks and interrupts posted.
const FeatureOps FeatureOps::kInbox = {
    nullptr,
    [](Server& sv, FeatureEvent e, Session*, const jsonrpc::Message*) {
      if (e == FeatureEvent::kPoll) (void)sv.inbox_->drain();
    },
};

Status Inbox::refuse(Status why) {
  Critical section(server_ != nullptr ? &server_->platform() : nullptr);  // nestable
  bump(refused_);
  return why;
}

Inbox::Slot* Inbox::claim(uint32_t* pos) {
  uint32_t p = head_.load(Atomic32::kRelaxed);
  for (;;) {
    Slot& s = slot(p);
    const uint32_t seq = s.seq.load(Atomic32::kAcquire);
    const int32_t diff = static_cast<int32_t>(seq - p);
    if (diff == 0) {
#if EMCP_ATOMIC_RMW
      // Another poster (or an interrupt) may claim p first: then p is reloaded and tried again.
      if (head_.compare_exchange(&p, p + 1)) break;
#else
      head_.store(p + 1, Atomic32::kRelaxed);
      break;
#endif
    } else if (diff < 0) {
      return nullptr;  // the slot a lap back is not run yet: full
    } else {
      p = head_.load(Atomic32::kRelaxed);  // claimed by another poster meanwhile
    }
  }
  *pos = p;
  // The high-water mark: slots between the owner's position and this one, this one included.
  const uint32_t used = p + 1 - tail_.load(Atomic32::kRelaxed);
  uint32_t mark = high_water_.load(Atomic32::kRelaxed);
  while (used > mark && used <= count_) {
#if EMCP_ATOMIC_RMW
    if (high_water_.compare_exchange(&mark, used)) break;
#else
    high_water_.store(used, Atomic32::kRelaxed);
    break;
#endif
  }
  return &slot(p);
}

Status Inbox::put(Work work, void* ctx, const Piece* pieces, size_t k) {
  size_t n = 0;
  for (size_t i = 0; i < k; ++i) n += pieces[i].n;
  if (server_ == nullptr) return refuse(Status::kInvalidState);
  if (n > payload_) return refuse(Status::kInvalidArgument);
  const Platform& platform = server_->platform();
  {
    Critical section(&platform);
    uint32_t pos = 0;
    Slot* s = claim(&pos);
    if (s == nullptr) return refuse(Status::kNoSpace);
    unsigned char* out = bytes_of(*s);
    for (size_t i = 0; i < k; ++i) {
      if (pieces[i].n != 0) memcpy(out, pieces[i].data, pieces[i].n);
      out += pieces[i].n;
    }
    s->work = work;
    s->ctx = ctx;
    s->len = static_cast<uint32_t>(n);
    bump(posted_);
    s->seq.store(pos + 1, Atomic32::kRelease);  // published: the owner may run it
  }
  if (platform.wake != nullptr) platform.wake();
  return Status::kOk;
}

Status Inbox::post(Work work, void* ctx, const void* bytes, size_t n) {
  if (work == nullptr) return refuse(Status::kInvalidArgument);
  const Piece pieces[] = {{bytes, bytes != nullptr ? n : 0}};
  return put(work, ctx, pieces, 1);
}

Status Inbox::resource_updated(StrView uri) {
  const Piece pieces[] = {{uri.data(), uri.size()}};
  return put([](Server& sv, void*, const void* b, size_t n) {
    sv.resource_updated(StrView(static_cast<const char*>(b), n));
    return Status::kOk;
  }, pieces);
}

Status Inbox::list_changed(ListKind kind) {
  if (static_cast<uint8_t>(kind) > static_cast<uint8_t>(ListKind::kPrompts)) return refuse(Status::kInvalidArgument);
  const uint8_t k = static_cast<uint8_t>(kind);
  const Piece pieces[] = {{&k, 1}};
  return put([](Server& sv, void*, const void* b, size_t) {
    ServerCode::list_changed(sv, static_cast<ListKind>(*static_cast<const uint8_t*>(b)));
    return Status::kOk;
  }, pieces);
}

namespace {
struct LogHead {
  uint16_t message_len;
  uint8_t level;
};
struct ProgressHead {
  Pending p;
  double done, total;
};
struct CompleteHead {
  Pending p;
  Inbox::FinishFn fn;
  void* ctx;
};
struct TextHead {
  Pending p;
  bool is_error;
};
}  // namespace

Status Inbox::log(LogLevel level, StrView message, StrView logger) {
  if (message.size() > 0xFFFF) return refuse(Status::kInvalidArgument);
  const LogHead h{static_cast<uint16_t>(message.size()), static_cast<uint8_t>(level)};
  const Piece pieces[] = {{&h, sizeof h}, {message.data(), message.size()}, {logger.data(), logger.size()}};
  return put([](Server& sv, void*, const void* b, size_t n) {
    LogHead head;
    memcpy(&head, b, sizeof head);
    const char* text = static_cast<const char*>(b) + sizeof head;
    sv.log(static_cast<LogLevel>(head.level), StrView(text, head.message_len),
           StrView(text + head.message_len, n - sizeof head - head.message_len));
    return Status::kOk;
  }, pieces);
}

Status Inbox::progress(Pending p, double done, double total, StrView message) {
  const ProgressHead h{p, done, total};
  const Piece pieces[] = {{&h, sizeof h}, {message.data(), message.size()}};
  return put([](Server& sv, void*, const void* b, size_t n) {
    ProgressHead head;
    memcpy(&head, b, sizeof head);
    // A progress report the channel cannot take is dropped and counted (Server::progress()):
    // a later one supersedes it.
    (void)sv.progress(head.p, head.done, head.total,
                      StrView(static_cast<const char*>(b) + sizeof head, n - sizeof head));
    return Status::kOk;
  }, pieces);
}

Status Inbox::complete(Pending p, FinishFn fn, void* ctx) {
  if (fn == nullptr) return refuse(Status::kInvalidArgument);
  const CompleteHead h{p, fn, ctx};
  const Piece pieces[] = {{&h, sizeof h}};
  return put([](Server& sv, void*, const void* b, size_t) {
    CompleteHead head;
    memcpy(&head, b, sizeof head);
    // kWouldBlock: the session's channel is busy writing another message; again next poll().
    // kNotFound (a stale handle) and kClosed (cancelled): nothing to send, the entry ends.
    return sv.complete(head.p, head.fn, head.ctx) == Status::kWouldBlock ? Status::kWouldBlock : Status::kOk;
  }, pieces);
}

Status Inbox::complete_text(Pending p, StrView text, bool is_error) {
  const TextHead h{p, is_error};
  const Piece pieces[] = {{&h, sizeof h}, {text.data(), text.size()}};
  return put([](Server& sv, void*, const void* b, size_t n) {
    TextHead head;
    memcpy(&head, b, sizeof head);
    struct Answer {
      StrView text;
      bool is_error;
    } answer{StrView(static_cast<const char*>(b) + sizeof head, n - sizeof head), head.is_error};
    const Status st = sv.complete(head.p, [](ToolCall& call, void* ctx) {
      const Answer& a = *static_cast<const Answer*>(ctx);
      if (a.is_error) {
        call.fail(a.text);
      } else {
        call.text(a.text);
      }
    }, &answer);
    return st == Status::kWouldBlock ? Status::kWouldBlock : Status::kOk;
  }, pieces);
}

size_t Inbox::drain() {
  if (draining_ || server_ == nullptr) return 0;
  draining_ = true;
  size_t ran = 0;
  uint32_t pos = tail_.load(Atomic32::kRelaxed);
  for (;;) {
    Slot& s = slot(pos);
    if (s.seq.load(Atomic32::kAcquire) != pos + 1) break;  // not published (yet)
    if (s.work(*server_, s.ctx, bytes_of(s), s.len) == Status::kWouldBlock) {
      bump(retried_);
      break;  // stays first: the next poll() runs it again
    }
    ++ran;
    bump(run_);
    ++pos;
    tail_.store(pos, Atomic32::kRelaxed);
    s.seq.store(pos - 1 + count_, Atomic32::kRelease);  // free for the post a lap later
  }
  draining_ = false;
  return ran;
}

InboxStats Inbox::stats() const {
  InboxStats st;
  st.posted = posted_.load(Atomic32::kRelaxed);
  st.refused = refused_.load(Atomic32::kRelaxed);
  st.run = run_.load(Atomic32::kRelaxed);
  st.retried = retried_.load(Atomic32::kRelaxed);
  const uint32_t used = head_.load(Atomic32::kRelaxed) - tail_.load(Atomic32::kRelaxed);
  st.in_use = static_cast<uint16_t>(used <= count_ ? used : count_);
  st.high_water = static_cast<uint16_t>(high_water_.load(Atomic32::kRelaxed));
  st.slots = count_;
  st.payload = payload_;
  return st;
}

}  // namespace mcp
EMCP_NS_END
