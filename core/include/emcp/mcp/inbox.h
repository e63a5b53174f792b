// emcp/mcp/inbox.h - work handed to the server's loop from other threads, tasks and interrupts.
//
// One loop owns the mcp::Server and its transports (emcp/mcp/server.h: every Server call runs
// there). Everything else - a sensor task, a worker that finished a deferred tools/call, a
// timer interrupt - reaches the server through its Inbox: a bounded queue in the application's
// static storage (a StaticInbox handed to Server::set_inbox()). A post copies what it carries
// into a free slot and wakes the owner (Platform::wake); Server::poll() runs the posted work
// there, in the order it was posted (per producer, and in the order the slots were claimed
// overall). A post never blocks and never allocates: a full inbox, a text longer than a slot's
// payload or an inbox not yet given to a server is the Status the caller gets (kNoSpace,
// kInvalidArgument, kInvalidState), counted in stats().refused - never a silent drop. A post
// that was accepted is run exactly once.
//
// What can be posted: a resource changed (resource_updated), a list changed (list_changed), a
// log line (log), progress of a deferred call (progress), a deferred call's completion with the
// bytes of its answer (complete_text) or with a function that writes it on the owner
// (complete), and any work of the application's own with a copy of its bytes (post()): a
// task's status, a sample to record. docs/concurrency.md says which call is safe from where.
//
// Synchronisation: lock-free where the CPU has atomic read-modify-write (Cortex-M3/M4/M7,
// RV32 with the A extension, x86-64, AArch64): a slot is claimed with a compare-and-swap and
// published with a release store (a bounded queue after D. Vyukov's), so a post from an
// interrupt never waits for the task it interrupted. Without (Cortex-M0/M0+, RV32 without A):
// the post runs inside the platform's critical section (Platform::critical_enter/exit, then
// required: the server's set_inbox() asserts it), a few dozen instructions with interrupts
// masked. Completed work that cannot go out yet (Server::complete() answering kWouldBlock: the
// session's channel is busy) stays at the head of the queue and is run again by the next
// poll(): later posts wait behind it, so order holds.
//
// Context: post from any thread, task or interrupt; drain (Server::poll()) from the owner only.
//
// Example (a FreeRTOS sensor task; the same on Linux from a pthread):
//   emcp::mcp::StaticInbox<8, 64> g_inbox;        // 8 slots of up to 64 bytes
//   g_server.set_inbox(g_inbox);                   // in the owner, before the tasks start
//   void sensor_task(void*) {
//     for (;;) {
//       vTaskDelayUntil(&last, pdMS_TO_TICKS(100));
//       if (sample_changed()) (void)g_inbox.resource_updated("sensor://temperature");
//     }
//   }
#ifndef EMCP_MCP_INBOX_H
#define EMCP_MCP_INBOX_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/mcp/handlers.h"
#include "emcp/mcp/types.h"
#include "emcp/opt.h"
#include "emcp/platform.h"
#include "emcp/util/atomic.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace mcp {

class Server;

/// What stats() reports (device_stats' "inbox" object in the examples).
struct InboxStats {
  uint32_t posted = 0;      ///< posts accepted
  uint32_t refused = 0;     ///< posts refused (full, too long, no server): each caller saw it
  uint32_t run = 0;         ///< posted work run by the owner (each accepted post, once)
  uint32_t retried = 0;     ///< times a completion found its channel busy and waited a poll()
  uint16_t in_use = 0;      ///< slots taken now
  uint16_t high_water = 0;  ///< the most slots ever taken at once
  uint16_t slots = 0;       ///< capacity
  uint16_t payload = 0;     ///< bytes a slot carries
};

/// The queue; its storage is a StaticInbox's.
class Inbox {
 public:
  /// Work the owner runs: `bytes` is the copy of what was posted (n bytes, 8-byte aligned).
  /// Return kWouldBlock to be run again by the next poll() (nothing behind it runs before);
  /// anything else ends the entry.
  using Work = Status (*)(Server& server, void* ctx, const void* bytes, size_t n);

  Inbox(const Inbox&) = delete;
  Inbox& operator=(const Inbox&) = delete;

  /// Runs `work(server, ctx, copy of bytes)` on the owner. kNoSpace when every slot is taken,
  /// kInvalidArgument when n > the slot's payload, kInvalidState before Server::set_inbox().
  Status post(Work work, void* ctx, const void* bytes = nullptr, size_t n = 0);

