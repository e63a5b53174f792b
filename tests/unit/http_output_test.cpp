// A connection's response output (emcp/transport/detail/http_output.h) on its own, without an
// HttpServer: a fake peer behind its Link takes the bytes, and each test compares them with the
// exact bytes RFC 9112 says go on the wire, written out here by hand from its grammar:
//   status-line = HTTP-version SP status-code SP [ reason-phrase ] CRLF      (4)
//   field-line  = field-name ":" OWS field-value OWS, each ended by CRLF, the head by a lone CRLF (2.1, 5)
//   chunk       = chunk-size [ chunk-ext ] CRLF chunk-data CRLF; chunk-size = 1*HEXDIG
//   last-chunk  = 1*("0") [ chunk-ext ] CRLF, then the trailer section's ending CRLF   (7.1)
// and the message body's length (6.3): Content-Length when it is known, chunked when it is
// not, until the connection closes for an HTTP/1.0 peer, none for 204 (RFC 9110 8.6). Reason
// phrases are RFC 9110's (15) and RFC 6585's (429). Every call into the output runs inside a
// NoHeapScope.
#include <gtest/gtest.h>
#include <stdint.h>
#include <string.h>

#include <string>

#include "emcp/transport/detail/http_output.h"
#include "heap_guard.h"
#include "no_heap_util.h"

using emcp::Status;
using emcp::transport::HttpOutput;
using emcp_test::NoHeapScope;

