// Test harness around the official SDK client: spawns a server (over stdio, or listening on a
// loopback port for Streamable HTTP, HTTP+SSE and WebSocket), forces the protocol revision the
// client asks for, and records every message the server sends.
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import net from "node:net";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
import { WebSocketClientTransport } from "@modelcontextprotocol/sdk/client/websocket.js";
import { WebSocket } from "ws";
import { check } from "./schema.mjs";
import { startBroker } from "./broker.mjs";
import { MqttClientTransport } from "./mqtt_transport.mjs";
import { stopServer, watchServer } from "./server_exit.mjs";

// Node 20 has no WebSocket global; the SDK's client transport expects one.
globalThis.WebSocket ??= WebSocket;

export const TRANSPORTS = ["stdio", "http", "sse", "ws", "qemu", "gateway", "qemu-gateway", "mqtt", "mqtt-bridge"];

/// The server is firmware on an emulated board: over its UART ("qemu") or over its network
/// (EMCP_RUN_BOARD: a JSON array, the scripts/run-board command that serves it; the network
/// transports then start that instead of `command`).
const RUN_BOARD = process.env.EMCP_RUN_BOARD ? JSON.parse(process.env.EMCP_RUN_BOARD) : null;
export const ON_BOARD = ["qemu", "qemu-gateway"].includes(process.env.EMCP_TRANSPORT) || RUN_BOARD !== null;

/// A cross build's programs run here under the target's emulator (tests/cross): EMCP_EMULATOR is
/// its command as a JSON array (["qemu-aarch64", "-L", "/usr/aarch64-linux-gnu"]), which every
/// server connect() and startNetworkServer() start goes through. [command, args] to spawn.
const EMULATOR = process.env.EMCP_EMULATOR ? JSON.parse(process.env.EMCP_EMULATOR) : null;
export function serverCommand(command, args) {
  return EMULATOR ? [EMULATOR[0], [...EMULATOR.slice(1), command, ...args]] : [command, args];
}

/// The firmware image's footprint report (tools/footprint.py's JSON beside the ELF, written
/// after the link: its stacks' sizes and worst cases), or null off a board.
export function imageReport() {
  const image = process.env.EMCP_FIRMWARE ?? RUN_BOARD?.[RUN_BOARD.indexOf("--image") + 1];
  if (!ON_BOARD || !image || !image.endsWith(".elf")) return null;
  return JSON.parse(readFileSync(image.replace(/\.elf$/, ".footprint.json"), "utf8"));
}

/// A FreeRTOS image's tasks (device_stats' "tasks", emcp::board::task_stacks()) against its footprint
/// report: the tasks the image creates (the owner "emcp" and the sensor task; a network image's
/// lwIP thread "tcpip" and NIC receive task "nic_rx"), each stack the size the report found
/// for it, and the kernel's high-water mark of it clear of the bytes the overflow check keeps
/// painted. The report's worst case is printed beside it, not required: it does not follow a
/// pointer call made inside a function reached through a pointer (docs/footprint.md), and the
/// owner's mark over HTTP is deeper than it. Returns the marks by name.
export function checkTaskStacks(st) {
  const tasks = st.tasks;
  assert.ok(Array.isArray(tasks), `device_stats has "tasks": ${JSON.stringify(st)}`);
  const names = tasks.map((t) => t.name).sort();
  assert.deepEqual(names, (st.network ? ["emcp", "nic_rx", "sensor", "tcpip"] : ["emcp", "sensor"]).sort());
  const report = imageReport();
  const byLabel = Object.fromEntries((report?.rtos?.tasks ?? []).map((t) => [t.label, t]));
  const guard = report?.rtos?.guard ?? 0;
  const marks = {};
  for (const t of tasks) {
    assert.ok(t.stack_high_water > 0 && t.stack_high_water + guard <= t.stack_size,
      `${t.name}: its stack's high-water mark clear of the ${guard} B the overflow check keeps: ${JSON.stringify(t)}`);
    const r = byLabel[t.name];
    if (report) {
      assert.ok(r, `the footprint report names the task ${t.name}`);
      assert.equal(t.stack_size, r.stack, `${t.name}: the stack the report measured`);
    }
    marks[t.name] = t.stack_high_water;
  }
  console.log("task stacks (used of size; the footprint check's figure): " +
              tasks.map((t) => `${t.name} ${t.stack_high_water} of ${t.stack_size} B` +
                               (byLabel[t.name] ? ` (${byLabel[t.name].need} B)` : "")).join(", "));
  // The owner's stack is device_stats' own, read a moment before (a mark only grows).
  assert.ok(marks.emcp >= st.stack_high_water, `the owner's stack: ${marks.emcp} B, device_stats' ${st.stack_high_water} B`);
  return marks;
}

