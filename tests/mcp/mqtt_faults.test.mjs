// MCP over MQTT (docs/mqtt.md) when things go wrong, against emcp-sensors --mqtt: the broker
// restarted or stalled mid-session, a client or the device vanishing without a word, a message
// over the device's Maximum Packet Size, retained junk on the topics it serves, and a hostile
// broker stand-in that speaks broken MQTT 5 (bytes written here from OASIS "MQTT Version 5.0",
// whose section numbers the rows cite). Every broker (Debian's Mosquitto, lib/broker.mjs) and
// device is started and stopped by its test; a device not killed on purpose must end cleanly
// (server_exit.mjs: status 0, no sanitizer report), and the figures it prints at its stop are
// held to what the test saw independently: the broker's log, the stand-in's bytes, its clients.
// Waits are bounded; nothing asserts that something happened fast.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import { test } from "node:test";
import mqtt from "mqtt";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { startBroker } from "./lib/broker.mjs";
import { serverCommand, waitFor } from "./lib/harness.mjs";
import { MqttClientTransport } from "./lib/mqtt_transport.mjs";
import { serverSockets } from "./lib/proc_sockets.mjs";
import { stopServer, watchServer } from "./lib/server_exit.mjs";

const SENSORS = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
/// What the device announces as its Maximum Packet Size on Linux: EMCP_MAX_MESSAGE_LEN + 1 KiB.
const DEVICE_MAX_PACKET = 65536 + 1024;
/// The least wait before the device dials again: half of backoff_min_ms (500 ms), less the 1 ms
/// its millisecond clock may lose. A lower bound only: load makes the wait longer, never shorter.
const LEAST_BACKOFF_MS = 249;
const DISCONNECTED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/disconnected" });

