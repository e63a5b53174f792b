// The official MCP TypeScript SDK server with the same echo tool as server.mjs, over Streamable
// HTTP (StreamableHTTPServerTransport, stateful: one transport and server per session, as the
// SDK's examples do): the peer of the HTTP benchmark. JSON answers (enableJsonResponse), the
// transport's fastest mode; EMCP_TS_SSE=1 answers with event streams (the SDK default).
//
//   node http-server.mjs PORT
import http from "node:http";
import { randomUUID } from "node:crypto";
import { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import { z } from "zod";

const port = Number(process.argv[2]);
const transports = new Map();

function newServer() {
  const server = new McpServer({ name: "ts-echo", version: "1.0.0" });
  server.registerTool(
    "echo",
    { title: "Echo", description: "Answers with the given text", inputSchema: { text: z.string().max(1000) } },
    async ({ text }) => ({ content: [{ type: "text", text }] }),
  );
  return server;
}

const httpServer = http.createServer(async (req, res) => {
  let body = "";
  for await (const chunk of req) body += chunk;
  const parsed = body ? JSON.parse(body) : undefined;
  const sid = req.headers["mcp-session-id"];
  let transport = sid ? transports.get(sid) : undefined;
  if (!transport) {
    if (sid || !isInitializeRequest(parsed)) {
      res.writeHead(400).end("no session");
      return;
    }
    transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      enableJsonResponse: process.env.EMCP_TS_SSE !== "1",
      onsessioninitialized: (id) => transports.set(id, transport),
    });
    transport.onclose = () => transports.delete(transport.sessionId);
    await newServer().connect(transport);
  }
  await transport.handleRequest(req, res, parsed);
});
httpServer.keepAliveTimeout = 60000;
httpServer.listen(port, "127.0.0.1", () => console.error(`ts http server on 127.0.0.1:${port}`));
