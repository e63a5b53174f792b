// Server behaviour that needs more than a wire fixture: object lifetimes, handles, and calls
// into the server from callbacks. Each test pins a bug found in review. Every test runs the
// server inside a NoHeapScope, from its construction to its destruction; what the server
// writes goes to a FixedText, and inputs that need std::string are built before the scope.
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <gtest/gtest.h>

#include <new>
#include <string>
#include <string_view>

#include "emcp/mcp/server.h"
#include "emcp/transport/line.h"
#include "heap_guard.h"
#include "mcp_fixture_app.h"
#include "no_heap_util.h"

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;
using namespace std::string_view_literals;

namespace {

// What the server writes; take() empties it (its view is valid until the next write).
using Out = emcp_test::FixedText<1 << 16>;

// Each feed has a scope of its own too, so that none can escape one.
void feed(emcp::transport::LineTransport& t, std::string_view s) {
  emcp_test::NoHeapScope no_heap;
  (void)t.feed(s.data(), s.size());
}

constexpr std::string_view kInit =
    R"({"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{"sampling":{}},"clientInfo":{"name":"t","version":"1"}}})" "\n"
    R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n";

// A server with the fixture application and a stdio session past initialize.
struct Initialized {
  Out out;
  Server server{fixture::info(), fixture::platform()};
  emcp::transport::StaticLineTransport<> t{server, &Out::write, &out};
  Initialized() {
    fixture::install(server);
    feed(t, kInit);
    (void)out.take();
  }
};

// A tool whose deferred calls the test completes in a chain.
Server* g_server;
Pending g_pending[3];
int g_count = 0;
void defer_tool(ToolCall& c) { g_pending[g_count++] = c.defer(); }
// B defers again: it takes the first free slot, which is the one A just left. A's answer must
// still carry A's id (the slot's copy of it is overwritten by B's).
void finish_b(ToolCall& c, void*) { g_pending[2] = c.defer(); }
void finish_b_really(ToolCall& c, void*) { c.text("B done"); }
void finish_a(ToolCall& c, void*) {
  (void)g_server->complete(g_pending[1], &finish_b, nullptr);
  c.text("A done");
}
constexpr Tool kDeferTools[] = {Tool::make("defer", &defer_tool)};

}  // namespace

TEST(McpServer, CompleteKeepsItsIdWhenTheSlotIsReusedMeanwhile) {
  emcp_test::NoHeapScope no_heap;
  Out out;
  Server server(fixture::info(), fixture::platform());
  g_server = &server;
  g_count = 0;
  server.set_tools(kDeferTools);
  emcp::transport::StaticLineTransport<> t(server, &Out::write, &out);
  feed(t, kInit);
  (void)out.take();
  feed(t, R"({"jsonrpc":"2.0","id":"aaa","method":"tools/call","params":{"name":"defer"}})" "\n"
          R"({"jsonrpc":"2.0","id":"bbb","method":"tools/call","params":{"name":"defer"}})" "\n");
  EXPECT_EQ(out.take(), ""sv);
  // complete(A) runs finish_a, which completes B, which defers again into A's freed slot.
  EXPECT_EQ(server.complete(g_pending[0], &finish_a, nullptr), Status::kOk);
  EXPECT_EQ(out.take(), R"({"jsonrpc":"2.0","id":"aaa","result":{"content":[{"type":"text","text":"A done"}]}})" "\n"sv);
  EXPECT_EQ(g_pending[2].slot, g_pending[0].slot);  // the slot was indeed reused
  EXPECT_EQ(server.complete(g_pending[2], &finish_b_really, nullptr), Status::kOk);
  EXPECT_EQ(out.take(), R"({"jsonrpc":"2.0","id":"bbb","result":{"content":[{"type":"text","text":"B done"}]}})" "\n"sv);
  EXPECT_EQ(server.complete(g_pending[1], &finish_b, nullptr), Status::kNotFound);
  // The handles are spent: completing again answers nothing.
  EXPECT_EQ(server.complete(g_pending[0], &finish_a, nullptr), Status::kNotFound);
}

