// MQTT 5.0 packets (emcp/mqtt/packet.h). Section numbers are those of OASIS "MQTT Version 5.0".
#include "emcp/mqtt/packet.h"

#include <string.h>

EMCP_NS_BEGIN
namespace mqtt {

namespace {

#if EMCP_ERROR_STRINGS
#define EMCP_MQTT_WHY(text) text
#else
#define EMCP_MQTT_WHY(text) ""
#endif

constexpr uint32_t kMaxVarint = 268435455u;  // 1.5.5: four bytes of seven bits
constexpr size_t kMaxString = 65535;         // 1.5.4, 1.5.6: a Two Byte Integer length

const uint8_t* bytes_of(const char* p) { return reinterpret_cast<const uint8_t*>(p); }

// 1.5.4: well-formed UTF-8 (RFC 3629: no overlong forms, nothing above U+10FFFF), no
// surrogates U+D800..U+DFFF [MQTT-1.5.4-1], no U+0000 [MQTT-1.5.4-2].
bool utf8_ok(const uint8_t* p, size_t n) {
  size_t i = 0;
  while (i < n) {
    const uint8_t b = p[i++];
    if (b < 0x80) {
      if (b == 0) return false;
      continue;
    }
    size_t need;
    uint8_t lo = 0x80, hi = 0xBF;  // the range of the first continuation byte
    if (b >= 0xC2 && b <= 0xDF) {
      need = 1;
    } else if (b >= 0xE0 && b <= 0xEF) {
      need = 2;
      if (b == 0xE0) lo = 0xA0;       // overlong
      else if (b == 0xED) hi = 0x9F;  // surrogates
    } else if (b >= 0xF0 && b <= 0xF4) {
      need = 3;
      if (b == 0xF0) lo = 0x90;       // overlong
      else if (b == 0xF4) hi = 0x8F;  // above U+10FFFF
    } else {
      return false;
    }
    if (n - i < need || p[i] < lo || p[i] > hi) return false;
    for (size_t k = 1; k < need; ++k)
      if ((p[i + k] & 0xC0) != 0x80) return false;
    i += need;
  }
  return true;
}

bool utf8_ok(StrView s) { return s.size() <= kMaxString && utf8_ok(bytes_of(s.data()), s.size()); }

size_t varint_size(uint32_t v) { return v < 128u ? 1 : v < 16384u ? 2 : v < 2097152u ? 3 : 4; }

// ---- Reading: a bounded cursor over bytes already received. Every read checks the bounds.
struct Cursor {
  const uint8_t* p;
  size_t n;
  size_t pos;