/// A free loopback port (bound and released: another process may take it first, rarely).
export function freePort() {
  return new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const { port } = srv.address();
      srv.close(() => resolve(port));
    });
  });
}

/// Starts QEMU with `firmware` on `machine`, its first UART on a loopback TCP port (QEMU waits
/// for the bridge before it runs the firmware, so the banner is not lost). Returns { proc, port }.
const liveQemus = new Set();
// A safety net: whatever a test does, no QEMU outlives the test process.
process.on("exit", () => { for (const p of liveQemus) p.kill("SIGKILL"); });

/// The QEMU program that emulates `machine`: qemu-system-arm unless this table says otherwise.
const QEMU_PROGRAMS = { sifive_e: "qemu-system-riscv32", sim: "qemu-system-xtensa" };
export function qemuProgram(machine) {
  return QEMU_PROGRAMS[machine] ?? "qemu-system-arm";
}
/// QEMU's arguments for `machine` before the console's: the machine, and what it needs besides
/// (the Xtensa sim machine: the lx106 core, and semihosting, its console: boards/lx106-sim).
const QEMU_MACHINE_ARGS = { sim: ["-cpu", "lx106", "-semihosting"] };
export function qemuMachineArgs(machine) {
  return ["-M", machine, ...(QEMU_MACHINE_ARGS[machine] ?? [])];
}

export async function startQemu(machine, firmware) {
  const port = await freePort();
  return { proc: spawnQemu(machine, firmware, port, ["-monitor", "none"]), port };
}

/// QEMU with `firmware` on `machine`, its first UART served on 127.0.0.1:`port` for one client
/// at a time (QEMU's tcp chardev, waiting for the first client before the board runs), `extra`
/// arguments besides; what it writes on stderr in proc.stderr_text(). Killed when the test
/// process exits.
///
/// The Xtensa sim machine's console is semihosting on QEMU's own standard input and output
/// (boards/lx106-sim: its serial chardev console loses and repeats bytes), so there a relay
/// serves that port instead: what the board writes before the first client is kept for it
/// (QEMU's wait=on keeps it from running instead: the same bytes), what it writes while no
/// client is connected after that is dropped, as a tcp chardev drops it; each side waits for
/// the other's buffer to drain.
export function spawnQemu(machine, firmware, port, extra = []) {
  const relayed = QEMU_STDIO_CONSOLE.has(machine);
  const serial = relayed ? "none" : `tcp:127.0.0.1:${port},server=on,wait=on`;
  const proc = spawn(qemuProgram(machine), [...qemuMachineArgs(machine), "-display", "none", ...extra,
    "-serial", serial, "-kernel", firmware], { stdio: [relayed ? "pipe" : "ignore", relayed ? "pipe" : "ignore", "pipe"] });
  let err = "";
  proc.stderr.on("data", (d) => { err += d; });
  proc.stderr_text = () => err;
  liveQemus.add(proc);
  if (relayed) relayConsole(proc, port);
  proc.once("exit", () => liveQemus.delete(proc));
  return proc;
}

const QEMU_STDIO_CONSOLE = new Set(["sim"]);

