// emcp-inbox-stress: the server's inbox (emcp/mcp/inbox.h) under load from real threads, served
// on stdio or HTTP (emcp/posix/serve.h) for tests/mcp/inbox_stress.test.mjs and its SDK client.
//
// Four producer threads (as sensor tasks would) post, each in turn, a log line carrying its
// next sequence number (logger "p<i>", data "<seq>") and a resource change (stress://p<i>); every
// 50th round a burst of 16 posts without pause fills the inbox, so that some posts are refused.
// A timer signal (SIGALRM at 2 kHz, standing in for an interrupt) posts log lines as logger
// "isr". A sequence number counts only posts the inbox took: the client must see 0, 1, 2...
// with no gap and no repeat, and as many as the server took. The tool `work` defers; a worker
// thread finishes it through the inbox (complete_text: "<n * 2>"). The tool `start` starts the
// producers and the signal (once the client has subscribed and set its log level); `stop` stops
// them and answers, once they have ended, with what each posted and had refused.
//
//   emcp-inbox-stress [--http PORT]
#include <pthread.h>
#include <signal.h>
#include <string.h>
#include <sys/time.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <deque>
#include <mutex>
#include <string>
#include <utility>
#include <thread>
#include <vector>

#include "emcp/mcp/inbox.h"
#include "emcp/mcp/server.h"
#include "emcp/posix/platform.h"
#include "emcp/posix/serve.h"
#include "inbox_stress.h"

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;
namespace serve = emcp::posix::serve;

