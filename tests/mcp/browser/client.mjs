// Runs in the browser (bundled by esbuild in browser_cors.test.mjs): the official SDK client
// over Streamable HTTP to the MCP endpoint named by the page's ?mcp= parameter; the outcome
// goes to window.__outcome and to the page (for the screenshot).
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";

const out = document.getElementById("out");
const show = (text) => { out.textContent += `${text}\n`; };

async function run() {
  const endpoint = new URL(new URLSearchParams(location.search).get("mcp"));
  show(`page ${location.origin} -> ${endpoint}`);
  const client = new Client({ name: "emcp-browser-test", version: "1.0.0" });
  const transport = new StreamableHTTPClientTransport(endpoint);
  await client.connect(transport);
  const server = client.getServerVersion();
  show(`initialized: ${server.name} ${server.version}, session ${transport.sessionId}`);
  const names = [];
  let cursor;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    names.push(...page.tools.map((t) => t.name));
    cursor = page.nextCursor;
  } while (cursor);
  show(`tools: ${names.join(", ")}`);
  const result = await client.callTool({ name: "read_sensor", arguments: { sensor: "temperature" } });
  show(`read_sensor: ${result.content[0].text}`);
  const session = transport.sessionId;  // read from Mcp-Session-Id (Access-Control-Expose-Headers)
  await transport.terminateSession();   // DELETE, preflighted too
  await client.close();
  return { ok: true, server: server.name, session, tools: names, text: result.content[0].text };
}

run().then(
  (outcome) => { window.__outcome = outcome; },
  (e) => { show(`error: ${e}`); window.__outcome = { ok: false, error: String(e) }; });