  size_t left() const { return n - pos; }
  bool byte(uint8_t* v) {
    if (left() < 1) return false;
    *v = p[pos++];
    return true;
  }
  bool u16(uint16_t* v) {
    if (left() < 2) return false;
    *v = static_cast<uint16_t>(p[pos] << 8 | p[pos + 1]);
    pos += 2;
    return true;
  }
  bool u32(uint32_t* v) {
    if (left() < 4) return false;
    *v = static_cast<uint32_t>(p[pos]) << 24 | static_cast<uint32_t>(p[pos + 1]) << 16 |
         static_cast<uint32_t>(p[pos + 2]) << 8 | p[pos + 3];
    pos += 4;
    return true;
  }
  // 1.5.5: at most four bytes, in the fewest bytes [MQTT-1.5.5-1].
  bool varint(uint32_t* v) {
    uint32_t value = 0, mult = 1;
    for (int k = 0; k < 4; ++k) {
      uint8_t b;
      if (!byte(&b)) return false;
      value += static_cast<uint32_t>(b & 0x7F) * mult;
      if ((b & 0x80) == 0) {
        if (k > 0 && b == 0) return false;  // not the shortest form
        *v = value;
        return true;
      }
      mult *= 128;
    }
    return false;  // a fifth byte
  }
  // Binary Data (1.5.6): a Two Byte Integer length, then the bytes.
  bool binary(StrView* out) {
    uint16_t len;
    if (!u16(&len) || left() < len) return false;
    *out = StrView(reinterpret_cast<const char*>(p + pos), len);
    pos += len;
    return true;
  }
  bool utf8(StrView* out) { return binary(out) && utf8_ok(bytes_of(out->data()), out->size()); }
};

// ---- The property table of 2.2.2.2: each identifier's data type and the packets it may be in.
enum Kind : uint8_t { kNone, kByte, kTwo, kFour, kVar, kUtf8, kBinary, kPair };

constexpr uint16_t in(PacketType t) { return static_cast<uint16_t>(1u << static_cast<unsigned>(t)); }
constexpr uint16_t kWill = in(PacketType::kReserved);  // the Will Properties of CONNECT
constexpr uint16_t kAcks = in(PacketType::kPuback) | in(PacketType::kPubrec) | in(PacketType::kPubrel) |
                           in(PacketType::kPubcomp) | in(PacketType::kSuback) | in(PacketType::kUnsuback);
constexpr uint16_t kPub = in(PacketType::kPublish) | kWill;

struct PropSpec {
  Kind kind;
  uint16_t packets;
};

constexpr PropSpec kProps[] = {
    {kNone, 0},                                                                  // 0x00
    {kByte, kPub},                                                               // 0x01 Payload Format Indicator
    {kFour, kPub},                                                               // 0x02 Message Expiry Interval
    {kUtf8, kPub},                                                               // 0x03 Content Type
    {kNone, 0}, {kNone, 0}, {kNone, 0}, {kNone, 0},                              // 0x04-0x07
    {kUtf8, kPub},                                                               // 0x08 Response Topic
    {kBinary, kPub},                                                             // 0x09 Correlation Data
    {kNone, 0},                                                                  // 0x0A
    {kVar, in(PacketType::kPublish) | in(PacketType::kSubscribe)},               // 0x0B Subscription Identifier
    {kNone, 0}, {kNone, 0}, {kNone, 0}, {kNone, 0}, {kNone, 0},                  // 0x0C-0x10
    {kFour, in(PacketType::kConnect) | in(PacketType::kConnack) | in(PacketType::kDisconnect)},  // 0x11
    {kUtf8, in(PacketType::kConnack)},                                           // 0x12 Assigned Client Identifier
    {kTwo, in(PacketType::kConnack)},                                            // 0x13 Server Keep Alive
    {kNone, 0},                                                                  // 0x14
    {kUtf8, in(PacketType::kConnect) | in(PacketType::kConnack) | in(PacketType::kAuth)},  // 0x15 Auth Method
    {kBinary, in(PacketType::kConnect) | in(PacketType::kConnack) | in(PacketType::kAuth)},  // 0x16 Auth Data
    {kByte, in(PacketType::kConnect)},                                           // 0x17 Request Problem Information
    {kFour, kWill},                                                              // 0x18 Will Delay Interval
    {kByte, in(PacketType::kConnect)},                                           // 0x19 Request Response Information
    {kUtf8, in(PacketType::kConnack)},                                           // 0x1A Response Information
    {kNone, 0},                                                                  // 0x1B
    {kUtf8, in(PacketType::kConnack) | in(PacketType::kDisconnect)},             // 0x1C Server Reference
    {kNone, 0}, {kNone, 0},                                                      // 0x1D-0x1E
    {kUtf8, in(PacketType::kConnack) | kAcks | in(PacketType::kDisconnect) | in(PacketType::kAuth)},  // 0x1F
    {kNone, 0},                                                                  // 0x20
    {kTwo, in(PacketType::kConnect) | in(PacketType::kConnack)},                 // 0x21 Receive Maximum
    {kTwo, in(PacketType::kConnect) | in(PacketType::kConnack)},                 // 0x22 Topic Alias Maximum
    {kTwo, in(PacketType::kPublish)},                                            // 0x23 Topic Alias
    {kByte, in(PacketType::kConnack)},                                           // 0x24 Maximum QoS
    {kByte, in(PacketType::kConnack)},                                           // 0x25 Retain Available
    {kPair, 0xFFFF},                                                             // 0x26 User Property (all)
    {kFour, in(PacketType::kConnect) | in(PacketType::kConnack)},                // 0x27 Maximum Packet Size
    {kByte, in(PacketType::kConnack)},                                           // 0x28 Wildcard Subscription Available
    {kByte, in(PacketType::kConnack)},                                           // 0x29 Subscription Identifier Available
    {kByte, in(PacketType::kConnack)},                                           // 0x2A Shared Subscription Available
};
constexpr uint32_t kPropCount = sizeof kProps / sizeof kProps[0];

Kind kind_of(uint32_t id) { return id < kPropCount ? kProps[id].kind : kNone; }

// One property at the cursor: its identifier, then its value in the identifier's data type.
// False when the identifier is unknown or the value is cut short or not well formed (both make
// a Malformed Packet, 2.2.2.2).
bool read_property(Cursor* c, Property* out) {
  uint32_t id;
  if (!c->varint(&id)) return false;
  *out = Property();
  out->id = static_cast<PropertyId>(id);
  switch (kind_of(id)) {
    case kByte: {
      uint8_t v;
      if (!c->byte(&v)) return false;
      out->number = v;
      return true;
    }
    case kTwo: {
      uint16_t v;
      if (!c->u16(&v)) return false;
      out->number = v;
      return true;
    }
    case kFour: return c->u32(&out->number);
    case kVar: return c->varint(&out->number);
    case kUtf8: return c->utf8(&out->text);
    case kBinary: return c->binary(&out->text);
    case kPair: return c->utf8(&out->text) && c->utf8(&out->value);
    case kNone: break;
  }
  return false;
}

// ---- What a server may send (reason code tables of chapter 3).
bool reason_in(uint8_t r, const uint8_t* list, size_t n) {
  for (size_t i = 0; i < n; ++i)
    if (list[i] == r) return true;
  return false;
}
template <size_t N>
bool reason_in(uint8_t r, const uint8_t (&list)[N]) {
  return reason_in(r, list, N);
}
// Table 3-1.
constexpr uint8_t kConnackCodes[] = {0x00, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0x86, 0x87, 0x88, 0x89,
                                     0x8A, 0x8C, 0x90, 0x95, 0x97, 0x99, 0x9A, 0x9B, 0x9C, 0x9D, 0x9F};
// Table 3-4.
constexpr uint8_t kPubackCodes[] = {0x00, 0x10, 0x80, 0x83, 0x87, 0x90, 0x91, 0x97, 0x99};
// Table 3-8.
constexpr uint8_t kSubackCodes[] = {0x00, 0x01, 0x02, 0x80, 0x83, 0x87, 0x8F, 0x91, 0x97, 0x9E, 0xA1, 0xA2};
// Table 3-9.
constexpr uint8_t kUnsubackCodes[] = {0x00, 0x11, 0x80, 0x83, 0x87, 0x8F, 0x91};
// Table 3-10, the codes sent by a Server ("Server" or "Client or Server").
constexpr uint8_t kServerDisconnectCodes[] = {0x00, 0x80, 0x81, 0x82, 0x83, 0x87, 0x89, 0x8B, 0x8D, 0x8E,
                                              0x8F, 0x90, 0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99, 0x9A,
                                              0x9B, 0x9C, 0x9D, 0x9E, 0x9F, 0xA0, 0xA1, 0xA2};
// Table 3-10, the codes a Client may send ("Client" or "Client or Server").
constexpr uint8_t kClientDisconnectCodes[] = {0x00, 0x04, 0x80, 0x81, 0x82, 0x83, 0x90,
                                              0x93, 0x94, 0x95, 0x96, 0x97, 0x98, 0x99};

// ---- Writing: lengths are computed first, so a Writer only ever writes what fits.
struct Writer {
  char* p;
  size_t len;

