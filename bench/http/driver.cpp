// emcp_http_bench: drives an MCP server over Streamable HTTP with C concurrent keep-alive
// connections, each its own session, each with one tools/call of an `echo` tool in flight, and
// prints what it measured on one line (key=value), for bench/http/run.sh.
//
//   emcp_http_bench --port P [--connections C] [--requests N] [--warmup N] [--raw]
//
// Each connection initializes a session (initialize, notifications/initialized) and then sends
// requests one after the other; an answer may come as application/json (Content-Length or
// chunked) or as an event stream. Every answer is checked to be the echo of its request (id
// and text), so a fast wrong server cannot win. --raw skips the session and the check (for the
// responder that does no MCP work). Requests per second = N / (time from the first request
// after warm-up to the last answer); latency is per request, p50 and p99 reported.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  int port = 0;
  int connections = 8;
  long requests = 20000;
  long warmup = 1000;
  bool raw = false;
};

// One HTTP response read from a byte stream.
struct Reader {
  std::string buf;
  int status = 0;
  std::string session;
  std::string body;
  // Returns true once a whole response is in `body` (consumed from buf).
  bool take() {
    const size_t end = buf.find("\r\n\r\n");
    if (end == std::string::npos) return false;
    const std::string head = buf.substr(0, end);
    status = atoi(head.c_str() + 9);
    long length = -1;
    bool chunked = false;
    size_t pos = head.find("\r\n");
    while (pos != std::string::npos && pos < head.size()) {
      const size_t e = head.find("\r\n", pos + 2);
      std::string line = head.substr(pos + 2, (e == std::string::npos ? head.size() : e) - pos - 2);
      for (size_t i = 0; i < line.size() && line[i] != ':'; ++i) line[i] = static_cast<char>(tolower(line[i]));
      if (line.rfind("content-length:", 0) == 0) length = atol(line.c_str() + 15);
      if (line.rfind("transfer-encoding:", 0) == 0 && line.find("chunked") != std::string::npos) chunked = true;
      if (line.rfind("mcp-session-id:", 0) == 0) {
        session = line.substr(15);
        while (!session.empty() && session[0] == ' ') session.erase(0, 1);
      }
      pos = e;
    }
    size_t p = end + 4;
    if (length >= 0) {
      if (buf.size() < p + static_cast<size_t>(length)) return false;
      body = buf.substr(p, static_cast<size_t>(length));
      buf.erase(0, p + static_cast<size_t>(length));
      return true;
    }
    if (!chunked) {  // no body (202)
      body.clear();
      buf.erase(0, p);
      return true;
    }
    std::string out;
    for (;;) {
      const size_t le = buf.find("\r\n", p);
      if (le == std::string::npos) return false;
      const size_t size = strtoul(buf.c_str() + p, nullptr, 16);
      if (size == 0) {
        if (buf.size() < le + 4) return false;
        body = out;
        buf.erase(0, le + 4);
        return true;
      }
      if (buf.size() < le + 2 + size + 2) return false;
      out.append(buf, le + 2, size);
      p = le + 2 + size + 2;
    }
  }
};

struct Conn {
  int fd = -1;
  int state = 0;  // 0 initialize sent, 1 initialized sent, 2 request sent
  long id = 0;
  std::string session;
  Reader in;
  Clock::time_point sent;
};

std::string post(const std::string& body, const std::string& session) {
  std::string r = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                  "Accept: application/json, text/event-stream\r\n";
  if (!session.empty()) r += "Mcp-Session-Id: " + session + "\r\nMCP-Protocol-Version: 2025-11-25\r\n";
  r += "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
  return r;
}

std::string text_of(long id) { return "benchmark request " + std::to_string(id); }

std::string echo_call(long id) {
  return R"({"jsonrpc":"2.0","id":)" + std::to_string(id) +
         R"(,"method":"tools/call","params":{"name":"echo","arguments":{"text":")" + text_of(id) + R"("}}})";
}

bool send_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t k = ::send(fd, s.data() + off, s.size() - off, MSG_NOSIGNAL);
    if (k <= 0) {
      if (k < 0 && errno == EINTR) continue;
      if (k < 0 && errno == EAGAIN) {
        pollfd p{fd, POLLOUT, 0};
        poll(&p, 1, 1000);
        continue;
      }
      return false;
    }
    off += static_cast<size_t>(k);
  }
  return true;
}

