// The official MCP TypeScript SDK server with an echo tool equivalent to emcp-sensors' `echo`,
// over stdio: the peer of the stdio benchmark.
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
import { z } from "zod";

const server = new McpServer({ name: "ts-echo", version: "1.0.0" });
server.registerTool(
  "echo",
  { title: "Echo", description: "Answers with the given text", inputSchema: { text: z.string().max(1000) } },
  async ({ text }) => ({ content: [{ type: "text", text }] }),
);
await server.connect(new StdioServerTransport());