  void byte(uint32_t v) { p[len++] = static_cast<char>(static_cast<uint8_t>(v)); }
  void u16(uint32_t v) {
    byte(v >> 8);
    byte(v);
  }
  void u32(uint32_t v) {
    u16(v >> 16);
    u16(v & 0xFFFFu);
  }
  void varint(uint32_t v) {
    do {
      uint32_t b = v % 128;
      v /= 128;
      if (v > 0) b |= 128;
      byte(b);
    } while (v > 0);
  }
  void raw(StrView s) {
    if (s.size() > 0) memcpy(p + len, s.data(), s.size());
    len += s.size();
  }
  void string(StrView s) {
    u16(static_cast<uint32_t>(s.size()));
    raw(s);
  }
  void user(const UserProperty* u, size_t n) {
    for (size_t i = 0; i < n; ++i) {
      byte(static_cast<uint8_t>(PropertyId::kUserProperty));
      string(u[i].name);
      string(u[i].value);
    }
  }
};

// The bytes of `n` User Properties, or 0 with *ok false when one is not a UTF-8 string.
size_t user_size(const UserProperty* u, size_t n, bool* ok) {
  if (n > 0 && u == nullptr) *ok = false;
  if (!*ok) return 0;
  size_t total = 0;
  for (size_t i = 0; i < n; ++i) {
    if (!utf8_ok(u[i].name) || !utf8_ok(u[i].value)) {
      *ok = false;
      return 0;
    }
    total += 1 + 2 + u[i].name.size() + 2 + u[i].value.size();
    if (total > kMaxVarint) {
      *ok = false;
      return 0;
    }
  }
  return total;
}

// A whole packet of `remaining` bytes after its first byte, when it fits `cap`: its size, else 0.
size_t packet_size(size_t remaining, size_t cap) {
  if (remaining > kMaxVarint) return 0;
  const size_t total = 1 + varint_size(static_cast<uint32_t>(remaining)) + remaining;
  return total <= cap ? total : 0;
}

bool is_wildcard(char c) { return c == '+' || c == '#'; }

// 4.8.2: "$share/{ShareName}/{filter}": the filter part, or the whole filter when not shared;
// empty when the shared form is broken (no ShareName, a wildcard in it, no filter).
StrView unshared(StrView filter, bool* shared) {
  const StrView prefix("$share/");
  *shared = filter.starts_with(prefix);
  if (!*shared) return filter;
  size_t i = prefix.size();
  while (i < filter.size() && filter[i] != '/') {
    if (is_wildcard(filter[i])) return StrView();
    ++i;
  }
  if (i == prefix.size() || i >= filter.size()) return StrView();
  return filter.sub(i + 1);
}

}  // namespace

// ---- Reason codes (2.4).

const char* reason_str(Reason r) {
#if EMCP_ERROR_STRINGS
  switch (static_cast<uint8_t>(r)) {
    case 0x00: return "Success";
    case 0x01: return "Granted QoS 1";
    case 0x02: return "Granted QoS 2";
    case 0x04: return "Disconnect with Will Message";
    case 0x10: return "No matching subscribers";
    case 0x11: return "No subscription existed";
    case 0x18: return "Continue authentication";
    case 0x19: return "Re-authenticate";
    case 0x80: return "Unspecified error";
    case 0x81: return "Malformed Packet";
    case 0x82: return "Protocol Error";
    case 0x83: return "Implementation specific error";
    case 0x84: return "Unsupported Protocol Version";
    case 0x85: return "Client Identifier not valid";
    case 0x86: return "Bad User Name or Password";
    case 0x87: return "Not authorized";
    case 0x88: return "Server unavailable";
    case 0x89: return "Server busy";
    case 0x8A: return "Banned";
    case 0x8B: return "Server shutting down";
    case 0x8C: return "Bad authentication method";
    case 0x8D: return "Keep Alive timeout";
    case 0x8E: return "Session taken over";
    case 0x8F: return "Topic Filter invalid";
    case 0x90: return "Topic Name invalid";
    case 0x91: return "Packet Identifier in use";
    case 0x92: return "Packet Identifier not found";
    case 0x93: return "Receive Maximum exceeded";
    case 0x94: return "Topic Alias invalid";
    case 0x95: return "Packet too large";
    case 0x96: return "Message rate too high";
    case 0x97: return "Quota exceeded";
    case 0x98: return "Administrative action";
    case 0x99: return "Payload format invalid";
    case 0x9A: return "Retain not supported";
    case 0x9B: return "QoS not supported";
    case 0x9C: return "Use another server";
    case 0x9D: return "Server moved";
    case 0x9E: return "Shared Subscriptions not supported";
    case 0x9F: return "Connection rate exceeded";
    case 0xA0: return "Maximum connect time";
    case 0xA1: return "Subscription Identifiers not supported";
    case 0xA2: return "Wildcard Subscriptions not supported";
    default: return "";
  }
#else
  (void)r;
  return "";
#endif
}

// ---- Properties.

bool Properties::next(size_t* pos, Property* out) const {
  if (*pos >= raw_.size()) return false;
  Cursor c{bytes_of(raw_.data()), raw_.size(), *pos};
  if (!read_property(&c, out)) {
    *pos = raw_.size();  // only a buffer the reader did not check can get here
    return false;
  }
  *pos = c.pos;
  return true;
}

bool Properties::user(StrView name, StrView* value) const {
  size_t pos = 0;
  Property p;
  while (next(&pos, &p)) {
    if (p.id == PropertyId::kUserProperty && p.text == name) {
      *value = p.value;
      return true;
    }
  }
  return false;
}

// ---- PacketReader.

PacketReader::PacketReader(char* head, size_t head_cap, uint32_t max_packet)
    : head_(head), head_cap_(head == nullptr ? 0 : head_cap), max_packet_(max_packet) {}

void PacketReader::reset() {
  stage_ = Stage::kType;
  first_ = 0;
  length_bytes_ = 0;
  remaining_ = 0;
  multiplier_ = 1;
  head_len_ = 0;
  payload_left_ = 0;
  packet_ = Packet();
  payload_ = StrView();
  error_ = Reason::kSuccess;
  error_text_ = "";
}

PacketReader::Event PacketReader::fail(Reason r, const char* why) {
  stage_ = Stage::kFailed;
  error_ = r;
  error_text_ = why;
  payload_ = StrView();
  return Event::kError;
}

// The head bytes known to be needed so far: the whole packet but for a PUBLISH, whose head ends
// with its properties (its Topic Name's length, then its Property Length, tell where). Never
// more than the packet: a head cut short by the Remaining Length is found by parse_head().
size_t PacketReader::head_wanted() const {
  const size_t fixed = 1u + length_bytes_;
  const size_t total = fixed + remaining_;
  if (packet_.type != PacketType::kPublish) return total;
  const uint8_t* h = bytes_of(head_);
  size_t want = fixed + 2;
  if (head_len_ >= want) {
    const size_t base = want + (static_cast<size_t>(h[fixed]) << 8 | h[fixed + 1]) + (packet_.qos > 0 ? 2u : 0u);
    // The Property Length, a Variable Byte Integer read as its bytes arrive.
    size_t k = 0, value = 0, mult = 1;
    want = base + 1;
    while (head_len_ >= base + k + 1) {
      const uint8_t b = h[base + k];
      value += (b & 0x7Fu) * mult;
      if ((b & 0x80) == 0) {
        want = base + k + 1 + value;
        break;
      }
      if (k == 3) break;  // a fifth byte: parse_head() says it is malformed
      mult *= 128;
      ++k;
      want = base + k + 1;
    }
  }
  return want < total ? want : total;
}

PacketReader::Event PacketReader::push(const uint8_t* data, size_t n, size_t* used) {
  *used = 0;
  if (data == nullptr) n = 0;
  size_t i = 0;
  for (;;) {
    switch (stage_) {
      case Stage::kFailed: return Event::kError;

      case Stage::kType: {
        if (i == n) {
          *used = i;
          return Event::kNeedInput;
        }
        const uint8_t b = data[i++];
        *used = i;
        packet_ = Packet();
        payload_ = StrView();
        first_ = b;
        length_bytes_ = 0;
        remaining_ = 0;
        multiplier_ = 1;
        head_len_ = 0;
        const uint8_t flags = b & 0x0F;
        const PacketType type = static_cast<PacketType>(b >> 4);
        packet_.type = type;
        packet_.flags = flags;
        // 2.1.3: reserved flag bits must be as Table 2-2 lists (0010 for PUBREL, SUBSCRIBE,
        // UNSUBSCRIBE; 0000 for all others but PUBLISH), else a Malformed Packet.
        switch (type) {
          case PacketType::kReserved:
            return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("packet type 0 is reserved"));
          case PacketType::kPublish: {
            const uint8_t qos = (flags >> 1) & 3;
            if (qos == 3) return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("PUBLISH with QoS 3"));
            if (qos == 0 && (flags & 0x08) != 0)
              return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("PUBLISH with DUP at QoS 0"));
            // emcp subscribes at QoS 0 and 1: a QoS 2 delivery breaks [MQTT-3.8.4-8].
            if (qos == 2) return fail(Reason::kProtocolError, EMCP_MQTT_WHY("PUBLISH with QoS 2"));
            packet_.qos = qos;
            packet_.dup = (flags & 0x08) != 0;
            packet_.retain = (flags & 0x01) != 0;
            break;
          }
          case PacketType::kPubrel:
          case PacketType::kSubscribe:
          case PacketType::kUnsubscribe:
            if (flags != 0x02) return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("reserved flag bits set"));
            break;
          default:
            if (flags != 0) return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("reserved flag bits set"));
            break;
        }
        switch (type) {
          case PacketType::kConnack:
          case PacketType::kPublish:
          case PacketType::kPuback:
          case PacketType::kSuback:
          case PacketType::kUnsuback:
          case PacketType::kPingresp:
          case PacketType::kDisconnect:
            break;
          case PacketType::kAuth:  // 3.15: emcp's CONNECT has no Authentication Method
            return fail(Reason::kProtocolError, EMCP_MQTT_WHY("AUTH without an Authentication Method"));
          default:  // a client's packet, or one of QoS 2 (which emcp never uses)
            return fail(Reason::kProtocolError, EMCP_MQTT_WHY("a packet a server does not send here"));
        }
        if (head_cap_ < 1) return fail(Reason::kPacketTooLarge, EMCP_MQTT_WHY("packet head too long"));
        head_[0] = static_cast<char>(b);
        head_len_ = 1;
        stage_ = Stage::kLength;
        break;
      }

      case Stage::kLength: {
        if (i == n) {
          *used = i;
          return Event::kNeedInput;
        }
        const uint8_t b = data[i++];
        *used = i;
        ++length_bytes_;
        remaining_ += (b & 0x7Fu) * multiplier_;
        if (head_len_ >= head_cap_) return fail(Reason::kPacketTooLarge, EMCP_MQTT_WHY("packet head too long"));
        head_[head_len_++] = static_cast<char>(b);
        if ((b & 0x80) != 0) {
          if (length_bytes_ == 4)
            return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("Remaining Length longer than four bytes"));
          multiplier_ *= 128;
          break;
        }
        if (length_bytes_ > 1 && b == 0)  // [MQTT-1.5.5-1]
          return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("Remaining Length not in its shortest form"));
        packet_.remaining = remaining_;
        // 3.1.2.11.4: a packet over the Maximum Packet Size the client sent is a Protocol Error
        // answered with Packet too large.
        if (max_packet_ != 0 && 1u + length_bytes_ + static_cast<uint64_t>(remaining_) > max_packet_)
          return fail(Reason::kPacketTooLarge, EMCP_MQTT_WHY("packet larger than the Maximum Packet Size"));
        stage_ = Stage::kHead;
        break;
      }

      case Stage::kHead: {
        for (;;) {
          const size_t want = head_wanted();
          if (want > head_cap_) return fail(Reason::kPacketTooLarge, EMCP_MQTT_WHY("packet head too long"));
          if (head_len_ >= want) break;  // (never above: want only grows)
          if (i == n) {
            *used = i;
            return Event::kNeedInput;
          }
          size_t take = want - head_len_;
          if (take > n - i) take = n - i;
          memcpy(head_ + head_len_, data + i, take);
          head_len_ += take;
          i += take;
        }
        *used = i;
        const Event e = parse_head();
        if (e == Event::kError) return e;
        if (packet_.type == PacketType::kPublish) {
          payload_left_ = packet_.payload_len;
          stage_ = Stage::kPayload;
        } else {
          stage_ = Stage::kType;
        }
        return e;
      }

      case Stage::kPayload: {
        if (payload_left_ == 0) {
          payload_ = StrView();
          stage_ = Stage::kType;
          *used = i;
          return Event::kPayloadEnd;
        }
        if (i == n) {
          *used = i;
          return Event::kNeedInput;
        }
        size_t take = payload_left_;
        if (take > n - i) take = n - i;
        payload_ = StrView(reinterpret_cast<const char*>(data + i), take);
        payload_left_ -= static_cast<uint32_t>(take);
        i += take;
        *used = i;
        return Event::kPayload;
      }
    }
  }
}

