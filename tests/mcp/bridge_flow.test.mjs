// emcp-bridge's flow control (tools/bridge/board_link.h, "Flow control") against fake boards on a
// loopback socket that read their input the way a board does: bytes wait in a receive buffer of
// the size the banner states, a reader takes them at its own pace and answers each request
// once it has read its line. A fake board records every moment more bytes waited than its
// buffer holds; the bridge must never cause one, whatever the client sends, except for a line
// longer than the buffer, which must then be the only thing on its way.
//
//   EMCP_BRIDGE=build/native/bin/emcp-bridge node --test tests/mcp/bridge_flow.test.mjs
import { test, after } from "node:test";
import assert from "node:assert/strict";
import net from "node:net";
import { bridgeClient } from "./lib/bridge_client.mjs";

const BRIDGE = process.env.EMCP_BRIDGE ?? new URL("../../build/native/bin/emcp-bridge", import.meta.url).pathname;
const procs = [];
const servers = [];
after(async () => {
  for (const p of procs) if (p.exitCode === null && p.signalCode === null) p.kill("SIGKILL");
  for (const s of servers) await new Promise((r) => s.close(r));
});

// A board's answer to a gap in its input whose line's id it did not read: no id at MCP
// 2025-11-25 (an unknown id is left out), null before it.
const INPUT_LOST = { jsonrpc: "2.0", error: { code: -32600, message: "Invalid Request: input lost (receive buffer overflow)", data: { inputLost: true } } };
const INPUT_LOST_NULL = { ...INPUT_LOST, id: null };

/// A fake board: `ring` bytes of receive buffer, `bytesPerTick` read every millisecond tick (a
/// line is handled when its newline is read). `banner`: print one stating the buffer (default),
/// else answer the bridge's probe ping like a board that booted before it. `onLine(m, board)`
/// may answer for itself (return true).
async function fakeBoard({ ring = 300, bytesPerTick = 48, banner = true, onLine = null } = {}) {
  const board = { lines: [], overflows: [], maxHeld: 0, syncs: 0, probes: 0, sock: null };
  const server = net.createServer((sock) => {
    board.sock = sock;
    let buf = Buffer.alloc(0);  // received, not read yet
    let line = "";              // the part of the current line read so far
    if (banner) sock.write(`fake on test: MCP on this UART, one JSON-RPC message per line; receive buffer ${ring} B\n`);
    sock.on("data", (d) => {
      buf = Buffer.concat([buf, d]);
      board.maxHeld = Math.max(board.maxHeld, buf.length);
      if (buf.length > ring) {
        // Only a line longer than the buffer may be, alone: nothing before it still unread
        // (the reader is inside it or at its start) and nothing after it but the bridge's ping
        // that tells when it has been read (a line without an answer of its own).
        const text = (line + buf.toString("latin1")).replace(/\{"jsonrpc":"2\.0","id":"emcp-bridge-sync-\d+","method":"ping"\}\n$/, "");
        const nl = text.indexOf("\n");
        const alone = nl === text.length - 1 || nl === -1;
        if (!alone) board.overflows.push(`${buf.length} B waiting: ${JSON.stringify(text.slice(0, 120))}...`);
      }
    });
    const read = (max) => {
      const n = Math.min(max, buf.length);
      if (n === 0) return;
      const chunk = buf.subarray(0, n).toString("latin1");
      buf = buf.subarray(n);
      line += chunk;
      let nl;
      while ((nl = line.indexOf("\n")) >= 0) {
        const l = line.slice(0, nl);
        line = line.slice(nl + 1);
        if (l.trim() === "") continue;
        const m = JSON.parse(l);
        if (typeof m.id === "string" && m.id.startsWith("emcp-bridge-sync-")) board.syncs++;
        else if (typeof m.id === "string" && m.id.startsWith("emcp-bridge-probe-")) board.probes++;
        else board.lines.push(m);
        if (onLine && onLine(m, board)) continue;
        if ("id" in m && "method" in m && !sock.destroyed)
          sock.write(JSON.stringify({ jsonrpc: "2.0", id: m.id, result: m.method === "ping" ? {} : { method: m.method, n: m.params?.n } }) + "\n");
      }
    };
    const timer = setInterval(() => read(bytesPerTick), 1);
    // What the bridge wrote before it closed the connection is still read (a UART's wire).
    sock.on("end", () => read(Infinity));
    sock.on("close", () => clearInterval(timer));
    sock.on("error", () => {});
  });
  servers.push(server);
  await new Promise((r) => server.listen(0, "127.0.0.1", r));
  board.port = server.address().port;
  board.answer = (m) => board.sock.write(JSON.stringify(m) + "\n");
  return board;
}

