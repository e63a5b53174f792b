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
import { RecordingTransport, startBridgeHttp, stopNetworkServer, waitFor } from "./lib/harness.mjs";
import { once, POST_HEADERS, request } from "./lib/rawhttp.mjs";
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

test("the fleet over Streamable HTTP: what the bridge answers itself comes on a primed stream; a batch is answered whole", async () => {
  // The fleet answers initialize, ping and tools/list within the gateway's forwarding (no device
  // asked): at 2025-11-25 those answers too come on the POST's resumable event stream (priming
  // event first), and every element of a 2025-03-26 batch is answered (they are held until the
  // POST's messages are all forwarded).
  assert.ok(SENSORS && BRIDGE, "EMCP_SENSORS and EMCP_BRIDGE name the programs");
  const broker = await startBroker();
  const fleet = `devices/fleet${Math.random().toString(16).slice(2, 8)}`;
  const proc = spawn(SENSORS, ["--mqtt", broker.url, "--mqtt-name", `${fleet}/room1`, "--mqtt-id", "dev-1"], { stdio: ["pipe", "ignore", "pipe"] });
  const device = watchServer(proc, "emcp-sensors dev-1");
  const problems = [];
  let gw = null;
  try {
    await waitFor(() => /mqtt: connected/.test(device.stderr()), 5000, "dev-1 connected to the broker");
    gw = await startBridgeHttp(["--mqtt", broker.url, "--mqtt-name", `${fleet}/#`, "--fleet", "--session-takeover"]);
    const post = (body, sid) => once(gw.port, request("POST", "/mcp", { ...POST_HEADERS, ...(sid ? { "Mcp-Session-Id": sid } : {}) },
                                                      JSON.stringify(body)));
    const init = (v) => ({ jsonrpc: "2.0", id: 1, method: "initialize", params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "raw", version: "1" } } });
    const events = (r) => r.body.toString().split("\n").filter((l) => l.startsWith("data: ") && l.length > 6).map((l) => JSON.parse(l.slice(6)));

    const opened = await post(init(REVISION));
    assert.equal(opened.status, 200, opened.body.toString());
    const sid = opened.headers["mcp-session-id"];
    assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, sid)).status, 202);
    // (The bridge lists the devices' tools once it has initialized them: bounded wait.)
    for (const until = Date.now() + 10000; !(await post({ jsonrpc: "2.0", id: 9, method: "tools/list" }, sid)).body.toString().includes("dev-1.");) {
      assert.ok(Date.now() < until, "dev-1's tools listed within 10 s");
      await new Promise((r) => setTimeout(r, 100));
    }
    for (const [id, method] of [[2, "ping"], [3, "tools/list"]]) {
      const r = await post({ jsonrpc: "2.0", id, method }, sid);
      assert.equal(r.status, 200);
      assert.match(r.headers["content-type"], /^text\/event-stream/, `${method}: an event stream`);
      assert.match(r.body.toString(), /^id: (\d+)-0\nretry: [1-9]\d*\ndata: \n\nid: \1-1\nevent: message\ndata: /, `${method}: the priming event first`);
      const ms = events(r);
      assert.equal(ms.length, 1);
      assert.equal(ms[0].id, id);
      assert.ok(ms[0].result, JSON.stringify(ms[0]));
    }

    // 2025-03-26 (batches): the session taken over by a new initialize, then a batch of three.
    const legacy = await post(init("2025-03-26"));
    assert.equal(legacy.status, 200);
    const lsid = legacy.headers["mcp-session-id"];
    assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" }, lsid)).status, 202);
    const batch = await post([{ jsonrpc: "2.0", id: 11, method: "ping" }, { jsonrpc: "2.0", id: 12, method: "tools/list" },
                              { jsonrpc: "2.0", id: 13, method: "ping" }], lsid);
    assert.equal(batch.status, 200);
    const answers = (/event-stream/.test(batch.headers["content-type"]) ? events(batch) : [JSON.parse(batch.body.toString())]).flat();
    assert.deepEqual(answers.map((m) => m.id).sort(), [11, 12, 13], JSON.stringify(answers));
    assert.ok(answers.every((m) => m.result), JSON.stringify(answers));
  } finally {
    if (gw) await stopNetworkServer(gw).catch((e) => problems.push(e.message));
    await stopServer(device, "SIGTERM").catch((e) => problems.push(e.message));
    await broker.stop().catch((e) => problems.push(e.message));
  }
  assert.deepEqual(problems, [], "every process ended cleanly");
});
