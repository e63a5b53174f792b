// The HTTP/1.1 request parser: RFC 9112 framing (Content-Length, chunked), the kept headers,
// every limit with its status, and the same result for every split of the input.
#include "emcp/http/http.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "heap_guard.h"

using emcp::StrView;
using emcp::http::Method;
using emcp::http::RequestParser;
using Event = emcp::http::RequestParser::Event;

namespace {

struct Result {
  std::vector<std::string> events;  // "head", "body:<bytes>", "done", "error:<status>"
  std::string body;
  RequestParser parser;
  emcp::http::Request last;  // the last request's head, kept across the reset after kDone
};

// Parses `text` (one or more requests) fed in pieces of `piece` bytes (0: whole).
void parse(const std::string& text, size_t piece, Result* r, uint32_t max_body = 1 << 20) {
  r->events.clear();
  r->body.clear();
  r->parser.reset();
  r->parser.set_max_body(max_body);
  size_t pos = 0;
  std::string body;
  bool stop = false;
  while (pos < text.size() && !stop) {
    size_t n = piece == 0 ? text.size() - pos : std::min(piece, text.size() - pos);
    const char* p = text.data() + pos;
    pos += n;
    while (!stop) {
      size_t used = 0;
      Event e;
      {
        emcp_test::NoHeapScope no_heap;
        e = r->parser.push(p, n, &used);
      }
      p += used;
      n -= used;
      if (e == Event::kNeedInput) break;
      if (e == Event::kHead) r->events.push_back("head");
      if (e == Event::kBody) r->body.append(r->parser.body().data(), r->parser.body().size());
      if (e == Event::kDone) {
        r->last = r->parser.request();
        r->events.push_back("done:" + r->body);
        r->body.clear();
        r->parser.reset();
        r->parser.set_max_body(max_body);
      }
      if (e == Event::kError) {
        r->events.push_back("error:" + std::to_string(r->parser.error_status()));
        stop = true;
      }
    }
  }
}

// The events, checked to be the same for every piece size.
std::vector<std::string> events_of(const std::string& text, uint32_t max_body = 1 << 20) {
  static Result whole, split;
  parse(text, 0, &whole, max_body);
  for (size_t piece : {1u, 2u, 3u, 7u, 64u}) {
    parse(text, piece, &split, max_body);
    EXPECT_EQ(split.events, whole.events) << "piece " << piece << " of: " << text.substr(0, 80);
  }
  return whole.events;
}

const Result& single(const std::string& text) {
  static Result r;
  parse(text, 0, &r);
  return r;
}

using V = std::vector<std::string>;

}  // namespace

TEST(HttpParser, PostWithContentLengthAsNodeSendsIt) {
  const std::string body = R"({"jsonrpc":"2.0","id":1,"method":"ping"})";
  const std::string req = "POST /mcp HTTP/1.1\r\nhost: 127.0.0.1:3000\r\nconnection: keep-alive\r\n"
                          "content-type: application/json\r\naccept: application/json, text/event-stream\r\n"
                          "mcp-protocol-version: 2025-11-25\r\nmcp-session-id: 0123abcd\r\n"
                          "user-agent: node\r\ncontent-length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  EXPECT_EQ(events_of(req), (V{"head", "done:" + body}));
  static Result r;
  parse(req, 0, &r);
  const emcp::http::Request& q = r.last;
  EXPECT_EQ(q.method, Method::kPost);
  EXPECT_TRUE(q.path() == "/mcp");
  EXPECT_TRUE(q.host.view() == "127.0.0.1:3000");
  EXPECT_TRUE(q.content_type_is("application/json"));
  EXPECT_TRUE(q.accepts("application/json"));
  EXPECT_TRUE(q.accepts("text/event-stream"));
  EXPECT_FALSE(q.accepts("text/html"));
  EXPECT_TRUE(q.session_id.view() == "0123abcd");
  EXPECT_TRUE(q.protocol_version.view() == "2025-11-25");
  EXPECT_EQ(q.content_length, static_cast<int64_t>(body.size()));
  EXPECT_TRUE(q.keep_alive);
  EXPECT_FALSE(q.origin.present);
}

