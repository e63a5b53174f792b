// emcp/mqtt/client.h - an MQTT 5.0 client over the port contract: one connection to one broker,
// dialed through a transport::Dialer, kept up (keep-alive, reconnection with capped exponential
// backoff and jitter), within what the broker's CONNACK allows (Maximum Packet Size, Receive
// Maximum, Maximum QoS, Retain Available).
//
// The client knows nothing of MCP: what it receives goes to a ClientEvents table (the MCP
// binding, emcp/mqtt/mcp.h, fills one), and it publishes what it is given. Session Expiry is
// always 0 with Clean Start (the MCP-over-MQTT text requires it): every connection starts
// afresh, the owner subscribes again in on_connected, and a QoS 1 message the broker had not
// acknowledged when the connection ended is not sent again (MQTT resends only within a
// session).
//
// Output: every packet is built in one transmit buffer the caller gives (tx), and leaves in
// order. A message whose length is not known before it is written (an MCP answer streamed out
// of the JSON writer) is written into the buffer's free tail by the owner between
// begin_message() and end_message(), which puts the PUBLISH header in front of it: a message
// longer than max_message() (or than the broker's Maximum Packet Size) cannot be sent and the
// owner learns it at end_message() (kNoSpace), before anything of it left. A message may be
// held until the SUBACK of a given SUBSCRIBE arrived (MCP over MQTT: the initialize answer
// after the subscriptions to the client's topics are in place); what follows it waits too.
//
// Storage: the caller's (a packet head buffer, the transmit buffer); StaticClient<> carries its
// own. Zero heap.
//
// Context: the loop that owns the connection (the port's dialer reports to handler(); poll()
// from the loop, every 100 ms or so).
//
// Example:
//   static emcp::mqtt::StaticClient<> mqtt(kPlatform, listener.dialer(), events, &app);
//   mqtt.options().host = "10.0.2.2";
//   mqtt.options().client_id = "sensor-17";
//   mqtt.start();
//   ... loop: listener.run_once(100); mqtt.poll();
#ifndef EMCP_MQTT_CLIENT_H
#define EMCP_MQTT_CLIENT_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/mqtt/packet.h"
#include "emcp/platform.h"
#include "emcp/transport/connection.h"