const rand = () => Math.random().toString(16).slice(2, 10);
const escape = (s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

// ---- The device ------------------------------------------------------------------------------

/// emcp-sensors --mqtt `url` with `id` and `name` (fresh random ones by default) and `extra`
/// options, once it says it serves (its broker connection comes up after).
async function startDevice(scene, url, { id = `faults-${rand()}`, name = `devices/faults/${rand()}`, extra = [] } = {}) {
  const [cmd, argv] = serverCommand(SENSORS, ["--mqtt", url, "--mqtt-id", id, "--mqtt-name", name, ...extra]);
  const proc = spawn(cmd, argv, { stdio: ["ignore", "ignore", "pipe"] });
  const watch = watchServer(proc, `emcp-sensors --mqtt ${url} --mqtt-id ${id}`);
  const dev = {
    id, name, proc, watch, ended: false,
    presence: `$mcp-server/presence/${id}/${name}`,
    control: `$mcp-server/${id}/${name}`,
    rpc: (client) => `$mcp-rpc/${client}/${id}/${name}`,
    /// How many times it said its broker connection came up, and went.
    connects: () => (watch.stderr().match(/^mqtt: connected;/gm) ?? []).length,
    losses: () => (watch.stderr().match(/^mqtt: connection lost/gm) ?? []).length,
  };
  scene.devices.push(dev);
  let exited = null;
  watch.exited.then((how) => { exited = how; });
  await waitFor(() => exited !== null || /serving MCP over MQTT through/.test(watch.stderr()), 10000, `${watch.name} to start`);
  if (exited !== null) throw new Error(`${watch.name} exited at its start (${JSON.stringify(exited)}): ${watch.stderr()}`);
  return dev;
}

/// The figures the device prints at its stop (ports/posix/src/serve/mqtt_serve.cpp, stop_mqtt).
const SUMMARY = new RegExp(": MQTT: (\\d+) connections \\((\\d+) dials, (\\d+) refused by the broker, (\\d+) protocol " +
  "errors, (\\d+) keep-alive timeouts\\), (\\d+) sessions \\((\\d+) ended by their client, (\\d+) by a lost " +
  "connection, (\\d+) at stop\\), (\\d+) initialize refused \\(no free slot\\), (\\d+) answers too large, (\\d+) " +
  "stray messages \\((\\d+) retained\\), (\\d+) connections left: the control topic refused");
const FIGURES = ["connections", "dials", "refusedByBroker", "protocolErrors", "keepAliveTimeouts", "sessions",
                 "endedByClient", "endedByLoss", "endedAtStop", "initializeRefused", "tooLarge", "stray", "retained",
                 "controlRefused"];

/// SIGTERM; it must end cleanly (throws otherwise). Resolves with its figures.
async function stopDevice(dev) {
  dev.ended = true;
  await stopServer(dev.watch, "SIGTERM");
  const m = SUMMARY.exec(dev.watch.stderr());
  assert.ok(m, `${dev.watch.name} prints its MQTT figures at its stop; its stderr:\n${dev.watch.stderr()}`);
  return Object.fromEntries(FIGURES.map((f, i) => [f, Number(m[i + 1])]));
}

/// Some of `figures`, to compare with what the test expects of them.
const pick = (figures, expected) => Object.fromEntries(Object.keys(expected).map((k) => [k, figures[k]]));

// ---- Clients ---------------------------------------------------------------------------------

/// An SDK client session with the device through the broker (lib/mqtt_transport.mjs: MQTT.js,
/// as the MCP-over-MQTT text says), found by its retained presence.
async function openSession(scene, url, dev, { clientId = `faults-client-${rand()}`, filter = dev.name } = {}) {
  const transport = new MqttClientTransport({ url, serverNameFilter: filter, serverName: dev.name, clientId });
  const client = new Client({ name: "emcp-mqtt-faults", version: "1.0.0" }, { capabilities: {} });
  const session = { client, transport, clientId };
  scene.sessions.push(session);
  await client.connect(transport, { timeout: 15000 });
  return session;
}

async function echo(session, text) {
  const r = await session.client.callTool({ name: "echo", arguments: { text } }, undefined, { timeout: 15000 });
  assert.equal(r.content?.[0]?.text, text, `echo's answer: ${JSON.stringify(r)}`);
}

/// A plain MQTT 5 client of the test (no reconnection: a lost connection must show).
async function plainClient(scene, url, extra = {}) {
  const c = await mqtt.connectAsync(url, { protocolVersion: 5, clientId: `faults-plain-${rand()}`, clean: true,
                                           reconnectPeriod: 0, connectTimeout: 5000, ...extra });
  c.on("error", () => {});
  scene.clients.push(c);
  return c;
}

/// The messages `client` receives from now on, as { topic, payload (text), retain }.
function inbox(client) {
  const got = [];
  client.on("message", (topic, payload, packet) => got.push({ topic, payload: payload.toString(), retain: packet.retain }));
  return got;
}

/// Waits until the broker's log (log_type all) has a line matching `re`.
function waitLog(broker, re, what, ms = 15000) {
  return waitFor(() => re.test(broker.log()), ms, `the broker's log to show ${what}`);
}

/// Mosquitto logs each filter a client unsubscribes as "<time>: <client-id> <filter>".
const unsubscribedLine = (dev, filter) => new RegExp(`^\\S+ ${escape(dev.id)} ${escape(filter)}$`, "m");

/// The device has acknowledged every QoS 1 message the broker sent it on its current connection
/// (it does once it has handled one): the broker's log has a PUBACK from it for each (but those
/// the broker logged sending and then dropped as too large for it).
function deviceSettled(broker, dev) {
  const log = broker.log();
  const current = log.slice(log.lastIndexOf(` as ${dev.id} (`));
  const count = (re) => (current.match(re) ?? []).length;
  return count(new RegExp(`Sending PUBLISH to ${escape(dev.id)} \\(d\\d, q1,`, "g")) -
         count(new RegExp(`Dropping too large outgoing PUBLISH for ${escape(dev.id)} `, "g")) ===
         count(new RegExp(`Received PUBACK from ${escape(dev.id)} `, "g"));
}

/// The client's three topics the device subscribes to for its session, the last one last.
const clientTopics = (dev, clientId) => [dev.rpc(clientId), `$mcp-client/capability/${clientId}`, `$mcp-client/presence/${clientId}`];

/// Waits until the device has ended `clientId`'s session (the broker logs it unsubscribing the
/// client's three topics) and handled everything the broker sent it until then.
async function sessionEnded(broker, dev, clientId) {
  for (const filter of clientTopics(dev, clientId))
    await waitLog(broker, unsubscribedLine(dev, filter), `${dev.id} unsubscribing ${filter}`);
  await waitFor(() => deviceSettled(broker, dev), 15000, `${dev.id} to acknowledge what the broker sent it`);
}

/// Ends an SDK session as the text says (lib/mqtt_transport.mjs close()) and waits until the
/// device has ended it.
async function closeSession(broker, dev, session) {
  await session.client.close();
  await sessionEnded(broker, dev, session.clientId);
}

/// A device on `broker` (startDevice's `options`) and an SDK session with it, served once.
async function servedDevice(scene, broker, options) {
  const dev = await startDevice(scene, broker.url, options);
  const session = await openSession(scene, broker.url, dev);
  await echo(session, "served");
  return { dev, a: session };
}

/// A plain client subscribed to `filter`, once it has received the device's retained presence.
async function watchPresence(scene, broker, filter) {
  const watcher = await plainClient(scene, broker.url);
  const seen = inbox(watcher);
  await watcher.subscribeAsync(filter, { qos: 1 });
  await waitFor(() => seen.length === 1, 5000, "the device's retained presence");
  assert.equal(seen[0].retain, true);
  assert.equal(JSON.parse(seen[0].payload).method, "notifications/server/online");
  return { watcher, seen };
}

/// A test's broker, devices and clients, all ended whatever happens; the first problem thrown.
async function withBroker(fn) {
  const scene = { broker: await startBroker(), devices: [], sessions: [], clients: [], cleanup: [] };
  const problems = [];
  try {
    await fn(scene, scene.broker);
  } catch (e) {
    problems.push(e);
  }
  for (const f of scene.cleanup) await Promise.resolve().then(f).catch((e) => problems.push(e));
  for (const s of scene.sessions) await s.client.close().catch(() => {});
  for (const c of scene.clients) c.end(true);
  for (const d of scene.devices) if (!d.ended) await stopDevice(d).catch((e) => problems.push(e));
  await scene.broker.stop().catch((e) => problems.push(e));
  if (problems.length) throw problems[0];
}

// ---- Brokers that fail, clients and devices that vanish -----------------------------------------

test("the broker restarted mid-session: the Wills go out, the device dials again, announces itself and serves", { timeout: 120000 }, () =>
  withBroker(async (scene, broker) => {
    const { dev, a } = await servedDevice(scene, broker);
    const { watcher, seen } = await watchPresence(scene, broker, dev.presence);
    const watcherClosed = new Promise((resolve) => watcher.once("close", resolve));

    await broker.restart();
    await watcherClosed;
    // Mosquitto 2.0 publishes the Will of every client still connected as it terminates, before
    // it closes their connections (its log says whom it sent what): the device's (an empty
    // message on its presence topic) reached the watcher, live (not flagged retained), and the
    // session's client, which took the server as gone; the session client's Will
    // (notifications/disconnected on its presence topic) reached the device.
    assert.deepEqual(seen.slice(1), [{ topic: dev.presence, payload: "", retain: false }]);
    assert.equal(a.transport.serverGone, true, "the session's client saw the presence cleared");
    const ending = broker.log().split(/^.*mosquitto version \S+ terminating$/m)[1] ?? "";
    const sent = (to, topic) => new RegExp(`Sending PUBLISH to ${escape(to)} \\([^)]*'${escape(topic)}', \\.\\.\\. \\((\\d+) bytes\\)`).exec(ending);
    assert.equal(sent(a.clientId, dev.presence)?.[1], "0", `the device's Will to the session's client; the log's end:\n${ending}`);
    assert.ok(sent(dev.id, `$mcp-client/presence/${a.clientId}`), "the session client's Will to the device");

    // The restarted broker keeps nothing (persistence false): the device dials again (its backoff,
    // 500 ms doubling, while the broker is down), announces itself again, and a fresh client
    // finds it by that retained presence and is served.
    await waitFor(() => dev.connects() === 2, 30000, "the device to connect to the restarted broker");
    const b = await openSession(scene, broker.url, dev);
    await echo(b, "after the restart");
    assert.deepEqual([...a.transport.violations, ...b.transport.violations], []);
    await closeSession(broker, dev, b);
    const figures = await stopDevice(dev);
    // Both sessions ended once, by their client: the first by the Will the broker sent as it
    // terminated (before the device lost its connection), the second by its close.
    const expected = { connections: 2, sessions: 2, endedByClient: 2, endedByLoss: 0, endedAtStop: 0,
                       protocolErrors: 0, keepAliveTimeouts: 0, refusedByBroker: 0 };
    assert.deepEqual(pick(figures, expected), expected);
    assert.ok(figures.dials >= 2, JSON.stringify(figures));
  }));

test("a client vanishing: the broker publishes its Will, the device ends that session and serves the others", { timeout: 120000 }, () =>
  withBroker(async (scene, broker) => {
    const dev = await startDevice(scene, broker.url);
    const stays = await openSession(scene, broker.url, dev);
    const vanishes = await openSession(scene, broker.url, dev);
    await echo(stays, "one");
    await echo(vanishes, "two");
    // Its Will (lib/mqtt_transport.mjs, as the text requires: notifications/disconnected on
    // $mcp-client/presence/{id}) goes out when its connection drops without DISCONNECT.
    vanishes.transport.mqtt.stream.destroy();
    const will = `$mcp-client/presence/${vanishes.clientId}`;
    await waitLog(broker, new RegExp(`Sending PUBLISH to ${escape(dev.id)} \\([^)]*'${escape(will)}'`),
                  `the Will of ${vanishes.clientId} sent to the device`);
    // The device ended that session: it unsubscribes the client's three topics.
    await sessionEnded(broker, dev, vanishes.clientId);
    await echo(stays, "still served");
    await closeSession(broker, dev, stays);
    const figures = await stopDevice(dev);
    // Both sessions ended by their client (one by its Will), none at the stop.
    const expected = { sessions: 2, endedByClient: 2, endedByLoss: 0, endedAtStop: 0, connections: 1, protocolErrors: 0 };
    assert.deepEqual(pick(figures, expected), expected);
    assert.deepEqual(stays.transport.violations, []);
  }));

test("a device vanishing (kill -9): its Will clears its presence", { timeout: 120000 }, () =>
  withBroker(async (scene, broker) => {
    const { dev, a } = await servedDevice(scene, broker);
    const { seen } = await watchPresence(scene, broker, `$mcp-server/presence/+/${dev.name}`);
    // Killed: its end is ours, not judged as a clean one (it is not one).
    dev.ended = true;
    dev.proc.kill("SIGKILL");
    const how = await dev.watch.exited;
    assert.equal(how.signal, "SIGKILL");
    await waitFor(() => seen.length === 2, 15000, "the device's Will");
    assert.deepEqual(seen[1], { topic: dev.presence, payload: "", retain: false });
    await waitFor(() => a.transport.serverGone === true, 5000, "the session's client to take the server as gone");
    // The Will was retained: it cleared the retained presence. A later subscriber gets nothing,
    // before a message of its own published after its SUBACK (the broker sends retained
    // messages with the SUBACK, before it reads what the client sends next).
    const later = await plainClient(scene, broker.url);
    const got = inbox(later);
    const marker = `faults/marker/${rand()}`;
    await later.subscribeAsync({ [`$mcp-server/presence/+/${dev.name}`]: { qos: 1 }, [marker]: { qos: 1 } });
    await later.publishAsync(marker, "marker", { qos: 1 });
    await waitFor(() => got.some((m) => m.topic === marker), 5000, "the marker");
    assert.deepEqual(got.map((m) => m.topic), [marker], "no presence left for the killed device");
  }));

test("a stalled broker (SIGSTOP): the keep-alive notices, the device keeps dialing, and serves after SIGCONT", { timeout: 120000 }, () =>
  withBroker(async (scene, broker) => {
    const { dev } = await servedDevice(scene, broker, { extra: ["--mqtt-keepalive", "1"] });
    // The device's connections to the broker as the kernel sees them (its sockets in /proc): a
    // stopped broker's kernel still completes the handshakes (its listen backlog).
    const port = `:${broker.port.toString(16).toUpperCase().padStart(4, "0")}`;
    const dialed = new Set();
    const look = () => {
      for (const s of serverSockets(dev.proc.pid).open) if (s.remote.endsWith(port)) dialed.add(s.local);
      return dialed.size;
    };
    assert.equal(look(), 1, "one connection to the broker");
    broker.signal("SIGSTOP");
    let stopped = true;
    scene.cleanup.push(() => { if (stopped) broker.signal("SIGCONT"); });
    // No PINGRESP within the keep-alive (1 s) of its PINGREQ: closed; then no CONNACK within the
    // keep-alive of each CONNECT: closed again, and dialed again after the backoff.
    await waitFor(() => dev.losses() === 1, 15000, "the device to notice the stalled broker");
    await waitFor(() => look() >= 3, 20000, "the device to dial the stalled broker twice more");
    broker.signal("SIGCONT");
    stopped = false;
    // The broker wakes to the stale connections in its backlog (each a CONNECT for the same id,
    // then a DISCONNECT or nothing) before the live one: the device may be taken over once more
    // and dial again, so serving is tried up to three times.
    await waitFor(() => dev.connects() >= 2, 30000, "the device to connect again");
    for (let attempt = 1; ; ++attempt) {
      try {
        const b = await openSession(scene, broker.url, dev);
        await echo(b, "after the stall");
        assert.deepEqual(b.transport.violations, []);
        await closeSession(broker, dev, b);
        break;
      } catch (e) {
        if (attempt === 3) throw e;
      }
    }
    const figures = await stopDevice(dev);
    assert.equal(figures.keepAliveTimeouts, 1, JSON.stringify(figures));
    assert.ok(figures.dials >= dialed.size, `${figures.dials} dials, ${dialed.size} connections seen`);
    assert.equal(figures.protocolErrors, 0);
    assert.ok(figures.endedByLoss >= 1 && figures.endedByClient >= 1, JSON.stringify(figures));
  }));

test("a message over the device's Maximum Packet Size is not delivered; the device keeps serving", { timeout: 120000 }, () =>
  withBroker(async (scene, broker) => {
    const { dev, a } = await servedDevice(scene, broker);
    // A request of 100 KB on the session's RPC topic, as its client would send it.
    const request = JSON.stringify({ jsonrpc: "2.0", id: "big", method: "tools/call",
                                     params: { name: "echo", arguments: { text: "x".repeat(100 * 1024) } } });
    const sender = await plainClient(scene, broker.url);
    await sender.publishAsync(dev.rpc(a.clientId), request, {
      qos: 1, properties: { userProperties: { "MCP-COMPONENT-TYPE": "mcp-client", "MCP-MQTT-CLIENT-ID": a.clientId } } });
    // MQTT 5 3.1.2.11.4: the broker must not send a packet over the Maximum Packet Size its
    // receiver announced. Mosquitto drops it for the device, and says so.
    const dropped = new RegExp(`Dropping too large outgoing PUBLISH for ${escape(dev.id)} \\((\\d+) bytes\\)`);
    await waitLog(broker, dropped, "the request dropped for the device");
    assert.ok(Number(dropped.exec(broker.log())[1]) > DEVICE_MAX_PACKET);
    await echo(a, "after");
    await closeSession(broker, dev, a);
    const figures = await stopDevice(dev);
    // Never delivered: no protocol error, no reconnection, no answer too large.
    const expected = { connections: 1, protocolErrors: 0, tooLarge: 0, sessions: 1, endedByClient: 1 };
    assert.deepEqual(pick(figures, expected), expected);
  }));

test("retained junk on the presence, control and client topics: the device starts, announces and serves", { timeout: 120000 }, () =>
  withBroker(async (scene, broker) => {
    const id = `faults-${rand()}`;
    const name = `devices/faults/${rand()}`;
    const clientId = `faults-client-${rand()}`;
    const client = (c) => ({ "MCP-COMPONENT-TYPE": "mcp-client", "MCP-MQTT-CLIENT-ID": c });
    // One retained message per topic (a broker keeps one); an empty payload cannot be kept (it
    // deletes what a topic holds, 3.3.1.3): it goes live to the control topic below.
    const junk = [
      { topic: "$mcp-server/presence/junk/devices/x", payload: "not JSON {" },
      { topic: "$mcp-server/presence/junk/devices/huge", payload: "x".repeat(100 * 1024) },
      // A stale initialize from a client long gone: it would open a session at every connection.
      { topic: `$mcp-server/${id}/${name}`, user: client("ghost"), payload: JSON.stringify({
        jsonrpc: "2.0", id: 1, method: "initialize",
        params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "ghost", version: "0" } } }) },
      // On the topics of the client to come: a request of 100 KB, JSON that is not JSON-RPC, and a
      // "disconnected" that would end its session as it begins.
      { topic: `$mcp-rpc/${clientId}/${id}/${name}`, user: client(clientId), payload: JSON.stringify({
        jsonrpc: "2.0", id: "stale", method: "tools/call", params: { name: "echo", arguments: { text: "y".repeat(100 * 1024) } } }) },
      { topic: `$mcp-client/capability/${clientId}`, user: client(clientId), payload: '{"hello":"world"}' },
      { topic: `$mcp-client/presence/${clientId}`, user: client(clientId), payload: DISCONNECTED },
    ];
    const publisher = await plainClient(scene, broker.url);
    for (const j of junk)
      await publisher.publishAsync(j.topic, j.payload, { qos: 1, retain: true, properties: j.user ? { userProperties: j.user } : {} });
    // They are there: a subscriber gets each, flagged retained.
    const checker = await plainClient(scene, broker.url);
    const kept = inbox(checker);
    await checker.subscribeAsync(Object.fromEntries(junk.map((j) => [j.topic, { qos: 1 }])));
    await waitFor(() => kept.length === junk.length, 5000, "the retained junk");
    assert.ok(kept.every((m) => m.retain), "every junk message retained");

    const dev = await startDevice(scene, broker.url, { id, name });
    await waitFor(() => dev.connects() === 1, 15000, "the device to connect");
    // An empty message, live, on the control topic: not JSON-RPC, dropped (counted stray).
    await publisher.publishAsync(`$mcp-server/${id}/${name}`, "", { qos: 1 });
    // A client that discovers servers by "#" sees the junk presence, and still finds the device.
    const s = await openSession(scene, broker.url, dev, { clientId, filter: "#" });
    await echo(s, "served");
    const tools = await s.client.listTools(undefined, { timeout: 15000 });
    assert.ok(tools.tools.some((t) => t.name === "echo"));
    // What the client recorded as breaking the text is the junk it got itself: both junk presences,
    // and the junk on its own RPC topic (retained, its own id in MCP-MQTT-CLIENT-ID).
    assert.deepEqual(s.transport.violations.map((v) => v.replace(/: (not JSON \{|x+)$/, ": <junk>")).sort(), [
      `our own message came back on ${dev.rpc(clientId)} (No Local)`,
      "presence is not JSON: <junk>", "presence is not JSON: <junk>"]);
    await closeSession(broker, dev, s);
    const figures = await stopDevice(dev);
    // Nothing retained was sent to the device (it subscribes with Retain Handling 2) ...
    const log = broker.log();
    assert.doesNotMatch(log, new RegExp(`Sending PUBLISH to ${escape(id)} \\(d\\d, q\\d, r1,`));
    // ... so the ghost opened no session and the junk ended none; its stray messages are the empty
    // one, and the client's "disconnected" on its presence topic if the broker delivered it
    // after the one on the RPC topic had ended the session.
    const presenceAfter = (log.match(new RegExp(`Sending PUBLISH to ${escape(id)} \\([^)]*'${escape(`$mcp-client/presence/${clientId}`)}'`, "g")) ?? []).length;
    const expected = { sessions: 1, endedByClient: 1, endedByLoss: 0, connections: 1, protocolErrors: 0, retained: 0,
                       stray: 1 + presenceAfter };
    assert.deepEqual(pick(figures, expected), expected);
  }));

