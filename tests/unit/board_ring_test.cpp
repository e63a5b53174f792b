// The boards' receive ring (boards/common/include/board/ring.h), on the host: bytes come out in
// order, and a loss comes out in its place, never before the bytes that came before it nor
// after the bytes that came after it.
#include "board/ring.h"

#include <gtest/gtest.h>

#include <random>
#include <string>

namespace {

std::string drain(emcp::board::Ring<8>& r) {
  std::string out;
  uint8_t buf[3];
  for (size_t n; (n = r.pop(buf, sizeof buf)) != 0;) out.append(reinterpret_cast<char*>(buf), n);
  return out;
}

}  // namespace

TEST(BoardRing, BytesInOrderUntilFull) {
  emcp::board::Ring<8> r;
  for (uint8_t c = 'a'; c < 'a' + 8; ++c) EXPECT_TRUE(r.push(c));
  EXPECT_TRUE(r.full());
  EXPECT_FALSE(r.room());
  EXPECT_EQ(drain(r), "abcdefgh");
  EXPECT_TRUE(r.room());
  EXPECT_FALSE(r.take_loss());
}

TEST(BoardRing, ALossComesOutWhereItHappened) {
  emcp::board::Ring<8> r;
  EXPECT_TRUE(r.push('a'));
  EXPECT_TRUE(r.push('b'));
  r.lose();
  EXPECT_FALSE(r.room());     // nothing after a loss until the loop has reached it
  EXPECT_FALSE(r.push('c'));  // lost too: part of the same gap
  EXPECT_FALSE(r.take_loss());  // 'a' and 'b' come first
  EXPECT_EQ(drain(r), "ab");
  EXPECT_TRUE(r.loss_waiting());
  EXPECT_TRUE(r.take_loss());
  EXPECT_FALSE(r.take_loss());  // once
  EXPECT_TRUE(r.push('d'));
  EXPECT_EQ(drain(r), "d");
}

TEST(BoardRing, AFullRingLosesAtItsEnd) {
  emcp::board::Ring<8> r;
  for (uint8_t c = '0'; c < '8'; ++c) EXPECT_TRUE(r.push(c));
  EXPECT_FALSE(r.push('x'));  // no room: the gap follows the eight kept bytes
  uint8_t buf[4];
  EXPECT_EQ(r.pop(buf, 4), 4u);
  EXPECT_FALSE(r.push('y'));  // room again, but the gap is still ahead of the reader
  EXPECT_FALSE(r.take_loss());
  EXPECT_EQ(drain(r), "4567");
  EXPECT_TRUE(r.take_loss());
  EXPECT_TRUE(r.push('z'));
  EXPECT_EQ(drain(r), "z");
}

// Random interleavings of the interrupt (push, lose) and the loop (pop, take_loss): what the
// loop reads, with '|' for each loss it takes, is what was sent with each run of lost bytes
// and losses (nothing kept between them) as one '|'.
TEST(BoardRing, TheReaderSeesEveryGapInItsPlace) {
  std::mt19937 rng(28);
  for (int round = 0; round < 200; ++round) {
    emcp::board::Ring<8> r;
    std::string expected, seen;
    bool in_gap = false;
    for (int step = 0; step < 2000; ++step) {
      const auto op = rng() % 10;
      if (op < 5) {
        const uint8_t c = static_cast<uint8_t>('a' + rng() % 26);
        if (r.push(c)) {
          expected += static_cast<char>(c);
          in_gap = false;
        } else if (!in_gap) {
          expected += '|';
          in_gap = true;
        }
      } else if (op == 5) {
        r.lose();
        if (!in_gap) expected += '|';
        in_gap = true;
      } else if (op < 9) {
        uint8_t buf[5];
        const size_t n = r.pop(buf, 1 + rng() % 5);
        seen.append(reinterpret_cast<char*>(buf), n);
      } else if (r.take_loss()) {
        seen += '|';
        in_gap = false;  // the next loss is a gap of its own
      }
    }
    seen += drain(r);
    if (r.take_loss()) seen += '|';
    ASSERT_EQ(seen, expected) << "round " << round;
  }
}
