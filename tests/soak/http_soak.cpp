// A soak test of the host HTTP server: a million Streamable HTTP requests over a few keep-alive
// connections, with the server's resident memory sampled as they go.
//
//   emcp-http-soak SERVER [--requests N] [--connections C] [--depth D] [--time-limit S]
//
// Starts `SERVER --simulate --http 0`, reads its stderr for the port, opens C connections
// (default 8: emcp-sensors holds 8 sessions, and refuses a ninth from one address with 429),
// each with its own session (initialize, then notifications/initialized), and sends N requests
// in all (default 1,000,000; EMCP_SOAK_REQUESTS overrides the default, --requests both),
// alternately `ping` and a `tools/call` of `echo`, each connection with D requests in flight
// (default 1; the server answers pipelined requests in order, but 2 is barely faster: the
// server's one core is the bound). Every answer is checked: its status, a Content-Length body,
// the JSON-RPC id sent and the session's id, and for echo its text. Afterwards each session is
// deleted and its connection closed, and the server, stopped with SIGTERM, must report every
// slot free.
//
// The server's VmRSS (/proc/PID/status) is sampled every 0.5 s. Exit status 1, with the reason and
// the tail of the server's stderr, on any failed request (status, id, text, a closed connection,
// no answer within 5 s), on RSS growing more than kRssGrowthKb after the warm-up (the first 10% of
// the requests), on a run longer than the time limit (default 400 s), or on a server that does not
// stop cleanly with its slots free. Figures go to stdout, lines starting with '#'.
//
// Test code: the standard library and the heap are fine here (the zero-heap rule is core/,
// ports/ and boards/'s).
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace {

// The server allocates nothing at run time (its storage is static), so its RSS should not move
// once every page it touches has been touched (the warm-up). The allowance covers page-cache and
// kernel accounting noise (a few pages of libc, stack or file mappings faulted in late), far less
// than a leak of even a few bytes per request would show over the run.
constexpr long kRssGrowthKb = 512;
constexpr double kAnswerTimeoutS = 5.0;
constexpr double kReadyTimeoutS = 10.0;
constexpr double kSampleIntervalS = 0.5;
constexpr uint64_t kProgressEvery = 100000;
constexpr size_t kStderrTail = 16 * 1024;
constexpr const char* kRevision = "2025-11-25";

double now_s() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

bool parse_count(const char* text, uint64_t* out) {
  if (text == nullptr || *text == '\0') return false;
  uint64_t v = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9' || v > UINT64_MAX / 10 - 9) return false;
    v = v * 10 + static_cast<uint64_t>(*p - '0');
  }
  *out = v;
  return true;
}

// ---- the server process -------------------------------------------------------------------

struct ServerProcess {
  pid_t pid = -1;
  int err_fd = -1;   // read end of its stderr
  std::string tail;  // the last kStderrTail bytes it wrote on stderr
  bool exited = false;
  int status = 0;

  // Reads what stderr has (non-blocking). False at end of file.
  bool drain() {
    if (err_fd < 0) return false;
    char buf[4096];
    for (;;) {
      const ssize_t n = read(err_fd, buf, sizeof buf);
      if (n > 0) {
        tail.append(buf, static_cast<size_t>(n));
        if (tail.size() > 2 * kStderrTail) tail.erase(0, tail.size() - kStderrTail);
        continue;
      }
      if (n < 0 && (errno == EAGAIN || errno == EINTR)) return true;
      close(err_fd);
      err_fd = -1;
      return false;
    }
  }

  std::string last_lines(size_t count) const {
    size_t pos = tail.size();
    while (pos > 0 && tail[pos - 1] == '\n') --pos;
    size_t lines = 0;
    while (pos > 0 && lines < count) {
      pos = tail.rfind('\n', pos - 1);
      if (pos == std::string::npos) {
        pos = 0;
        break;
      }
      ++lines;
    }
    return tail.substr(pos == 0 ? 0 : pos + 1);
  }

