// emcp/http/websocket.h - RFC 6455 WebSocket framing, byte in / byte out.
//
// The parser takes the bytes of a client's frames in any split (a TCP segment, an lwIP pbuf),
// checks them (masking, reserved bits, opcodes, control frame rules, fragmentation order,
// message size) and hands out the unmasked payload of text messages in pieces, to go straight
// into the JSON reader; a message is never buffered whole. Control frames (ping, pong, close)
// are kept whole (at most 125 bytes, as RFC 6455 has it). Each violation names the close code
// to answer with:
//
//   1002  protocol error: unmasked client frame, reserved bits, unknown opcode, fragmented or
//         over-long control frame, continuation without a message, message inside a message,
//         bad close payload
//   1003  binary message (MCP messages are text)
//   1007  text message that is not valid UTF-8 (checked across fragments)
//   1009  message longer than the configured maximum
//
// Output: write_frame_header() writes the header of a server frame (servers never mask);
// accept_key() computes Sec-WebSocket-Accept for the upgrade answer.
//
// Context: the loop that owns the connection. No heap, no recursion; about 400 bytes of state.
//
// Example:
//   emcp::ws::FrameParser p(65536);
//   for (;;) {
//     size_t used; auto e = p.push(data, n, &used); data += used; n -= used;
//     if (e == Event::kMessageBegin) decoder.begin();
//     else if (e == Event::kData) decoder.feed(p.data().data(), p.data().size());
//     else if (e == Event::kMessageEnd) answer(decoder.finish());
//     else if (e == Event::kPing) send_pong(p.control_payload());
//     else if (e == Event::kClose || e == Event::kError) close_with(p.close_code()...);
//     else break;  // kNeedInput, kPong
//   }
#ifndef EMCP_HTTP_WEBSOCKET_H
#define EMCP_HTTP_WEBSOCKET_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace ws {

enum class Opcode : uint8_t {
  kContinuation = 0x0,
  kText = 0x1,
  kBinary = 0x2,
  kClose = 0x8,
  kPing = 0x9,
  kPong = 0xA,
};

/// Close status codes (RFC 6455 section 7.4.1).
enum CloseCode : uint16_t {
  kCloseNormal = 1000,
  kCloseGoingAway = 1001,
  kCloseProtocolError = 1002,
  kCloseUnsupportedData = 1003,
  kCloseNoStatus = 1005,  ///< received only: a close frame without a code
  kCloseInvalidPayload = 1007,
  kClosePolicy = 1008,
  kCloseTooBig = 1009,
  kCloseInternalError = 1011,
};

class FrameParser {
 public:
  enum class Event : uint8_t {
    kNeedInput,     ///< every byte given is used
    kMessageBegin,  ///< a text message starts
    kData,          ///< data() holds the next unmasked piece of the text message
    kMessageEnd,    ///< the text message is complete
    kPing,          ///< control_payload(): answer with a pong carrying it
    kPong,          ///< an answer to a ping (or unsolicited): nothing to do
    kClose,         ///< the peer closes: close_code(); answer with a close frame and end
    kError,         ///< a violation: close with error_code()
  };

  /// `max_message`: longest text message in bytes (1009 beyond).
  explicit FrameParser(uint64_t max_message);
  void reset();

  /// Consumes bytes up to the next event; `*used` tells how many.
  Event push(const void* data, size_t n, size_t* used);

  /// After kData: the unmasked piece (valid until the next push()).
  StrView data() const { return StrView(reinterpret_cast<const char*>(scratch_), scratch_len_); }
  /// After kPing / kPong / kClose: the control frame's payload (for kClose, after the code).
  StrView control_payload() const;
  /// After kClose: the peer's code (kCloseNoStatus when it sent none).
  uint16_t close_code() const { return close_code_; }
  /// After kError: the code to close with, and why (a short static text).
  uint16_t error_code() const { return error_code_; }
  const char* error_reason() const { return reason_; }
  /// True between kMessageBegin and kMessageEnd.
  bool in_message() const { return in_message_; }

 private:
  enum State : uint8_t { kHead0, kHead1, kLength, kMask, kPayload, kFailed };
  Event fail(uint16_t code, const char* reason);
  bool utf8_ok(const uint8_t* p, size_t n);
  Event frame_ready();
  Event end_frame();

  uint64_t max_message_;
  uint64_t message_len_ = 0;
  uint64_t remaining_ = 0;
  State state_ = kHead0;
  uint8_t opcode_ = 0;
  bool fin_ = false;
  bool in_message_ = false;
  bool announce_ = false;  // kMessageBegin owed before the first data of a message
  bool pending_end_ = false;  // kMessageEnd owed (reported on the next push)
  uint8_t length_bytes_ = 0;   // extended length bytes still to read
  uint8_t mask_bytes_ = 0;     // mask bytes read
  uint8_t mask_[4] = {};
  uint8_t mask_pos_ = 0;       // position in the mask of the next payload byte
  uint16_t close_code_ = kCloseNoStatus;
  uint16_t error_code_ = 0;
  const char* reason_ = "";
  uint8_t control_len_ = 0;
  uint8_t control_[125];
  uint8_t utf8_need_ = 0;      // continuation bytes still due in the text
  uint8_t utf8_lo_ = 0x80;     // range of the next continuation byte
  uint8_t utf8_hi_ = 0xBF;
  uint16_t scratch_len_ = 0;
  uint8_t scratch_[256];
};

/// Writes the header of an unmasked server frame carrying `payload_len` bytes into `out` (room
/// for 10 bytes) and returns its length (2, 4 or 10).
size_t write_frame_header(uint8_t* out, Opcode op, bool fin, uint64_t payload_len);

/// SHA-1 as the port provides it (ports/mbedtls).
using Sha1Fn = void (*)(const void* data, size_t n, uint8_t out[20]);

/// Sec-WebSocket-Accept for the client's Sec-WebSocket-Key: base64(SHA-1(key + RFC 6455 GUID)),
/// 28 characters and a NUL into `out`.
void accept_key(StrView client_key, Sha1Fn sha1, char out[29]);

}  // namespace ws
EMCP_NS_END

#endif  // EMCP_HTTP_WEBSOCKET_H