// ---- A hostile broker stand-in ----------------------------------------------------------------

// MQTT 5.0 by hand: 1.5.5 Variable Byte Integer, 1.5.2 Two Byte Integer, 1.5.3 Four Byte
// Integer, 1.5.4 UTF-8 Encoded String (a Buffer: bytes as they are), 2.2.2 Properties, 2.1.1 the
// fixed header.
const vbi = (n) => {
  const out = [];
  do {
    let b = n % 128;
    n = Math.floor(n / 128);
    if (n > 0) b |= 0x80;
    out.push(b);
  } while (n > 0);
  return out;
};
const u16 = (n) => [n >> 8, n & 0xff];
const u32 = (n) => [(n >>> 24) & 0xff, (n >>> 16) & 0xff, (n >>> 8) & 0xff, n & 0xff];
const str = (s) => {
  const b = [...(Buffer.isBuffer(s) ? s : Buffer.from(s, "utf8"))];
  return [...u16(b.length), ...b];
};
const props = (...p) => {
  const b = p.flat();
  return [...vbi(b.length), ...b];
};
const packet = (first, ...body) => {
  const b = body.flat();
  return Buffer.from([first, ...vbi(b.length), ...b]);
};
/// CONNACK (3.2): Connect Acknowledge Flags, Reason Code, properties.
const connack = (flags, reason, p = props()) => packet(0x20, flags, reason, p);
const CONNACK_OK = connack(0x00, 0x00);
/// PUBLISH (3.3) from the server: `first` its fixed header's first byte (0x30 | QoS << 1).
const publish = (topic, { first = 0x30, p = props(), payload = "hi" } = {}) =>
  packet(first, str(topic), (first >> 1) & 3 ? u16(1) : [], p, [...Buffer.from(payload)]);

