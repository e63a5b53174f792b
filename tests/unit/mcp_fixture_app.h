// A small, deterministic MCP application for the server's unit tests and fuzz target: one of
// each kind of tool, resource and prompt emcp supports.
#ifndef EMCP_TESTS_MCP_FIXTURE_APP_H
#define EMCP_TESTS_MCP_FIXTURE_APP_H

#include "emcp/mcp/server.h"

namespace fixture {

/// Registers the fixture tables with `server`.
void install(emcp::mcp::Server& server);

/// Replaces the tables (two tools only, the same prompts and resources): sessions get the
/// list_changed notifications.
void change_tables();

/// The calls the `slow` tool deferred, oldest first; complete_slow() answers the oldest.
int pending_slow();
emcp::Status complete_slow();

/// The params of the `ask` tool's sampling/createMessage: one user message "Say something",
/// maxTokens 10.
void write_ask_params(emcp::json::Writer& w, const void* ctx);

/// The server install() was given.
emcp::mcp::Server* server();

/// The server's info (name "fixture", version "1.0.0", title, instructions).
const emcp::mcp::ServerInfo& info();

/// A fake clock for the server's timeouts.
uint64_t now_ms();
void advance_ms(uint64_t ms);
/// The fake clock as a Platform (no random source: stdio only).
const emcp::Platform& platform();

}  // namespace fixture

#endif