  // Its resident set in kB, or -1.
  long rss_kb() const {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return -1;
    char buf[4096];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return -1;
    buf[n] = '\0';
    const char* p = strstr(buf, "VmRSS:");
    return p == nullptr ? -1 : strtol(p + 6, nullptr, 10);
  }

  // How many of its file descriptors are sockets (the listener and its connections), or -1.
  int sockets() const {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/fd", static_cast<int>(pid));
    DIR* dir = opendir(path);
    if (dir == nullptr) return -1;
    int count = 0;
    while (const dirent* e = readdir(dir)) {
      if (e->d_name[0] == '.') continue;
      char target[64];
      const ssize_t n = readlinkat(dirfd(dir), e->d_name, target, sizeof target - 1);
      if (n > 0 && strncmp(target, "socket:", 7) == 0) ++count;
    }
    closedir(dir);
    return count;
  }

  // Its CPU time so far, user and system, in seconds (false when unreadable).
  bool cpu_s(double* user, double* sys) const {
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
    const int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) return false;
    char buf[1024];
    const ssize_t n = read(fd, buf, sizeof buf - 1);
    close(fd);
    if (n <= 0) return false;
    buf[n] = '\0';
    const char* p = strrchr(buf, ')');  // after the command's name, fields 3...: utime is 14, stime 15
    for (int field = 2; p != nullptr && field < 14; ++field) p = strchr(p + 1, ' ');
    if (p == nullptr) return false;
    char* end;
    const double ticks = static_cast<double>(sysconf(_SC_CLK_TCK));
    *user = static_cast<double>(strtoull(p + 1, &end, 10)) / ticks;
    *sys = static_cast<double>(strtoull(end, nullptr, 10)) / ticks;
    return true;
  }

  void stop(int sig) {
    if (pid > 0 && !exited) (void)kill(pid, sig);
  }

  // Waits up to `seconds` for it to exit, reading its stderr meanwhile. True once it exited.
  bool wait_exit(double seconds) {
    const double deadline = now_s() + seconds;
    while (!exited) {
      const pid_t r = waitpid(pid, &status, WNOHANG);
      if (r == pid) {
        exited = true;
        break;
      }
      if (now_s() > deadline) return false;
      pollfd pfd = {err_fd, POLLIN, 0};
      if (err_fd >= 0) {
        if (poll(&pfd, 1, 20) > 0) (void)drain();
      } else {
        usleep(20000);
      }
    }
    while (drain()) {
      pollfd pfd = {err_fd, POLLIN, 0};
      if (poll(&pfd, 1, 1000) <= 0) break;
    }
    return true;
  }
};

ServerProcess g_server;

[[noreturn]] void fail(const std::string& reason) {
  fflush(stdout);
  fprintf(stderr, "emcp-http-soak: FAILED: %s\n", reason.c_str());
  if (g_server.pid > 0) {
    g_server.stop(SIGTERM);
    if (!g_server.wait_exit(5)) {
      g_server.stop(SIGKILL);
      (void)g_server.wait_exit(5);
    }
    fprintf(stderr, "emcp-http-soak: the server's stderr (its end):\n%s\n", g_server.last_lines(30).c_str());
  }
  exit(1);
}

