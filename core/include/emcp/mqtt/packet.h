// emcp/mqtt/packet.h - MQTT 5.0 packets, as a client sends and receives them: encoders that
// write a packet into a caller's buffer, and a reader that decodes incoming packets as their
// bytes arrive, in any split, with every length, flag and property checked.
//
// Section numbers are those of OASIS "MQTT Version 5.0" (7 March 2019). emcp is always the
// client: the reader accepts what a server may send a client (CONNACK, PUBLISH, PUBACK,
// SUBACK, UNSUBACK, PINGRESP, DISCONNECT) and refuses the rest; the encoders write what a
// client sends (CONNECT with a Will, SUBSCRIBE, UNSUBSCRIBE, PUBLISH at QoS 0 and 1, PUBACK,
// PINGREQ, DISCONNECT). QoS 2 is neither sent nor subscribed to; Topic Aliases are not used
// (emcp's CONNECT says Topic Alias Maximum 0, so a server's Topic Alias is a protocol error).
//
// Zero heap: the reader keeps a packet's head (fixed header, variable header, properties; all
// of a packet but a PUBLISH's payload) in a buffer the caller gives it, and hands a PUBLISH's
// payload on in chunks, as views into the bytes pushed, never copied. Views in a Packet stay
// valid until the next push() (those of a PUBLISH's head, through its payload, until the push
// after its kPayloadEnd).
//
// Context: the loop that owns the connection.
//
// Example:
//   static char head[512];
//   emcp::mqtt::PacketReader rx(head, sizeof head, 65536);
//   size_t used;
//   switch (rx.push(bytes, n, &used)) {   // again with bytes + used, n - used until kNeedInput
//     case PacketReader::Event::kPacket: ... rx.packet() ...
//     case PacketReader::Event::kPayload: ... rx.payload() ...
//     case PacketReader::Event::kError: send DISCONNECT with rx.error(), close
//   }
#ifndef EMCP_MQTT_PACKET_H
#define EMCP_MQTT_PACKET_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace mqtt {

/// Control packet types (2.1.2).
enum class PacketType : uint8_t {
  kReserved = 0,
  kConnect = 1,
  kConnack = 2,
  kPublish = 3,
  kPuback = 4,
  kPubrec = 5,
  kPubrel = 6,
  kPubcomp = 7,
  kSubscribe = 8,
  kSuback = 9,
  kUnsubscribe = 10,
  kUnsuback = 11,
  kPingreq = 12,
  kPingresp = 13,
  kDisconnect = 14,
  kAuth = 15,
};

/// Reason codes (2.4), those emcp sends or names when it receives them.
enum class Reason : uint8_t {
  kSuccess = 0x00,                 ///< also Normal disconnection, Granted QoS 0
  kGrantedQos1 = 0x01,
  kGrantedQos2 = 0x02,
  kDisconnectWithWill = 0x04,
  kNoMatchingSubscribers = 0x10,   ///< PUBACK: accepted, nobody subscribed
  kNoSubscriptionExisted = 0x11,   ///< UNSUBACK
  kUnspecifiedError = 0x80,
  kMalformedPacket = 0x81,
  kProtocolError = 0x82,
  kImplementationSpecificError = 0x83,
  kUnsupportedProtocolVersion = 0x84,
  kClientIdentifierNotValid = 0x85,
  kBadUserNameOrPassword = 0x86,
  kNotAuthorized = 0x87,
  kServerUnavailable = 0x88,
  kServerBusy = 0x89,
  kBanned = 0x8A,
  kServerShuttingDown = 0x8B,
  kBadAuthenticationMethod = 0x8C,
  kKeepAliveTimeout = 0x8D,
  kSessionTakenOver = 0x8E,
  kTopicFilterInvalid = 0x8F,
  kTopicNameInvalid = 0x90,
  kPacketIdentifierInUse = 0x91,
  kPacketIdentifierNotFound = 0x92,
  kReceiveMaximumExceeded = 0x93,
  kTopicAliasInvalid = 0x94,
  kPacketTooLarge = 0x95,
  kMessageRateTooHigh = 0x96,
  kQuotaExceeded = 0x97,
  kAdministrativeAction = 0x98,
  kPayloadFormatInvalid = 0x99,
  kRetainNotSupported = 0x9A,
  kQosNotSupported = 0x9B,
  kUseAnotherServer = 0x9C,
  kServerMoved = 0x9D,
  kSharedSubscriptionsNotSupported = 0x9E,
  kConnectionRateExceeded = 0x9F,
  kMaximumConnectTime = 0xA0,
  kSubscriptionIdentifiersNotSupported = 0xA1,
  kWildcardSubscriptionsNotSupported = 0xA2,
};

