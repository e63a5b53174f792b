// emcp/mqtt/mcp_transport.h - MCP over MQTT 5, the server's role: an mcp::Server reached through a
// broker the device dials out to, as the MCP-over-MQTT text (mqtt-ai/mcp-over-mqtt,
// specification/2025-03-26/basic/mqtt_transport.md; docs/mqtt.md) has it.
//
// - The device is one MCP server instance: its server-id is its MQTT client identifier, its
//   server-name a hierarchical name (`devices/sensors/kitchen`), replaced by the broker's
//   MCP-SERVER-NAME when its CONNACK carries one.
// - Presence: a retained notifications/server/online on `$mcp-server/presence/{id}/{name}` once
//   connected; an empty retained Will on the same topic; an empty retained message before a
//   clean disconnect.
// - A client's `initialize` arrives on the control topic `$mcp-server/{id}/{name}`, its client id
//   in the MCP-MQTT-CLIENT-ID user property. The control topic and the client's topics take live
//   messages only: they are subscribed with Retain Handling 2 (the broker sends nothing it kept),
//   and a message flagged retained on them is dropped (counted: stats().retained). The device subscribes to the client's RPC topic
//   `$mcp-rpc/{client}/{id}/{name}` (No Local), capability topic and presence topic, and answers
//   on the RPC topic once the broker acknowledged the subscriptions (SUBACK). Everything else
//   of that session goes over the RPC topic, but list changes and resource updates, which go
//   once on `$mcp-server/capability/{id}/{name}`.
// - `notifications/disconnected` ends a session from either side (the client's Will on its
//   presence topic does too); the device unsubscribes from the client's topics.
// - Up to the number of client slots the transport was given at once, each its own session; an
//   initialize beyond that is answered with an error on the client's RPC topic.
// - Every PUBLISH carries MCP-COMPONENT-TYPE=mcp-server and MCP-MQTT-CLIENT-ID; the CONNECT
//   carries MCP-COMPONENT-TYPE and MCP-META; Session Expiry 0.
// - Revisions 2024-11-05 to 2025-11-25 (the text binds `initialize`); a 2026-07-28 request has
//   no binding in the text and is refused like any message that is not initialize on the
//   control topic.
//
// An answer is written straight into the MQTT client's transmit buffer (MQTT needs a PUBLISH's
// length before its payload): one longer than the buffer, or than the broker's Maximum Packet
// Size, is replaced by a JSON-RPC error to the same id (-32603, data.maxBytes); a notification
// that long is dropped and counted. The handler ran once either way.
//
// Context: the loop that owns the server.
//
// Example (examples/sensors/main_posix.cpp has a whole one):
//   static emcp::mqtt::StaticMcpTransport<> mqtt(server, kPlatform, listener.dialer());
//   mqtt.options().server_id = "kitchen-1";
//   mqtt.options().server_name = "devices/sensors/kitchen";
//   mqtt.start("127.0.0.1", 1883);
//   ... loop: listener.run_once(100); mqtt.poll();
#ifndef EMCP_MQTT_MCP_TRANSPORT_H
#define EMCP_MQTT_MCP_TRANSPORT_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/reader.h"
#include "emcp/json/sink.h"
#include "emcp/jsonrpc/decoder.h"
#include "emcp/mcp/server.h"
#include "emcp/mqtt/client.h"
#include "emcp/util/arena.h"

