// The posting pattern both inbox stress programs share: inbox_stress.cpp (Linux threads and a
// signal handler) and inbox_stress_rtos.cpp (FreeRTOS tasks and a timer interrupt), judged by
// tests/mcp/inbox_stress.test.mjs. A producer posts, each round, a log line carrying its next
// sequence number (logger "p<i>" or "isr", data "<seq>") and a resource change (stress://p<i>);
// every 50th round is a burst of 16 such pairs without pause, which fills the inbox. A sequence
// number counts only posts the inbox took: the client must see 0, 1, 2... with no gap and no
// repeat. Each producer's counters are written by that producer alone (any context) and read by
// the owner.
#ifndef EMCP_TESTS_THREADS_INBOX_STRESS_H
#define EMCP_TESTS_THREADS_INBOX_STRESS_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/mcp/inbox.h"
#include "emcp/util/atomic.h"

namespace stress {

constexpr int kProducers = 4;
inline const char* const kUris[kProducers] = {"stress://p0", "stress://p1", "stress://p2", "stress://p3"};
/// The producers' loggers, then the interrupt's (or the signal handler's).
inline const char* const kLoggers[kProducers + 1] = {"p0", "p1", "p2", "p3", "isr"};

struct Counts {
  emcp::Atomic32 logs;     // log lines the inbox took (the next sequence number)
  emcp::Atomic32 updates;  // resource changes it took
  emcp::Atomic32 refused;  // posts it refused (the poster saw kNoSpace)
};

/// `v` in decimal into `out` (at least 10 bytes); returns the length.
inline size_t format(uint32_t v, char* out) {
  char tmp[12];
  size_t n = 0;
  do {
    tmp[n++] = static_cast<char>('0' + v % 10);
    v /= 10;
  } while (v != 0);
  for (size_t i = 0; i < n; ++i) out[i] = tmp[n - 1 - i];
  return n;
}

/// One log line with the producer's next sequence number; refused: counted, the number is not
/// used (the next post carries it again).
inline void post_log(emcp::mcp::Inbox& inbox, Counts& c, const char* logger) {
  char text[12];
  const uint32_t seq = c.logs.load();
  const size_t n = format(seq, text);
  if (inbox.log(emcp::mcp::LogLevel::kInfo, emcp::StrView(text, n), logger) == emcp::Status::kOk) {
    c.logs.store(seq + 1);
  } else {
    c.refused.store(c.refused.load() + 1);
  }
}

inline void post_update(emcp::mcp::Inbox& inbox, Counts& c, const char* uri) {
  if (inbox.resource_updated(uri) == emcp::Status::kOk) {
    c.updates.store(c.updates.load() + 1);
  } else {
    c.refused.store(c.refused.load() + 1);
  }
}

/// One round of producer `who`: a pair of posts, or a burst of 16 every 50th round.
inline void round(emcp::mcp::Inbox& inbox, Counts& c, int who, uint32_t n) {
  const int pairs = n % 50 == 49 ? 16 : 1;
  for (int i = 0; i < pairs; ++i) {
    post_log(inbox, c, kLoggers[who]);
    post_update(inbox, c, kUris[who]);
  }
}

/// The final report's JSON, written without the heap (the FreeRTOS program has none): into a
/// fixed buffer, what does not fit cut off (the test then fails to parse it).
struct Out {
  char buf[1024];
  size_t n = 0;
  void put(const char* s) {
    while (*s != '\0' && n < sizeof buf) buf[n++] = *s++;
  }
  void num(uint32_t v) {
    char t[12];
    const size_t k = format(v, t);
    for (size_t i = 0; i < k && n < sizeof buf; ++i) buf[n++] = t[i];
  }
  void field(const char* name, uint32_t v, bool first = false) {
    put(first ? "\"" : ",\"");
    put(name);
    put("\":");
    num(v);
  }
};

/// The report both programs write (tests/mcp/inbox_stress.test.mjs reads it): what each producer
/// (and the interrupt) posted and had refused, the inbox's counters, the completions it refused
/// and the notifications the server could not send; the object is left open for more members.
inline void write_counts(Out& o, const Counts (&counts)[kProducers + 1], const emcp::mcp::InboxStats& st,
                         uint32_t completions_refused, uint32_t notifications_dropped) {
  o.n = 0;
  o.put("{");
  for (int i = 0; i <= kProducers; ++i) {
    o.put(i ? ",\"" : "\"");
    o.put(kLoggers[i]);
    o.put("\":{");
    o.field("logs", counts[i].logs.load(), true);
    o.field("updates", counts[i].updates.load());
    o.field("refused", counts[i].refused.load());
    o.put("}");
  }
  o.put(",\"inbox\":{");
  o.field("posted", st.posted, true);
  o.field("refused", st.refused);
  o.field("run", st.run);
  o.field("retried", st.retried);
  o.field("high_water", st.high_water);
  o.field("slots", st.slots);
  o.put("}");
  o.field("completions_refused", completions_refused);
  o.field("notifications_dropped", notifications_dropped);
}

}  // namespace stress

#endif  // EMCP_TESTS_THREADS_INBOX_STRESS_H