namespace {

using stress::kLoggers;
using stress::kProducers;
constexpr ServerInfo kInfo{"emcp-inbox-stress", "1.0.0"};

Server g_server(kInfo, emcp::posix::platform());
StaticInbox<16, 64> g_inbox;

stress::Counts g_counts[kProducers + 1];  // the producers, then the "interrupt"
std::atomic<bool> g_stop{false};
std::vector<std::thread> g_threads;
bool g_started = false;  // owner only

// The timer signal goes to the owner's thread only (it stands in for an interrupt of one CPU):
// a process-directed signal may otherwise run its handler in two threads at once. A thread
// starts with its creator's mask: the owner blocks the signal while it creates one.
template <typename F>
std::thread spawn(F&& f) {
  sigset_t set, old;
  sigemptyset(&set);
  sigaddset(&set, SIGALRM);
  (void)pthread_sigmask(SIG_BLOCK, &set, &old);
  std::thread t(std::forward<F>(f));
  (void)pthread_sigmask(SIG_SETMASK, &old, nullptr);
  return t;
}

void producer(int who) {
  for (uint32_t round = 0; !g_stop.load(std::memory_order_relaxed); ++round) {
    stress::round(g_inbox, g_counts[who], who, round);
    std::this_thread::sleep_for(std::chrono::microseconds(1500 + 500 * who));
  }
}

// The "interrupt": once `stop` began it posts nothing. A SIGALRM the timer raised just before
// it was turned off may still be pending, and run on the owner after the reaper's final
// completion was posted (that post then not run when the final answer counts them: seen once
// in a clean-clone run). The reaper stores g_stop, then waits until no handler runs; a handler
// counts itself in, then reads g_stop: with both sequentially consistent, a handler the reaper
// did not wait for sees g_stop set.
std::atomic<int> g_in_alarm{0};
void on_alarm(int) {
  g_in_alarm.fetch_add(1);
  if (!g_stop.load()) stress::post_log(g_inbox, g_counts[kProducers], kLoggers[kProducers]);
  g_in_alarm.fetch_sub(1);
}

// ---- Deferred calls finished by a worker thread ------------------------------------------------

struct Job {
  Pending p;
  int64_t n;
};
std::mutex g_jobs_mutex;
std::condition_variable g_jobs_cv;
std::deque<Job> g_jobs;
std::atomic<uint32_t> g_completions_refused{0};

void worker() {
  for (;;) {
    Job job;
    {
      std::unique_lock<std::mutex> lock(g_jobs_mutex);
      g_jobs_cv.wait(lock, [] { return !g_jobs.empty() || g_stop.load(); });
      if (g_jobs.empty()) return;
      job = g_jobs.front();
      g_jobs.pop_front();
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));  // the slow part of the work
    char text[24];
    const size_t n = stress::format(static_cast<uint32_t>(job.n * 2), text);
    // A full inbox: the worker tries again (the caller sees the refusal and decides).
    while (g_inbox.complete_text(job.p, StrView(text, n)) == Status::kNoSpace) {
      g_completions_refused.fetch_add(1, std::memory_order_relaxed);
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
}

void work(ToolCall& call) {
  const Job job{call.defer(), call.integer("n")};
  if (!job.p.valid()) return;  // answered with an error (all deferred slots taken)
  {
    std::lock_guard<std::mutex> lock(g_jobs_mutex);
    g_jobs.push_back(job);
  }
  g_jobs_cv.notify_one();
}

// ---- start and stop ------------------------------------------------------------------------------

std::thread g_reaper;

void start_threads() {
  for (int i = 0; i < kProducers; ++i) g_threads.push_back(spawn([i] { producer(i); }));
  struct sigaction sa = {};
  sa.sa_handler = &on_alarm;
  sa.sa_flags = SA_RESTART;
  sigemptyset(&sa.sa_mask);
  (void)sigaction(SIGALRM, &sa, nullptr);
  itimerval every{{0, 1000}, {0, 1000}};  // 1 kHz
  (void)setitimer(ITIMER_REAL, &every, nullptr);
}

void stop_threads() {
  itimerval off{{0, 0}, {0, 0}};
  (void)setitimer(ITIMER_REAL, &off, nullptr);
  g_stop.store(true);
  while (g_in_alarm.load() != 0) std::this_thread::yield();
  g_jobs_cv.notify_all();
  for (std::thread& t : g_threads)
    if (t.joinable()) t.join();
}

void start(ToolCall& call) {
  if (g_started) return call.fail("started already");
  g_started = true;
  start_threads();
  call.text("started");
}

// What each producer posted and had refused, the inbox's counters and the notifications the
// server could not send: on the owner, after every producer ended (their posts ran before).
void write_final(ToolCall& call, void*) {
  static stress::Out out;
  stress::write_counts(out, g_counts, g_inbox.stats(), g_completions_refused.load(), call.server().notifications_dropped());
  out.put("}");
  call.text(StrView(out.buf, out.n));
}

void stop(ToolCall& call) {
  if (!g_started || g_reaper.joinable()) return call.fail("not running");
  const Pending p = call.defer();
  if (!p.valid()) return;
  // Joining the producers is the reaper's job: the owner never blocks.
  g_reaper = spawn([p] {
    stop_threads();
    while (g_inbox.complete(p, &write_final, nullptr) == Status::kNoSpace)
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
  });
}

void read_stream(ResourceRead& r) { r.text("a producer's stream"); }

const Param kWorkParams[] = {Param::integer("n", "Any number").required()};
const Tool kTools[] = {
    Tool::make("work", &work).describe("Answers n * 2 from a worker thread").with_params(kWorkParams),
    Tool::make("start", &start).describe("Starts the producers and the timer signal"),
    Tool::make("stop", &stop).describe("Stops the producers; answers with what each posted"),
};
const Resource kResources[] = {
    Resource::make("stress://p0", "p0", &read_stream), Resource::make("stress://p1", "p1", &read_stream),
    Resource::make("stress://p2", "p2", &read_stream), Resource::make("stress://p3", "p3", &read_stream)};

}  // namespace

int main(int argc, char** argv) {
  serve::HttpConfig http;
  http.program = "emcp-inbox-stress";
  for (int i = 1; i < argc; ++i) {
    const int r = serve::parse_http_option(argc, argv, &i, &http);
    if (r <= 0) {
      if (r == 0) serve::say({"usage: emcp-inbox-stress [--http PORT]\n"});
      return 2;
    }
  }
  if (!serve::check_http_options(http)) return 2;
  g_server.set_tools(kTools);
  g_server.set_resources(kResources);
  g_server.set_inbox(g_inbox);
  g_threads.push_back(spawn(&worker));  // the producers start with the tool `start`
  const int rc = http.enabled ? serve::http(g_server, http, serve::Loop()) : serve::stdio(g_server, "emcp-inbox-stress", serve::Loop());
  stop_threads();
  if (g_reaper.joinable()) g_reaper.join();
  return rc;
}
