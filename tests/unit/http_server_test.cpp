// The HTTP engine (Streamable HTTP, HTTP+SSE, WebSocket) driven through a fake port: bytes in,
// bytes out, a fake clock. Responses are parsed by a small HTTP/1.1 reader written here from
// RFC 9112 (status line, headers, Content-Length, chunked) and SSE events from the HTML
// event-stream format, independently of the engine's writer. Every call into the server and
// the engine, from their construction to their destruction, runs inside a NoHeapScope; the
// fake port keeps what it is sent in fixed buffers, and the test's own string building and
// parsing run between the scopes.
#include "http_engine_fixture.h"

namespace {

TEST_F(HttpEngine, InitializeInAnySplitAnswersWithContentLengthAndSessionId) {
  for (size_t step : {0, 1, 7}) {
    const int c = open_conn();
    ASSERT_GE(c, 0);
    EXPECT_EQ(feed(c, post(init_body()), step), post(init_body()).size());
    auto rs = responses(c);
    ASSERT_EQ(rs.size(), 1u) << step;
    EXPECT_EQ(rs[0].status, 200);
    EXPECT_EQ(rs[0].headers["content-type"], "application/json");
    EXPECT_FALSE(rs[0].chunked);
    EXPECT_EQ(rs[0].headers["mcp-session-id"].size(), 32u);
    EXPECT_NE(rs[0].body.find(R"("protocolVersion":"2025-11-25")"), std::string::npos);
    closed(c);
  }
  EXPECT_EQ(connections_in_use(), 0u);
}

TEST_F(HttpEngine, AnswerLargerThanTheBufferIsChunked) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(2, "big"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].chunked);
  EXPECT_TRUE(rs[0].complete);
  EXPECT_GT(rs[0].chunk_sizes.size(), 5u);
  for (size_t n : rs[0].chunk_sizes) EXPECT_LE(n, 512u);
  EXPECT_EQ(rs[0].body.rfind(R"({"jsonrpc":"2.0","id":2,"result":{"content":[)", 0), 0u);
  EXPECT_NE(rs[0].body.find("block 99 "), std::string::npos);
  EXPECT_EQ(rs[0].body.back(), '}');
  // Keep-alive: the connection takes the next request.
  feed(c, post(call(3, "echo", R"({"text":"again"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("again"), std::string::npos);
}

TEST_F(HttpEngine, ProgressTurnsTheAnswerIntoAnEventStreamWithIds) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(R"({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"progress","_meta":{"progressToken":"p"}}})",
               "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].headers["content-type"], "text/event-stream");
  EXPECT_TRUE(rs[0].complete);
  const auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 3u);
  // Priming event (2025-11-25): an id and empty data, with the retry time.
  EXPECT_EQ(ev[0].data, "");
  EXPECT_FALSE(ev[0].id.empty());
  EXPECT_EQ(ev[0].retry, "2000");
  EXPECT_NE(ev[1].data.find("notifications/progress"), std::string::npos);
  EXPECT_NE(ev[2].data.find(R"("id":5,"result")"), std::string::npos);
  EXPECT_NE(ev[1].id, ev[2].id);
  EXPECT_EQ(ev[2].event, "message");
}

TEST_F(HttpEngine, DeferredAnswerHoldsTheConnectionAndPipelinedInputWaits) {
  const std::string sid = session();
  const int c = open_conn();
  const std::string first = post(call(7, "slow"), "Mcp-Session-Id: " + sid + "\r\n");
  const std::string second = post(call(8, "echo", R"({"text":"next"})"), "Mcp-Session-Id: " + sid + "\r\n");
  const std::string both = first + second;
  const size_t used = receive(c, both);
  EXPECT_EQ(used, first.size()) << "the second request waits until the first is answered";
  EXPECT_FALSE(wants_input(c));
  EXPECT_TRUE(responses(c).empty());
  ASSERT_EQ(g_slow.size(), 1u);
  ASSERT_EQ(complete(g_slow[0]), Status::kOk);
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("slow done"), std::string::npos);
  EXPECT_TRUE(wants_input(c));
  EXPECT_EQ(receive(c, second), second.size());
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("next"), std::string::npos);
}

TEST_F(HttpEngine, ClosedStreamIsResumedFromTheReplayBuffer) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(9, "detach"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete) << "the stream ends before the answer";
  auto ev = events(rs[0].body);
  ASSERT_FALSE(ev.empty());
  EXPECT_EQ(ev.back().retry, "100");
  const std::string last_id = ev[0].id;
  // The answer comes while the client is away.
  ASSERT_EQ(g_slow.size(), 1u);
  ASSERT_EQ(complete(g_slow[0]), Status::kOk);
  // The client comes back with Last-Event-ID on the same connection (keep-alive).
  feed(c, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + last_id + "\r\n\r\n");
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete) << "the stream ends after its last answer";
  ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].data.find(R"("id":9,"result")"), std::string::npos);
  EXPECT_NE(ev[0].data.find("slow done"), std::string::npos);
}

