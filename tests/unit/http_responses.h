// http_responses.h - reads HTTP/1.1 responses (RFC 9112) out of what a test's fake connection
// received: the status, headers, body by Content-Length, chunks or until close. Shared by the
// engine's tests (http_engine_fixture.h) and the TLS layer's (tls_layer_test.cpp).
#ifndef EMCP_TESTS_HTTP_RESPONSES_H
#define EMCP_TESTS_HTTP_RESPONSES_H

#include <gtest/gtest.h>
#include <stdlib.h>

#include <map>
#include <string>
#include <vector>

namespace http_test {

struct Response {
  int status = 0;
  std::map<std::string, std::string> headers;  // lower-case names
  std::string body;
  bool chunked = false;
  bool complete = false;
  std::vector<size_t> chunk_sizes;
};

inline std::string lower(std::string s) {
  for (char& c : s) c = static_cast<char>(tolower(static_cast<unsigned char>(c)));
  return s;
}

// Parses responses from the front of `in`; consumes what it parsed. A chunked response still
// open (an event stream) is reported with complete == false, its bytes kept in `in`.
inline std::vector<Response> parse(std::string& in) {
  std::vector<Response> out;
  for (;;) {
    const size_t end = in.find("\r\n\r\n");
    if (end == std::string::npos) break;
    Response r;
    const std::string head = in.substr(0, end);
    size_t line_end = head.find("\r\n");
    const std::string status_line = head.substr(0, line_end);
    if (status_line.compare(0, 9, "HTTP/1.1 ") != 0) break;
    r.status = atoi(status_line.c_str() + 9);
    size_t pos = line_end == std::string::npos ? head.size() : line_end + 2;
    while (pos < head.size()) {
      size_t e = head.find("\r\n", pos);
      if (e == std::string::npos) e = head.size();
      const std::string line = head.substr(pos, e - pos);
      const size_t colon = line.find(':');
      std::string v = line.substr(colon + 1);
      while (!v.empty() && v[0] == ' ') v.erase(0, 1);
      r.headers[lower(line.substr(0, colon))] = v;
      pos = e + 2;
    }
    size_t p = end + 4;
    if (r.status < 200 || r.status == 204 || r.status == 304) {  // RFC 9112 6.3: no content
      r.complete = true;
      out.push_back(r);
      in.erase(0, p);
      continue;
    }
    if (r.headers.count("content-length")) {
      const size_t n = static_cast<size_t>(atol(r.headers["content-length"].c_str()));
      if (in.size() < p + n) break;
      r.body = in.substr(p, n);
      r.complete = true;
      in.erase(0, p + n);
      out.push_back(r);
      continue;
    }
    if (r.headers["transfer-encoding"] == "chunked") {
      r.chunked = true;
      for (;;) {
        const size_t le = in.find("\r\n", p);
        if (le == std::string::npos) break;
        const size_t size = strtoul(in.substr(p, le - p).c_str(), nullptr, 16);
        if (size == 0) {
          if (in.size() < le + 4) break;
          EXPECT_EQ(in.substr(le + 2, 2), "\r\n");
          p = le + 4;
          r.complete = true;
          break;
        }
        if (in.size() < le + 2 + size + 2) break;
        EXPECT_EQ(in.substr(le + 2 + size, 2), "\r\n") << "chunk data must end with CRLF";
        r.body += in.substr(le + 2, size);
        r.chunk_sizes.push_back(size);
        p = le + 2 + size + 2;
      }
      if (!r.complete) {  // an open stream: report what came so far, keep the bytes
        out.push_back(r);
        break;
      }
      in.erase(0, p);
      out.push_back(r);
      continue;
    }
    r.body = in.substr(p);  // until close
    in.clear();
    out.push_back(r);
  }
  return out;
}

// The complete responses at the front of `in` (removed from it); a chunked one still open is
// not reported and its bytes stay in `in`.
inline std::vector<Response> parse_complete(std::string& in) {
  std::vector<Response> all = parse(in);
  if (!all.empty() && !all.back().complete && all.back().chunked) all.pop_back();
  return all;
}

}  // namespace http_test

#endif
