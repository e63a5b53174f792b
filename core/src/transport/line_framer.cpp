#include "emcp/transport/line_framer.h"

#include <string.h>

EMCP_NS_BEGIN
namespace transport {

namespace {
bool has_content(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (p[i] != ' ' && p[i] != '\t' && p[i] != '\r') return true;
  return false;
}
}  // namespace

LineFramer::Event LineFramer::end_line() {
  began_ = false;
  line_len_ = 0;
  if (!content_) return Event::kNeedInput;  // blank line: nothing to answer
  content_ = false;
  decoded_ = &decoder_.finish();
  ++messages_;
  return Event::kMessage;
}

LineFramer::Event LineFramer::push(const void* data, size_t n, size_t* used) {
  const uint8_t* const start = static_cast<const uint8_t*>(data);
  const uint8_t* p = start;
  const uint8_t* const end = start + n;
  while (p != end) {
    const uint8_t* nl = static_cast<const uint8_t*>(memchr(p, '\n', static_cast<size_t>(end - p)));
    const uint8_t* stop = nl != nullptr ? nl : end;
    if (skipping_) {
      p = stop;
      if (nl == nullptr) break;
      ++p;  // the newline ends the skipped line
      skipping_ = false;
      damaged_ = false;
      began_ = false;
      line_len_ = 0;
      content_ = false;
      continue;
    }
    if (!began_) {
      decoder_.begin();
      began_ = true;
    }
    size_t len = static_cast<size_t>(stop - p);
    const bool over = len > max_line_ - line_len_;
    if (over) len = max_line_ - line_len_;  // feed up to the limit: the id may be in there
    if (!content_) content_ = has_content(p, len);
    if (!decoder_.failed()) decoder_.feed(p, len);
    line_len_ += len;
    p += len;
    if (over) {
      too_long_id_ = decoder_.known_id();
      ++too_long_count_;
      skipping_ = true;
      began_ = false;
      *used = static_cast<size_t>(p - start);
      if (!decoder_.lost_response(jsonrpc::Decoder::Lost::kLineLimit))
        return Event::kTooLong;
      decoded_ = &decoder_.decoded();
      ++messages_;
      return Event::kMessage;
    }
    if (nl == nullptr) break;
    ++p;  // the newline
    const Event e = end_line();
    if (e == Event::kMessage) {
      *used = static_cast<size_t>(p - start);
      return e;
    }
  }
  *used = static_cast<size_t>(p - start);
  return Event::kNeedInput;
}

LineFramer::Event LineFramer::lose() {
  if (damaged_) return Event::kNeedInput;  // the line an earlier gap damaged: the same gap
  // What the line held before the gap: its id, or a response whose id was read (a line
  // already skipped for its length was answered then: this one's answer has no id).
  const bool partial = began_ && !skipping_;
  too_long_id_ = partial ? decoder_.known_id() : jsonrpc::Id::null();
  damaged_ = true;
  skipping_ = true;
  began_ = false;
  if (partial && decoder_.lost_response(jsonrpc::Decoder::Lost::kInput)) {
    decoded_ = &decoder_.decoded();
    ++messages_;
    return Event::kMessage;
  }
  return Event::kTooLong;
}

LineFramer::Event LineFramer::finish() {
  // Whatever happens, the framer is ready for a new stream afterwards.
  const bool pending = began_ && !skipping_;
  skipping_ = false;
  damaged_ = false;
  if (pending) return end_line();  // resets the rest of the line state
  began_ = false;
  line_len_ = 0;
  content_ = false;
  return Event::kNeedInput;
}

}  // namespace transport
EMCP_NS_END