TEST_F(HttpEngine, ServerMessagesGoToTheGetStreamAndDeleteEndsIt) {
  const std::string sid = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  log("something happened");
  auto rs = responses(g);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_FALSE(rs[0].complete);
  auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 2u);  // priming, then the log message
  EXPECT_NE(ev[1].data.find("something happened"), std::string::npos);
  // Heartbeat comments on a quiet stream.
  g_now += 20000;
  poll();
  EXPECT_NE(port_.out[static_cast<uint16_t>(g)].view().find(":\n\n"), std::string_view::npos);
  const int d = open_conn();
  feed(d, "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  EXPECT_EQ(responses(d)[0].status, 200);
  rs = responses(g);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete) << "the GET stream ended with the session";
  EXPECT_EQ(sessions_in_use(), 0u);
  feed(d, post(call(3, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(responses(d)[0].status, 404);
}

TEST_F(HttpEngine, LeastRecentlyUsedIdleSessionMakesRoom) {
  const std::string a = session();
  g_now += 10;
  const std::string b = session();
  g_now += 10;
  const std::string c3 = session();  // two slots: a goes
  EXPECT_EQ(sessions_in_use(), 2u);
  const int c = open_conn();
  feed(c, post(call(1, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + a + "\r\n"));
  EXPECT_EQ(responses(c)[0].status, 404);
  feed(c, post(call(1, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + b + "\r\n"));
  EXPECT_EQ(responses(c)[0].status, 200);
}

// A session that holds another connection (its GET stream) gets its answers with Connection:
// close while every slot is taken: its client opens another connection when it needs one, and
// a newcomer finds a free slot instead of taking an idle connection that client may be sending
// on. With a slot free, or alone on its connection, a session keeps its connection.
TEST_F(HttpEngine, ASessionHoldingAnotherConnectionGivesUpItsAnswersConnectionWhenSlotsRunOut) {
  const std::string sid = session();
  const std::string other = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  ASSERT_EQ(responses(g).size(), 1u);
  const int a = open_conn();
  const auto echo = [&](int conn, const std::string& id) {
    feed(conn, post(call(7, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + id + "\r\n"));
    auto rs = responses(conn);
    EXPECT_EQ(rs.size(), 1u);
    if (rs.empty()) return std::string("(none)");
    EXPECT_EQ(rs[0].status, 200);
    return rs[0].headers["connection"];
  };
  EXPECT_EQ(echo(a, sid), "") << "two slots free";
  const int b = open_conn();
  const int c = open_conn();
  EXPECT_EQ(connections_in_use(), 4u);
  EXPECT_EQ(echo(b, other), "") << "every slot taken, but this session holds no other connection";
  EXPECT_FALSE(port_.closed[static_cast<uint16_t>(b)]);
  EXPECT_EQ(echo(a, sid), "close") << "every slot taken, and this session holds its GET stream too";
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(a)]);
  EXPECT_EQ(http_.stats().shed_keepalive, 1u);
  EXPECT_EQ(http_.stats().reclaimed_idle, 0u) << "nobody had to give way";
  EXPECT_EQ(echo(c, sid), "") << "a slot is free again";
  // A 202 (a notification, a response) too: the session is known while it is handled.
  const int e = open_conn();
  feed(e, post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(e);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 202);
  EXPECT_EQ(rs[0].headers["connection"], "close");
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(e)]);
  EXPECT_EQ(http_.stats().shed_keepalive, 2u);
}

TEST_F(HttpEngine, SlotsFullAndTimeouts) {
  int c[4];
  for (int& x : c) x = open_conn();
  feed(c[0], "POST /mcp HTTP/1.1\r\nHost: localhost\r\n");  // head never finishes
  feed(c[1], post(init_body()).substr(0, 200));             // body stalls
  // c[2] sends nothing; c[3] had its answer: idle between requests.
  g_now += 10;
  feed(c[3], "GET /nope HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(responses(c[3])[0].status, 404);
  const int d = open_conn();
  EXPECT_EQ(d, c[3]) << "the idle keep-alive connection gave its slot; the young ones keep theirs";
  EXPECT_EQ(http_.stats().reclaimed_idle, 1u);
  c[3] = d;
  EXPECT_EQ(open_conn(), -1) << "every other one is younger than reclaim_grace_ms: refused";
  EXPECT_EQ(http_.stats().refused_busy, 1u);
  g_now += options_.reclaim_grace_ms;
  const int e = open_conn();
  EXPECT_EQ(e, c[0]) << "the head arriving longest, beyond the grace, gave its slot";
  EXPECT_EQ(http_.stats().reclaimed_slow, 1u);
  g_now += 11000;
  poll();
  EXPECT_EQ(responses(c[1])[0].status, 408);
  EXPECT_EQ(responses(c[2])[0].status, 408) << "silent since the accept";
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(c[1])]);
  EXPECT_EQ(http_.stats().timeout_body, 1u);
  EXPECT_EQ(http_.stats().timeout_head, 3u) << "c[2], and c[3] and e, which sent nothing either";
  EXPECT_EQ(connections_in_use(), 0u);
}

TEST_F(HttpEngine, LegacySseAnswersOnTheStream) {
  const auto [s, endpoint] = open_sse();
  ASSERT_EQ(endpoint.rfind("/messages?sessionId=", 0), 0u);
  const int p = open_conn();
  feed(p, "POST " + endpoint + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: " +
              std::to_string(init_body("2024-11-05").size()) + "\r\n\r\n" + init_body("2024-11-05"));
  EXPECT_EQ(responses(p)[0].status, 202);
  const auto rs = responses(s);
  const auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_EQ(ev[1].event, "message");
  EXPECT_NE(ev[1].data.find(R"("protocolVersion":"2024-11-05")"), std::string::npos);
  // The session lives with its stream.
  closed(s);
  EXPECT_EQ(sessions_in_use(), 0u);
}