// Starts `program --simulate --http 0` and reads its stderr until it names its port.
uint16_t start_server(const char* program) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) fail(std::string("pipe: ") + strerror(errno));
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) fail(std::string("fork: ") + strerror(errno));
  if (pid == 0) {
    (void)prctl(PR_SET_PDEATHSIG, SIGKILL);  // never outlives the test
    if (getppid() != parent) _exit(127);
    const int null_fd = open("/dev/null", O_RDONLY);
    if (null_fd >= 0) (void)dup2(null_fd, 0);
    (void)dup2(pipe_fds[1], 2);
    char simulate[] = "--simulate", http[] = "--http", port[] = "0";
    char* argv[] = {const_cast<char*>(program), simulate, http, port, nullptr};
    execv(program, argv);
    dprintf(2, "exec %s: %s\n", program, strerror(errno));
    _exit(127);
  }
  close(pipe_fds[1]);
  g_server.pid = pid;
  g_server.err_fd = pipe_fds[0];
  (void)fcntl(g_server.err_fd, F_SETFL, O_NONBLOCK);
  const char* const kMarker = "serving MCP on http://127.0.0.1:";
  const double deadline = now_s() + kReadyTimeoutS;
  for (;;) {
    const size_t at = g_server.tail.find(kMarker);
    if (at != std::string::npos) {
      const size_t eol = g_server.tail.find('\n', at);
      if (eol != std::string::npos) {
        const long port = strtol(g_server.tail.c_str() + at + strlen(kMarker), nullptr, 10);
        if (port <= 0 || port > 65535) fail("the server's ready line names no port");
        return static_cast<uint16_t>(port);
      }
    }
    const double left = deadline - now_s();
    if (left <= 0) fail("the server did not say `serving MCP on http://127.0.0.1:PORT` within 10 s");
    pollfd pfd = {g_server.err_fd, POLLIN, 0};
    if (poll(&pfd, 1, static_cast<int>(left * 1000) + 1) > 0 && !g_server.drain()) {
      (void)g_server.wait_exit(1);
      fail("the server ended before it was ready");
    }
  }
}

// ---- HTTP answers -------------------------------------------------------------------------

struct Answer {
  int status = 0;
  const char* body = nullptr;
  size_t body_len = 0;
  const char* session = nullptr;  // Mcp-Session-Id's value, or nullptr
  size_t session_len = 0;
  size_t total = 0;               // bytes of head and body
};

bool header_is(const char* line, size_t len, const char* name, const char** value, size_t* value_len) {
  const size_t n = strlen(name);
  if (len <= n || line[n] != ':' || strncasecmp(line, name, n) != 0) return false;
  size_t i = n + 1;
  while (i < len && (line[i] == ' ' || line[i] == '\t')) ++i;
  size_t end = len;
  while (end > i && (line[end - 1] == ' ' || line[end - 1] == '\t')) --end;
  *value = line + i;
  *value_len = end - i;
  return true;
}

// Parses one answer at the start of [data, data+len): 1 when whole (in *out), 0 when more bytes
// are needed, -1 (the reason in *why) when it is not an answer this test accepts.
int parse_answer(const char* data, size_t len, Answer* out, std::string* why) {
  const void* end_p = memmem(data, len, "\r\n\r\n", 4);
  if (end_p == nullptr) {
    if (len > 16384) {
      *why = "an answer's head longer than 16 KiB";
      return -1;
    }
    return 0;
  }
  const size_t head_len = static_cast<size_t>(static_cast<const char*>(end_p) - data) + 4;
  if (len < 12 || memcmp(data, "HTTP/1.1 ", 9) != 0) {
    *why = "not an HTTP/1.1 status line: " + std::string(data, std::min<size_t>(head_len, 80));
    return -1;
  }
  Answer a;
  a.status = atoi(data + 9);
  bool have_length = false;
  size_t length = 0;
  const char* line = static_cast<const char*>(memchr(data, '\n', head_len)) + 1;
  const char* const head_end = data + head_len - 2;
  while (line < head_end) {
    const char* eol = static_cast<const char*>(memchr(line, '\r', static_cast<size_t>(head_end - line)));
    if (eol == nullptr) eol = head_end;
    const size_t n = static_cast<size_t>(eol - line);
    const char* v;
    size_t vn;
    if (header_is(line, n, "Content-Length", &v, &vn)) {
      uint64_t cl = 0;
      if (!parse_count(std::string(v, vn).c_str(), &cl)) {
        *why = "a bad Content-Length: " + std::string(v, vn);
        return -1;
      }
      have_length = true;
      length = static_cast<size_t>(cl);
    } else if (header_is(line, n, "Mcp-Session-Id", &v, &vn)) {
      a.session = v;
      a.session_len = vn;
    } else if (header_is(line, n, "Transfer-Encoding", &v, &vn)) {
      *why = "a chunked answer where a Content-Length body was expected";
      return -1;
    } else if (header_is(line, n, "Connection", &v, &vn) && vn == 5 && strncasecmp(v, "close", 5) == 0) {
      *why = "the server closes the connection after this answer (Connection: close)";
      return -1;
    }
    line = eol + 2;
  }
  if (!have_length) {
    *why = "an answer without Content-Length (status " + std::to_string(a.status) + ")";
    return -1;
  }
  if (len - head_len < length) return 0;
  a.body = data + head_len;
  a.body_len = length;
  a.total = head_len + length;
  *out = a;
  return 1;
}

