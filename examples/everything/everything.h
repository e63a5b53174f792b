// The emcp-everything application (everything.cpp): the conformance suite's fixtures, for any
// platform. The server's clock paces its deferred tools.
#ifndef EMCP_EXAMPLES_EVERYTHING_H
#define EMCP_EXAMPLES_EVERYTHING_H

#include <stdint.h>

#include "emcp/mcp/server.h"

namespace everything {

extern const emcp::mcp::ServerInfo kInfo;

/// Registers the tables with `server` (which must outlive the application).
void install(emcp::mcp::Server& server);
/// The periodic work: deferred tools' next steps, the watched resource's updates.
void tick();
/// How long the loop may sleep before tick() has work (at most 1,000 ms).
uint32_t next_tick_ms();

// The 2026-07-28 fixtures (input_required.cpp): input-required results, a needed capability,
// a logging tool.
void input_elicitation(emcp::mcp::ToolCall& call);
void input_sampling(emcp::mcp::ToolCall& call);
void input_list_roots(emcp::mcp::ToolCall& call);
void input_request_state(emcp::mcp::ToolCall& call);
void input_multiple(emcp::mcp::ToolCall& call);
void input_multi_round(emcp::mcp::ToolCall& call);
void input_tampered_state(emcp::mcp::ToolCall& call);
void input_capabilities(emcp::mcp::ToolCall& call);
void missing_capability(emcp::mcp::ToolCall& call);
void streaming_elicitation(emcp::mcp::ToolCall& call);
void logging_tool(emcp::mcp::ToolCall& call);
void input_prompt(emcp::mcp::PromptGet& p);

// The tasks fixtures (input_required.cpp; the io.modelcontextprotocol/tasks extension).
void greet(emcp::mcp::ToolCall& call);
void slow_compute(emcp::mcp::ToolCall& call);
void failing_job(emcp::mcp::ToolCall& call);
void protocol_error_job(emcp::mcp::ToolCall& call);
void confirm_delete(emcp::mcp::ToolCall& call);
void multi_input(emcp::mcp::ToolCall& call);
void tool_with_task(emcp::mcp::ToolCall& call);
/// Gives `server` the tasks' storage.
void install_tasks(emcp::mcp::Server& server);
/// Finishes the tasks' jobs that are due; when the next one is (UINT64_MAX: none).
void tasks_tick();
uint64_t tasks_due();

}  // namespace everything

#endif