EMCP_NS_BEGIN
namespace mqtt {

class McpTransport;

/// What the device tells the broker and its clients about itself.
struct McpOptions {
  /// The server-id: the MQTT client identifier, unique among the broker's clients; no `/`, `+`,
  /// `#`; at most 64 bytes. Must outlive the transport.
  StrView server_id;
  /// The server-name (a topic-style name, no `+` or `#`, at most 128 bytes), unless the broker
  /// names one in its CONNACK (MCP-SERVER-NAME). Must outlive the transport.
  StrView server_name;
  /// notifications/server/online's `description` (plain text; may be empty).
  StrView description;
  /// MCP-META in the CONNECT: a JSON object (empty: `{}`), must outlive the transport.
  StrView meta;
};

/// Counters for diagnostics and tests.
struct McpStats {
  uint32_t sessions = 0;         ///< initialize requests that opened a session
  uint32_t refused = 0;          ///< initialize requests refused (no free slot)
  uint32_t ended = 0;            ///< sessions ended (disconnected from either side, or the broker connection lost)
  uint32_t ended_by_client = 0;  ///< of those, by the client (notifications/disconnected on its RPC topic, or its Will)
  uint32_t ended_by_loss = 0;    ///< of those, by the loss of the broker connection
  uint32_t stray = 0;            ///< messages on no topic of a session (an unknown client, a non-initialize on the control topic...)
  uint32_t retained = 0;         ///< of those, retained messages (stale: the topics served take live ones only)
  uint32_t too_large = 0;        ///< answers replaced by the error, notifications dropped
  uint32_t capability_sent = 0;  ///< notifications sent on the capability topic
  uint32_t subscriptions_refused = 0;  ///< sessions ended because the broker refused a client topic's SUBSCRIBE
  uint32_t control_refused = 0;  ///< connections left because the broker refused the control topic's SUBSCRIBE
};

/// One client's session. Declare as many as clients may be served at once.
class McpClientSlot {
 public:
  McpClientSlot();
  McpClientSlot(const McpClientSlot&) = delete;
  McpClientSlot& operator=(const McpClientSlot&) = delete;
  mcp::Session& session() { return session_; }
  /// The mcp-client-id ("" when free).
  StrView client_id() const { return StrView(id_, id_len_); }

 private:
  friend class McpTransport;
  enum class State : uint8_t { kFree, kSubscribing, kActive };
  static json::Sink* open(void* ctx, const mcp::OutMessage& m);
  static Status close(void* ctx);

  McpTransport* owner_ = nullptr;
  State state_ = State::kFree;
  uint8_t id_len_ = 0;
  uint16_t suback_ = 0;  // the SUBSCRIBE the initialize answer waits for (the last of three)
  uint16_t suback_first_ = 0;  // the first of the three
  char id_[64] = {};
  mcp::Session session_;
};

class McpTransport {
 public:
  /// Serves `server` (not owned) through `client` to at most `slots.size()` clients at once;
  /// `reader` and `arena` decode incoming messages. All must outlive the transport. Sets the
  /// client's events and CONNECT properties.
  McpTransport(mcp::Server& server, Client& client, Span<McpClientSlot> slots, json::Reader& reader, Arena& arena);
  McpTransport(const McpTransport&) = delete;
  McpTransport& operator=(const McpTransport&) = delete;
  ~McpTransport();

  McpOptions& options() { return options_; }
  Client& client() { return client_; }
  /// Connects to the broker at `host` (NUL-terminated, must outlive the transport) `port`, and
  /// stays connected (reconnecting with backoff). kInvalidArgument: the options are not valid
  /// (server_id or server_name empty, too long, or with a character the text forbids).
  Status start(const char* host, uint16_t port);
  /// Ends every session (notifications/disconnected), clears the presence (an empty retained
  /// message), and disconnects cleanly.
  void stop();
  /// Timers (the client's keep-alive and reconnection; a name the broker gave applied). Call
  /// every 100 ms or so (the server's own poll() is its owner's to call).
  void poll();

  /// The server-name in use (the broker's, if it named one).
  StrView server_name() const { return StrView(name_, name_len_); }
  const McpStats& stats() const { return stats_; }
  /// The decoder's arena (its high-water mark for the memory reports).
  const Arena& arena() const { return decoder_.arena(); }
  /// Sessions open now.
  size_t sessions() const;

 private:
  friend class McpClientSlot;
  enum class Inbound : uint8_t { kNone, kControl, kRpc, kClientPresence, kClientCapability };
  static const ClientEvents kEvents;

