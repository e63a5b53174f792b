// The MQTT 5 client's connection: dial, CONNECT/CONNACK, keep-alive, the transmit queue with its
// holds, reconnection with backoff.
#include "emcp/mqtt/client.h"
#include "emcp/util/assert.h"

#include <string.h>

EMCP_NS_BEGIN
namespace mqtt {

namespace {
Client& self_of(void* ctx) { return *static_cast<Client*>(ctx); }

// A wait for the broker's answer (CONNACK, PINGRESP), no longer than the keep-alive: it says how
// long a silence is tolerated on this connection (3.1.2.10 leaves "a reasonable amount of time"
// to the client).
uint32_t bounded_by_keep_alive(uint32_t timeout_ms, uint16_t keep_alive_s) {
  const uint32_t ka_ms = uint32_t{keep_alive_s} * 1000u;
  return keep_alive_s != 0 && ka_ms < timeout_ms ? ka_ms : timeout_ms;
}
}  // namespace

// Marks a call of the owner's into the client (publish, subscribe...): a loss of the connection
// found inside it is told once it is over (ClientEvents: never from inside the owner's calls).
class Client::OwnerCall {
 public:
  explicit OwnerCall(Client& c) : c_(c) { ++c_.owner_calls_; }
  ~OwnerCall() { --c_.owner_calls_; }
  OwnerCall(const OwnerCall&) = delete;
  OwnerCall& operator=(const OwnerCall&) = delete;