  /// Server::resource_updated(uri) on the owner (the URI is copied: at most payload bytes).
  Status resource_updated(StrView uri);
  /// The application changed a table in place: notifications/{tools,resources,prompts}/
  /// list_changed to the sessions that asked for them.
  Status list_changed(ListKind kind);
  /// Server::log(level, message, logger) on the owner (message and logger share the payload).
  Status log(LogLevel level, StrView message, StrView logger = StrView());
  /// Server::progress(p, done, total, message) on the owner.
  Status progress(Pending p, double done, double total = -1, StrView message = StrView());
  /// Server::complete(p, fn, ctx) on the owner: `fn` writes the answer there (it and what
  /// `ctx` points to must stay valid until it ran).
  using FinishFn = void (*)(ToolCall& call, void* ctx);
  Status complete(Pending p, FinishFn fn, void* ctx);
  /// Completes `p` with one text block (a copy of `text`), or a tool error (isError) when
  /// `is_error`.
  Status complete_text(Pending p, StrView text, bool is_error = false);

  /// The counters and marks (any context; each field is read on its own).
  InboxStats stats() const;
  /// Slots and payload bytes of each.
  size_t capacity() const { return count_; }
  size_t payload() const { return payload_; }

  /// Runs what was posted, in order, up to the first work that answers kWouldBlock; returns
  /// how many ran. Server::poll() calls it: the owner only.
  size_t drain();

 protected:
  struct Slot {
    Atomic32 seq;  // == position: free for that post; == position + 1: published
    Work work;
    void* ctx;
    uint32_t len;
  };
  // `storage` holds `count` (a power of two) slots of `stride` bytes: a Slot, then the payload.
  Inbox(unsigned char* storage, uint16_t count, uint16_t payload, size_t stride);

 private:
  friend class Server;
  // The storage is 8-byte aligned and the stride a multiple of 8 (StaticInbox): through void*.
  Slot& slot(uint32_t pos) { return *static_cast<Slot*>(static_cast<void*>(storage_ + (pos & (count_ - 1u)) * stride_)); }
  unsigned char* bytes_of(Slot& s) { return reinterpret_cast<unsigned char*>(&s) + kHeader; }
  // The one way in: copies `pieces` (k of them) into a claimed slot and publishes it.
  struct Piece {
    const void* data;
    size_t n;
  };
  Status put(Work work, void* ctx, const Piece* pieces, size_t k);
  template <size_t K>
  Status put(Work work, const Piece (&pieces)[K]) {
    return put(work, nullptr, pieces, K);
  }
  // Claims the slot for the next post (nullptr: full); `pos` is its position.
  Slot* claim(uint32_t* pos);
  Status refuse(Status why);
  static constexpr size_t kHeader = (sizeof(Slot) + 7u) & ~size_t{7};

  unsigned char* storage_;
  uint16_t count_;
  uint16_t payload_;
  size_t stride_;
  Server* server_ = nullptr;                 // set_inbox()
  Atomic32 head_;                            // the next position a post claims
  Atomic32 tail_;                            // the next position drain() runs (owner writes)
  Atomic32 posted_, refused_, run_, retried_, high_water_;
  bool draining_ = false;                    // drain() is running (work may post, not drain)

 public:
  /// The sizes of a slot (for StaticInbox).
  static constexpr size_t stride_for(size_t payload) { return kHeader + ((payload + 7u) & ~size_t{7}); }
};

/// `Slots` (a power of two, 2 to 1024) slots of `Payload` bytes each: on a 32-bit target a slot
/// takes Payload rounded up to 8 plus 16 bytes. Defaults: EMCP_INBOX_SLOTS, EMCP_INBOX_PAYLOAD.
template <size_t Slots = EMCP_INBOX_SLOTS, size_t Payload = EMCP_INBOX_PAYLOAD>
class StaticInbox : public Inbox {
  static_assert(Slots >= 2 && Slots <= 1024 && (Slots & (Slots - 1)) == 0, "2 to 1024 slots, a power of two");
  static_assert(Payload >= 16 && Payload <= 4096, "16 to 4096 bytes per slot");

 public:
  StaticInbox() : Inbox(storage_, static_cast<uint16_t>(Slots), static_cast<uint16_t>(Payload), stride_for(Payload)) {}

 private:
  alignas(8) unsigned char storage_[Slots * stride_for(Payload)];
};

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_INBOX_H