TEST(HttpParser, GetWithQueryAndWildcardAccept) {
  EXPECT_EQ(events_of("GET /sse?x=1&sessionId=abc HTTP/1.1\r\nHost: localhost\r\nAccept: */*\r\n\r\n"),
            (V{"head", "done:"}));
  const auto& q = single("GET /messages?sessionId=abc&x=%20y HTTP/1.1\r\nHost: h\r\nAccept: text/*;q=0.5\r\n\r\n").last;
  EXPECT_TRUE(q.path() == "/messages");
  EXPECT_TRUE(q.query_param("sessionId") == "abc");
  EXPECT_TRUE(q.query_param("x") == "%20y");
  EXPECT_TRUE(q.query_param("missing").empty());
  EXPECT_TRUE(q.accepts("text/event-stream"));
  EXPECT_FALSE(q.accepts("application/json"));
}

TEST(HttpParser, ChunkedBodyWithExtensionsAndTrailers) {
  const std::string req = "POST /mcp HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                          "5\r\nhello\r\n1;name=value\r\n \r\nA\r\n0123456789\r\n0\r\nX-Trailer: t\r\n\r\n";
  EXPECT_EQ(events_of(req), (V{"head", "done:hello 0123456789"}));
  // Bare LF line ends are accepted as well.
  EXPECT_EQ(events_of("POST / HTTP/1.1\nHost: h\nTransfer-Encoding: chunked\n\n3\nabc\n0\n\n"), (V{"head", "done:abc"}));
}

TEST(HttpParser, KeepAlivePipelinedRequests) {
  const std::string one = "POST /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\n\r\n{}";
  const std::string two = "GET /mcp HTTP/1.1\r\nHost: h\r\n\r\n";
  const std::string three = "DELETE /mcp HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n";
  EXPECT_EQ(events_of(one + two + three), (V{"head", "done:{}", "head", "done:", "head", "done:"}));
  EXPECT_FALSE(single(three).last.keep_alive);
  EXPECT_FALSE(single("GET / HTTP/1.0\r\n\r\n").last.keep_alive);  // 1.0: no Host needed
  EXPECT_TRUE(single("GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n").last.keep_alive);
}

TEST(HttpParser, WebSocketUpgradeHeaders) {
  const auto& q = single("GET /ws HTTP/1.1\r\nHost: h\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                         "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
                         "Origin: http://localhost\r\n\r\n").last;
  EXPECT_TRUE(q.connection_upgrade);
  EXPECT_TRUE(emcp::http::ascii_iequal(q.upgrade.view(), "WebSocket"));
  EXPECT_TRUE(q.ws_key.view() == "dGhlIHNhbXBsZSBub25jZQ==");
  EXPECT_TRUE(q.ws_version.view() == "13");
  EXPECT_TRUE(q.origin.view() == "http://localhost");
}

TEST(HttpParser, HeaderValuesAreTrimmedAndNamesCaseInsensitive) {
  const auto& q = single("GET / HTTP/1.1\r\nHOST:   example  \r\nmCp-SeSsIoN-iD:\tabc \t\r\nExpect: 100-continue\r\n\r\n").last;
  EXPECT_TRUE(q.host.view() == "example");
  EXPECT_TRUE(q.session_id.view() == "abc");
  EXPECT_TRUE(q.expect_continue);
}

// A header that comes twice is marked (the resource server answers 400 to two Authorization
// headers, RFC 6750 3.1); once is not repeated; Accept's values are joined into one list.
TEST(HttpParser, RepeatedHeadersAreMarked) {
  const auto& once = single("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer a\r\nAccept: text/plain\r\n\r\n").last;
  EXPECT_TRUE(once.authorization.present);
  EXPECT_FALSE(once.authorization.repeated);
  EXPECT_FALSE(once.accept.repeated);
  EXPECT_FALSE(once.host.repeated);
  const auto& twice = single("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer a\r\nAccept: text/plain\r\n"
                             "authorization: Bearer a\r\nAccept: text/html\r\n\r\n").last;
  EXPECT_TRUE(twice.authorization.present);
  EXPECT_TRUE(twice.authorization.repeated);
  EXPECT_TRUE(twice.accept.repeated);
  EXPECT_TRUE(twice.accept.view() == "text/plain, text/html");
  EXPECT_FALSE(twice.host.repeated);
  // An empty second header still counts.
  const auto& empty = single("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer a\r\nAuthorization:\r\n\r\n").last;
  EXPECT_TRUE(empty.authorization.repeated);
  // Cleared by the next request on the connection.
  EXPECT_EQ(events_of("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: x\r\nAuthorization: y\r\n\r\n"
                      "GET / HTTP/1.1\r\nHost: h\r\nAuthorization: z\r\n\r\n"),
            (V{"head", "done:", "head", "done:"}));
  const auto& next = single("GET / HTTP/1.1\r\nHost: h\r\nAuthorization: x\r\nAuthorization: y\r\n\r\n"
                            "GET / HTTP/1.1\r\nHost: h\r\nAuthorization: z\r\n\r\n").last;
  EXPECT_TRUE(next.authorization.view() == "z");
  EXPECT_FALSE(next.authorization.repeated);
}

