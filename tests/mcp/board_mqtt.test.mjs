// The sensors firmware serving MCP over MQTT on an emulated board (EMCP_RUN_BOARD: the
// scripts/run-board command): the test starts a Mosquitto of its own on the host's loopback,
// and run-board --mqtt provisions its address into the board (10.0.2.2:PORT, QEMU's user network
// reaching the host) and announces the board once its presence is on the broker. The client is
// the official SDK's over tests/mcp/lib/mqtt_transport.mjs (MQTT.js, written from the
// MCP-over-MQTT text). The firmware's device_stats reports its MQTT figures (sessions, the MQTT
// arena's high-water mark, answers too large, QoS 0 fallbacks), the painted stack's and lwIP's
// pools.
//
//   EMCP_BOARD_MQTT_PART=all   (the image with HTTP) the UART, HTTP and MQTT served at once by one
//                              server: requests on all three together, a resource update made
//                              over HTTP reaching the subscribers on MQTT and the UART; then
//                              the soak
//   EMCP_BOARD_MQTT_PART=soak  the soak alone (the image without HTTP)
//   EMCP_MQTT_TLS=1            the board dials the broker's TLS listener (mqtts://, the images
//                              emcp-sensors-mqtt-tls[-net]: the broker's certificate checked against
//                              the test's CA, provisioned with the broker's name); the clients stay
//                              on the plain listener. The soak then holds the TLS pool flat too.
// The soak: EMCP_SOAK_REQUESTS (10,000) requests over MQTT after a warm-up of the same work,
// every one answered, with flat high-water marks and one broker connection throughout. At the
// end the board is stopped (run-board must end cleanly) and its Will clears its presence.
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import { createInterface } from "node:readline";
import mqtt from "mqtt";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";
import { imageReport, startMqttServer, stopNetworkServer, waitFor } from "./lib/harness.mjs";
import { startBroker } from "./lib/broker.mjs";
import { MqttClientTransport } from "./lib/mqtt_transport.mjs";

const PART = process.env.EMCP_BOARD_MQTT_PART ?? "soak";
const SOAK = Number(process.env.EMCP_SOAK_REQUESTS ?? 10000);
const TLS = process.env.EMCP_MQTT_TLS === "1";
// A bound on waits for what the board does at once (QEMU beside other tests), not a claim.
const LIVENESS_MS = 30000;
let broker, server, uart;

// The UART through run-board's standard input and output: one JSON-RPC message per line, the
// first line the firmware's banner.
function openUart(proc) {
  const lines = [];
  const waiting = new Map();  // id -> resolve
  const notes = [];
  createInterface({ input: proc.stdout }).on("line", (line) => {
    lines.push(line);
    let m;
    try { m = JSON.parse(line); } catch { return; }
    if ("id" in m && waiting.has(m.id)) {
      waiting.get(m.id)(m);
      waiting.delete(m.id);
    } else if (!("id" in m)) {
      notes.push(m);
    }
  });
  const call = (id, method, params = {}) => new Promise((resolve, reject) => {
    const t = setTimeout(() => { waiting.delete(id); reject(new Error(`no answer on the UART to ${id} within ${LIVENESS_MS} ms`)); }, LIVENESS_MS);
    waiting.set(id, (m) => { clearTimeout(t); resolve(m); });
    proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", id, method, params }) + "\n");
  });
  const notify = (method) => proc.stdin.write(JSON.stringify({ jsonrpc: "2.0", method }) + "\n");
  return { lines, notes, call, notify };
}

async function mqttClient(name) {
  const client = new Client({ name, version: "1.0.0" }, { capabilities: {} });
  const transport = new MqttClientTransport({ url: broker.url, serverName: server.mqttName, discoverMs: LIVENESS_MS });
  await client.connect(transport);
  return { client, transport };
}

async function stats(client) {
  const r = await client.callTool({ name: "device_stats", arguments: {} });
  return r.structuredContent;
}

before(async () => {
  broker = await startBroker({ tls: TLS });
  try {
    server = await startMqttServer(null, [], broker, PART === "all" ? ["--http", "0"] : [], "pipe");
  } catch (e) {
    await broker.stop();
    broker = null;
    throw e;
  }
  uart = openUart(server.proc);
});

after(async () => {
  const problems = [];
  if (server) await stopNetworkServer(server).catch((e) => problems.push(e));
  if (broker) await broker.stop().catch((e) => problems.push(e));
  if (problems.length) throw problems[0];
});