TEST(McpServer, TooLongLineAnswersWithoutIdBeforeInitialize) {
  const std::string line = std::string(EMCP_MAX_MESSAGE_LEN + 10, ' ') + "x\n";
  emcp_test::NoHeapScope no_heap;
  Out out;
  Server server(fixture::info(), fixture::platform());
  fixture::install(server);
  emcp::transport::StaticLineTransport<> t(server, &Out::write, &out);
  feed(t, line);
  EXPECT_EQ(out.take(),
            R"x({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: message longer than the line limit (EMCP_MAX_MESSAGE_LEN)"}})x" "\n"sv);
}

namespace {
struct Answer {
  int calls = 0;
  Response::Outcome outcome = Response::Outcome::kResult;
  int64_t code = 0;
  emcp_test::FixedText<256> message;
  const Session* session = nullptr;
};
void on_answer(const Response& r, void* ctx) {
  auto* a = static_cast<Answer*>(ctx);
  ++a->calls;
  a->outcome = r.outcome;
  a->code = r.code;
  a->session = r.session;
  a->message.assign(r.message.data(), r.message.size());
}
// The id of the request the server just wrote ({"jsonrpc":"2.0","id":N,"method":...}).
std::string_view request_id(std::string_view out) {
  const size_t at = out.find(R"("id":)");
  return at == std::string_view::npos ? std::string_view() : out.substr(at + 5, out.find(',', at) - at - 5);
}
// A line put together inside a scope (the longest: a response beyond the line limit).
emcp_test::FixedText<EMCP_MAX_MESSAGE_LEN + 256> g_line;
}  // namespace

TEST(McpServer, ResponsesTooBigToKeepEndTheirRequestAtOnce) {
  // A client's answer beyond the arena, beyond a reader limit or beyond the line limit cannot
  // be kept; the request it answers ends at once with the reason (not by its timeout), and
  // the client gets nothing back (a response is never answered).
  struct Case {
    std::string body;  // the response's "result" member and what follows it
    const char* why;
  };
  const Case cases[] = {
      {R"("result":{"t":")" + std::string(EMCP_ARENA_SIZE, 'a') + R"("}})",
       "response too large for the arena (EMCP_ARENA_SIZE)"},
      {R"("result":{"t":)" + std::string(EMCP_JSON_MAX_DEPTH + 2, '[') + std::string(EMCP_JSON_MAX_DEPTH + 2, ']') + "}}",
       "response beyond a JSON reader limit"},
      {R"("result":{"t":")" + std::string(EMCP_MAX_MESSAGE_LEN, 'a') + R"("}})",
       "response longer than the line limit (EMCP_MAX_MESSAGE_LEN)"},
  };
  const std::string too_long = std::string(EMCP_MAX_MESSAGE_LEN, 'a');
  emcp_test::NoHeapScope no_heap;
  Answer answers[4];  // before the server: a request still pending at the end calls back (kClosed)
  Initialized rig;
  Out& out = rig.out;
  Server& server = rig.server;
  emcp::transport::LineTransport& t = rig.t;
  for (size_t i = 0; i < 3; ++i) {
    const Case& c = cases[i];
    Answer& a = answers[i];
    ASSERT_EQ(server.ping(t.session(), &on_answer, &a), Status::kOk);
    const std::string_view id = request_id(out.take());
    ASSERT_FALSE(id.empty());
    g_line.clear();
    g_line.append(R"({"jsonrpc":"2.0","id":)");
    g_line.append(id);
    g_line.append(",");
    g_line.append(c.body);
    g_line.append("\n");
    feed(t, g_line.view());
    EXPECT_EQ(a.calls, 1) << c.why;
    EXPECT_EQ(a.outcome, Response::Outcome::kError) << c.why;
    EXPECT_EQ(a.code, -32603) << c.why;
    EXPECT_EQ(a.message.view(), std::string_view(c.why));
    EXPECT_EQ(out.take(), ""sv) << c.why;
  }
  // The session goes on: a request is answered, and a response whose id came after the line
  // limit (unknown) is refused as a line too long: the request it answers ends by its timeout.
  feed(t, R"({"jsonrpc":"2.0","id":5,"method":"ping"})" "\n");
  EXPECT_EQ(out.take(), R"({"jsonrpc":"2.0","id":5,"result":{}})" "\n"sv);
  Answer& late = answers[3];
  ASSERT_EQ(server.ping(t.session(), &on_answer, &late), Status::kOk);
  const std::string_view id = request_id(out.take());
  g_line.clear();
  g_line.append(R"({"jsonrpc":"2.0","result":{"t":")");
  g_line.append(too_long);
  g_line.append(R"("},"id":)");
  g_line.append(id);
  g_line.append("}\n");
  feed(t, g_line.view());
  EXPECT_EQ(late.calls, 0);
  EXPECT_NE(out.take().find("line limit"), std::string_view::npos);
}

