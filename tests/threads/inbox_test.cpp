// The server's inbox (emcp/mcp/inbox.h): what other threads, tasks and interrupts post runs on
// the owner's poll(), in order, once; a post that cannot be taken is the caller's error and is
// counted. The wire messages are checked against the texts MCP specifies for them
// (notifications/resources/updated, notifications/message, a CallToolResult); the threaded
// tests run here and, with real threads racing, under ThreadSanitizer (the tsan configuration).
#include <gtest/gtest.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include <algorithm>
#include <atomic>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include "emcp/mcp/inbox.h"
#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "mcp_fixture_app.h"
#include "no_heap_util.h"

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;
using namespace std::string_view_literals;

namespace {

using Out = emcp_test::FixedText<1 << 16>;

std::atomic<int> g_wakes{0};
void count_wake() { g_wakes.fetch_add(1, std::memory_order_relaxed); }
// The fixture's clock, with a wake the tests count.
const emcp::Platform kWakingPlatform{&fixture::now_ms, nullptr, nullptr, nullptr, &count_wake};

constexpr std::string_view kInit =
    R"({"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})" "\n"
    R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n"
    R"({"jsonrpc":"2.0","id":"s","method":"resources/subscribe","params":{"uri":"test://static"}})" "\n";

struct Served {
  Out out;
  Server server{fixture::info(), kWakingPlatform};
  emcp::transport::StaticLineTransport<> t{server, &Out::write, &out};
  explicit Served(Inbox* inbox) {
    fixture::install(server);
    if (inbox != nullptr) server.set_inbox(*inbox);
    feed(kInit);
    (void)out.take();
  }
  void feed(std::string_view s) { (void)t.feed(s.data(), s.size()); }
};

}  // namespace

TEST(McpInbox, PostsRunOnPollInTheOrderPosted) {
  StaticInbox<8, 64> inbox;
  Served s(&inbox);
  g_wakes = 0;
  ASSERT_EQ(inbox.resource_updated("test://static"), Status::kOk);
  ASSERT_EQ(inbox.log(LogLevel::kWarning, "from a task", "sensor"), Status::kOk);
  ASSERT_EQ(inbox.resource_updated("test://static"), Status::kOk);
  EXPECT_EQ(g_wakes.load(), 3) << "each post wakes the owner";
  EXPECT_EQ(s.out.take(), ""sv) << "nothing runs before the owner's poll()";
  EXPECT_EQ(inbox.stats().in_use, 3);
  s.server.poll();
  // notifications/resources/updated carries params.uri; notifications/message params.level,
  // params.logger and params.data (basic/utilities/logging, server/resources "Subscriptions").
  EXPECT_EQ(s.out.take(),
            R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://static"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"warning","logger":"sensor","data":"from a task"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://static"}})" "\n"sv);
  const InboxStats st = inbox.stats();
  EXPECT_EQ(st.posted, 3u);
  EXPECT_EQ(st.run, 3u);
  EXPECT_EQ(st.refused, 0u);
  EXPECT_EQ(st.in_use, 0);
  EXPECT_EQ(st.high_water, 3);
  s.server.poll();
  EXPECT_EQ(s.out.take(), ""sv) << "each post runs once";
}

TEST(McpInbox, AFullInboxRefusesWithNoSpaceAndCountsIt) {
  StaticInbox<4, 32> inbox;
  Served s(&inbox);
  for (int i = 0; i < 4; ++i) ASSERT_EQ(inbox.resource_updated("test://static"), Status::kOk) << i;
  EXPECT_EQ(inbox.resource_updated("test://static"), Status::kNoSpace);
  EXPECT_EQ(inbox.stats().refused, 1u);
  EXPECT_EQ(inbox.stats().high_water, 4);
  s.server.poll();
  EXPECT_EQ(inbox.stats().run, 4u);
  // Room again, and the slots are reused (a second lap of positions).
  for (int lap = 0; lap < 3; ++lap) {
    for (int i = 0; i < 4; ++i) ASSERT_EQ(inbox.resource_updated("test://static"), Status::kOk) << lap << i;
    s.server.poll();
  }
  EXPECT_EQ(inbox.stats().run, 16u);
  EXPECT_EQ(inbox.stats().posted, 16u);
}

TEST(McpInbox, WhatDoesNotFitASlotOrHasNoServerIsRefused) {
  StaticInbox<4, 32> unattached;
  EXPECT_EQ(unattached.resource_updated("test://static"), Status::kInvalidState);
  EXPECT_EQ(unattached.stats().refused, 1u);
  StaticInbox<4, 32> inbox;
  Served s(&inbox);
  const std::string long_uri = "test://" + std::string(26, 'x');  // 33 bytes
  EXPECT_EQ(inbox.resource_updated(long_uri.c_str()), Status::kInvalidArgument);
  EXPECT_EQ(inbox.resource_updated(StrView(long_uri.data(), 32)), Status::kOk) << "exactly a slot's payload fits";
  EXPECT_EQ(inbox.log(LogLevel::kInfo, StrView(long_uri.data(), 20), "0123456789"), Status::kInvalidArgument)
      << "a log line's level, message and logger share the payload";
  EXPECT_EQ(inbox.post(nullptr, nullptr), Status::kInvalidArgument);
  EXPECT_EQ(inbox.list_changed(static_cast<ListKind>(7)), Status::kInvalidArgument);
  EXPECT_EQ(inbox.stats().refused, 4u);
  EXPECT_EQ(inbox.stats().posted, 1u);
}

namespace {
Pending g_deferred;
void defer_tool(ToolCall& c) { g_deferred = c.defer(); }
constexpr Tool kDeferTools[] = {Tool::make("defer", &defer_tool)};
}  // namespace

TEST(McpInbox, ADeferredCallIsCompletedWithTheBytesPosted) {
  StaticInbox<8, 64> inbox;
  Served s(&inbox);
  s.server.set_tools(kDeferTools);
  (void)s.out.take();  // tools/list_changed
  s.feed(R"({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"defer","arguments":{}}})" "\n"
         R"({"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"defer","arguments":{}}})" "\n");
  EXPECT_EQ(s.out.take(), ""sv);
  const Pending second = g_deferred;
  ASSERT_TRUE(second.valid());
  // A worker holds the handle only: the answer's bytes travel in the slot (a CallToolResult
  // with one text block; isError for a tool error, server/tools "Tool Result").
  ASSERT_EQ(inbox.complete_text(second, "done by a worker"), Status::kOk);
  ASSERT_EQ(inbox.complete_text(second, "twice"), Status::kOk);
  s.server.poll();
  EXPECT_EQ(s.out.take(),
            R"({"jsonrpc":"2.0","id":8,"result":{"content":[{"type":"text","text":"done by a worker"}]}})" "\n"sv)
      << "the second completion of the same call finds a stale handle and sends nothing";
  EXPECT_EQ(inbox.stats().run, 2u);
}

