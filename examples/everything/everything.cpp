// The emcp-everything application: every fixture the official MCP conformance suite's server
// scenarios expect (@modelcontextprotocol/conformance), for any platform. main_posix.cpp serves
// it on Linux (stdio or HTTP), main_board.cpp on a board (its UART and, over lwIP, HTTP).
//
// Tools that take time (logging, progress, sampling, elicitation) defer their answer and
// finish from the loop's tick, as a firmware would; test_reconnection ends its SSE stream on
// purpose so the client resumes with Last-Event-ID (SEP-1699).
#include <string.h>

#include "emcp/json/writer.h"
#include "emcp/mcp/server.h"
#include "everything.h"

using emcp::Status;
using emcp::StrView;
using namespace emcp::mcp;

namespace {

constexpr const char* kLogger = "conformance-test-server";

// A 1x1 red pixel (PNG) and a short WAV tone, built at start.
constexpr uint8_t kPng[] = {
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x02, 0x00, 0x00, 0x00, 0x90, 0x77, 0x53,
    0xde, 0x00, 0x00, 0x00, 0x0c, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0xf8, 0xcf, 0xc0, 0x00,
    0x00, 0x03, 0x01, 0x01, 0x00, 0xc9, 0xfe, 0x92, 0xef, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e,
    0x44, 0xae, 0x42, 0x60, 0x82};
constexpr uint32_t kWavSamples = 800;  // 0.1 s at 8 kHz, 8-bit mono
uint8_t g_wav[44 + kWavSamples];

void put_le(uint8_t* p, uint32_t v, int bytes) {
  for (int i = 0; i < bytes; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

void build_wav() {
  uint8_t* p = g_wav;
  memcpy(p, "RIFF", 4);
  put_le(p + 4, 36 + kWavSamples, 4);
  memcpy(p + 8, "WAVEfmt ", 8);
  put_le(p + 16, 16, 4);     // fmt chunk size
  put_le(p + 20, 1, 2);      // PCM
  put_le(p + 22, 1, 2);      // mono
  put_le(p + 24, 8000, 4);   // sample rate
  put_le(p + 28, 8000, 4);   // byte rate
  put_le(p + 32, 1, 2);      // block align
  put_le(p + 34, 8, 2);      // bits per sample
  memcpy(p + 36, "data", 4);
  put_le(p + 40, kWavSamples, 4);
  for (uint32_t i = 0; i < kWavSamples; ++i) g_wav[44 + i] = (i / 10) % 2 ? 0xC0 : 0x40;  // 400 Hz square
}

Server* g_server = nullptr;

// Renders a JSON value as text into buf (cut at the end of buf).
StrView json_text(emcp::json::Value v, char* buf, size_t cap) {
  emcp::json::BufferSink sink(buf, cap);
  emcp::json::Writer w(sink);
  if (v.exists()) emcp::json::write_value(w, v);
  else sink.write("null", 4);
  return sink.view();
}

// ---- Work that finishes later (deferred calls) ------------------------------------------------

enum class JobKind : uint8_t { kNone, kLogging, kProgress, kAnswer };
struct Job {
  JobKind kind = JobKind::kNone;
  Pending pending;
  uint8_t step = 0;
  uint64_t due = 0;
  bool failed = false;
  char text[512];
};
Job g_jobs[EMCP_MAX_DEFERRED];

Job* new_job(JobKind kind, Pending p, uint64_t due) {
  for (Job& j : g_jobs) {
    if (j.kind != JobKind::kNone) continue;
    j.kind = kind;
    j.pending = p;
    j.step = 0;
    j.due = due;
    j.failed = false;
    j.text[0] = '\0';
    return &j;
  }
  return nullptr;
}

void set_text(Job* j, std::initializer_list<TextPiece> pieces, bool failed) {
  (void)format_text(j->text, sizeof j->text, pieces);
  j->failed = failed;
}

void log_step(ToolCall& call, void* ctx) {
  Job* j = static_cast<Job*>(ctx);
  if (j->step == 1) {
    (void)call.log(LogLevel::kInfo, "Tool processing data", kLogger);
    j->pending = call.defer();  // more to come
    return;
  }
  (void)call.log(LogLevel::kInfo, "Tool execution completed", kLogger);
  call.text("Logging test completed: 3 log messages sent.");
}

void answer_step(ToolCall& call, void* ctx) {
  const Job* j = static_cast<const Job*>(ctx);
  if (j->failed) call.fail(StrView(j->text));
  else call.text(StrView(j->text));
}

void progress_done(ToolCall& call, void*) { call.text("Progress test completed: 0, 50 and 100 of 100."); }

// Finishes what is due; a busy channel (kWouldBlock) is retried on the next tick.
void run_jobs() {
  const uint64_t now = g_server->now();
  for (Job& j : g_jobs) {
    if (j.kind == JobKind::kNone || now < j.due) continue;
    if (g_server->cancelled(j.pending)) {
      (void)g_server->complete(j.pending, nullptr, nullptr);
      j.kind = JobKind::kNone;
      continue;
    }
    Status s = Status::kOk;
    switch (j.kind) {
      case JobKind::kLogging:
        ++j.step;
        s = g_server->complete(j.pending, &log_step, &j);
        if (s == Status::kWouldBlock) {
          --j.step;
          continue;
        }
        if (s == Status::kOk && j.step == 1 && j.pending.valid()) {
          j.due = now + 50;
          continue;
        }
        break;
      case JobKind::kProgress:
        if (j.step == 0) {
          (void)g_server->progress(j.pending, 50, 100);
          j.step = 1;
          j.due = now + 50;
          continue;
        }
        (void)g_server->progress(j.pending, 100, 100);
        s = g_server->complete(j.pending, &progress_done, nullptr);
        if (s == Status::kWouldBlock) continue;
        break;
      case JobKind::kAnswer:
        if (j.due == UINT64_MAX) continue;  // still waiting for the client
        s = g_server->complete(j.pending, &answer_step, &j);
        if (s == Status::kWouldBlock) continue;
        break;
      case JobKind::kNone:
        break;
    }
    j.kind = JobKind::kNone;
  }
}

void outcome_text(Job* j, const Response& r, const char* what) {
  switch (r.outcome) {
    case Response::Outcome::kError:
      set_text(j, {"The client refused the ", what, ": ", r.message}, true);
      break;
    case Response::Outcome::kTimeout:
      set_text(j, {"The client did not answer the ", what, " in time."}, true);
      break;
    case Response::Outcome::kClosed:
      set_text(j, {"The connection closed during the ", what, "."}, true);
      break;
    case Response::Outcome::kResult:
      break;
  }
}

// A deferred call that waits for the client; answered once on_* fills the job.
Job* wait_for_client(ToolCall& call) {
  const Pending p = call.defer();
  if (!p.valid()) return nullptr;  // answered already (busy)
  Job* j = new_job(JobKind::kAnswer, p, UINT64_MAX);
  if (j == nullptr) {  // cannot happen: as many jobs as deferred slots
    (void)g_server->complete(p, nullptr, nullptr);
  }
  return j;
}

void ready(Job* j) { j->due = 0; }

// ---- Tools --------------------------------------------------------------------------------------

void test_simple_text(ToolCall& call) { call.text("This is a simple text response for testing."); }

void test_image_content(ToolCall& call) { call.image(kPng, sizeof kPng, "image/png"); }

void test_audio_content(ToolCall& call) { call.audio(g_wav, sizeof g_wav, "audio/wav"); }

void test_embedded_resource(ToolCall& call) {
  call.resource_text("test://embedded-resource", "text/plain", "This is an embedded resource content.");
}

void test_multiple_content_types(ToolCall& call) {
  call.text("Multiple content types test:");
  call.image(kPng, sizeof kPng, "image/png");
  call.resource_text("test://mixed-content-resource", "application/json", "{\"test\":\"data\",\"value\":123}");
}

void test_tool_with_logging(ToolCall& call) {
  (void)call.log(LogLevel::kInfo, "Tool execution started", kLogger);
  const Pending p = call.defer();
  if (p.valid()) (void)new_job(JobKind::kLogging, p, g_server->now() + 50);
}

void test_tool_with_progress(ToolCall& call) {
  (void)call.progress(0, 100);
  const Pending p = call.defer();
  if (p.valid()) (void)new_job(JobKind::kProgress, p, g_server->now() + 50);
}

void test_error_handling(ToolCall& call) { call.fail("This tool intentionally returns an error for testing"); }

void on_sampling(const Response& r, void* ctx) {
  Job* j = static_cast<Job*>(ctx);
  if (r.outcome == Response::Outcome::kResult)
    set_text(j, {"LLM response: ", r.result["content"]["text"].as_string().value_or("(no text)")}, false);
  else
    outcome_text(j, r, "sampling request");
  ready(j);
}

void test_sampling(ToolCall& call) {
  if (!call.session().client().sampling) return call.fail("The client does not support sampling.");
  const StrView prompt = call.str("prompt");  // in the request's arena: written out below, at once
  Job* j = wait_for_client(call);
  if (j == nullptr) return;
  const Status s = g_server->sample_text(call.session(), prompt, 100, &on_sampling, j);
  if (s != Status::kOk) {
    set_text(j, {"Could not ask the client's model (", emcp::status_str(s), ")."}, true);
    ready(j);
  }
}

// Elicitation: the answer is reported as the scenarios' texts have it.
void on_elicitation(const Response& r, void* ctx) {
  Job* j = static_cast<Job*>(ctx);
  if (r.outcome != Response::Outcome::kResult) {
    outcome_text(j, r, "elicitation request");
  } else {
    char content[384];
    char prefix[32];
    (void)format_text(prefix, sizeof prefix, {j->text});
    const StrView action = r.result["action"].as_string().value_or("?");
    const StrView json = json_text(r.result["content"], content, sizeof content);
    set_text(j, {prefix, "action=", action, ", content=", json}, false);
  }
  ready(j);
}

void elicit_with(ToolCall& call, StrView message, emcp::Span<const Param> form, const char* prefix) {
  if (!call.session().client().elicitation_form) return call.fail("The client does not support elicitation.");
  Job* j = wait_for_client(call);
  if (j == nullptr) return;
  set_text(j, {prefix}, false);
  const Status s = g_server->elicit(call.session(), message, form, &on_elicitation, j);
  if (s != Status::kOk) {
    set_text(j, {"Could not ask the user (", emcp::status_str(s), ")."}, true);
    ready(j);
  }
}

constexpr Param kUserForm[] = {
    Param::string("username", "User's response").required(),
    Param::string("email", "User's email address").required(),
};

void test_elicitation(ToolCall& call) {
  elicit_with(call, call.str("message", "Please provide your information"), kUserForm, "User response: ");
}

constexpr const char* kStatuses[] = {"active", "inactive", "pending"};
constexpr Param kDefaultsForm[] = {
    Param::string("name", "User name").with_default("John Doe"),
    Param::integer("age", "User age").with_default(30),
    Param::number("score", "User score").with_default(95.5),
    Param::string("status", "User status").one_of(kStatuses).with_default("active"),
    Param::boolean("verified", "Verification status").with_default(true),
};

void test_elicitation_sep1034_defaults(ToolCall& call) {
  elicit_with(call, "Test client default value handling - please accept with defaults", kDefaultsForm,
              "Elicitation completed: ");
}

constexpr Param kStringItem = Param::string("item");
constexpr Param kEnumsForm[] = {
    Param::string("untitledSingle", "Untitled single-select")
        .raw(R"({"type":"string","description":"Untitled single-select","enum":["option1","option2","option3"]})"),
    Param::string("titledSingle", "Titled single-select")
        .raw(R"({"type":"string","description":"Titled single-select","oneOf":[)"
             R"({"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},)"
             R"({"const":"value3","title":"Third Option"}]})"),
    Param::string("legacyEnum", "Legacy titled enum")
        .raw(R"({"type":"string","description":"Legacy titled enum","enum":["opt1","opt2","opt3"],)"
             R"("enumNames":["Option One","Option Two","Option Three"]})"),
    Param::array("untitledMulti", kStringItem, "Untitled multi-select")
        .raw(R"({"type":"array","description":"Untitled multi-select","items":{"type":"string",)"
             R"("enum":["option1","option2","option3"]}})"),
    Param::array("titledMulti", kStringItem, "Titled multi-select")
        .raw(R"({"type":"array","description":"Titled multi-select","items":{"anyOf":[)"
             R"({"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},)"
             R"({"const":"value3","title":"Third Choice"}]}})"),
};