// Each row: what the stand-in sends right after the device's CONNECT (`connected` false) or
// after a good CONNACK and the device's announcement (`connected` true; `bytes` may then be a
// function of the device's packets so far), and what the device must send before it closes:
// DISCONNECT with the reason code docs/mqtt.md's Packets table names, or nothing (null). `close`:
// the stand-in closes its side after sending. `leave`: not a protocol error, the device leaves a
// broker that refused what it needs (McpStats::control_refused).
const ROWS = [
  // Before CONNACK.
  { name: "CONNACK with a reserved Connect Acknowledge Flags bit (3.2.2.1)", bytes: connack(0x02, 0x00), expect: 0x81 },
  { name: "CONNACK refused, 0x87 Not authorized: no DISCONNECT", bytes: connack(0x00, 0x87), expect: null, refusal: true },
  { name: "CONNACK refused, 0x8A Banned: no DISCONNECT", bytes: connack(0x00, 0x8a), expect: null, refusal: true },
  { name: "CONNACK refusal with Session Present (3.2.2.1.1)", bytes: connack(0x01, 0x87), expect: 0x82 },
  { name: "CONNACK Success with Session Present, after a Clean Start (3.2.2.1.1, MQTT-3.2.2-4)", bytes: connack(0x01, 0x00), expect: 0x82 },
  { name: "CONNACK with Receive Maximum 0 (3.2.2.3.3)", bytes: connack(0, 0, props(0x21, u16(0))), expect: 0x82 },
  { name: "CONNACK with Maximum QoS twice (3.2.2.3.4)", bytes: connack(0, 0, props(0x24, 0, 0x24, 0)), expect: 0x82 },
  { name: "CONNACK with Maximum QoS 2 (3.2.2.3.4)", bytes: connack(0, 0, props(0x24, 2)), expect: 0x82 },
  { name: "CONNACK with Payload Format Indicator, a PUBLISH property (2.2.2.2)", bytes: connack(0, 0, props(0x01, 1)), expect: 0x81 },
  { name: "CONNACK with an Authentication Method never asked for (4.12)", bytes: connack(0, 0, props(0x15, str("SCRAM-SHA-1"))), expect: 0x82 },
  { name: "CONNACK whose Assigned Client Identifier holds U+0000 (1.5.4)", bytes: connack(0, 0, props(0x12, str(Buffer.from("a\0b")))), expect: 0x81 },
  { name: "CONNACK whose Reason String is not UTF-8 (1.5.4)", bytes: connack(0, 0, props(0x1f, str(Buffer.from([0xc3, 0x28])))), expect: 0x81 },
  { name: "CONNACK longer than the device's 512-byte packet head (a 600-byte User Property)",
    bytes: connack(0, 0, props(0x26, str("k"), str("v".repeat(600)))), expect: 0x95 },
  { name: "PUBLISH before CONNACK (3.2: the server's first packet is CONNACK)", bytes: publish("a/b"), expect: 0x82 },
  { name: "packet type 0, Reserved (2.1.2)", bytes: Buffer.from([0x00, 0x00]), expect: 0x81 },
  { name: "garbage: an HTTP answer", bytes: Buffer.from("HTTP/1.1 400 Bad Request\r\n\r\n"), expect: 0x81 },
  // After a good CONNACK.
  { name: "a second CONNACK (3.2)", connected: true, bytes: CONNACK_OK, expect: 0x82 },
  { name: "PUBLISH at QoS 3 (3.3.1.2)", connected: true, bytes: publish("a/b", { first: 0x36 }), expect: 0x81 },
  { name: "PUBLISH at QoS 2: more than the device subscribed for, and QoS 2 it never uses", connected: true,
    bytes: publish("a/b", { first: 0x34 }), expect: 0x82 },
  { name: "PUBLISH with a Topic Alias: the device's Topic Alias Maximum is 0 (3.3.2.3.4)", connected: true,
    bytes: publish("a/b", { p: props(0x23, u16(1)) }), expect: 0x94 },
  { name: "PUBLISH with a wildcard in its Topic Name (3.3.2.1)", connected: true, bytes: publish("a/+"), expect: 0x90 },
  { name: "PUBLISH with an empty Topic Name and no Topic Alias (3.3.2.3.4)", connected: true, bytes: publish(""), expect: 0x82 },
  { name: "PUBLISH whose Topic Name holds U+0000 (1.5.4)", connected: true, bytes: publish(Buffer.from("a\0b")), expect: 0x81 },
  { name: "PUBLISH whose Topic Name holds a UTF-16 surrogate, U+D800 (1.5.4)", connected: true,
    bytes: publish(Buffer.from([0x61, 0xed, 0xa0, 0x80])), expect: 0x81 },
  { name: "PUBLISH with Payload Format Indicator twice (2.2.2.2)", connected: true,
    bytes: publish("a/b", { p: props(0x01, 1, 0x01, 1) }), expect: 0x82 },
  { name: "PUBLISH with Payload Format Indicator 2 (3.3.2.3.2)", connected: true, bytes: publish("a/b", { p: props(0x01, 2) }), expect: 0x82 },
  { name: "a Remaining Length of five bytes (1.5.5)", connected: true, bytes: Buffer.from([0x30, 0xff, 0xff, 0xff, 0xff, 0x7f]), expect: 0x81 },
  { name: "a Remaining Length not in its fewest bytes (1.5.5)", connected: true, bytes: Buffer.from([0xd0, 0x80, 0x00]), expect: 0x81 },
  { name: "a PUBLISH longer than the device's Maximum Packet Size (3.1.2.11.4; its header only)", connected: true,
    bytes: Buffer.from([0x30, ...vbi(DEVICE_MAX_PACKET + 1000)]), expect: 0x95 },
  { name: "AUTH, never asked for (4.12)", connected: true, bytes: packet(0xf0), expect: 0x82 },
  { name: "PINGREQ from the server (3.12)", connected: true, bytes: packet(0xc0), expect: 0x82 },
  { name: "PINGRESP with a reserved flag set (2.1.3)", connected: true, bytes: Buffer.from([0xd1, 0x00]), expect: 0x81 },
  { name: "PUBREL: QoS 2 is never used (3.6)", connected: true, bytes: packet(0x62, u16(1)), expect: 0x82 },
  { name: "PUBACK with Packet Identifier 0 (2.2.1)", connected: true, bytes: packet(0x40, u16(0)), expect: 0x82 },
  { name: "SUBACK without a Reason Code (3.9.3)", connected: true, bytes: packet(0x90, u16(1), props()), expect: 0x82 },
  // (Mosquitto never refuses a SUBSCRIBE for its acl_file, its maintainer says: the ACL stops the
  // delivery instead. A broker that does, its dynamic security plugin, EMQX, HiveMQ, is this row.)
  { name: "SUBACK 0x87 Not authorized for the control topic: no client could initialize; the device leaves with its Will",
    connected: true, bytes: (sent) => packet(0x90, [...sent[1].body.subarray(0, 2)], props(), 0x87), expect: 0x04, leave: true },
  { name: "DISCONNECT with a Session Expiry Interval, the client's to send (3.14.2.2.2)", connected: true,
    bytes: packet(0xe0, 0x00, props(0x11, u32(10))), expect: 0x82 },
  { name: "DISCONNECT with 0x04, a client's reason code (3.14.2.1)", connected: true, bytes: packet(0xe0, 0x04), expect: 0x82 },
  { name: "DISCONNECT 0x8B Server shutting down: the device closes, answers nothing", connected: true,
    bytes: packet(0xe0, 0x8b), expect: null },
  { name: "a truncated PUBLISH, then the connection closed", connected: true,
    bytes: Buffer.from([0x30, 0x0a, 0x00, 0x03, 0x61]), close: true, expect: null },
];