TEST(HttpParser, EveryLimitHasItsStatus) {
  struct Case {
    std::string text;
    int status;
  };
  std::string many_headers = "GET / HTTP/1.1\r\nHost: h\r\n";
  for (int i = 0; i < EMCP_HTTP_MAX_HEADERS; ++i) many_headers += "X-" + std::to_string(i) + ": v\r\n";
  many_headers += "\r\n";
  const Case cases[] = {
      {"GET / HTTP/1.1\r\n\r\n", 400},                                           // no Host
      {"G@T / HTTP/1.1\r\nHost: h\r\n\r\n", 400},                                // bad method
      {"GET  HTTP/1.1\r\nHost: h\r\n\r\n", 400},                                 // empty target
      {"GET /a b HTTP/1.1\r\nHost: h\r\n\r\n", 400},                             // space in target
      {"GET / HTTP/2.0\r\nHost: h\r\n\r\n", 505},
      {"GET / FTP/1.1\r\nHost: h\r\n\r\n", 400},
      {"GET / HTTP/1.1\r\nHost: h\r\n folded\r\n\r\n", 400},                     // obs-fold
      {"GET / HTTP/1.1\r\nHost : h\r\n\r\n", 400},                               // space before colon
      {"GET / HTTP/1.1\r\nHost: h\x01\r\n\r\n", 400},                            // control char
      {"GET / HTTP/1.1\r\nHost: h\r\nX: a\x7f b\r\n\r\n", 400},                   // DEL in a value
      {"GET / HTTP/1.1\r\nHost: h\r\nX: a b\x1f\r\n\r\n", 400},                   // control at its end
      {"GET / HTTP/1.1\r\nHost: h\r\nX-\x80: v\r\n\r\n", 400},                   // non-tchar in a name
      {"GET / HTTP/1.1\rHost: h\r\n\r\n", 400},                                   // bare CR
      {"POST / HTTP/1.1\r\nHost: h\r\n\r\n", 411},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 12a\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nContent-Length: 3\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 2\r\nTransfer-Encoding: chunked\r\n\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\n", 501},
      {"POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999\r\n\r\n", 413},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n123456789\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabcd\r\n", 400},
      {"POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFF\r\n", 413},
      {"GET /" + std::string(EMCP_HTTP_MAX_TARGET, 'a') + " HTTP/1.1\r\nHost: h\r\n\r\n", 414},
      {many_headers, 431},
      {"GET / HTTP/1.1\r\nHost: h\r\nX: " + std::string(EMCP_HTTP_MAX_HEAD, 'x') + "\r\n\r\n", 431},
      {"GET / HTTP/1.1\r\nHost: h\r\nX-" + std::string(EMCP_HTTP_MAX_HEAD, 'n') + ": v\r\n\r\n", 431},
      {"GET / HTTP/1.1\r\nHost: " + std::string(200, 'h') + "\r\n\r\n", 431},
      {"GET / HTTP/1.1\r\nHost: h\r\nAuthorization: Bearer " + std::string(EMCP_HTTP_MAX_AUTH, 't') + "\r\n\r\n", 431},
  };
  for (const Case& c : cases) {
    const std::vector<std::string> ev = events_of(c.text, 1 << 20);
    ASSERT_FALSE(ev.empty()) << c.text.substr(0, 60);
    EXPECT_EQ(ev.back(), "error:" + std::to_string(c.status)) << c.text.substr(0, 60);
  }
  // The body limit applies to chunked bodies as they add up.
  const std::string chunks = "POST / HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                             "8\r\n12345678\r\n8\r\n12345678\r\n0\r\n\r\n";
  EXPECT_EQ(events_of(chunks, 16), (V{"head", "done:1234567812345678"}));
  EXPECT_EQ(events_of(chunks, 15).back(), "error:413");
  EXPECT_EQ(events_of("POST / HTTP/1.1\r\nHost: h\r\nContent-Length: 16\r\n\r\n1234567812345678", 15).back(), "error:413");
}