void test_elicitation_sep1330_enums(ToolCall& call) {
  elicit_with(call, "Test enum schema variants (SEP-1330)", kEnumsForm, "Elicitation completed: ");
}

void json_schema_2020_12_tool(ToolCall& call) {
  call.text({"Received name: ", call.str("name", "(none)")});
}

void test_reconnection(ToolCall& call) {
  // Ends the SSE stream before the answer; the client reconnects after 500 ms with
  // Last-Event-ID and gets the answer from the session's replay buffer.
  (void)call.close_stream(500);
  call.text("Reconnection test completed successfully");
}

// 2026-07-28 subscriptions/listen: these change the tool or prompt list (the last entry of
// each table comes and goes), so the change reaches the listen streams that asked for it.
void test_trigger_tool_change(ToolCall& call);
void test_trigger_prompt_change(ToolCall& call);
void test_dynamic_tool(ToolCall& call) { call.text("A tool that test_trigger_tool_change adds and removes"); }

// 2026-07-28 Streamable HTTP: arguments mirrored in Mcp-Param-* headers (x-mcp-header), which
// the server checks against the body before the call.
constexpr Param kHeaderParams[] = {
    Param::string("region", "Where to run (mirrored in the Mcp-Param-Region header)").in_header("Region").required(),
    Param::integer("priority", "Mirrored in Mcp-Param-Priority").in_header("Priority"),
    Param::boolean("dry_run", "Mirrored in Mcp-Param-Dry-Run").in_header("Dry-Run"),
    Param::string("query", "Not mirrored"),
};
void test_custom_header(ToolCall& call) { call.text({"Ran in region ", call.str("region")}); }

