// The MQTT test harness (lib/broker.mjs) against itself: Debian's Mosquitto on a free loopback
// port, MQTT.js clients speaking MQTT 5 to it. Two clients, one subscribed with No Local,
// exchange QoS 1 messages with user properties (delivered, acknowledged, not echoed to the
// publisher); a retained message reaches a later subscriber; a client that vanishes has its Will
// published; TLS with certificates made at test time; a restart on the same port; and the
// broker's clean end. The MCP-over-MQTT tests build on this harness.
import assert from "node:assert/strict";
import net from "node:net";
import { after, before, test } from "node:test";
import mqtt from "mqtt";
import { startBroker } from "./lib/broker.mjs";

let broker;
const clients = [];
before(async () => { broker = await startBroker({ tls: true }); });
after(async () => {
  for (const c of clients) c.end(true);
  await broker?.stop();
});

// An MQTT 5 client of this test (no automatic reconnect: a lost connection must show).
async function connect(clientId, extra = {}, url = broker.url) {
  const c = await mqtt.connectAsync(url, { protocolVersion: 5, clientId, clean: true, reconnectPeriod: 0, ...extra });
  clients.push(c);
  return c;
}

// The messages `client` receives, in order, as { topic, payload (text), packet }.
function inbox(client) {
  const got = [];
  client.on("message", (topic, payload, packet) => got.push({ topic, payload: payload.toString(), packet }));
  return got;
}

