// lwip_http_util.h - HTTP/1.1 for the lwIP host tests (lwip_http_test.cpp, lwip_tls_test.cpp):
// the requests they send (MCP over Streamable HTTP) and a reader of the responses written from
// RFC 9112, independently of the engine's writer. frame() allocates nothing: it runs inside the
// tests' no-heap loops; decode() runs between them.
#ifndef EMCP_TESTS_LWIP_HTTP_UTIL_H
#define EMCP_TESTS_LWIP_HTTP_UTIL_H

#include <ctype.h>
#include <gtest/gtest.h>

#include <map>
#include <string>
#include <string_view>

namespace lwip_http {

// ---- HTTP/1.1 responses (RFC 9112), read independently of the engine's writer ---------------

inline bool iequal(std::string_view a, std::string_view b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i)
    if (tolower(static_cast<unsigned char>(a[i])) != tolower(static_cast<unsigned char>(b[i]))) return false;
  return true;
}

// The value of header `name` in a response head (status line included); data() is nullptr when
// absent. Allocates nothing.
inline std::string_view header(std::string_view head, std::string_view name) {
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    const size_t start = pos + 2;
    size_t end = head.find("\r\n", start);
    if (end == std::string_view::npos) end = head.size();
    std::string_view line = head.substr(start, end - start);
    const size_t colon = line.find(':');
    if (colon != std::string_view::npos && iequal(line.substr(0, colon), name)) {
      std::string_view v = line.substr(colon + 1);
      while (!v.empty() && (v.front() == ' ' || v.front() == '\t')) v.remove_prefix(1);
      while (!v.empty() && (v.back() == ' ' || v.back() == '\t')) v.remove_suffix(1);
      return v;
    }
    pos = end;
  }
  return std::string_view();
}

inline size_t parse_size(std::string_view s, int base) {
  size_t n = 0;
  for (char ch : s) {
    int d = -1;
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (base == 16 && ch >= 'a' && ch <= 'f') d = ch - 'a' + 10;
    else if (base == 16 && ch >= 'A' && ch <= 'F') d = ch - 'A' + 10;
    if (d < 0) break;
    n = n * static_cast<size_t>(base) + static_cast<size_t>(d);
  }
  return n;
}

// Where the first response at the front of `in` ends. Allocates nothing (it runs inside the
// no-heap loops).
struct Framing {
  size_t head_len = 0;  // 0: the head is not complete yet
  size_t length = 0;    // 0: the response is not complete yet
  int status = 0;
  bool chunked = false;
};

inline Framing frame(std::string_view in) {
  Framing f;
  const size_t end = in.find("\r\n\r\n");
  if (end == std::string_view::npos || in.substr(0, 9) != "HTTP/1.1 ") return f;
  f.status = static_cast<int>(parse_size(in.substr(9, 3), 10));
  f.head_len = end + 4;
  const std::string_view head = in.substr(0, end);
  if (f.status < 200 || f.status == 204 || f.status == 304) {
    f.length = f.head_len;
    return f;
  }
  const std::string_view cl = header(head, "content-length");
  if (cl.data() != nullptr) {
    const size_t n = parse_size(cl, 10);
    if (in.size() >= f.head_len + n) f.length = f.head_len + n;
    return f;
  }
  if (iequal(header(head, "transfer-encoding"), "chunked")) {
    f.chunked = true;
    size_t p = f.head_len;
    for (int guard = 0; guard < 100000; ++guard) {
      const size_t le = in.find("\r\n", p);
      if (le == std::string_view::npos) return f;
      const size_t size = parse_size(in.substr(p, le - p), 16);
      if (size == 0) {
        if (in.size() >= le + 4) f.length = le + 4;
        return f;
      }
      if (in.size() < le + 2 + size + 2) return f;
      p = le + 2 + size + 2;
    }
  }
  return f;  // until the connection ends: never complete here
}

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool chunked = false;
  size_t chunks = 0;
};

inline std::string lower(std::string_view s) {
  std::string out(s);
  for (char& c : out) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return out;
}

