// emcp_http_bench: drives an MCP server over Streamable HTTP with C concurrent keep-alive
// connections, each its own session, each with one tools/call of an `echo` tool in flight, and
// prints what it measured on one line (key=value), for bench/http/run.sh.
//
//   emcp_http_bench --port P [--connections C] [--requests N] [--warmup N] [--raw] [--tls CA.pem]
//   emcp_http_bench --port P --tls CA.pem --handshakes N [--resume]
//
// --tls: HTTPS (Mbed TLS client, the server's certificate checked against CA.pem for
// "localhost"). --handshakes: N connections one after the other, each a TLS handshake and one
// request (GET /mcp without a session: 400), to measure what a handshake costs; --resume offers
// the session (ticket) of the previous connection, so every handshake after the first is a
// resumed one. Prints handshakes_per_s.
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
#include <cstdint>

#include "mbedtls/ctr_drbg.h"
#include "mbedtls/error.h"
#include "mbedtls/entropy.h"
#include "mbedtls/net_sockets.h"
#include "mbedtls/ssl.h"
#include "mbedtls/x509_crt.h"

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
  const char* ca = nullptr;  // --tls
  long handshakes = 0;
  bool resume = false;
};

// The TLS client side (one configuration, a context per connection).
struct Tls {
  mbedtls_entropy_context entropy;
  mbedtls_ctr_drbg_context drbg;
  mbedtls_x509_crt ca;
  mbedtls_ssl_config conf;
  bool init(const char* ca_file) {
    mbedtls_entropy_init(&entropy);
    mbedtls_ctr_drbg_init(&drbg);
    mbedtls_x509_crt_init(&ca);
    mbedtls_ssl_config_init(&conf);
    if (mbedtls_ctr_drbg_seed(&drbg, mbedtls_entropy_func, &entropy, nullptr, 0) != 0) return false;
    if (mbedtls_x509_crt_parse_file(&ca, ca_file) != 0) return false;
    if (mbedtls_ssl_config_defaults(&conf, MBEDTLS_SSL_IS_CLIENT, MBEDTLS_SSL_TRANSPORT_STREAM,
                                    MBEDTLS_SSL_PRESET_DEFAULT) != 0)
      return false;
    mbedtls_ssl_conf_authmode(&conf, MBEDTLS_SSL_VERIFY_REQUIRED);
    mbedtls_ssl_conf_ca_chain(&conf, &ca, nullptr);
    mbedtls_ssl_conf_rng(&conf, mbedtls_ctr_drbg_random, &drbg);
    return true;
  }
};
Tls g_tls;
bool g_use_tls = false;

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
  mbedtls_ssl_context* ssl = nullptr;  // --tls
  mbedtls_net_context net{};
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

bool send_plain(int fd, const std::string& s);

bool send_all(Conn& c, const std::string& s) {
  if (c.ssl == nullptr) return send_plain(c.fd, s);
  size_t off = 0;
  while (off < s.size()) {
    const int k = mbedtls_ssl_write(c.ssl, reinterpret_cast<const unsigned char*>(s.data() + off), s.size() - off);
    if (k > 0) off += static_cast<size_t>(k);
    else if (k != MBEDTLS_ERR_SSL_WANT_WRITE && k != MBEDTLS_ERR_SSL_WANT_READ) return false;
  }
  return true;
}

// Reads what is there (TLS: one record's plaintext at least). <= 0: closed or failed.
long receive(Conn& c, char* buf, size_t n) {
  if (c.ssl == nullptr) return ::recv(c.fd, buf, n, 0);
  for (;;) {
    const int k = mbedtls_ssl_read(c.ssl, reinterpret_cast<unsigned char*>(buf), n);
    if (k == MBEDTLS_ERR_SSL_WANT_READ || k == MBEDTLS_ERR_SSL_WANT_WRITE) continue;
    return k;
  }
}

// Connects to the server, with a TLS handshake when asked (offering `session` to resume).
bool open_conn(Conn& c, int port, const mbedtls_ssl_session* session) {
  c.fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(port));
  a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(c.fd, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0) {
    perror("connect");
    return false;
  }
  const int one = 1;
  setsockopt(c.fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  if (!g_use_tls) return true;
  c.ssl = new mbedtls_ssl_context;
  mbedtls_ssl_init(c.ssl);
  if (mbedtls_ssl_setup(c.ssl, &g_tls.conf) != 0 || mbedtls_ssl_set_hostname(c.ssl, "localhost") != 0) return false;
  if (session != nullptr && mbedtls_ssl_set_session(c.ssl, session) != 0) return false;
  c.net.fd = c.fd;
  mbedtls_ssl_set_bio(c.ssl, &c.net, mbedtls_net_send, mbedtls_net_recv, nullptr);
  for (;;) {
    const int r = mbedtls_ssl_handshake(c.ssl);
    if (r == 0) return true;
    if (r != MBEDTLS_ERR_SSL_WANT_READ && r != MBEDTLS_ERR_SSL_WANT_WRITE) {
      char why[128];
      mbedtls_strerror(r, why, sizeof why);
      fprintf(stderr, "TLS handshake failed: %s\n", why);
      return false;
    }
  }
}

