// The README's minimal server (examples/minimal) driven by the official SDK client at every
// revision: on Linux over stdio (EMCP_MINIMAL), on a board in QEMU through emcp-bridge
// (EMCP_TRANSPORT=qemu, EMCP_FIRMWARE = the minimal image). The image the footprint budget is
// checked on must also be the one that works. Every server message is schema-checked.
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import { CallToolResultSchema, ListToolsResultSchema } from "@modelcontextprotocol/sdk/types.js";
import { closeChecked, connect } from "./lib/harness.mjs";
import { REVISIONS } from "./lib/schema.mjs";

const KIND = process.env.EMCP_TRANSPORT ?? "stdio";
const SERVER = process.env.EMCP_MINIMAL ?? new URL("../../build/native/bin/emcp-minimal", import.meta.url).pathname;

for (const revision of REVISIONS) {
  describe(`minimal server over ${KIND} at ${revision}`, () => {
    let client, transport, close;
    after(async () => {
      if (!client) return;
      const problems = await closeChecked({ transport, close }, revision);  // QEMU stopped too
      assert.deepEqual(problems, [], "every server message matches the official schema");
    });

    test("initialize offers tools (and logging), nothing it does not have", async () => {
      ({ client, transport, close } = await connect({ command: SERVER, revision, transport: KIND }));
      const init = transport.received[0].message.result;
      assert.equal(init.protocolVersion, revision);
      assert.deepEqual(Object.keys(init.capabilities).sort(), ["logging", "tools"]);
      assert.deepEqual(init.serverInfo, { name: "minimal", version: "1.0" });
    });

    test("tools/list has the one tool, an empty object schema, read-only where annotations exist", async () => {
      const { tools } = await client.request({ method: "tools/list", params: {} }, ListToolsResultSchema);
      assert.equal(tools.length, 1);
      assert.equal(tools[0].name, "read_temperature");
      assert.deepEqual(tools[0].inputSchema, { type: "object", properties: {} });
      if (revision !== "2024-11-05") assert.equal(tools[0].annotations.readOnlyHint, true);
      else assert.equal(tools[0].annotations, undefined);
    });

    test("tools/call answers the reading, fixed point, with any arguments object", async () => {
      for (const args of [undefined, {}, { unexpected: 1.5 }]) {
        const r = await client.request({ method: "tools/call", params: { name: "read_temperature", arguments: args } }, CallToolResultSchema);
        assert.deepEqual(r.content, [{ type: "text", text: "Temperature: 21.5 \u00B0C" }]);
      }
    });

    test("errors: unknown tool and unknown method, then it keeps serving", async () => {
      await assert.rejects(client.request({ method: "tools/call", params: { name: "nope" } }, CallToolResultSchema), /-32602|unknown tool/);
      await assert.rejects(client.request({ method: "resources/list", params: {} }, CallToolResultSchema), /-32601|not found/i);
      await client.ping();
    });
  });
}
