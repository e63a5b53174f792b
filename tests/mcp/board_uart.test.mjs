// The firmware in QEMU over its emulated UART, through emcp-bridge: line noise between valid
// messages, and a soak of at least 10,000 requests with zero lost answers while the arena and
// the painted stack high-water marks (the device_stats tool) stay where they were after a
// warm-up (the stack's may grow by one receive-interrupt frame, which lands at random depths).
//
//   EMCP_QEMU_MACHINE=mps2-an385 EMCP_FIRMWARE=...elf EMCP_BRIDGE=build/native/bin/emcp-bridge \
//     node --test tests/mcp/board_uart.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { imageReport, startQemu, stopQemu } from "./lib/harness.mjs";
import { stopServer, watchServer } from "./lib/server_exit.mjs";

const SOAK = Number(process.env.EMCP_SOAK_REQUESTS ?? 10000);
let qemu, bridge, bridgeWatch;
const waiting = new Map();  // id -> resolve
const unmatched = [];       // lines that answered no request of ours (errors for the noise)

before(async () => {
  qemu = await startQemu(process.env.EMCP_QEMU_MACHINE, process.env.EMCP_FIRMWARE);
  bridge = spawn(process.env.EMCP_BRIDGE, ["--tcp", `127.0.0.1:${qemu.port}`, "--quiet"], { stdio: ["pipe", "pipe", "pipe"] });
  bridgeWatch = watchServer(bridge, "emcp-bridge");
  createInterface({ input: bridge.stdout }).on("line", (line) => {
    let m;
    try { m = JSON.parse(line); } catch { unmatched.push(line); return; }
    const w = m && "id" in m ? waiting.get(m.id) : undefined;
    if (w) {
      waiting.delete(m.id);
      w(m);
    } else {
      unmatched.push(line);
    }
  });
  const init = await call({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "uart-test", version: "1" } } });
  assert.equal(init.result.protocolVersion, "2025-11-25");
  bridge.stdin.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n');
});

after(async () => {
  try {
    if (bridgeWatch) await stopServer(bridgeWatch, "end of input");  // exit status 0, no sanitizer report
  } finally {
    await stopQemu(qemu);
  }
});

function send(text) { bridge.stdin.write(text); }

function call(msg, ms = 30000) {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => { waiting.delete(msg.id); reject(new Error(`no answer to ${JSON.stringify(msg.id)} within ${ms} ms`)); }, ms);
    waiting.set(msg.id, (m) => { clearTimeout(t); resolve(m); });
    send(JSON.stringify(msg) + "\n");
  });
}

async function stats(id, ms) {
  const r = await call({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "device_stats", arguments: {} } }, ms);
  return r.result.structuredContent;
}

// A deterministic generator (the same noise every run).
function lcg(seed) {
  let x = seed >>> 0;
  return () => { x = (Math.imul(x, 1664525) + 1013904223) >>> 0; return x; };
}

test("line noise between valid messages: every valid request is answered", async () => {
  const rnd = lcg(12345);
  let answered = 0;
  for (let i = 0; i < 200; ++i) {
    const n = rnd() % 300;
    const noise = Buffer.alloc(n);
    for (let k = 0; k < n; ++k) noise[k] = rnd() % 256;
    send(noise);
    send("\n");  // the noise ends as a (bad) line of its own
    const kind = i % 3;
    const msg = kind === 0 ? { jsonrpc: "2.0", id: `n${i}`, method: "ping" }
      : kind === 1 ? { jsonrpc: "2.0", id: `n${i}`, method: "tools/call", params: { name: "echo", arguments: { text: `noise round ${i}` } } }
      : { jsonrpc: "2.0", id: `n${i}`, method: "tools/call", params: { name: "read_sensor", arguments: { sensor: "uptime" } } };
    const r = await call(msg);
    assert.equal(r.error, undefined, JSON.stringify(r));
    if (kind === 1) assert.equal(r.result.content[0].text, `noise round ${i}`);
    if (kind === 2) assert.match(r.result.content[0].text, /^uptime: \d+ s/);
    ++answered;
  }
  assert.equal(answered, 200);
  // The noise lines were answered with JSON-RPC errors (or nothing, for blank ones): never a crash.
  assert.ok(unmatched.every((l) => { try { return "error" in JSON.parse(l); } catch { return false; } }), unmatched.slice(0, 3).join("\n"));
  const st = await stats("noise-stats");
  assert.equal(st.input_dropped, 0, "no received byte lost");
  assert.equal(st.input_held, 0, "the bridge never sent more than the receive buffer holds");
  assert.equal(st.notifications_dropped, 0, "no notification lost");
});