test("the board's banner names the broker and what it serves", async () => {
  await waitFor(() => uart.lines.length > 0, LIVENESS_MS, "the banner on the UART");
  const banner = uart.lines[0];
  if (TLS) {
    assert.match(banner, new RegExp(`MCP over MQTT \\(TLS\\) through 10\\.0\\.2\\.2:${broker.tls.port}, certificate name localhost ` +
                                    `as server id [^ ,/+#]+, name ${server.mqttName}\\)`));
  } else {
    const port = new URL(broker.url).port;
    assert.match(banner, new RegExp(`MCP over MQTT through 10\\.0\\.2\\.2:${port} as server id [^ ,/+#]+, name ${server.mqttName}\\)`));
  }
  if (PART === "all") assert.match(banner, /; and over HTTP on port 80$/);
  else assert.doesNotMatch(banner, /HTTP/);
});

test("the UART, HTTP and MQTT at once: one server, its notifications reaching every transport", { skip: PART !== "all" }, async () => {
  const httpPort = Number(/serving MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(server.stderr())[1]);
  const init = await uart.call("u0", "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "uart", version: "1" } });
  assert.equal(init.result.protocolVersion, "2025-11-25");
  uart.notify("notifications/initialized");
  const { client: overMqtt, transport } = await mqttClient("over-mqtt");
  const overHttp = new Client({ name: "over-http", version: "1.0.0" }, { capabilities: {} });
  await overHttp.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${httpPort}/mcp`)));
  try {
    // Requests on the three at once, each answered on its own transport.
    const rounds = 40;
    await Promise.all([
      (async () => {
        for (let i = 0; i < rounds; ++i) {
          const r = await uart.call(`u${i + 1}`, "tools/call", { name: "echo", arguments: { text: `uart ${i}` } });
          assert.equal(r.result.content[0].text, `uart ${i}`);
        }
      })(),
      ...[overMqtt, overHttp].map(async (c, k) => {
        for (let i = 0; i < rounds; ++i) {
          const r = await c.callTool({ name: "echo", arguments: { text: `${k ? "http" : "mqtt"} ${i}` } });
          assert.equal(r.content[0].text, `${k ? "http" : "mqtt"} ${i}`);
        }
      }),
    ]);
    // A change made over HTTP reaches the subscribers on MQTT (its capability topic) and the UART.
    const updates = [];
    overMqtt.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => updates.push(n.params.uri));
    await overMqtt.subscribeResource({ uri: "device://led" });
    assert.equal((await uart.call("u-sub", "resources/subscribe", { uri: "device://led" })).error, undefined);
    const before_ = uart.notes.length;
    await overHttp.callTool({ name: "set_led", arguments: { on: true } });
    await waitFor(() => updates.includes("device://led"), LIVENESS_MS, "resources/updated over MQTT");
    await waitFor(() => uart.notes.slice(before_).some((n) => n.method === "notifications/resources/updated" && n.params.uri === "device://led"),
                  LIVENESS_MS, "resources/updated on the UART");
    const led = await overMqtt.readResource({ uri: "device://led" });
    assert.equal(led.contents[0].text, "on", "the LED switched over HTTP, read over MQTT");
    const st = await stats(overMqtt);
    assert.equal(st.mqtt.sessions_in_use, 1, JSON.stringify(st.mqtt));
    assert.equal(st.network.sessions_in_use, 1, JSON.stringify(st.network));
    assert.ok(st.messages >= rounds + 2, `the UART's messages: ${st.messages}`);
    assert.deepEqual(transport.violations, [], "the board kept to the MCP-over-MQTT text");
  } finally {
    await overHttp.close();
    await overMqtt.close();
  }
});