// A work item the channel cannot take yet stays first: nothing behind it runs before it.
namespace {
int g_busy_rounds = 0;
std::vector<int>* g_ran = nullptr;
Status busy_then_done(Server&, void*, const void* b, size_t) {
  if (g_busy_rounds > 0) {
    --g_busy_rounds;
    return Status::kWouldBlock;
  }
  int v;
  memcpy(&v, b, sizeof v);
  g_ran->push_back(v);
  return Status::kOk;
}
}  // namespace

TEST(McpInbox, WorkThatWouldBlockRunsAgainFirstOnTheNextPoll) {
  StaticInbox<4, 32> inbox;
  Served s(&inbox);
  std::vector<int> ran;
  g_ran = &ran;
  g_busy_rounds = 2;
  for (int v : {1, 2, 3}) ASSERT_EQ(inbox.post(&busy_then_done, nullptr, &v, sizeof v), Status::kOk);
  s.server.poll();
  EXPECT_TRUE(ran.empty());
  s.server.poll();
  EXPECT_TRUE(ran.empty());
  s.server.poll();
  EXPECT_EQ(ran, (std::vector<int>{1, 2, 3}));
  EXPECT_EQ(inbox.stats().retried, 2u);
  EXPECT_EQ(inbox.stats().run, 3u);
  g_ran = nullptr;
}

// ---- Threads: producers race each other and the owner ------------------------------------------

