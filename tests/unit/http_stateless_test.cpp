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

// Arguments mirrored in Mcp-Param-* headers (x-mcp-header), also from a nested object.
void run_sql(ToolCall& c) { c.text({"ran in ", c.str("region")}); }
constexpr Param kWhere[] = {Param::string("zone").in_header("Zone")};
constexpr Param kSqlParams[] = {
    Param::string("region").in_header("Region"),
    Param::integer("shard").in_header("Shard"),
    Param::boolean("dry").in_header("Dry-Run"),
    Param::object("where", kWhere),
    Param::string("query"),
};
constexpr Tool kSqlTools[] = {Tool::make("sql", &run_sql).with_params(kSqlParams)};

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

TEST_F(HttpStateless, McpParamHeadersMirrorTheArguments) {
  {
    emcp_test::NoHeapScope no_heap;
    server_.set_tools(kSqlTools);
  }
  auto call = [&](const std::string& args, const std::string& extra) {
    return once(modern(1, "tools/call", R"("name":"sql","arguments":{)" + args + "}"), headers("tools/call", "sql") + extra);
  };
  // The schema says which arguments are mirrored.
  Response list = once(modern(2, "tools/list"), headers("tools/list"));
  EXPECT_NE(list.body.find(R"("region":{"type":"string","x-mcp-header":"Region"})"), std::string::npos) << list.body;
  EXPECT_NE(list.body.find(R"("zone":{"type":"string","x-mcp-header":"Zone"})"), std::string::npos) << list.body;
  // Matching headers: served. Names are case-insensitive, integers compare as numbers,
  // base64 is decoded, values are trimmed, headers of no mirrored argument are ignored.
  const std::string all = R"("region":"us-west1","shard":7,"dry":false,"where":{"zone":"b"},"query":"x")";
  EXPECT_EQ(call(all, "Mcp-Param-Region: us-west1\r\nmcp-param-shard: 007\r\nMcp-Param-Dry-Run: false\r\n"
                      "Mcp-Param-Zone:  b \r\nMcp-Param-Query: anything\r\n").status, 200);
  EXPECT_EQ(call(R"("region":"Hello, 世界")", "Mcp-Param-Region: =?base64?SGVsbG8sIOS4lueVjA==?=\r\n").status, 200);
  EXPECT_EQ(call(R"("region":"=?base64?SGVsbG8")", "Mcp-Param-Region: =?base64?SGVsbG8\r\n").status, 200)
      << "without its ?= suffix the value is literal";
  EXPECT_EQ(call(R"("shard":-3)", "Mcp-Param-Shard: -3\r\n").status, 200);
  EXPECT_EQ(call(R"("query":"no header needed")", "").status, 200);
  // Anything else: 400 with -32020, and the server keeps serving.
  expect_error(call(R"("region":"us-west1")", ""), 400, -32020);                                   // missing
  expect_error(call(R"("region":"us-west1")", "Mcp-Param-Region: us-east1\r\n"), 400, -32020);    // differs
  expect_error(call(R"("query":"x")", "Mcp-Param-Region: us-west1\r\n"), 400, -32020);            // no argument
  expect_error(call(R"("region":"Hello")", "Mcp-Param-Region: =?base64?SGVsbG8?=\r\n"), 400, -32020);  // padding
  expect_error(call(R"("region":"Hello")", "Mcp-Param-Region: =?base64?SGVs!!!bG8=?=\r\n"), 400, -32020);
  expect_error(call(R"("region":"é")", "Mcp-Param-Region: é\r\n"), 400, -32020);  // not plain ASCII: base64 it
  EXPECT_EQ(call(R"("region":"a b")", "Mcp-Param-Region: a\x01b\r\n").status, 400)
      << "a control byte: the HTTP parser refuses the head before any JSON-RPC";
  expect_error(call(R"("shard":7)", "Mcp-Param-Shard: 7.0\r\n"), 400, -32020);
  expect_error(call(R"("shard":7)", "Mcp-Param-Shard: 99999999999999999999999\r\n"), 400, -32020);
  expect_error(call(R"("shard":-7)", "Mcp-Param-Shard: 7\r\n"), 400, -32020);
  expect_error(call(R"("dry":true)", "Mcp-Param-Dry-Run: True\r\n"), 400, -32020);
  expect_error(call(R"("where":{"zone":"b"})", "Mcp-Param-Zone: c\r\n"), 400, -32020);
  expect_error(call(R"("where":{"zone":"b"})", ""), 400, -32020);
  EXPECT_EQ(call(all, "Mcp-Param-Region: us-west1\r\nMcp-Param-Shard: 7\r\nMcp-Param-Dry-Run: false\r\n"
                      "Mcp-Param-Zone: b\r\n").status, 200);
}

TEST_F(HttpStateless, ListenStreamsWhatItAskedForUntilItsResponseCloses) {
  int c = open_conn();
  feed(c, post(modern(5, "subscriptions/listen", R"("notifications":{"toolsListChanged":true,"promptsListChanged":true})"),
               headers("subscriptions/listen")));
  auto rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  EXPECT_EQ(rs[0].headers["content-type"], "text/event-stream");
  EXPECT_FALSE(rs[0].complete) << "the stream stays open";
  auto ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 1u) << rs[0].body;
  EXPECT_EQ(ev[0].data,
            R"({"jsonrpc":"2.0","method":"notifications/subscriptions/acknowledged","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5},"notifications":{"toolsListChanged":true}}})")
      << "first, and with only what this server has (no prompts)";
  EXPECT_EQ(server_.listens(), 1u);
  {
    emcp_test::NoHeapScope no_heap;
    server_.set_tools(emcp::Span<const Tool>(kTools, 2));  // the tool list changes
  }
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 2u) << rs[0].body;
  EXPECT_EQ(ev[1].data,
            R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed","params":{"_meta":{"io.modelcontextprotocol/subscriptionId":5}}})");
  // Other requests are served meanwhile, on other connections.
  EXPECT_EQ(once(modern(6, "tools/list"), headers("tools/list")).status, 200);
  // The client closes the stream: the listen ends.
  closed(c);
  EXPECT_EQ(server_.listens(), 0u) << "closing the response ends the subscription";
  // A listen the server ends (end_listens) gets its completion result, which ends the response;
  // the connection serves the next request.
  c = open_conn();
  feed(c, post(modern(7, "subscriptions/listen", R"("notifications":{"toolsListChanged":true})"),
               headers("subscriptions/listen")));
  {
    emcp_test::NoHeapScope no_heap;
    EXPECT_EQ(server_.end_listens(), Status::kOk);
  }
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_TRUE(rs[0].complete);
  ev = events(rs[0].body);
  ASSERT_EQ(ev.size(), 2u) << rs[0].body;
  EXPECT_NE(ev[1].data.find(R"("id":7,"result":{"resultType":"complete")"), std::string::npos) << ev[1].data;
  EXPECT_NE(ev[1].data.find(R"("io.modelcontextprotocol/subscriptionId":7})"), std::string::npos) << ev[1].data;
  EXPECT_EQ(server_.listens(), 0u);
  feed(c, post(modern(8, "tools/list"), headers("tools/list")));
  rs = responses(c);
  ASSERT_EQ(rs.size(), 1u);
  EXPECT_EQ(rs[0].status, 200);
  // A bad filter is a plain error answer, and nothing stays open.
  Response bad = once(modern(9, "subscriptions/listen", R"("notifications":{"toolsListChanged":1})"),
                      headers("subscriptions/listen"));
  expect_error(bad, 200, -32602);
  EXPECT_EQ(server_.listens(), 0u);
}

}  // namespace