/// The reason code's name from the table in 2.4 ("Malformed Packet"), or "" when
/// EMCP_ERROR_STRINGS is 0 or the code is not in the table. Static storage.
const char* reason_str(Reason r);

/// Property identifiers (2.2.2.2).
enum class PropertyId : uint8_t {
  kPayloadFormatIndicator = 0x01,
  kMessageExpiryInterval = 0x02,
  kContentType = 0x03,
  kResponseTopic = 0x08,
  kCorrelationData = 0x09,
  kSubscriptionIdentifier = 0x0B,
  kSessionExpiryInterval = 0x11,
  kAssignedClientIdentifier = 0x12,
  kServerKeepAlive = 0x13,
  kAuthenticationMethod = 0x15,
  kAuthenticationData = 0x16,
  kRequestProblemInformation = 0x17,
  kWillDelayInterval = 0x18,
  kRequestResponseInformation = 0x19,
  kResponseInformation = 0x1A,
  kServerReference = 0x1C,
  kReasonString = 0x1F,
  kReceiveMaximum = 0x21,
  kTopicAliasMaximum = 0x22,
  kTopicAlias = 0x23,
  kMaximumQos = 0x24,
  kRetainAvailable = 0x25,
  kUserProperty = 0x26,
  kMaximumPacketSize = 0x27,
  kWildcardSubscriptionAvailable = 0x28,
  kSubscriptionIdentifierAvailable = 0x29,
  kSharedSubscriptionAvailable = 0x2A,
};

/// One property of a received packet. `number` holds a Byte, Two Byte, Four Byte or Variable
/// Byte Integer; `text` a UTF-8 string, binary data, or a User Property's name, `value` its
/// value.
struct Property {
  PropertyId id = PropertyId::kUserProperty;
  uint32_t number = 0;
  StrView text;
  StrView value;
};

/// The properties of a received packet, already checked by the reader (each identifier allowed
/// in its packet, its value well formed, no duplicate but User Property and Subscription
/// Identifier), so walking them cannot fail.
class Properties {
 public:
  constexpr Properties() = default;
  constexpr explicit Properties(StrView raw) : raw_(raw) {}
  /// The property at `*pos` (start with 0) into `*out`, advancing `*pos`; false at the end.
  bool next(size_t* pos, Property* out) const;
  /// The value of the first User Property named `name`, and true; false when there is none.
  bool user(StrView name, StrView* value) const;
  StrView raw() const { return raw_; }

 private:
  StrView raw_;
};

/// A received packet (for a PUBLISH: its head; the payload follows as Event::kPayload chunks).
/// Fields a packet type does not have keep their defaults. Views point into the reader's head
/// buffer: valid until the next push(), and a PUBLISH's through its payload chunks up to and
/// including its kPayloadEnd (the buffer is rewritten when the next packet begins).
struct Packet {
  PacketType type = PacketType::kReserved;
  uint8_t flags = 0;             ///< the fixed header's low four bits
  uint32_t remaining = 0;        ///< the Remaining Length
  uint16_t packet_id = 0;        ///< PUBLISH at QoS 1, PUBACK, SUBACK, UNSUBACK
  Reason reason = Reason::kSuccess;  ///< CONNACK, PUBACK, DISCONNECT (absent: Success)
  StrView reason_codes;          ///< SUBACK, UNSUBACK: one code per topic filter, in order
  Properties props;
  StrView reason_string;         ///< the Reason String property (empty: none)

