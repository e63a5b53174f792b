// emcp_stdio_bench: drives an MCP server over stdio with tools/call requests of an `echo` tool
// and prints what it measured on one line (key=value), for scripts/bench.
//
//   emcp_stdio_bench [--requests N] [--warmup N] [--mode pipelined|serial] -- COMMAND ARGS...
//
// pipelined: all N requests are written as fast as the pipe takes them while the answers are
//            read; requests per second = N / (time from the first write to the last answer).
// serial:    one request at a time, the next after the answer; the latency of each is kept and
//            p50/p99 reported.
// Memory: the server's VmHWM (peak resident set) and RssAnon (its anonymous part: stack, static
// data, heap, the libraries' written pages; the rest is mapped code and read-only data) from
// /proc/PID/status after the last answer, before its input ends; and its ru_maxrss after it
// exits (which also counts the pages the forked driver had before exec). Every answer is
// checked to be the echo of its request (id and text), so a fast wrong server cannot win.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

using Clock = std::chrono::steady_clock;

struct Child {
  pid_t pid = -1;
  int in = -1;   // we write
  int out = -1;  // we read
  std::string buf;

  bool start(char** argv) {
    int to[2], from[2];
    if (pipe(to) != 0 || pipe(from) != 0) return false;
    pid = fork();
    if (pid == 0) {
      dup2(to[0], 0);
      dup2(from[1], 1);
      const int null = open("/dev/null", O_WRONLY);
      dup2(null, 2);
      close(to[1]);
      close(from[0]);
      execvp(argv[0], argv);
      _exit(127);
    }
    close(to[0]);
    close(from[1]);
    in = to[1];
    out = from[0];
    return pid > 0;
  }

  void write_all(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      const ssize_t k = ::write(in, s.data() + off, s.size() - off);
      if (k <= 0) {
        perror("write");
        exit(1);
      }
      off += static_cast<size_t>(k);
    }
  }

  // One line (without '\n'); exits on end of output.
  std::string read_line() {
    for (;;) {
      const size_t nl = buf.find('\n');
      if (nl != std::string::npos) {
        std::string line = buf.substr(0, nl);
        buf.erase(0, nl + 1);
        return line;
      }
      char tmp[65536];
      const ssize_t k = ::read(out, tmp, sizeof tmp);
      if (k <= 0) {
        fprintf(stderr, "the server closed its output\n");
        exit(1);
      }
      buf.append(tmp, static_cast<size_t>(k));
    }
  }

  // VmHWM and RssAnon of the running server, KiB (0 when /proc does not say).
  void status_kb(long* hwm, long* anon) const {
    *hwm = *anon = 0;
    char path[64];
    snprintf(path, sizeof path, "/proc/%d/status", static_cast<int>(pid));
    FILE* f = fopen(path, "r");
    if (f == nullptr) return;
    char line[256];
    while (fgets(line, sizeof line, f) != nullptr) {
      sscanf(line, "VmHWM: %ld", hwm);
      sscanf(line, "RssAnon: %ld", anon);
    }
    fclose(f);
  }

  long finish() {
    close(in);
    // Drain what is left so the child is not blocked writing.
    char tmp[4096];
    while (::read(out, tmp, sizeof tmp) > 0) {
    }
    int status = 0;
    rusage ru{};
    wait4(pid, &status, 0, &ru);
    close(out);
    return ru.ru_maxrss;  // KiB
  }
};

std::string call(long id) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hello " +
         std::to_string(id) + "\"}}}\n";
}

// Checks an answer: the right id and the echoed text.
void check(const std::string& line, long id) {
  const std::string want_id = "\"id\":" + std::to_string(id);
  const std::string want_text = "\"hello " + std::to_string(id) + "\"";
  const size_t at = line.find(want_id);
  const bool id_ok = at != std::string::npos && at + want_id.size() < line.size() &&
                     (line[at + want_id.size()] == ',' || line[at + want_id.size()] == '}');
  if (!id_ok || line.find(want_text) == std::string::npos) {
    fprintf(stderr, "unexpected answer to %ld: %s\n", id, line.substr(0, 300).c_str());
    exit(1);
  }
}

