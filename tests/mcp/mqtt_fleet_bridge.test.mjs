// emcp-bridge --mqtt --fleet (tools/bridge/fleet_link.h, docs/mqtt.md "A fleet as one server"):
// the official SDK client over stdio to the bridge, which serves every emcp-sensors device on a
// Mosquitto of the test's own as one server. Tools named DEVICE-ID.TOOL; a call reaches its
// device; a device joining or leaving is a notifications/tools/list_changed and changes the list;
// a call to a device that left is an error; every message the client gets matches the official
// schema; every process ends cleanly.
//
//   EMCP_SENSORS=... EMCP_BRIDGE=... EMCP_SHARED_DIR=... node --test tests/mcp/mqtt_fleet_bridge.test.mjs
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { test } from "node:test";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { ToolListChangedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { startBroker } from "./lib/broker.mjs";
import { RecordingTransport, waitFor } from "./lib/harness.mjs";
import { stopServer, watchServer } from "./lib/server_exit.mjs";

const SENSORS = process.env.EMCP_SENSORS;
const BRIDGE = process.env.EMCP_BRIDGE;
const REVISION = "2025-11-25";

test("a fleet of devices as one server: tools by device, joins and leaves as list changes", async () => {
  assert.ok(SENSORS && BRIDGE, "EMCP_SENSORS and EMCP_BRIDGE name the programs");
  const broker = await startBroker();
  const fleet = `devices/fleet${Math.random().toString(16).slice(2, 8)}`;
  const devices = new Map();  // id -> watch
  const startDevice = async (n) => {
    const id = `dev-${n}`;
    const proc = spawn(SENSORS, ["--mqtt", broker.url, "--mqtt-name", `${fleet}/room${n}`, "--mqtt-id", id],
                       { stdio: ["pipe", "ignore", "pipe"] });
    const w = watchServer(proc, `emcp-sensors ${id}`);
    devices.set(id, w);
    await waitFor(() => /mqtt: connected/.test(w.stderr()), 5000, `${id} connected to the broker`);
    return id;
  };
  const problems = [];
  let client = null, transport = null, bridge = null;
  try {
    for (const n of [1, 2, 3]) await startDevice(n);
    const inner = new StdioClientTransport({ command: BRIDGE, args: ["--mqtt", broker.url, "--mqtt-name", `${fleet}/#`, "--fleet"],
                                             stderr: "pipe" });
    transport = new RecordingTransport(inner, REVISION);
    client = new Client({ name: "emcp-fleet-test", version: "1.0.0" }, { capabilities: {} });
    let changes = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => { ++changes; });
    await client.connect(transport);
    bridge = watchServer(inner._process, "emcp-bridge --fleet", inner.stderr);

    const names = async () => (await client.listTools()).tools.map((t) => t.name).sort();
    // Every device's tools, each under its device's id; descriptions name the device.
    const tools = await client.listTools();
    const own = tools.tools.filter((t) => t.name.startsWith("dev-1."));
    assert.ok(own.length >= 2, JSON.stringify(tools.tools.map((t) => t.name)));
    for (const id of ["dev-1", "dev-2", "dev-3"])
      assert.deepEqual(tools.tools.filter((t) => t.name.startsWith(`${id}.`)).map((t) => t.name.slice(id.length + 1)).sort(),
                       own.map((t) => t.name.slice(6)).sort(), `${id} offers the same tools as dev-1`);
    assert.match(own[0].description, new RegExp(`^\\[${fleet}/room1\\] `));

    // A call reaches its device, under the device's own name for the tool.
    const r2 = await client.callTool({ name: "dev-2.read_sensor", arguments: { sensor: "uptime" } });
    assert.equal(r2.isError ?? false, false, JSON.stringify(r2));
    assert.ok(r2.content[0].text.length > 0);
    const unknown = await client.callTool({ name: "dev-9.read_sensor", arguments: { sensor: "uptime" } }).catch((e) => e);
    assert.equal(unknown.code, -32602, String(unknown));

    // A device joins: a list change, and its tools.
    const before = changes;
    await startDevice(4);
    await waitFor(() => changes > before, 10000, "notifications/tools/list_changed after dev-4 joined");
    assert.ok((await names()).some((n) => n.startsWith("dev-4.")));

    // A device leaves (its clean stop clears its presence): a list change, its tools gone, a
    // call to it an error.
    const during = changes;
    await stopServer(devices.get("dev-3"), "SIGTERM");
    devices.delete("dev-3");
    await waitFor(() => changes > during, 10000, "notifications/tools/list_changed after dev-3 left");
    assert.ok(!(await names()).some((n) => n.startsWith("dev-3.")));
    const left = await client.callTool({ name: "dev-3.read_sensor", arguments: { sensor: "uptime" } }).catch((e) => e);
    assert.equal(left.code, -32602, String(left));

    assert.deepEqual(transport.schemaProblems(REVISION), [], "every message matches the official schema");
  } finally {
    // The bridge ends at the end of its input (as the SDK's stdio transport ends it), then the rest.
    if (bridge) await stopServer(bridge, "end of input").catch((e) => problems.push(e.message));
    if (client) await client.close().catch((e) => problems.push(e.message));
    for (const w of devices.values()) await stopServer(w, "SIGTERM").catch((e) => problems.push(e.message));
    await broker.stop().catch((e) => problems.push(e.message));
  }
  assert.deepEqual(problems, [], "every process ended cleanly");
});