 private:
  Client& c_;
};

const transport::ConnectionHandler::Ops Client::kOps = {
    /*open*/ [](void*, const transport::PeerAddress&) { return -1; },  // never: we dial
    /*receive*/
    [](void* ctx, uint16_t conn, const void* data, size_t n) -> size_t {
      Client& c = self_of(ctx);
      if (conn != c.conn_ || (c.state_ != State::kConnecting && c.state_ != State::kConnected)) return n;
      const size_t used = c.on_receive(static_cast<const uint8_t*>(data), n);
      c.tell_pending();  // a loss inside the owner's answer to what came
      return used;
    },
    /*wants_input*/ [](void*, uint16_t) { return true; },
    /*writable*/
    [](void* ctx, uint16_t conn) {
      Client& c = self_of(ctx);
      if (conn == c.conn_) c.on_writable();
      c.tell_pending();
    },
    /*closed*/
    [](void* ctx, uint16_t conn) {
      Client& c = self_of(ctx);
      if (conn == c.conn_) c.on_closed();
      c.tell_pending();
    },
    /*poll*/ [](void* ctx) { self_of(ctx).poll(); },
    /*now_ms*/ [](void* ctx) { return self_of(ctx).now(); },
    /*refusal*/ [](void*) { return StrView(); },
};

Client::Client(const Platform& platform, const transport::Dialer& dialer, const ClientEvents& events, char* head,
               size_t head_cap, char* tx, size_t tx_cap, uint32_t max_packet)
    : platform_(platform),
      dialer_(dialer),
      events_(events),
      rx_(head, head_cap, max_packet),
      tx_(tx),
      tx_cap_(tx_cap) {
  EMCP_ASSERT(platform.now_ms != nullptr && dialer.valid() && tx_cap > kOverhead);
}

StrView Client::client_id() const {
  return assigned_len_ != 0 ? StrView(assigned_, assigned_len_) : options_.client_id;
}

size_t Client::max_message() const { return tx_cap_ - kOverhead; }

void Client::start() {
  tell_pending();
  stopping_ = false;
  backoff_ms_ = 0;
  leave_backoff_ms_ = 0;
  if (state_ == State::kStopped || state_ == State::kBackoff) dial();
}

void Client::dial() {
  ++conn_;
  ++stats_.dials;
  rx_.reset();
  tx_start_ = tx_len_ = 0;
  hold_count_ = 0;
  in_flight_ = 0;
  ping_out_ = false;
  writing_ = false;
  in_payload_ = false;
  assigned_len_ = 0;
  state_ = State::kDialing;
  deadline_ = now() + options_.connect_timeout_ms;
  if (dialer_.dial(dialer_.ctx, options_.host, options_.port, conn_, handler()) != Status::kOk) schedule_backoff();
}

void Client::schedule_backoff() {
  if (stopping_) {
    state_ = State::kStopped;
    return;
  }
  // Capped exponential backoff with jitter: a wait in [d/2, d], d doubling from backoff_min_ms
  // to backoff_max_ms, so that a fleet the broker dropped at once does not return at once.
  uint32_t d = backoff_ms_ == 0 ? options_.backoff_min_ms : backoff_ms_ * 2;
  if (d > options_.backoff_max_ms || d < backoff_ms_) d = options_.backoff_max_ms;
  backoff_ms_ = d;
  uint32_t r = 0;
  if (platform_.random == nullptr || !platform_.random(&r, sizeof r)) r = static_cast<uint32_t>(now() * 2654435761u);
  const uint32_t half = d / 2;
  deadline_ = now() + half + (half == 0 ? 0 : r % (half + 1));
  state_ = State::kBackoff;
}

void Client::lost(Reason why, bool send_disconnect) {
  const State was = state_;
  if (was != State::kDialing && was != State::kConnecting && was != State::kConnected) return;
  if (send_disconnect && was != State::kDialing) {
    // The DISCONNECT with the reason, if the port takes it now (the connection is ending).
    hold_count_ = 0;
    char pkt[8];
    const size_t n = encode_disconnect(why, StrView(), pkt, sizeof pkt);
    size_t taken = 0;
    if (tx_start_ == tx_len_ && n != 0) (void)dialer_.port.write(dialer_.port.ctx, conn_, pkt, n, &taken);
  }
  dialer_.port.close(dialer_.port.ctx, conn_);
  ++conn_;  // late reports of the old connection are ignored
  tx_start_ = tx_len_ = 0;
  hold_count_ = 0;
  writing_ = false;
  schedule_backoff();
  if (was == State::kConnected) tell_disconnected(why);
}

void Client::leave(Reason why, StrView text) {
  if (state_ != State::kConnected) return;
  ++stats_.left;
  if (platform_.log != nullptr) platform_.log(text.data(), text.size());
  backoff_ms_ = leave_backoff_ms_;  // schedule_backoff() doubles it
  lost(why, true);
  leave_backoff_ms_ = backoff_ms_;
}

void Client::tell_disconnected(Reason why) {
  if (owner_calls_ != 0) {
    // Inside the owner's call (its publish found the connection gone): the owner may be half way
    // through changing its own state (ending a session), so it hears of it after.
    disconnect_pending_ = true;
    pending_reason_ = why;
    return;
  }
  disconnect_pending_ = false;
  if (events_.disconnected != nullptr) events_.disconnected(events_.ctx, why);
}

void Client::tell_pending() {
  if (disconnect_pending_ && owner_calls_ == 0) tell_disconnected(pending_reason_);
}

void Client::on_closed() {
  // The port freed the slot: nothing to close.
  const State was = state_;
  if (was != State::kDialing && was != State::kConnecting && was != State::kConnected) return;
  ++conn_;
  tx_start_ = tx_len_ = 0;
  hold_count_ = 0;
  writing_ = false;
  schedule_backoff();
  if (was == State::kConnected) tell_disconnected(Reason::kUnspecifiedError);
}

void Client::on_writable() {
  if (state_ == State::kDialing) {
    // Established: CONNECT (3.1). Clean Start, Session Expiry 0, Topic Alias Maximum 0 (not
    // sent: its default), our Maximum Packet Size and Receive Maximum.
    ConnectOptions o;
    o.client_id = options_.client_id;
    o.keep_alive_s = options_.keep_alive_s;
    o.clean_start = true;
    o.session_expiry_s = 0;
    o.receive_maximum = options_.receive_maximum;
    o.maximum_packet_size = rx_.max_packet();
    o.username = options_.username;
    o.password = options_.password;
    o.user = options_.user;
    o.user_count = options_.user_count;
    o.will = options_.will;
    const size_t n = encode_connect(o, tx_, tx_cap_);
    if (n == 0) {  // the options cannot be encoded (too long for the buffer, or invalid)
      if (platform_.log != nullptr) platform_.log("mqtt: CONNECT does not fit the transmit buffer", 46);
      lost(Reason::kImplementationSpecificError, false);
      return;
    }
    tx_start_ = 0;
    tx_len_ = n;
    keep_alive_s_ = options_.keep_alive_s;
    state_ = State::kConnecting;
    const uint64_t connack_by = now() + bounded_by_keep_alive(options_.connect_timeout_ms, keep_alive_s_);
    if (connack_by < deadline_) deadline_ = connack_by;
  }
  flush();
}

size_t Client::on_receive(const uint8_t* data, size_t n) {
  const uint16_t conn = conn_;
  size_t done = 0;
  // Until the reader wants more input: an event may come from a call without bytes (a
  // PUBLISH's end, after its last chunk).
  while (conn == conn_) {
    size_t used = 0;
    const PacketReader::Event ev = rx_.push(data + done, n - done, &used);
    done += used;
    switch (ev) {
      case PacketReader::Event::kNeedInput:
        break;
      case PacketReader::Event::kPacket:
        if (rx_.packet().type == PacketType::kPublish) {
          if (state_ != State::kConnected) {
            ++stats_.protocol_errors;
            lost(Reason::kProtocolError, true);
            return n;
          }
          ++stats_.received;
          pub_qos1_id_ = rx_.packet().qos == 1 ? rx_.packet().packet_id : 0;
          in_payload_ = true;
          if (events_.publish != nullptr) events_.publish(events_.ctx, rx_.packet());
        } else {
          handle_packet();
        }
        break;
      case PacketReader::Event::kPayload:
        if (events_.payload != nullptr) events_.payload(events_.ctx, rx_.payload());
        break;
      case PacketReader::Event::kPayloadEnd: {
        in_payload_ = false;
        const uint16_t id = pub_qos1_id_;
        pub_qos1_id_ = 0;
        if (events_.publish_end != nullptr) events_.publish_end(events_.ctx);
        if (id != 0 && conn == conn_) {
          char* p = room(4);
          if (p == nullptr && make_room(4)) p = room(4);
          if (p == nullptr) return n;  // make_room dropped the connection
          tx_len_ += encode_puback(id, Reason::kSuccess, p, 4);
        }
        break;
      }
      case PacketReader::Event::kError:
        ++stats_.protocol_errors;
        if (platform_.log != nullptr) {
          const char* why = rx_.error_text();
          platform_.log(why, strlen(why));
        }
        lost(rx_.error(), true);
        return n;
    }
    if (ev == PacketReader::Event::kNeedInput) break;
  }
  if (conn == conn_) flush();
  return n;
}

void Client::handle_packet() {
  const Packet& p = rx_.packet();
  if (state_ != State::kConnected && p.type != PacketType::kConnack && p.type != PacketType::kDisconnect) {
    ++stats_.protocol_errors;
    lost(Reason::kProtocolError, true);  // 3.2: the first packet from the server is CONNACK
    return;
  }
  switch (p.type) {
    case PacketType::kConnack:
      if (state_ != State::kConnecting) {  // a second CONNACK
        ++stats_.protocol_errors;
        lost(Reason::kProtocolError, true);
        return;
      }
      if (p.reason != Reason::kSuccess) {
        ++stats_.refused;
        if (platform_.log != nullptr) {
          const char* why = reason_str(p.reason);
          platform_.log(why, strlen(why));
        }
        lost(p.reason, false);  // the broker closes; we wait and dial again
        return;
      }
      if (p.session_present) {
        // Clean Start: we hold no session state, and the broker must not have kept any
        // (3.2.2.1.1); a client without Session State that is told Session Present MUST close
        // the connection [MQTT-3.2.2-4].
        ++stats_.protocol_errors;
        lost(Reason::kProtocolError, true);
        return;
      }
      if (p.assigned_client_id.size() > sizeof assigned_) {
        ++stats_.protocol_errors;
        lost(Reason::kImplementationSpecificError, true);
        return;
      }
      memcpy(assigned_, p.assigned_client_id.data(), p.assigned_client_id.size());
      assigned_len_ = static_cast<uint8_t>(p.assigned_client_id.size());
      broker_receive_max_ = p.receive_maximum;
      broker_max_packet_ = p.maximum_packet_size;
      broker_max_qos_ = p.maximum_qos;
      broker_retain_ = p.retain_available;
      if (p.server_keep_alive_set) keep_alive_s_ = p.server_keep_alive;  // 3.2.2.3.14: it wins
      state_ = State::kConnected;
      backoff_ms_ = 0;
      ++stats_.connects;
      if (events_.connected != nullptr) events_.connected(events_.ctx, p);
      return;
    case PacketType::kPuback:
      if (in_flight_ > 0) --in_flight_;
      if (static_cast<uint8_t>(p.reason) >= 0x80) ++stats_.puback_errors;
      return;
    case PacketType::kSuback:
      release_holds(p.packet_id);
      if (events_.subscribed != nullptr) events_.subscribed(events_.ctx, p.packet_id, p.reason_codes);
      return;
    case PacketType::kUnsuback:
      if (events_.unsubscribed != nullptr) events_.unsubscribed(events_.ctx, p.packet_id, p.reason_codes);
      return;
    case PacketType::kPingresp:
      ping_out_ = false;
      return;
    case PacketType::kDisconnect:
      if (platform_.log != nullptr) {
        const char* why = reason_str(p.reason);
        platform_.log(why, strlen(why));
      }
      lost(p.reason, false);
      return;
    default:  // the reader refuses every other type
      return;
  }
}

void Client::poll() {
  tell_pending();
  const uint64_t t = now();
  switch (state_) {
    case State::kStopped:
      return;
    case State::kBackoff:
      if (t >= deadline_) dial();
      return;
    case State::kDialing:
    case State::kConnecting:
      if (t >= deadline_) lost(Reason::kUnspecifiedError, state_ == State::kConnecting);
      return;
    case State::kConnected:
      break;
  }
  if (ping_out_ && t - ping_sent_ >= bounded_by_keep_alive(options_.ping_timeout_ms, keep_alive_s_)) {
    ++stats_.keepalive_timeouts;
    if (platform_.log != nullptr) platform_.log("mqtt: no PINGRESP: the broker is gone", 38);
    lost(Reason::kKeepAliveTimeout, false);  // 3.1.2.10: close; 0x8D is the server's to send
    return;
  }
  if (keep_alive_s_ != 0 && !ping_out_ && !writing_ && t - last_sent_ >= uint64_t{keep_alive_s_} * 1000u) {
    char* p = room(2);
    if (p == nullptr) return;  // output is queued: it will count as activity once it leaves
    tx_len_ += encode_pingreq(p, 2);
    ping_out_ = true;
    ping_sent_ = t;
  }
  flush();
}

void Client::stop() {
  stopping_ = true;
  if (state_ == State::kConnected) {
    hold_count_ = 0;  // everything queued goes before the DISCONNECT
    char* p = room(4);
    if (p == nullptr && make_room(4)) p = room(4);
    if (p != nullptr) {
      tx_len_ += encode_disconnect(Reason::kSuccess, StrView(), p, 4);
      drain();
    }
  }
  if (state_ == State::kDialing || state_ == State::kConnecting || state_ == State::kConnected) {
    dialer_.port.close(dialer_.port.ctx, conn_);
    ++conn_;
    const bool was_connected = state_ == State::kConnected;
    state_ = State::kStopped;
    if (was_connected) tell_disconnected(Reason::kSuccess);
  }
  state_ = State::kStopped;
  tell_pending();
}

// ---- Output --------------------------------------------------------------------------------

uint16_t Client::next_id() {
  if (++last_id_ == 0) last_id_ = 1;
  return last_id_;
}

size_t Client::sendable() const {
  for (uint8_t i = 0; i < hold_count_; ++i)
    if (!holds_[i].released) return holds_[i].at;
  return tx_len_;
}

void Client::release_holds(uint16_t suback) {
  for (uint8_t i = 0; i < hold_count_; ++i)
    if (holds_[i].suback == suback) holds_[i].released = true;
  uint8_t first = 0;
  while (first < hold_count_ && holds_[first].released) ++first;
  if (first == 0) return;
  memmove(holds_, holds_ + first, (hold_count_ - first) * sizeof(Hold));
  hold_count_ = static_cast<uint8_t>(hold_count_ - first);
}

void Client::compact() {
  if (tx_start_ == 0 || writing_) return;
  memmove(tx_, tx_ + tx_start_, tx_len_ - tx_start_);
  for (uint8_t i = 0; i < hold_count_; ++i) holds_[i].at -= tx_start_;
  tx_len_ -= tx_start_;
  tx_start_ = 0;
}

char* Client::room(size_t n) {
  if (tx_cap_ - tx_len_ < n) compact();
  return tx_cap_ - tx_len_ >= n ? tx_ + tx_len_ : nullptr;
}

void Client::flush() {
  if (state_ != State::kConnecting && state_ != State::kConnected) return;
  const uint16_t conn = conn_;
  size_t end = sendable();
  while (tx_start_ < end) {
    size_t taken = 0;
    if (dialer_.port.write(dialer_.port.ctx, conn, tx_ + tx_start_, end - tx_start_, &taken) != Status::kOk) {
      lost(Reason::kUnspecifiedError, false);
      return;
    }
    if (taken == 0) break;
    tx_start_ += taken;
    last_sent_ = now();
  }
  if (tx_start_ == tx_len_ && hold_count_ == 0 && !writing_) tx_start_ = tx_len_ = 0;
}

bool Client::make_room(size_t n, bool release_held) {
  const uint64_t until = now() + options_.send_timeout_ms;
  for (;;) {
    if (state_ != State::kConnecting && state_ != State::kConnected) return false;
    flush();
    if (state_ != State::kConnecting && state_ != State::kConnected) return false;
    compact();
    if (tx_cap_ - tx_len_ >= n) return true;
    if (tx_start_ == sendable() && hold_count_ != 0) {
      if (!release_held) return false;
      // Only held bytes are in the way: they go now rather than never.
      ++stats_.held_released_early;
      holds_[0].released = true;
      release_holds(holds_[0].suback);
      continue;
    }
    const uint64_t t = now();
    if (t >= until || dialer_.port.wait_writable == nullptr) break;
    const Status s = dialer_.port.wait_writable(dialer_.port.ctx, conn_, static_cast<uint32_t>(until - t));
    if (s == Status::kClosed) break;
  }
  if (platform_.log != nullptr) platform_.log("mqtt: the broker takes no output: connection dropped", 52);
  lost(Reason::kUnspecifiedError, false);
  return false;
}

void Client::drain() {
  const uint64_t until = now() + options_.send_timeout_ms;
  for (;;) {
    flush();
    if (state_ != State::kConnected || tx_start_ == tx_len_) return;
    const uint64_t t = now();
    if (t >= until || dialer_.port.wait_writable == nullptr) return;
    if (dialer_.port.wait_writable(dialer_.port.ctx, conn_, static_cast<uint32_t>(until - t)) == Status::kClosed) return;
  }
}

size_t Client::free_for(const PublishHeader& h, bool release_held) {
  if (state_ != State::kConnected || writing_) return 0;
  PublishHeader sized = h;
  if (sized.qos != 0) sized.packet_id = 1;  // the id is chosen at end_message()
  const size_t head = publish_header_size(sized, static_cast<uint32_t>(max_message()));
  if (head == 0 || head > kOverhead / 2) return 0;
  const size_t need = head + max_message();
  if (tx_cap_ - tx_len_ < need) {
    compact();
    if (tx_cap_ - tx_len_ < need && !make_room(need, release_held)) return 0;
  }
  return head;
}

Span<char> Client::begin_message(const PublishHeader& h) {
  const OwnerCall call(*this);
  const size_t head = free_for(h, true);
  if (head == 0) return Span<char>();
  payload_at_ = tx_len_ + head;
  writing_ = true;
  return Span<char>(tx_ + payload_at_, max_message());
}

bool Client::ready_for_message(const PublishHeader& h) {
  const OwnerCall call(*this);
  return free_for(h, false) != 0;
}

Status Client::end_message(const PublishHeader& h, size_t len, uint16_t after_suback) {
  const OwnerCall call(*this);
  if (!writing_) return Status::kInvalidState;
  writing_ = false;
  if (state_ != State::kConnected) return Status::kClosed;
  if (len > max_message()) {
    ++stats_.too_large;
    return Status::kNoSpace;
  }
  PublishHeader eff = h;
  if (eff.qos > broker_max_qos_) eff.qos = broker_max_qos_;
  if (eff.qos == 1 && in_flight_ >= broker_receive_max_) {
    eff.qos = 0;
    ++stats_.qos0_fallbacks;
  }
  if (!broker_retain_) eff.retain = false;
  eff.packet_id = eff.qos == 1 ? next_id() : 0;
  const size_t head = publish_header_size(eff, static_cast<uint32_t>(len));
  if (head == 0 || head > payload_at_ - tx_len_ ||
      (broker_max_packet_ != 0 && head + len > broker_max_packet_)) {
    ++stats_.too_large;
    return Status::kNoSpace;
  }
  char* at = tx_ + payload_at_ - head;
  (void)encode_publish_header(eff, static_cast<uint32_t>(len), at, head);
  if (at != tx_ + tx_len_) memmove(tx_ + tx_len_, at, head + len);
  if (after_suback != 0 && hold_count_ < kMaxHolds) holds_[hold_count_++] = Hold{tx_len_, after_suback, false};
  tx_len_ += head + len;
  if (eff.qos == 1) ++in_flight_;
  ++stats_.published;
  flush();
  return state_ == State::kConnected ? Status::kOk : Status::kClosed;  // lost while it went out
}

Status Client::publish(const PublishHeader& h, StrView payload) {
  const OwnerCall call(*this);
  if (payload.size() > max_message()) {
    ++stats_.too_large;
    return Status::kNoSpace;
  }
  Span<char> room_for = begin_message(h);
  if (room_for.empty()) return Status::kClosed;
  if (!payload.empty()) memcpy(room_for.data(), payload.data(), payload.size());
  return end_message(h, payload.size());
}

template <class Encode>
uint16_t Client::send_with_id(Encode encode) {
  const OwnerCall call(*this);
  if (state_ != State::kConnected || writing_) return 0;
  const uint16_t id = next_id();
  size_t k = encode(id, tx_ + tx_len_, tx_cap_ - tx_len_);
  if (k == 0) {
    if (!make_room(tx_cap_ / 2)) return 0;
    k = encode(id, tx_ + tx_len_, tx_cap_ - tx_len_);
    if (k == 0) return 0;
  }
  tx_len_ += k;
  flush();
  return id;
}

uint16_t Client::subscribe(const Subscription* subs, size_t n) {
  return send_with_id([&](uint16_t id, char* out, size_t cap) { return encode_subscribe(id, subs, n, out, cap); });
}

uint16_t Client::unsubscribe(const StrView* filters, size_t n) {
  return send_with_id([&](uint16_t id, char* out, size_t cap) { return encode_unsubscribe(id, filters, n, out, cap); });
}

}  // namespace mqtt
EMCP_NS_END