EMCP_NS_BEGIN
namespace mqtt {

/// What the client tells its owner. Every function is called from inside the client's calls
/// (the port's receive, writable and closed, and poll()), never from inside the owner's calls to
/// the client (publish, subscribe, the message functions); it may call those, but not stop() or
/// start().
struct ClientEvents {
  /// CONNACK with Success: the connection is up. `connack` carries the broker's limits and its
  /// user properties (valid during the call). Subscribe and announce here.
  void (*connected)(void* ctx, const Packet& connack) = nullptr;
  /// The connection is gone (a reconnection follows unless stop() was called). `reason`: why
  /// (the broker's DISCONNECT reason, the reason emcp sent, or kUnspecifiedError for a lost
  /// connection). A loss found inside one of the owner's calls (a write the port refused) is
  /// told after it: when the port's call that led to it returns, or at the next poll().
  void (*disconnected)(void* ctx, Reason reason) = nullptr;
  /// A PUBLISH arrived: its head (topic, properties; valid during the call). Its payload follows
  /// through payload() in chunks, then publish_end(). The client acknowledges a QoS 1 message
  /// after publish_end() returned.
  void (*publish)(void* ctx, const Packet& head) = nullptr;
  void (*payload)(void* ctx, StrView chunk) = nullptr;
  void (*publish_end)(void* ctx) = nullptr;
  /// SUBACK / UNSUBACK for `packet_id`: one reason code per filter, in order.
  void (*subscribed)(void* ctx, uint16_t packet_id, StrView reason_codes) = nullptr;
  void (*unsubscribed)(void* ctx, uint16_t packet_id, StrView reason_codes) = nullptr;
  void* ctx = nullptr;
};

struct ClientOptions {
  const char* host = "127.0.0.1";    ///< the broker (NUL-terminated; must outlive the client)
  uint16_t port = 1883;
  StrView client_id;                 ///< must outlive the client; empty: the broker assigns one
  StrView username;
  StrView password;
  uint16_t keep_alive_s = 30;        ///< 0: no keep-alive (not recommended)
  /// No PINGRESP this long after a PINGREQ: the broker is stalled; the connection is closed
  /// (reason Keep Alive timeout) and dialed again. The keep-alive in force bounds it (the
  /// smaller of the two applies), so a short keep-alive notices a stalled broker within twice
  /// its value.
  uint32_t ping_timeout_ms = 10000;
  /// From dial to CONNACK. Once the CONNECT is out, the keep-alive (keep_alive_s) bounds the
  /// wait for the CONNACK as it bounds the wait for a PINGRESP.
  uint32_t connect_timeout_ms = 10000;
  uint32_t send_timeout_ms = 5000;      ///< the longest wait for the broker to take output
  uint32_t backoff_min_ms = 500;        ///< first wait before dialing again
  uint32_t backoff_max_ms = 30000;      ///< the cap of the doubling
  uint16_t receive_maximum = 16;        ///< QoS 1 messages the broker may send unacknowledged
  /// CONNECT's user properties (MCP-COMPONENT-TYPE, MCP-META); must outlive the client.
  const UserProperty* user = nullptr;
  size_t user_count = 0;
  /// The Will (nullptr: none); must outlive the client.
  const Will* will = nullptr;
};

/// Counters for diagnostics and tests.
struct ClientStats {
  uint32_t dials = 0;             ///< connection attempts
  uint32_t connects = 0;          ///< CONNACKs with Success
  uint32_t refused = 0;           ///< CONNACKs with an error reason
  uint32_t protocol_errors = 0;   ///< connections ended for a malformed packet or a protocol error
  uint32_t keepalive_timeouts = 0;
  uint32_t published = 0;         ///< PUBLISH packets sent
  uint32_t qos0_fallbacks = 0;    ///< QoS 1 asked, sent at QoS 0: the broker's Receive Maximum was reached
  uint32_t too_large = 0;         ///< messages refused at end_message() (longer than may be sent)
  uint32_t puback_errors = 0;     ///< PUBACKs with a reason code of 0x80 or above
  uint32_t received = 0;          ///< PUBLISH packets received
  uint32_t held_released_early = 0;  ///< held messages sent before their SUBACK (output needed the room)
  uint32_t left = 0;              ///< connections the owner ended with leave()
};

class Client {
 public:
  /// What the transmit buffer needs beside the longest payload: a PUBLISH header (a topic of up
  /// to 200 bytes and emcp's properties) and control packets queued meanwhile.
  static constexpr size_t kOverhead = 512;

  enum class State : uint8_t { kStopped, kBackoff, kDialing, kConnecting, kConnected };

  /// `head`/`head_cap`: for received packet heads (a CONNACK, a PUBLISH's topic and properties;
  /// 512 bytes is ample). `tx`/`tx_cap`: the transmit buffer; max_message() is what is left of
  /// it after the room a PUBLISH header and a few control packets need. `max_packet`: the
  /// Maximum Packet Size announced in CONNECT (longer packets from the broker end the
  /// connection: it must not send them). All must outlive the client.
  Client(const Platform& platform, const transport::Dialer& dialer, const ClientEvents& events, char* head,
         size_t head_cap, char* tx, size_t tx_cap, uint32_t max_packet);
  Client(const Client&) = delete;
  Client& operator=(const Client&) = delete;

  /// Who hears of connections and messages (replaces the table given to the constructor).
  void set_events(const ClientEvents& events) { events_ = events; }
  /// The settings used by the next dial (change them before start()).
  ClientOptions& options() { return options_; }
  /// What the dialer reports to.
  transport::ConnectionHandler handler() { return transport::ConnectionHandler(&kOps, this); }

