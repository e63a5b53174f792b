// emcp-bridge against the firmware in QEMU: through a serial device (a pseudo-terminal that
// socat links to QEMU's serial socket: the bridge's termios path), and across a board reset
// (QEMU's system_reset): the request in flight is answered with an error, the session is
// initialized again on the client's behalf, and the client carries on as if nothing happened.
// A board that booted before the bridge connected prints no banner: a second bridge finds it
// ready by a ping of its own, which the client never sees, nor what the board answers the
// previous client's torn last line, nor after the connection dropped and came back (the
// session given back as after a reset). And against a fake board on a socket (no QEMU): a ping
// lost in a board that is still booting, then its banner, then a torn line's error: the bridge
// pings once more and waits for that answer, and the client's early lines go after it, in order.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import { freePort, spawnQemu } from "./lib/harness.mjs";
import { bridgeClient } from "./lib/bridge_client.mjs";

const MACHINE = process.env.EMCP_QEMU_MACHINE;
const FIRMWARE = process.env.EMCP_FIRMWARE;
const BRIDGE = process.env.EMCP_BRIDGE;
const dir = mkdtempSync(join(tmpdir(), "emcp-bridge-"));
const procs = [];
after(() => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  rmSync(dir, { recursive: true, force: true });
});

function qemu(port, monitor) {
  const p = spawnQemu(MACHINE, FIRMWARE, port, ["-monitor", monitor ? `unix:${monitor},server=on,wait=off` : "none"]);
  procs.push(p);
  return p;
}

/// A line client on the bridge's stdio (lib/bridge_client.mjs).
const client = (args) => bridgeClient(BRIDGE, args, procs);

const init = (id) => ({ jsonrpc: "2.0", id, method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "bridge-test", version: "1" } } });

test("through a serial device (pseudo-terminal)", async () => {
  const port = await freePort();
  qemu(port);
  const tty = join(dir, "ttyEMCP");
  const socat = spawn("socat", [`pty,link=${tty},raw,echo=0`, `tcp:127.0.0.1:${port},retry=50,interval=0.1`], { stdio: "ignore" });
  procs.push(socat);
  for (let i = 0; i < 100 && !existsSync(tty); ++i) await new Promise((r) => setTimeout(r, 50));
  const c = client(["--serial", tty, "--baud", "115200"]);
  const r = await c.call(init(1));
  assert.equal(r.result.protocolVersion, "2025-11-25");
  c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const e = await c.call({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "over a tty" } } });
  assert.equal(e.result.content[0].text, "over a tty");
  assert.equal(await c.end(), 0);
  assert.match(c.stderr(), /board: emcp-sensors on /, "the banner went to stderr, not to the client");
});