// The head is complete in head_[0, head_len_): checks it as chapter 3 says for its type and
// fills packet_.
PacketReader::Event PacketReader::parse_head() {
  const size_t fixed = 1u + length_bytes_;
  Cursor c{bytes_of(head_), head_len_, fixed};
  const PacketType type = packet_.type;
  const uint32_t rl = remaining_;

  // The variable header's fields before the properties.
  switch (type) {
    case PacketType::kPingresp:
      if (rl != 0) return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("PINGRESP with a body"));
      return Event::kPacket;
    case PacketType::kConnack: {
      uint8_t flags, code;
      if (rl < 3 || !c.byte(&flags) || !c.byte(&code))
        return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("CONNACK too short"));
      if ((flags & 0xFE) != 0)  // [MQTT-3.2.2-1]
        return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("CONNACK reserved flag bits set"));
      if (!reason_in(code, kConnackCodes))  // [MQTT-3.2.2-8]
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("not a CONNACK reason code"));
      packet_.session_present = (flags & 1) != 0;
      packet_.reason = static_cast<Reason>(code);
      if (packet_.session_present && code != 0)  // [MQTT-3.2.2-6]
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("CONNACK refusal with Session Present"));
      break;
    }
    case PacketType::kPublish: {
      if (!c.utf8(&packet_.topic))
        return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("PUBLISH Topic Name cut short or not UTF-8"));
      if (packet_.qos > 0) {
        if (!c.u16(&packet_.packet_id))
          return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("PUBLISH too short"));
        if (packet_.packet_id == 0)  // [MQTT-2.2.1-4]
          return fail(Reason::kProtocolError, EMCP_MQTT_WHY("Packet Identifier 0"));
      }
      break;
    }
    case PacketType::kPuback: {
      if (rl < 2 || !c.u16(&packet_.packet_id))
        return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("PUBACK too short"));
      if (packet_.packet_id == 0)  // emcp never sends 0 [MQTT-2.2.1-3, -5]
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("Packet Identifier 0"));
      if (rl == 2) return Event::kPacket;  // 3.4.2.1: Success, no properties
      uint8_t code = 0;
      (void)c.byte(&code);  // there: the head holds Remaining Length bytes
      if (!reason_in(code, kPubackCodes))  // [MQTT-3.4.2-1]
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("not a PUBACK reason code"));
      packet_.reason = static_cast<Reason>(code);
      if (rl == 3) return Event::kPacket;  // 3.4.2.2.1: no Property Length
      break;
    }
    case PacketType::kSuback:
    case PacketType::kUnsuback: {
      if (rl < 3 || !c.u16(&packet_.packet_id))
        return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("SUBACK or UNSUBACK too short"));
      if (packet_.packet_id == 0)  // [MQTT-2.2.1-6]: emcp's SUBSCRIBE and UNSUBSCRIBE use 1-65535
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("Packet Identifier 0"));
      break;
    }
    case PacketType::kDisconnect: {
      if (rl == 0) return Event::kPacket;  // 3.14.2.1: Normal disconnection
      uint8_t code = 0;
      (void)c.byte(&code);
      if (!reason_in(code, kServerDisconnectCodes))  // [MQTT-3.14.2-1]
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("not a DISCONNECT reason code of a server"));
      packet_.reason = static_cast<Reason>(code);
      if (rl == 1) return Event::kPacket;  // 3.14.2.2.1: no Property Length
      break;
    }
    default:
      return fail(Reason::kProtocolError, EMCP_MQTT_WHY("unexpected packet"));
  }

  // The properties (2.2.2).
  uint32_t plen;
  if (!c.varint(&plen) || plen > c.left())
    return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("Property Length malformed or beyond the packet"));
  const size_t props_at = c.pos;
  packet_.props = Properties(StrView(head_ + props_at, plen));
  Cursor pc{bytes_of(head_), props_at + plen, props_at};
  const uint16_t here = in(type);
  uint64_t seen = 0;
  bool topic_alias = false;
  while (pc.left() > 0) {
    Property p;
    if (!read_property(&pc, &p))
      return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("property unknown, cut short or not UTF-8"));
    const uint32_t id = static_cast<uint32_t>(p.id);
    if ((kProps[id].packets & here) == 0)  // 2.2.2.2
      return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("property not allowed in this packet"));
    const uint64_t bit = uint64_t{1} << id;
    if ((seen & bit) != 0 && p.id != PropertyId::kUserProperty && p.id != PropertyId::kSubscriptionIdentifier)
      return fail(Reason::kProtocolError, EMCP_MQTT_WHY("property included more than once"));
    seen |= bit;
    switch (p.id) {
      case PropertyId::kPayloadFormatIndicator:  // 3.3.2.3.2
      case PropertyId::kMaximumQos:              // 3.2.2.3.4
      case PropertyId::kRetainAvailable:         // 3.2.2.3.5
      case PropertyId::kWildcardSubscriptionAvailable:
      case PropertyId::kSubscriptionIdentifierAvailable:
      case PropertyId::kSharedSubscriptionAvailable:
        if (p.number > 1) return fail(Reason::kProtocolError, EMCP_MQTT_WHY("property value other than 0 or 1"));
        break;
      case PropertyId::kReceiveMaximum:          // 3.2.2.3.3
      case PropertyId::kMaximumPacketSize:       // 3.2.2.3.6
      case PropertyId::kSubscriptionIdentifier:  // 3.3.2.3.8
        if (p.number == 0) return fail(Reason::kProtocolError, EMCP_MQTT_WHY("property value 0"));
        break;
      case PropertyId::kTopicAlias:  // 3.3.4: emcp's Topic Alias Maximum is 0 [MQTT-3.1.2-27]
        topic_alias = true;
        break;
      case PropertyId::kAuthenticationMethod:  // [MQTT-4.12.0-6]
      case PropertyId::kAuthenticationData:
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("authentication property without an Authentication Method"));
      case PropertyId::kResponseInformation:  // [MQTT-3.1.2-28]: emcp never requests it
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("Response Information not requested"));
      case PropertyId::kSessionExpiryInterval:
        if (type == PacketType::kDisconnect)  // [MQTT-3.14.2-2]
          return fail(Reason::kProtocolError, EMCP_MQTT_WHY("Session Expiry Interval in a server's DISCONNECT"));
        break;
      default:
        break;
    }
    switch (p.id) {
      case PropertyId::kReasonString: packet_.reason_string = p.text; break;
      case PropertyId::kReceiveMaximum: packet_.receive_maximum = static_cast<uint16_t>(p.number); break;
      case PropertyId::kMaximumPacketSize: packet_.maximum_packet_size = p.number; break;
      case PropertyId::kMaximumQos: packet_.maximum_qos = static_cast<uint8_t>(p.number); break;
      case PropertyId::kRetainAvailable: packet_.retain_available = p.number != 0; break;
      case PropertyId::kWildcardSubscriptionAvailable: packet_.wildcard_available = p.number != 0; break;
      case PropertyId::kServerKeepAlive:
        packet_.server_keep_alive_set = true;
        packet_.server_keep_alive = static_cast<uint16_t>(p.number);
        break;
      case PropertyId::kAssignedClientIdentifier: packet_.assigned_client_id = p.text; break;
      default: break;
    }
  }
  if (topic_alias)
    return fail(Reason::kTopicAliasInvalid, EMCP_MQTT_WHY("Topic Alias above the Topic Alias Maximum 0"));

  // What follows the properties.
  switch (type) {
    case PacketType::kPublish:
      if (packet_.topic.empty())  // 3.3.2.1
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("empty Topic Name without a Topic Alias"));
      for (char ch : packet_.topic)
        if (is_wildcard(ch))  // [MQTT-3.3.2-2]
          return fail(Reason::kTopicNameInvalid, EMCP_MQTT_WHY("wildcard in a Topic Name"));
      packet_.payload_len = static_cast<uint32_t>(1u + length_bytes_ + remaining_ - head_len_);
      return Event::kPacket;
    case PacketType::kSuback:
    case PacketType::kUnsuback: {
      packet_.reason_codes = StrView(head_ + pc.pos, c.n - pc.pos);
      if (packet_.reason_codes.empty())  // 3.9.3, 3.11.3: one code per Topic Filter sent
        return fail(Reason::kProtocolError, EMCP_MQTT_WHY("no reason codes"));
      const bool sub = type == PacketType::kSuback;
      for (char ch : packet_.reason_codes) {
        const uint8_t code = static_cast<uint8_t>(ch);
        if (sub ? !reason_in(code, kSubackCodes) : !reason_in(code, kUnsubackCodes))  // [MQTT-3.9.3-2, 3.11.3-2]
          return fail(Reason::kProtocolError, EMCP_MQTT_WHY("not a SUBACK or UNSUBACK reason code"));
      }
      return Event::kPacket;
    }
    default:  // CONNACK, PUBACK and DISCONNECT end with their properties
      if (pc.pos != c.n) return fail(Reason::kMalformedPacket, EMCP_MQTT_WHY("bytes after the properties"));
      return Event::kPacket;
  }
}

