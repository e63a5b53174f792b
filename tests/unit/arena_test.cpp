#include "emcp/util/arena.h"

#include <gtest/gtest.h>

#include "heap_guard.h"

using emcp::Arena;
using emcp::StaticArena;
using emcp::Status;

TEST(Arena, AlignsAndCounts) {
  emcp_test::NoHeapScope no_heap;
  StaticArena<64> a;
  void* p = nullptr;
  ASSERT_EQ(a.alloc(1, 1, &p), Status::kOk);
  void* q = nullptr;
  ASSERT_EQ(a.alloc(8, 8, &q), Status::kOk);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(q) % 8, 0u);
  EXPECT_EQ(a.used(), 16u);  // 1 byte + 7 padding + 8
  EXPECT_TRUE(a.contains(p));
  EXPECT_TRUE(a.contains(q));
}

TEST(Arena, OutOfSpaceIsExplicitAndHarmless) {
  emcp_test::NoHeapScope no_heap;
  StaticArena<32> a;
  void* p = nullptr;
  ASSERT_EQ(a.alloc(30, 1, &p), Status::kOk);
  void* q = reinterpret_cast<void*>(1);
  EXPECT_EQ(a.alloc(4, 4, &q), Status::kNoSpace);  // 2 left, and 2 of padding
  EXPECT_EQ(q, nullptr);
  EXPECT_EQ(a.used(), 30u);
  EXPECT_EQ(a.alloc(2, 1, &q), Status::kOk);
  EXPECT_EQ(a.available(), 0u);
  EXPECT_EQ(a.alloc(0, 1, &q), Status::kOk);  // zero bytes always fit
  EXPECT_EQ(a.alloc(1, 1, &q), Status::kNoSpace);
  EXPECT_EQ(a.alloc(static_cast<size_t>(-1), 1, &q), Status::kNoSpace);  // no wrap-around
}

TEST(Arena, RejectsBadAlignment) {
  StaticArena<32> a;
  void* p = nullptr;
  EXPECT_EQ(a.alloc(4, 3, &p), Status::kInvalidArgument);
  EXPECT_EQ(a.alloc(4, 0, &p), Status::kInvalidArgument);
  EXPECT_EQ(a.alloc(4, 32, &p), Status::kInvalidArgument);
}

TEST(Arena, MarkRewindAndHighWater) {
  emcp_test::NoHeapScope no_heap;
  StaticArena<128> a;
  void* p = nullptr;
  ASSERT_EQ(a.alloc(10, 1, &p), Status::kOk);
  Arena::Mark m = a.mark();
  ASSERT_EQ(a.alloc(50, 1, &p), Status::kOk);
  EXPECT_EQ(a.used(), 60u);
  a.rewind(m);
  EXPECT_EQ(a.used(), 10u);
  EXPECT_EQ(a.high_water(), 60u);
  a.rewind(Arena::Mark{100});  // forward: ignored
  EXPECT_EQ(a.used(), 10u);
  a.reset();
  EXPECT_EQ(a.used(), 0u);
  EXPECT_EQ(a.high_water(), 60u);
  a.reset_high_water();
  EXPECT_EQ(a.high_water(), 0u);
}

TEST(Arena, AppendIsContiguous) {
  emcp_test::NoHeapScope no_heap;
  StaticArena<16> a;
  char* s1 = nullptr;
  char* s2 = nullptr;
  ASSERT_EQ(a.append("abc", 3, &s1), Status::kOk);
  ASSERT_EQ(a.append("defg", 4, &s2), Status::kOk);
  EXPECT_EQ(s2, s1 + 3);
  EXPECT_EQ(std::string(s1, 7), "abcdefg");
  char* s3 = nullptr;
  EXPECT_EQ(a.append("0123456789", 10, &s3), Status::kNoSpace);
  EXPECT_EQ(s3, nullptr);
  EXPECT_EQ(a.used(), 7u);
}