test(`soak: ${SOAK} requests, zero lost answers, memory high-water marks stable`, async () => {
  const WINDOW = 24;
  const warm = Math.min(1000, SOAK / 10);
  let next = 0, done = 0;
  let first;
  const t0 = Date.now();
  const strayBefore = unmatched.length;
  // A lost answer says what the board saw: the lines since the soak began that answered no
  // request of ours (a request the UART mangled is answered with an error and id null) and the
  // device's counters (input bytes lost, messages handled).
  const explainLoss = async (e) => {
    let st;
    try { st = await stats("soak-loss", 10000); } catch (e2) { st = `device_stats failed: ${e2.message}`; }
    return new Error(`${e.message}; lines that answered no request since the soak began: ` +
      `${JSON.stringify(unmatched.slice(strayBefore, strayBefore + 5))}; device_stats: ${JSON.stringify(st)}`);
  };
  const one = async () => {
    while (next < SOAK) {
      const i = next++;
      // Mostly short messages: the emulated UART carries about 6 KiB/s.
      const kind = i % 5;
      const msg = kind < 3 ? { jsonrpc: "2.0", id: i, method: "ping" }
        : kind < 4 ? { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { text: `s${i}` } } }
        : { jsonrpc: "2.0", id: i, method: "resources/read", params: { uri: "sensor://load" } };
      let r;
      try { r = await call(msg); } catch (e) { throw await explainLoss(e); }
      assert.equal(r.error, undefined, JSON.stringify(r));
      if (kind === 3) assert.equal(r.result.content[0].text, `s${i}`);
      if (kind === 4) assert.equal(JSON.parse(r.result.contents[0].text).sensor, "load");
      ++done;
      if (done === warm) first = await stats("soak-warm");
    }
  };
  await Promise.all(Array.from({ length: WINDOW }, one));
  const last = await stats("soak-end");
  const seconds = (Date.now() - t0) / 1000;
  console.log(`# ${process.env.EMCP_QEMU_MACHINE}: ${done} requests in ${seconds.toFixed(1)} s (${(done / seconds).toFixed(0)}/s); ` +
    `arena high-water ${last.arena_high_water} of ${last.arena_size} B, stack high-water ${last.stack_high_water} of ${last.stack_size} B, ` +
    `${last.messages} messages, ${last.input_dropped} input bytes lost, the UART held back ${last.input_held} times`);
  assert.equal(done, SOAK);
  assert.equal(last.input_dropped, 0);
  // emcp-bridge never sent more than the receive buffer holds (its window, the banner's figure):
  // the ring never filled, so the UART was never held back, and a UART without flow control
  // would have lost nothing either.
  assert.equal(last.input_held, 0, "the receive ring never filled");
  assert.equal(last.notifications_dropped, 0);
  assert.equal(last.arena_high_water, first.arena_high_water, "arena high-water mark stable");
  // The receive interrupt may land at the deepest point of the request path once in a while:
  // its frame (the footprint report's interrupt figure) is the only growth allowed.
  const report = imageReport();
  assert.ok(last.stack_high_water >= first.stack_high_water, "high-water marks never shrink");
  assert.ok(last.stack_high_water - first.stack_high_water <= report.stack.interrupt,
    `stack high-water mark stable: ${first.stack_high_water} after warm-up, ${last.stack_high_water} at the end ` +
    `(at most the interrupt's ${report.stack.interrupt} B more)`);
  assert.ok(last.stack_high_water < last.stack_size, "the stack never reached its end");
});