// ---- Encoders.

size_t encode_connect(const ConnectOptions& o, char* out, size_t cap) {
  if (out == nullptr || o.receive_maximum == 0) return 0;  // 3.1.2.11.3: 0 is a Protocol Error
  bool ok = utf8_ok(o.client_id) && utf8_ok(o.username) && o.password.size() <= kMaxString;
  // 3.1.2.11: properties (absent ones take the text's defaults; Topic Alias Maximum absent is 0).
  size_t props = user_size(o.user, o.user_count, &ok);
  if (o.session_expiry_s != 0) props += 5;
  if (o.receive_maximum != 65535) props += 3;
  if (o.maximum_packet_size != 0) props += 5;
  size_t payload = 2 + o.client_id.size();
  size_t will_props = 0;
  if (o.will != nullptr) {
    const Will& w = *o.will;
    ok = ok && valid_topic_name(w.topic) && w.payload.size() <= kMaxString && w.qos <= 1;
    will_props = user_size(w.user, w.user_count, &ok);
    payload += varint_size(static_cast<uint32_t>(will_props)) + will_props + 2 + w.topic.size() + 2 + w.payload.size();
  }
  if (!ok || props > kMaxVarint) return 0;
  if (!o.username.empty()) payload += 2 + o.username.size();
  if (!o.password.empty()) payload += 2 + o.password.size();
  const size_t remaining = 10 + varint_size(static_cast<uint32_t>(props)) + props + payload;
  const size_t total = packet_size(remaining, cap);
  if (total == 0) return 0;

  uint32_t flags = o.clean_start ? 0x02u : 0u;
  if (o.will != nullptr) flags |= 0x04u | static_cast<uint32_t>(o.will->qos) << 3 | (o.will->retain ? 0x20u : 0u);
  if (!o.password.empty()) flags |= 0x40;
  if (!o.username.empty()) flags |= 0x80;
  Writer w{out, 0};
  w.byte(0x10);
  w.varint(static_cast<uint32_t>(remaining));
  w.string("MQTT");  // 3.1.2.1
  w.byte(5);         // 3.1.2.2
  w.byte(flags);
  w.u16(o.keep_alive_s);
  w.varint(static_cast<uint32_t>(props));
  if (o.session_expiry_s != 0) {
    w.byte(static_cast<uint8_t>(PropertyId::kSessionExpiryInterval));
    w.u32(o.session_expiry_s);
  }
  if (o.receive_maximum != 65535) {
    w.byte(static_cast<uint8_t>(PropertyId::kReceiveMaximum));
    w.u16(o.receive_maximum);
  }
  if (o.maximum_packet_size != 0) {
    w.byte(static_cast<uint8_t>(PropertyId::kMaximumPacketSize));
    w.u32(o.maximum_packet_size);
  }
  w.user(o.user, o.user_count);
  w.string(o.client_id);  // 3.1.3: Client Identifier, Will Properties, Will Topic, Will Payload, ...
  if (o.will != nullptr) {
    w.varint(static_cast<uint32_t>(will_props));
    w.user(o.will->user, o.will->user_count);
    w.string(o.will->topic);
    w.string(o.will->payload);
  }
  if (!o.username.empty()) w.string(o.username);
  if (!o.password.empty()) w.string(o.password);
  return w.len;
}