  void on_connected(const Packet& connack);
  void on_disconnected();
  void on_publish(const Packet& head);
  void on_payload(StrView chunk);
  void on_publish_end();
  void on_subscribed(uint16_t packet_id, StrView codes);
  json::Sink* open_for(McpClientSlot& slot, const mcp::OutMessage& m);
  Status close_for(McpClientSlot& slot);
  void initialize(const jsonrpc::Decoded& d);
  void end_session(McpClientSlot& slot, bool tell_client);
  void client_topics(McpClientSlot& slot, bool subscribe);
  bool publish_small(StrView topic, StrView payload, bool retain);
  void refuse(StrView client, const jsonrpc::Id& id, jsonrpc::ErrorCode code, StrView message);
  McpClientSlot* find(StrView client_id);
  StrView topic(size_t which, StrView client);  // builds a topic into topic_
  PublishHeader header(StrView topic, bool retain) const;

  class RegionSink : public json::Sink {
   public:
    RegionSink() : json::Sink(scratch_, 1, &full, false) {}
    void aim(char* buf, size_t cap) {
      buf_ = buf;
      cap_ = full_cap_ = cap;
      reset();
    }
    StrView view() const { return StrView(buf_, len_); }

   private:
    static Status full(Sink&) { return Status::kNoSpace; }
    char scratch_[1];
  };

  mcp::Server& server_;
  Client& client_;
  Span<McpClientSlot> slots_;
  jsonrpc::Decoder decoder_;
  McpOptions options_;
  const char* host_ = nullptr;
  uint16_t port_ = 0;
  McpStats stats_;
  UserProperty connect_user_[2];
  UserProperty publish_user_[2];
  Will will_;
  // The message being written (between a slot's open and close).
  RegionSink sink_;
  McpClientSlot* writing_ = nullptr;
  mcp::OutMessage writing_msg_;
  PublishHeader writing_header_;
  uint32_t capability_hash_ = 0;  // the last capability notification sent, and when
  uint32_t capability_round_ = 0;
  uint32_t round_ = 0;            // bumped per message received and per poll()
  // The message being received.
  Inbound inbound_ = Inbound::kNone;
  McpClientSlot* inbound_slot_ = nullptr;
  bool inbound_empty_ = false;
  uint8_t inbound_client_len_ = 0;
  char inbound_client_[64] = {};
  bool rename_ = false;          // the broker named the server: reconnect with its name in the Will
  bool renamed_ = false;         // ... done once since start(): a broker that names it anew each time is not followed
  uint8_t name_len_ = 0;
  char name_[128] = {};
  uint16_t control_suback_ = 0;  // the control topic's SUBSCRIBE, until its SUBACK
  uint16_t topic_len_ = 0;
  char topic_[24 + 64 + 64 + 128] = {};  // "$mcp-rpc/" client "/" id "/" name
  char will_topic_[24 + 64 + 128] = {};
};

namespace detail {
template <size_t Clients, size_t MessageSize, size_t ArenaSize>
struct McpStorage {
  McpStorage(const Platform& platform, const transport::Dialer& dialer)
      : client_storage(platform, dialer, ClientEvents{}, static_cast<uint32_t>(EMCP_MAX_MESSAGE_LEN + 1024)) {}
  StaticClient<MessageSize> client_storage;
  McpClientSlot slots_storage[Clients];
  json::StaticReader<> reader_storage;
  StaticArena<ArenaSize> arena_storage;
};
}  // namespace detail

/// An McpTransport with its own MQTT client, decoder and client slots: `Clients` sessions at
/// once, answers up to `MessageSize` bytes, `ArenaSize` bytes to decode a message into.
template <size_t Clients = 4, size_t MessageSize = 4096, size_t ArenaSize = EMCP_ARENA_SIZE>
class StaticMcpTransport : private detail::McpStorage<Clients, MessageSize, ArenaSize>, public McpTransport {
  using Storage = detail::McpStorage<Clients, MessageSize, ArenaSize>;

 public:
  StaticMcpTransport(mcp::Server& server, const Platform& platform, const transport::Dialer& dialer)
      : Storage(platform, dialer),
        McpTransport(server, Storage::client_storage, Span<McpClientSlot>(Storage::slots_storage, Clients),
                     Storage::reader_storage, Storage::arena_storage) {}
};

}  // namespace mqtt
EMCP_NS_END

#endif  // EMCP_MQTT_MCP_TRANSPORT_H
