// emcp-bridge against the firmware in QEMU: through a serial device (a pseudo-terminal that
// socat links to QEMU's serial socket: the bridge's termios path), and across a board reset
// (QEMU's system_reset): the request in flight is answered with an error, the session is
// initialized again on the client's behalf, and the client carries on as if nothing happened.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import net from "node:net";
import { freePort } from "./lib/harness.mjs";

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
  const args = ["-M", MACHINE, "-display", "none", "-serial", `tcp:127.0.0.1:${port},server=on,wait=on`, "-kernel", FIRMWARE];
  args.push("-monitor", monitor ? `unix:${monitor},server=on,wait=off` : "none");
  const p = spawn("qemu-system-arm", args, { stdio: "ignore" });
  procs.push(p);
  return p;
}

/// A line client on the bridge's stdio: answers by id, notifications kept.
function client(args) {
  const p = spawn(BRIDGE, args, { stdio: ["pipe", "pipe", "pipe"] });
  procs.push(p);
  const waiting = new Map();
  const notes = [];
  let stderr = "";
  p.stderr.on("data", (d) => { stderr += d; });
  createInterface({ input: p.stdout }).on("line", (l) => {
    const m = JSON.parse(l);
    if (!("id" in m)) { notes.push(m); return; }
    const w = waiting.get(m.id);
    if (w) { waiting.delete(m.id); w(m); }
  });
  return {
    proc: p,
    notes,
    stderr: () => stderr,
    call(msg, ms = 20000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no answer to ${msg.id}; bridge said: ${stderr}`)), ms);
        waiting.set(msg.id, (m) => { clearTimeout(t); resolve(m); });
        p.stdin.write(JSON.stringify(msg) + "\n");
      });
    },
    send(msg) { p.stdin.write(JSON.stringify(msg) + "\n"); },
    async end() {
      p.stdin.end();
      if (p.exitCode === null) await new Promise((r) => p.once("exit", r));
      return p.exitCode;
    },
  };
}

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
