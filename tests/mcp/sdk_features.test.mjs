// emcp-sensors driven by the official MCP TypeScript SDK client over one transport, at each
// protocol revision: stdio, Streamable HTTP ("http"), the HTTP+SSE transport of 2024-11-05
// ("sse") or WebSocket ("ws"). Every message the server sends is validated against the
// official JSON schema of the negotiated revision.
//
//   EMCP_TRANSPORT=http EMCP_SENSORS=build/native/bin/emcp-sensors node --test tests/mcp/sdk_features.test.mjs
//
// With EMCP_URL (lib/harness.mjs) the server is the one behind that URL, started with
// --simulate (a fleet behind nginx: fleet_nginx.test.mjs); the tests that start a server with
// other options skip.
import { test, describe, after } from "node:test";
import assert from "node:assert/strict";
import {
  CallToolResultSchema,
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
  ProgressNotificationSchema,
  McpError,
} from "@modelcontextprotocol/sdk/types.js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { checkTaskStacks, closeChecked, connect, waitFor, ON_BOARD, RecordingTransport, SERVER_URL, TRANSPORTS } from "./lib/harness.mjs";
import { REVISIONS } from "./lib/schema.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
const KIND = process.env.EMCP_TRANSPORT ?? "stdio";
const MQTT = KIND === "mqtt" || KIND === "mqtt-bridge";  // MCP over MQTT: the test's client, or emcp-bridge's
// The boards' firmware lists 5 entries per page (it has no command line to change it).
const BOARD_PAGE = 5;

/// Every entry of a paginated list method, following nextCursor.
async function listAll(fetchPage, key) {
  const all = [];
  let cursor;
  do {
    const page = await fetchPage(cursor ? { cursor } : {});
    all.push(...page[key]);
    cursor = page.nextCursor;
  } while (cursor);
  return all;
}
if (!TRANSPORTS.includes(KIND)) throw new Error(`EMCP_TRANSPORT must be one of ${TRANSPORTS}`);

const CAPS = {
  sampling: {},
  elicitation: {},
  roots: { listChanged: true },
};

// When set, the model answers with this many characters: more than the server's 4 KiB arena.
let samplingAnswerChars = 0;

const HANDLERS = [
  [CreateMessageRequestSchema, async (req) => {
    const text = req.params.messages[0].content.text;
    const answer = samplingAnswerChars ? "x".repeat(samplingAnswerChars) : `All nominal (${text.length} chars read).`;
    return { role: "assistant", content: { type: "text", text: answer }, model: "test-model", stopReason: "endTurn" };
  }],
  [ElicitRequestSchema, async (req) => {
    assert.equal(req.params.requestedSchema.type, "object");
    assert.ok(req.params.requestedSchema.properties.reference_celsius);
    return { action: "accept", content: { reference_celsius: 22.5 } };
  }],
  [ListRootsRequestSchema, async () => ({ roots: [{ uri: "file:///home/user/project", name: "project" }] })],
];

const ge = (a, b) => REVISIONS.indexOf(a) >= REVISIONS.indexOf(b);

// The SDK drops a progress report that comes in one read with the answer after it (it runs the
// notification's handler a microtask after the answer's: lib/harness.mjs RecordingTransport).
// Without a server, so that no timing decides: an in-memory transport delivers the report and
// the answer in one synchronous burst, as the SSE and WebSocket transports deliver a chunk.
test("the harness hands the SDK a progress report and the answer after it in one read in that order", async () => {
  const inner = {
    async start() {},
    async close() { this.onclose?.(); },
    async send(m) {
      if (!("id" in m)) return;
      const burst = m.method === "initialize"
        ? [{ jsonrpc: "2.0", id: m.id, result: { protocolVersion: m.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: "burst", version: "1" } } }]
        : [{ jsonrpc: "2.0", method: "notifications/progress", params: { progressToken: m.params._meta.progressToken, progress: 1, total: 2 } },
           { jsonrpc: "2.0", id: m.id, result: { content: [{ type: "text", text: "done" }] } }];
      setTimeout(() => { for (const message of burst) this.onmessage(message); }, 0);
    },
  };
  const burstClient = new Client({ name: "emcp-sdk-test", version: "1.0.0" });
  const errors = [];
  burstClient.onerror = (e) => errors.push(e.message);
  await burstClient.connect(new RecordingTransport(inner));
  const got = [];
  const r = await burstClient.callTool({ name: "t", arguments: {} }, undefined, { onprogress: (p) => got.push(p.progress) });
  assert.equal(r.content[0].text, "done");
  assert.deepEqual(got, [1]);
  assert.deepEqual(errors, []);
  await burstClient.close();
});