TEST(McpServer, ALineThatLostBytesIsAnsweredAsSuch) {
  // A UART's receive buffer overflowed inside a line (LineTransport::input_lost()): the line
  // is answered with -32600 and data.inputLost, with the request's id when it was read before
  // the gap; what the gap left of it is never parsed; the next line is served.
  emcp_test::NoHeapScope no_heap;
  Answer answer;
  Initialized rig;
  Out& out = rig.out;
  emcp::transport::LineTransport& t = rig.t;
  feed(t, R"({"jsonrpc":"2.0","id":9,"method":"tools/call","params":{"name":"ec)");
  t.input_lost();
  feed(t, R"(xt":"lost"}}})" "\n" R"({"jsonrpc":"2.0","id":10,"method":"ping"})" "\n");
  EXPECT_EQ(out.take(),
            R"x({"jsonrpc":"2.0","id":9,"error":{"code":-32600,"message":"Invalid Request: input lost (receive buffer overflow)","data":{"inputLost":true}}})x" "\n"
            R"({"jsonrpc":"2.0","id":10,"result":{}})" "\n"sv);
  // Between lines: the next line is the damaged one, its id unknown (2025-11-25 leaves it out).
  t.input_lost();
  feed(t, R"(,"id":11,"method":"ping"})" "\n" R"({"jsonrpc":"2.0","id":12,"method":"ping"})" "\n");
  EXPECT_EQ(out.take(),
            R"x({"jsonrpc":"2.0","error":{"code":-32600,"message":"Invalid Request: input lost (receive buffer overflow)","data":{"inputLost":true}}})x" "\n"
            R"({"jsonrpc":"2.0","id":12,"result":{}})" "\n"sv);
  // A client's response that lost bytes ends the request it answers, and nobody is answered.
  ASSERT_EQ(rig.server.ping(t.session(), &on_answer, &answer), Status::kOk);
  g_line.clear();
  g_line.append(R"({"jsonrpc":"2.0","id":)");
  g_line.append(request_id(out.take()));
  g_line.append(R"(,"result":{)");
  feed(t, g_line.view());
  t.input_lost();
  feed(t, "}}\n");
  EXPECT_EQ(answer.calls, 1);
  EXPECT_EQ(answer.outcome, Response::Outcome::kError);
  EXPECT_EQ(answer.message.view(), "response damaged: input lost"sv);
  EXPECT_EQ(out.take(), ""sv);
}

namespace {
int g_roots_changed = 0;
Session* g_roots_session = nullptr;
void roots_changed(Session& s, void*) {
  ++g_roots_changed;
  g_roots_session = &s;
}
}  // namespace

