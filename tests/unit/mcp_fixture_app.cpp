#include "mcp_fixture_app.h"

#include <string.h>

namespace fixture {

using emcp::Status;
using emcp::StrView;
using emcp::Span;
using namespace emcp::mcp;

namespace {

uint64_t g_now = 1000;
Server* g_server = nullptr;

void echo(ToolCall& c) { c.text(c.str("text")); }

void write_sum(emcp::json::Writer& w, const void* ctx) {
  w.begin_object();
  w.member_int("sum", *static_cast<const int64_t*>(ctx));
  w.end_object();
}
void add(ToolCall& c) {
  int64_t sum = 0;
  if (__builtin_add_overflow(c.integer("a"), c.integer("b"), &sum)) return c.fail({"the sum is beyond int64"});
  c.structured(&write_sum, &sum);
}

void kinds(ToolCall& c) {
  static const uint8_t kPixel[] = {0x89, 'P', 'N', 'G'};
  c.text("one of each");
  c.image(kPixel, sizeof kPixel, "image/png");
  c.audio("RIFF", 4, "audio/wav");
  c.resource_link("test://static", "static", "text/plain", "A static text");
  c.resource_text("test://inline", "text/plain", "inline text");
  c.resource_blob("test://blob", "application/octet-stream", "\x00\x01\x02", 3);
}

void fail(ToolCall& c) { c.fail({"the tool failed: code ", 42}); }

void validate(ToolCall& c) { c.text({"valid: mode ", c.str("mode"), ", count ", c.integer("count", -1)}); }

void check_extra(ToolCall& c) {
  if (c.integer("n") % 2 != 0) return c.invalid_params("n must be even");
  c.text("even");
}

Pending g_slow[EMCP_MAX_DEFERRED];
int g_slow_count = 0;
// What the completion of each deferred `slow` call does (its argument "kind": "" a text, "big" a
// result of 600 bytes, "ask" a confirmation asked first (in a task), "error" a JSON-RPC error).
char g_slow_kind[EMCP_MAX_DEFERRED][8];
void slow(ToolCall& c) {
  const StrView kind = c.str("kind");
  const Pending p = c.defer();
  if (!p.valid()) return;
  const size_t n = kind.size() < sizeof g_slow_kind[0] ? kind.size() : sizeof g_slow_kind[0] - 1;
  memcpy(g_slow_kind[g_slow_count], kind.data(), n);
  g_slow_kind[g_slow_count][n] = '\0';
  g_slow[g_slow_count++] = p;
}

void progress(ToolCall& c) {
  (void)c.progress(1, 3, "first");
  (void)c.progress(2, 3);
  (void)c.log(LogLevel::kInfo, "halfway", "fixture");
  c.text("done");
  // Written while the answer is open: held, it follows the answer.
  (void)c.log(LogLevel::kInfo, "after the answer", "fixture");
}

void big(ToolCall& c) {
  // 20 KB of text through the output buffer of any size.
  for (int i = 0; i < 200; ++i)
    c.text({"block ", i, ": ", "0123456789012345678901234567890123456789012345678901234567890123456789012345678901234567890"});
}

// ask: asks the client's model (sampling) and answers with what it said.
struct Ask {
  Pending pending;
  char text[128];
  size_t len = 0;
  bool failed = false;
};
Ask g_ask;

void answer_ask(ToolCall& c, void*) {
  if (g_ask.failed) c.fail(StrView(g_ask.text, g_ask.len));
  else c.text(StrView(g_ask.text, g_ask.len));
}

void on_sampled(const Response& r, void*) {
  StrView text;
  g_ask.failed = r.outcome != Response::Outcome::kResult;
  if (r.outcome == Response::Outcome::kResult) text = r.result["content"]["text"].as_string().value_or("?");
  else if (r.outcome == Response::Outcome::kError) text = r.message;
  else if (r.outcome == Response::Outcome::kTimeout) text = "timed out";
  else text = "closed";
  g_ask.len = text.size() < sizeof g_ask.text ? text.size() : sizeof g_ask.text;
  for (size_t i = 0; i < g_ask.len; ++i) g_ask.text[i] = text[i];
  (void)g_server->complete(g_ask.pending, &answer_ask, nullptr);
}

}  // namespace

void write_ask_params(emcp::json::Writer& w, const void*) {
  w.begin_object();
  w.key("messages");
  w.begin_array();
  w.begin_object();
  w.member_str("role", "user");
  w.key("content");
  w.begin_object();
  w.member_str("type", "text");
  w.member_str("text", "Say something");
  w.end_object();
  w.end_object();
  w.end_array();
  w.member_int("maxTokens", 10);
  w.end_object();
}

namespace {

void ask(ToolCall& c) {
  if (!c.session().client().sampling) return c.fail("no sampling");
  g_ask.pending = c.defer();
  if (!g_ask.pending.valid()) return;
  const Status s = g_server->sample(c.session(), &write_ask_params, nullptr, &on_sampled, nullptr, 60000);
  if (s != Status::kOk) {
    const char* why = emcp::status_str(s);
    g_ask.failed = true;
    g_ask.len = strlen(why);
    memcpy(g_ask.text, why, g_ask.len);
    (void)g_server->complete(g_ask.pending, &answer_ask, nullptr);
  }
}

// confirm: asks the user (elicitation, form mode); open_url: asks the user to visit a URL (URL
// mode). Both answer with what the user chose.
constexpr Param kConfirmForm[] = {
    Param::boolean("ok", "Proceed?").required(),
    Param::string("note", "Anything to add").length(0, 50),
};
void on_elicited(const Response& r, void*) {
  StrView text;
  g_ask.failed = r.outcome != Response::Outcome::kResult;
  if (r.outcome == Response::Outcome::kResult) text = r.result["action"].as_string().value_or("?");
  else text = r.outcome == Response::Outcome::kError ? r.message : StrView("no answer");
  g_ask.len = text.size() < sizeof g_ask.text ? text.size() : sizeof g_ask.text;
  for (size_t i = 0; i < g_ask.len; ++i) g_ask.text[i] = text[i];
  (void)g_server->complete(g_ask.pending, &answer_ask, nullptr);
}
void confirm(ToolCall& c) {
  g_ask.pending = c.defer();
  if (!g_ask.pending.valid()) return;
  const Status s = g_server->elicit(c.session(), "Proceed with the test?", kConfirmForm, &on_elicited, nullptr);
  if (s != Status::kOk) {
    const char* why = s == Status::kNotFound ? "the client cannot elicit" : "busy";
    g_ask.failed = true;
    g_ask.len = strlen(why);
    memcpy(g_ask.text, why, g_ask.len);
    (void)g_server->complete(g_ask.pending, &answer_ask, nullptr);
  }
}
// 2026-07-28 input rounds: asks the user's name (keeping a marker for the retry), then greets.
constexpr Param kNameForm[] = {Param::string("name").required()};
void greet(ToolCall& c) {
  const emcp::json::Value name = c.input().accepted("who")["name"];
  const bool marked = c.input().state().size() == 4 && memcmp(c.input().state().data(), "mark", 4) == 0;
  if (name.is_string() && marked) return c.text({"Hello, ", name.as_string().value(), " (round ", static_cast<long long>(c.input().round()), ")"});
  if (!c.input().elicit("who", "Whom to greet?", kNameForm) || !c.input().keep("mark", 4))
    return c.fail("cannot ask here");
}
void open_url(ToolCall& c) {
  g_ask.pending = c.defer();
  if (!g_ask.pending.valid()) return;
  const Status s = g_server->elicit_url(c.session(), "Authorize the device", "https://example.com/authorize?device=1",
                                        "el-1", &on_elicited, nullptr);
  if (s != Status::kOk) {
    const char* why = s == Status::kNotFound ? "the client has no URL elicitation" : "busy";
    g_ask.failed = true;
    g_ask.len = strlen(why);
    memcpy(g_ask.text, why, g_ask.len);
    (void)g_server->complete(g_ask.pending, &answer_ask, nullptr);
  }
}

constexpr const char* kModes[] = {"a", "b"};
constexpr Param kEchoParams[] = {Param::string("text", "Text to echo").length(1, 100).required()};
constexpr Param kAddParams[] = {Param::integer("a").required(), Param::integer("b").required()};
constexpr Param kSumOut[] = {Param::integer("sum").required()};
constexpr Param kTag = Param::string("tag").length(1, 8);
constexpr Param kPoint[] = {Param::integer("x").required(), Param::integer("y")};
constexpr Param kValidateParams[] = {
    Param::string("mode").one_of(kModes).required(),
    Param::integer("count").range(0, 10),
    Param::number("ratio").range(0, 1),
    Param::boolean("flag"),
    Param::array("tags", kTag).length(0, 3),
    Param::object("point", kPoint),
};
constexpr Param kEvenParams[] = {Param::integer("n").required()};
constexpr Icon kIcons[] = {{"data:image/png;base64,iVBORw0KGgo=", "image/png", "16x16", "light"}};

constexpr Tool kTools[] = {
    Tool::make("echo", &echo).titled("Echo").describe("Echoes the text").with_params(kEchoParams).read_only().with_icons(kIcons),
    Tool::make("add", &add).describe("Adds two integers").with_params(kAddParams).with_output(kSumOut),
    Tool::make("kinds", &kinds).describe("One content block of each kind"),
    Tool::make("fail", &fail).describe("Always fails").destructive().idempotent(false).open_world(false).annotation_titled("Failing tool"),
    Tool::make("validate", &validate).with_params(kValidateParams),
    Tool::make("even", &check_extra).with_params(kEvenParams),
    Tool::make("slow", &slow).describe("Answers when the test says so").runs_as_task(),
    Tool::make("progress", &progress),
    Tool::make("big", &big),
    Tool::make("ask", &ask).describe("Asks the client's model"),
    Tool::make("confirm", &confirm).describe("Asks the user (form)"),
    Tool::make("greet", &greet).describe("Asks whom to greet (input rounds)"),
    Tool::make("open_url", &open_url).describe("Asks the user to open a URL"),
    Tool::make("raw", &echo).with_input_schema(R"({"type":"object","$schema":"https://json-schema.org/draft/2020-12/schema","properties":{"text":{"type":"string"}}})"),
};

void read_static(ResourceRead& r) { r.text("static text"); }
void read_blob(ResourceRead& r) { r.blob("\xff\x00\x10", 3); }
void read_item(ResourceRead& r) {
  if (r.var("id") == "missing") return r.not_found();
  r.text({"item ", r.var("id"), " of ", r.var("group")});
}
void complete_id(Completion& c) {
  static const char* const kIds[] = {"alpha", "beta", "gamma"};
  c.add_matching(kIds);
}

constexpr Resource kResources[] = {
    Resource::make("test://static", "static", &read_static).titled("Static").describe("A static text").mime("text/plain"),
    Resource::make("test://blob", "blob", &read_blob).mime("application/octet-stream").sized(3),
};
constexpr ResourceTemplate kTemplates[] = {
    ResourceTemplate::make("item://{group}/{id}", "item", &read_item).describe("An item of a group").mime("text/plain").completed_by(&complete_id),
};

void greet(PromptGet& p) {
  p.user({"Say hello to ", p.arg("name"), " in ", p.arg("language", "English"), "."});
  p.assistant("Hello!");
}
void show(PromptGet& p) {
  static const uint8_t kPixel[] = {0x89, 'P', 'N', 'G'};
  p.message(Role::kUser).image(kPixel, sizeof kPixel, "image/png");
  p.message(Role::kUser).audio("RIFF", 4, "audio/wav");
  p.message(Role::kAssistant).resource_text("test://inline", "text/plain", "embedded");
  p.message(Role::kUser).resource_link("test://static", "static");
}

// Misuse that must still give well-formed answers.
void refuse(PromptGet& p) {
  p.invalid_params("refused");
  p.user("ignored after the error");
}
void odd(PromptGet& p) {
  (void)p.message(Role::kUser);  // no block: becomes an empty text
  ContentWriter& m = p.message(Role::kAssistant);
  m.text("first");
  m.text("second, ignored");
  m.text_begin();  // also ignored
  m.text_part("x");
  m.text_end();
}

constexpr PromptArg kGreetArgs[] = {
    PromptArg::make("name", "Who to greet").required().completed_by(&complete_id),
    PromptArg::make("language"),
};
constexpr Prompt kPrompts[] = {
    Prompt::make("greet", &greet).titled("Greeting").describe("Greets someone").with_args(kGreetArgs),
    Prompt::make("show", &show).describe("One message of each content kind"),
    Prompt::make("refuse", &refuse),
    Prompt::make("odd", &odd),
};

const ServerInfo kInfo = [] {
  ServerInfo i;
  i.name = "fixture";
  i.version = "1.0.0";
  i.title = "Fixture server";
  i.description = "Tests";
  i.instructions = "Use the tools.";
  return i;
}();

void finish_slow(ToolCall& c, void* ctx) {
  const StrView kind(static_cast<const char*>(ctx));
  if (kind == "big") {
    c.content().text_begin();
    for (int i = 0; i < 60; ++i) c.content().text_part("0123456789");
    return c.content().text_end();
  }
  if (kind == "error") return c.error(emcp::jsonrpc::ErrorCode::kInternalError, "the backend failed");
  if (kind == "keep") {  // what it kept comes back with the answer (a task carries it)
    if (c.input().answer("ok").exists()) {
      const auto kept = c.input().state();
      return c.text({"kept: ", StrView(reinterpret_cast<const char*>(kept.data()), kept.size())});
    }
    if (!c.input().keep("step-2", 6) || !c.input().elicit("ok", "Proceed?", kConfirmForm))
      c.fail({"cannot ask: ", c.input().why_not()});
    return;
  }
  if (kind == "ask") {
    if (c.input().accepted("ok")["ok"].as_bool().value_or(false)) return c.text("confirmed");
    if (c.input().answer("ok").exists()) return c.text("not confirmed");
    if (!c.input().elicit("ok", "Proceed?", kConfirmForm)) c.fail({"cannot ask: ", c.input().why_not()});
    return;
  }
  c.text("slow done");
}

}  // namespace

namespace {
// Older clients are asked through input() too (the greet tool).
emcp::mcp::StaticInputBridge<2, 1024> g_bridge;
// Tasks (the `slow` tool runs as one for a client that allows it): two slots of 512 bytes, so
// the fixtures reach the table's and the result's limits.
emcp::mcp::StaticTaskStore<2, 512> g_tasks;
uint8_t g_task_ids = 0;  // each task id drawn differs (the fake random source repeats otherwise)
}  // namespace

void install(Server& server) {
  g_server = &server;
  server.set_input_bridge(g_bridge);
  g_task_ids = 0;
  emcp::mcp::TaskPolicy policy;
  policy.ttl_ms = 10000;
  policy.poll_interval_ms = 500;
  server.set_tasks(g_tasks, policy);
  g_slow_count = 0;
  server.set_tools(kTools);
  server.set_resources(kResources);
  server.set_templates(kTemplates);
  server.set_prompts(kPrompts);
}

void change_tables() {
  g_server->set_tools(Span<const Tool>(kTools, 2));  // fewer of each: */list_changed
  g_server->set_prompts(Span<const Prompt>(kPrompts, 1));
  g_server->set_resources(Span<const Resource>(kResources, 1));
  g_server->set_resources(Span<const Resource>(kResources, 1));  // the same again: no notification
}

int pending_slow() { return g_slow_count; }

Status complete_slow() {
  if (g_slow_count == 0) return Status::kNotFound;
  const Pending p = g_slow[0];
  static char kind[8];
  memcpy(kind, g_slow_kind[0], sizeof kind);
  for (int i = 1; i < g_slow_count; ++i) {
    g_slow[i - 1] = g_slow[i];
    memcpy(g_slow_kind[i - 1], g_slow_kind[i], sizeof kind);
  }
  --g_slow_count;
  return g_server->complete(p, &finish_slow, kind);  // `kind` outlives a task waiting for input
}

const ServerInfo& info() { return kInfo; }
Server* server() { return g_server; }
uint64_t now_ms() { return g_now; }
void advance_ms(uint64_t ms) { g_now += ms; }
const emcp::Platform& platform() {
  // Random bytes that repeat from run to run: the requestState of the fixtures is exact.
  static constexpr emcp::Platform kFake{&now_ms, [](void* out, size_t n) {
                                          const uint8_t salt = n == 16 ? ++g_task_ids : 0;  // a task id
                                          for (size_t i = 0; i < n; ++i) static_cast<uint8_t*>(out)[i] = static_cast<uint8_t>(i * 7 + 1 + salt);
                                          return true;
                                        }};
  return kFake;
}

}  // namespace fixture