function relayConsole(proc, port) {
  let client = null, served = false;
  const early = [], waiting = [];
  proc.stdin.on("error", () => {});  // QEMU gone: its exit ends the relay
  proc.stdout.on("data", (d) => {
    if (client) {
      if (!client.write(d)) proc.stdout.pause();
    } else if (!served) {
      early.push(d);
    }
  });
  const serve = (sock) => {
    client = sock;
    served = true;
    for (const d of early.splice(0)) sock.write(d);
    sock.on("data", (d) => { if (!proc.stdin.write(d)) { sock.pause(); proc.stdin.once("drain", () => sock.resume()); } });
    sock.on("drain", () => proc.stdout.resume());
    sock.on("error", () => {});
    sock.on("close", () => {
      client = null;
      proc.stdout.resume();
      const next = waiting.shift();
      if (next) serve(next);
    });
  };
  const server = net.createServer((sock) => { if (client) waiting.push(sock); else serve(sock); });
  server.on("error", (e) => { console.error(`console relay on port ${port}: ${e.message}`); proc.kill("SIGKILL"); });
  server.listen(port, "127.0.0.1");
  proc.once("exit", () => {
    server.close();
    for (const s of [client, ...waiting]) s?.destroy();
  });
}

/// Stops QEMU (always: a test never leaves one running).
export async function stopQemu(q) {
  if (q.proc.exitCode !== null || q.proc.signalCode !== null) return;
  const exited = new Promise((r) => q.proc.once("exit", r));
  q.proc.kill("SIGKILL");
  await exited;
}

