// The HTTP engine under attack (docs/http.md, "Under attack: fair slots"): deadlines from the
// accept, slots reclaimed from slow and idle connections and from peers over their share,
// the per-peer new-session bucket, and which sessions may be evicted for a new one. The same
// fake port and clock as http_server_test.cpp (4 connection slots, 2 session slots); peers are
// told apart by the address given to open(). The per-peer rules are covered here for every
// port: through QEMU's user network every client of an emulated board has one address.
#include "http_engine_fixture.h"

namespace {

using emcp::transport::PeerAddress;

PeerAddress peer(uint8_t n) {
  const uint8_t a[4] = {127, 0, 0, n};
  return PeerAddress::ipv4(a);
}

class HttpFair : public HttpEngine {
 protected:
  int next_id_ = 100;
  // Two sessions of peer 2 (the second 10 ms later), each with its GET stream open on the
  // connection returned in *sa / *sb.
  void two_streaming_sessions(std::string* a, std::string* b, int* sa, int* sb) {
    *a = session("2025-11-25", peer(2));
    g_now += 10;
    *b = session("2025-11-25", peer(2));
    *sa = open_conn(peer(2));
    *sb = open_conn(peer(2));
    feed(*sa, get_stream(*a));
    feed(*sb, get_stream(*b));
    EXPECT_EQ(responses(*sa)[0].status, 200);
    EXPECT_EQ(responses(*sb)[0].status, 200);
  }
  // The event stream on connection c has ended (its last chunk came).
  bool stream_ended(int c) {
    auto rs = responses(c);
    return !rs.empty() && rs.back().complete;
  }
  std::string get_stream(const std::string& sid) {
    return "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n";
  }
  // A request of session `sid` that waits for its deferred answer (the slow tool).
  int waiting_call(const std::string& sid, const PeerAddress& p) {
    const int c = open_conn(p);
    feed(c, post(call(++next_id_, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
    return c;
  }
  int status_of_echo(const std::string& sid) {
    const int c = open_conn();
    feed(c, post(call(1, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
    auto rs = responses(c);
    closed(c);
    return rs.empty() ? 0 : rs[0].status;
  }
  // initialize from `p` on a connection of its own: the status (and the session id in *sid).
  int initialize(const PeerAddress& p, std::string* sid = nullptr, std::string* retry_after = nullptr) {
    const int c = open_conn(p);
    if (c < 0) return -1;
    feed(c, post(init_body()));
    auto rs = responses(c);
    closed(c);
    if (rs.empty()) return 0;
    if (sid != nullptr) *sid = rs[0].headers["mcp-session-id"];
    if (retry_after != nullptr) *retry_after = rs[0].headers["retry-after"];
    return rs[0].status;
  }
};

TEST(PeerAddress, Ipv4IsMappedAndAllZeroIsUnknown) {
  const uint8_t v6[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 2};
  EXPECT_EQ(peer(2), PeerAddress::ipv6(v6)) << "an IPv4-mapped IPv6 address is the same peer";
  EXPECT_NE(peer(2), peer(3));
  EXPECT_TRUE(peer(2).known());
  EXPECT_FALSE(PeerAddress().known());
}

TEST_F(HttpFair, SilentConnectionIsAnswered408AtTheHeadTimeoutFromTheAccept) {
  const int a = open_conn();
  g_now += options_.head_timeout_ms;
  poll();
  EXPECT_TRUE(responses(a).empty()) << "not before the head timeout";
  g_now += 1;
  poll();
  auto rs = responses(a);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 408);
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(a)]);
  EXPECT_EQ(http_.stats().timeout_head, 1u);
  // Silence, then the first byte late: the deadline still counts from the accept.
  const int b = open_conn();
  g_now += 5000;
  feed(b, "P");
  g_now += options_.head_timeout_ms - 5000 + 1;
  poll();
  rs = responses(b);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 408);
  EXPECT_EQ(http_.stats().timeout_head, 2u);
  EXPECT_EQ(connections_in_use(), 0u);
}

TEST_F(HttpFair, KeepAliveTimeoutIsItsOwnAndLaterHeadsCountFromTheirFirstByte) {
  options_.keepalive_ms = 3000;
  const int c = open_conn();
  g_now += 9000;  // within the first head's deadline
  feed(c, "GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(responses(c)[0].status, 404);
  g_now += 2000;
  feed(c, "GET /nope HTTP/1.1\r\n");  // a second head: its own 10 s from here
  g_now += 9000;
  poll();
  EXPECT_TRUE(responses(c).empty());
  feed(c, "Host: localhost\r\n\r\n");
  EXPECT_EQ(responses(c)[0].status, 404);
  g_now += 3001;
  poll();
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(c)]) << "idle for keepalive_ms";
  EXPECT_EQ(http_.stats().timeout_idle, 1u);
  EXPECT_EQ(http_.stats().timeout_head, 0u);
}

TEST_F(HttpFair, SlowHeadsGiveWayOnlyAfterTheGraceAndIdleOnesAfterThem) {
  int c[4];
  for (int& x : c) x = open_conn(peer(2));
  for (int x : c) feed(x, "POST /mcp HTTP/1.1\r\nHo");  // byte-by-byte heads, all from one peer
  g_now += options_.reclaim_grace_ms;
  EXPECT_EQ(open_conn(peer(2)), -1) << "not beyond the grace yet";
  g_now += 1;
  feed(c[0], "s");  // progress does not make a head young again
  const int d = open_conn(peer(2));
  EXPECT_EQ(d, c[0]) << "the oldest slow head";
  EXPECT_EQ(http_.stats().reclaimed_slow, 1u);
  EXPECT_EQ(http_.stats().refused_busy, 1u);
}

TEST_F(HttpFair, PeerOverItsShareGivesWayToAnotherPeer) {
  // Peer 2 holds all four slots with requests waiting for deferred answers: nothing slow,
  // nothing idle. Its share is 2.
  const std::string sid = session("2025-11-25", peer(2));
  int w[4];
  for (int& x : w) {
    x = waiting_call(sid, peer(2));
    g_now += 10;
  }
  EXPECT_EQ(open_conn(peer(2)), -1) << "a peer over its share takes nothing from itself";
  EXPECT_EQ(open_conn(), -1) << "an unknown peer has no share to claim";
  const int b = open_conn(peer(3));
  EXPECT_EQ(b, w[0]) << "peer 3, below its share, displaces peer 2's oldest (the slot is b's now)";
  EXPECT_EQ(http_.stats().displaced, 1u);
  const int b2 = open_conn(peer(3));
  EXPECT_EQ(b2, w[1]) << "peer 2 still over its share (3 of 2)";
  EXPECT_EQ(open_conn(peer(3)), -1) << "peer 3 at its share, peer 2 no longer over it";
  EXPECT_EQ(http_.stats().displaced, 2u);
  EXPECT_EQ(http_.stats().refused_busy, 3u);
  // The session lives on; peer 3 is served on its slots.
  feed(b, post(call(1, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(responses(b)[0].status, 200);
}

TEST_F(HttpFair, WhileSlotsAreFreeOnePeerMayUseThemAll) {
  int c[4];
  for (int& x : c) {
    x = open_conn(peer(2));
    EXPECT_GE(x, 0) << "a share is no wall";
  }
  EXPECT_EQ(connections_in_use(), 4u);
}

TEST_F(HttpFair, TakingOtherPeersSessionsBeyondTheBucketIs429WithRetryAfter) {
  options_.session_active_ms = 1000;
  const std::string a = session("2025-11-25", peer(3));  // peers 3 and 4 each within its share
  const std::string b = session("2025-11-25", peer(4));
  g_now += 1001;  // both unused for longer than session_active_ms
  std::string x, retry;
  EXPECT_EQ(initialize(peer(2), &x), 200) << "the least recently used session, peer 3's, for a token";
  EXPECT_EQ(status_of_echo(a), 404);
  const int wx = waiting_call(x, peer(2));  // peer 2's own session is in use
  EXPECT_EQ(initialize(peer(2), nullptr, &retry), 429) << "the bucket (1: half the slots) is empty";
  EXPECT_EQ(retry, "1");
  EXPECT_EQ(http_.stats().session_refused_rate, 1u);
  g_now += options_.session_refill_ms;
  EXPECT_EQ(initialize(peer(2)), 200) << "a token back after session_refill_ms";
  EXPECT_EQ(status_of_echo(b), 404);
  EXPECT_FALSE(port_.closed[static_cast<uint16_t>(wx)]);
  EXPECT_EQ(http_.stats().session_evicted, 2u);
}

TEST_F(HttpFair, NewSessionsInFreeSlotsOrReplacingTheirOwnCostNothing) {
  for (int i = 0; i < 50; ++i) EXPECT_EQ(initialize(peer(2)), 200) << i;  // no time passes
  EXPECT_EQ(http_.stats().session_refused_rate, 0u);
  EXPECT_EQ(http_.stats().session_evicted, 48u);
}

TEST_F(HttpFair, FloodEvictsItsOwnSessionsNeverAnActiveOneOfAnotherPeer) {
  std::string victim;
  ASSERT_EQ(initialize(peer(3), &victim), 200);
  for (int i = 0; i < 20; ++i) {
    g_now += 10;
    EXPECT_EQ(initialize(peer(2)), 200) << i;
  }
  EXPECT_EQ(status_of_echo(victim), 200) << "peer 3's session was used within session_active_ms";
  EXPECT_EQ(http_.stats().session_evicted, 19u) << "peer 2's sessions replaced each other";
  // Unused for longer than session_active_ms, it may go (least recently used first).
  g_now += options_.session_active_ms + 1;
  EXPECT_EQ(initialize(peer(2)), 200);
  EXPECT_EQ(initialize(peer(2)), 200);
  EXPECT_EQ(status_of_echo(victim), 404);
}

TEST_F(HttpFair, StreamsHoldSessionsOnlyForStreamHoldMs) {
  std::string a, b, retry;
  int sa = -1, sb = -1;
  two_streaming_sessions(&a, &b, &sa, &sb);
  EXPECT_EQ(initialize(peer(2), nullptr, &retry), 503) << "both sessions held by their streams";
  EXPECT_EQ(retry, "5");
  EXPECT_EQ(http_.stats().session_refused_full, 1u);
  g_now += options_.stream_hold_ms + 1;
  EXPECT_EQ(initialize(peer(2)), 200) << "a stream alone holds its session stream_hold_ms";
  EXPECT_EQ(http_.stats().session_evicted, 1u);
  EXPECT_NE(stream_ended(sa), stream_ended(sb)) << "one stream ended (its last chunk)";
}

TEST_F(HttpFair, SessionsOfAPeerOverItsShareGiveWayEvenWhileStreaming) {
  std::string a, b, sid;
  int sa = -1, sb = -1;
  two_streaming_sessions(&a, &b, &sa, &sb);
  EXPECT_EQ(initialize(peer(3), &sid), 200) << "peer 2 holds 2 sessions, its share is 1";
  EXPECT_EQ(http_.stats().session_evicted, 1u);
  EXPECT_TRUE(stream_ended(sa)) << "the least recently used one's stream ended";
  EXPECT_FALSE(stream_ended(sb));
  EXPECT_EQ(status_of_echo(a), 404);
  EXPECT_EQ(status_of_echo(sid), 200);
  g_now += 1000;  // a token back
  EXPECT_EQ(initialize(peer(2)), 503) << "peer 3's active session is not peer 2's to take, nor its own streaming one";
}

TEST_F(HttpFair, ASessionWithARequestInFlightIsNeverEvicted) {
  options_.session_active_ms = 0;
  options_.stream_hold_ms = 0;
  const std::string a = session("2025-11-25", peer(2));
  const std::string b = session("2025-11-25", peer(2));
  const int wa = waiting_call(a, peer(2));
  g_now += 1000;
  EXPECT_EQ(initialize(peer(3)), 200) << "b goes, a has a request waiting";
  EXPECT_EQ(status_of_echo(b), 404);
  EXPECT_FALSE(port_.closed[static_cast<uint16_t>(wa)]);
  // Its connection gone, the call still waits for its deferred answer (to go to its stream, to
  // be resumed): still in flight.
  closed(wa);
  g_now += 1000;
  EXPECT_EQ(initialize(peer(4)), 200) << "peer 3's session, unused, goes";
  EXPECT_EQ(initialize(peer(5)), 503) << "a's call is still in flight; peer 4's session is active";
}

}  // namespace