test("a board reset: in-flight request failed, session re-initialized for the client", async () => {
  const port = await freePort();
  const monitor = join(dir, "monitor.sock");
  qemu(port, monitor);
  const c = client(["--tcp", `127.0.0.1:${port}`]);
  assert.equal((await c.call(init("i"))).result.protocolVersion, "2025-11-25");
  c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  assert.deepEqual((await c.call({ jsonrpc: "2.0", id: "lvl", method: "logging/setLevel", params: { level: "error" } })).result, {});
  // A long call in flight, then the reset.
  const pending = c.call({ jsonrpc: "2.0", id: "long", method: "tools/call", params: { name: "sample_sensor", arguments: { sensor: "load", samples: 50, interval_ms: 100 } } });
  await new Promise((r) => setTimeout(r, 300));
  await new Promise((resolve, reject) => {
    const s = net.connect(monitor, () => { s.write("system_reset\n"); setTimeout(() => { s.end(); resolve(); }, 200); });
    s.on("error", reject);
  });
  const failed = await pending;
  assert.equal(failed.error.code, -32603);
  assert.match(failed.error.message, /board reset/);
  // The client's session goes on (no initialize from the client): calls work at once.
  const e = await c.call({ jsonrpc: "2.0", id: "after", method: "tools/call", params: { name: "echo", arguments: { text: "still here" } } });
  assert.equal(e.result.content[0].text, "still here");
  // The log level was replayed too: info messages stay filtered.
  const before = c.notes.length;
  const led = await c.call({ jsonrpc: "2.0", id: "led", method: "tools/call", params: { name: "set_led", arguments: { on: true } } });
  assert.equal(led.error, undefined);
  await new Promise((r) => setTimeout(r, 200));
  assert.deepEqual(c.notes.slice(before).filter((n) => n.method === "notifications/message"), [], "the replayed setLevel filters the info log");
  assert.equal(await c.end(), 0);
  assert.match(c.stderr(), /board reset \(banner\)/);
  assert.match(c.stderr(), /session initialized again on the client's behalf/);
});

test("a board that booted before the bridge connected: ready by a ping, which the client never sees", async () => {
  const port = await freePort();
  qemu(port);
  // The first client: a session, and it goes away; then a connection that leaves a torn line
  // (no newline) in the board's buffer. The board keeps running, its banner long printed.
  const first = client(["--tcp", `127.0.0.1:${port}`]);
  assert.equal((await first.call(init(1))).result.protocolVersion, "2025-11-25");
  assert.equal(await first.end(), 0);
  assert.match(first.stderr(), /board ready \(banner\)/);
  await new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => {
      s.write('{"jsonrpc":"2.0","id":"torn","method":"tools/ca');
      setTimeout(() => s.end(), 300);  // time for QEMU to pass it to the UART
    });
    s.on("error", reject);
    s.on("close", resolve);
  });
  // The second: what it sends at once waits until the board answered the bridge's ping, then
  // goes in order; the ping's answer and the board's answer to the torn line are not passed on.
  const t0 = Date.now();
  const c = client(["--tcp", `127.0.0.1:${port}`]);
  const answers = [c.call(init(1)), c.call({ jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "echo", arguments: { text: "booted already" } } })];
  c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const [r, e] = await Promise.all(answers);
  const ms = Date.now() - t0;
  assert.equal(r.result.protocolVersion, "2025-11-25");
  assert.equal(e.result.content[0].text, "booted already");
  console.log(`# ready ${ms} ms after the bridge started`);  // why: its own words below, not a time bound
  assert.equal(await c.end(), 0);
  assert.deepEqual(c.all.map((m) => m.id), [1, 2], "the client gets its own answers only, in order");
  assert.match(c.stderr(), /pinging the board/);
  assert.match(c.stderr(), /board ready \(it answered a ping/);
  assert.match(c.stderr(), /dropped before the board was ready: .*-32700/, "the torn line's answer stayed with the bridge");
});