/// A transport that wraps another: rewrites the initialize request's protocolVersion and keeps
/// every incoming message (with the method of the request it answers).
///
/// It also hands the SDK the server's messages in the order they arrived. The SDK (1.x,
/// shared/protocol.js) runs a notification's handler one microtask later but a response's at
/// once, and retires the request's progress handler with it: when a notifications/progress and
/// the answer that follows it come in one read (a client that fell behind: the SSE and
/// WebSocket transports dispatch every message of a chunk synchronously), the progress is
/// dropped with "Received a progress notification for an unknown token" (typescript-sdk issue
/// 2580), although the server sent it first. A response therefore goes to the SDK one microtask
/// later, after the handlers of the notifications before it; what arrives after it still comes
/// after it. `received` is the wire's order, recorded at once.
export class RecordingTransport {
  constructor(inner, revision) {
    this.inner = inner;
    this.revision = revision;
    this.received = [];      // { message, method }
    this.sentMethods = new Map();  // id -> method
    this.errors = [];        // what the SDK transport reported through onerror (a failed send, ...)
    inner.onmessage = (m) => {
      const response = "id" in m && !("method" in m);
      const method = response ? this.sentMethods.get(m.id) : undefined;
      this.received.push({ message: m, method });
      if (response) queueMicrotask(() => this.onmessage?.(m));
      else this.onmessage?.(m);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => {
      this.errors.push(`${new Date().toISOString()} ${e?.message ?? e}`);
      this.onerror?.(e);
    };
  }
  async start() { return this.inner.start(); }
  async close() { return this.inner.close(); }
  async send(message, options) {
    if (message.method === "initialize" && this.revision) {
      message = { ...message, params: { ...message.params, protocolVersion: this.revision } };
    }
    if ("id" in message && "method" in message) this.sentMethods.set(message.id, message.method);
    return this.inner.send(message, options);
  }
  get sessionId() { return this.inner.sessionId; }
  setProtocolVersion(v) { this.inner.setProtocolVersion?.(v); }
  /// Every recorded server message checked against the schema of `revision`.
  schemaProblems(revision) {
    // And, over MQTT, where the server broke the MCP-over-MQTT text (mqtt_transport.mjs).
    return [...this.received.flatMap(({ message, method }) => check(revision, message, method)),
            ...(this.inner.violations ?? [])];
  }
  notifications(method) {
    return this.received.filter(({ message }) => message.method === method && !("id" in message)).map(({ message }) => message);
  }
}

/// HTTPS/WSS instead of HTTP/WS: EMCP_TLS_DIR is the test PKI (tests/tls/make_certs.sh, made at
/// test time), EMCP_TLS_NAME the server certificate in it ("server": EC P-256, "server-rsa").
/// The client trusts the PKI's CA through NODE_EXTRA_CA_CERTS (set by the test's environment).
const TLS_DIR = process.env.EMCP_TLS_DIR || null;
const TLS_NAME = process.env.EMCP_TLS_NAME || "server";
export const TLS = TLS_DIR !== null;
export const HTTP_SCHEME = TLS ? "https" : "http";
/// The server's options for TLS (none without EMCP_TLS_DIR), with the certificate `name`.
export function tlsArgs(name = TLS_NAME) {
  return TLS ? ["--tls-cert", `${TLS_DIR}/${name}.pem`, "--tls-key", `${TLS_DIR}/${name}.key`] : [];
}

/// The options scripts/run-board takes too (authorization, provisioned into the board): the
/// others of `args` are the Linux server's own.
function boardArgs(args) {
  const out = [];
  for (let i = 0; i < args.length; ++i) {
    if (["--auth-token", "--jwt-key", "--issuer", "--audience"].includes(args[i]) && i + 1 < args.length) out.push(args[i], args[++i]);
    else if (args[i] === "--require-at-jwt") out.push(args[i]);
  }
  return out;
}

/// Starts a server (`what`: "server", "gateway") that announces "serving MCP on <url>" on
/// stderr once it listens (`url` matches the port as its group 1) and resolves with { proc,
/// port, stderr(), watch } (watch: server_exit.mjs's, which stopNetworkServer() judges); rejects
/// when it exits first or says nothing within `startMs`.
function startAnnouncing(what, cmd, argv, url, startMs, stdin = "pipe", stdout = "ignore") {
  return new Promise((resolve, reject) => {
    const proc = spawn(cmd, argv, { stdio: [stdin, stdout, "pipe"] });
    const watch = watchServer(proc, [cmd, ...argv].join(" "));
    const timer = setTimeout(() => { proc.kill("SIGKILL"); reject(new Error(`${what} did not start: ${watch.stderr()}`)); }, startMs);
    proc.stderr.on("data", () => {
      const m = url.exec(watch.stderr());
      if (m) {
        clearTimeout(timer);
        resolve({ proc, port: Number(m[1]), stderr: watch.stderr, watch });
      }
    });
    proc.on("exit", (code) => { clearTimeout(timer); reject(new Error(`${what} exited (${code}): ${watch.stderr()}`)); });
  });
}

/// Starts `command args --http 0 --ws` (or, with EMCP_RUN_BOARD, the board) and resolves with
/// { proc, port, stderr(), watch } once it listens on a loopback port (it prints the port on
/// stderr). Its stdin stays open: scripts/run-board stops the board at the end of its input.
/// With TLS, `tlsName` is the certificate of the test PKI it serves (EMCP_TLS_NAME by default).
export function startNetworkServer(command, args = [], extra = ["--ws"], tlsName = TLS_NAME) {
  const [cmd, argv] = RUN_BOARD ? [RUN_BOARD[0], [...RUN_BOARD.slice(1), "--http", "0", ...tlsArgs(tlsName), ...boardArgs(args)]]
                                : serverCommand(command, [...args, "--http", "0", ...extra, ...tlsArgs(tlsName)]);
  // The scheme it announces must be the one asked for.
  return startAnnouncing("server", cmd, argv, new RegExp(`serving MCP on ${HTTP_SCHEME}://127\\.0\\.0\\.1:(\\d+)/`),
                         RUN_BOARD ? 60000 : 5000);
}

/// Stops a server from startNetworkServer() or startGateway() with SIGTERM, waits for it and
/// checks that it ended cleanly (server_exit.mjs: exit status 0, no sanitizer report; throws
/// otherwise, with its stderr's tail); then closes the gateway's line board (`board`), whose
/// servers must have ended cleanly too.
export async function stopNetworkServer(server) {
  const problems = [];
  await stopServer(server.watch, "SIGTERM").catch((e) => problems.push(e.message));
  await server.board?.close().catch((e) => problems.push(e.message));
  if (problems.length) throw new Error(problems.join("\n"));
}

/// The gateway (emcp-bridge --http, docs/gateway.md) and what stands in for a board's UART on
/// Linux: a loopback TCP server that runs `command args` (a stdio MCP server) for each
/// connection, its stdin and stdout on the socket. Ending the child ends the connection, and
/// the bridge's next connection gets a fresh child: a board reset (reset(), which kills them:
/// a board switched off, not judged). A connection that closes is the end of its child's
/// input: close() waits for every child and throws unless each ended cleanly (server_exit.mjs).
/// hold() keeps the board off for the connections that come next (accepted, their bytes kept
/// unread, no child: a board that has not booted yet) until release().
export async function startLineBoard(command, args = []) {
  const children = new Map();  // child -> its watch
  const sockets = new Set();
  const killed = new Set();    // children reset() switched off
  let held = null;             // while hold(): the connections waiting for release()
  const attach = (sock) => {
    const child = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    children.set(child, watchServer(child, `the line board's ${command}`));
    child.stdin.on("error", () => {});
    sock.pipe(child.stdin);
    child.stdout.pipe(sock);
    child.once("exit", () => sock.destroy());
    sock.once("close", () => child.stdin.end());
  };
  const server = net.createServer((sock) => {
    sockets.add(sock);
    sock.on("error", () => {});
    sock.once("close", () => sockets.delete(sock));
    if (held) held.push(sock);
    else attach(sock);
  });
  await new Promise((resolve) => server.listen(0, "127.0.0.1", resolve));
  return {
    port: server.address().port,
    /// Every child ended (the bridge reconnects and gets a fresh one).
    reset() {
      for (const c of children.keys()) {
        if (c.exitCode !== null || c.signalCode !== null) continue;
        killed.add(c);
        c.kill("SIGKILL");
      }
    },
    hold() { held ??= []; },
    /// The held connections still open get their child, and read what waited for it.
    release() {
      const waiting = held ?? [];
      held = null;
      for (const sock of waiting) if (!sock.destroyed) attach(sock);
    },
    async close() {
      held = null;
      for (const s of sockets) s.destroy();
      await new Promise((resolve) => server.close(resolve));
      const problems = [];
      for (const [c, w] of children) {
        if (killed.has(c)) await w.exited;
        else await stopServer(w, "end of input").catch((e) => problems.push(e.message));
      }
      if (problems.length) throw new Error(problems.join("\n"));
    },
  };
}

/// emcp-bridge (EMCP_BRIDGE) serving the board on `boardPort` (TCP) as Streamable HTTP on a
/// free loopback port; resolves with { proc, port, stderr(), watch } once it listens (stopped by
/// stopNetworkServer(), which judges how it ended).
export function startGateway(boardPort, extra = []) {
  return startBridgeHttp(["--tcp", `127.0.0.1:${boardPort}`, "--ping-after-ms", "200", ...extra]);
}

/// emcp-bridge (EMCP_BRIDGE) with `args` (what it serves: --tcp, --mqtt ...) and --http 0;
/// as startGateway().
export function startBridgeHttp(args) {
  const bridge = process.env.EMCP_BRIDGE ?? new URL("../../../build/native/bin/emcp-bridge", import.meta.url).pathname;
  return startAnnouncing("gateway", bridge, [...args, "--http", "0"],
                         /serving MCP on http:\/\/127\.0\.0\.1:(\d+)\/mcp/, 10000, "ignore");
}

/// The --mqtt arguments that dial `broker`: its TLS listener when it has one (with the client
/// certificate when the listener requires one).
export function mqttDial(broker) {
  if (!broker.tls) return ["--mqtt", broker.url];
  const cert = broker.tls.clientCerts ? ["--mqtt-cert", broker.tls.clientCert, "--mqtt-key", broker.tls.clientKey] : [];
  return ["--mqtt", `mqtts://localhost:${broker.tls.port}`, "--mqtt-ca", broker.tls.cafile, ...cert];
}

/// Starts `command args` (or, with EMCP_RUN_BOARD, the board: scripts/run-board --mqtt, which
/// provisions the broker and the name into the board and announces it once its presence is on
/// the broker) serving MCP over MQTT through `broker` (broker.mjs's) under a server-name of its
/// own, with `extra` arguments besides (a board's --http 0). `stdout`: "pipe" keeps its
/// standard output (a board's UART, through scripts/run-board) as proc.stdout. Resolves with
/// startAnnouncing()'s { proc, port (the broker's), stderr(), watch } and mqttName.
export async function startMqttServer(command, args, broker, extra = [], stdout = "ignore") {
  const mqttName = `devices/test/${Math.random().toString(16).slice(2, 10)}`;
  // EMCP_MQTT_TLS=1 (a broker started with its TLS listener): the device dials that, by name
  // (Debian's Mbed TLS 2.28 matches a certificate's DNS names only; the test broker's names
  // localhost), its certificate verified against the test's CA.
  const mqtt = [...mqttDial(broker), "--mqtt-name", mqttName];
  const [cmd, argv] = RUN_BOARD ? [RUN_BOARD[0], [...RUN_BOARD.slice(1), ...mqtt, ...extra]]
                                : serverCommand(command, [...args, ...mqtt, ...extra]);
  const server = await startAnnouncing("server", cmd, argv, /serving MCP over MQTT(?: \(TLS\))? through (?:127\.0\.0\.1|localhost):(\d+)/,
                                       RUN_BOARD ? 120000 : 5000, "pipe", stdout);
  return { ...server, mqttName };
}

/// EMCP_URL: the server already runs behind this base URL (scheme, host and port: a fleet behind
/// a proxy, tests/mcp/fleet_nginx.test.mjs); connect() starts none and reaches /mcp, /sse and
/// /ws there. Its command line is not the test's to choose: tests that need one skip.
export const SERVER_URL = process.env.EMCP_URL || null;

/// The SDK client transport of `kind` to the server at `base` (scheme://host:port).
function clientTransport(kind, base) {
  const ws = base.replace(/^http/, "ws");
  switch (kind) {
    case "http": return new StreamableHTTPClientTransport(new URL(`${base}/mcp`));
    case "sse": return new SSEClientTransport(new URL(`${base}/sse`));
    case "ws": return new WebSocketClientTransport(new URL(`${ws}/ws`));
    default: throw new Error(`unknown transport ${kind}`);
  }
}

/// Connects an SDK client to `command args` at `revision` over `transport` ("stdio", or
/// "http", "sse", "ws": the server is started listening on a free loopback port, or, with
/// EMCP_URL, is the one already there). Returns
/// { client, transport, close } (close() ends the client and the server).
export async function connect({ command, args = [], revision, capabilities = {}, handlers = [], transport: kind = "stdio" }) {
  let server = null;
  let qemu = null;
  let inner;
  if (kind === "stdio") {
    const [cmd, argv] = serverCommand(command, args);
    inner = new StdioClientTransport({ command: cmd, args: argv, stderr: "pipe" });
  } else if (kind === "qemu") {
    // The firmware on an emulated board, reached through emcp-bridge (EMCP_BRIDGE,
    // EMCP_QEMU_MACHINE, EMCP_FIRMWARE); `command` and `args` are not used.
    qemu = await startQemu(process.env.EMCP_QEMU_MACHINE, process.env.EMCP_FIRMWARE);
    inner = new StdioClientTransport({ command: process.env.EMCP_BRIDGE, args: ["--tcp", `127.0.0.1:${qemu.port}`, "--quiet"], stderr: "pipe" });
  } else if (kind === "gateway" || kind === "qemu-gateway") {
    // Streamable HTTP through emcp-bridge --http: to `command args` behind a TCP line socket
    // (startLineBoard), or to the firmware in QEMU (EMCP_QEMU_MACHINE, EMCP_FIRMWARE).
    let board;
    if (kind === "gateway") {
      const line = await startLineBoard(command, args);
      board = { port: line.port, close: () => line.close() };
    } else {
      qemu = await startQemu(process.env.EMCP_QEMU_MACHINE, process.env.EMCP_FIRMWARE);
      board = { port: qemu.port, close: async () => {} };
    }
    const gw = await startGateway(board.port, ["--quiet"]);
    server = { ...gw, board };
    inner = new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${gw.port}/mcp`));
  } else if (SERVER_URL) {
    inner = clientTransport(kind, SERVER_URL);
  } else if (kind === "mqtt" || kind === "mqtt-bridge") {
    // MCP over MQTT (docs/mqtt.md): a Mosquitto of the test's own, the server dialing it, the
    // client transport of tests/mcp/lib/mqtt_transport.mjs (MQTT.js) finding it by presence.
    // EMCP_MQTT_TLS=1: the device dials the broker's TLS listener (mqtts://, its certificate
    // verified against the test's CA); the client stays on the plain one.
    // EMCP_MQTT_CLIENT_CERT=1 too: that listener requires a client certificate, which the
    // device (and the bridge) present (--mqtt-cert, --mqtt-key).
    const tls = process.env.EMCP_MQTT_TLS === "1";
    const broker = await startBroker({ tls, clientCerts: tls && process.env.EMCP_MQTT_CLIENT_CERT === "1" });
    try {
      server = await startMqttServer(command, args, broker);
    } catch (e) {
      await broker.stop();
      throw e;
    }
    server.broker = broker;
    // mqtt-bridge: the SDK's stdio transport to emcp-bridge --mqtt (EMCP_BRIDGE), the agent's
    // side of MCP over MQTT in emcp (tools/bridge/mqtt_link.h), in place of the test's own; with
    // EMCP_MQTT_TLS=1 the bridge dials the TLS listener too.
    inner = kind === "mqtt" ? new MqttClientTransport({ url: broker.url, serverName: server.mqttName, discoverMs: RUN_BOARD ? 60000 : 10000 })
                            : new StdioClientTransport({ command: process.env.EMCP_BRIDGE, args: [...mqttDial(broker), "--mqtt-name", server.mqttName], stderr: "pipe" });
  } else {
    server = await startNetworkServer(command, args);
    inner = clientTransport(kind, `${HTTP_SCHEME}://127.0.0.1:${server.port}`);
  }
  const transport = new RecordingTransport(inner, revision);
  const client = new Client({ name: "emcp-sdk-test", version: "1.0.0" }, { capabilities });
  for (const [schema, handler] of handlers) client.setRequestHandler(schema, handler);
  // The stdio server (or the stdio bridge in front of the board) the SDK transport spawned: its
  // end is judged as a network server's (server_exit.mjs). The SDK keeps it as `_process`.
  let stdio = null;
  // Everything started is stopped; the first problem is thrown after.
  const stopAll = async (problem) => {
    const problems = problem ? [problem] : [];
    // A server that outlives the test (EMCP_URL) is told the session ended (DELETE), as a
    // polite client does: it then sends the session nothing more (nothing it would drop).
    if (SERVER_URL && inner instanceof StreamableHTTPClientTransport && inner.sessionId)
      await inner.terminateSession().catch((e) => problems.push(e));
    if (stdio) await stopServer(stdio, "end of input").catch((e) => problems.push(e));
    await client.close().catch((e) => problems.push(e));
    if (server) await stopNetworkServer(server).catch((e) => problems.push(e));
    if (server?.broker) await server.broker.stop().catch((e) => problems.push(e));
    if (qemu) await stopQemu(qemu);
    if (problems.length) throw problems[0];
  };
  try {
    await client.connect(transport);
    if (inner instanceof StdioClientTransport) {
      assert.ok(inner._process, "the SDK's stdio transport keeps its child process as _process");
      stdio = watchServer(inner._process, kind === "qemu" || kind === "mqtt-bridge" ? "emcp-bridge" : command, inner.stderr);
    }
  } catch (e) {
    await stopAll(e);
  }
  return { client, transport, close: () => stopAll(null), server, qemu };
}

/// Ends a connection from connect() and returns the schema problems of every server message it
/// recorded at `revision`; the connection (and a board's QEMU) is closed even when checking
/// throws.
export async function closeChecked({ transport, close }, revision) {
  try {
    return transport.schemaProblems(revision);
  } finally {
    await close();
  }
}

/// Waits until `predicate()` is true, polling every 20 ms, at most `ms`.
export async function waitFor(predicate, ms = 5000, what = "condition") {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
