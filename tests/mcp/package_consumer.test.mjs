// A project of someone else's built against the installed emcp package (tests/package/run.sh
// find_package): its server, with the project's emcp_config.h (EMCP_PAGE_SIZE 2), under the
// official SDK client at every revision: tools/list comes in pages of 2 that the client follows
// by cursor, the tool answers, every server message matches the official schema. On Linux over
// stdio (EMCP_CONSUMER), or the project's firmware in QEMU through emcp-bridge
// (EMCP_TRANSPORT=qemu, EMCP_FIRMWARE, EMCP_QEMU_MACHINE, EMCP_BRIDGE).
//   EMCP_CONSUMER=<work>/consumer/consumer node --test tests/mcp/package_consumer.test.mjs
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { CallToolResultSchema, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { closeChecked, connect } from "./lib/harness.mjs";
import { REVISIONS } from "./lib/schema.mjs";

const KIND = process.env.EMCP_TRANSPORT ?? "stdio";
const SERVER = process.env.EMCP_CONSUMER;
if (!SERVER && KIND === "stdio") throw new Error("EMCP_CONSUMER: the consumer project's server (tests/package/run.sh builds it)");

for (const revision of REVISIONS) {
  describe(`the installed package's consumer over ${KIND} at ${revision}`, () => {
    let client, transport, close;
    after(async () => {
      if (!client) return;
      const problems = await closeChecked({ transport, close }, revision);
      assert.deepEqual(problems, [], "every server message matches the official schema");
    });

    test("initialize names the project's server", async () => {
      ({ client, transport, close } = await connect({ command: SERVER, revision, transport: KIND }));
      const init = transport.received[0].message.result;
      assert.equal(init.protocolVersion, revision);
      assert.deepEqual(init.serverInfo, { name: "consumer", version: "1.0" });
    });

    test("tools/list: pages of the project's size (2), followed by cursor", async () => {
      const pages = [];
      let cursor;
      do {
        const page = await client.request({ method: "tools/list", params: cursor ? { cursor } : {} }, ListToolsResultSchema);
        pages.push(page.tools.map((t) => t.name));
        cursor = page.nextCursor;
      } while (cursor && pages.length < 5);
      assert.deepEqual(pages, [["hello", "second"], ["third"]]);
    });

    test("tools/call answers with the argument", async () => {
      const r = await client.request({ method: "tools/call", params: { name: "hello", arguments: { name: "the SDK" } } }, CallToolResultSchema);
      assert.deepEqual(r.content, [{ type: "text", text: "Hello from the SDK!" }]);
    });
  });
}
