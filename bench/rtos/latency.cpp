// emcp_inbox_latency: how long a post to the server's inbox (emcp/mcp/inbox.h) from another
// thread takes to leave the owner as the first byte of its notification, on Linux, and the same
// hand-off without emcp as peers, for bench/rtos/run.sh (bench/README.md, section 4).
//
//   emcp_inbox_latency [--modes idle,busy,eventfd,condvar] [--posts N] [--seconds S] [--gap-us G]
//                      [--runs R]
//
// Each mode runs in a process of its own (forked): a producer thread posts N log lines, one
// every G microseconds (at most S seconds), each carrying its sequence number; before each it
// takes the time (CLOCK_MONOTONIC). The owner writes the notification to a pipe; the moment it
// hands the notification's first byte to write(2) is taken inside the process (this program is
// linked with --wrap=write: every write(2) of the library goes through __wrap_write below, which
// takes the time and finds the notification's sequence number in the bytes before it writes
// them). A reader thread on the other end of the pipe takes the time the read(2) that brought
// that first byte returned: what a client process would see, one more wake-up later.
//
//   idle     emcp: posix::serve::stdio (the library's loop, unchanged) on pipes in place of
//            stdin and stdout; Inbox::log from the producer; the owner asleep in poll(2), woken
//            by the platform's eventfd (posix::wake)
//   busy     the same while a client thread keeps the owner's input full of tools/call echo
//            requests (pipelined, as fast as the pipe takes them): the post waits for the
//            round of input the owner is in (up to 1 KiB of requests, answered) and its poll()
//   eventfd  peer without emcp: the same wake (an eventfd the owner polls), the producer
//            publishes its number with an atomic store, the owner writes the same notification
//            bytes (formatted with snprintf): the floor of this hand-off on this machine
//   condvar  peer without emcp: a std::deque under a std::mutex, the owner waiting on a
//            std::condition_variable, writing the same bytes: the textbook hand-off
//
// Prints one line per mode (key=value; nanoseconds): with --runs R, each mode runs R times, the
// modes in turn, and the run with the lowest p99 is printed (the quietest; the machine is shared). Correctness is checked in every mode, and
// any failure is the exit status (1): every post the inbox took is written once, in order, with
// its own number, and read by the other end in order; no write precedes its post; in busy mode
// every request is answered, in order, with its own echo. Timings are never asserted (the
// ctest, bench_inbox_latency, runs a few hundred posts per mode for the checks alone).
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/eventfd.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "emcp/mcp/inbox.h"
#include "emcp/mcp/server.h"
#include "emcp/posix/platform.h"
#include "emcp/posix/serve.h"

namespace {

int64_t now_ns() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<int64_t>(ts.tv_sec) * 1000000000 + ts.tv_nsec;
}

struct Options {
  long posts = 5000;
  double seconds = 20;
  long gap_us = 200;
  std::vector<std::string> modes = {"idle", "busy", "eventfd", "condvar"};
};
Options g_opt;

// ---- What one mode measures (each mode is a process of its own) ------------------------------

std::vector<int64_t> g_post, g_write, g_read;  // per sequence number: the three moments
std::atomic<int> g_out_fd{-1};                 // the owner's output (the pipe's write end)
std::atomic<uint32_t> g_accepted{0};           // posts the owner was handed
std::atomic<uint32_t> g_written{0};            // notifications handed to write(2), in order
std::atomic<bool> g_producer_done{false};
// The producer's end, for a thread that waits for it blocked (not polling: a thread waking every
// millisecond would keep the CPUs out of their idle state and make every wake-up cheaper).
std::mutex g_done_mutex;
std::condition_variable g_done_cv;
std::atomic<bool> g_go{false};                 // the session is ready: the producer may post
std::vector<std::string> g_errors;             // the checks that failed (owner and reader add)
std::mutex g_errors_mutex;

void fail(const std::string& what) {
  std::lock_guard<std::mutex> lock(g_errors_mutex);
  if (g_errors.size() < 20) g_errors.push_back(what);
}