  /// Dials now, and keeps the connection up from then on.
  void start();
  /// Sends DISCONNECT (Normal disconnection: the broker discards the Will) after what is queued,
  /// closes, and stays down.
  void stop();
  /// Timers: keep-alive, connect timeout, backoff. Call every 100 ms or so.
  void poll();
  /// Ends the connection now (the owner found it useless: the broker refused what it needs), with
  /// a DISCONNECT of reason `why` (kDisconnectWithWill: the broker publishes the Will), logs `text`
  /// through the Platform, and dials again after a backoff that doubles from one leave() to the
  /// next (up to backoff_max_ms; start() or settled() begins again from backoff_min_ms), as a
  /// broker that accepts the connection does not reset it. The owner hears disconnected()
  /// (within this call when it is not inside one of its own calls on the client).
  void leave(Reason why, StrView text);
  /// The owner found the connection useful after all (what leave() was for is granted now): the
  /// next leave() waits from backoff_min_ms again.
  void settled() { leave_backoff_ms_ = 0; }

  State state() const { return state_; }
  bool connected() const { return state_ == State::kConnected; }
  const ClientStats& stats() const { return stats_; }
  /// The client identifier in use (the broker's assigned one if it assigned one), valid while
  /// connected.
  StrView client_id() const;

  /// Sends SUBSCRIBE; returns its packet identifier, or 0 (not connected, or no room).
  uint16_t subscribe(const Subscription* subs, size_t n);
  uint16_t unsubscribe(const StrView* filters, size_t n);
  /// Publishes a message whose payload is at hand. QoS 1 is sent at QoS 0 when the broker's
  /// Receive Maximum is reached (counted); retain is dropped when the broker has no Retain.
  Status publish(const PublishHeader& h, StrView payload);

  /// Room for the payload of a message to be sent with header `h` (its topic and properties;
  /// the same at end_message()), written straight into the transmit buffer: max_message()
  /// bytes, or an empty span when not connected or the buffer cannot be freed in time (then the
  /// connection is dropped). A held message still waiting for its SUBACK is sent at once when
  /// only it is in the way (counted). Follow with end_message() or drop_message().
  Span<char> begin_message(const PublishHeader& h);
  /// Frees the transmit buffer for a message with header `h` now, waiting for the broker as
  /// begin_message(h) would, so that the message begun next does not wait inside its writer:
  /// the MCP transport calls it before it hands a request to the server, where the stack is
  /// shallow (a wait runs the port's pump: the network stack's input and timers). Unlike
  /// begin_message() it never sends a held message early: when only held bytes are in the way
  /// it returns false and the connection stays. false also when not connected, or when the
  /// buffer could not be freed in time (the connection is then dropped).
  bool ready_for_message(const PublishHeader& h);
  /// Sends the `len` bytes written into begin_message()'s span as the payload of `h`.
  /// `after_suback`: hold it (and what follows) until the SUBACK of that packet id arrives (0:
  /// no hold). kNoSpace: longer than the span, or than the broker's Maximum Packet Size
  /// allows: nothing was sent. kClosed: not connected, or the connection was lost sending it.
  Status end_message(const PublishHeader& h, size_t len, uint16_t after_suback = 0);
  void drop_message() { writing_ = false; }
  /// The longest payload begin_message() gives room for.
  size_t max_message() const;

 private:
  static const transport::ConnectionHandler::Ops kOps;
  static constexpr size_t kMaxHolds = 4;
  class OwnerCall;  // marks the owner's calls: a loss inside one is told after it
  struct Hold {
    size_t at;      // offset in tx_ where held bytes start
    uint16_t suback;
    bool released;
  };

  // ConnectionHandler.
  size_t on_receive(const uint8_t* data, size_t n);
  void on_writable();
  void on_closed();