constexpr Param kPromptArg[] = {Param::string("prompt", "The prompt to send to the LLM").required()};
constexpr Param kMessageArg[] = {Param::string("message", "The message to show the user").required()};

constexpr const char* kSchema2020 =
    R"({"$schema":"https://json-schema.org/draft/2020-12/schema","type":"object",)"
    R"("$defs":{"address":{"$anchor":"address","type":"object","properties":{"street":{"type":"string"},"city":{"type":"string"}}}},)"
    R"("properties":{"name":{"type":"string"},"address":{"$ref":"#/$defs/address"}},"additionalProperties":false,)"
    R"("allOf":[{"anyOf":[{"required":["name"]},{"required":["address"]}]}],)"
    R"("if":{"properties":{"name":{"const":"home"}}},"then":{"required":["address"]},"else":{}})";

constexpr Param kGreetArgs[] = {Param::string("name", "Whom to greet")};
constexpr Param kComputeArgs[] = {Param::integer("seconds", "How long the computation takes").range(0, 3600),
                                  Param::string("label", "A name for the result")};
constexpr Param kFileArgs[] = {Param::string("filename", "The file to delete")};

constexpr Tool kTools[] = {
    Tool::make("test_simple_text", &test_simple_text).describe("Returns a simple text response").read_only(),
    Tool::make("test_image_content", &test_image_content).describe("Returns an image (a 1x1 red PNG)").read_only(),
    Tool::make("test_audio_content", &test_audio_content).describe("Returns audio (a short WAV tone)").read_only(),
    Tool::make("test_embedded_resource", &test_embedded_resource).describe("Returns an embedded text resource").read_only(),
    Tool::make("test_multiple_content_types", &test_multiple_content_types)
        .describe("Returns text, an image and an embedded resource").read_only(),
    Tool::make("test_tool_with_logging", &test_tool_with_logging)
        .describe("Sends three log messages 50 ms apart while it works"),
    Tool::make("test_tool_with_progress", &test_tool_with_progress)
        .describe("Reports progress 0, 50 and 100 of 100, 50 ms apart"),
    Tool::make("test_error_handling", &test_error_handling).describe("Always fails (isError)"),
    Tool::make("test_sampling", &test_sampling).describe("Asks the client's model (sampling)").with_params(kPromptArg),
    Tool::make("test_elicitation", &test_elicitation).describe("Asks the user (elicitation)").with_params(kMessageArg),
    Tool::make("test_elicitation_sep1034_defaults", &test_elicitation_sep1034_defaults)
        .describe("Elicitation with default values of every primitive type (SEP-1034)"),
    Tool::make("test_elicitation_sep1330_enums", &test_elicitation_sep1330_enums)
        .describe("Elicitation with the five enum schema variants (SEP-1330)"),
    Tool::make("json_schema_2020_12_tool", &json_schema_2020_12_tool)
        .describe("Tool with JSON Schema 2020-12 features").with_input_schema(kSchema2020),
    // Within the first page of tools/list (EMCP_PAGE_SIZE): the suite looks there for it.
    Tool::make("test_custom_header", &test_custom_header)
        .describe("Arguments mirrored in Mcp-Param-* headers (x-mcp-header)").with_params(kHeaderParams),
    Tool::make("test_reconnection", &test_reconnection)
        .describe("Closes its SSE stream before answering, to test client reconnection (SEP-1699)"),
    // 2026-07-28 (input_required.cpp).
    Tool::make("test_input_required_result_elicitation", &everything::input_elicitation)
        .describe("Asks the user's name through an input-required result (elicitation)"),
    Tool::make("test_input_required_result_sampling", &everything::input_sampling)
        .describe("Asks the client's model through an input-required result (sampling)"),
    Tool::make("test_input_required_result_list_roots", &everything::input_list_roots)
        .describe("Asks for the client's roots through an input-required result"),
    Tool::make("test_input_required_result_request_state", &everything::input_request_state)
        .describe("Asks with a requestState that must come back unchanged"),
    Tool::make("test_input_required_result_multiple_inputs", &everything::input_multiple)
        .describe("Asks for elicitation, sampling and roots at once"),
    Tool::make("test_input_required_result_multi_round", &everything::input_multi_round)
        .describe("Asks twice, in two rounds, before answering"),
    Tool::make("test_input_required_result_tampered_state", &everything::input_tampered_state)
        .describe("Asks with a requestState; a changed one is refused"),
    Tool::make("test_input_required_result_capabilities", &everything::input_capabilities)
        .describe("Asks only for what the request's client capabilities allow"),
    Tool::make("test_missing_capability", &everything::missing_capability)
        .describe("Needs the client's sampling capability (-32021 without it at 2026-07-28)"),
    Tool::make("test_streaming_elicitation", &everything::streaming_elicitation)
        .describe("Elicits during a call: an input-required result at 2026-07-28, never a request"),
    Tool::make("test_logging_tool", &everything::logging_tool)
        .describe("Logs two messages (to requests that named a logLevel), then answers"),
    // Tasks (io.modelcontextprotocol/tasks, SEP-2663).
    Tool::make("greet", &everything::greet).describe("Greets (never a task)").with_params(kGreetArgs),
    Tool::make("slow_compute", &everything::slow_compute)
        .describe("Computes for `seconds` seconds; a task when the client allows it").with_params(kComputeArgs)
        .runs_as_task(),
    Tool::make("failing_job", &everything::failing_job)
        .describe("A job that ends with a tool error after 1 s; only as a task").runs_as_task(TaskSupport::kRequired),
    Tool::make("protocol_error_job", &everything::protocol_error_job)
        .describe("A job that ends with a JSON-RPC error; a task when allowed").runs_as_task(),
    Tool::make("confirm_delete", &everything::confirm_delete)
        .describe("Asks for a confirmation inside its task, then deletes").with_params(kFileArgs).runs_as_task(),
    Tool::make("multi_input", &everything::multi_input)
        .describe("Asks two questions at once inside its task").runs_as_task(),
    Tool::make("test_tool_with_task", &everything::tool_with_task)
        .describe("Asks the user's name (an input round), then runs as a task").runs_as_task(TaskSupport::kRequired),
    Tool::make("test_trigger_tool_change", &test_trigger_tool_change)
        .describe("Adds or removes test_dynamic_tool: the tool list changes"),
    Tool::make("test_trigger_prompt_change", &test_trigger_prompt_change)
        .describe("Adds or removes test_dynamic_prompt: the prompt list changes"),
    // Last: listed only while test_trigger_tool_change has added it.
    Tool::make("test_dynamic_tool", &test_dynamic_tool).describe("Comes and goes with test_trigger_tool_change"),
};
constexpr size_t kStaticTools = sizeof kTools / sizeof kTools[0] - 1;