namespace {

// A SUBSCRIBE's or UNSUBSCRIBE's fixed header, Packet Identifier and empty properties (3.8.2,
// 3.10.2) before a payload of `payload` bytes; false when the packet does not fit `cap`.
bool begin_with_id(uint8_t first, uint16_t packet_id, size_t payload, size_t cap, Writer* w) {
  const size_t remaining = 3 + payload;
  if (payload > kMaxVarint || packet_size(remaining, cap) == 0) return false;
  w->byte(first);
  w->varint(static_cast<uint32_t>(remaining));
  w->u16(packet_id);
  w->byte(0);
  return true;
}

}  // namespace

size_t encode_subscribe(uint16_t packet_id, const Subscription* subs, size_t n, char* out, size_t cap) {
  if (out == nullptr || subs == nullptr || n == 0 || packet_id == 0) return 0;  // [MQTT-3.8.3-2, 2.2.1-3]
  size_t payload = 0;
  for (size_t i = 0; i < n && payload <= kMaxVarint; ++i) {
    const Subscription& s = subs[i];
    bool shared;
    (void)unshared(s.filter, &shared);
    if (!valid_topic_filter(s.filter) || s.max_qos > 1 || s.retain_handling > 2) return 0;
    if (shared && s.no_local) return 0;  // [MQTT-3.8.3-4]
    payload += 2 + s.filter.size() + 1;
  }
  Writer w{out, 0};
  if (!begin_with_id(0x82, packet_id, payload, cap, &w)) return 0;  // 3.8.1: flags 0010
  for (size_t i = 0; i < n; ++i) {
    const Subscription& s = subs[i];
    w.string(s.filter);
    w.byte(static_cast<uint32_t>(s.max_qos) | (s.no_local ? 0x04u : 0u) | (s.retain_as_published ? 0x08u : 0u) |
           static_cast<uint32_t>(s.retain_handling) << 4);  // 3.8.3.1
  }
  return w.len;
}