namespace {

// The other end of the connection, as the output's Link sees it.
struct Peer {
  emcp_test::FixedText<16384> wire;   // what it took, in order
  size_t window = SIZE_MAX;           // bytes it takes before its window is full
  size_t grant_per_wait = 0;          // what each wait opens (0: the wait times out)
  bool fail = false;                  // every write fails (the connection is gone)
  bool http11 = true;                 // it reads chunked bodies
  bool keep_alive = true;             // the owner's answer: the connection stays open
  const char* lines = nullptr;        // the owner's header lines
  bool can_wait = true;
  int writes = 0;
  int waits = 0;
  int timeouts = 0;
  uint64_t now = 1000;
  emcp_test::FixedText<256> teed;
};

const HttpOutput::Link::Ops kPeerOps = {
    [](void* ctx, HttpOutput&, const char* data, size_t n, size_t* taken) {
      Peer& p = *static_cast<Peer*>(ctx);
      ++p.writes;
      if (p.fail) return Status::kIoError;
      const size_t k = n < p.window ? n : p.window;
      if (!p.wire.append(data, k)) return Status::kNoSpace;
      if (p.window != SIZE_MAX) p.window -= k;
      *taken = k;
      return Status::kOk;
    },
    [](void* ctx, HttpOutput&, uint32_t timeout_ms) {
      Peer& p = *static_cast<Peer*>(ctx);
      ++p.waits;
      if (p.grant_per_wait == 0) {
        p.now += timeout_ms;
        return Status::kWouldBlock;
      }
      p.window = p.grant_per_wait;
      return Status::kOk;
    },
    [](void* ctx, HttpOutput&) { ++static_cast<Peer*>(ctx)->timeouts; },
    [](void* ctx, HttpOutput&, emcp::json::Sink& head) {
      Peer& p = *static_cast<Peer*>(ctx);
      if (p.lines != nullptr) head.write(p.lines, strlen(p.lines));
      return p.keep_alive;
    },
    [](void* ctx, HttpOutput&) { return static_cast<Peer*>(ctx)->http11; },
    [](void* ctx, HttpOutput&, const char* data, size_t n) { (void)static_cast<Peer*>(ctx)->teed.append(data, n); },
    [](void* ctx) { return static_cast<Peer*>(ctx)->now; },
};

// An output over a buffer of Cap bytes: its body sink holds Cap - kHeadroom - 2 of them.
template <size_t Cap>
struct Conn {
  Peer peer;
  char buf[Cap];
  HttpOutput out{buf, Cap, &Conn::flush, this};
  HttpOutput::Link link() { return {&kPeerOps, &peer, 5000, peer.can_wait}; }
  static Status flush(void* ctx, const char* data, size_t n) {
    Conn& c = *static_cast<Conn*>(ctx);
    return c.out.flushed(c.link(), data, n);
  }
  void write(const std::string& s) { out.sink().write(s.data(), s.size()); }
  // A JSON answer (its length unknown to the output until its end), under a NoHeapScope.
  void answer_json(const std::string& body) {
    NoHeapScope no_heap;
    out.begin_buffered(200, "application/json");
    write(body);
    out.finish_body(link());
  }
};

constexpr size_t kSmall = HttpOutput::kHeadroom + 2 + 64;  // a sink of 64 bytes
constexpr size_t kLarge = HttpOutput::kHeadroom + 2 + 300;  // a sink of 300 (0x12c) bytes

const std::string kJson = R"({"jsonrpc":"2.0","id":1,"result":{}})";  // 36 bytes

TEST(HttpOutput, AnswerThatFitsGoesWithContentLength) {
  Conn<kLarge> c;
  c.answer_json(kJson);
  EXPECT_EQ(c.peer.wire.str(),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: 36\r\n"
            "\r\n" + kJson);
  EXPECT_EQ(c.out.pending(), 0u);
  EXPECT_FALSE(c.out.dead());
  // One write: the head sits in the room in front of the body.
  EXPECT_EQ(c.peer.writes, 1);
}

TEST(HttpOutput, AnswerThatOutgrowsTheBufferIsChunkedWithHexSizesAndALastChunk) {
  Conn<kLarge> c;
  const std::string body(420, 'x');  // 300 bytes fill the sink, 120 remain
  c.answer_json(body);
  EXPECT_EQ(c.peer.wire.str(),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: application/json\r\n"
            "Transfer-Encoding: chunked\r\n"
            "\r\n"
            "12c\r\n" + std::string(300, 'x') + "\r\n"
            "78\r\n" + std::string(120, 'x') + "\r\n"
            "0\r\n\r\n");
}

TEST(HttpOutput, AnAnswerOfExactlyTheBufferStillHasItsLength) {
  // The sink full but not flushed yet: the length is known at the end, no chunks.
  Conn<kSmall> c;
  const std::string body(64, 'y');
  c.answer_json(body);
  EXPECT_EQ(c.peer.wire.str(),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: application/json\r\n"
            "Content-Length: 64\r\n"
            "\r\n" + body);
}

TEST(HttpOutput, AnHttp10PeerGetsTheLongAnswerUntilClose) {
  Conn<kSmall> c;
  c.peer.http11 = false;
  c.peer.keep_alive = false;  // the engine closes after a body that ends with the connection
  const std::string body(100, 'z');
  {
    NoHeapScope no_heap;
    c.out.begin_buffered(200, "application/json");
    c.write(body);
    EXPECT_EQ(c.out.body(), HttpOutput::Body::kUntilClose);
    c.out.finish_body(c.link());
  }
  // Neither Content-Length nor Transfer-Encoding: the body is all bytes up to the close (6.3 8).
  EXPECT_EQ(c.peer.wire.str(),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: application/json\r\n"
            "Connection: close\r\n"
            "\r\n" + body);
}

TEST(HttpOutput, AnEventStreamIsChunkedUncachedAndEndsWithTheLastChunk) {
  Conn<kLarge> c;
  const std::string e1 = "event: message\ndata: {\"a\":1}\n\n";
  const std::string e2 = "event: message\ndata: {\"b\":2}\n\n";
  std::string wire;
  {
    NoHeapScope no_heap;
    c.out.start_stream(c.link(), "text/event-stream", true);
    c.out.push_out(c.link());  // no event yet: the head alone opens the stream
  }
  wire = c.peer.wire.str();
  EXPECT_EQ(wire,
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/event-stream\r\n"
            "Transfer-Encoding: chunked\r\n"
            "Cache-Control: no-cache\r\n"
            "\r\n");
  c.peer.wire.clear();
  {
    NoHeapScope no_heap;
    c.write(e1);
    c.out.push_out(c.link());
    c.write(e2);
    c.out.push_out(c.link());
    c.out.finish_body(c.link());
  }
  EXPECT_EQ(c.peer.wire.str(), "1e\r\n" + e1 + "\r\n" + "1e\r\n" + e2 + "\r\n" + "0\r\n\r\n");
  EXPECT_EQ(c.out.body(), HttpOutput::Body::kNone);
}

TEST(HttpOutput, TheHeadOfAStreamGoesWithItsFirstEvent) {
  Conn<kLarge> c;
  const std::string e = "data: x\n\n";
  {
    NoHeapScope no_heap;
    c.out.start_stream(c.link(), "text/event-stream", true);
    c.write(e);
    c.out.push_out(c.link());
  }
  EXPECT_EQ(c.peer.wire.str(),
            "HTTP/1.1 200 OK\r\n"
            "Content-Type: text/event-stream\r\n"
            "Transfer-Encoding: chunked\r\n"
            "Cache-Control: no-cache\r\n"
            "\r\n"
            "9\r\n" + e + "\r\n");
  EXPECT_EQ(c.peer.writes, 1);
}

TEST(HttpOutput, ErrorsCarryTheirStatusReasonPhraseAndText) {
  struct Case {
    int status;
    const char* line;
  };
  const Case cases[] = {
      {400, "HTTP/1.1 400 Bad Request\r\n"},           {401, "HTTP/1.1 401 Unauthorized\r\n"},
      {403, "HTTP/1.1 403 Forbidden\r\n"},             {404, "HTTP/1.1 404 Not Found\r\n"},
      {405, "HTTP/1.1 405 Method Not Allowed\r\n"},    {406, "HTTP/1.1 406 Not Acceptable\r\n"},
      {408, "HTTP/1.1 408 Request Timeout\r\n"},       {409, "HTTP/1.1 409 Conflict\r\n"},
      {413, "HTTP/1.1 413 Content Too Large\r\n"},     {415, "HTTP/1.1 415 Unsupported Media Type\r\n"},
      {426, "HTTP/1.1 426 Upgrade Required\r\n"},      {429, "HTTP/1.1 429 Too Many Requests\r\n"},
      {500, "HTTP/1.1 500 Internal Server Error\r\n"}, {503, "HTTP/1.1 503 Service Unavailable\r\n"},
  };
  for (const Case& k : cases) {
    Conn<kSmall> c;
    {
      NoHeapScope no_heap;
      c.out.answer_text(c.link(), k.status, "Not here: see the status");
    }
    // The text and a newline: 25 bytes.
    EXPECT_EQ(c.peer.wire.str(), std::string(k.line) +
                                     "Content-Type: text/plain; charset=utf-8\r\n"
                                     "Content-Length: 25\r\n"
                                     "\r\n"
                                     "Not here: see the status\n")
        << k.status;
  }
}

TEST(HttpOutput, AnAnswerWithoutTextHasLengthZeroAndA204NoLengthAtAll) {
  Conn<kSmall> c;
  {
    NoHeapScope no_heap;
    c.out.answer_text(c.link(), 202, nullptr);
  }
  EXPECT_EQ(c.peer.wire.str(), "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
  c.peer.wire.clear();
  c.peer.lines = "Allow: GET, POST\r\n";
  {
    NoHeapScope no_heap;
    c.out.answer_text(c.link(), 204, nullptr);
  }
  // RFC 9110 8.6: a server MUST NOT send Content-Length in a 204.
  EXPECT_EQ(c.peer.wire.str(), "HTTP/1.1 204 No Content\r\nAllow: GET, POST\r\n\r\n");
}

TEST(HttpOutput, TheOwnersLinesFollowTheOutputsAndCloseEndsTheHead) {
  Conn<kLarge> c;
  c.peer.lines = "Mcp-Session-Id: 0123abcd\r\nRetry-After: 1\r\n";
  c.answer_json(kJson);
  const std::string keep = "HTTP/1.1 200 OK\r\n"
                           "Content-Type: application/json\r\n"
                           "Content-Length: 36\r\n"
                           "Mcp-Session-Id: 0123abcd\r\n"
                           "Retry-After: 1\r\n";
  // Keep-alive is HTTP/1.1's default (RFC 9112 9.3): no Connection header.
  EXPECT_EQ(c.peer.wire.str(), keep + "\r\n" + kJson);
  c.peer.wire.clear();
  c.peer.keep_alive = false;
  c.answer_json(kJson);
  // The close option (RFC 9112 9.6): the connection ends after this response.
  EXPECT_EQ(c.peer.wire.str(), keep + "Connection: close\r\n\r\n" + kJson);
}

TEST(HttpOutput, AHeadLongerThanTheRoomInFrontOfTheBodyStillComesFirstAndWhole) {
  Conn<kLarge> c;
  std::string lines;
  for (int i = 0; i < 9; ++i) lines += "X-Filler-" + std::to_string(i) + ": " + std::string(40, 'f') + "\r\n";
  ASSERT_GT(lines.size(), HttpOutput::kHeadroom);
  c.peer.lines = lines.c_str();
  c.answer_json(kJson);
  EXPECT_EQ(c.peer.wire.str(),
            "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 36\r\n" + lines + "\r\n" + kJson);
  EXPECT_EQ(c.peer.writes, 2);  // its beginning alone, then the rest with the body
}

TEST(HttpOutput, WhatThePeerDoesNotTakeWaitsAndGoesFirst) {
  Conn<kLarge> c;
  c.peer.window = 10;
  const std::string first = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 36\r\n\r\n" + kJson;
  c.answer_json(kJson);  // the end of a message: no wait
  EXPECT_EQ(c.peer.wire.str(), first.substr(0, 10));
  EXPECT_EQ(c.out.pending(), first.size() - 10);
  EXPECT_EQ(c.peer.waits, 0);
  EXPECT_FALSE(c.out.dead());
  // The next answer is written behind it: the held sink makes the rest of the first go before it.
  c.peer.window = SIZE_MAX;
  {
    NoHeapScope no_heap;
    c.out.answer_text(c.link(), 404, "Not Found");
  }
  EXPECT_EQ(c.peer.wire.str(),
            first + "HTTP/1.1 404 Not Found\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: 10\r\n\r\nNot Found\n");
  EXPECT_EQ(c.out.pending(), 0u);
}

TEST(HttpOutput, ThePendingRestMovesOnWhenThePeerReadsAgain) {
  Conn<kLarge> c;
  c.peer.window = 5;
  {
    NoHeapScope no_heap;
    c.out.answer_text(c.link(), 202, nullptr);
    EXPECT_FALSE(c.out.drain(c.link(), false));  // nothing more taken yet
  }
  c.peer.window = SIZE_MAX;
  {
    NoHeapScope no_heap;
    EXPECT_TRUE(c.out.drain(c.link(), false));
  }
  EXPECT_EQ(c.peer.wire.str(), "HTTP/1.1 202 Accepted\r\nContent-Length: 0\r\n\r\n");
}

TEST(HttpOutput, AFailedWriteKillsTheOutputAndNothingMoreIsWritten) {
  Conn<kSmall> c;
  c.peer.fail = true;
  {
    NoHeapScope no_heap;
    c.out.answer_text(c.link(), 200, "hello");
    EXPECT_TRUE(c.out.dead());
    EXPECT_EQ(c.out.pending(), 0u);  // dropped with the connection
    const int writes = c.peer.writes;
    c.out.send_tail(c.link(), "0\r\n\r\n", 5);
    c.out.start_stream(c.link(), "text/event-stream", true);
    c.out.push_out(c.link());
    EXPECT_EQ(c.peer.writes, writes);
  }
  EXPECT_EQ(c.peer.wire.size(), 0u);
}

TEST(HttpOutput, AFailedWriteInTheMiddleOfABodyFailsTheSink) {
  Conn<kSmall> c;
  const std::string body(100, 'e');
  {
    NoHeapScope no_heap;
    c.out.start_stream(c.link(), "text/event-stream", true);
    c.peer.fail = true;
    c.write(body);  // the sink's 64 bytes flush on the way
  }
  EXPECT_TRUE(c.out.dead());
  EXPECT_EQ(c.out.sink().status(), Status::kClosed);
  EXPECT_EQ(c.peer.wire.size(), 0u);
}

TEST(HttpOutput, APeerThatStopsReadingMidBodyTimesOut) {
  Conn<kSmall> c;
  c.peer.window = 0;
  const std::string body(100, 'w');
  {
    NoHeapScope no_heap;
    c.out.begin_buffered(200, "application/json");
    c.write(body);  // the sink flushes mid-message: the output must wait
  }
  EXPECT_TRUE(c.out.dead());
  EXPECT_GE(c.peer.waits, 1);
  EXPECT_EQ(c.peer.timeouts, 1);
  EXPECT_GE(c.peer.now, 1000u + 5000u);
  // A peer that cannot wait (no wait_writable) is dead at once, without a timeout counted.
  Conn<kSmall> d;
  d.peer.window = 0;
  d.peer.can_wait = false;
  {
    NoHeapScope no_heap;
    d.out.begin_buffered(200, "application/json");
    d.write(body);
  }
  EXPECT_TRUE(d.out.dead());
  EXPECT_EQ(d.peer.waits, 0);
  EXPECT_EQ(d.peer.timeouts, 0);
}

TEST(HttpOutput, AWaitThatOpensTheWindowLetsTheBodyGoOn) {
  Conn<kSmall> c;
  c.peer.window = 0;
  c.peer.grant_per_wait = 7;
  const std::string body(100, 'g');
  c.answer_json(body);
  EXPECT_FALSE(c.out.dead());
  EXPECT_GT(c.peer.waits, 1);
  // What was taken, 7 bytes a wait, is the response's beginning, in order (the rest waits).
  const std::string whole = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nTransfer-Encoding: chunked\r\n\r\n"
                            "40\r\n" + body.substr(0, 64) + "\r\n24\r\n" + body.substr(64) + "\r\n0\r\n\r\n";
  const std::string wire = c.peer.wire.str();
  ASSERT_LE(wire.size(), whole.size());
  EXPECT_EQ(wire, whole.substr(0, wire.size()));
  c.peer.window = SIZE_MAX;
  {
    NoHeapScope no_heap;
    EXPECT_TRUE(c.out.drain(c.link(), false));
  }
  EXPECT_EQ(c.peer.wire.str(), whole);
}

}  // namespace
