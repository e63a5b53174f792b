// Streamable HTTP at MCP 2026-07-28 (basic/transports/streamable-http.mdx): POST only, no
// session id, the request metadata headers checked against the body (400 + -32020), the HTTP
// status of each refusal (400 for _meta, headers, revision; 404 for -32601), the request's
// notifications on its own event stream, a deferred answer on the POST's connection, and the
// closing of that connection as cancellation. Read with the fixture's RFC 9112 and SSE readers
// (http_engine_fixture.h); the legacy era keeps working beside it on the same endpoint.
#include "http_engine_fixture.h"

namespace {

constexpr const char* kMeta =
    R"("_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";

std::string modern(int id, const std::string& method, const std::string& params = "") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":")" + method + R"(","params":{)" + params +
         (params.empty() ? "" : ",") + kMeta + "}}";
}

std::string headers(const std::string& method, const std::string& name = "", const char* version = "2026-07-28") {
  std::string h = "MCP-Protocol-Version: " + std::string(version) + "\r\nMcp-Method: " + method + "\r\n";
  if (!name.empty()) h += "Mcp-Name: " + name + "\r\n";
  return h;
}

class HttpStateless : public HttpEngine {
 protected:
  // One POST on a fresh connection; its single response.
  Response once(const std::string& body, const std::string& extra) {
    const int c = open_conn();
    feed(c, post(body, extra));
    auto rs = responses(c);
    EXPECT_EQ(rs.size(), 1u) << body;
    closed(c);
    return rs.empty() ? Response{} : rs[0];
  }
  void expect_error(const Response& r, int status, int code) {
    EXPECT_EQ(r.status, status) << r.body;
    EXPECT_NE(r.body.find("\"code\":" + std::to_string(code)), std::string::npos) << r.body;
    EXPECT_EQ(r.headers.count("mcp-session-id"), 0u);
  }
};

TEST_F(HttpStateless, RequestIsServedWithoutASession) {
  Response r = once(modern(1, "tools/call", R"("name":"echo","arguments":{"text":"hi"})"),
                          headers("tools/call", "echo") + "Mcp-Session-Id: not-a-session\r\n");
  EXPECT_EQ(r.status, 200) << "an Mcp-Session-Id header is ignored, not looked up";
  EXPECT_EQ(r.headers["content-type"], "application/json");
  EXPECT_EQ(r.headers.count("mcp-session-id"), 0u) << "no session id is minted or echoed";
  EXPECT_NE(r.body.find(R"("resultType":"complete")"), std::string::npos);
  EXPECT_NE(r.body.find(R"("text":"hi")"), std::string::npos);
  EXPECT_EQ(sessions_in_use(), 0u);
}

TEST_F(HttpStateless, RefusalsCarryTheirHttpStatus) {
  expect_error(once(modern(1, "ping"), headers("ping")), 404, -32601);
  expect_error(once(modern(2, "initialize"), headers("initialize")), 404, -32601);
  expect_error(once(modern(3, "no/such"), headers("no/such")), 404, -32601);
  // _meta without its required fields: -32602, 400.
  expect_error(once(R"({"jsonrpc":"2.0","id":4,"method":"server/discover","params":{}})", headers("server/discover")),
               400, -32602);
  expect_error(once(R"({"jsonrpc":"2.0","id":5,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}})",
                    headers("server/discover")),
               400, -32602);
  // An unknown revision in both: -32022 with the supported ones.
  const Response v = once(R"({"jsonrpc":"2.0","id":6,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}})",
                          headers("server/discover", "", "v999.0.0"));
  expect_error(v, 400, -32022);
  EXPECT_NE(v.body.find(R"("supported":["2026-07-28"],"requested":"v999.0.0")"), std::string::npos) << v.body;
  // A feature's own error is an answer: 200.
  const Response t = once(modern(7, "tools/call", R"("name":"nope")"), headers("tools/call", "nope"));
  expect_error(t, 200, -32602);
}