size_t encode_unsubscribe(uint16_t packet_id, const StrView* filters, size_t n, char* out, size_t cap) {
  if (out == nullptr || filters == nullptr || n == 0 || packet_id == 0) return 0;  // [MQTT-3.10.3-2]
  size_t payload = 0;
  for (size_t i = 0; i < n && payload <= kMaxVarint; ++i) {
    if (!valid_topic_filter(filters[i])) return 0;
    payload += 2 + filters[i].size();
  }
  Writer w{out, 0};
  if (!begin_with_id(0xA2, packet_id, payload, cap, &w)) return 0;  // 3.10.1: flags 0010
  for (size_t i = 0; i < n; ++i) w.string(filters[i]);
  return w.len;
}

namespace {

// A PUBLISH's Remaining Length without the payload (its variable header), and its properties'
// length; 0 when the header breaks a rule.
size_t publish_variable_header(const PublishHeader& h, size_t* props) {
  if (!valid_topic_name(h.topic) || h.qos > 1 || (h.qos == 1 && h.packet_id == 0)) return 0;
  if (h.qos == 0 && h.dup) return 0;  // [MQTT-3.3.1-2]
  bool ok = utf8_ok(h.content_type);
  *props = user_size(h.user, h.user_count, &ok);
  if (!ok) return 0;
  if (h.utf8_payload) *props += 2;
  if (!h.content_type.empty()) *props += 3 + h.content_type.size();
  if (*props > kMaxVarint) return 0;
  return 2 + h.topic.size() + (h.qos == 1 ? 2u : 0u) + varint_size(static_cast<uint32_t>(*props)) + *props;
}

}  // namespace

