// Nothing lost on the UART (boards/common/include/board/rx.h; emcp-bridge's window,
// tools/bridge/board_link.h): the firmware in QEMU, its serial port on a socket.
//
// EMCP_UART_FLOW_PART=held (every board, the sensors image): a client with no flow control of
// its own sends far more than the receive buffer holds in one go; the receive interrupt holds
// the UART back when the ring is full (QEMU's UART then takes nothing more from the socket, as
// RTS/CTS would hold a sender), and every request is answered.
//
// EMCP_UART_FLOW_PART=gap (the micro:bit, emcp-sensors-nohold: the same image built with
// EMCP_BOARD_RX_HOLD=0, a UART that cannot hold bytes back, as a real one without flow
// control): the same burst loses bytes, and each gap is answered with -32600 and
// data.inputLost (never a parse error); through emcp-bridge, whose window is the buffer the
// banner states, a soak loses nothing at all; with a window larger than the buffer
// (--window), what is lost is surfaced: every request is answered exactly once.
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { createInterface } from "node:readline";
import net from "node:net";
import { startQemu, stopQemu } from "./lib/harness.mjs";
import { bridgeClient } from "./lib/bridge_client.mjs";
import { check } from "./lib/schema.mjs";

const PART = process.env.EMCP_UART_FLOW_PART ?? "held";
const MACHINE = process.env.EMCP_QEMU_MACHINE;
const qemus = [];
after(async () => { for (const q of qemus) await stopQemu(q); });

const INIT = { jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "uart-flow", version: "1" } } };
const stats = (id) => ({ jsonrpc: "2.0", id, method: "tools/call", params: { name: "device_stats", arguments: {} } });
// Short requests that keep the board busy: a snapshot (a PNG chart and a WAV beep, about 2.5 kB
// of base64 written to the UART) takes the emulated boards some 10 to 40 ms, while its 90-byte
// line arrives in well under one: a burst of them fills any receive buffer, under any load.
const heavy = (i) => ({ jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "snapshot", arguments: {} } });
// A mix, for the soak: pings, echoes, sensor readings and every fifth a snapshot.
const mixed = (i) => i % 5 === 4 ? heavy(i)
  : i % 5 === 0 ? { jsonrpc: "2.0", id: i, method: "ping" }
  : i % 5 < 3 ? { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { text: `mixed ${i}` } } }
  : { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "read_sensor", arguments: { sensor: "uptime" } } };

