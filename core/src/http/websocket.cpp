#include "emcp/http/websocket.h"

#include <string.h>

#include "emcp/json/sink.h"
#include "emcp/json/writer.h"

EMCP_NS_BEGIN
namespace ws {

namespace {
bool is_control(uint8_t op) { return (op & 0x8) != 0; }
}  // namespace

FrameParser::FrameParser(uint64_t max_message) : max_message_(max_message) { reset(); }

void FrameParser::reset() {
  message_len_ = 0;
  remaining_ = 0;
  state_ = kHead0;
  opcode_ = 0;
  fin_ = false;
  in_message_ = false;
  announce_ = false;
  pending_end_ = false;
  length_bytes_ = 0;
  mask_bytes_ = 0;
  mask_pos_ = 0;
  close_code_ = kCloseNoStatus;
  error_code_ = 0;
  reason_ = "";
  control_len_ = 0;
  scratch_len_ = 0;
  utf8_need_ = 0;
  utf8_lo_ = 0x80;
  utf8_hi_ = 0xBF;
}

// Incremental UTF-8 check (RFC 3629: no overlongs, no surrogates, nothing above U+10FFFF).
bool FrameParser::utf8_ok(const uint8_t* p, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    const uint8_t b = p[i];
    if (utf8_need_ != 0) {
      if (b < utf8_lo_ || b > utf8_hi_) return false;
      utf8_lo_ = 0x80;
      utf8_hi_ = 0xBF;
      --utf8_need_;
      continue;
    }
    if (b < 0x80) continue;
    if (b >= 0xC2 && b <= 0xDF) utf8_need_ = 1;
    else if (b >= 0xE0 && b <= 0xEF) {
      utf8_need_ = 2;
      if (b == 0xE0) utf8_lo_ = 0xA0;
      if (b == 0xED) utf8_hi_ = 0x9F;
    } else if (b >= 0xF0 && b <= 0xF4) {
      utf8_need_ = 3;
      if (b == 0xF0) utf8_lo_ = 0x90;
      if (b == 0xF4) utf8_hi_ = 0x8F;
    } else {
      return false;
    }
  }
  return true;
}

StrView FrameParser::control_payload() const {
  const char* p = reinterpret_cast<const char*>(control_);
  if (opcode_ == static_cast<uint8_t>(Opcode::kClose)) {
    return control_len_ >= 2 ? StrView(p + 2, control_len_ - 2u) : StrView();
  }
  return StrView(p, control_len_);
}

FrameParser::Event FrameParser::fail(uint16_t code, const char* reason) {
  error_code_ = code;
  reason_ = reason;
  state_ = kFailed;
  return Event::kError;
}


// The header is complete (length and mask known): checks what depends on the length.
FrameParser::Event FrameParser::frame_ready() {
  if (is_control(opcode_)) {
    control_len_ = 0;
  } else {
    if (message_len_ + remaining_ > max_message_) return fail(kCloseTooBig, "message too long");
    message_len_ += remaining_;
  }
  mask_pos_ = 0;
  state_ = kPayload;
  if (remaining_ == 0) return end_frame();
  if (announce_) {
    announce_ = false;
    return Event::kMessageBegin;
  }
  return Event::kNeedInput;
}

// The payload of a frame is complete.
FrameParser::Event FrameParser::end_frame() {
  state_ = kHead0;
  const uint8_t op = opcode_;
  if (op == static_cast<uint8_t>(Opcode::kPing)) return Event::kPing;
  if (op == static_cast<uint8_t>(Opcode::kPong)) return Event::kPong;
  if (op == static_cast<uint8_t>(Opcode::kClose)) {
    if (control_len_ == 1) return fail(kCloseProtocolError, "close payload of one byte");
    if (control_len_ >= 2) {
      const uint16_t code = static_cast<uint16_t>((control_[0] << 8) | control_[1]);
      // RFC 6455 7.4: codes a peer may send.
      const bool valid = (code >= 1000 && code <= 1003) || (code >= 1007 && code <= 1014) ||
                         (code >= 3000 && code <= 4999);
      if (!valid) return fail(kCloseProtocolError, "invalid close code");
      close_code_ = code;
    }
    state_ = kFailed;  // nothing after a close is read
    return Event::kClose;
  }
  // A data frame: an empty first frame still begins the message.
  if (announce_) {
    announce_ = false;
    if (fin_) {
      // Begin now; the end follows on the next push (a zero-byte message).
      state_ = kHead0;
      in_message_ = true;
      pending_end_ = true;
      return Event::kMessageBegin;
    }
    return Event::kMessageBegin;
  }
  if (fin_) {
    if (utf8_need_ != 0) return fail(kCloseInvalidPayload, "text ends inside a UTF-8 character");
    in_message_ = false;
    return Event::kMessageEnd;
  }
  return Event::kNeedInput;
}