// Skips notifications (lines without "id" that carry a method) until an answer arrives.
std::string next_answer(Child& c) {
  for (;;) {
    std::string l = c.read_line();
    if (l.find("\"method\"") != std::string::npos && l.find("\"result\"") == std::string::npos &&
        l.find("\"error\"") == std::string::npos)
      continue;
    return l;
  }
}

}  // namespace

int main(int argc, char** argv) {
  long requests = 10000;
  long warmup = 500;
  std::string mode = "pipelined";
  int i = 1;
  for (; i < argc; ++i) {
    if (!strcmp(argv[i], "--requests") && i + 1 < argc) requests = atol(argv[++i]);
    else if (!strcmp(argv[i], "--warmup") && i + 1 < argc) warmup = atol(argv[++i]);
    else if (!strcmp(argv[i], "--mode") && i + 1 < argc) mode = argv[++i];
    else if (!strcmp(argv[i], "--")) { ++i; break; }
    else { fprintf(stderr, "usage: emcp_stdio_bench [--requests N] [--warmup N] [--mode pipelined|serial] -- CMD...\n"); return 2; }
  }
  if (i >= argc) return 2;
  signal(SIGPIPE, SIG_IGN);
  Child c;
  if (!c.start(argv + i)) return 1;
  c.write_all("{\"jsonrpc\":\"2.0\",\"id\":0,\"method\":\"initialize\",\"params\":{\"protocolVersion\":"
              "\"2025-11-25\",\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n");
  (void)next_answer(c);
  c.write_all("{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n");
  long id = 1;
  for (long k = 0; k < warmup; ++k, ++id) {
    c.write_all(call(id));
    check(next_answer(c), id);
  }

  std::vector<double> lat;
  double seconds = 0;
  if (mode == "serial") {
    lat.reserve(static_cast<size_t>(requests));
    const auto t0 = Clock::now();
    for (long k = 0; k < requests; ++k, ++id) {
      const auto a = Clock::now();
      c.write_all(call(id));
      check(next_answer(c), id);
      lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
    }
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  } else {
    std::string all;
    const long first = id;
    for (long k = 0; k < requests; ++k) all += call(first + k);
    fcntl(c.in, F_SETFL, fcntl(c.in, F_GETFL) | O_NONBLOCK);
    size_t off = 0;
    long answered = 0;
    const auto t0 = Clock::now();
    while (answered < requests) {
      // Answers already buffered first.
      while (answered < requests && c.buf.find('\n') != std::string::npos) {
        std::string l = c.read_line();
        if (l.find("\"method\"") != std::string::npos && l.find("\"result\"") == std::string::npos) continue;
        check(l, first + answered);
        ++answered;
      }
      if (answered >= requests) break;
      pollfd p[2] = {{c.out, POLLIN, 0}, {c.in, static_cast<short>(off < all.size() ? POLLOUT : 0), 0}};
      poll(p, 2, 10000);
      if (p[1].revents & POLLOUT) {
        const ssize_t k = ::write(c.in, all.data() + off, all.size() - off);
        if (k > 0) off += static_cast<size_t>(k);
      }
      if (p[0].revents & (POLLIN | POLLHUP)) {
        char tmp[65536];
        const ssize_t k = ::read(c.out, tmp, sizeof tmp);
        if (k <= 0) { fprintf(stderr, "the server closed its output\n"); return 1; }
        c.buf.append(tmp, static_cast<size_t>(k));
      }
    }
    seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    id = first + requests;
  }
  long hwm = 0, anon = 0;
  c.status_kb(&hwm, &anon);
  const long rss = c.finish();
  double p50 = 0, p99 = 0;
  if (!lat.empty()) {
    std::sort(lat.begin(), lat.end());
    p50 = lat[lat.size() / 2];
    p99 = lat[std::min(lat.size() - 1, lat.size() * 99 / 100)];
  }
  printf("mode=%s requests=%ld seconds=%.4f rps=%.0f p50_us=%.1f p99_us=%.1f maxrss_kb=%ld "
         "hwm_kb=%ld anon_kb=%ld\n",
         mode.c_str(), requests, seconds, static_cast<double>(requests) / seconds, p50, p99, rss,
         hwm, anon);
  return 0;
}