namespace {

struct Record {
  uint32_t producer;
  uint32_t seq;
};

struct Tally {
  static constexpr int kProducers = 4;
  std::vector<uint32_t> got[kProducers];  // owner only
  uint32_t out_of_order = 0;
};

Status record(Server&, void* ctx, const void* b, size_t n) {
  Tally& t = *static_cast<Tally*>(ctx);
  Record r;
  if (n != sizeof r) return Status::kOk;
  memcpy(&r, b, sizeof r);
  std::vector<uint32_t>& v = t.got[r.producer];
  if (!v.empty() && r.seq <= v.back()) ++t.out_of_order;
  v.push_back(r.seq);
  return Status::kOk;
}

// Runs `kPosts` posts from each of kProducers threads while the owner polls; checks that every
// post was either run, in order, once, or refused with kNoSpace seen by its caller.
void race(Inbox& inbox, Server& server, uint32_t posts) {
  Tally tally;
  std::vector<uint32_t> refused[Tally::kProducers];
  std::atomic<int> done{0};
  std::vector<std::thread> producers;
  for (int p = 0; p < Tally::kProducers; ++p) {
    producers.emplace_back([&, p] {
      refused[p].reserve(posts);
      for (uint32_t i = 0; i < posts; ++i) {
        const Record r{static_cast<uint32_t>(p), i};
        // A producer that finds the inbox full tries again a few times (as a task would after
        // a delay), so that the owner keeps freeing slots while producers race for them.
        Status st = Status::kNoSpace;
        for (int attempt = 0; attempt < 64 && st == Status::kNoSpace; ++attempt) {
          if (attempt != 0) std::this_thread::yield();
          st = inbox.post(&record, &tally, &r, sizeof r);
        }
        if (st == Status::kNoSpace) {
          refused[p].push_back(i);
        } else if (st != Status::kOk) {
          ADD_FAILURE() << "post " << i << " of producer " << p << ": " << static_cast<int>(st);
        }
      }
      done.fetch_add(1);
    });
  }
  while (done.load() < Tally::kProducers) server.poll();
  for (std::thread& t : producers) t.join();
  server.poll();
  uint64_t run = 0, lost = 0, refused_total = 0;
  for (int p = 0; p < Tally::kProducers; ++p) {
    // Every sequence number is in exactly one of the two lists.
    std::vector<uint32_t> all = tally.got[p];
    all.insert(all.end(), refused[p].begin(), refused[p].end());
    std::sort(all.begin(), all.end());
    ASSERT_EQ(all.size(), posts) << "producer " << p << ": run + refused";
    for (uint32_t i = 0; i < posts; ++i)
      if (all[i] != i) ++lost;
    run += tally.got[p].size();
    refused_total += refused[p].size();
  }
  EXPECT_EQ(lost, 0u) << "a post neither run nor refused, or run twice";
  EXPECT_EQ(tally.out_of_order, 0u);
  const InboxStats st = inbox.stats();
  EXPECT_EQ(st.run, run);
  EXPECT_EQ(st.posted, run);
  EXPECT_EQ(st.posted, static_cast<uint64_t>(posts) * Tally::kProducers - refused_total);
  EXPECT_LE(st.high_water, st.slots);
  EXPECT_EQ(st.in_use, 0);
}

}  // namespace

TEST(McpInbox, ThreadsPostingWhileTheOwnerPollsLoseNothing) {
  StaticInbox<8, 32> inbox;
  Server server(fixture::info(), kWakingPlatform);
  server.set_inbox(inbox);
  race(inbox, server, 50000);
  // With 8 slots and four producers against one owner, some posts find the inbox full.
  EXPECT_GT(inbox.stats().high_water, 1);
}

// A signal handler stands in for an interrupt: it posts between any two instructions of the
// owner it interrupts, and never waits for it.
namespace {
Inbox* g_signal_inbox = nullptr;
uint32_t g_signal_next = 0;  // owner only: the sequence number due next
std::atomic<uint32_t> g_signal_posts{0}, g_signal_refused{0}, g_signal_misordered{0};
Status count_signal(Server&, void*, const void* b, size_t) {
  Record r;
  memcpy(&r, b, sizeof r);
  if (r.seq != g_signal_next) g_signal_misordered.fetch_add(1);
  g_signal_next = r.seq + 1;
  return Status::kOk;
}
void on_alarm(int) {
  const uint32_t n = g_signal_posts.load(std::memory_order_relaxed);
  const Record r{0xFFFFu, n};
  if (g_signal_inbox->post(&count_signal, nullptr, &r, sizeof r) == Status::kOk) {
    g_signal_posts.store(n + 1, std::memory_order_relaxed);
  } else {
    g_signal_refused.fetch_add(1, std::memory_order_relaxed);
  }
}
}  // namespace

TEST(McpInbox, APostFromASignalHandlerInterruptingTheOwnerIsRunInOrder) {
  StaticInbox<8, 32> inbox;
  Server server(fixture::info(), kWakingPlatform);
  server.set_inbox(inbox);
  g_signal_inbox = &inbox;
  g_signal_next = 0;
  g_signal_posts = 0;
  g_signal_refused = 0;
  g_signal_misordered = 0;
  struct sigaction sa = {};
  sa.sa_handler = &on_alarm;
  sigemptyset(&sa.sa_mask);
  ASSERT_EQ(sigaction(SIGALRM, &sa, nullptr), 0);
  itimerval every{{0, 200}, {0, 200}};  // 5 kHz
  ASSERT_EQ(setitimer(ITIMER_REAL, &every, nullptr), 0);
  // The owner polls until the "interrupt" posted 2,000 times (bounded in rounds, not time).
  for (long round = 0; round < 200000000L && g_signal_posts.load() < 2000; ++round) server.poll();
  itimerval off{{0, 0}, {0, 0}};
  ASSERT_EQ(setitimer(ITIMER_REAL, &off, nullptr), 0);
  signal(SIGALRM, SIG_DFL);
  server.poll();
  const InboxStats st = inbox.stats();
  EXPECT_GE(st.posted, 2000u);
  EXPECT_EQ(st.posted, g_signal_posts.load());
  EXPECT_EQ(st.run, st.posted) << "every accepted post ran";
  EXPECT_EQ(st.refused, g_signal_refused.load());
  EXPECT_EQ(g_signal_next, g_signal_posts.load());
  EXPECT_EQ(g_signal_misordered.load(), 0u);
  g_signal_inbox = nullptr;
}