for (const revision of REVISIONS) {
  describe(`${KIND} at ${revision}`, () => {
    let client, transport, close;
    const open = async (args = ["--simulate"]) => {
      ({ client, transport, close } = await connect({ command: SERVER, args, revision, capabilities: CAPS, handlers: HANDLERS, transport: KIND }));
    };
    after(async () => {
      if (client) {
        const problems = await closeChecked({ transport, close }, revision);  // QEMU stopped too
        assert.deepEqual(problems, [], "every server message matches the official schema");
      }
    });

    test("initialize negotiates the revision and declares capabilities", async () => {
      await open();
      const init = transport.received[0].message.result;
      assert.equal(init.protocolVersion, revision);
      assert.equal(client.getServerVersion().name, "emcp-sensors");
      const caps = client.getServerCapabilities();
      assert.deepEqual(caps.tools, { listChanged: true });
      assert.deepEqual(caps.resources, { subscribe: true, listChanged: true });
      assert.deepEqual(caps.prompts, { listChanged: true });
      assert.deepEqual(caps.logging, {});
      assert.equal("completions" in caps, ge(revision, "2025-03-26"));
      assert.match(client.getInstructions(), /small device/);
      // Fields newer than the revision are left out.
      assert.equal("title" in init.serverInfo, ge(revision, "2025-06-18"));
      assert.equal("description" in init.serverInfo, ge(revision, "2025-11-25"));
    });

    test("ping both ways", async () => {
      assert.deepEqual(await client.ping(), {});
    });

    test("tools/list describes every tool with its schema and annotations", async () => {
      const tools = await listAll((p) => client.listTools(p), "tools");
      assert.equal(tools.length, 12);
      const read = tools.find((t) => t.name === "read_sensor");
      assert.deepEqual(read.inputSchema.required, ["sensor"]);
      assert.deepEqual(read.inputSchema.properties.sensor.enum, ["temperature", "load", "uptime", "memory"]);
      assert.equal("outputSchema" in read, ge(revision, "2025-06-18"));
      assert.equal("title" in read, ge(revision, "2025-06-18"));
      const relay = tools.find((t) => t.name === "set_relay");
      if (ge(revision, "2025-03-26")) {
        assert.deepEqual(relay.annotations, { readOnlyHint: false, destructiveHint: true, idempotentHint: true });
        assert.equal(read.annotations.readOnlyHint, true);
      } else {
        assert.equal(relay.annotations, undefined);
      }
    });

    test("tools/call with text and structured content", async () => {
      const r = await client.callTool({ name: "read_sensor", arguments: { sensor: "temperature" } });
      assert.equal(r.isError, undefined);
      assert.match(r.content[0].text, /^temperature: \d+\.\d °C \(simulated\)$/);
      const json = JSON.parse(r.content[1].text);
      assert.equal(json.sensor, "temperature");
      if (ge(revision, "2025-06-18")) assert.deepEqual(r.structuredContent, json);
      else assert.equal(r.structuredContent, undefined);
    });

    test("arguments are validated against the tool's schema (-32602)", async () => {
      const cases = [
        [{ sensor: "pressure" }, /"sensor" must be one of the allowed values/],
        [{}, /"sensor" is required/],
        [{ sensor: 5 }, /"sensor" must be a string/],
      ];
      for (const [args, message] of cases) {
        await assert.rejects(client.callTool({ name: "read_sensor", arguments: args }), (e) => {
          assert.ok(e instanceof McpError);
          assert.equal(e.code, -32602);
          assert.match(e.message, message);
          return true;
        });
      }
      await assert.rejects(client.callTool({ name: "sample_sensor", arguments: { sensor: "load", samples: 1000 } }),
        (e) => e.code === -32602 && /"samples" is above the maximum/.test(e.message));
      await assert.rejects(client.callTool({ name: "no_such_tool", arguments: {} }),
        (e) => e.code === -32602 && /unknown tool/.test(e.message));
    });

    test("binary content: image and audio", async () => {
      const r = await client.callTool({ name: "snapshot", arguments: {} });
      assert.equal(r.content[1].type, "image");
      assert.equal(r.content[1].mimeType, "image/png");
      const png = Buffer.from(r.content[1].data, "base64");
      assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
      if (ge(revision, "2025-03-26")) {
        assert.equal(r.content[2].type, "audio");
        assert.equal(Buffer.from(r.content[2].data, "base64").subarray(0, 4).toString(), "RIFF");
      } else {
        assert.equal(r.content[2].type, "text");  // audio is not part of 2024-11-05
        assert.match(r.content[2].text, /audio content .* left out/);
      }
    });

    test("embedded resource and resource link", async () => {
      const r = await client.callTool({ name: "get_log", arguments: {} });
      assert.equal(r.content[0].type, "resource");
      assert.equal(r.content[0].resource.uri, "device://log");
      // A server behind EMCP_URL has served others: its first line may be out of its 8-line log.
      assert.match(r.content[0].resource.text, SERVER_URL ? /\S\n/ : /device started/);
      if (ge(revision, "2025-06-18")) {
        assert.deepEqual(r.content[1], { type: "resource_link", uri: "device://log", name: "device log", mimeType: "text/plain", description: "The live log (subscribe for updates)" });
      } else {
        assert.equal(r.content[1].type, "text");
      }
    });

    test("resources: list, read, template, not found", async () => {
      const resources = await listAll((p) => client.listResources(p), "resources");
      assert.deepEqual(resources.map((r) => r.uri), ["sensor://temperature", "sensor://load", "sensor://uptime", "sensor://memory", "device://led", "device://relay", "device://log"]);
      const { resourceTemplates } = await client.listResourceTemplates();
      assert.equal(resourceTemplates[0].uriTemplate, "sensor://{sensor}/history");
      const load = await client.readResource({ uri: "sensor://load" });
      assert.equal(JSON.parse(load.contents[0].text).sensor, "load");
      const hist = await client.readResource({ uri: "sensor://memory/history" });
      assert.equal(hist.contents[0].mimeType, "application/json");
      assert.ok(Array.isArray(JSON.parse(hist.contents[0].text).values));
      for (const uri of ["sensor://pressure", "sensor://pressure/history", "nothing"]) {
        await assert.rejects(client.readResource({ uri }), (e) => e.code === -32002 && e.data?.uri === uri);
      }
    });

    test("subscriptions: resources/updated when a value changes", async () => {
      await client.subscribeResource({ uri: "device://led" });
      await client.callTool({ name: "set_led", arguments: { on: true } });
      await waitFor(() => transport.notifications("notifications/resources/updated").some((n) => n.params.uri === "device://led"), 3000, "led update");
      // Changes every second. On the FreeRTOS images (EMCP_IMAGE_INBOX) only an interrupt's
      // posts to the inbox announce it (examples/sensors/main_rtos.cpp: timer 1's on the MPS2,
      // the CLINT's software interrupt on the hifive1): this update is one that came through.
      await client.subscribeResource({ uri: "sensor://uptime" });
      await waitFor(() => transport.notifications("notifications/resources/updated").some((n) => n.params.uri === "sensor://uptime"), 3000, "uptime update");
      await client.unsubscribeResource({ uri: "sensor://uptime" });
      await client.unsubscribeResource({ uri: "device://led" });
      const before = transport.notifications("notifications/resources/updated").length;
      await client.callTool({ name: "set_led", arguments: { on: false } });
      await new Promise((r) => setTimeout(r, 1200));
      assert.equal(transport.notifications("notifications/resources/updated").length, before, "no updates after unsubscribe");
    });

    test("notifications sent while the answer is open follow it (set_relay answers, then notifies)", async () => {
      await client.subscribeResource({ uri: "device://relay" });
      await client.setLoggingLevel("debug");
      await client.callTool({ name: "set_relay", arguments: { on: true } });
      const updated = (m) => m.method === "notifications/resources/updated" && m.params.uri === "device://relay";
      const logged = (m) => m.method === "notifications/message" && m.params.data === "relay closed (load powered)";
      await waitFor(() => transport.received.some(({ message }) => updated(message)) &&
                          transport.received.some(({ message }) => logged(message)), 3000, "relay update and log");
      if (KIND === "stdio" || KIND === "qemu") {
        // One channel: the answer, then what waited for it, in the order it was sent.
        const at = (pred) => transport.received.findLastIndex(({ message }) => pred(message));
        const answer = at((m) => "id" in m && m.result?.content?.[0]?.text === "Relay is now closed");
        assert.ok(answer >= 0 && answer < at(logged) && at(logged) < at(updated), "answer, log, update");
      }
      await client.unsubscribeResource({ uri: "device://relay" });
      await client.setLoggingLevel("info");
    });

    test("logging: setLevel filters notifications/message", async () => {
      await client.setLoggingLevel("warning");
      const before = transport.notifications("notifications/message").length;
      await client.callTool({ name: "set_led", arguments: { on: true } });  // logs at info
      await client.callTool({ name: "set_relay", arguments: { on: false } });  // logs at notice
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(transport.notifications("notifications/message").length, before);
      await client.setLoggingLevel("debug");
      await client.callTool({ name: "set_led", arguments: { on: false } });
      await waitFor(() => transport.notifications("notifications/message").some((n) => n.params.data === "LED switched off"), 2000, "log message");
      const m = transport.notifications("notifications/message").at(-1);
      assert.equal(m.params.level, "info");
      assert.equal(m.params.logger, "device");
      await assert.rejects(client.setLoggingLevel("loud"), (e) => e.code === -32602);
    });

    test("progress notifications of a long-running tool", async () => {
      const progress = [];
      const from = transport.received.length;
      const r = await client.callTool({ name: "sample_sensor", arguments: { sensor: "temperature", samples: 5, interval_ms: 20 } },
        undefined, { onprogress: (p) => progress.push(p) });
      assert.match(r.content[0].text, /^Sampled temperature 5 times: min \d/);
      // On the wire: the four reports, then the answer (nothing of this call after it)...
      const wire = transport.received.slice(from).map(({ message }) => message);
      const answer = wire.findIndex((m) => m.result?.content?.[0]?.text === r.content[0].text);
      const token = wire.find((m) => m.method === "notifications/progress")?.params.progressToken;
      const reports = (ms) => ms.filter((m) => m.method === "notifications/progress" && m.params.progressToken === token);
      assert.deepEqual(reports(wire.slice(0, answer)).map((m) => m.params.progress), [1, 2, 3, 4]);
      assert.deepEqual(reports(wire.slice(answer + 1)), []);
      // ...and the client had each of them before the answer (RecordingTransport's order).
      assert.deepEqual(progress.map((p) => p.progress), [1, 2, 3, 4]);
      assert.ok(progress.every((p) => p.total === 5));
      if (ge(revision, "2025-03-26")) assert.equal(progress[0].message, "sampling");
    });

    test("cancellation stops a pending call; the server keeps serving", async () => {
      const ac = new AbortController();
      const call = client.callTool({ name: "sample_sensor", arguments: { sensor: "load", samples: 100, interval_ms: 50 } },
        undefined, { signal: ac.signal, onprogress: () => {} });
      await new Promise((r) => setTimeout(r, 200));
      ac.abort("changed my mind");
      await assert.rejects(call);
      await waitFor(() => transport.notifications("notifications/message").some((n) => /cancelled/.test(n.params.data)), 3000, "cancel log");
      // No response for the cancelled request ever arrives; later calls work.
      const r = await client.callTool({ name: "read_sensor", arguments: { sensor: "uptime" } });
      assert.match(r.content[0].text, /^uptime: \d+ s/);
    });

    test("sampling: the tool asks the client's model", async () => {
      const r = await client.callTool({ name: "summarize_readings", arguments: {} });
      assert.match(r.content[0].text, /^Summary by test-model: All nominal \(\d+ chars read\)\.$/);
      const req = transport.received.find(({ message }) => message.method === "sampling/createMessage").message;
      assert.equal(req.params.maxTokens, 200);
      assert.match(req.params.messages[0].content.text, /Readings: temperature/);
    });

    test("sampling: an answer larger than the server can keep fails the tool at once, with the reason", async () => {
      // What the transport saw (the answer's POST failing, ...) and the server's counters belong
      // in a failure.
      const explained = (call) => call.catch(async (e) => {
        const stats = await client.callTool({ name: "device_stats", arguments: {} }).then((r) => r.content[0].text, (x) => x.message);
        const asked = transport.received.filter(({ message }) => message.method === "sampling/createMessage").map(({ message }) => message.id);
        throw new Error(`${e.message}; sampling requests received: ${JSON.stringify(asked)}; transport errors: ${JSON.stringify(transport.errors)}; device_stats: ${stats}`);
      });
      samplingAnswerChars = 6000;
      try {
        const r = await explained(client.callTool({ name: "summarize_readings", arguments: {} }));
        // Not "did not answer in time": the server's request ended when the answer arrived.
        assert.equal(r.isError, true);
        assert.equal(r.content[0].text, "The client refused the sampling/createMessage request: response too large for the arena (EMCP_ARENA_SIZE)");
      } finally {
        samplingAnswerChars = 0;
      }
      const r = await explained(client.callTool({ name: "summarize_readings", arguments: {} }));
      assert.match(r.content[0].text, /^Summary by test-model: All nominal/);
    });

    test("elicitation: the tool asks the user (2025-06-18 and later)", async () => {
      const r = await client.callTool({ name: "calibrate_temperature", arguments: {} });
      if (ge(revision, "2025-06-18")) {
        assert.match(r.content[0].text, /^Calibrated: reference 22\.5 °C, measured \d+\.\d °C, offset -?\d+\.\d\d$/);
      } else {
        assert.equal(r.isError, true);  // no elicitation before 2025-06-18
        assert.match(r.content[0].text, /did not declare the elicitation capability/);
      }
    });

    test("roots: the tool lists the client's roots", async () => {
      const r = await client.callTool({ name: "list_roots", arguments: {} });
      assert.equal(r.content[0].text, "The client shares 1 root(s): file:///home/user/project");
    });

    test("roots: the application hears that they changed", async () => {
      await client.sendRootsListChanged();
      await waitFor(() => transport.notifications("notifications/message").some((n) => n.params.data === "the client's roots changed"),
        3000, "the roots-changed log line");
    });

    test("prompts: list, get with arguments, completion", async () => {
      const { prompts } = await client.listPrompts();
      assert.equal(prompts[0].name, "diagnose_device");
      assert.deepEqual(prompts[0].arguments.map((a) => a.name), ["sensor", "symptom"]);
      const p = await client.getPrompt({ name: "diagnose_device", arguments: { sensor: "load", symptom: "fan noise" } });
      assert.equal(p.messages.length, 2);
      assert.match(p.messages[0].content.text, /symptom: fan noise\. Current readings: temperature/);
      assert.match(p.messages[0].content.text, /attention to the load sensor/);
      assert.equal(p.messages[1].content.type, "resource");
      await assert.rejects(client.getPrompt({ name: "nope" }), (e) => e.code === -32602);
      await assert.rejects(client.getPrompt({ name: "diagnose_device", arguments: { sensor: 3 } }), (e) => e.code === -32602);
      const c = await client.complete({ ref: { type: "ref/prompt", name: "diagnose_device" }, argument: { name: "sensor", value: "m" } });
      assert.deepEqual(c.completion.values, ["memory"]);
      const t = await client.complete({ ref: { type: "ref/resource", uri: "sensor://{sensor}/history" }, argument: { name: "sensor", value: "" } });
      assert.deepEqual(t.completion.values, ["temperature", "load", "uptime", "memory"]);
    });

    test("device_stats reports the server's memory figures", async () => {
      const r = await client.callTool({ name: "device_stats", arguments: {} });
      const st = JSON.parse(r.content[0].text);
      assert.equal(st.platform, ON_BOARD ? process.env.EMCP_BOARD_NAME ?? st.platform : "linux");
      assert.ok(st.arena_size > 0);
      assert.ok(st.arena_high_water > 0 && st.arena_high_water <= st.arena_size);
      if (ON_BOARD) {
        assert.ok(st.stack_high_water > 0 && st.stack_high_water < st.stack_size, JSON.stringify(st));
        assert.equal(st.input_dropped, 0);
      }
      if (st.network) {  // a network image: this connection is one of its slots, pools within size
        const n = st.network;
        if (!MQTT) {  // (over MQTT the HTTP slots are not this client's)
          assert.ok(n.connections_in_use >= 1 && n.connections_in_use <= n.connections, JSON.stringify(n));
          assert.ok(n.sessions_in_use >= 1 && n.sessions_in_use <= n.sessions, JSON.stringify(n));
        }
        for (const pool of ["pbuf_pool", "tcp_pcb", "heap"])
          assert.ok(n[`${pool}_used`] <= n[`${pool}_max`] && n[`${pool}_max`] <= n[`${pool}_size`], `${pool}: ${JSON.stringify(n)}`);
        assert.equal(n.rx_dropped, 0, JSON.stringify(n));
      }
      if (MQTT && ON_BOARD) {  // this client's session (the bridge's) is one of the image's MQTT sessions
        const m = st.mqtt;
        assert.ok(m && m.connected, JSON.stringify(st));
        assert.ok(m.sessions_in_use >= 1 && m.sessions_in_use <= m.sessions, JSON.stringify(m));
        assert.ok(m.arena_high_water > 0 && m.arena_high_water <= m.arena_size, JSON.stringify(m));
        // No answer so far was longer than the transmit buffer, none went at QoS 0.
        assert.deepEqual([m.too_large, m.qos0_fallbacks, m.stray], [0, 0, 0], JSON.stringify(m));
      }
      // Every notification of the tests so far went out (logs, updates, progress...).
      assert.equal(st.notifications_dropped, 0, JSON.stringify(st));
      // A FreeRTOS image's sensor task and timer interrupt post their samples to the server's
      // inbox (examples/sensors/main_rtos.cpp): by now some were posted, and the owner ran each
      // it took, but those still in their slots.
      if (process.env.EMCP_IMAGE_INBOX) {
        const i = st.inbox;
        assert.ok(i && i.slots > 0 && i.posted > 0, JSON.stringify(st));
        assert.ok(i.run <= i.posted && i.posted - i.run <= i.slots, JSON.stringify(i));
        assert.ok(i.in_use <= i.high_water && i.high_water <= i.slots, JSON.stringify(i));
      } else {
        assert.equal(st.inbox, undefined, "no inbox in this image");
      }
      if (process.env.EMCP_IMAGE_TASKS) checkTaskStacks(st);
      else assert.equal(st.tasks, undefined, "no tasks in this image");
      if (ge(revision, "2025-06-18")) assert.deepEqual(r.structuredContent, st);
    });

    // After device_stats: a task's status notifications may find no stream (HTTP without GET).
    test("experimental tasks (2025-11-25): sample_sensor as a task, polled to its result; list, cancel", async () => {
      const caps = client.getServerCapabilities();
      if (revision !== "2025-11-25" || ON_BOARD) {  // older revisions have none; firmware sets no store
        assert.equal(caps.tasks, undefined);
        return;
      }
      assert.deepEqual(caps.tasks, { list: {}, cancel: {}, requests: { tools: { call: {} } } });
      const tools = await listAll((p) => client.listTools(p), "tools");
      assert.deepEqual(tools.find((t) => t.name === "sample_sensor").execution, { taskSupport: "optional" });
      assert.equal(tools.find((t) => t.name === "read_sensor").execution, undefined);
      const seen = [];
      const stream = client.experimental.tasks.callToolStream(
        { name: "sample_sensor", arguments: { sensor: "load", samples: 3, interval_ms: 50 } }, undefined, { task: { ttl: 20000 } });
      for await (const m of stream) seen.push(m);
      assert.equal(seen[0].type, "taskCreated", JSON.stringify(seen));
      const taskId = seen[0].task.taskId;
      assert.match(taskId, /^[0-9a-f]{32}$/);
      assert.equal(seen[0].task.ttl, 20000);
      assert.ok(seen.some((m) => m.type === "taskStatus"));
      assert.equal(seen.at(-1).type, "result", JSON.stringify(seen.at(-1)));
      assert.match(seen.at(-1).result.content[0].text, /load/);
      assert.equal(seen.at(-1).result._meta["io.modelcontextprotocol/related-task"].taskId, taskId);
      assert.equal((await client.experimental.tasks.getTask(taskId)).status, "completed");
      // A long run, cancelled while it works; then its result is an error, a second cancel -32602.
      const long = client.experimental.tasks.callToolStream(
        { name: "sample_sensor", arguments: { sensor: "temperature", samples: 100, interval_ms: 1000 } }, undefined, { task: {} });
      const created = (await long.next()).value;
      assert.equal(created.type, "taskCreated");
      await long.return();
      const { tasks } = await client.experimental.tasks.listTasks();
      assert.deepEqual(tasks.map((t) => t.taskId).filter((id) => id === taskId || id === created.task.taskId).sort(),
        [taskId, created.task.taskId].sort());
      const cancelled = await client.experimental.tasks.cancelTask(created.task.taskId);
      assert.equal(cancelled.status, "cancelled");
      await assert.rejects(client.experimental.tasks.cancelTask(created.task.taskId), (e) => e.code === -32602);
      await assert.rejects(client.experimental.tasks.getTaskResult(created.task.taskId, CallToolResultSchema), (e) => e.code === -32603);
      await assert.rejects(client.experimental.tasks.getTask("0123456789abcdef0123456789abcdef"), (e) => e.code === -32602);
      // A tool that does not run as a task, asked to: -32601.
      await assert.rejects(client.request({ method: "tools/call", params: { name: "read_sensor", arguments: { sensor: "load" }, task: {} } },
        (await import("zod")).z.any()), (e) => e.code === -32601);
    });

    test("unknown methods answer -32601", async () => {
      await assert.rejects(client.request({ method: "tools/frobnicate", params: {} }, (await import("zod")).z.any()),
        (e) => e.code === -32601);
    });
  });
}