TEST_F(HttpEngine, WebSocketCarriesOneMessagePerTextMessage) {
  const int c = open_conn();
  feed(c, "GET /ws HTTP/1.1\r\nHost: localhost\r\nUpgrade: websocket\r\nConnection: keep-alive, Upgrade\r\n"
          "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\r\n");
  Received& out = port_.out[static_cast<uint16_t>(c)];
  ASSERT_EQ(out.view().rfind("HTTP/1.1 101 Switching Protocols\r\n", 0), 0u);
  EXPECT_NE(out.view().find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo=\r\n"), std::string_view::npos);
  out.consume(out.view().find("\r\n\r\n") + 4);
  feed(c, ws_frame(0x81, init_body()) + ws_frame(0x81, R"({"jsonrpc":"2.0","method":"notifications/initialized"})") +
              ws_frame(0x81, call(2, "big")), 3);
  const auto msgs = ws_messages(out.str());
  ASSERT_EQ(msgs.size(), 2u);
  EXPECT_EQ(msgs[0].first, 1);
  EXPECT_NE(msgs[0].second.find("protocolVersion"), std::string::npos);
  EXPECT_EQ(msgs[1].first, 1);
  EXPECT_NE(msgs[1].second.find("block 99 "), std::string::npos);
  EXPECT_EQ(msgs[1].second.back(), '}');
  EXPECT_EQ(sessions_in_use(), 1u);
  closed(c);
  EXPECT_EQ(sessions_in_use(), 0u);
}

TEST_F(HttpEngine, FailedSendDropsTheConnectionAndTheServerGoesOn) {
  const std::string sid = session();
  const int c = open_conn();
  port_.fail_sends = true;
  feed(c, post(call(2, "big"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(c)]);
  port_.fail_sends = false;
  const int d = open_conn();
  feed(d, post(call(3, "echo", R"({"text":"fine"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("fine"), std::string::npos);
}

}  // namespace

namespace {

const char* const kAuthScopes[] = {"mcp", "admin"};
const emcp::auth::StaticToken kAuthTokens[] = {{"good-token", "mcp", "tester"}, {"admin-token", nullptr, "root"}};

emcp::auth::ResourceServerConfig auth_config() {
  emcp::auth::ResourceServerConfig cfg;
  cfg.resource = "https://device.test:8443/mcp";
  cfg.scopes = kAuthScopes;
  cfg.required_scope = "mcp";
  cfg.static_tokens = kAuthTokens;
  return cfg;
}

TEST_F(HttpEngine, BearerTokensMetadataAndStatuses) {
  const emcp::auth::ResourceServerConfig cfg = auth_config();
  emcp::auth::ResourceServer auth(cfg, server_);
  ASSERT_EQ(auth.status(), emcp::Status::kOk);
  options_.auth = auth.hooks();
  const int c = open_conn();
  // No token: 401 naming the metadata (RFC 9728 path-suffixed form for /mcp).
  feed(c, post(init_body()));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 401);
  EXPECT_EQ(rs[0].headers["www-authenticate"],
            "Bearer resource_metadata=\"https://device.test:8443/.well-known/oauth-protected-resource/mcp\", scope=\"mcp\"");
  // A wrong token: 401 invalid_token; another scheme: 401 without an error code (each header
  // in the table below).
  feed(c, post(init_body(), "Authorization: Bearer bad-token\r\n"));
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 401);
  EXPECT_NE(rs[0].headers["www-authenticate"].find("error=\"invalid_token\""), std::string::npos);
  feed(c, post(init_body(), "Authorization: Basic Z29vZC10b2tlbg==\r\n"));
  EXPECT_EQ(responses(c)[0].status, 401);
  // The token in the query string is refused, not used.
  feed(c, "POST /mcp?access_token=good-token HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
          "Accept: application/json, text/event-stream\r\nContent-Length: 2\r\n\r\n{}");
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 400);
  EXPECT_NE(rs[0].headers["www-authenticate"].find("error=\"invalid_request\""), std::string::npos);
  // The metadata, without a token, at both well-known places.
  for (const char* path : {"/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"}) {
    feed(c, std::string("GET ") + path + " HTTP/1.1\r\nHost: localhost\r\n\r\n");
    rs = responses(c);
    ASSERT_EQ(rs.size(), 1u);
    EXPECT_EQ(rs[0].status, 200);
    EXPECT_EQ(rs[0].headers["content-type"], "application/json");
    EXPECT_NE(rs[0].body.find("\"resource\":\"https://device.test:8443/mcp\""), std::string::npos);
    EXPECT_NE(rs[0].body.find("\"scopes_supported\":[\"mcp\",\"admin\"]"), std::string::npos);
    EXPECT_NE(rs[0].body.find("\"bearer_methods_supported\":[\"header\"]"), std::string::npos);
  }
  feed(c, "GET /.well-known/oauth-protected-resource/other HTTP/1.1\r\nHost: localhost\r\n\r\n");
  EXPECT_EQ(responses(c)[0].status, 401);
  // A good token: served.
  feed(c, post(init_body(), "Authorization: Bearer good-token\r\n"));
  EXPECT_EQ(responses(c)[0].status, 200);
  EXPECT_EQ(sessions_in_use(), 1u);
  EXPECT_EQ(auth.refused_401(), 4u);
  EXPECT_EQ(auth.refused_400(), 1u);
  options_.auth = nullptr;
}

// Each Authorization header with its exact status and challenge, as RFC 6750 3.1 and the MCP
// authorization text ("Error Handling": 400 for a malformed authorization request) say: no
// credentials, or another scheme's, 401 without an error code; credentials that are not one
// bearer token (RFC 9110 11.6.2 credentials, RFC 6750 2.1 b64token) or a header given twice,
// 400 invalid_request; a well-formed token that is not known, 401 invalid_token.
TEST_F(HttpEngine, EachAuthorizationHeaderGetsItsStatusAndChallenge) {
  const emcp::auth::ResourceServerConfig cfg = auth_config();
  emcp::auth::ResourceServer auth(cfg, server_);
  ASSERT_EQ(auth.status(), emcp::Status::kOk);
  options_.auth = auth.hooks();
  const std::string md = "resource_metadata=\"https://device.test:8443/.well-known/oauth-protected-resource/mcp\"";
  const std::string none = "Bearer " + md + ", scope=\"mcp\"";
  const auto bad = [&](const char* why) {
    return std::string("Bearer error=\"invalid_request\", error_description=\"") + why + "\", " + md;
  };
  const std::string unknown = "Bearer error=\"invalid_token\", error_description=\"unknown token\", " + md;
  const std::string syntax = bad("the Authorization header is not a scheme and its credentials");
  const std::string b64token = bad("the token is not an RFC 6750 b64token");
  struct Case {
    const char* what;
    std::string headers;
    int status;
    std::string challenge;  // the whole WWW-Authenticate value ("": none)
  };
  const Case cases[] = {
      {"no Authorization header", "", 401, none},
      {"another scheme", "Authorization: Basic Z29vZC10b2tlbg==\r\n", 401, none},
      {"another scheme without credentials", "Authorization: Negotiate\r\n", 401, none},
      {"another scheme with auth-params", "Authorization: Digest username=\"a\", realm=\"b\"\r\n", 401, none},
      {"\"Bearer\" alone", "Authorization: Bearer\r\n", 400, bad("no token after Bearer")},
      {"\"Bearer\" and spaces", "Authorization: Bearer    \r\n", 400, bad("no token after Bearer")},
      {"\"bearer\" alone", "Authorization: bearer\r\n", 400, bad("no token after Bearer")},
      {"two tokens", "Authorization: Bearer a b\r\n", 400, bad("more than one token after Bearer")},
      {"the good token, then a word", "Authorization: Bearer good-token x\r\n", 400, bad("more than one token after Bearer")},
      {"a character outside b64token", "Authorization: Bearer good-token!\r\n", 400, b64token},
      {"a non-ASCII byte", "Authorization: Bearer good-tok\xc3\xa9n\r\n", 400, b64token},
      {"a tab inside the token", "Authorization: Bearer good\ttoken\r\n", 400, b64token},
      {"'=' inside the token", "Authorization: Bearer good=token\r\n", 400, b64token},
      {"'=' only", "Authorization: Bearer ==\r\n", 400, b64token},
      {"a tab after the scheme", "Authorization: Bearer\tgood-token\r\n", 400, syntax},
      {"a comma after the scheme", "Authorization: Bearer,good-token\r\n", 400, syntax},
      {"an empty header", "Authorization:\r\n", 400, syntax},
      {"no scheme", "Authorization: =good-token\r\n", 400, syntax},
      {"two headers, the good token twice", "Authorization: Bearer good-token\r\nAuthorization: Bearer good-token\r\n", 400,
       bad("more than one Authorization header")},
      {"two headers, the second empty", "Authorization: Bearer good-token\r\nAuthorization:\r\n", 400,
       bad("more than one Authorization header")},
      {"an unknown token", "Authorization: Bearer bad-token\r\n", 401, unknown},
      {"the good token with padding", "Authorization: Bearer good-token=\r\n", 401, unknown},
      {"the good token in upper case", "Authorization: Bearer GOOD-TOKEN\r\n", 401, unknown},
      {"the scheme in lower case", "Authorization: bearer good-token\r\n", 200, ""},
      {"several spaces before the token", "Authorization: BEARER   good-token  \r\n", 200, ""},
  };
  const int c = open_conn();
  uint32_t want[3] = {0, 0, 0};  // 400, 401, 403
  for (const Case& k : cases) {
    feed(c, post(init_body(), k.headers));
    auto rs = responses(c);
    ASSERT_EQ(rs.size(), 1u) << k.what;
    EXPECT_EQ(rs[0].status, k.status) << k.what;
    EXPECT_EQ(rs[0].headers.count("www-authenticate"), k.challenge.empty() ? 0u : 1u) << k.what;
    if (!k.challenge.empty()) {
      EXPECT_EQ(rs[0].headers["www-authenticate"], k.challenge) << k.what;
    }
    if (k.status == 400) ++want[0];
    if (k.status == 401) ++want[1];
  }
  EXPECT_EQ(auth.refused_400(), want[0]);
  EXPECT_EQ(auth.refused_401(), want[1]);
  EXPECT_EQ(auth.refused_403(), want[2]);
  EXPECT_EQ(sessions_in_use(), 2u);
  options_.auth = nullptr;
}

// CORS (the Fetch standard's CORS protocol): a page of an allowed origin may call the MCP
// endpoints; its preflight is answered before authorization; other origins get nothing.
TEST_F(HttpEngine, CorsPreflightAndHeadersForAllowedOriginsOnly) {
  const auto preflight = [](const std::string& origin, const std::string& path = "/mcp") {
    return "OPTIONS " + path + " HTTP/1.1\r\nHost: localhost:8080\r\nOrigin: " + origin +
           "\r\nAccess-Control-Request-Method: POST\r\n"
           "Access-Control-Request-Headers: content-type, mcp-protocol-version, authorization\r\n\r\n";
  };
  const int c = open_conn();
  feed(c, preflight("http://localhost:5173"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 204);
  EXPECT_EQ(rs[0].headers["access-control-allow-origin"], "http://localhost:5173");
  EXPECT_EQ(rs[0].headers["vary"], "Origin");
  EXPECT_NE(rs[0].headers["access-control-allow-methods"].find("POST"), std::string::npos);
  for (const char* h : {"Authorization", "Content-Type", "MCP-Protocol-Version", "Mcp-Session-Id", "Last-Event-ID",
                        "Mcp-Method", "Mcp-Name", "*"})
    EXPECT_NE(rs[0].headers["access-control-allow-headers"].find(h), std::string::npos) << h;
  EXPECT_EQ(rs[0].headers["access-control-max-age"], "600");
  EXPECT_EQ(rs[0].headers.count("content-length"), 0u);  // RFC 9110: none in a 204
  EXPECT_TRUE(rs[0].body.empty());
  // The page's requests: answered with its origin, and the headers a script may read.
  feed(c, post(init_body(), "Origin: http://localhost:5173\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_EQ(rs[0].headers["access-control-allow-origin"], "http://localhost:5173");
  EXPECT_NE(rs[0].headers["access-control-expose-headers"].find("Mcp-Session-Id"), std::string::npos);
  EXPECT_NE(rs[0].headers["access-control-expose-headers"].find("WWW-Authenticate"), std::string::npos);
  EXPECT_EQ(rs[0].headers["mcp-session-id"].size(), 32u);
  // Its errors too (the browser lets the script read them).
  feed(c, "POST /mcp HTTP/1.1\r\nHost: localhost\r\nOrigin: http://127.0.0.1:3000\r\nContent-Type: text/plain\r\n"
          "Content-Length: 2\r\n\r\n{}");
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 415);
  EXPECT_EQ(rs[0].headers["access-control-allow-origin"], "http://127.0.0.1:3000");
  // Not a browser (no Origin): no CORS headers; OPTIONS is 204 with Allow.
  feed(c, post(init_body()));
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_EQ(rs[0].headers.count("access-control-allow-origin"), 0u);
  feed(c, "OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\n\r\n");
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 204);
  EXPECT_EQ(rs[0].headers["allow"], "GET, POST, DELETE, OPTIONS");
  EXPECT_EQ(rs[0].headers.count("access-control-allow-origin"), 0u);
  // An origin the Origin check refuses: 403, preflight or not, and no CORS header.
  feed(c, preflight("http://evil.example"));
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 403);
  EXPECT_EQ(rs[0].headers.count("access-control-allow-origin"), 0u);
  feed(c, post(init_body(), "Origin: https://evil.example\r\n"));
  EXPECT_EQ(responses(c)[0].status, 403);
  // Not an MCP endpoint: no CORS (404 stays 404 without the header).
  feed(c, "GET /other HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:5173\r\n\r\n");
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 404);
  EXPECT_EQ(rs[0].headers.count("access-control-allow-origin"), 0u);
  // The HTTP+SSE endpoints of 2024-11-05 take part.
  feed(c, preflight("http://localhost:5173", "/messages"));
  EXPECT_EQ(responses(c)[0].status, 204);
  // A narrower CORS list: an origin the Origin check accepts but the list does not gets no
  // CORS (403 to its preflight, its requests served without the header).
  const char* const origins[] = {"localhost", "app.test"};
  const char* const cors[] = {"app.test"};
  options_.allowed_origins = emcp::Span<const char* const>(origins, 2);
  options_.cors_origins = emcp::Span<const char* const>(cors, 1);
  options_.cors_max_age_s = 1000000;  // bounded to a day
  feed(c, preflight("http://localhost:5173"));
  EXPECT_EQ(responses(c)[0].status, 403);
  feed(c, preflight("https://app.test"));
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 204);
  EXPECT_EQ(rs[0].headers["access-control-allow-origin"], "https://app.test");
  EXPECT_EQ(rs[0].headers["access-control-max-age"], "86400");
  feed(c, post(init_body(), "Origin: http://localhost:5173\r\n"));
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_EQ(rs[0].headers.count("access-control-allow-origin"), 0u);
  options_.cors = false;  // off: no preflight at all
  feed(c, preflight("https://app.test"));
  EXPECT_EQ(responses(c)[0].status, 403);
  options_ = HttpOptions();
  options_.sha1 = &emcp::crypto::sha1;
}