TEST(McpServer, RootsChangedReachesTheApplication) {
  emcp_test::NoHeapScope no_heap;
  Initialized rig;
  const std::string_view note = R"({"jsonrpc":"2.0","method":"notifications/roots/list_changed"})" "\n";
  g_roots_changed = 0;
  feed(rig.t, note);  // no hook: ignored
  EXPECT_EQ(g_roots_changed, 0);
  rig.server.on_roots_changed(&roots_changed, nullptr);
  feed(rig.t, note);
  EXPECT_EQ(g_roots_changed, 1);
  EXPECT_EQ(g_roots_session, &rig.t.session());
  EXPECT_EQ(rig.out.take(), ""sv);  // a notification is never answered
  // Before notifications/initialized the notification means nothing (list_roots() could not
  // ask yet).
  Out out;
  Server server(fixture::info(), fixture::platform());
  server.on_roots_changed(&roots_changed, nullptr);
  emcp::transport::StaticLineTransport<> t(server, &Out::write, &out);
  feed(t, note);
  feed(t, R"({"jsonrpc":"2.0","id":"i","method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"1"}}})" "\n");
  feed(t, note);
  EXPECT_EQ(g_roots_changed, 1);
  feed(t, R"({"jsonrpc":"2.0","method":"notifications/initialized"})" "\n");
  feed(t, note);
  EXPECT_EQ(g_roots_changed, 2);
}

namespace {
// Notifications sent after a tool's result started: the channel is busy with that result, so
// the server holds them (EMCP_NOTIFY_QUEUE) and sends them, in order, once the answer is out.
Status g_call_log = Status::kOk, g_call_debug = Status::kOk, g_call_progress = Status::kOk;
void read_nothing(ResourceRead& r) { r.text("x"); }
constexpr Resource kHeldResources[] = {Resource::make("test://watched", "watched", &read_nothing)};
void notify_while_answering(ToolCall& c);
void oversize_log(ToolCall& c);
void detach_while_answering(ToolCall& c);
constexpr Tool kHeldTools[] = {Tool::make("notify_while_answering", &notify_while_answering),
                               Tool::make("oversize_log", &oversize_log),
                               Tool::make("detach_while_answering", &detach_while_answering)};
constexpr Tool kHeldToolsChanged[] = {Tool::make("notify_while_answering", &notify_while_answering)};
void notify_while_answering(ToolCall& c) {
  c.text("answer");
  g_server->log(LogLevel::kError, "written while the answer is open");
  g_call_log = c.log(LogLevel::kError, "the call's own, while its answer is open");
  g_call_debug = c.log(LogLevel::kDebug, "below the session's level");
  g_call_progress = c.progress(1, 2);  // not held: dropped and counted
  g_server->resource_updated("test://watched");
  g_server->resource_updated("test://not-subscribed");
  g_server->set_tools(kHeldToolsChanged);
}
void oversize_log(ToolCall& c) {
  c.text("answer");
  static char big[EMCP_NOTIFY_QUEUE];  // with its entry head it cannot fit
  memset(big, 'x', sizeof big);
  g_server->log(LogLevel::kError, StrView(big, sizeof big));
  g_server->log(LogLevel::kError, "small enough");
}
emcp::transport::LineTransport* g_held_link = nullptr;
Status g_log_after_detach = Status::kOk;
void detach_while_answering(ToolCall& c) {
  c.text("answer");
  g_server->log(LogLevel::kError, "held, then its session goes");
  g_server->detach(g_held_link->session());
  g_log_after_detach = c.log(LogLevel::kError, "its session is not attached: not held");
}

struct HeldFixture {
  Out out;
  Server server{fixture::info(), fixture::platform()};
  emcp::transport::StaticLineTransport<> t{server, &Out::write, &out};
  HeldFixture() {
    g_server = &server;
    g_held_link = &t;
    server.set_tools(kHeldTools);
    server.set_resources(kHeldResources);
    feed(t, kInit);
    feed(t, R"({"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched"}})" "\n");
    (void)out.take();
  }
};
}  // namespace