size_t publish_header_size(const PublishHeader& h, uint32_t payload_len) {
  size_t props;
  const size_t vh = publish_variable_header(h, &props);
  if (vh == 0 || vh > kMaxVarint || payload_len > kMaxVarint - vh) return 0;
  const size_t remaining = vh + payload_len;
  return 1 + varint_size(static_cast<uint32_t>(remaining)) + vh;
}

size_t encode_publish_header(const PublishHeader& h, uint32_t payload_len, char* out, size_t cap) {
  const size_t size = publish_header_size(h, payload_len);
  if (out == nullptr || size == 0 || size > cap) return 0;
  size_t props;
  const size_t vh = publish_variable_header(h, &props);
  Writer w{out, 0};
  w.byte(0x30u | (h.dup ? 0x08u : 0u) | static_cast<uint32_t>(h.qos) << 1 | (h.retain ? 1u : 0u));  // 3.3.1
  w.varint(static_cast<uint32_t>(vh + payload_len));
  w.string(h.topic);
  if (h.qos == 1) w.u16(h.packet_id);
  w.varint(static_cast<uint32_t>(props));
  if (h.utf8_payload) {
    w.byte(static_cast<uint8_t>(PropertyId::kPayloadFormatIndicator));
    w.byte(1);
  }
  if (!h.content_type.empty()) {
    w.byte(static_cast<uint8_t>(PropertyId::kContentType));
    w.string(h.content_type);
  }
  w.user(h.user, h.user_count);
  return w.len;
}

size_t encode_puback(uint16_t packet_id, Reason reason, char* out, size_t cap) {
  const uint8_t code = static_cast<uint8_t>(reason);
  if (out == nullptr || packet_id == 0 || !reason_in(code, kPubackCodes)) return 0;  // [MQTT-3.4.2-1]
  const size_t remaining = code == 0 ? 2 : 3;  // 3.4.2.1, 3.4.2.2.1: no Property Length
  if (packet_size(remaining, cap) == 0) return 0;
  Writer w{out, 0};
  w.byte(0x40);
  w.byte(static_cast<uint32_t>(remaining));
  w.u16(packet_id);
  if (code != 0) w.byte(code);
  return w.len;
}

size_t encode_pingreq(char* out, size_t cap) {
  if (out == nullptr || cap < 2) return 0;
  out[0] = static_cast<char>(0xC0);
  out[1] = 0;
  return 2;
}

size_t encode_disconnect(Reason reason, StrView reason_string, char* out, size_t cap) {
  const uint8_t code = static_cast<uint8_t>(reason);
  if (out == nullptr || !reason_in(code, kClientDisconnectCodes) || !utf8_ok(reason_string)) return 0;
  // 3.14.2.1: Normal disconnection without properties is Remaining Length 0; 3.14.2.2.1: a
  // Remaining Length of 1 is the code without properties.
  const size_t props = reason_string.empty() ? 0 : 3 + reason_string.size();
  const size_t remaining = props != 0 ? 1 + varint_size(static_cast<uint32_t>(props)) + props : code != 0 ? 1 : 0;
  if (packet_size(remaining, cap) == 0) return 0;
  Writer w{out, 0};
  w.byte(0xE0);
  w.varint(static_cast<uint32_t>(remaining));
  if (remaining == 0) return w.len;
  w.byte(code);
  if (props == 0) return w.len;
  w.varint(static_cast<uint32_t>(props));
  w.byte(static_cast<uint8_t>(PropertyId::kReasonString));
  w.string(reason_string);
  return w.len;
}

// ---- Topics (4.7).

bool valid_topic_name(StrView topic) {
  if (topic.empty() || !utf8_ok(topic)) return false;  // [MQTT-4.7.3-1, -2, -3]
  for (char c : topic)
    if (is_wildcard(c)) return false;  // [MQTT-4.7.0-1]
  return true;
}

bool valid_topic_filter(StrView filter) {
  if (filter.empty() || !utf8_ok(filter)) return false;
  bool shared;
  const StrView f = unshared(filter, &shared);
  if (f.empty()) return false;  // [MQTT-4.8.2-1, -2]
  size_t level = 0;             // where the current level starts
  for (size_t i = 0; i <= f.size(); ++i) {
    if (i < f.size() && f[i] != '/') continue;
    const StrView l = f.sub(level, i - level);
    for (size_t k = 0; k < l.size(); ++k)
      if (is_wildcard(l[k]) && l.size() != 1) return false;  // [MQTT-4.7.1-2]: a whole level
    if (l.size() == 1 && l[0] == '#' && i != f.size()) return false;  // [MQTT-4.7.1-1]: last
    level = i + 1;
  }
  return true;
}

bool topic_matches(StrView filter, StrView topic) {
  if (filter.empty() || topic.empty()) return false;
  if (topic[0] == '$' && is_wildcard(filter[0])) return false;  // [MQTT-4.7.2-1]
  size_t fp = 0, tp = 0;
  bool topic_done = false;  // every level of the topic is matched
  for (;;) {
    size_t fe = fp;
    while (fe < filter.size() && filter[fe] != '/') ++fe;
    const StrView fl = filter.sub(fp, fe - fp);
    // `#` matches the rest, and the parent level too ("sport/#" matches "sport").
    if (fl.size() == 1 && fl[0] == '#') return fe == filter.size();
    if (topic_done) return false;
    size_t te = tp;
    while (te < topic.size() && topic[te] != '/') ++te;
    const bool plus = fl.size() == 1 && fl[0] == '+';
    if (!plus && fl != topic.sub(tp, te - tp)) return false;
    const bool filter_last = fe == filter.size(), topic_last = te == topic.size();
    if (filter_last) return topic_last;
    fp = fe + 1;
    if (topic_last) topic_done = true;
    else tp = te + 1;
  }
}

}  // namespace mqtt
EMCP_NS_END