// The answer's JSON text: the body, or the data of the event that holds the response.
bool answers(const std::string& body, long id) {
  const std::string want_id = "\"id\":" + std::to_string(id);
  const std::string want_text = "\"text\":\"" + text_of(id) + "\"";
  const size_t at = body.find(want_id);
  if (at == std::string::npos) return false;
  const char after = at + want_id.size() < body.size() ? body[at + want_id.size()] : '\0';
  return (after == ',' || after == '}') && body.find(want_text) != std::string::npos &&
         body.find("\"result\"") != std::string::npos;
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    std::string a = argv[i];
    auto next = [&] { return i + 1 < argc ? argv[++i] : (fprintf(stderr, "missing value\n"), exit(2), argv[0]); };
    if (a == "--port") o.port = atoi(next());
    else if (a == "--connections") o.connections = atoi(next());
    else if (a == "--requests") o.requests = atol(next());
    else if (a == "--warmup") o.warmup = atol(next());
    else if (a == "--raw") o.raw = true;
    else {
      fprintf(stderr, "usage: emcp_http_bench --port P [--connections C] [--requests N] [--warmup N] [--raw]\n");
      return 2;
    }
  }
  std::vector<Conn> conns(static_cast<size_t>(o.connections));
  for (Conn& c : conns) {
    c.fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_port = htons(static_cast<uint16_t>(o.port));
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(c.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
      perror("connect");
      return 1;
    }
    const int one = 1;
    setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  }
  long next_id = 1;
  const long total = o.warmup + o.requests;
  long answered = 0, errors = 0;
  std::vector<double> latencies;
  latencies.reserve(static_cast<size_t>(o.requests));
  Clock::time_point start{};
  auto send_next = [&](Conn& c) {
    if (next_id > total) return;
    c.id = next_id++;
    c.state = 2;
    if (c.id == o.warmup + 1) start = Clock::now();
    c.sent = Clock::now();
    if (!send_all(c.fd, post(echo_call(c.id), c.session))) ++errors;
  };
  const std::string init =
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})";
  for (Conn& c : conns) {
    if (o.raw) send_next(c);
    else {
      c.state = 0;
      send_all(c.fd, post(init, ""));
    }
  }
  if (o.warmup == 0) start = Clock::now();
  std::vector<pollfd> fds(conns.size());
  char buf[65536];
  while (answered < total && errors == 0) {
    for (size_t i = 0; i < conns.size(); ++i) fds[i] = pollfd{conns[i].fd, POLLIN, 0};
    if (poll(fds.data(), fds.size(), 10000) <= 0) {
      fprintf(stderr, "timeout waiting for answers (%ld of %ld)\n", answered, total);
      return 1;
    }
    for (size_t i = 0; i < conns.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Conn& c = conns[i];
      const ssize_t k = recv(c.fd, buf, sizeof buf, 0);
      if (k <= 0) {
        fprintf(stderr, "connection %zu closed by the server\n", i);
        return 1;
      }
      c.in.buf.append(buf, static_cast<size_t>(k));
      while (c.in.take()) {
        if (c.state == 0) {
          if (c.in.status != 200 || c.in.session.empty()) {
            fprintf(stderr, "initialize failed: %d\n", c.in.status);
            return 1;
          }
          c.session = c.in.session;
          c.state = 1;
          send_all(c.fd, post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", c.session));
          continue;
        }
        if (c.state == 1) {
          send_next(c);
          continue;
        }
        ++answered;
        if (c.in.status != 200 || (!o.raw && !answers(c.in.body, c.id))) {
          fprintf(stderr, "wrong answer to %ld: %d %s\n", c.id, c.in.status, c.in.body.substr(0, 200).c_str());
          ++errors;
        }
        if (c.id > o.warmup)
          latencies.push_back(std::chrono::duration<double, std::micro>(Clock::now() - c.sent).count());
        send_next(c);
      }
    }
  }
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies.begin(), latencies.end());
  auto pct = [&](double p) { return latencies.empty() ? 0.0 : latencies[static_cast<size_t>(p * (latencies.size() - 1))]; };
  printf("rps=%.0f p50_us=%.0f p99_us=%.0f requests=%zu connections=%d errors=%ld\n",
         static_cast<double>(latencies.size()) / seconds, pct(0.50), pct(0.99), latencies.size(), o.connections, errors);
  for (Conn& c : conns) close(c.fd);
  return errors == 0 ? 0 : 1;
}