TEST_F(HttpStateless, HeadersMustMirrorTheBody) {
  const std::string body = modern(1, "tools/call", R"("name":"echo","arguments":{"text":"x"})");
  expect_error(once(body, "Mcp-Method: tools/call\r\nMcp-Name: echo\r\n"), 400, -32020);  // no version header
  expect_error(once(body, headers("tools/call", "echo", "2025-11-25")), 400, -32020);    // a legacy one
  expect_error(once(body, "MCP-Protocol-Version: 2026-07-28\r\nMcp-Name: echo\r\n"), 400, -32020);
  expect_error(once(body, headers("tools/list", "echo")), 400, -32020);
  {
    SCOPED_TRACE("values are case-sensitive");
    expect_error(once(body, headers("TOOLS/CALL", "echo")), 400, -32020);
  }
  {
    SCOPED_TRACE("Mcp-Name is required for tools/call");
    expect_error(once(body, headers("tools/call")), 400, -32020);
  }
  expect_error(once(body, headers("tools/call", "ECHO")), 400, -32020);
  {
    SCOPED_TRACE("unpadded base64");
    expect_error(once(body, headers("tools/call", "=?base64?ZWNobw?=")), 400, -32020);
  }
  {
    SCOPED_TRACE("non-zero unused bits");
    expect_error(once(body, headers("tools/call", "=?base64?ZWNob3==?=")), 400, -32020);
  }
  {
    SCOPED_TRACE("outside the alphabet");
    expect_error(once(body, headers("tools/call", "=?base64?ZW*obw==?=")), 400, -32020);
  }
  {
    SCOPED_TRACE("a raw non-ASCII value");
    expect_error(once(body, headers("tools/call", "ech\xC3\xB6")), 400, -32020);
  }
  // Accepted: the base64 form, lower-case header names, spaces around a value.
  EXPECT_EQ(once(body, headers("tools/call", "=?base64?ZWNobw==?=")).status, 200);
  EXPECT_EQ(once(body, "mcp-protocol-version: 2026-07-28\r\nmcp-method: tools/call\r\nmcp-name: echo\r\n").status, 200);
  EXPECT_EQ(once(body, "MCP-Protocol-Version:  2026-07-28 \r\nMcp-Method:  tools/call  \r\nMcp-Name:  echo  \r\n").status,
            200);
  // Header version 2026-07-28, body another: the mismatch comes before the revision check.
  expect_error(once(R"({"jsonrpc":"2.0","id":2,"method":"server/discover","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"v999.0.0","io.modelcontextprotocol/clientCapabilities":{}}}})",
                    headers("server/discover")),
               400, -32020);
}

TEST_F(HttpStateless, PostOnlyOneMessageAndNoResponses) {
  const int c = open_conn();
  feed(c, "GET /mcp HTTP/1.1\r\nHost: localhost:8080\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\n\r\n");
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 405);
  EXPECT_EQ(rs[0].headers["allow"], "POST");
  feed(c, "DELETE /mcp HTTP/1.1\r\nHost: localhost:8080\r\nMCP-Protocol-Version: 2026-07-28\r\n\r\n");
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 405);
  closed(c);
  expect_error(once("[" + modern(1, "tools/list") + "]", headers("tools/list")), 400, -32600);
  expect_error(once(R"({"jsonrpc":"2.0","id":1,"result":{}})", headers("tools/list")), 400, -32600);
  const Response n = once(R"({"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":1}})",
                          headers("notifications/cancelled"));
  EXPECT_EQ(n.status, 202);
  EXPECT_TRUE(n.body.empty());
}

TEST_F(HttpStateless, NotificationsOfTheRequestComeOnItsOwnStream) {
  const std::string params = R"("name":"progress","_meta":{"progressToken":"p","io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}})";
  Response r = once(R"({"jsonrpc":"2.0","id":3,"method":"tools/call","params":{)" + params + "}}",
                          headers("tools/call", "progress"));
  EXPECT_EQ(r.status, 200);
  EXPECT_EQ(r.headers["content-type"], "text/event-stream");
  const auto ev = events(r.body);
  ASSERT_EQ(ev.size(), 2u) << r.body;
  EXPECT_TRUE(ev[0].id.empty()) << "no event ids: nothing resumes at this revision";
  EXPECT_NE(ev[0].data.find(R"("method":"notifications/progress")"), std::string::npos);
  EXPECT_NE(ev[1].data.find(R"("id":3,"result")"), std::string::npos);
}

TEST_F(HttpStateless, DeferredAnswerComesOnThePostAndClosingItCancels) {
  int c = open_conn();
  feed(c, post(modern(1, "tools/call", R"("name":"slow")"), headers("tools/call", "slow")));
  ASSERT_EQ(g_slow.size(), 1u);
  EXPECT_TRUE(responses(c).empty()) << "nothing until the call ends";
  EXPECT_EQ(complete(g_slow[0]), Status::kOk);
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_NE(rs[0].body.find(R"("id":1,"result")"), std::string::npos);
  EXPECT_NE(rs[0].body.find("slow done"), std::string::npos);
  // The next call on the same connection, then the client hangs up: cancelled.
  feed(c, post(modern(2, "tools/call", R"("name":"slow")"), headers("tools/call", "slow")));
  ASSERT_EQ(g_slow.size(), 2u);
  EXPECT_FALSE(server_.cancelled(g_slow[1]));
  closed(c);
  EXPECT_TRUE(server_.cancelled(g_slow[1])) << "closing the response stream is cancellation";
  EXPECT_EQ(complete(g_slow[1]), Status::kClosed);
  // Still serving, both eras.
  EXPECT_EQ(once(modern(3, "tools/list"), headers("tools/list")).status, 200);
  c = open_conn();
  feed(c, post(init_body()));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_EQ(rs[0].headers["mcp-session-id"].size(), 32u) << "legacy clients keep their sessions";
}

}  // namespace