const OWN_SERVER = SERVER_URL ? "the server behind EMCP_URL was started with other options" : false;

describe("pagination", { skip: OWN_SERVER }, () => {
  test("tools, resources and prompts in pages of 3 with opaque cursors", async () => {
    const pageSize = ON_BOARD ? BOARD_PAGE : 3;
    const { client, transport, close } = await connect({ command: SERVER, args: ["--simulate", "--page-size", String(pageSize)], revision: "2025-11-25", transport: KIND });
    try {
      const names = [];
      let cursor;
      let pages = 0;
      do {
        const page = await client.listTools(cursor ? { cursor } : {});
        names.push(...page.tools.map((t) => t.name));
        cursor = page.nextCursor;
        ++pages;
      } while (cursor);
      assert.equal(pages, Math.ceil(12 / pageSize));
      assert.equal(names.length, 12);
      assert.equal(new Set(names).size, 12);
      const first = await client.listResources();
      assert.equal(first.resources.length, pageSize);
      const second = await client.listResources({ cursor: first.nextCursor });
      const uris = ["sensor://temperature", "sensor://load", "sensor://uptime", "sensor://memory", "device://led", "device://relay", "device://log"];
      assert.equal(second.resources[0].uri, uris[pageSize]);
      await assert.rejects(client.listTools({ cursor: "not-a-cursor" }), (e) => e.code === -32602);
      assert.deepEqual(transport.schemaProblems("2025-11-25"), []);
    } finally {
      await close();
    }
  });
});