  // CONNACK (3.2): what the server allows, its defaults where a property is absent.
  bool session_present = false;
  uint16_t receive_maximum = 65535;
  uint32_t maximum_packet_size = 0;   ///< 0: no limit given
  uint8_t maximum_qos = 2;
  bool retain_available = true;
  bool wildcard_available = true;
  bool server_keep_alive_set = false;
  uint16_t server_keep_alive = 0;
  StrView assigned_client_id;         ///< empty: none assigned

  // PUBLISH (3.3).
  uint8_t qos = 0;
  bool retain = false;
  bool dup = false;
  StrView topic;
  uint32_t payload_len = 0;
};

/// Decodes the packets a server sends a client, byte by byte. A packet that breaks a rule of the
/// text ends with Event::kError and the reason code to send in the DISCONNECT (Malformed Packet,
/// Protocol Error, Packet Too Large, Topic Name invalid, Topic Alias invalid); the reader then
/// refuses input until reset() (the connection is over).
class PacketReader {
 public:
  enum class Event : uint8_t {
    kNeedInput,   ///< everything pushed was consumed; push more
    kPacket,      ///< packet() is a whole packet, or a PUBLISH's head (its payload follows)
    kPayload,     ///< payload() is the next chunk of the current PUBLISH's payload
    kPayloadEnd,  ///< the current PUBLISH's payload is complete (also after an empty one)
    kError,       ///< error() says why; reset() before reusing
  };

  /// `head`/`head_cap`: where a packet's head is kept (a CONNACK with its properties, a
  /// PUBLISH's topic and properties, a SUBACK's codes); a head longer than this is refused with
  /// Packet Too Large, as is a packet longer than `max_packet` (the Maximum Packet Size the
  /// client announced in its CONNECT; 0: none announced, no limit but the head's).
  PacketReader(char* head, size_t head_cap, uint32_t max_packet);
  PacketReader(const PacketReader&) = delete;
  PacketReader& operator=(const PacketReader&) = delete;

  /// Consumes bytes from `data` up to the next event and sets `*used` to how many. Call again
  /// with the rest after each event but kNeedInput, even when the rest is empty (a PUBLISH's
  /// kPayloadEnd may come from a call without bytes; a chunk of payload points into `data`).
  /// After kError, returns kError without consuming anything until reset().
  Event push(const uint8_t* data, size_t n, size_t* used);
  /// A new connection: forgets any partial packet and a previous error.
  void reset();

  const Packet& packet() const { return packet_; }
  StrView payload() const { return payload_; }
  Reason error() const { return error_; }
  /// Why, in a few words (for a log line and the DISCONNECT's Reason String; "" when
  /// EMCP_ERROR_STRINGS is 0).
  const char* error_text() const { return error_text_; }
  uint32_t max_packet() const { return max_packet_; }

 private:
  enum class Stage : uint8_t { kType, kLength, kHead, kPayload, kFailed };
  Event fail(Reason r, const char* why);
  Event parse_head();
  size_t head_wanted() const;

  char* head_;
  size_t head_cap_;
  uint32_t max_packet_;
  Stage stage_ = Stage::kType;
  uint8_t first_ = 0;         // the fixed header's first byte
  uint8_t length_bytes_ = 0;  // Remaining Length bytes read so far
  uint32_t remaining_ = 0;
  uint32_t multiplier_ = 1;
  size_t head_len_ = 0;       // bytes of the head kept
  uint32_t payload_left_ = 0;
  Packet packet_;
  StrView payload_;
  Reason error_ = Reason::kSuccess;
  const char* error_text_ = "";
};

