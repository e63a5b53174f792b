// libFuzzer target: the MQTT 5.0 packet reader (emcp/mqtt/packet.h).
// Input: byte 0 picks the head buffer's size, byte 1 the Maximum Packet Size, byte 2 seeds the
// splits; the rest is what a server sent. Properties checked on every input:
//  1. No crash, no read outside the bytes pushed or the head buffer (ASan), whatever the bytes.
//  2. push() consumes at most what it is given, kNeedInput only when it took everything, and it
//     never stalls: at most one event in a row without consuming a byte (a PUBLISH's kPayloadEnd).
//  3. Every view of a packet lies in the head buffer; its properties walk to their exact end;
//     a packet is no larger than the Maximum Packet Size; payload chunks lie in the bytes pushed,
//     come only inside a PUBLISH, and add up to its payload_len at kPayloadEnd.
//  4. After kError, push() consumes nothing and says kError again; the reason is one the reader
//     may give.
//  5. The same events, packets and payload bytes whether the input is pushed whole or in random
//     pieces.
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "emcp/mqtt/packet.h"

namespace {

using namespace emcp::mqtt;
using emcp::StrView;
using Event = PacketReader::Event;

// What a run saw, as a running FNV-1a hash and a length: equal runs give equal traces.
struct Trace {
  uint64_t hash;
  uint64_t bytes;
  void put(const void* p, size_t n) {
    for (size_t i = 0; i < n; ++i) hash = (hash ^ static_cast<const uint8_t*>(p)[i]) * 0x100000001b3u;
    bytes += n;
  }
  void put(StrView s) {
    const uint32_t n = static_cast<uint32_t>(s.size());
    put(&n, sizeof n);
    put(s.data(), s.size());
  }
};

Trace g_whole, g_split;
char g_head[4096];

bool inside(StrView v, const void* start, size_t n) {
  const char* b = static_cast<const char*>(start);
  return v.size() == 0 || (v.data() >= b && v.data() + v.size() <= b + n);
}

void check_packet(const Packet& p, size_t head_cap, uint32_t max_packet, Trace& log) {
  const StrView views[] = {p.topic, p.reason_codes, p.reason_string, p.assigned_client_id, p.props.raw()};
  for (const StrView& v : views)
    if (!inside(v, g_head, head_cap)) abort();
  // The reader accepts only what a server sends a client: CONNACK (2), PUBLISH (3), PUBACK (4),
  // SUBACK (9), UNSUBACK (11), PINGRESP (13), DISCONNECT (14).
  constexpr unsigned kFromServer = 1u << 2 | 1u << 3 | 1u << 4 | 1u << 9 | 1u << 11 | 1u << 13 | 1u << 14;
  if (((kFromServer >> static_cast<unsigned>(p.type)) & 1u) == 0) abort();
  uint32_t fixed = 2;
  for (uint32_t r = p.remaining; r >= 128; r /= 128) ++fixed;
  if (max_packet != 0 && fixed + static_cast<uint64_t>(p.remaining) > max_packet) abort();
  if (p.payload_len > p.remaining) abort();
  if (p.type == PacketType::kPublish && (p.topic.empty() || p.qos > 1)) abort();
  size_t pos = 0;
  Property prop;
  const StrView raw = p.props.raw();
  size_t count = 0;
  while (p.props.next(&pos, &prop)) {
    if (!inside(prop.text, raw.data(), raw.size()) || !inside(prop.value, raw.data(), raw.size())) abort();
    if (++count > raw.size()) abort();
  }
  if (pos != raw.size()) abort();  // the reader checked them all: the walk ends at their end
  const uint8_t tag = 'K';
  log.put(&tag, 1);
  const uint32_t fields[] = {static_cast<uint32_t>(p.type), p.flags, p.remaining, p.packet_id,
                             static_cast<uint32_t>(p.reason), p.payload_len, p.receive_maximum,
                             p.maximum_packet_size, p.maximum_qos, p.session_present};
  log.put(fields, sizeof fields);
  for (const StrView& v : views) log.put(v);
}

// Pushes `data` to a reader in pieces: whole when `seed` is 0, else of pseudo-random sizes.
void run(const uint8_t* data, size_t size, size_t head_cap, uint32_t max_packet, uint32_t seed, Trace& log) {
  log = Trace{0xcbf29ce484222325u, 0};
  PacketReader rx(g_head, head_cap, max_packet);
  size_t off = 0;
  uint64_t payload = 0;
  bool in_payload = false;
  uint32_t state = seed;
  while (off < size) {
    size_t n = size - off;
    if (seed != 0) {
      state = state * 1103515245u + 12345u;
      const size_t piece = 1 + (state >> 16) % 9;
      if (piece < n) n = piece;
    }
    const uint8_t* d = data + off;
    off += n;
    int idle = 0;  // events in a row that consumed nothing
    for (;;) {
      size_t used = 0;
      const Event e = rx.push(d, n, &used);
      if (used > n) abort();
      if (e == Event::kNeedInput && used != n) abort();
      if (e == Event::kError) {
        const Reason r = rx.error();
        if (r != Reason::kMalformedPacket && r != Reason::kProtocolError && r != Reason::kPacketTooLarge &&
            r != Reason::kTopicNameInvalid && r != Reason::kTopicAliasInvalid)
          abort();
        size_t again = 1;
        if (rx.push(d + used, n - used, &again) != Event::kError || again != 0) abort();
        const uint8_t tag[2] = {'X', static_cast<uint8_t>(r)};
        log.put(tag, 2);
        return;
      }
      if (e != Event::kNeedInput) idle = used == 0 ? idle + 1 : 0;
      if (idle > 1) abort();
      if (e == Event::kPayload) {
        const StrView c = rx.payload();
        if (!in_payload || c.size() == 0 || !inside(c, d, n)) abort();
        payload += c.size();
        if (payload > rx.packet().payload_len) abort();
        log.put(c.data(), c.size());
      }
      d += used;
      n -= used;
      if (e == Event::kNeedInput) break;
      if (e == Event::kPacket) {
        if (in_payload) abort();
        check_packet(rx.packet(), head_cap, max_packet, log);
        in_payload = rx.packet().type == PacketType::kPublish;
        payload = 0;
      } else if (e == Event::kPayloadEnd) {
        if (!in_payload || payload != rx.packet().payload_len) abort();
        in_payload = false;
        const uint8_t tag = 'E';
        log.put(&tag, 1);
      }
    }
  }
  // What is left for an empty push: an empty payload's end.
  size_t used = 0;
  if (rx.push(nullptr, 0, &used) == Event::kPayloadEnd) {
    if (!in_payload || payload != rx.packet().payload_len) abort();
    const uint8_t tag = 'E';
    log.put(&tag, 1);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size < 3 || size > 1 << 16) return 0;
  static const size_t kHeadCaps[] = {0, 2, 5, 16, 64, 300, 1024, sizeof g_head};
  static const uint32_t kMaxPackets[] = {0, 2, 16, 128, 1024, 65536, 0, 300};
  const size_t head_cap = kHeadCaps[data[0] % 8];
  const uint32_t max_packet = kMaxPackets[data[1] % 8];
  const uint32_t seed = data[2] | 1u;
  run(data + 3, size - 3, head_cap, max_packet, 0, g_whole);
  run(data + 3, size - 3, head_cap, max_packet, seed, g_split);
  if (g_whole.hash != g_split.hash || g_whole.bytes != g_split.bytes) abort();
  return 0;
}
