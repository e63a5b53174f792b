// The consumer project's tools, the same on Linux (main.cpp) and on a board
// (../board_consumer/main.cpp): three of them, so that its EMCP_PAGE_SIZE of 2 shows.
#ifndef CONSUMER_TOOLS_H
#define CONSUMER_TOOLS_H

#include "emcp/mcp/server.h"

static_assert(EMCP_PAGE_SIZE == 2, "the project's emcp_config.h");

inline void hello(emcp::mcp::ToolCall& call) { call.text({"Hello from ", call.str("name", "a consumer"), "!"}); }
inline void nothing(emcp::mcp::ToolCall& call) { call.text("nothing"); }

constexpr emcp::mcp::Param kHelloArgs[] = {emcp::mcp::Param::string("name", "Whom to greet")};
constexpr emcp::mcp::Tool kTools[] = {
    emcp::mcp::Tool::make("hello", &hello).describe("Greets").with_params(kHelloArgs),
    emcp::mcp::Tool::make("second", &nothing),
    emcp::mcp::Tool::make("third", &nothing),
};
constexpr emcp::mcp::ServerInfo kInfo = {"consumer", "1.0"};

#endif