TEST(McpServer, NotificationsSentWhileTheAnswerIsOpenFollowIt) {
  emcp_test::NoHeapScope no_heap;
  HeldFixture f;
  f.server.log(LogLevel::kError, "between messages");
  EXPECT_NE(f.out.take().find("between messages"), std::string_view::npos);
  feed(f.t, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notify_while_answering","_meta":{"progressToken":7}}})" "\n");
  EXPECT_EQ(f.out.take(),
            R"({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"answer"}]}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"written while the answer is open"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"the call's own, while its answer is open"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://watched"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})" "\n"sv);
  EXPECT_EQ(g_call_log, Status::kOk);
  EXPECT_EQ(g_call_debug, Status::kOk);
  EXPECT_EQ(g_call_progress, Status::kInvalidState);
  EXPECT_EQ(f.server.notifications_dropped(), 1u);  // the progress
}

TEST(McpServer, AHeldNotificationThatDoesNotFitIsCounted) {
  emcp_test::NoHeapScope no_heap;
  HeldFixture f;
  feed(f.t, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"oversize_log"}})" "\n");
  EXPECT_EQ(f.out.take(),
            R"({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"answer"}]}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"small enough"}})" "\n"sv);
  EXPECT_EQ(f.server.notifications_dropped(), 1u);
}

TEST(McpServer, HeldNotificationsOfADetachedSessionAreForgottenAndCounted) {
  emcp_test::NoHeapScope no_heap;
  HeldFixture f;
  feed(f.t, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"detach_while_answering"}})" "\n");
  EXPECT_EQ(f.out.take(), R"({"jsonrpc":"2.0","id":2,"result":{"content":[{"type":"text","text":"answer"}]}})" "\n"sv);
  EXPECT_EQ(g_log_after_detach, Status::kInvalidState);
  EXPECT_EQ(f.server.notifications_dropped(), 2u);
  // The next message attaches the session again; nothing old comes with it.
  feed(f.t, R"({"jsonrpc":"2.0","id":3,"method":"ping"})" "\n");
  EXPECT_EQ(f.out.take(), R"({"jsonrpc":"2.0","id":3,"result":{}})" "\n"sv);
}

TEST(McpServer, OnlyTheBusySessionsNotificationsWait) {
  emcp_test::NoHeapScope no_heap;
  HeldFixture f;  // session A
  Out out_b;
  emcp::transport::StaticLineTransport<> b(f.server, &Out::write, &out_b);
  feed(b, kInit);
  feed(b, R"({"jsonrpc":"2.0","id":1,"method":"resources/subscribe","params":{"uri":"test://watched"}})" "\n");
  (void)out_b.take();
  // A's handler notifies while A's answer is open: B, idle, gets each at once; A after its answer.
  feed(f.t, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"notify_while_answering"}})" "\n");
  const std::string_view a = f.out.take();
  EXPECT_EQ(a.rfind(R"({"jsonrpc":"2.0","id":2,"result")", 0), 0u);  // the answer first
  EXPECT_NE(a.find("test://watched"), std::string_view::npos);
  EXPECT_EQ(out_b.take(),
            R"({"jsonrpc":"2.0","method":"notifications/message","params":{"level":"error","data":"written while the answer is open"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/resources/updated","params":{"uri":"test://watched"}})" "\n"
            R"({"jsonrpc":"2.0","method":"notifications/tools/list_changed"})" "\n"sv);
  EXPECT_EQ(f.server.notifications_dropped(), 0u);
}