// The head's limit counts every byte up to the blank line's end, however the bytes arrive (the
// parser takes a header's name and value in runs): a head of exactly EMCP_HTTP_MAX_HEAD bytes is
// read, one byte more is 431, wherever the extra byte is.
TEST(HttpParser, HeadLimitIsExactInNamesAndValues) {
  const std::string start = "GET / HTTP/1.1\r\nHost: h\r\n";
  const std::string end = "\r\n\r\n";
  const size_t pad = EMCP_HTTP_MAX_HEAD - start.size() - end.size() - 2;  // "X:" and ": " below
  const std::string value = start + "X:" + std::string(pad, 'v') + end;
  ASSERT_EQ(value.size(), static_cast<size_t>(EMCP_HTTP_MAX_HEAD));
  EXPECT_EQ(events_of(value), (V{"head", "done:"}));
  EXPECT_EQ(events_of(start + "X:" + std::string(pad + 1, 'v') + end).back(), "error:431");
  const std::string name = start + std::string(pad, 'n') + ":v" + end;
  ASSERT_EQ(name.size(), static_cast<size_t>(EMCP_HTTP_MAX_HEAD));
  EXPECT_EQ(events_of(name), (V{"head", "done:"}));
  EXPECT_EQ(events_of(start + std::string(pad + 1, 'n') + ":v" + end).back(), "error:431");
}

// A header's value arrives in runs, split anywhere: kept whole, tabs and obs-text (bytes
// 0x80-0xFF) included, trimmed at its end only.
TEST(HttpParser, ValuesKeepEveryByteAcrossSplits) {
  const std::string v = "a\tb \xC3\xA9 c";
  const std::vector<std::string> ev =
      events_of("GET / HTTP/1.1\r\nHost: h\r\nOrigin:  " + v + " \t\r\nAccept: x/y\r\n\r\n");
  EXPECT_EQ(ev, (V{"head", "done:"}));
  Result r;
  for (size_t piece : {1u, 2u, 5u, 0u}) {
    parse("GET / HTTP/1.1\r\nHost: h\r\nOrigin:  " + v + " \t\r\nAccept: x/y\r\n\r\n", piece, &r);
    EXPECT_EQ(std::string(r.last.origin.view().data(), r.last.origin.view().size()), v) << "piece " << piece;
    EXPECT_EQ(std::string(r.last.accept.view().data(), r.last.accept.view().size()), "x/y") << "piece " << piece;
  }
}

// Accept (RFC 9110 12.5.1): media ranges separated by commas, each with parameters after ';',
// case-insensitive, with type/* and */* wildcards; empty entries and spaces ignored.
TEST(HttpParser, AcceptListsMatchTheirMediaRanges) {
  struct Case {
    const char* accept;
    const char* type;
    bool ok;
  };
  const Case cases[] = {
      {"application/json, text/event-stream", "application/json", true},
      {"application/json, text/event-stream", "text/event-stream", true},
      {"application/json,text/event-stream", "text/html", false},
      {"APPLICATION/JSON", "application/json", true},
      {"application/json;q=0.9, text/event-stream;q=0.1", "text/event-stream", true},
      {"application/json ; charset=utf-8", "application/json", true},
      {" , ,application/json\t,", "application/json", true},
      {"text/*", "text/event-stream", true},
      {"TEXT/*;q=1", "text/event-stream", true},
      {"text/*", "application/json", false},
      {"*/*;q=0.1", "application/json", true},
      {"application/jsonx", "application/json", false},
      {"application/jso", "application/json", false},
      {"text/plain;a=\"x,application/json\"", "application/json", false},  // (no quoting: the remainder
                                                                          // keeps its quote mark)
      {"", "application/json", false},
      {"application/*", "application/json", true},
      {"*/json", "application/json", false},
      {"text/html, ,", "", false},  // an empty entry matches nothing, not even an empty type
  };
  for (const Case& c : cases) {
    const auto& r = single(std::string("GET / HTTP/1.1\r\nHost: h\r\nAccept: ") + c.accept + "\r\n\r\n").last;
    EXPECT_EQ(r.accepts(c.type), c.ok) << c.accept << " / " << c.type;
  }
}