// The response `f` frames at the front of `in`, its body de-chunked.
inline Response decode(std::string_view in, const Framing& f) {
  Response r;
  r.status = f.status;
  r.chunked = f.chunked;
  const std::string_view head = in.substr(0, f.head_len - 4);
  size_t pos = head.find("\r\n");
  while (pos != std::string_view::npos && pos + 2 < head.size()) {
    const size_t start = pos + 2;
    size_t end = head.find("\r\n", start);
    if (end == std::string_view::npos) end = head.size();
    const std::string_view line = head.substr(start, end - start);
    const size_t colon = line.find(':');
    r.headers[lower(line.substr(0, colon))] = std::string(header(head, line.substr(0, colon)));
    pos = end;
  }
  if (!f.chunked) {
    r.body = std::string(in.substr(f.head_len, (f.length != 0 ? f.length : in.size()) - f.head_len));
    return r;
  }
  size_t p = f.head_len;
  for (;;) {
    const size_t le = in.find("\r\n", p);
    if (le == std::string_view::npos) break;
    const size_t size = parse_size(in.substr(p, le - p), 16);
    if (size == 0 || in.size() < le + 2 + size + 2) break;
    EXPECT_EQ(in.substr(le + 2 + size, 2), "\r\n") << "chunk data ends with CRLF";
    r.body += in.substr(le + 2, size);
    ++r.chunks;
    p = le + 2 + size + 2;
  }
  return r;
}

// ---- Requests ----------------------------------------------------------------------------------

inline std::string post(const std::string& body, const std::string& sid = "", const std::string& extra = "") {
  std::string r = "POST /mcp HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\n"
                   "Accept: application/json, text/event-stream\r\n";
  if (!sid.empty()) r += "Mcp-Session-Id: " + sid + "\r\n";
  return r + extra + "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

inline std::string init_body() {
  return R"({"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25",)"
         R"("capabilities":{},"clientInfo":{"name":"lwip-test","version":"1"}}})";
}

inline std::string call(int id, const char* tool, const char* args = "{}") {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) + R"(,"method":"tools/call","params":{"name":")" + tool +
         R"(","arguments":)" + args + "}}";
}

inline std::string echo(int id, const std::string& sid, const char* text = "hello", const std::string& extra = "") {
  return post(call(id, "echo", (std::string(R"({"text":")") + text + R"("})").c_str()), sid, extra);
}

inline std::string get_stream(const std::string& sid) {
  return "GET /mcp HTTP/1.1\r\nHost: localhost\r\nAccept: text/event-stream\r\nMcp-Session-Id: " + sid + "\r\n\r\n";
}

// An MCP session opened over one connection: initialize (200, the protocol version asked for,
// a 32-character session id), then the initialized notification (202). `send(bytes)` sends a request, `next()` returns
// the next complete response. Returns the session's id.
template <class Send, class Next>
std::string open_session(Send send, Next next) {
  send(post(init_body()));
  Response r = next();
  EXPECT_EQ(r.status, 200);
  EXPECT_NE(r.body.find(R"("protocolVersion":"2025-11-25")"), std::string::npos) << r.body;
  const std::string sid = r.headers["mcp-session-id"];
  EXPECT_EQ(sid.size(), 32u);
  send(post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", sid));
  EXPECT_EQ(next().status, 202);
  return sid;
}

// The big tool's answer: blocks 0..199, each once, in order.
inline void expect_all_blocks(const std::string& body) {
  size_t at = 0;
  for (int i = 0; i < 200; ++i) {
    const std::string block = "block " + std::to_string(i) + ": 0123456789";
    const size_t next = body.find(block, at);
    ASSERT_NE(next, std::string::npos) << "block " << i << " missing or out of order";
    at = next + block.size();
  }
  EXPECT_EQ(body.find("block 200"), std::string::npos);
  EXPECT_EQ(body.back(), '}');
}

}  // namespace lwip_http

#endif  // EMCP_TESTS_LWIP_HTTP_UTIL_H