TEST(McpServer, ListChangedOnlyForCapabilitiesTheSessionWasOffered) {
  emcp_test::NoHeapScope no_heap;
  Out out;
  Server server(fixture::info(), fixture::platform());
  server.set_tools(kDeferTools);  // tools only
  emcp::transport::StaticLineTransport<> t(server, &Out::write, &out);
  feed(t, kInit);
  EXPECT_EQ(out.take().find("prompts"), std::string_view::npos);
  static const Prompt kPrompts[] = {Prompt::make("p", nullptr)};
  server.set_prompts(kPrompts);  // added later: this session never heard of prompts
  EXPECT_EQ(out.take(), ""sv);
  feed(t, R"({"jsonrpc":"2.0","id":1,"method":"prompts/list"})" "\n");
  EXPECT_NE(out.take().find("-32601"), std::string_view::npos);
  server.set_tools(kDeferTools);  // the same table again: no notification
  EXPECT_EQ(out.take(), ""sv);
  // A session that initializes now is offered prompts.
  feed(t, kInit);
  EXPECT_NE(out.take().find(R"("prompts":{"listChanged":true})"), std::string_view::npos);
}

namespace {
Server* g_resend_server;
Session* g_resend_session;
int g_closed = 0;
void on_closed_resend(const Response& r, void*) {
  if (r.outcome != Response::Outcome::kClosed) return;
  ++g_closed;
  (void)g_resend_server->ping(*g_resend_session, nullptr, nullptr);
}
}  // namespace

TEST(McpServer, ReinitializeAnswersBeforeAnythingTheOldWorkSends) {
  emcp_test::NoHeapScope no_heap;
  Initialized rig;
  Out& out = rig.out;
  Server& server = rig.server;
  emcp::transport::LineTransport& t = rig.t;
  g_resend_server = &server;
  g_resend_session = &t.session();
  g_closed = 0;
  ASSERT_EQ(server.ping(t.session(), &on_closed_resend, nullptr), Status::kOk);
  (void)out.take();
  feed(t, kInit);
  const std::string_view o = out.take();
  EXPECT_EQ(g_closed, 1);
  const size_t answer = o.find(R"("id":"i","result")");
  const size_t ping = o.find(R"("method":"ping")");
  ASSERT_NE(answer, std::string_view::npos) << o;
  ASSERT_NE(ping, std::string_view::npos) << o;
  EXPECT_LT(answer, ping) << o;
}

TEST(McpServer, FinishedStdioStreamNeedsInitializeAgain) {
  emcp_test::NoHeapScope no_heap;
  Out out;
  Server server(fixture::info(), fixture::platform());
  fixture::install(server);
  emcp::transport::StaticLineTransport<> t(server, &Out::write, &out);
  feed(t, kInit);
  (void)t.finish();
  (void)out.take();
  feed(t, R"({"jsonrpc":"2.0","id":1,"method":"tools/list"})" "\n");
  EXPECT_NE(out.take().find("not initialized"), std::string_view::npos);
}

// Absent arguments are the defaults the Param table declares; present ones are the client's;
// the two-argument forms take the caller's fallback instead; undeclared ones are "", 0, false.
constexpr Param kDefaultParams[] = {
    Param::string("unit").with_default("C"),
    Param::integer("samples").range(1, 100).with_default(10),
    Param::number("ratio").with_default(0.25),
    Param::boolean("fast").with_default(true),
    Param::integer("plain"),
};
void defaults_tool(ToolCall& c) {
  char line[160];
  const int n = snprintf(line, sizeof line, "%.*s %lld %g %d %lld | %.*s %lld %g %d | %lld",
                         static_cast<int>(c.str("unit").size()), c.str("unit").data(),
                         static_cast<long long>(c.integer("samples")), c.number("ratio"), c.boolean("fast") ? 1 : 0,
                         static_cast<long long>(c.integer("plain")), static_cast<int>(c.str("unit", "K").size()),
                         c.str("unit", "K").data(), static_cast<long long>(c.integer("samples", 3)),
                         c.number("ratio", 2), c.boolean("fast", false) ? 1 : 0,
                         static_cast<long long>(c.integer("undeclared")));
  c.text(StrView(line, static_cast<size_t>(n)));
}
constexpr Tool kDefaultTools[] = {Tool::make("defaults", &defaults_tool).with_params(kDefaultParams)};