/// The Variable Byte Integer (1.5.5) at `pos` of `buf`: { value, next } (the position after
/// it), or null when `buf` ends first.
function readVbi(buf, pos) {
  let value = 0, mul = 1;
  for (let k = 0; k < 4 && pos < buf.length; ++k) {
    const b = buf[pos++];
    value += (b & 0x7f) * mul;
    mul *= 128;
    if ((b & 0x80) === 0) return { value, next: pos };
  }
  return null;
}

/// Complete packets in `buf` as { type, flags, body }.
function parsePackets(buf) {
  const out = [];
  let pos = 0;
  while (pos < buf.length) {
    const len = readVbi(buf, pos + 1);
    if (len === null || len.next + len.value > buf.length) break;
    out.push({ type: buf[pos] >> 4, flags: buf[pos] & 15, body: buf.subarray(len.next, len.next + len.value) });
    pos = len.next + len.value;
  }
  return out;
}

/// A device's packet, said in a few words ("DISCONNECT 0x81").
function describe(p) {
  const names = { 1: "CONNECT", 3: "PUBLISH", 4: "PUBACK", 8: "SUBSCRIBE", 10: "UNSUBSCRIBE", 12: "PINGREQ", 14: "DISCONNECT" };
  if (p.type === 14) return `DISCONNECT 0x${(p.body.length ? p.body[0] : 0).toString(16).padStart(2, "0")}`;  // 3.14.2.1
  return names[p.type] ?? `type ${p.type}`;
}