// The notification every mode writes for post `seq`: what emcp's Server::log writes for
// Inbox::log(kInfo, "<seq>", "bench") (the peers write these bytes themselves).
int notification(char* out, size_t cap, uint32_t seq) {
  return snprintf(out, cap,
                  "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\",\"params\":{\"level\":\"info\","
                  "\"logger\":\"bench\",\"data\":\"%u\"}}\n",
                  seq);
}
constexpr char kHead[] = "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/message\"";

// The sequence number of a notification starting at `p` (n bytes), or -1 when p is not one.
long notification_seq(const char* p, size_t n) {
  if (n < sizeof kHead - 1 || memcmp(p, kHead, sizeof kHead - 1) != 0) return -1;
  static const char kData[] = "\"data\":\"";
  const char* end = p + n;
  const char* d = static_cast<const char*>(memmem(p, n, kData, sizeof kData - 1));
  if (d == nullptr) return -2;
  d += sizeof kData - 1;
  long v = 0;
  const char* q = d;
  while (q < end && *q >= '0' && *q <= '9') v = v * 10 + (*q++ - '0');
  return q == d || q == end || *q != '"' ? -2 : v;
}

// The owner hands bytes to write(2): a notification's first byte is in them when they begin
// with one (the stdio transport writes each message from its start, in pieces of its 256-byte
// buffer; these notifications fit in one).
void on_write(const char* p, size_t n, int64_t t) {
  const long seq = notification_seq(p, n);
  if (seq == -1) return;
  const uint32_t want = g_written.load(std::memory_order_relaxed);
  if (seq < 0 || static_cast<uint32_t>(seq) != want || want >= g_post.size()) {
    fail("write: notification " + std::to_string(seq) + " where " + std::to_string(want) + " was due");
    return;
  }
  g_write[want] = t;
  g_written.store(want + 1, std::memory_order_release);
}

}  // namespace

// Every write(2) of this program and of the emcp libraries linked into it (ld --wrap=write).
extern "C" ssize_t __real_write(int fd, const void* buf, size_t n);
extern "C" ssize_t __wrap_write(int fd, const void* buf, size_t n) {
  if (fd >= 0 && fd == g_out_fd.load(std::memory_order_relaxed)) on_write(static_cast<const char*>(buf), n, now_ns());
  return __real_write(fd, buf, n);
}