TEST(McpServer, AbsentArgumentsAreTheirDeclaredDefaults) {
  emcp_test::NoHeapScope no_heap;
  Out out;
  Server server(fixture::info(), fixture::platform());
  server.set_tools(kDefaultTools);
  emcp::transport::StaticLineTransport<> t(server, &Out::write, &out);
  feed(t, kInit);
  (void)out.take();
  feed(t, R"({"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"defaults","arguments":{}}})" "\n");
  EXPECT_NE(out.take().find(R"("text":"C 10 0.25 1 0 | K 3 2 0 | 0")"), std::string_view::npos);
  feed(t, R"({"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"defaults","arguments":)"
          R"({"unit":"F","samples":7,"ratio":1.5,"fast":false,"plain":4}}})" "\n");
  EXPECT_NE(out.take().find(R"("text":"F 7 1.5 0 4 | F 7 1.5 0 | 0")"), std::string_view::npos);
  feed(t, R"({"jsonrpc":"2.0","id":3,"method":"tools/list"})" "\n");
  EXPECT_NE(out.take().find(R"("samples":{"type":"integer","minimum":1,"maximum":100,"default":10})"),
            std::string_view::npos);
}

TEST(McpServer, DestroyedSessionsLeaveTheServer) {
  emcp_test::NoHeapScope no_heap;
  Out out;
  Server server(fixture::info(), fixture::platform());
  fixture::install(server);
  {
    emcp::transport::StaticLineTransport<> t(server, &Out::write, &out);
    feed(t, kInit);
  }
  // Under ASan a dangling session in the server's list would be caught here.
  server.log(LogLevel::kEmergency, "nobody listens");
  server.resource_updated("test://static");
  Out out2;
  {
    emcp::transport::StaticLineTransport<> t2(server, &Out::write, &out2);
    feed(t2, kInit);
    server.log(LogLevel::kEmergency, "one listens");
  }
  EXPECT_NE(out2.view().find("one listens"), std::string_view::npos);
}

TEST(McpServer, ServerOutlivedBySessionIsSafe) {
  // ~Server detaches every session still attached: what the server still waited for on it
  // ends (its request to the client calls back kClosed), nothing is written, and the session
  // forgets the server, so that the transport destroyed afterwards does not touch the freed
  // server (ASan and Valgrind report it if it does). Until it is destroyed the transport
  // still takes bytes that do not finish a message (a message would go to its server).
  static_assert(alignof(Server) <= __STDCPP_DEFAULT_NEW_ALIGNMENT__, "operator new alignment");
  // On the heap on purpose (its use after free is what ASan and Valgrind see), taken before
  // the scope; the server is built and destroyed inside it.
  void* memory = ::operator new(sizeof(Server));
  Answer ping;
  {
    emcp_test::NoHeapScope no_heap;
    Out out;
    Server* server = new (memory) Server(fixture::info(), fixture::platform());
    fixture::install(*server);
    emcp::transport::StaticLineTransport<> t(*server, &Out::write, &out);
    feed(t, kInit);
    (void)out.take();
    EXPECT_EQ(server->ping(t.session(), &on_answer, &ping), Status::kOk);
    EXPECT_NE(out.take().find(R"("method":"ping")"), std::string_view::npos);
    EXPECT_EQ(ping.calls, 0);
    server->~Server();
    ::operator delete(memory);  // a free is not an allocation
    EXPECT_EQ(ping.calls, 1);
    EXPECT_EQ(ping.outcome, Response::Outcome::kClosed);
    EXPECT_EQ(ping.session, &t.session());
    EXPECT_EQ(out.take(), ""sv);
    feed(t, R"({"jsonrpc":"2.0","id":2,"method":"ping"})");  // no newline yet
    EXPECT_EQ(out.take(), ""sv);
    EXPECT_EQ(t.status(), Status::kOk);
  }  // ~LineTransport: its session is detached, it leaves no server
  EXPECT_EQ(ping.calls, 1);
}