/// A client on the bridge's stdio (lib/bridge_client.mjs); the fake boards answer the bridge's
/// probe ping after 300 quiet ms.
const bridge = (port, extra = []) => bridgeClient(BRIDGE, ["--tcp", `127.0.0.1:${port}`, "--ping-after-ms", "300", ...extra], procs);

const pad = (n) => "x".repeat(n);
const request = (id, size) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { n: id, text: pad(size) } });
const note = (i, size) => ({ jsonrpc: "2.0", method: "notifications/message", params: { n: i, text: pad(size) } });

test("pipelined requests and notifications never exceed the board's receive buffer", async () => {
  const board = await fakeBoard({ ring: 300 });
  const c = bridge(board.port);
  const calls = [];
  for (let i = 0; i < 300; ++i) {
    // Lines of 80 to 230 B: none longer than the buffer less the room a ping of the bridge's
    // own takes (such a line would go alone, its ping right behind it).
    if (i % 5 === 4) c.send(note(i, 20 + (i * 37) % 130));
    else calls.push(c.call(request(i, 10 + (i * 53) % 150)));
  }
  const answers = await Promise.all(calls);
  assert.deepEqual(answers.map((m) => m.result.n), answers.map((m) => m.id), "each answer is its request's");
  assert.equal(await c.end(), 0);
  assert.deepEqual(board.overflows, []);
  assert.ok(board.maxHeld <= 300, `at most the buffer waited: ${board.maxHeld} B`);
  assert.deepEqual(board.lines.map((m) => m.params.n), Array.from({ length: 300 }, (_, i) => i), "every line, in order");
  assert.ok(c.all.every((m) => !String(m.id).startsWith("emcp-bridge-")), "the bridge's own pings never reach the client");
  assert.match(c.stderr(), /window: 300 B/);
});

test("notifications alone (no answer ever comes) are covered by the bridge's own pings", async () => {
  const board = await fakeBoard({ ring: 300 });
  const c = bridge(board.port);
  for (let i = 0; i < 50; ++i) c.send(note(i, 100));  // 5 kB that nothing would acknowledge
  const r = await c.call({ jsonrpc: "2.0", id: "after", method: "ping" });
  assert.deepEqual(r.result, {});
  assert.equal(await c.end(), 0);
  assert.deepEqual(board.overflows, []);
  assert.equal(board.lines.filter((m) => m.method === "notifications/message").length, 50);
  assert.ok(board.syncs > 0, "sync pings went out");
  assert.deepEqual(c.all.map((m) => m.id), ["after"], "only the client's answer reached it");
});

test("a line longer than the buffer goes alone, a notification that long with a ping behind it", async () => {
  const board = await fakeBoard({ ring: 300 });
  const c = bridge(board.port);
  const first = c.call(request("a", 50));
  c.send(note("long", 1500));
  const big = c.call(request("big", 2000));
  const last = c.call(request("z", 50));
  const answers = await Promise.all([first, big, last]);
  assert.deepEqual(answers.map((m) => m.id), ["a", "big", "z"]);
  assert.equal(await c.end(), 0);
  assert.deepEqual(board.overflows, []);
  assert.ok(board.maxHeld > 300, "the long lines did go (more than the buffer at once)");
  assert.deepEqual(board.lines.map((m) => m.params.n), ["a", "long", "big", "z"]);
});

test("a request answered late (a deferred call) does not stall the window", async () => {
  let slow = null;
  const board = await fakeBoard({
    ring: 300,
    onLine: (m) => {
      if (m.method !== "slow") return false;
      slow = m;
      return true;  // answered below, later
    },
  });
  const c = bridge(board.port);
  const late = c.call({ jsonrpc: "2.0", id: "slow", method: "slow", params: { text: pad(150) } });
  const calls = [];
  for (let i = 0; i < 30; ++i) calls.push(c.call(request(i, 100)));  // 3.5 kB behind it
  const answers = await Promise.all(calls);
  assert.equal(answers.length, 30);
  assert.ok(slow !== null && !c.all.some((m) => m.id === "slow"), "every other request answered while the slow one waits");
  assert.ok(board.syncs > 0, "a sync ping covered the slow request's line");
  board.answer({ jsonrpc: "2.0", id: "slow", result: { method: "slow" } });
  assert.equal((await late).result.method, "slow");
  assert.equal(await c.end(), 0);
  assert.deepEqual(board.overflows, []);
});