// The number after the body's first "id":, or -1.
long long json_id(const char* body, size_t len) {
  const void* p = memmem(body, len, "\"id\":", 5);
  if (p == nullptr) return -1;
  const char* s = static_cast<const char*>(p) + 5;
  const char* end = body + len;
  if (s >= end || *s < '0' || *s > '9') return -1;
  long long v = 0;
  while (s < end && *s >= '0' && *s <= '9' && v < (1LL << 50)) v = v * 10 + (*s++ - '0');
  return v;
}

bool contains(const char* body, size_t len, const char* text) {
  return memmem(body, len, text, strlen(text)) != nullptr;
}

// ---- the connections ----------------------------------------------------------------------

enum class Kind { kInitialize, kInitialized, kPing, kEcho, kDelete };
enum class Phase { kStarting, kRequests, kDeleting, kDone };

struct Pending {
  Kind kind;
  uint64_t id;
  double sent;
};

struct Connection {
  int index = 0;
  int fd = -1;
  Phase phase = Phase::kStarting;
  std::string session;
  std::string prefix;  // the request head up to Content-Length's value, with the session's id
  std::vector<char> in = std::vector<char>(64 * 1024);  // what came in: [in_start, in_end) unread
  size_t in_start = 0, in_end = 0;
  std::string out;
  size_t out_start = 0;
  Pending pending[16];  // in order of sending; a ring of `depth` at most
  size_t pending_head = 0, pending_count = 0;
  uint64_t next_id = 1;
};

struct Soak {
  uint16_t port = 0;
  uint64_t total = 1000000;  // requests of the loop, over all connections
  size_t depth = 1;
  uint64_t issued = 0, completed = 0;
  std::string host;

  void send_post(Connection& c, Kind kind, uint64_t id, const char* body, size_t body_len, double now) {
    char len[24];
    const int n = snprintf(len, sizeof len, "%zu\r\n\r\n", body_len);
    if (c.out_start == c.out.size()) {
      c.out.clear();
      c.out_start = 0;
    }
    if (c.prefix.empty()) {
      c.out += "POST /mcp HTTP/1.1\r\nHost: " + host +
               "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
               "Content-Length: ";
    } else {
      c.out += c.prefix;
    }
    c.out.append(len, static_cast<size_t>(n));
    c.out.append(body, body_len);
    push(c, kind, id, now);
  }

  void push(Connection& c, Kind kind, uint64_t id, double now) {
    c.pending[(c.pending_head + c.pending_count) % 16] = Pending{kind, id, now};
    ++c.pending_count;
  }

  void send_initialize(Connection& c, double now) {
    char body[256];
    const int n = snprintf(body, sizeof body,
                           "{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
                           "\"%s\",\"capabilities\":{},\"clientInfo\":{\"name\":\"soak%d\",\"version\":\"1\"}}}",
                           kRevision, c.index);
    send_post(c, Kind::kInitialize, 0, body, static_cast<size_t>(n), now);
  }