// ---- Resources ----------------------------------------------------------------------------------

void read_static_text(ResourceRead& r) { r.text("This is the content of the static text resource."); }
void read_static_binary(ResourceRead& r) { r.blob(kPng, sizeof kPng); }

uint32_t g_watched_version = 0;
uint64_t g_watched_next = 0;
void read_watched(ResourceRead& r) {
  if (g_watched_version == 0) return r.text("Watched resource content");
  r.text({"Watched resource content (update ", static_cast<long long>(g_watched_version), ")"});
}

void read_template(ResourceRead& r) {
  const StrView id = r.var("id");
  r.text({"{\"id\":\"", id, "\",\"templateTest\":true,\"data\":\"Data for ID: ", id, "\"}"});
}

constexpr const char* kIds[] = {"1", "2", "3", "123"};
void complete_id(Completion& c) { c.add_matching(kIds); }

constexpr Resource kResources[] = {
    Resource::make("test://static-text", "Static Text Resource", &read_static_text)
        .describe("A static text resource for testing").mime("text/plain"),
    Resource::make("test://static-binary", "Static Binary Resource", &read_static_binary)
        .describe("A static binary resource (image) for testing").mime("image/png").sized(sizeof kPng),
    Resource::make("test://watched-resource", "Watched Resource", &read_watched)
        .describe("A resource that can be subscribed to (it changes every 5 s)").mime("text/plain"),
};