// With authorization, a preflight (which never carries credentials) is still answered, and the
// 401 of the page's request carries the CORS headers, so its script can read WWW-Authenticate.
TEST_F(HttpEngine, CorsPreflightComesBeforeAuthorization) {
  const emcp::auth::ResourceServerConfig cfg = auth_config();
  emcp::auth::ResourceServer auth(cfg, server_);
  ASSERT_EQ(auth.status(), emcp::Status::kOk);
  options_.auth = auth.hooks();
  const int c = open_conn();
  feed(c, "OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\nOrigin: http://localhost:6274\r\n"
          "Access-Control-Request-Method: POST\r\nAccess-Control-Request-Headers: authorization\r\n\r\n");
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 204);
  EXPECT_EQ(rs[0].headers["access-control-allow-origin"], "http://localhost:6274");
  feed(c, post(init_body(), "Origin: http://localhost:6274\r\n"));
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 401);
  EXPECT_EQ(rs[0].headers["access-control-allow-origin"], "http://localhost:6274");
  EXPECT_NE(rs[0].headers["www-authenticate"].find("resource_metadata="), std::string::npos);
  feed(c, post(init_body(), "Origin: http://localhost:6274\r\nAuthorization: Bearer good-token\r\n"));
  EXPECT_EQ(responses(c)[0].status, 200);
  // The longest Origin kept (128 bytes) with the bearer challenge: a head longer than the room
  // before the body goes out in two writes, whole.
  const char* const any[] = {"*"};
  options_.allowed_origins = emcp::Span<const char* const>(any, 1);
  const std::string origin = "http://" + std::string(116, 'a') + ".test";
  ASSERT_EQ(origin.size(), 128u);
  feed(c, post(init_body(), "Origin: " + origin + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 401);
  EXPECT_EQ(rs[0].headers["access-control-allow-origin"], origin);
  EXPECT_NE(rs[0].headers["www-authenticate"].find("resource_metadata="), std::string::npos);
  EXPECT_NE(rs[0].body.find("Unauthorized"), std::string::npos) << rs[0].body;
  feed(c, "OPTIONS /mcp HTTP/1.1\r\nHost: localhost\r\nOrigin: " + origin + "\r\n\r\n");
  rs = responses(c);
  EXPECT_EQ(rs[0].status, 204);
  EXPECT_EQ(rs[0].headers["access-control-allow-origin"], origin);
  options_.auth = nullptr;
}