test("a long request answered only after a later line (a deferred call, then its cancel) does not block the window", async () => {
  const board = await fakeBoard({
    ring: 300,
    onLine: (m, b) => {
      if (m.method === "wait") return true;  // deferred: answered when cancelled
      if (m.method !== "notifications/cancelled") return false;
      b.answer({ jsonrpc: "2.0", id: m.params.requestId, error: { code: -32603, message: "cancelled" } });
      return true;
    },
  });
  const c = bridge(board.port);
  // 260 B: longer than the buffer less the room of a sync ping, so it goes alone.
  const waiting = c.call({ jsonrpc: "2.0", id: "w", method: "wait", params: { text: pad(200) } });
  c.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: "w", reason: pad(100) } });
  const r = await waiting;
  assert.equal(r.error.message, "cancelled");
  assert.ok(board.syncs > 0, "a sync ping followed the long request");
  assert.equal(await c.end(), 0);
  assert.deepEqual(board.overflows, []);
});

test("the board says it lost input: the requests on their way are answered, once", async () => {
  for (const report of [INPUT_LOST, INPUT_LOST_NULL]) {
    let blank = 0;
    const board = await fakeBoard({
      ring: 300,
      onLine: (m, b) => {
        if (m.method === "hold") return true;  // never answered now: lost, as far as the client knows
        if (m.method !== "notifications/overflow") return false;
        b.answer(report);
        return true;
      },
    });
    const c = bridge(board.port);
    const held = [c.call({ jsonrpc: "2.0", id: "h1", method: "hold" }), c.call({ jsonrpc: "2.0", id: "h2", method: "hold" })];
    c.send({ jsonrpc: "2.0", method: "notifications/overflow" });
    const answers = await Promise.all(held);
    for (const a of answers) {
      assert.equal(a.error.code, -32603);
      assert.match(a.error.message, /lost input/);
    }
    assert.ok(c.all.some((m) => m.error?.data?.inputLost === true && (m.id ?? null) === null), "the board's own error was passed on");
    for (let i = 0; i < 100 && !/the board lost input/.test(c.stderr()); ++i) await new Promise((r) => setTimeout(r, 20));
    assert.match(c.stderr(), /the board lost input; 2 request\(s\) on the way/);
    // An answer that comes after all is not a second answer.
    board.answer({ jsonrpc: "2.0", id: "h1", result: { method: "hold" } });
    const r = await c.call({ jsonrpc: "2.0", id: "next", method: "ping" });
    assert.deepEqual(r.result, {});
    assert.equal(c.all.filter((m) => m.id === "h1").length, 1);
    assert.equal(await c.end(), 0);
  }
});

test("the client's input ends: what it sent is still sent and answered", async () => {
  const board = await fakeBoard({ ring: 300, bytesPerTick: 8 });
  const c = bridge(board.port);
  for (let i = 0; i < 40; ++i) c.send(request(i, 60));
  assert.equal(await c.end(), 0);
  assert.deepEqual(c.all.map((m) => m.id), Array.from({ length: 40 }, (_, i) => i));
  assert.deepEqual(board.overflows, []);
});

test("a board that booted before the bridge: 256 B until a banner says more; --window overrides", async () => {
  for (const [extra, limit] of [[[], 256], [["--window", "600"], 600]]) {
    const board = await fakeBoard({ ring: 4096, banner: false, bytesPerTick: 4 });
    const c = bridge(board.port, extra);
    const calls = [];
    for (let i = 0; i < 60; ++i) calls.push(c.call(request(i, 20 + (i * 29) % 100)));  // lines of 90 to 190 B
    await Promise.all(calls);
    assert.equal(await c.end(), 0);
    assert.equal(board.probes, 1, "ready by its ping");
    assert.ok(board.maxHeld <= limit, `at most ${limit} B waited: ${board.maxHeld}`);
    assert.ok(board.maxHeld > limit / 2, `the window was used: ${board.maxHeld} B`);
  }
});