constexpr ResourceTemplate kTemplates[] = {
    ResourceTemplate::make("test://template/{id}/data", "Resource Template", &read_template)
        .describe("A resource template with parameter substitution").mime("application/json")
        .completed_by(&complete_id),
};

// ---- Prompts ------------------------------------------------------------------------------------

void simple_prompt(PromptGet& p) { p.user("This is a simple prompt for testing."); }

void prompt_with_arguments(PromptGet& p) {
  p.user({"Prompt with arguments: arg1='", p.arg("arg1"), "', arg2='", p.arg("arg2"), "'"});
}

void prompt_with_embedded_resource(PromptGet& p) {
  p.message(Role::kUser).resource_text(p.arg("resourceUri"), "text/plain", "Embedded resource content for testing.");
  p.user("Please process the embedded resource above.");
}

void prompt_with_image(PromptGet& p) {
  p.message(Role::kUser).image(kPng, sizeof kPng, "image/png");
  p.user("Please analyze the image above.");
}

constexpr const char* kCities[] = {"paris", "park", "party", "test", "testing"};
void complete_arg(Completion& c) { c.add_matching(kCities); }

constexpr PromptArg kTwoArgs[] = {
    PromptArg::make("arg1", "First test argument").required().completed_by(&complete_arg),
    PromptArg::make("arg2", "Second test argument").required(),
};
constexpr PromptArg kResourceArg[] = {PromptArg::make("resourceUri", "URI of the resource to embed").required()};

