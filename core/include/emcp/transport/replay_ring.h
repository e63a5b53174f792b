// emcp/transport/replay_ring.h - the replay buffer of one HTTP session: the SSE events it sent,
// kept so that a client whose stream broke can come back with Last-Event-ID and get what it
// missed (emcp/transport/http_server.h; each HttpSession owns one).
//
// The events live in storage the application declares (StaticHttpServer<>'s ReplaySize), as
// records [u32 length][u32 stream][u32 flags][u32 seq][event text], oldest first. When a new
// event does not fit, the oldest records are dropped; an event larger than the whole buffer is
// not kept. Nothing is allocated.
//
// Context: the loop that owns the HttpServer, like the engine itself.
//
// Example (the engine's use: a detached stream's event, then the resuming GET):
//   ring.begin(stream_id, seq);  ring.append(text, n);  ring.end();
//   ReplayRing::Event e;
//   for (uint32_t after = last_seen; ring.next(stream_id, after, &e); after = e.seq) send(e.text);
#ifndef EMCP_TRANSPORT_REPLAY_RING_H
#define EMCP_TRANSPORT_REPLAY_RING_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace transport {

class ReplayRing {
 public:
  /// One kept event, as next() finds it. `text` points into the buffer: valid until the next
  /// call that writes to the ring.
  struct Event {
    StrView text;     // the whole event, as it went out ("id: ...\n...\n\n")
    uint32_t seq;     // its number in its stream
    bool last;        // the last event of its stream
  };

  /// `storage` (may be nullptr/0: nothing is kept) is the caller's, for the ring's lifetime.
  ReplayRing(char* storage, size_t cap) : buf_(storage), cap_(storage == nullptr ? 0 : cap) {}
  ReplayRing(const ReplayRing&) = delete;
  ReplayRing& operator=(const ReplayRing&) = delete;

  /// True when the ring has storage (the session's streams are resumable).
  bool enabled() const { return cap_ != 0; }
  /// Forgets every record.
  void clear() {
    len_ = 0;
    rec_open_ = false;
  }
  /// Starts the record of event `seq` of `stream`; append() adds its text, end() closes it.
  void begin(uint32_t stream, uint32_t seq);
  /// Adds to the open record (nothing when none is open, or it did not fit).
  void append(const char* data, size_t n);
  /// Closes the open record.
  void end() {
    rec_open_ = false;
    rec_dead_ = false;
  }
  /// Marks the last kept record of `stream` as its stream's last event.
  void mark_final(uint32_t stream);
  /// The oldest complete record of `stream` whose number is above `after`; false when none.
  bool next(uint32_t stream, uint32_t after, Event* event) const;

 private:
  static constexpr size_t kRecordHeader = 16;  // u32 length, u32 stream, u32 flags, u32 seq
  static constexpr uint32_t kFinal = 1;        // record flag: the stream's last event

  bool make_room(size_t need);

  char* buf_;
  size_t cap_;
  size_t len_ = 0;
  size_t rec_ = 0;            // offset of the record being written
  bool rec_open_ = false;
  bool rec_dead_ = false;     // the record being written did not fit
};

}  // namespace transport
EMCP_NS_END

#endif  // EMCP_TRANSPORT_REPLAY_RING_H