TEST_F(HttpEngine, ResourceServerRefusesAConfigurationThatCannotWork) {
  emcp::auth::ResourceServerConfig cfg = auth_config();
  cfg.resource = "not a uri";
  emcp::auth::ResourceServer bad(cfg, server_);
  EXPECT_EQ(bad.status(), emcp::Status::kInvalidArgument);
  cfg = auth_config();
  cfg.required_scope = "mcp unknown-scope";
  emcp::auth::ResourceServer unknown(cfg, server_);
  const char* what = nullptr;
  EXPECT_EQ(unknown.check(&what), emcp::Status::kNotFound);
  EXPECT_STREQ(what, "mcp unknown-scope");
}

// A plain static that is started later (as the serving loops hold it): before start(), and after
// a start() that failed, every request is refused (fail closed, 500) - never served unchecked;
// a good start() then lets the right token through.
TEST_F(HttpEngine, ResourceServerRefusesEverythingUntilStarted) {
  emcp::auth::ResourceServer auth;
  EXPECT_EQ(auth.status(), emcp::Status::kInvalidState);
  const char* what = nullptr;
  EXPECT_EQ(auth.check(&what), emcp::Status::kInvalidState);
  options_.auth = auth.hooks();
  const int c = open_conn();
  feed(c, post(init_body(), "Authorization: Bearer good-token\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 500);
  emcp::auth::ResourceServerConfig cfg = auth_config();
  cfg.resource = "not a uri";
  EXPECT_EQ(auth.start(cfg, server_), emcp::Status::kInvalidArgument);
  feed(c, post(init_body(), "Authorization: Bearer good-token\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 500);
  const emcp::auth::ResourceServerConfig good = auth_config();
  ASSERT_EQ(auth.start(good, server_), emcp::Status::kOk);
  EXPECT_EQ(auth.check(&what), emcp::Status::kOk);
  feed(c, post(init_body(), "Authorization: Bearer good-token\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200) << rs[0].body;
  options_.auth = nullptr;
}

TEST_F(HttpEngine, IdleSessionsExpire) {
  options_.session_idle_ms = 60000;
  const std::string sid = session();
  g_now += 30000;
  poll();
  EXPECT_EQ(sessions_in_use(), 1u);
  g_now += 31000;
  poll();
  EXPECT_EQ(sessions_in_use(), 0u);
  const int c = open_conn();
  feed(c, post(call(1, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(responses(c)[0].status, 404);
}

TEST_F(HttpEngine, ResumingReplaysOnlyThatStreamsMissedEvents) {
  const std::string sid = session();
  // The GET stream gets a log message; then the client drops it.
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  log("on the GET stream");
  const auto get_events = events(responses(g)[0].body);
  ASSERT_EQ(get_events.size(), 2u);
  closed(g);
  // Meanwhile a POST stream ends early (detach) and its answer arrives, and another log goes to
  // the now detached GET stream.
  const int c = open_conn();
  feed(c, post(call(4, "detach"), "Mcp-Session-Id: " + sid + "\r\n"));
  const std::string post_id = events(responses(c)[0].body)[0].id;
  log("while away");
  ASSERT_EQ(complete(g_slow[0]), Status::kOk);
  // Resuming the GET stream gives its missed log only, and the stream goes on.
  feed(c, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + get_events[1].id + "\r\n\r\n");
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_FALSE(rs[0].complete);
  auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].data.find("while away"), std::string::npos);
  // Resuming the POST stream from its priming event gives its answer only.
  const int d = open_conn();
  feed(d, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + post_id + "\r\n\r\n");
  rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_NE(ev[0].data.find("slow done"), std::string::npos);
  // Event ids are unique in the session.
  EXPECT_NE(ev[0].id, get_events[1].id);
}

TEST_F(HttpEngine, ReplayBufferKeepsTheNewestEventsThatFit) {
  const std::string sid = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  const std::string first = events(responses(g)[0].body)[0].id;  // the priming event
  closed(g);
  // 1 KiB of replay buffer: twenty messages of ~130 bytes do not all fit: the newest stay.
  for (int i = 0; i < 20; ++i) log(std::string("message number " + std::to_string(i)).c_str());
  const int c = open_conn();
  const std::string resume = "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " +
                             sid + "\r\nLast-Event-ID: " + first + "\r\n\r\n";
  feed(c, resume);
  auto ev = events(responses(c)[0].body);
  ASSERT_GE(ev.size(), 3u);
  ASSERT_LT(ev.size(), 20u);
  EXPECT_NE(ev.back().data.find("message number 19"), std::string::npos);
  EXPECT_EQ(ev[0].data.find("message number 0\""), std::string::npos);
  closed(c);
  // An event larger than the whole buffer cannot be kept; what comes after it is.
  log(std::string(2000, 'x').c_str());
  log("after the big one");
  const int d = open_conn();
  feed(d, resume);
  ev = events(responses(d)[0].body);
  ASSERT_FALSE(ev.empty());
  EXPECT_NE(ev.back().data.find("after the big one"), std::string::npos);
  for (const Event& e : ev) EXPECT_EQ(e.data.find("xxxx"), std::string::npos);
}

}  // namespace

namespace {

TEST_F(HttpEngine, CancelledDeferredCallEndsItsPostWithoutAnAnswer) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(11, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_TRUE(responses(c).empty());
  const int d = open_conn();
  feed(d, post(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":11,"reason":"no"}})",
               "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(responses(d)[0].status, 202);
  poll();
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].headers["content-type"], "text/event-stream");
  EXPECT_TRUE(rs[0].complete);
  EXPECT_EQ(rs[0].body.find("\"id\":11"), std::string::npos) << "a cancelled request is never answered";
  EXPECT_TRUE(wants_input(c));
  ASSERT_EQ(g_slow.size(), 1u);
  EXPECT_EQ(complete(g_slow[0]), Status::kClosed);
}

}  // namespace

namespace {

// Review findings, each pinned.

TEST_F(HttpEngine, RequestOfAnEndedSessionDoesNotRunInTheSessionThatTookItsSlot) {
  const std::string a = session();
  const int c = open_conn();
  const std::string req = post(call(2, "echo", R"({"text":"mine"})"), "Mcp-Session-Id: " + a + "\r\n");
  feed(c, req.substr(0, req.size() - 5));  // the body is not complete yet
  const int d = open_conn();
  feed(d, "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + a + "\r\n\r\n");
  EXPECT_EQ(responses(d)[0].status, 200);
  const std::string b = session();  // takes the freed slot
  feed(c, req.substr(req.size() - 5));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 404);
  EXPECT_EQ(rs[0].headers.count("mcp-session-id"), 0u) << "another client's session id leaked";
}

TEST_F(HttpEngine, SlowUploadKeepsItsSessionFromEviction) {
  const std::string a = session();
  const int c = open_conn();
  const std::string req = post(call(2, "echo", R"({"text":"mine"})"), "Mcp-Session-Id: " + a + "\r\n");
  feed(c, req.substr(0, req.size() - 5));
  g_now += 10;
  (void)session();
  g_now += 10;
  const int e = open_conn();
  feed(e, post(init_body()));  // takes the idle second session's slot, not the uploading one's
  EXPECT_EQ(responses(e)[0].status, 200);
  feed(c, req.substr(req.size() - 5));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_NE(rs[0].body.find("mine"), std::string::npos);
}

TEST_F(HttpEngine, DeletingASessionEndsItsWaitingPosts) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(3, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  const int d = open_conn();
  feed(d, "DELETE /mcp HTTP/1.1\r\nHost: localhost\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete);
  EXPECT_EQ(rs[0].headers["content-type"], "text/event-stream");
  EXPECT_TRUE(events(rs[0].body).empty());
}

TEST_F(HttpEngine, AnswerToAnotherRequestNeverBecomesTheCurrentAnswer) {
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(7, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  closed(c);  // the client of request 7 leaves
  const int d = open_conn();
  feed(d, post(call(8, "finish_now"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find(R"("id":8)"), std::string::npos);
  EXPECT_EQ(rs[0].body.find(R"("id":7)"), std::string::npos);
  EXPECT_NE(rs[0].body.find("finished it"), std::string::npos);
}

TEST_F(HttpEngine, FailedSendInsideAStreamLeavesNoStaleStateInTheSlot) {
  const std::string sid = session();
  const int c = open_conn();
  port_.fail_sends = true;
  feed(c, post(call(4, "detach"), "Mcp-Session-Id: " + sid + "\r\n"));
  port_.fail_sends = false;
  EXPECT_TRUE(port_.closed[static_cast<uint16_t>(c)]);
  // The next connection in that slot: a deferred call holds it until answered.
  const int d = open_conn();
  EXPECT_EQ(d, c);
  feed(d, post(call(5, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_FALSE(wants_input(d));
  EXPECT_TRUE(responses(d).empty());
  ASSERT_EQ(g_slow.size(), 2u);
  ASSERT_EQ(complete(g_slow[1]), Status::kOk);
  auto rs = responses(d);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find(R"("id":5)"), std::string::npos);
}

TEST_F(HttpEngine, EventsOfAFailedConnectionStayWholeForResuming) {
  const std::string sid = session();
  const int g = open_conn();
  feed(g, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n");
  const std::string primed = events(responses(g)[0].body)[0].id;
  port_.fail_sends = true;
  log(std::string(600, 'a').c_str());  // fails in the middle
  log("second");                       // before any poll
  port_.fail_sends = false;
  poll();
  const int c = open_conn();
  feed(c, "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid +
              "\r\nLast-Event-ID: " + primed + "\r\n\r\n");
  const auto ev = events(responses(c)[0].body);
  ASSERT_EQ(ev.size(), 2u);
  EXPECT_NE(ev[0].data.find(std::string(600, 'a')), std::string::npos);
  EXPECT_EQ(ev[0].data.back(), '}');
  EXPECT_NE(ev[1].data.find("second"), std::string::npos);
}

TEST_F(HttpEngine, CloseStreamNeedsARevisionThatCanResume) {
  const std::string sid = session("2025-06-18");
  const int c = open_conn();
  feed(c, post(call(4, "detach"), "Mcp-Session-Id: " + sid + "\r\n"));
  EXPECT_EQ(g_close_status, Status::kInvalidState);
  EXPECT_TRUE(responses(c).empty()) << "the stream stays open";
  ASSERT_EQ(complete(g_slow[0]), Status::kOk);
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_NE(rs[0].body.find("slow done"), std::string::npos);
}

}  // namespace

namespace {
// The id of the ping request an event stream carries ("" if none).
std::string ping_id(const std::string& stream) {
  for (const Event& e : events(stream)) {
    if (e.data.find(R"("method":"ping")") == std::string::npos) continue;
    const size_t at = e.data.find(R"("id":)");
    return e.data.substr(at + 5, e.data.find(',', at) - at - 5);
  }
  return "";
}
}  // namespace

TEST_F(HttpEngine, ResponseTooLargeToKeepIs400AndEndsTheRequestItAnswers) {
  // MCP: input the server cannot accept gets an HTTP error status; the server's request it
  // answers ends at once, with the reason, instead of by its timeout.
  g_pings_ended = 0;
  const std::string sid = session();
  const int c = open_conn();
  feed(c, post(call(2, "ask"), "Mcp-Session-Id: " + sid + "\r\n"));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  const std::string id = ping_id(rs[0].body);
  ASSERT_FALSE(id.empty()) << rs[0].body;
  const std::string big = R"({"jsonrpc":"2.0","id":)" + id + R"(,"result":{"t":")" + std::string(5000, 'a') + R"("}})";
  feed(c, post(big, "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 400);
  EXPECT_EQ(rs[0].body,
            R"x({"jsonrpc":"2.0","id":null,"error":{"code":-32600,"message":"Invalid Request: response too large for the arena (EMCP_ARENA_SIZE)"}})x");
  EXPECT_EQ(g_pings_ended, 1);
  EXPECT_EQ(g_ping_outcome, emcp::mcp::Response::Outcome::kError);
  EXPECT_EQ(g_ping_message.view(), "response too large for the arena (EMCP_ARENA_SIZE)"sv);
  // An answer that fits is accepted as before.
  feed(c, post(call(3, "ask"), "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  const std::string id2 = ping_id(rs[0].body);
  feed(c, post(R"({"jsonrpc":"2.0","id":)" + id2 + R"(,"result":{}})", "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 202);
  EXPECT_EQ(g_pings_ended, 2);
  EXPECT_EQ(g_ping_outcome, emcp::mcp::Response::Outcome::kResult);
}

TEST_F(HttpEngine, NoSessionSlotIs503WithRetryAfter) {
  // Both session slots hold a live connection (a call waiting for its deferred answer): a new
  // initialize finds no slot it may take.
  const std::string a = session(), b = session();
  const int ca = open_conn(), cb = open_conn();
  feed(ca, post(call(2, "slow"), "Mcp-Session-Id: " + a + "\r\n"));
  feed(cb, post(call(2, "slow"), "Mcp-Session-Id: " + b + "\r\n"));
  const int c = open_conn();
  feed(c, post(init_body()));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 503);
  EXPECT_FALSE(rs[0].headers["retry-after"].empty());
  EXPECT_EQ(sessions_in_use(), 2u);
}

TEST_F(HttpEngine, TooManyRequestsInFlightInASessionIs503WithRetryAfter) {
  // One session with EMCP_HTTP_STREAMS requests in flight (deferred calls holding their
  // streams): the next request is refused (a bigger engine, so that connections are not the
  // limit).
  // Built and destroyed inside a scope (or outside one after a failed ASSERT).
  std::optional<emcp::transport::StaticHttpServer<EMCP_HTTP_STREAMS + 3, 1, 4096, 512, 1024>> big;
  {
    emcp_test::NoHeapScope no_heap;
    big.emplace(server_, options_, port_.port());
  }
  auto send = [&](const std::string& bytes) {
    emcp_test::NoHeapScope no_heap;
    const int k = big->open();
    port_.out[static_cast<uint16_t>(k)].clear();
    EXPECT_EQ(big->receive(static_cast<uint16_t>(k), bytes.data(), bytes.size()), bytes.size());
    return k;
  };
  const int init = send(post(init_body()));
  auto rs = responses(init);
  ASSERT_EQ(rs.size(), 1u);
  const std::string sid = rs[0].headers["mcp-session-id"];
  send(post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", "Mcp-Session-Id: " + sid + "\r\n"));
  for (int i = 0; i < EMCP_HTTP_STREAMS; ++i) send(post(call(10 + i, "slow"), "Mcp-Session-Id: " + sid + "\r\n"));
  const int extra = send(post(call(99, "echo", R"({"text":"x"})"), "Mcp-Session-Id: " + sid + "\r\n"));
  rs = responses(extra);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 503);
  EXPECT_FALSE(rs[0].headers["retry-after"].empty());
  emcp_test::NoHeapScope no_heap;
  big.reset();
}