constexpr Prompt kPrompts[] = {
    Prompt::make("test_simple_prompt", &simple_prompt).describe("A simple prompt without arguments"),
    Prompt::make("test_prompt_with_arguments", &prompt_with_arguments)
        .describe("A prompt with required arguments").with_args(kTwoArgs),
    Prompt::make("test_prompt_with_embedded_resource", &prompt_with_embedded_resource)
        .describe("A prompt that embeds a resource").with_args(kResourceArg),
    Prompt::make("test_prompt_with_image", &prompt_with_image).describe("A prompt with an image"),
    Prompt::make("test_input_required_result_prompt", &everything::input_prompt)
        .describe("Asks whom to greet through an input-required result (2026-07-28)"),
    // Last: listed only while test_trigger_prompt_change has added it.
    Prompt::make("test_dynamic_prompt", &simple_prompt).describe("Comes and goes with test_trigger_prompt_change"),
};
constexpr size_t kStaticPrompts = sizeof kPrompts / sizeof kPrompts[0] - 1;

void test_trigger_tool_change(ToolCall& call) {
  const bool added = g_server->tools().size() == kStaticTools;
  g_server->set_tools(emcp::Span<const Tool>(kTools, added ? kStaticTools + 1 : kStaticTools));
  call.text(added ? "test_dynamic_tool added" : "test_dynamic_tool removed");
}