void close_conn(Conn& c) {
  if (c.ssl != nullptr) {
    mbedtls_ssl_close_notify(c.ssl);
    mbedtls_ssl_free(c.ssl);
    delete c.ssl;
    c.ssl = nullptr;
  }
  if (c.fd >= 0) close(c.fd);
  c.fd = -1;
}

bool send_plain(int fd, const std::string& s) {
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
    else if (a == "--tls") o.ca = next();
    else if (a == "--handshakes") o.handshakes = atol(next());
    else if (a == "--resume") o.resume = true;
    else {
      fprintf(stderr, "usage: emcp_http_bench --port P [--connections C] [--requests N] [--warmup N] [--raw] [--tls CA.pem]\n"
                      "       emcp_http_bench --port P --tls CA.pem --handshakes N [--resume]\n");
      return 2;
    }
  }
  if (o.ca != nullptr) {
    g_use_tls = true;
    if (!g_tls.init(o.ca)) {
      fprintf(stderr, "cannot set up TLS with the CA %s\n", o.ca);
      return 2;
    }
  }
  if (o.handshakes > 0) {
    if (!g_use_tls) {
      fprintf(stderr, "--handshakes needs --tls\n");
      return 2;
    }
    // One connection after the other: a handshake and one request each.
    mbedtls_ssl_session session;
    mbedtls_ssl_session_init(&session);
    bool have_session = false;
    char rbuf[4096];
    const auto t0 = Clock::now();
    for (long i = 0; i < o.handshakes; ++i) {
      Conn c;
      if (!open_conn(c, o.port, o.resume && have_session ? &session : nullptr)) return 1;
      if (o.resume && !have_session) have_session = mbedtls_ssl_get_session(c.ssl, &session) == 0;
      if (!send_all(c, "GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAccept: text/event-stream\r\n\r\n")) return 1;
      while (!c.in.take()) {
        const long k = receive(c, rbuf, sizeof rbuf);
        if (k <= 0) {
          fprintf(stderr, "connection %ld closed before its answer\n", i);
          return 1;
        }
        c.in.buf.append(rbuf, static_cast<size_t>(k));
      }
      close_conn(c);
    }
    const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    printf("handshakes_per_s=%.0f handshakes=%ld resume=%d\n", static_cast<double>(o.handshakes) / seconds,
           o.handshakes, o.resume ? 1 : 0);
    mbedtls_ssl_session_free(&session);
    return 0;
  }
  std::vector<Conn> conns(static_cast<size_t>(o.connections));
  for (Conn& c : conns)
    if (!open_conn(c, o.port, nullptr)) return 1;
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
    if (!send_all(c, post(echo_call(c.id), c.session))) ++errors;
  };
  const std::string init =
      R"({"jsonrpc":"2.0","id":0,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"bench","version":"1"}}})";
  for (Conn& c : conns) {
    if (o.raw) send_next(c);
    else {
      c.state = 0;
      send_all(c, post(init, ""));
    }
  }
  if (o.warmup == 0) start = Clock::now();
  std::vector<pollfd> fds(conns.size());
  char buf[65536];
  while (answered < total && errors == 0) {
    // TLS: plaintext already decrypted counts as readable.
    bool buffered = false;
    for (size_t i = 0; i < conns.size(); ++i) {
      fds[i] = pollfd{conns[i].fd, POLLIN, 0};
      if (conns[i].ssl != nullptr && mbedtls_ssl_get_bytes_avail(conns[i].ssl) > 0) {
        fds[i].revents = POLLIN;
        buffered = true;
      }
    }
    if (!buffered && poll(fds.data(), fds.size(), 10000) <= 0) {
      fprintf(stderr, "timeout waiting for answers (%ld of %ld)\n", answered, total);
      return 1;
    }
    for (size_t i = 0; i < conns.size(); ++i) {
      if (!(fds[i].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Conn& c = conns[i];
      const long k = receive(c, buf, sizeof buf);
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
          send_all(c, post(R"({"jsonrpc":"2.0","method":"notifications/initialized"})", c.session));
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
  for (Conn& c : conns) close_conn(c);
  return errors == 0 ? 0 : 1;
}