describe("schema checker", () => {
  // The checker must be able to fail, or the checks above prove nothing.
  test("rejects messages that break the official schema", async () => {
    const { check } = await import("./lib/schema.mjs");
    assert.deepEqual(check("2025-11-25", { jsonrpc: "2.0", id: 1, result: { tools: [{ name: "x", inputSchema: { type: "object" } }] } }, "tools/list"), []);
    assert.notDeepEqual(check("2025-11-25", { jsonrpc: "2.0", id: 1, result: { tools: [{ name: 5 }] } }, "tools/list"), []);
    assert.notDeepEqual(check("2024-11-05", { jsonrpc: "2.0", id: 1, result: { content: [{ type: "audio", data: "", mimeType: "audio/wav" }] } }, "tools/call"), []);
    assert.deepEqual(check("2025-03-26", { jsonrpc: "2.0", id: 1, result: { content: [{ type: "audio", data: "", mimeType: "audio/wav" }] } }, "tools/call"), []);
    assert.notDeepEqual(check("2025-06-18", { jsonrpc: "2.0", method: "notifications/progress", params: { progress: 1 } }), []);
  });
});

// The experimental tasks of 2025-11-25 with input: emcp-everything's confirm_delete asks inside
// its task; the SDK's callToolStream sees input_required, calls tasks/result, and its
// elicitation handler answers the request that arrives there (with _meta related-task).
describe(`${KIND}: a 2025-11-25 task that asks for input (emcp-everything)`, { skip: ON_BOARD || !["stdio", "http", "mqtt", "mqtt-bridge"].includes(KIND) || OWN_SERVER }, () => {
  const EVERYTHING = process.env.EMCP_EVERYTHING ?? new URL("../../build/native/bin/emcp-everything", import.meta.url).pathname;
  test("confirm_delete: input_required, the elicitation on tasks/result, then the result", async () => {
    const elicited = [];
    const handlers = [[ElicitRequestSchema, async (req) => {
      elicited.push(req.params);
      return { action: "accept", content: { confirm: true } };
    }]];
    const { client, transport, close } = await connect({
      command: EVERYTHING, args: KIND === "stdio" ? ["--stdio"] : [], revision: "2025-11-25",
      capabilities: { elicitation: {} }, handlers, transport: KIND });
    try {
      const seen = [];
      for await (const m of client.experimental.tasks.callToolStream({ name: "confirm_delete", arguments: { path: "/tmp/x" } }, undefined, { task: {} }))
        seen.push(m);
      assert.equal(seen[0].type, "taskCreated");
      assert.equal(seen.at(-1).type, "result", JSON.stringify(seen.at(-1)));
      assert.equal(seen.at(-1).result.content[0].text, "The file was deleted.");
      assert.equal(elicited.length, 1);
      assert.equal(elicited[0]._meta?.["io.modelcontextprotocol/related-task"]?.taskId, seen[0].task.taskId, JSON.stringify(elicited));
      // A tool that runs only as a task, called without: -32601 (basic/utilities/tasks).
      // (Sent as a plain request: the SDK's own check knows only the last tools/list page's tools.)
      await assert.rejects(client.request({ method: "tools/call", params: { name: "failing_job", arguments: {} } },
        (await import("zod")).z.any()), (e) => e.code === -32601 && /runs only as a task/.test(e.message));
      // With one: the task fails (a tool error), and tasks/result is that result.
      const failed = [];
      for await (const m of client.experimental.tasks.callToolStream({ name: "failing_job", arguments: {} }, undefined, { task: {} }))
        failed.push(m);
      assert.equal(failed[0].type, "taskCreated", JSON.stringify(failed));
      assert.equal(failed.at(-1).type, "error");
      const r = await client.experimental.tasks.getTaskResult(failed[0].task.taskId, CallToolResultSchema);
      assert.equal(r.isError, true);
    } finally {
      const problems = await closeChecked({ transport, close }, "2025-11-25");
      assert.deepEqual(problems, [], "every server message matches the official schema");
    }
  });
});