void test_trigger_prompt_change(ToolCall& call) {
  const bool added = g_server->prompts().size() == kStaticPrompts;
  g_server->set_prompts(emcp::Span<const Prompt>(kPrompts, added ? kStaticPrompts + 1 : kStaticPrompts));
  call.text(added ? "test_dynamic_prompt added" : "test_dynamic_prompt removed");
}

}  // namespace

namespace everything {

const ServerInfo kInfo = [] {
  ServerInfo i;
  i.name = "emcp-everything";
  i.version = "0.1.0";
  i.title = "emcp conformance server";
  i.description = "Every fixture of the official MCP conformance server scenarios, served by emcp.";
  return i;
}();

void tick() {
  run_jobs();
  tasks_tick();
  const uint64_t now = g_server->now();
  if (now >= g_watched_next) {
    if (g_watched_next != 0) {
      ++g_watched_version;
      g_server->resource_updated("test://watched-resource");
    }
    g_watched_next = now + 5000;
  }
}

uint32_t next_tick_ms() {
  const uint64_t now = g_server->now();
  uint64_t next = g_watched_next;
  for (const Job& j : g_jobs)
    if (j.kind != JobKind::kNone && j.due < next) next = j.due;
  if (tasks_due() < next) next = tasks_due();
  return next <= now ? 0 : static_cast<uint32_t>(next - now > 1000 ? 1000 : next - now);
}

void install(Server& server) {
  build_wav();
  g_server = &server;
  server.set_tools(emcp::Span<const Tool>(kTools, kStaticTools));
  server.set_resources(kResources);
  server.set_templates(kTemplates);
  server.set_prompts(emcp::Span<const Prompt>(kPrompts, kStaticPrompts));
  install_tasks(server);
}

// sampling/createMessage params: one user message, the text at `ctx` (a C string).
}  // namespace everything