/// The board's serial port, straight: no bridge, no window. Lines by id; everything in `all`.
async function direct(firmware) {
  const q = await startQemu(MACHINE, firmware);
  qemus.push(q);
  let sock;
  for (let i = 0; i < 200 && !sock; ++i) {
    sock = await new Promise((resolve) => {
      const s = net.connect(q.port, "127.0.0.1", () => resolve(s));
      s.once("error", () => resolve(null));
    });
    if (!sock) await new Promise((r) => setTimeout(r, 50));
  }
  assert.ok(sock, "QEMU's serial socket");
  const all = [];
  const waiting = new Map();
  let banner;
  const bannerSeen = new Promise((r) => { banner = r; });
  createInterface({ input: sock }).on("line", (l) => {
    if (!l.trimStart().startsWith("{")) { if (/MCP on this UART/.test(l)) banner(l); return; }
    const m = JSON.parse(l);
    all.push(m);
    const w = m.id !== undefined ? waiting.get(m.id) : undefined;
    if (w) { waiting.delete(m.id); w(m); }
  });
  const line = await bannerSeen;  // bytes sent before the UART is on are lost on some boards
  return {
    all,
    banner: line,
    write: (text) => sock.write(text),
    call(msg, ms = 30000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(msg.id)}`)), ms);
        waiting.set(msg.id, (m) => { clearTimeout(t); resolve(m); });
        sock.write(JSON.stringify(msg) + "\n");
      });
    },
    // Resolves once `n` messages have come, or after `ms` of silence.
    async settle(n, ms = 3000) {
      let last = all.length, quiet = Date.now();
      while (all.length < n && Date.now() - quiet < ms) {
        await new Promise((r) => setTimeout(r, 50));
        if (all.length !== last) { last = all.length; quiet = Date.now(); }
      }
    },
    close: () => sock.destroy(),
  };
}

/// emcp-bridge on the board's serial port; a line client on its stdio (lib/bridge_client.mjs).
const bridged = (port, extra = []) => bridgeClient(process.env.EMCP_BRIDGE, ["--tcp", `127.0.0.1:${port}`, ...extra]);

async function initialize(c) {
  const r = await c.call(INIT);
  assert.equal(r.result.protocolVersion, "2025-11-25");
  c.write ? c.write('{"jsonrpc":"2.0","method":"notifications/initialized"}\n') : c.send({ jsonrpc: "2.0", method: "notifications/initialized" });
}

const BURST = 120;  // about 11 kB in one write: the receive buffer is 1 KiB (512 B on hifive1)

if (PART === "held") {
  test("more than the receive buffer at once, no bridge: the UART holds the sender back, every request is answered", async () => {
    const c = await direct(process.env.EMCP_FIRMWARE);
    const size = Number(/receive buffer (\d+) B/.exec(c.banner)?.[1]);
    assert.ok(size >= 256, `the banner states the receive buffer: ${c.banner}`);
    await initialize(c);
    const text = Array.from({ length: BURST }, (_, i) => JSON.stringify(heavy(i)) + "\n").join("");
    assert.ok(text.length > 8 * size, `${text.length} B at once`);
    c.write(text);
    await c.settle(BURST + 1, 10000);
    const answered = new Set(c.all.filter((m) => typeof m.id === "number" && m.result !== undefined).map((m) => m.id));
    assert.equal(answered.size, BURST, `answered ${answered.size} of ${BURST}: ${JSON.stringify(c.all.filter((m) => m.error).slice(0, 3))}`);
    const st = (await c.call(stats("st"))).result.structuredContent;
    assert.equal(st.input_dropped, 0, "no byte lost");
    assert.ok(st.input_held > 0, `the receive interrupt held the UART back (input_held ${st.input_held})`);
    c.close();
  });
}

if (PART === "gap") {
  const NOHOLD = process.env.EMCP_FIRMWARE_NOHOLD;

  test("a UART that cannot hold bytes back, no bridge: each gap is answered with inputLost, never parsed", async () => {
    const c = await direct(NOHOLD);
    await initialize(c);
    const text = Array.from({ length: BURST }, (_, i) => JSON.stringify(heavy(i)) + "\n").join("");
    c.write(text);
    await c.settle(BURST + 1, 3000);
    const lost = c.all.filter((m) => m.error?.data?.inputLost === true);
    // After a gap the board skips to the next newline (what came after the gap may be the rest
    // of the damaged line): a client sends one before its next message (docs/gateway.md).
    c.write("\n");
    // The board's own counters first, so that a failure below says whether the ring overflowed.
    const st = (await c.call(stats("st"))).result.structuredContent;
    const seen = `${c.all.length} message(s) back, input_dropped ${st.input_dropped}, input_held ${st.input_held}, ` +
      `errors ${JSON.stringify(c.all.filter((m) => m.error).slice(0, 3))}`;
    assert.ok(st.input_dropped > 0, `the ring lost bytes: ${seen}`);
    assert.ok(lost.length > 0, `bytes were lost and said so: ${seen}`);
    for (const m of lost) {
      assert.equal(m.error.code, -32600);
      assert.deepEqual(check("2025-11-25", m), [], "a JSON-RPC error response of the revision in use");
    }
    const parseErrors = c.all.filter((m) => m.error?.code === -32700);
    assert.deepEqual(parseErrors, [], "no gap went unnoticed into the parser");
    // Every other answer is its request's, and nothing is answered twice.
    const ids = c.all.filter((m) => typeof m.id === "number").map((m) => m.id);
    assert.equal(new Set(ids).size, ids.length, "one answer per request at most");
    for (const m of c.all.filter((x) => typeof x.id === "number" && x.result)) assert.ok(m.id < BURST);
    assert.equal(st.input_held, 0, "this UART never holds back");
    const r = await c.call({ jsonrpc: "2.0", id: "after", method: "ping" });
    assert.deepEqual(r.result, {}, "the board serves on");
    console.log(`# ${BURST} requests in one write: ${ids.length} answered, ${lost.length} gap(s) reported, ${st.input_dropped} bytes lost`);
    c.close();
  });

  test("the same UART through emcp-bridge: its window is the buffer the banner states, and nothing is lost", async () => {
    const q = await startQemu(MACHINE, NOHOLD);
    qemus.push(q);
    const c = bridged(q.port);
    await initialize(c);
    const N = Number(process.env.EMCP_UART_FLOW_SOAK ?? 1000);
    let next = 0;
    const worker = async () => {
      while (next < N) {
        const i = next++;
        const r = await c.call(mixed(i));
        assert.equal(r.error, undefined, JSON.stringify(r));
      }
    };
    await Promise.all(Array.from({ length: 24 }, worker));
    const st = (await c.call(stats("st"))).result.structuredContent;
    assert.equal(st.input_dropped, 0, "no byte lost");
    assert.equal(await c.end(), 0);
    assert.match(c.stderr(), /window: \d+ B \(the board's receive buffer\)/);
    console.log(`# ${N} requests, 24 at a time: ${c.stderr().match(/at most \d+ of the \d+ B window on the way, \d+ sync ping\(s\)/)?.[0]}`);
  });

  test("through emcp-bridge with a window larger than the buffer: every request is answered exactly once", async () => {
    const q = await startQemu(MACHINE, NOHOLD);
    qemus.push(q);
    const c = bridged(q.port, ["--window", "65536"]);
    await initialize(c);
    const answers = await Promise.all(Array.from({ length: BURST }, (_, i) => c.call(heavy(i))));
    const failed = answers.filter((m) => m.error);
    assert.ok(failed.length > 0, "some requests were lost on the UART");
    for (const m of failed) {
      assert.ok(m.error.code === -32603 && /lost input/.test(m.error.message) || m.error.data?.inputLost === true,
        `a lost request is answered as such: ${JSON.stringify(m)}`);
    }
    await new Promise((r) => setTimeout(r, 1000));  // late answers, if any, must not come through
    const ids = c.all.filter((m) => typeof m.id === "number").map((m) => m.id);
    assert.equal(ids.length, BURST, "exactly one answer per request");
    assert.equal(new Set(ids).size, BURST);
    assert.match(c.stderr(), /the board lost input/);
    // No request after this: with a window larger than its buffer the board may go on losing
    // input while it works through the rest of the burst (the test without a bridge shows it
    // serves on). The end of the input still ends the bridge cleanly.
    assert.equal(await c.end(), 0);
  });
}