namespace {

// ---- The other end of the owner's output -------------------------------------------------------

struct ReaderCounts {
  uint32_t notifications = 0;  // read, in order
  uint32_t answers = 0;        // answers to echo requests, each checked
  std::atomic<uint32_t> setup{0};  // answers to initialize and logging/setLevel
};

// Reads the owner's output to its end: the time of the read(2) that brought each notification's
// first byte; each answer checked (ids 1 and 2: the session's set-up, then echo calls from 3).
void reader(int fd, ReaderCounts* c) {
  std::string line;
  int64_t line_t = 0;
  std::vector<char> buf(1 << 16);
  uint32_t next_echo = 3;
  for (;;) {
    const ssize_t k = read(fd, buf.data(), buf.size());
    if (k <= 0) break;
    const int64_t t = now_ns();
    for (ssize_t i = 0; i < k; ++i) {
      if (line.empty()) line_t = t;
      if (buf[static_cast<size_t>(i)] != '\n') {
        line.push_back(buf[static_cast<size_t>(i)]);
        continue;
      }
      const long seq = notification_seq(line.data(), line.size());
      if (seq >= 0) {
        char want[160];
        const int n = notification(want, sizeof want, static_cast<uint32_t>(seq));
        if (static_cast<uint32_t>(seq) != c->notifications || c->notifications >= g_post.size())
          fail("read: notification " + std::to_string(seq) + " where " + std::to_string(c->notifications) + " was due");
        else if (line + "\n" != std::string(want, static_cast<size_t>(n)))
          fail("read: notification " + std::to_string(seq) + " is not the bytes the peers write: " + line);
        else
          g_read[c->notifications++] = line_t;
      } else if (seq == -2) {
        fail("read: a notification without its number: " + line.substr(0, 200));
      } else if (line.find("\"id\":1,") != std::string::npos || line.find("\"id\":2,") != std::string::npos) {
        if (line.find("\"result\"") == std::string::npos) fail("set-up refused: " + line.substr(0, 200));
        c->setup.fetch_add(1);
      } else {
        const std::string id = "\"id\":" + std::to_string(next_echo) + ",";
        const std::string text = "\"hello " + std::to_string(next_echo) + "\"";
        if (line.find(id) == std::string::npos || line.find(text) == std::string::npos)
          fail("read: not the echo of request " + std::to_string(next_echo) + ": " + line.substr(0, 200));
        ++next_echo;
        ++c->answers;
      }
      line.clear();
    }
  }
}

// ---- The producer ----------------------------------------------------------------------------------

// Posts g_opt.posts times (at most g_opt.seconds), one every g_opt.gap_us: `post(seq)` after the
// time is taken; false when refused (counted, the number is posted again next time). Then waits
// (bounded) for the owner to have written them all.
template <typename Post>
void produce(Post post, uint32_t* refused) {
  while (!g_go.load()) std::this_thread::sleep_for(std::chrono::microseconds(100));
  const int64_t gap = g_opt.gap_us * 1000;
  const int64_t deadline = now_ns() + static_cast<int64_t>(g_opt.seconds * 1e9);
  int64_t next = now_ns();
  uint32_t seq = 0;
  while (seq < g_post.size() && now_ns() < deadline) {
    next = std::max(next + gap, now_ns());
    const timespec ts{static_cast<time_t>(next / 1000000000), static_cast<long>(next % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, nullptr) == EINTR) {
    }
    g_post[seq] = now_ns();
    if (post(seq)) {
      g_accepted.store(++seq, std::memory_order_release);
    } else {
      ++*refused;
    }
  }
  const int64_t wait_until = now_ns() + 10 * 1000000000LL;
  while (g_written.load(std::memory_order_acquire) < seq && now_ns() < wait_until)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  {
    std::lock_guard<std::mutex> lock(g_done_mutex);
    g_producer_done.store(true);
  }
  g_done_cv.notify_all();
}

// ---- emcp: the library's stdio loop, the inbox ----------------------------------------------------------------

using namespace emcp::mcp;
constexpr ServerInfo kInfo{"emcp_inbox_latency", "1.0.0"};
Server g_server(kInfo, emcp::posix::platform());
StaticInbox<16, 64> g_inbox;

void echo(ToolCall& call) { call.text(call.str("text")); }
const Param kEchoParams[] = {Param::string("text", "Text to send back").required()};
const Tool kTools[] = {Tool::make("echo", &echo).describe("Answers with its text").with_params(kEchoParams)};

bool write_all(int fd, const std::string& s) {
  size_t off = 0;
  while (off < s.size()) {
    const ssize_t k = write(fd, s.data() + off, s.size() - off);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return false;
    off += static_cast<size_t>(k);
  }
  return true;
}

std::string echo_call(uint32_t id) {
  return "{\"jsonrpc\":\"2.0\",\"id\":" + std::to_string(id) +
         ",\"method\":\"tools/call\",\"params\":{\"name\":\"echo\",\"arguments\":{\"text\":\"hello " +
         std::to_string(id) + "\"}}}\n";
}

struct Result {
  uint32_t refused = 0;
  uint32_t requests = 0;  // busy: echo calls answered while the producer posted
  double busy_seconds = 0;
  ReaderCounts counts;
};

// The client: sets the session up (initialize, notifications/initialized, logging/setLevel),
// lets the producer start, keeps the owner's input full of echo requests while it posts (busy),
// then ends the input: the library's loop returns at its end.
void client(int in, bool busy, Result* r) {
  write_all(in,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{\"protocolVersion\":\"2025-11-25\","
            "\"capabilities\":{},\"clientInfo\":{\"name\":\"bench\",\"version\":\"1\"}}}\n"
            "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}\n"
            "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"logging/setLevel\",\"params\":{\"level\":\"debug\"}}\n");
  const int64_t setup_until = now_ns() + 10 * 1000000000LL;
  while (r->counts.setup.load() < 2 && now_ns() < setup_until) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (r->counts.setup.load() < 2) fail("the session was not set up within 10 s");
  g_go.store(true);
  uint32_t id = 3;
  const int64_t t0 = now_ns();
  if (busy) {
    std::string batch;
    while (!g_producer_done.load()) {
      batch.clear();
      for (int i = 0; i < 16; ++i) batch += echo_call(id++);
      if (!write_all(in, batch)) break;
    }
  } else {
    std::unique_lock<std::mutex> lock(g_done_mutex);
    g_done_cv.wait(lock, [] { return g_producer_done.load(); });
  }
  r->requests = id - 3;
  r->busy_seconds = static_cast<double>(now_ns() - t0) / 1e9;
  close(in);
}

int run_emcp(bool busy, Result* r) {
  int in[2], out[2];
  if (pipe2(in, O_CLOEXEC) != 0 || pipe2(out, O_CLOEXEC) != 0) return 1;
  // The library's loop serves fd 0 and fd 1: the pipes take their places.
  if (dup2(in[0], 0) < 0 || dup2(out[1], 1) < 0) return 1;
  close(in[0]);
  close(out[1]);
  g_out_fd.store(1);
  g_server.set_tools(kTools);
  g_server.set_inbox(g_inbox);
  std::thread rd(reader, out[0], &r->counts);
  std::thread cl(client, in[1], busy, r);
  std::thread pr([r] {
    produce([](uint32_t seq) {
      char text[12];
      const int n = snprintf(text, sizeof text, "%u", seq);
      return g_inbox.log(LogLevel::kInfo, emcp::StrView(text, static_cast<size_t>(n)), "bench") == emcp::Status::kOk;
    }, &r->refused);
  });
  const int rc = emcp::posix::serve::stdio(g_server, "emcp_inbox_latency", emcp::posix::serve::Loop());
  g_out_fd.store(-1);
  close(1);  // the reader's end of input
  pr.join();
  cl.join();
  rd.join();
  if (rc != 0) fail("the stdio loop ended with " + std::to_string(rc));
  const InboxStats st = g_inbox.stats();
  if (st.posted != g_accepted.load() || st.run != st.posted)
    fail("inbox: posted " + std::to_string(st.posted) + ", run " + std::to_string(st.run) + ", the producer had " +
         std::to_string(g_accepted.load()) + " taken");
  if (busy && r->counts.answers != r->requests)
    fail("busy: " + std::to_string(r->requests) + " requests, " + std::to_string(r->counts.answers) + " answers");
  return 0;
}

// ---- Peers: the same hand-off without emcp ----------------------------------------------------------

std::atomic<uint32_t> g_published{0};

// The owner's part of both peers: writes notifications up to `upto` (exclusive) from `*done`.
void write_notifications(int fd, uint32_t* done, uint32_t upto) {
  char line[160];
  for (; *done < upto; ++*done) {
    const int n = notification(line, sizeof line, *done);
    if (write(fd, line, static_cast<size_t>(n)) != n) fail("peer: a short write");
  }
}

int run_eventfd(Result* r) {
  int out[2];
  const int efd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
  if (efd < 0 || pipe2(out, O_CLOEXEC) != 0) return 1;
  g_out_fd.store(out[1]);
  std::thread rd(reader, out[0], &r->counts);
  std::thread owner([efd, out] {
    uint32_t done = 0;
    for (;;) {
      pollfd p{efd, POLLIN, 0};
      (void)poll(&p, 1, -1);
      uint64_t v;
      if (read(efd, &v, sizeof v) < 0 && errno != EAGAIN) fail("peer: eventfd read");
      write_notifications(out[1], &done, g_published.load(std::memory_order_acquire));
      if (g_producer_done.load() && done == g_published.load()) return;
    }
  });
  g_go.store(true);
  produce([efd](uint32_t seq) {
    g_published.store(seq + 1, std::memory_order_release);
    const uint64_t one = 1;
    return write(efd, &one, sizeof one) == sizeof one;
  }, &r->refused);
  const uint64_t one = 1;
  (void)!write(efd, &one, sizeof one);  // the owner sees the end
  owner.join();
  g_out_fd.store(-1);
  close(out[1]);
  rd.join();
  close(efd);
  return 0;
}

int run_condvar(Result* r) {
  int out[2];
  if (pipe2(out, O_CLOEXEC) != 0) return 1;
  g_out_fd.store(out[1]);
  std::mutex m;
  std::condition_variable cv;
  std::deque<uint32_t> q;
  bool stop = false;
  std::thread rd(reader, out[0], &r->counts);
  std::thread owner([&] {
    uint32_t done = 0;
    std::unique_lock<std::mutex> lock(m);
    for (;;) {
      cv.wait(lock, [&] { return !q.empty() || stop; });
      if (q.empty()) return;
      const uint32_t upto = q.back() + 1;
      q.clear();
      lock.unlock();
      write_notifications(out[1], &done, upto);
      lock.lock();
    }
  });
  g_go.store(true);
  produce([&](uint32_t seq) {
    {
      std::lock_guard<std::mutex> lock(m);
      q.push_back(seq);
    }
    cv.notify_one();
    return true;
  }, &r->refused);
  {
    std::lock_guard<std::mutex> lock(m);
    stop = true;
  }
  cv.notify_one();
  owner.join();
  g_out_fd.store(-1);
  close(out[1]);
  rd.join();
  return 0;
}

// ---- Figures ------------------------------------------------------------------------------------

struct Pct {
  int64_t min = 0, p50 = 0, p99 = 0, max = 0;
};
Pct percentiles(std::vector<int64_t> v) {
  Pct p;
  if (v.empty()) return p;
  std::sort(v.begin(), v.end());
  p.min = v.front();
  p.p50 = v[v.size() / 2];
  p.p99 = v[std::min(v.size() - 1, v.size() * 99 / 100)];
  p.max = v.back();
  return p;
}

// One mode, in this (forked) process: its line on `result_fd`; 0, or 1 when a check failed.
int run_mode(const std::string& mode, int result_fd) {
  g_post.assign(static_cast<size_t>(g_opt.posts), 0);
  g_write.assign(g_post.size(), 0);
  g_read.assign(g_post.size(), 0);
  Result r;
  const int64_t t0 = now_ns();
  int rc = 1;
  if (mode == "idle" || mode == "busy") rc = run_emcp(mode == "busy", &r);
  else if (mode == "eventfd") rc = run_eventfd(&r);
  else if (mode == "condvar") rc = run_condvar(&r);
  const double seconds = static_cast<double>(now_ns() - t0) / 1e9;
  if (rc != 0) fail("could not set up (pipes, eventfd)");
  const uint32_t n = g_accepted.load();
  if (g_written.load() != n) fail(std::to_string(n) + " posts taken, " + std::to_string(g_written.load()) + " written");
  if (r.counts.notifications != n)
    fail(std::to_string(n) + " posts taken, " + std::to_string(r.counts.notifications) + " read");
  std::vector<int64_t> to_write, to_read;
  for (uint32_t i = 0; i < n && i < g_written.load() && i < r.counts.notifications; ++i) {
    if (g_write[i] < g_post[i] || g_read[i] < g_write[i]) {
      fail("notification " + std::to_string(i) + ": posted, written and read out of order in time");
      break;
    }
    to_write.push_back(g_write[i] - g_post[i]);
    to_read.push_back(g_read[i] - g_post[i]);
  }
  if (n == 0) fail("nothing was posted");
  const Pct w = percentiles(to_write), rd = percentiles(to_read);
  dprintf(result_fd,
          "mode=%s posts=%u refused=%u min_ns=%lld p50_ns=%lld p99_ns=%lld max_ns=%lld read_p50_ns=%lld "
          "read_p99_ns=%lld read_max_ns=%lld requests=%u rps=%.0f seconds=%.2f\n",
          mode.c_str(), n, r.refused, static_cast<long long>(w.min), static_cast<long long>(w.p50),
          static_cast<long long>(w.p99), static_cast<long long>(w.max), static_cast<long long>(rd.p50),
          static_cast<long long>(rd.p99), static_cast<long long>(rd.max), r.counts.answers,
          r.busy_seconds > 0 ? r.counts.answers / r.busy_seconds : 0.0, seconds);
  for (const std::string& e : g_errors) dprintf(2, "emcp_inbox_latency: %s: MISMATCH: %s\n", mode.c_str(), e.c_str());
  return g_errors.empty() ? 0 : 1;
}

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  size_t at = 0;
  while (at <= s.size()) {
    const size_t c = s.find(',', at);
    out.push_back(s.substr(at, c == std::string::npos ? std::string::npos : c - at));
    if (c == std::string::npos) break;
    at = c + 1;
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  int runs = 1;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    const char* v = i + 1 < argc ? argv[i + 1] : nullptr;
    if (a == "--modes" && v) g_opt.modes = split(v), ++i;
    else if (a == "--posts" && v) g_opt.posts = atol(v), ++i;
    else if (a == "--seconds" && v) g_opt.seconds = atof(v), ++i;
    else if (a == "--gap-us" && v) g_opt.gap_us = atol(v), ++i;
    else if (a == "--runs" && v) runs = atoi(v), ++i;
    else {
      fprintf(stderr, "usage: emcp_inbox_latency [--modes idle,busy,eventfd,condvar] [--posts N] [--seconds S] "
                      "[--gap-us G] [--runs R]\n");
      return 2;
    }
  }
  for (const std::string& m : g_opt.modes)
    if (m != "idle" && m != "busy" && m != "eventfd" && m != "condvar") {
      fprintf(stderr, "emcp_inbox_latency: no mode %s\n", m.c_str());
      return 2;
    }
  if (g_opt.posts < 1 || g_opt.gap_us < 0 || g_opt.seconds <= 0 || runs < 1) return 2;
  signal(SIGPIPE, SIG_IGN);
  // Each mode R times, the modes in turn (so that what else the machine does spreads over all);
  // the run with the lowest p99 of each mode is printed (the quietest: this machine is shared).
  std::vector<std::string> best(g_opt.modes.size());
  std::vector<long long> best_p99(g_opt.modes.size(), -1);
  int failed = 0;
  for (int run = 0; run < runs; ++run) {
    for (size_t k = 0; k < g_opt.modes.size(); ++k) {
      const std::string& m = g_opt.modes[k];
      int p[2];
      if (pipe2(p, O_CLOEXEC) != 0) return 1;
      const pid_t pid = fork();
      if (pid < 0) return 1;
      if (pid == 0) {
        close(p[0]);
        alarm(static_cast<unsigned>(g_opt.seconds) + 60);  // a hang ends the run, never the machine's
        _exit(run_mode(m, p[1]));
      }
      close(p[1]);
      std::string line;
      char buf[512];
      ssize_t n;
      while ((n = read(p[0], buf, sizeof buf)) > 0) line.append(buf, static_cast<size_t>(n));
      close(p[0]);
      int status = 0;
      waitpid(pid, &status, 0);
      if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        fprintf(stderr, "emcp_inbox_latency: mode %s failed (status %d)\n", m.c_str(), status);
        failed = 1;
        continue;
      }
      const size_t at = line.find(" p99_ns=");
      const long long p99 = at == std::string::npos ? -1 : atoll(line.c_str() + at + 8);
      if (p99 >= 0 && (best_p99[k] < 0 || p99 < best_p99[k])) {
        best_p99[k] = p99;
        best[k] = line;
      }
    }
  }
  for (size_t k = 0; k < best.size(); ++k)
    if (!best[k].empty()) printf("%.*s runs=%d\n", static_cast<int>(best[k].size() - 1), best[k].c_str(), runs);
  if (!failed)
    fprintf(stderr, "emcp_inbox_latency: every post written once, in order, and read in order (the same bytes in "
                    "every mode); every request answered\n");
  return failed;
}