FrameParser::Event FrameParser::push(const void* data, size_t n, size_t* used) {
  const uint8_t* const start = static_cast<const uint8_t*>(data);
  const uint8_t* p = start;
  const uint8_t* const end = p + n;
  auto done = [&](Event e) {
    *used = static_cast<size_t>(p - start);
    return e;
  };
  scratch_len_ = 0;
  if (state_ == kFailed) return done(error_code_ != 0 ? Event::kError : Event::kNeedInput);
  if (pending_end_) {
    pending_end_ = false;
    in_message_ = false;
    return done(Event::kMessageEnd);
  }
  while (p != end) {
    const uint8_t c = *p;
    switch (state_) {
      case kHead0: {
        ++p;
        if ((c & 0x70) != 0) return done(fail(kCloseProtocolError, "reserved bits set"));
        const uint8_t op = c & 0x0F;
        fin_ = (c & 0x80) != 0;
        if (is_control(op)) {
          if (op != 0x8 && op != 0x9 && op != 0xA) return done(fail(kCloseProtocolError, "unknown opcode"));
          if (!fin_) return done(fail(kCloseProtocolError, "fragmented control frame"));
        } else if (op == 0x0) {
          if (!in_message_) return done(fail(kCloseProtocolError, "continuation without a message"));
        } else if (op == 0x1 || op == 0x2) {
          if (in_message_) return done(fail(kCloseProtocolError, "new message inside a fragmented one"));
          if (op == 0x2) return done(fail(kCloseUnsupportedData, "binary messages are not supported"));
          in_message_ = true;
          announce_ = true;
          message_len_ = 0;
          utf8_need_ = 0;
          utf8_lo_ = 0x80;
          utf8_hi_ = 0xBF;
        } else {
          return done(fail(kCloseProtocolError, "unknown opcode"));
        }
        opcode_ = op;
        state_ = kHead1;
        break;
      }
      case kHead1: {
        ++p;
        if ((c & 0x80) == 0) return done(fail(kCloseProtocolError, "client frame not masked"));
        const uint8_t len = c & 0x7F;
        if (is_control(opcode_) && len > 125) return done(fail(kCloseProtocolError, "control frame too long"));
        remaining_ = 0;
        mask_bytes_ = 0;
        if (len == 126) {
          length_bytes_ = 2;
          state_ = kLength;
        } else if (len == 127) {
          length_bytes_ = 8;
          state_ = kLength;
        } else {
          remaining_ = len;
          state_ = kMask;
        }
        break;
      }
      case kLength:
        ++p;
        if (length_bytes_ == 8 && (c & 0x80) != 0) return done(fail(kCloseProtocolError, "length with the top bit set"));
        if (remaining_ > (UINT64_MAX >> 8)) return done(fail(kCloseTooBig, "message too long"));
        remaining_ = (remaining_ << 8) | c;
        if (--length_bytes_ == 0) state_ = kMask;
        break;
      case kMask:
        ++p;
        mask_[mask_bytes_++] = c;
        if (mask_bytes_ == 4) {
          const Event e = frame_ready();
          if (e != Event::kNeedInput) return done(e);
        }
        break;
      case kPayload: {
        const size_t avail = static_cast<size_t>(end - p);
        if (is_control(opcode_)) {
          size_t take = remaining_ < avail ? static_cast<size_t>(remaining_) : avail;
          for (size_t i = 0; i < take; ++i) control_[control_len_++] = static_cast<uint8_t>(p[i] ^ mask_[mask_pos_++ & 3]);
          p += take;
          remaining_ -= take;
          if (remaining_ == 0) return done(end_frame());
          break;
        }
        size_t take = sizeof scratch_;
        if (take > avail) take = avail;
        if (take > remaining_) take = static_cast<size_t>(remaining_);
        for (size_t i = 0; i < take; ++i) scratch_[i] = static_cast<uint8_t>(p[i] ^ mask_[mask_pos_++ & 3]);
        scratch_len_ = static_cast<uint16_t>(take);
        p += take;
        remaining_ -= take;
        if (!utf8_ok(scratch_, take)) return done(fail(kCloseInvalidPayload, "text is not valid UTF-8"));
        if (remaining_ == 0) {
          // The data is out before the frame's end is handled (kMessageEnd on the next push).
          state_ = kHead0;
          if (fin_) {
            if (utf8_need_ != 0) return done(fail(kCloseInvalidPayload, "text ends inside a UTF-8 character"));
            pending_end_ = true;
          }
        }
        return done(Event::kData);
      }
      case kFailed:
        return done(Event::kError);
    }
  }
  return done(Event::kNeedInput);
}

size_t write_frame_header(uint8_t* out, Opcode op, bool fin, uint64_t payload_len) {
  out[0] = static_cast<uint8_t>((fin ? 0x80 : 0x00) | static_cast<uint8_t>(op));
  if (payload_len <= 125) {
    out[1] = static_cast<uint8_t>(payload_len);
    return 2;
  }
  if (payload_len <= 0xFFFF) {
    out[1] = 126;
    out[2] = static_cast<uint8_t>(payload_len >> 8);
    out[3] = static_cast<uint8_t>(payload_len);
    return 4;
  }
  out[1] = 127;
  for (int i = 0; i < 8; ++i) out[2 + i] = static_cast<uint8_t>(payload_len >> (56 - 8 * i));
  return 10;
}

void accept_key(StrView client_key, Sha1Fn sha1, char out[29]) {
  static const char kGuid[] = "258EAFA5-E914-47DA-95CA-C5AB0DC85B11";
  char joined[128];
  size_t n = client_key.size() < 64 ? client_key.size() : 64;
  memcpy(joined, client_key.data(), n);
  memcpy(joined + n, kGuid, sizeof kGuid - 1);
  n += sizeof kGuid - 1;
  uint8_t digest[20];
  sha1(joined, n, digest);
  // The JSON writer's base64 gives "<28 chars>" with quotes.
  char quoted[32];
  json::BufferSink sink(quoted, sizeof quoted);
  json::Writer w(sink);
  w.base64_begin();
  w.base64_part(digest, sizeof digest);
  w.base64_end();
  memcpy(out, quoted + 1, 28);
  out[28] = '\0';
}

}  // namespace ws
EMCP_NS_END