test(`soak: ${SOAK} requests over MQTT, every one answered, flat high-water marks`, async () => {
  const { client, transport } = await mqttClient("soak");
  const WINDOW = 8;
  const run = async (n, from) => {
    let next = from;
    const one = async () => {
      while (next < from + n) {
        const i = next++;
        const kind = i % 5;
        if (kind < 2) {
          assert.deepEqual(await client.ping(), {});
        } else if (kind < 4) {
          const r = await client.callTool({ name: "echo", arguments: { text: `s${i}` } });
          assert.equal(r.content[0].text, `s${i}`);
        } else {
          const r = await client.readResource({ uri: "sensor://load" });
          assert.equal(JSON.parse(r.contents[0].text).sensor, "load");
        }
      }
    };
    await Promise.all(Array.from({ length: WINDOW }, one));
  };
  // emcp's own high-water marks: the message arenas (device_stats' figure is the most any of the
  // UART's, HTTP's and MQTT's ever held) and, below, the painted stack.
  // Over TLS, Mbed TLS's pool too (emcp/mbedtls/pool.h: the broker connection's record buffers
  // and the handshake's peak, reached before the first request).
  const marks = (st) => ({ arena: st.arena_high_water, mqtt_arena: st.mqtt.arena_high_water,
                           ...(TLS ? { tls_pool: st.network.tls_pool_max } : {}) });
  // lwIP's pools: how full they got depends on how QEMU's user network bunches the broker's small
  // segments (each takes a pool pbuf, whatever its size), so these are not held flat. The pbuf
  // pool may be found empty (the NIC's driver then leaves the frames in the chip for the next
  // poll: lan9118::Config::hold_when_full); what is held is that no frame was dropped and no
  // other pool ran out.
  const pools = (st) => ({ pool: st.network.pbuf_pool_max, seg: st.network.tcp_seg_max, heap: st.network.heap_max,
                           pcb: st.network.tcp_pcb_max });
  try {
    // The same work first, so that the peaks that depend on timing (a reply waiting for the TCP
    // window, the NIC's interrupt landing deep) are reached, as board_http_limits_soak does.
    const warmup = SOAK;
    await run(warmup, 0);
    const warm = await stats(client);
    const t0 = Date.now();
    await run(SOAK, warmup);
    const seconds = (Date.now() - t0) / 1000;
    const st = await stats(client);
    console.log(`# ${SOAK} requests over MQTT in ${seconds.toFixed(1)} s (${(SOAK / seconds).toFixed(0)}/s, ${WINDOW} at once); ` +
                `high-water marks ${JSON.stringify(marks(warm))} -> ${JSON.stringify(marks(st))}, ` +
                `the stack's ${warm.stack_high_water} -> ${st.stack_high_water} of ${st.stack_size} B; lwIP's most used ` +
                `${JSON.stringify(pools(warm))} -> ${JSON.stringify(pools(st))} of pool ${st.network.pbuf_pool_size} ` +
                `(found empty ${st.network.pbuf_pool_failures} times), ` +
                `segments ${st.network.tcp_seg_size}, heap ${st.network.heap_size} B, pcbs ${st.network.tcp_pcb_size}; ` +
                `mqtt ${JSON.stringify(st.mqtt)}`);
    assert.deepEqual(marks(st), marks(warm), "high-water marks flat after the warm-up");
    const n = st.network;
    assert.deepEqual([n.rx_dropped, n.rx_overrun, n.tcp_seg_failures, n.heap_failures, n.tcp_pcb_failures], [0, 0, 0, 0, 0],
                     `no frame dropped, lwIP's segments, heap and pcbs never short: ${JSON.stringify(n)}`);
    // The stack's too, but for one interrupt frame, which lands at the request path's deepest
    // point once in a while (board_uart_noise_soak, board_http_limits_soak).
    const frame = imageReport().stack.interrupt;
    assert.ok(st.stack_high_water >= warm.stack_high_water && st.stack_high_water - warm.stack_high_water <= frame,
      `stack high-water mark flat: ${warm.stack_high_water} B after the warm-up, ${st.stack_high_water} B at the end (at most ${frame} B more)`);
    // One broker connection throughout, no answer too long, none at QoS 0, nothing lost.
    assert.deepEqual({ dials: st.mqtt.dials, connects: st.mqtt.connects }, { dials: 1, connects: 1 }, JSON.stringify(st.mqtt));
    assert.deepEqual([st.mqtt.too_large, st.mqtt.qos0_fallbacks, st.mqtt.refused], [0, 0, 0], JSON.stringify(st.mqtt));
    assert.equal(st.notifications_dropped, 0);
    if (TLS) {
      // One handshake (the one broker connection), nothing refused or failed, the pool never short.
      const t = st.network;
      assert.deepEqual([t.tls_handshakes, t.tls_failed, t.tls_refused_memory, t.tls_pool_failures], [1, 0, 0, 0], JSON.stringify(t));
      assert.ok(t.tls_pool_max <= t.tls_pool_size && t.tls_established_size > 0, JSON.stringify(t));
      console.log(`# TLS: pool ${t.tls_pool_max} of ${t.tls_pool_size} B at most, the established connection ` +
                  `${t.tls_established_size} B, the handshake's peak ${t.tls_handshake_peak} B`);
    }
    assert.deepEqual(transport.violations, [], "the board kept to the MCP-over-MQTT text");
  } finally {
    await client.close();
  }
});

test("stopped, the board leaves the broker: its Will clears its presence", async () => {
  const watcher = await mqtt.connectAsync(broker.url, { protocolVersion: 5, reconnectPeriod: 0 });
  try {
    const presence = [];
    watcher.on("message", (topic, payload) => presence.push({ topic, online: payload.length !== 0 }));
    await watcher.subscribeAsync(`$mcp-server/presence/+/${server.mqttName}`, { qos: 1 });
    await waitFor(() => presence.some((p) => p.online), LIVENESS_MS, "the board's retained presence");
    const s = server;
    server = null;
    await stopNetworkServer(s);  // run-board ends QEMU, and must itself end cleanly
    await waitFor(() => presence.length > 1 && !presence.at(-1).online, LIVENESS_MS, "the Will's empty presence");
  } finally {
    await watcher.endAsync();
  }
});