TEST(HttpParser, UnknownMethodsParseForTheRouterToRefuse) {
  EXPECT_EQ(single("PATCH /mcp HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n").last.method, Method::kOther);
  EXPECT_EQ(single("OPTIONS * HTTP/1.1\r\nHost: h\r\n\r\n").last.method, Method::kOptions);
}

TEST(HttpWriter, StatusLinesAndHeaders) {
  char buf[256];
  emcp::json::BufferSink out(buf, sizeof buf);
  emcp::http::write_status_line(out, 431);
  emcp::http::write_header(out, "Content-Length", uint64_t{0});
  emcp::http::write_header(out, "Connection", "close");
  emcp::http::write_end_head(out);
  EXPECT_EQ(std::string(out.view().data(), out.view().size()),
            "HTTP/1.1 431 Request Header Fields Too Large\r\nContent-Length: 0\r\nConnection: close\r\n\r\n");
}

// reset() after a request with every kept header gives what a new parser holds: each member of
// the request at its declared default, and the next request parsed as a new parser would.
TEST(HttpParser, ResetGivesAFreshRequest) {
  const emcp::http::Request fresh{};
  RequestParser parser;
  const std::string text =
      "PUT /a?b=c HTTP/1.0\r\nHost: h\r\nOrigin: o\r\nContent-Type: t\r\nAccept: a\r\nAccept: b\r\n"
      "Mcp-Session-Id: s\r\nMCP-Protocol-Version: v\r\nMcp-Method: m\r\nMcp-Name: n\r\nMcp-Param-X: 1\r\n"
      "Last-Event-ID: e\r\nAuthorization: Bearer x\r\nUpgrade: websocket\r\nSec-WebSocket-Key: k\r\n"
      "Sec-WebSocket-Version: 13\r\nSec-WebSocket-Protocol: mcp\r\nConnection: close, upgrade\r\n"
      "Expect: 100-continue\r\nTransfer-Encoding: chunked\r\n\r\n";
  size_t used = 0;
  ASSERT_EQ(parser.push(text.data(), text.size(), &used), Event::kHead);
  const emcp::http::Request& r = parser.request();
  EXPECT_TRUE(r.origin.present && r.accept.repeated && r.chunked && !r.keep_alive && r.expect_continue);
  parser.reset();
  EXPECT_EQ(r.method, fresh.method);
  EXPECT_EQ(r.version_minor, fresh.version_minor);
  EXPECT_EQ(r.content_length, fresh.content_length);
  EXPECT_EQ(r.chunked, fresh.chunked);
  EXPECT_EQ(r.keep_alive, fresh.keep_alive);
  EXPECT_EQ(r.connection_upgrade, fresh.connection_upgrade);
  EXPECT_EQ(r.expect_continue, fresh.expect_continue);
  const auto same = [](const auto& a, const auto& b, const char* name) {
    EXPECT_EQ(a.len, b.len) << name;
    EXPECT_EQ(a.present, b.present) << name;
    EXPECT_EQ(a.repeated, b.repeated) << name;
  };
  same(r.target, fresh.target, "target");
  same(r.host, fresh.host, "host");
  same(r.origin, fresh.origin, "origin");
  same(r.content_type, fresh.content_type, "content_type");
  same(r.accept, fresh.accept, "accept");
  same(r.session_id, fresh.session_id, "session_id");
  same(r.protocol_version, fresh.protocol_version, "protocol_version");
  same(r.mcp_method, fresh.mcp_method, "mcp_method");
  same(r.mcp_name, fresh.mcp_name, "mcp_name");
  same(r.mcp_params, fresh.mcp_params, "mcp_params");
  same(r.last_event_id, fresh.last_event_id, "last_event_id");
  same(r.authorization, fresh.authorization, "authorization");
  same(r.upgrade, fresh.upgrade, "upgrade");
  same(r.ws_key, fresh.ws_key, "ws_key");
  same(r.ws_version, fresh.ws_version, "ws_version");
  same(r.ws_protocol, fresh.ws_protocol, "ws_protocol");
  // And it parses the next request as a new parser would.
  const std::string next = "GET /mcp HTTP/1.1\r\nHost: x\r\n\r\n";
  ASSERT_EQ(parser.push(next.data(), next.size(), &used), Event::kHead);
  EXPECT_EQ(parser.request().method, emcp::http::Method::kGet);
  EXPECT_TRUE(parser.request().keep_alive);
  EXPECT_EQ(parser.request().content_length, -1);
  EXPECT_FALSE(parser.request().origin.present);
}