/// A device's PUBLISH (3.3): its Topic Name, RETAIN, payload (its properties skipped).
function publishOf(p) {
  const b = p.body;
  let pos = 2 + b.readUInt16BE(0);
  const topic = b.subarray(2, pos).toString();
  if ((p.flags >> 1) & 3) pos += 2;  // Packet Identifier
  const props = readVbi(b, pos);
  return { topic, retain: (p.flags & 1) === 1, payload: b.subarray(props.next + props.value).toString() };
}

/// The device's CONNECT (3.1), checked: "MQTT" version 5, Clean Start, a Will, its client id,
/// the Maximum Packet Size it announces.
function checkConnect(p, id) {
  assert.equal(describe(p), "CONNECT");
  const b = p.body;
  assert.deepEqual([...b.subarray(0, 7)], [0, 4, 0x4d, 0x51, 0x54, 0x54, 5], "protocol name and version (3.1.2.1, 3.1.2.2)");
  assert.equal(b[7] & 0x06, 0x06, "Clean Start and a Will (3.1.2.4, 3.1.2.5)");
  const props = readVbi(b, 10);
  let pos = props.next;
  const end = pos + props.value;
  let maxPacket = null;
  const sizes = { 0x11: 4, 0x21: 2, 0x27: 4, 0x22: 2, 0x19: 1, 0x17: 1 };  // 3.1.2.11
  while (pos < end) {
    const prop = b[pos++];
    if (prop === 0x27) maxPacket = b.readUInt32BE(pos);
    if (sizes[prop]) pos += sizes[prop];
    else if (prop === 0x26) pos += 2 + b.readUInt16BE(pos), pos += 2 + b.readUInt16BE(pos);
    else assert.fail(`a CONNECT property the device has no reason to send: 0x${prop.toString(16)}`);
  }
  assert.equal(maxPacket, DEVICE_MAX_PACKET, "the Maximum Packet Size it announces (3.1.2.11.4)");
  assert.equal(b.subarray(end + 2, end + 2 + b.readUInt16BE(end)).toString(), id, "its client id (3.1.3.1)");
}

