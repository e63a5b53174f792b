// HttpOptions::session_prefix: one instance's tag in front of its session ids, so that a proxy
// in front of several instances (docs/deploy.md) routes a session by it. Checked against the
// rules it must keep, written here from their texts: the MCP transport text's Mcp-Session-Id
// ("MUST only contain visible ASCII characters (ranging from 0x21 to 0x7E)") and RFC 3986's
// unreserved set (ALPHA / DIGIT / "-" / "." / "_" / "~": what a query string carries as it is,
// HTTP+SSE's sessionId). Responses are read by the fixture's own HTTP/1.1 and SSE readers.
#include "http_engine_fixture.h"

namespace {

bool rfc3986_unreserved(int ch) {
  return (ch >= 'A' && ch <= 'Z') || (ch >= 'a' && ch <= 'z') || (ch >= '0' && ch <= '9') || ch == '-' || ch == '.' ||
         ch == '_' || ch == '~';
}

bool visible_ascii(const std::string& s) {
  for (unsigned char ch : s)
    if (ch < 0x21 || ch > 0x7E) return false;
  return !s.empty();
}

bool lower_hex(const std::string& s) {
  for (char ch : s)
    if (!((ch >= '0' && ch <= '9') || (ch >= 'a' && ch <= 'f'))) return false;
  return true;
}

// The engine's fixture under this file's name (gtest: one fixture class per suite name).
class HttpPrefixed : public HttpEngine {};

TEST(HttpSessionPrefix, ValidPrefixesAreUnreservedCharactersUpToSixteen) {
  using emcp::transport::valid_session_prefix;
  EXPECT_TRUE(valid_session_prefix(nullptr));
  EXPECT_TRUE(valid_session_prefix(""));
  for (int ch = 1; ch < 256; ++ch) {
    const char one[2] = {static_cast<char>(ch), '\0'};
    EXPECT_EQ(valid_session_prefix(one), rfc3986_unreserved(ch)) << ch;
  }
  EXPECT_TRUE(valid_session_prefix("b1-"));
  EXPECT_TRUE(valid_session_prefix("Az09-._~Az09-._~"));   // 16
  EXPECT_FALSE(valid_session_prefix("Az09-._~Az09-._~x"));  // 17
  EXPECT_EQ(emcp::transport::kMaxSessionPrefix, 16u);
  EXPECT_FALSE(valid_session_prefix("b1-\xc3\xa9"));
  EXPECT_FALSE(valid_session_prefix("b 1"));
}

TEST_F(HttpPrefixed, SessionPrefixStartsEveryStreamableSessionIdAndIsRequired) {
  options_.session_prefix = "b2-";
  const int c = open_conn();
  feed(c, post(init_body()));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  ASSERT_EQ(rs[0].status, 200);
  const std::string sid = rs[0].headers["mcp-session-id"];
  ASSERT_EQ(sid.size(), 3u + 32u) << sid;
  EXPECT_EQ(sid.substr(0, 3), "b2-");
  EXPECT_TRUE(lower_hex(sid.substr(3))) << sid;
  EXPECT_TRUE(visible_ascii(sid)) << sid;
  // The whole id names the session; its digits alone, or under another tag, name none.
  feed(c, post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(responses(c)[0].status, 202);
  feed(c, post(call(2, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_EQ(rs[0].headers["mcp-session-id"], sid);
  for (const std::string& other : {sid.substr(3), "b1-" + sid.substr(3), "b2-" + sid.substr(4), std::string("b2-")}) {
    feed(c, post(call(3, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + other + "\r\n"));
    rs = responses(c);
    ASSERT_EQ(rs.size(), 1u) << other;
    EXPECT_EQ(rs[0].status, 404) << other;
  }
  // The session's stream and its end go by the whole id too.
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  rs = responses(g);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_EQ(rs[0].headers["mcp-session-id"], sid);
  feed(c, "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + sid.substr(3) + "\r\n\r\n");
  EXPECT_EQ(responses(c)[0].status, 404);
  EXPECT_EQ(sessions_in_use(), 1u);
  feed(c, "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  EXPECT_EQ(responses(c)[0].status, 200);
  EXPECT_EQ(sessions_in_use(), 0u);
}

TEST_F(HttpPrefixed, SessionPrefixStartsTheSseEndpointsSessionId) {
  options_.session_prefix = "fleet.b3_~";
  const auto [s, endpoint] = open_sse();
  const std::string head = "/messages?sessionId=fleet.b3_~";
  ASSERT_EQ(endpoint.rfind(head, 0), 0u) << endpoint;
  const std::string digits = endpoint.substr(head.size());
  EXPECT_EQ(digits.size(), 32u);
  EXPECT_TRUE(lower_hex(digits)) << digits;
  const auto post_to = [&](const std::string& target) {
    const int p = open_conn();
    feed(p, "POST " + target + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " +
                std::to_string(init_body("2024-11-05").size()) + "\r\n\r\n" + init_body("2024-11-05"));
    auto answers = responses(p);
    closed(p);
    return answers.size() == 1 ? answers[0].status : -1;
  };
  EXPECT_EQ(post_to("/messages?sessionId=" + digits), 404);
  EXPECT_EQ(post_to(endpoint), 202);
  const auto rs = responses(s);
  const auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_NE(ev[1].data.find(R"("protocolVersion":"2024-11-05")"), std::string::npos);
  closed(s);
}

TEST_F(HttpPrefixed, NoSessionPrefixLeavesTheIdItsDigits) {
  const std::string sid = session();  // the fixture checks 32 characters
  EXPECT_TRUE(lower_hex(sid)) << sid;
}

TEST_F(HttpPrefixed, InvalidSessionPrefixOpensNoSession) {
  options_.session_prefix = "b 1";
  const int c = open_conn();
  feed(c, post(init_body()));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 500);
  EXPECT_EQ(rs[0].headers.count("mcp-session-id"), 0u);
  const int s = open_conn();
  feed(s, "GET /sse HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\n\r\n");
  rs = responses(s);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 500);  // not an endpoint event
  EXPECT_EQ(sessions_in_use(), 0u);
}

}  // namespace