// ---- Encoders: each writes one whole packet into `out` and returns its length, or 0 when it
// does not fit `cap` or an argument breaks a rule of the text (a string over 65,535 bytes or not
// UTF-8, a wildcard in a topic name, QoS above 1, more than 268,435,455 bytes).

struct UserProperty {
  StrView name;
  StrView value;
};

/// The Will (3.1.2.5, 3.1.3.2-3.1.3.4): published by the server when the connection ends
/// without a DISCONNECT (or with reason 0x04).
struct Will {
  StrView topic;
  StrView payload;
  uint8_t qos = 0;
  bool retain = false;
  const UserProperty* user = nullptr;
  size_t user_count = 0;
};

struct ConnectOptions {
  StrView client_id;                   ///< empty: the server assigns one (CONNACK)
  uint16_t keep_alive_s = 60;
  bool clean_start = true;
  uint32_t session_expiry_s = 0;       ///< 0: the session ends with the connection
  uint16_t receive_maximum = 65535;    ///< QoS 1 PUBLISHes the client takes unacknowledged
  uint32_t maximum_packet_size = 0;    ///< 0: not sent (no limit)
  StrView username;                    ///< empty: none
  StrView password;                    ///< empty: none
  const UserProperty* user = nullptr;
  size_t user_count = 0;
  const Will* will = nullptr;          ///< nullptr: no Will
};
size_t encode_connect(const ConnectOptions& o, char* out, size_t cap);

/// One topic filter and its Subscription Options (3.8.3.1).
struct Subscription {
  StrView filter;
  uint8_t max_qos = 1;
  bool no_local = false;
  bool retain_as_published = false;
  uint8_t retain_handling = 0;  ///< 0: send retained messages at subscribe; 1: if new; 2: never
};
size_t encode_subscribe(uint16_t packet_id, const Subscription* subs, size_t n, char* out, size_t cap);
size_t encode_unsubscribe(uint16_t packet_id, const StrView* filters, size_t n, char* out, size_t cap);

/// A PUBLISH's fixed and variable header; the payload is sent after it.
struct PublishHeader {
  StrView topic;
  uint8_t qos = 0;
  bool retain = false;
  bool dup = false;
  uint16_t packet_id = 0;        ///< QoS 1: non-zero
  bool utf8_payload = false;     ///< adds Payload Format Indicator 1 (the payload is UTF-8)
  StrView content_type;          ///< empty: none
  const UserProperty* user = nullptr;
  size_t user_count = 0;
};
/// The header's length for a payload of `payload_len` bytes (0 when it cannot be encoded), so
/// that a payload already in a buffer can get its header written in front of it.
size_t publish_header_size(const PublishHeader& h, uint32_t payload_len);
size_t encode_publish_header(const PublishHeader& h, uint32_t payload_len, char* out, size_t cap);

size_t encode_puback(uint16_t packet_id, Reason reason, char* out, size_t cap);
size_t encode_pingreq(char* out, size_t cap);
/// `reason_string` empty: none (with Success and no string, the short form of 3.14.2.1).
size_t encode_disconnect(Reason reason, StrView reason_string, char* out, size_t cap);

// ---- Topics (4.7).

/// A Topic Name a client may publish to: 1..65,535 bytes of UTF-8 without U+0000, no `+` or
/// `#`.
bool valid_topic_name(StrView topic);
/// A Topic Filter a client may subscribe to: as above, with `+` and `#` only as whole levels
/// and `#` only last.
bool valid_topic_filter(StrView filter);
/// True when `topic` matches `filter` (4.7.1, 4.7.2: a filter starting with a wildcard does not
/// match a topic starting with `$`).
bool topic_matches(StrView filter, StrView topic);

}  // namespace mqtt
EMCP_NS_END

#endif  // EMCP_MQTT_PACKET_H