/// A TCP server on a loopback port that is no broker: it records each connection's bytes.
async function startStandIn() {
  const conns = [];
  let taken = 0;
  const server = net.createServer((sock) => {
    const c = { sock, bytes: Buffer.alloc(0), closed: false, openedAt: performance.now() };
    sock.on("data", (d) => { c.bytes = Buffer.concat([c.bytes, d]); });
    sock.on("close", () => { c.closed = true; });
    sock.on("error", () => {});
    c.packets = () => parsePackets(c.bytes);
    conns.push(c);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    url: `mqtt://127.0.0.1:${server.address().port}`,
    connections: () => conns.length,
    /// The device's next connection, with its CONNECT.
    async next(what) {
      await waitFor(() => conns.length > taken, 15000, what);
      const c = conns[taken++];
      await waitFor(() => c.packets().length >= 1 || c.closed, 15000, `${what}: its CONNECT`);
      return c;
    },
    async close() {
      for (const c of conns) c.sock.destroy();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}

test(`a hostile broker stand-in: ${ROWS.length} bad inputs, each ended with the right DISCONNECT (or none) and dialed again`, { timeout: 240000 }, async () => {
  const standIn = await startStandIn();
  const scene = { devices: [], sessions: [], clients: [] };
  try {
    const dev = await startDevice(scene, standIn.url);
    // A row that fails before CONNACK doubles the backoff, one after a good CONNACK starts it
    // over: they alternate, so that the waits stay short.
    const before = ROWS.filter((r) => !r.connected), after = ROWS.filter((r) => r.connected);
    const order = [];
    for (let i = 0; i < Math.max(before.length, after.length); ++i) order.push(...[after[i], before[i]].filter(Boolean));
    let previous = null;
    for (const row of [...order, null]) {
      const c = await standIn.next(row ? `the device's connection for: ${row.name}` : "the device's connection after the table");
      if (previous) {
        // It dialed again, and not at once: at least half its least backoff after the input.
        assert.ok(c.openedAt - previous.sentAt >= LEAST_BACKOFF_MS,
                  `the device dialed ${(c.openedAt - previous.sentAt).toFixed(0)} ms after: ${previous.row.name}`);
      }
      checkConnect(c.packets()[0], dev.id);
      if (row === null || row.connected) {
        c.sock.write(CONNACK_OK);
        // The device subscribes to its control topic and announces itself (3.3: retained).
        await waitFor(() => c.closed || c.packets().some((p) => p.type === 3), 15000, "the device's presence");
        const sent = c.packets();
        assert.deepEqual(sent.map(describe), ["CONNECT", "SUBSCRIBE", "PUBLISH"], row?.name);
        const presence = publishOf(sent[2]);
        assert.equal(presence.topic, dev.presence);
        assert.equal(presence.retain, true, "its presence is retained");
        assert.equal(JSON.parse(presence.payload).method, "notifications/server/online");
      }
      if (row === null) {
        // After the table: a clean stop clears the presence (an empty retained message) and
        // disconnects with Normal disconnection.
        const mark = c.packets().length;
        const figures = await stopDevice(dev);
        await waitFor(() => c.closed, 15000, "the device to close at its stop");
        const last = c.packets().slice(mark);
        assert.deepEqual(last.map(describe), ["PUBLISH", "DISCONNECT 0x00"]);
        assert.deepEqual(publishOf(last[0]), { topic: dev.presence, retain: true, payload: "" }, "the presence cleared");
        const expected = {
          dials: ROWS.length + 1,
          connections: after.length + 1,
          refusedByBroker: ROWS.filter((r) => r.refusal).length,
          protocolErrors: ROWS.filter((r) => r.expect !== null && !r.leave).length,
          keepAliveTimeouts: 0,
          sessions: 0,
          controlRefused: ROWS.filter((r) => r.leave).length,
        };
        assert.deepEqual(pick(figures, expected), expected);
        break;
      }
      const mark = c.packets().length;
      previous = { row, sentAt: performance.now() };
      c.sock.write(typeof row.bytes === "function" ? row.bytes(c.packets()) : row.bytes);
      if (row.close) c.sock.end();
      await waitFor(() => c.closed, 15000, `the device to close its connection after: ${row.name}`);
      assert.deepEqual(c.packets().slice(mark).map(describe),
                       row.expect === null ? [] : [`DISCONNECT 0x${row.expect.toString(16).padStart(2, "0")}`], row.name);
    }
    assert.equal(standIn.connections(), ROWS.length + 1, "no connection beyond one per row and the last");
  } finally {
    for (const d of scene.devices) if (!d.ended) await stopDevice(d).catch(() => {});
    await standIn.close();
  }
});