  void send_request(Connection& c, double now) {
    const uint64_t id = c.next_id++;
    char body[256];
    int n;
    Kind kind;
    if (id % 2 == 1) {
      kind = Kind::kPing;
      n = snprintf(body, sizeof body, "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"ping\"}",
                   static_cast<unsigned long long>(id));
    } else {
      kind = Kind::kEcho;
      n = snprintf(body, sizeof body,
                   "{\"jsonrpc\":\"2.0\",\"id\":%llu,\"method\":\"tools/call\",\"params\":{\"name\":\"echo\","
                   "\"arguments\":{\"text\":\"c%d r%llu\"}}}",
                   static_cast<unsigned long long>(id), c.index, static_cast<unsigned long long>(id));
    }
    send_post(c, kind, id, body, static_cast<size_t>(n), now);
    ++issued;
  }

  void send_delete(Connection& c, double now) {
    c.out += "DELETE /mcp HTTP/1.1\r\nHost: " + host + "\r\nMcp-Session-Id: " + c.session +
             "\r\nMCP-Protocol-Version: " + kRevision + "\r\n\r\n";
    push(c, Kind::kDelete, 0, now);
    c.phase = Phase::kDeleting;
  }

  // Sends what the socket takes now; the rest waits for POLLOUT.
  void flush(Connection& c) {
    while (c.out_start < c.out.size()) {
      const ssize_t n = send(c.fd, c.out.data() + c.out_start, c.out.size() - c.out_start, MSG_NOSIGNAL);
      if (n > 0) {
        c.out_start += static_cast<size_t>(n);
      } else if (n < 0 && errno == EINTR) {
        continue;
      } else if (n < 0 && errno == EAGAIN) {
        return;
      } else {
        fail("connection " + std::to_string(c.index) + ": send failed: " + strerror(errno));
      }
    }
  }

  // Tops the connection up: up to `depth` loop requests in flight, then its DELETE.
  void top_up(Connection& c, double now) {
    if (c.phase != Phase::kRequests) return;
    while (c.pending_count < depth && issued < total) send_request(c, now);
    if (c.pending_count == 0 && issued >= total) send_delete(c, now);
  }

  std::string where(const Connection& c, const Pending& p) const {
    static const char* const kNames[] = {"initialize", "notifications/initialized", "ping", "tools/call echo",
                                         "DELETE"};
    return "connection " + std::to_string(c.index) + ", " + kNames[static_cast<int>(p.kind)] + " id " +
           std::to_string(p.id) + " (after " + std::to_string(completed) + " answered requests): ";
  }

  void check(Connection& c, const Pending& p, const Answer& a, double now) {
    // What the answer said, for a failure's message only (nothing is built for a good answer).
    const auto said = [&a] {
      return " (status " + std::to_string(a.status) + ", body " +
             std::string(a.body, std::min<size_t>(a.body_len, 300)) + ")";
    };
    const int want = p.kind == Kind::kInitialized ? 202 : 200;
    if (a.status != want)
      fail(where(c, p) + "status " + std::to_string(a.status) + ", not " + std::to_string(want) + said());
    switch (p.kind) {
      case Kind::kInitialize:
        if (a.session == nullptr || a.session_len == 0) fail(where(c, p) + "no Mcp-Session-Id" + said());
        if (json_id(a.body, a.body_len) != 0 || !contains(a.body, a.body_len, "\"protocolVersion\":\"2025-11-25\""))
          fail(where(c, p) + "not the answer to initialize at 2025-11-25" + said());
        c.session.assign(a.session, a.session_len);
        c.prefix = "POST /mcp HTTP/1.1\r\nHost: " + host +
                   "\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n"
                   "Mcp-Session-Id: " + c.session + "\r\nMCP-Protocol-Version: " + kRevision +
                   "\r\nContent-Length: ";
        {
          static const char kBody[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}";
          send_post(c, Kind::kInitialized, 0, kBody, sizeof kBody - 1, now);
        }
        return;
      case Kind::kInitialized:
        c.phase = Phase::kRequests;
        return;
      case Kind::kDelete:
        c.phase = Phase::kDone;
        return;
      case Kind::kPing:
      case Kind::kEcho:
        break;
    }
    if (a.session == nullptr || c.session.compare(0, std::string::npos, a.session, a.session_len) != 0)
      fail(where(c, p) + "the answer does not carry the session's id " + c.session + said());
    const long long id = json_id(a.body, a.body_len);
    if (id < 0 || static_cast<uint64_t>(id) != p.id)
      fail(where(c, p) + "the answer's id is " + std::to_string(id) + said());
    if (!contains(a.body, a.body_len, "\"result\":")) fail(where(c, p) + "no result" + said());
    if (p.kind == Kind::kEcho) {
      char text[64];
      snprintf(text, sizeof text, "\"text\":\"c%d r%llu\"", c.index, static_cast<unsigned long long>(p.id));
      if (!contains(a.body, a.body_len, text)) fail(where(c, p) + "echo did not send back " + text + said());
    }
    ++completed;
  }

