// emcp/transport/line_framer.h - newline-delimited JSON-RPC framing for stdio and UART.
//
// One message per line (MCP stdio transport). Bytes are streamed into a jsonrpc::Decoder as
// they arrive - a line is never buffered - and the framer stops at each newline to hand over
// what the line held. Blank lines (only spaces, tabs, CR) are skipped. A line longer than the
// limit is reported at once (answer it with -32600) and skipped up to its newline; the next
// line is decoded normally. A too-long line that is a response whose id came before the limit
// is handed over instead (kMessage) as an error response to that id, once the server has sent a
// request (Decoder::lost_response): the request it answers ends at once, and the client is not
// answered. Once the decoder knows a line is invalid JSON it is not fed the
// rest of the line.
//
// Bytes lost on the way in (a UART's receive buffer overflowed) are reported with lose() where
// they went missing: the line they belonged to is damaged. lose() returns the event to answer
// it with at once (kTooLong: an error, with the id read before the gap if any, too_long_id();
// kMessage for a client's response, as for one too long), and the rest of the line is skipped
// up to its newline, never parsed as something it was not.
//
// Context: the loop that owns the decoder. Works for any split of the input: a UART that
// delivers a byte at a time and a pipe that delivers many lines at once.
//
// Example:
//   size_t used = 0;
//   for (;;) {
//     auto ev = framer.push(p, n, &used);  p += used;  n -= used;
//     if (ev == LineFramer::Event::kNeedInput) break;             // read more bytes
//     if (ev == LineFramer::Event::kMessage) answer(framer.decoded());
//     if (ev == LineFramer::Event::kTooLong) answer_too_long(framer.too_long_id());
//   }
#ifndef EMCP_TRANSPORT_LINE_FRAMER_H
#define EMCP_TRANSPORT_LINE_FRAMER_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/jsonrpc/decoder.h"

EMCP_NS_BEGIN
namespace transport {

class LineFramer {
 public:
  enum class Event : uint8_t {
    kNeedInput,  ///< all given bytes are used; push more (or finish() at end of stream)
    kMessage,    ///< a line ended: decoded() holds its messages
    kTooLong,    ///< the current line passed the limit; the rest of it will be skipped
  };

  /// Feeds lines into `decoder` (not owned). `max_line` bytes per line, newline excluded.
  explicit LineFramer(jsonrpc::Decoder& decoder, size_t max_line = EMCP_MAX_MESSAGE_LEN)
      : decoder_(decoder), max_line_(max_line) {}

  /// Consumes bytes from `data` up to the next event; `*used` tells how many (the caller
  /// passes the rest in the next call). `data` is not retained.
  Event push(const void* data, size_t n, size_t* used);
  /// End of stream: a last line without newline is decoded (kMessage), else kNeedInput.
  Event finish();
  /// Bytes were lost between what was pushed so far and what is pushed next: the line they
  /// belong to (the current one, or the next when the gap came between lines) is skipped up to
  /// its newline. Returns what to answer: kTooLong (too_long_id() says the request's id when
  /// it was read before the gap, else null), kMessage (decoded(): the error response that
  /// ends the server's request a damaged response answered), or kNeedInput for a gap in a line
  /// a gap already damaged (the same gap, answered once).
  Event lose();

  /// After kMessage: what the line held; valid until the next push() or finish().
  const jsonrpc::Decoded& decoded() const { return *decoded_; }
  /// After kTooLong: the id of the request when it was read before the limit (or the gap),
  /// else null.
  jsonrpc::Id too_long_id() const { return too_long_id_; }
  size_t max_line() const { return max_line_; }
  /// Lines handed over (kMessage) and lines over the limit (a too-long response counts in
  /// both), since construction.
  uint64_t messages() const { return messages_; }
  uint64_t too_long() const { return too_long_count_; }

 private:
  Event end_line();

  jsonrpc::Decoder& decoder_;
  size_t max_line_;
  size_t line_len_ = 0;
  bool began_ = false;    // decoder_.begin() was called for the current line
  bool content_ = false;  // the current line has a byte other than space, tab, CR
  bool skipping_ = false; // discarding the rest of an over-long or damaged line
  bool damaged_ = false;  // ... damaged by lost bytes (answered already)
  const jsonrpc::Decoded* decoded_ = nullptr;
  jsonrpc::Id too_long_id_;
  uint64_t messages_ = 0;
  uint64_t too_long_count_ = 0;
};

}  // namespace transport
EMCP_NS_END

#endif  // EMCP_TRANSPORT_LINE_FRAMER_H