async function until(predicate, what, ms = 5000) {
  const deadline = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

test("QoS 1 with user properties is delivered, and No Local keeps it from its publisher", async () => {
  const a = await connect("emcp-test-a");
  const b = await connect("emcp-test-b");
  const atA = inbox(a), atB = inbox(b);
  const subA = await a.subscribeAsync("emcp/test/rpc/#", { qos: 1, nl: true });
  const subB = await b.subscribeAsync("emcp/test/rpc/#", { qos: 1 });
  assert.deepEqual(subA.map((s) => s.qos), [1]);
  assert.deepEqual(subB.map((s) => s.qos), [1]);

  const acks = [];
  a.on("packetreceive", (p) => { if (p.cmd === "puback") acks.push(p); });
  const sent = await a.publishAsync("emcp/test/rpc/1", "from a", {
    qos: 1, properties: { userProperties: { "MCP-COMPONENT-TYPE": "mcp-client", seq: ["1", "2"] } },
  });
  assert.deepEqual(acks.map((p) => [p.messageId, p.reasonCode ?? 0]), [[sent.messageId, 0]], "the broker's PUBACK, reason Success");
  await until(() => atB.length === 1, "b to receive a's message");
  assert.equal(atB[0].topic, "emcp/test/rpc/1");
  assert.equal(atB[0].payload, "from a");
  assert.equal(atB[0].packet.qos, 1);
  assert.deepEqual({ ...atB[0].packet.properties?.userProperties }, { "MCP-COMPONENT-TYPE": "mcp-client", seq: ["1", "2"] });

  // b answers only after it got a's message: had No Local failed, a's own message would reach a
  // before b's answer does.
  await b.publishAsync("emcp/test/rpc/2", "from b", { qos: 1 });
  await until(() => atA.length >= 1, "a to receive b's message");
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(atA.map((m) => m.payload), ["from b"], "a does not receive its own message (No Local)");
  await until(() => atB.length === 2, "b to receive its own message (no No Local there)");
  assert.equal(atB[1].payload, "from b");
  assert.match(broker.log(), /Received PUBLISH from emcp-test-a \(d0, q1, r0, m\d+, 'emcp\/test\/rpc\/1'/);
});

test("a retained message reaches a later subscriber, flagged retained", async () => {
  const a = await connect("emcp-test-retain-a");
  await a.publishAsync("emcp/test/presence/dev1", '{"online":true}', { qos: 1, retain: true });
  const late = await connect("emcp-test-retain-late");
  const got = inbox(late);
  await late.subscribeAsync("emcp/test/presence/+", { qos: 1 });
  await until(() => got.length === 1, "the retained message");
  assert.equal(got[0].topic, "emcp/test/presence/dev1");
  assert.equal(got[0].payload, '{"online":true}');
  assert.equal(got[0].packet.retain, true);
  // An empty retained payload clears it: a new subscriber gets nothing.
  await a.publishAsync("emcp/test/presence/dev1", "", { qos: 1, retain: true });
  const later = await connect("emcp-test-retain-later");
  const none = inbox(later);
  await later.subscribeAsync("emcp/test/presence/+", { qos: 1 });
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(none, []);
});

test("a client that vanishes has its Will published; one that disconnects does not", async () => {
  const watcher = await connect("emcp-test-will-watcher");
  const got = inbox(watcher);
  await watcher.subscribeAsync("emcp/test/will/#", { qos: 1 });
  const will = (id) => ({
    will: { topic: `emcp/test/will/${id}`, payload: Buffer.from(`${id} is gone`), qos: 1, retain: false,
            properties: { userProperties: { reason: "lost" } } },
  });
  const polite = await connect("emcp-test-polite", will("polite"));
  await polite.endAsync();  // DISCONNECT with reason 0: no Will
  const lost = await connect("emcp-test-lost", will("lost"));
  lost.stream.destroy();    // the connection drops without DISCONNECT
  await until(() => got.length >= 1, "the Will");
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(got.map((m) => [m.topic, m.payload]), [["emcp/test/will/lost", "lost is gone"]]);
  assert.deepEqual({ ...got[0].packet.properties?.userProperties }, { reason: "lost" });
});

test("TLS: a client that trusts the test CA talks through the TLS listener", async () => {
  const plain = await connect("emcp-test-tls-plain");
  const got = inbox(plain);
  await plain.subscribeAsync("emcp/test/tls", { qos: 1 });
  const secure = await connect("emcp-test-tls", { ca: broker.tls.ca, servername: "localhost" }, broker.tls.url);
  await secure.publishAsync("emcp/test/tls", "over TLS", { qos: 1 });
  await until(() => got.length === 1, "the message sent over TLS");
  assert.equal(got[0].payload, "over TLS");
  // A client that does not trust the CA is refused at the handshake.
  await assert.rejects(mqtt.connectAsync(broker.tls.url, { protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 3000 }),
    /self.signed|unable to verify|certificate/i);
});

test("TLS with client certificates: the listener takes a client with the test's certificate, refuses one without", async () => {
  const strict = await startBroker({ tls: true, clientCerts: true });
  try {
    const { readFileSync } = await import("node:fs");
    const opts = { protocolVersion: 5, reconnectPeriod: 0, connectTimeout: 3000, ca: strict.tls.ca, servername: "localhost" };
    const ok = await mqtt.connectAsync(strict.tls.url, { ...opts, clientId: "emcp-test-cert",
      cert: readFileSync(strict.tls.clientCert), key: readFileSync(strict.tls.clientKey) });
    await ok.endAsync();
    await assert.rejects(mqtt.connectAsync(strict.tls.url, { ...opts, clientId: "emcp-test-nocert" }),
      /certificate|handshake|alert|socket|closed|ECONNRESET/i);
  } finally {
    await strict.stop();
  }
});

test("restart: the broker comes back on the same port; its clients see the loss", async () => {
  const c = await connect("emcp-test-restart");
  await c.publishAsync("emcp/test/kept", "retained before the restart", { qos: 1, retain: true });
  const closed = new Promise((resolve) => c.once("close", resolve));
  const port = broker.port;
  await broker.restart();
  await closed;
  assert.equal(broker.port, port);
  const again = await connect("emcp-test-restart-2");
  const got = inbox(again);
  // Not persisted (persistence false): the retained message of before the restart is gone.
  await again.subscribeAsync(["emcp/test/kept", "emcp/test/after"], { qos: 1 });
  await again.publishAsync("emcp/test/after", "back", { qos: 1 });
  await until(() => got.length === 1, "a message after the restart");
  await new Promise((r) => setTimeout(r, 100));
  assert.deepEqual(got.map((m) => m.payload), ["back"]);
});

test("stop: the broker ends with status 0 and its port is closed", async () => {
  for (const c of clients.splice(0)) await c.endAsync(true);
  const port = broker.port;
  await broker.stop();
  assert.match(broker.log(), /mosquitto version \S+ terminating/);
  const refused = await new Promise((resolve) => {
    const s = net.connect(port, "127.0.0.1");
    s.once("connect", () => { s.destroy(); resolve(false); });
    s.once("error", (e) => resolve(e.code === "ECONNREFUSED"));
  });
  assert.equal(refused, true, "nothing listens on the broker's port after stop()");
  broker = null;
});