  void dial();
  void lost(Reason why, bool send_disconnect);
  void tell_disconnected(Reason why);  // now, or once the owner's call returned
  void tell_pending();                 // what tell_disconnected() put off, outside the owner's calls
  void schedule_backoff();
  void handle_packet();
  bool queue(const char* data, size_t n);  // appends a whole packet, or false (no room)
  char* room(size_t n);                    // room for n bytes at the end of the queue, or nullptr
  void flush();                            // sends what the port takes now
  // Flushes (waiting up to send_timeout_ms) until n fit; when only held bytes are in the way,
  // sends them early (counted), or, with `release_held` false, returns false at once.
  bool make_room(size_t n, bool release_held = true);
  // Room for a message with header `h` (its header and max_message()), made as make_room()
  // does: the header's size, or 0 (not connected, writing, a header too long, no room).
  size_t free_for(const PublishHeader& h, bool release_held);
  void drain();                            // flushes until all is out (stop()), bounded as above
  size_t sendable() const;                 // bytes before the first unreleased hold
  void compact();
  void release_holds(uint16_t suback);
  uint16_t next_id();
  template <class Encode>
  uint16_t send_with_id(Encode encode);  // SUBSCRIBE, UNSUBSCRIBE: a packet with a new id
  uint64_t now() const { return platform_.now_ms(); }

  const Platform& platform_;
  transport::Dialer dialer_;
  ClientEvents events_;
  ClientOptions options_;
  PacketReader rx_;
  char* tx_;
  size_t tx_cap_;
  size_t tx_start_ = 0;  // first byte not yet taken by the port
  size_t tx_len_ = 0;    // end of queued bytes
  Hold holds_[kMaxHolds] = {};
  uint8_t hold_count_ = 0;
  State state_ = State::kStopped;
  bool writing_ = false;      // between begin_message() and end_message()
  size_t payload_at_ = 0;     // where begin_message() put the payload
  bool stopping_ = false;
  bool in_payload_ = false;
  bool ping_out_ = false;
  bool disconnect_pending_ = false;  // a loss not told yet (found inside an owner's call)
  Reason pending_reason_ = Reason::kSuccess;
  uint8_t owner_calls_ = 0;          // depth of the owner's calls into the client
  uint16_t conn_ = 0;          // our connection number (bumped per dial: late reports of an old one are ignored)
  uint16_t last_id_ = 0;
  uint16_t in_flight_ = 0;     // our QoS 1 PUBLISHes not yet acknowledged
  uint16_t broker_receive_max_ = 65535;
  uint32_t broker_max_packet_ = 0;
  uint8_t broker_max_qos_ = 1;
  bool broker_retain_ = true;
  uint16_t pub_qos1_id_ = 0;   // the incoming QoS 1 PUBLISH being read (0: none)
  uint16_t keep_alive_s_ = 0;  // in force (the broker's Server Keep Alive wins)
  uint32_t backoff_ms_ = 0;
  uint32_t leave_backoff_ms_ = 0;  // the wait after the last leave() (doubles from one to the next)
  uint64_t deadline_ = 0;      // backoff end / connect timeout
  uint64_t last_sent_ = 0;
  uint64_t ping_sent_ = 0;
  uint8_t assigned_len_ = 0;
  char assigned_[64] = {};
  ClientStats stats_;
};

/// A Client with its own head and transmit buffers: room for a payload of `MessageSize` bytes.
template <size_t MessageSize = 4096, size_t HeadSize = 512>
class StaticClient : public Client {
 public:
  StaticClient(const Platform& platform, const transport::Dialer& dialer, const ClientEvents& events,
               uint32_t max_packet = 65536)
      : Client(platform, dialer, events, head_, HeadSize, tx_, sizeof tx_, max_packet) {}

 private:
  char head_[HeadSize];
  char tx_[MessageSize + Client::kOverhead];
};

}  // namespace mqtt
EMCP_NS_END

#endif  // EMCP_MQTT_CLIENT_H