TEST(McpText, FormatTextFormatsNumbersAndCutsAtCharacterBoundaries) {
  emcp_test::NoHeapScope no_heap;
  using emcp::mcp::TextPiece;
  char buf[32];
  EXPECT_EQ(emcp::mcp::format_text(buf, sizeof buf, {"t=", TextPiece(21.537, 1), " n=", -42, " x=", 0.1}),
            strlen("t=21.5 n=-42 x=0.1"));
  EXPECT_STREQ(buf, "t=21.5 n=-42 x=0.1");
  // Fixed decimals without the shortest-digits code: rounding half away from zero, no "-0.0",
  // huge magnitudes to 15 significant digits, NaN and infinities as "NaN".
  struct Fixed {
    double v;
    int8_t places;
    const char* want;
  };
  const Fixed fixed[] = {{21.537, 1, "21.5"}, {-21.55, 1, "-21.6"}, {-0.04, 1, "0.0"},
                         {0.5, 0, "1"}, {2.0, 3, "2.000"}, {1e20, 2, "100000000000000000000"},
                         {-123456789.123, 12, "-123456789.1230000"}, {1e300, 1, "1e+300"},
                         {-1.25e22, 0, "-1.25e+22"}, {1.5e16, 0, "15000000000000000"},
                         {1.2345678901234e20, 1, "123456789012000000000"}, {1.7e308, 3, "1.7e+308"},
                         // Exact from 2^52 up (no +0.5 rounding to even), and no 0.5 - ulp up.
                         {4503599627370497.0, 0, "4503599627370497"},
                         {450359962737049.7, 1, "450359962737049.7"},
                         {0.49999999999999994, 0, "0"}, {2.5, -1, "3"},
                         {NAN, 1, "NaN"}, {-INFINITY, 2, "NaN"}};
  for (const Fixed& f : fixed) {
    char out[48];
    emcp::mcp::format_text(out, sizeof out, {TextPiece(f.v, f.places)});
    EXPECT_STREQ(out, f.want) << f.v << " with " << int{f.places};
  }
  // Fixed-point integers.
  struct Scaled {
    int64_t v;
    uint8_t places;
    const char* want;
  };
  const Scaled scaled[] = {{215, 1, "21.5"}, {-5, 2, "-0.05"}, {0, 3, "0.000"}, {7, 0, "7"},
                           {-1200, 3, "-1.200"}, {INT64_MIN, 18, "-9.223372036854775808"},
                           {INT64_MAX, 0, "9223372036854775807"}, {42, 30, "0.000000000000000042"}};
  for (const Scaled& f : scaled) {
    char out[48];
    emcp::mcp::format_text(out, sizeof out, {TextPiece::fixed(f.v, f.places)});
    EXPECT_STREQ(out, f.want) << f.v << " with " << int{f.places};
  }
  // "°" is two bytes: a cut never splits it.
  char small[5];
  EXPECT_EQ(emcp::mcp::format_text(small, sizeof small, {"21 \xC2\xB0" "C"}), 3u);
  EXPECT_STREQ(small, "21 ");
  EXPECT_EQ(emcp::mcp::format_text(small, 1, {"abc"}), 0u);
  EXPECT_STREQ(small, "");
  // Quotes and backslashes stay as they are (plain text, not JSON).
  EXPECT_EQ(emcp::mcp::format_text(buf, sizeof buf, {"say \"hi\" \\"}), 10u);
  EXPECT_STREQ(buf, "say \"hi\" \\");
}

namespace {
// emcp/platform.h: a platform without a clock is refused when the server is built, loudly
// (EMCP_ASSERT), instead of running without timeouts.
TEST(PlatformDeathTest, ServerWithoutAClockIsAStartUpFailure) {
  static const emcp::Platform no_clock{};
  EXPECT_DEATH({ Server server(fixture::info(), no_clock); }, "");
}
}  // namespace