  // Reads what the socket has and checks every whole answer.
  void receive(Connection& c, double now) {
    for (;;) {
      if (c.in_start == c.in_end) c.in_start = c.in_end = 0;
      if (c.in.size() - c.in_end < 4096) {  // room at the end: move what is left to the front
        memmove(c.in.data(), c.in.data() + c.in_start, c.in_end - c.in_start);
        c.in_end -= c.in_start;
        c.in_start = 0;
        if (c.in.size() - c.in_end < 4096) c.in.resize(2 * c.in.size());
      }
      const size_t room = c.in.size() - c.in_end;
      const ssize_t n = recv(c.fd, c.in.data() + c.in_end, room, 0);
      if (n > 0) {
        c.in_end += static_cast<size_t>(n);
        parse(c, now);
        if (static_cast<size_t>(n) < room) return;
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n < 0 && errno == EAGAIN) return;
      const std::string why = n == 0 ? "the server closed the connection" : std::string("recv: ") + strerror(errno);
      fail("connection " + std::to_string(c.index) + ": " + why + " with " + std::to_string(c.pending_count) +
           " requests unanswered (after " + std::to_string(completed) + " answered requests)");
    }
  }

  void parse(Connection& c, double now) {
    while (c.in_start < c.in_end) {
      Answer a;
      std::string why;
      const int r = parse_answer(c.in.data() + c.in_start, c.in_end - c.in_start, &a, &why);
      if (r == 0) return;
      if (c.pending_count == 0) fail("connection " + std::to_string(c.index) + ": an answer to no request");
      const Pending p = c.pending[c.pending_head];
      if (r < 0) fail(where(c, p) + why);
      c.pending_head = (c.pending_head + 1) % 16;
      --c.pending_count;
      c.in_start += a.total;
      check(c, p, a, now);
      top_up(c, now);
    }
  }
};

int connect_to(uint16_t port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) fail(std::string("socket: ") + strerror(errno));
  sockaddr_in addr = {};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<const sockaddr*>(&addr), sizeof addr) != 0)
    fail("connect to 127.0.0.1:" + std::to_string(port) + ": " + strerror(errno));
  const int one = 1;
  (void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
  (void)fcntl(fd, F_SETFL, O_NONBLOCK);
  return fd;
}

