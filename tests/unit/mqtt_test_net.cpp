// See mqtt_test_net.h.
#include "mqtt_test_net.h"

namespace emcp_test {

uint64_t MqttClock::now = 1000;

namespace {

bool varint(std::string_view b, size_t* pos, uint32_t* out) {
  uint32_t v = 0, mul = 1;
  for (int i = 0; i < 4; ++i) {
    if (*pos >= b.size()) return false;
    const uint8_t c = static_cast<uint8_t>(b[(*pos)++]);
    v += (c & 0x7Fu) * mul;
    if ((c & 0x80u) == 0) {
      *out = v;
      return true;
    }
    mul *= 128;
  }
  return false;
}

uint16_t u16(std::string_view b, size_t pos) {
  return static_cast<uint16_t>((static_cast<uint8_t>(b[pos]) << 8) | static_cast<uint8_t>(b[pos + 1]));
}

std::string str(std::string_view b, size_t* pos) {
  const uint16_t n = u16(b, *pos);
  std::string s(b.substr(*pos + 2, n));
  *pos += 2u + n;
  return s;
}

void put_varint(std::vector<uint8_t>& v, uint32_t n) {
  do {
    uint8_t c = n % 128;
    n /= 128;
    if (n != 0) c |= 0x80;
    v.push_back(c);
  } while (n != 0);
}

void put_str(std::vector<uint8_t>& v, const std::string& s) {
  v.push_back(static_cast<uint8_t>(s.size() >> 8));
  v.push_back(static_cast<uint8_t>(s.size()));
  v.insert(v.end(), s.begin(), s.end());
}

}  // namespace

std::vector<SentPacket> parse_sent(std::string_view bytes) {
  std::vector<SentPacket> out;
  size_t pos = 0;
  while (pos < bytes.size()) {
    SentPacket p;
    p.type = static_cast<uint8_t>(static_cast<uint8_t>(bytes[pos]) >> 4);
    p.flags = static_cast<uint8_t>(bytes[pos] & 0x0F);
    ++pos;
    uint32_t len = 0;
    if (!varint(bytes, &pos, &len) || pos + len > bytes.size()) {
      ADD_FAILURE() << "a truncated packet at byte " << pos;
      return out;
    }
    p.body = std::string(bytes.substr(pos, len));
    pos += len;
    if (p.type == 3) {  // PUBLISH (3.3)
      const std::string_view b = p.body;
      size_t q = 0;
      p.topic = str(b, &q);
      if (((p.flags >> 1) & 3) != 0) {
        p.id = u16(b, q);
        q += 2;
      }
      uint32_t plen = 0;
      EXPECT_TRUE(varint(b, &q, &plen));
      const size_t end = q + plen;
      while (q < end) {
        const uint8_t id = static_cast<uint8_t>(b[q++]);
        if (id == 0x26) {
          std::string k = str(b, &q);
          std::string v = str(b, &q);
          p.user.emplace_back(k, v);
        } else if (id == 0x01) {
          p.numbers.emplace_back(id, static_cast<uint8_t>(b[q++]));
        } else if (id == 0x03) {
          (void)str(b, &q);
        } else {
          ADD_FAILURE() << "an unexpected PUBLISH property " << int(id);
          return out;
        }
      }
      p.payload = std::string(b.substr(end));
    }
    out.push_back(p);
  }
  return out;
}

std::vector<uint8_t> broker_publish(const std::string& topic, const std::string& payload, uint16_t id,
                                    const std::vector<std::pair<std::string, std::string>>& user) {
  std::vector<uint8_t> props;
  for (const auto& kv : user) {
    props.push_back(0x26);
    put_str(props, kv.first);
    put_str(props, kv.second);
  }
  std::vector<uint8_t> body;
  put_str(body, topic);
  if (id != 0) {
    body.push_back(static_cast<uint8_t>(id >> 8));
    body.push_back(static_cast<uint8_t>(id));
  }
  put_varint(body, static_cast<uint32_t>(props.size()));
  body.insert(body.end(), props.begin(), props.end());
  body.insert(body.end(), payload.begin(), payload.end());
  std::vector<uint8_t> pkt{static_cast<uint8_t>(id != 0 ? 0x32 : 0x30)};
  put_varint(pkt, static_cast<uint32_t>(body.size()));
  pkt.insert(pkt.end(), body.begin(), body.end());
  return pkt;
}

std::vector<uint8_t> broker_suback(uint16_t id, uint8_t code) {
  return {0x90, 0x04, static_cast<uint8_t>(id >> 8), static_cast<uint8_t>(id), 0x00, code};
}

}  // namespace emcp_test
