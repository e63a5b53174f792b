// The fixtures of the conformance suite's 2026-07-28 scenarios (0.2.0-alpha.12; see
// ../shared/spec/2026-07-28/CONFORMANCE.md section 5): tools and a prompt that ask the client
// for input through multi round-trip requests (emcp::mcp::Inputs), one that needs a client
// capability (-32021 without it), one that logs. Each input-required fixture finishes once the
// retry brings the answers it asked for; until then it asks again.
#include <string.h>

#include "everything.h"

namespace everything {

using emcp::StrView;
using emcp::json::Value;
using emcp::mcp::Inputs;
using emcp::mcp::LogLevel;
using emcp::mcp::Param;
using emcp::mcp::PromptGet;
using emcp::mcp::ToolCall;

namespace {

constexpr Param kNameForm[] = {Param::string("name", "Your name").required()};
constexpr Param kConfirmForm[] = {Param::boolean("confirm", "Go on?").required()};

// The text of a sampling answer (CreateMessageResult: content as one block or a list).
StrView sampled_text(const Value& answer) {
  const Value content = answer["content"];
  const Value block = content.is_array() ? content[0] : content;
  return block["text"].as_string().value_or(StrView());
}

bool has_roots(const Value& answer) { return answer["roots"].is_array(); }

// Fails the call when the question could not even be asked (the client declared nothing).
void cannot_ask(ToolCall& call, const char* what) {
  call.fail({"This tool needs the client's ", what, " through a 2026-07-28 request."});
}

}  // namespace

void input_elicitation(ToolCall& call) {
  const Value name = call.input().accepted("user_name")["name"];
  if (name.is_string()) return call.text({"Hello, ", name.as_string().value(), "!"});
  if (!call.input().elicit("user_name", "What is your name?", kNameForm)) cannot_ask(call, "elicitation");
}

void input_sampling(ToolCall& call) {
  const StrView text = sampled_text(call.input().answer("capital"));
  if (!text.empty()) return call.text({"The model says: ", text});
  if (!call.input().sample_text("capital", "What is the capital of France?", 100)) cannot_ask(call, "sampling");
}

void input_list_roots(ToolCall& call) {
  const Value answer = call.input().answer("roots");
  if (has_roots(answer)) {
    const Value first = answer["roots"][0]["uri"];
    return call.text({"The client has ", static_cast<long long>(answer["roots"].size()), " root(s)",
                      first.is_string() ? ", the first " : "", first.as_string().value_or(StrView())});
  }
  if (!call.input().list_roots("roots")) cannot_ask(call, "roots");
}

// Asks once with state; the retry that brings the state back is answered.
void input_request_state(ToolCall& call) {
  Inputs& in = call.input();
  static const char kStep[] = "step-1";
  if (in.state().size() == sizeof kStep - 1 && memcmp(in.state().data(), kStep, sizeof kStep - 1) == 0 &&
      in.accepted("confirm").exists())
    return call.text("The state came back intact: done.");
  if (!in.elicit("confirm", "Confirm to go on", kConfirmForm) || !in.keep(kStep, sizeof kStep - 1))
    cannot_ask(call, "elicitation");
}

// Elicitation, sampling and roots at once, with state.
void input_multiple(ToolCall& call) {
  Inputs& in = call.input();
  const Value name = in.accepted("user_name")["name"];
  const StrView text = sampled_text(in.answer("capital"));
  if (name.is_string() && !text.empty() && has_roots(in.answer("roots")))
    return call.text({"Name ", name.as_string().value(), ", model: ", text, ", roots listed."});
  bool asked = false;
  if (!name.is_string()) asked = in.elicit("user_name", "What is your name?", kNameForm) || asked;
  if (text.empty()) asked = in.sample_text("capital", "What is the capital of France?", 100) || asked;
  if (!has_roots(in.answer("roots"))) asked = in.list_roots("roots") || asked;
  if (!asked || !in.keep("multi", 5)) cannot_ask(call, "elicitation, sampling and roots");
}

// Round 0 asks for a name, round 1 for a confirmation, round 2 answers: each round's state is
// a new one (it carries the round).
void input_multi_round(ToolCall& call) {
  Inputs& in = call.input();
  const Value name = in.accepted("user_name")["name"];
  if (in.round() >= 1 && name.is_string() && in.accepted("confirm").exists())
    return call.text({"Confirmed, ", name.as_string().value(), "."});
  if (in.round() >= 1 && name.is_string()) {
    // Keep the name: the next retry brings only the new answer.
    const StrView n = name.as_string().value();
    if (in.elicit("confirm", "Confirm to go on", kConfirmForm) && in.keep(n.data(), n.size() < 40 ? n.size() : 40)) return;
    return cannot_ask(call, "elicitation");
  }
  if (in.round() >= 2 && in.accepted("confirm").exists() && !in.state().empty())
    return call.text({"Confirmed, ", StrView(reinterpret_cast<const char*>(in.state().data()), in.state().size()), "."});
  if (!in.elicit("user_name", "What is your name?", kNameForm) || !in.keep("", 0)) cannot_ask(call, "elicitation");
}

void input_tampered_state(ToolCall& call) {
  Inputs& in = call.input();
  if (in.round() >= 1) return call.text("The state was accepted.");
  if (!in.elicit("user_name", "What is your name?", kNameForm) || !in.keep("trusted", 7)) cannot_ask(call, "elicitation");
}

// Asks only for what the request declared: elicitation if it may, sampling if it may.
void input_capabilities(ToolCall& call) {
  Inputs& in = call.input();
  if (in.accepted("user_name").exists() || !sampled_text(in.answer("capital")).empty())
    return call.text("Got what could be asked.");
  bool asked = in.elicit("user_name", "What is your name?", kNameForm);
  asked = in.sample_text("capital", "What is the capital of France?", 100) || asked;
  if (!asked) cannot_ask(call, "elicitation or sampling");
}

// Needs sampling: without the capability the request is refused (-32021).
void missing_capability(ToolCall& call) {
  if (!call.peer().caps.sampling) {
    if (!call.input().missing_capability("sampling")) call.fail("This tool needs the client's sampling.");
    return;
  }
  const StrView text = sampled_text(call.input().answer("capital"));
  if (!text.empty()) return call.text({"The model says: ", text});
  if (!call.input().sample_text("capital", "What is the capital of France?", 100))
    call.text("The client can sample: nothing more to do here.");
}

// An elicitation during a call: at 2026-07-28 an input-required result, never a request on
// the response stream.
void streaming_elicitation(ToolCall& call) {
  const Value name = call.input().accepted("user_name")["name"];
  if (name.is_string()) return call.text({"Hello, ", name.as_string().value(), "!"});
  if (!call.input().elicit("user_name", "What is your name?", kNameForm)) call.text("Nothing to ask here.");
}

// Logs (only to a request that named a logLevel), then answers.
void logging_tool(ToolCall& call) {
  (void)call.log(LogLevel::kInfo, "Tool execution started", "everything");
  (void)call.log(LogLevel::kInfo, "Tool execution completed", "everything");
  call.text("Logging tool completed.");
}

void input_prompt(PromptGet& p) {
  // Any accepted answer will do: a missing name is "the user".
  const Value answer = p.input().accepted("user_name");
  if (answer.exists())
    return p.user({"Write a greeting for ", answer["name"].as_string().value_or("the user"), "."});
  if (!p.input().elicit("user_name", "Whom should the greeting address?", kNameForm))
    p.user("Write a greeting for the user.");
}

// ---- Tasks (the io.modelcontextprotocol/tasks extension, SEP-2663) ------------------------------
// The tools that run as tasks defer; their work is a job finished from tasks_tick(). A task's
// completion may ask for input: the task is then input_required until tasks/update answers.

namespace {

using emcp::mcp::Pending;
using emcp::mcp::Server;

emcp::mcp::StaticTaskStore<24, 768, 4096> g_tasks;  // every scenario's tasks within the TTL
Server* g_task_server = nullptr;

struct TaskJob {
  Pending pending;
  uint64_t due = 0;
  Server::FinishFn fn = nullptr;
  bool used = false;
  char text[64] = {};
};
TaskJob g_task_jobs[EMCP_MAX_DEFERRED];

// Without a task (the client did not allow one) the client waits: at most 1 s then.
void start_job(ToolCall& call, uint64_t delay_ms, Server::FinishFn fn, std::initializer_list<emcp::mcp::TextPiece> text) {
  const Pending p = call.defer();  // a task when the client allows it, else an ordinary deferred call
  if (!p.valid()) return;          // answered already (refused, or busy)
  if (!call.server().is_task(p) && delay_ms > 1000) delay_ms = 1000;
  for (TaskJob& j : g_task_jobs) {
    if (j.used) continue;
    j = TaskJob{};
    j.used = true;
    j.pending = p;
    j.due = call.server().now() + delay_ms;
    j.fn = fn;
    (void)emcp::mcp::format_text(j.text, sizeof j.text, text);
    return;
  }
  (void)call.server().complete(p, nullptr, nullptr);  // cannot happen: as many jobs as deferred calls
}

void job_text(ToolCall& call, void* ctx) { call.text(StrView(static_cast<const TaskJob*>(ctx)->text)); }
void job_fail(ToolCall& call, void* ctx) { call.fail(StrView(static_cast<const TaskJob*>(ctx)->text)); }
// A protocol-level error (-32602 from the handler, as a client that called it without a task
// gets too).
void job_error(ToolCall& call, void*) { call.invalid_params("The job's backend refused its input (a protocol-level error)."); }

// Asks for a confirmation in the task, then "deletes".
void confirm_step(ToolCall& call, void*) {
  if (call.input().accepted("confirm")["confirm"].as_bool().value_or(false)) return call.text("The file was deleted.");
  if (call.input().answer("confirm").exists()) return call.text("Nothing was deleted.");
  if (!call.input().elicit("confirm", "Delete the file?", kConfirmForm)) cannot_ask(call, "elicitation");
}

// Two questions at once; the task goes on when both are answered.
void multi_step(ToolCall& call, void*) {
  const Value name = call.input().accepted("name")["name"];
  const Value confirm = call.input().accepted("confirm");
  if (name.is_string() && confirm.exists()) return call.text({"Hello, ", name.as_string().value(), ": confirmed."});
  const bool asked = call.input().elicit("name", "What is your name?", kNameForm) &&
                     call.input().elicit("confirm", "Go on?", kConfirmForm);
  if (!asked) cannot_ask(call, "elicitation");
}

}  // namespace

void greet(ToolCall& call) { call.text({"Hello, ", call.str("name", "World"), "!"}); }

void slow_compute(ToolCall& call) {
  const int64_t seconds = call.integer("seconds", 1);
  start_job(call, static_cast<uint64_t>(seconds < 0 ? 0 : seconds > 3600 ? 3600 : seconds) * 1000, &job_text,
            {"Computed \"", call.str("label", "result"), "\" in ", static_cast<long long>(seconds), " s."});
}

void failing_job(ToolCall& call) { start_job(call, 1000, &job_fail, {"The job failed: the input could not be processed."}); }

void protocol_error_job(ToolCall& call) { start_job(call, 200, &job_error, {""}); }

void confirm_delete(ToolCall& call) { start_job(call, 0, &confirm_step, {""}); }

void multi_input(ToolCall& call) { start_job(call, 0, &multi_step, {""}); }

// Asks the user's name through an input round first (synchronously), then runs as a task.
void tool_with_task(ToolCall& call) {
  const Value name = call.input().accepted("user_name")["name"];
  if (!name.is_string()) {
    if (!call.input().elicit("user_name", "What is your name?", kNameForm)) cannot_ask(call, "elicitation");
    return;
  }
  start_job(call, 500, &job_text, {"Hello, ", name.as_string().value(), "! (from a task)"});
}

void install_tasks(Server& server) {
  g_task_server = &server;
  emcp::mcp::TaskPolicy policy;
  policy.ttl_ms = 30000;
  policy.poll_interval_ms = 200;
  server.set_tasks(g_tasks, policy);
}

void tasks_tick() {
  const uint64_t now = g_task_server->now();
  for (TaskJob& j : g_task_jobs) {
    if (!j.used) continue;
    if (g_task_server->cancelled(j.pending)) {  // at once: its deferred call is free again
      (void)g_task_server->complete(j.pending, nullptr, nullptr);
      j.used = false;
      continue;
    }
    if (now < j.due) continue;
    if (g_task_server->complete(j.pending, j.fn, &j) == emcp::Status::kWouldBlock) continue;  // busy channel
    j.used = false;
  }
}

uint64_t tasks_due() {
  uint64_t next = UINT64_MAX;
  for (const TaskJob& j : g_task_jobs)
    if (j.used && j.due < next) next = j.due;
  return next;
}

}  // namespace everything