void usage() {
  fprintf(stderr,
          "usage: emcp-http-soak SERVER [--requests N] [--connections C] [--depth D] [--time-limit S]\n"
          "  runs SERVER --simulate --http 0 and sends it N requests (default 1000000, or\n"
          "  $EMCP_SOAK_REQUESTS) over C keep-alive connections (default 8, at most the server's\n"
          "  session slots), D in flight on each\n"
          "  (default 1, at most 16), within S seconds (default 400)\n");
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 2 || argv[1][0] == '-') {
    usage();
    return 2;
  }
  const char* program = argv[1];
  Soak soak;
  uint64_t connections = 8, depth = 1, time_limit = 400;
  if (const char* env = getenv("EMCP_SOAK_REQUESTS")) {
    if (!parse_count(env, &soak.total) || soak.total == 0) {
      fprintf(stderr, "emcp-http-soak: EMCP_SOAK_REQUESTS must be a positive number\n");
      return 2;
    }
  }
  for (int i = 2; i < argc; ++i) {
    uint64_t* target = nullptr;
    if (strcmp(argv[i], "--requests") == 0) target = &soak.total;
    if (strcmp(argv[i], "--connections") == 0) target = &connections;
    if (strcmp(argv[i], "--depth") == 0) target = &depth;
    if (strcmp(argv[i], "--time-limit") == 0) target = &time_limit;
    if (target == nullptr || i + 1 >= argc || !parse_count(argv[++i], target) || *target == 0) {
      usage();
      return 2;
    }
  }
  if (connections > 256 || depth > 16) {
    usage();
    return 2;
  }
  soak.depth = static_cast<size_t>(depth);
  signal(SIGPIPE, SIG_IGN);

  soak.port = start_server(program);
  soak.host = "127.0.0.1:" + std::to_string(soak.port);
  const int base_sockets = g_server.sockets();  // the listener
  const long rss_start = g_server.rss_kb();
  if (rss_start <= 0) fail("cannot read the server's VmRSS from /proc");
  printf("# server pid %d on port %u; %llu requests over %llu connections, %zu in flight on each\n",
         static_cast<int>(g_server.pid), soak.port, static_cast<unsigned long long>(soak.total),
         static_cast<unsigned long long>(connections), soak.depth);
  fflush(stdout);

  const double t0 = now_s();
  std::vector<Connection> conns(static_cast<size_t>(connections));
  for (size_t k = 0; k < conns.size(); ++k) {
    conns[k].index = static_cast<int>(k);
    conns[k].fd = connect_to(soak.port);
    soak.send_initialize(conns[k], t0);
    soak.flush(conns[k]);
  }

  const uint64_t warmup = std::max<uint64_t>(soak.total / 10, 1);
  long rss_warm = -1, rss_max_after = -1, rss_max = rss_start;
  double next_sample = t0 + kSampleIntervalS;
  uint64_t next_progress = kProgressEvery;
  double t_end = 0;
  std::vector<pollfd> fds(conns.size() + 1);
  for (;;) {
    size_t open_conns = 0;
    for (size_t k = 0; k < conns.size(); ++k) {
      Connection& c = conns[k];
      fds[k] = pollfd{c.fd, static_cast<short>(POLLIN | (c.out_start < c.out.size() ? POLLOUT : 0)), 0};
      if (c.phase != Phase::kDone) ++open_conns;
    }
    if (open_conns == 0) break;
    fds[conns.size()] = pollfd{g_server.err_fd, POLLIN, 0};
    const int ready = poll(fds.data(), static_cast<nfds_t>(fds.size()), 50);
    if (ready < 0 && errno != EINTR) fail(std::string("poll: ") + strerror(errno));
    const double now = now_s();
    if (fds[conns.size()].revents != 0 && !g_server.drain()) {
      (void)g_server.wait_exit(1);
      fail("the server ended during the run (" + std::to_string(soak.completed) + " requests answered)");
    }
    for (size_t k = 0; k < conns.size(); ++k) {
      Connection& c = conns[k];
      if (c.fd < 0) continue;
      if (fds[k].revents & (POLLIN | POLLHUP | POLLERR)) soak.receive(c, now);
      if (c.phase == Phase::kDone) {  // its session deleted: closed at once
        close(c.fd);
        c.fd = -1;
        continue;
      }
      soak.flush(c);
      if (c.pending_count > 0 && now - c.pending[c.pending_head].sent > kAnswerTimeoutS)
        fail(soak.where(c, c.pending[c.pending_head]) + "no answer within 5 s");
    }
    if (rss_warm < 0 && soak.completed >= warmup) {
      rss_warm = rss_max_after = g_server.rss_kb();
      rss_max = std::max(rss_max, rss_warm);
    }
    if (now >= next_sample) {
      next_sample += kSampleIntervalS;
      const long rss = g_server.rss_kb();
      if (rss <= 0) fail("cannot read the server's VmRSS from /proc");
      rss_max = std::max(rss_max, rss);
      if (rss_warm >= 0) {
        rss_max_after = std::max(rss_max_after, rss);
        if (rss_max_after - rss_warm > kRssGrowthKb)
          fail("the server's RSS grew from " + std::to_string(rss_warm) + " kB after the warm-up to " +
               std::to_string(rss) + " kB after " + std::to_string(soak.completed) + " requests (more than " +
               std::to_string(kRssGrowthKb) + " kB)");
      }
    }
    if (soak.completed >= next_progress) {
      const double s = now - t0;
      printf("# %llu requests, %.1f s, %.0f req/s so far, server RSS %ld kB\n",
             static_cast<unsigned long long>(soak.completed), s, static_cast<double>(soak.completed) / s,
             g_server.rss_kb());
      fflush(stdout);
      next_progress += kProgressEvery;
    }
    if (t_end == 0 && soak.completed >= soak.total) t_end = now;
    if (now - t0 > static_cast<double>(time_limit))
      fail("the run took longer than " + std::to_string(time_limit) + " s (" + std::to_string(soak.completed) +
           " requests answered)");
  }
  if (t_end == 0) t_end = now_s();

  // The server sees the closes before it is stopped: its sockets come back to the listener alone.
  const double close_deadline = now_s() + 5;
  while (g_server.sockets() > base_sockets && now_s() < close_deadline) usleep(10000);
  const long rss_end = g_server.rss_kb();
  rss_max = std::max(rss_max, rss_end);
  rss_max_after = std::max(rss_max_after, rss_end);
  if (rss_max_after - rss_warm > kRssGrowthKb)
    fail("the server's RSS grew from " + std::to_string(rss_warm) + " kB after the warm-up to " +
         std::to_string(rss_max_after) + " kB (more than " + std::to_string(kRssGrowthKb) + " kB)");

  const double seconds = t_end - t0;
  printf("# %llu requests in %.1f s (%.0f req/s) over %zu connections; 0 failures; server RSS kB: start %ld, "
         "after warm-up %ld, max %ld, end %ld (growth after warm-up %ld kB)\n",
         static_cast<unsigned long long>(soak.completed), seconds, static_cast<double>(soak.completed) / seconds,
         conns.size(), rss_start, rss_warm, rss_max, rss_end, rss_max_after - rss_warm);
  fflush(stdout);

  double server_user = 0, server_sys = 0;
  (void)g_server.cpu_s(&server_user, &server_sys);
  rusage self = {};
  (void)getrusage(RUSAGE_SELF, &self);
  const auto secs = [](const timeval& tv) {
    return static_cast<double>(tv.tv_sec) + static_cast<double>(tv.tv_usec) * 1e-6;
  };
  printf("# CPU: server %.1f s (user %.1f, system %.1f), this client %.1f s (user %.1f, system %.1f)\n",
         server_user + server_sys, server_user, server_sys, secs(self.ru_utime) + secs(self.ru_stime),
         secs(self.ru_utime), secs(self.ru_stime));
  fflush(stdout);

  g_server.stop(SIGTERM);
  if (!g_server.wait_exit(10)) fail("the server did not stop within 10 s of SIGTERM");
  // fail() prints the server's stderr; it has exited, so nothing is signalled.
  if (!WIFEXITED(g_server.status) || WEXITSTATUS(g_server.status) != 0)
    fail("the server did not exit with status 0 after SIGTERM (wait status " + std::to_string(g_server.status) + ")");
  const std::string last = g_server.last_lines(1);
  if (last.find("in use at stop: 0 connections, 0 sessions") == std::string::npos)
    fail("the server's last line does not say `in use at stop: 0 connections, 0 sessions`");
  printf("# server: %s", last.c_str());
  if (last.empty() || last.back() != '\n') printf("\n");
  return 0;
}