test("the connection drops and comes back to a board that kept running: ready by a ping, session given back", async () => {
  const port = await freePort();
  qemu(port);
  // A relay between the bridge and QEMU's serial socket: cutting it is a USB-serial adapter
  // pulled out and plugged in again, the board running on, no banner.
  const links = [];
  const toQemu = async () => {  // QEMU may not listen yet
    for (let i = 0; ; ++i) {
      const b = net.connect(port, "127.0.0.1");
      const ok = await new Promise((r) => { b.once("connect", () => r(true)); b.once("error", () => r(false)); });
      if (ok || i === 100) return b;
      await new Promise((r) => setTimeout(r, 100));
    }
  };
  const relay = net.createServer(async (a) => {
    a.pause();
    const b = await toQemu();
    links.push(a, b);
    a.pipe(b);
    b.pipe(a);
    a.resume();
    a.on("error", () => b.destroy());
    b.on("error", () => a.destroy());
    a.on("close", () => b.destroy());
    b.on("close", () => a.destroy());
  });
  await new Promise((r) => relay.listen(0, "127.0.0.1", r));
  try {
    const c = client(["--tcp", `127.0.0.1:${relay.address().port}`]);
    assert.equal((await c.call(init("i"))).result.protocolVersion, "2025-11-25");
    c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    const pending = c.call({ jsonrpc: "2.0", id: "long", method: "tools/call", params: { name: "sample_sensor", arguments: { sensor: "load", samples: 30, interval_ms: 100 } } });
    await new Promise((r) => setTimeout(r, 300));
    for (const s of links.splice(0)) s.destroy();
    const failed = await pending;
    assert.equal(failed.error.code, -32603, "the request in flight is failed");
    const e = await c.call({ jsonrpc: "2.0", id: "after", method: "tools/call", params: { name: "echo", arguments: { text: "plugged in again" } } });
    assert.equal(e.result.content[0].text, "plugged in again");
    assert.equal(await c.end(), 0);
    assert.deepEqual(c.all.filter((m) => "id" in m).map((m) => m.id), ["i", "long", "after"], "nothing else reached the client");
    assert.match(c.stderr(), /connection to the board lost; reconnecting/);
    assert.match(c.stderr(), /board ready \(it answered a ping/);
    assert.match(c.stderr(), /board reset \(reconnected\)/);
  } finally {
    relay.close();
  }
});

test("a fake board that is still booting: the lost ping, the banner, then one more ping before the client's lines", async () => {
  const received = [];  // the lines the fake board got, once booted
  let booted = false;
  const server = net.createServer((s) => {
    let buf = "";
    s.on("data", (d) => {
      buf += d;
      let nl;
      while ((nl = buf.indexOf("\n")) >= 0) {
        const line = buf.slice(0, nl);
        buf = buf.slice(nl + 1);
        if (!booted) {
          // The first ping arrives before the UART is on: lost. The board boots, prints its
          // banner, and answers the (simulated) remains of a torn line.
          if (line.includes("emcp-bridge-probe-")) {
            booted = true;
            setTimeout(() => s.write('fake board: MCP on this UART\n{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error"}}\n'), 200);
          }
          continue;
        }
        if (line.trim() === "") continue;
        received.push(line);
        const m = JSON.parse(line);
        if ("id" in m) s.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.method === "ping" ? {} : { method: m.method } }) + "\n");
      }
    });
  });
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    const c = client(["--tcp", `127.0.0.1:${server.address().port}`, "--ping-after-ms", "300", "--wait-ms", "5000"]);
    const answers = [c.call({ jsonrpc: "2.0", id: "a", method: "first" }, 8000), c.call({ jsonrpc: "2.0", id: "b", method: "second" }, 8000)];
    assert.deepEqual((await Promise.all(answers)).map((m) => m.result.method), ["first", "second"]);
    assert.equal(await c.end(), 0);
    assert.equal(received.length, 3, `the fake board got: ${received.join(" | ")}`);
    assert.match(received[0], /"id":"emcp-bridge-probe-2","method":"ping"/, "one more ping after the banner");
    assert.deepEqual(received.slice(1).map((l) => JSON.parse(l).id), ["a", "b"], "then the client's lines, in order");
    assert.deepEqual(c.all.map((m) => m.id), ["a", "b"], "neither the error nor the pings' answer reached the client");
    assert.match(c.stderr(), /board ready \(banner, then the answer to a ping\)/);
    assert.match(c.stderr(), /dropped before the board was ready: .*Parse error/);
  } finally {
    server.close();
  }
});

test("no banner and no answer to the pings: exit status 1 within --wait-ms", async () => {
  const server = net.createServer((s) => { s.on("data", () => {}); });  // a board that says nothing
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  try {
    const t0 = Date.now();
    const c = client(["--tcp", `127.0.0.1:${server.address().port}`, "--ping-after-ms", "200", "--wait-ms", "2500"]);
    c.send({ jsonrpc: "2.0", id: 1, method: "ping" });
    const code = await new Promise((r) => (c.proc.exitCode !== null ? r(c.proc.exitCode) : c.proc.once("exit", r)));
    assert.equal(code, 1);
    assert.ok(Date.now() - t0 >= 2500 - 1, "not before --wait-ms");  // why it gave up: its own words below
    assert.deepEqual(c.all, []);
    assert.match(c.stderr(), /no banner from the board within 2500 ms and no answer to [1-5] ping\(s\)/);
  } finally {
    server.close();
  }
});
