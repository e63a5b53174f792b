// The sensors firmware over lwIP on an emulated board (EMCP_RUN_BOARD: the scripts/run-board
// command), under load, for long, and under faults. Its device_stats tool reports the
// connection and session slots, the HTTP arena's and the painted stack's high-water marks and
// lwIP's pools (used, most ever, size), which the tests read before and after.
//
//   EMCP_BOARD_HTTP_PART=load    8 keep-alive clients, each with its session, 4,000 requests:
//                                no failure, every slot free afterwards (the 8-connection image)
//   EMCP_BOARD_HTTP_PART=limits  more clients than slots (503 or a refused connection, the
//                                others served), faults (a client that stops reading, a reset
//                                in a body, a FIN on an event stream, more TCP connections than
//                                lwIP has PCBs), then a soak of 10,000 requests with flat
//                                high-water marks (the 4-connection image)
import { after, before, test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import net from "node:net";
import { startNetworkServer, stopNetworkServer } from "./lib/harness.mjs";
import { answeredWith, connectRaw, INIT, POST_HEADERS, request, rpcCall } from "./lib/rawhttp.mjs";

const PART = process.env.EMCP_BOARD_HTTP_PART ?? "limits";
const SEND_TIMEOUT_MS = 5000;  // HttpOptions::send_timeout_ms (the firmware's default)
let server, port;

before(async () => {
  server = await startNetworkServer(null, []);
  port = server.port;
});
after(async () => { if (server) await stopNetworkServer(server); });


const call = (agent, body, sid) => rpcCall(agent, port, body, sid);

const init = (name) => ({ jsonrpc: "2.0", id: 0, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "1" } } });

/// A session on its own keep-alive agent: { agent, sid, rpc(method, params) }.
async function session(name) {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
  const r = await call(agent, init(name));
  assert.equal(r.status, 200, r.data);
  const sid = r.headers["mcp-session-id"];
  assert.equal((await call(agent, { jsonrpc: "2.0", method: "notifications/initialized" }, sid)).status, 202);
  let id = 1;
  const rpc = async (method, params = {}) => {
    const res = await call(agent, { jsonrpc: "2.0", id: ++id, method, params }, sid);
    assert.equal(res.status, 200, res.data);
    const m = JSON.parse(res.data);
    assert.equal(m.id, id);
    return m;
  };
  const end = async () => {
    await call(agent, null, sid);
    agent.destroy();
  };
  return { agent, sid, rpc, end };
}

/// The board's figures (device_stats' structured output).
async function stats(s) {
  const m = await s.rpc("tools/call", { name: "device_stats", arguments: {} });
  return m.result.structuredContent;
}

const echo = (s, i) => s.rpc("tools/call", { name: "echo", arguments: { text: `n${i}` } }).then((m) => {
  assert.equal(m.result.content[0].text, `n${i}`);
});

if (PART === "load") {
  test("8 keep-alive clients, 4,000 requests: no failure, every slot free afterwards", async () => {
    const CLIENTS = 8, REQUESTS = 4000;
    const t0 = Date.now();
    const failures = [];
    await Promise.all(Array.from({ length: CLIENTS }, async (_, k) => {
      const s = await session(`load${k}`);
      try {
        for (let i = 0; i < REQUESTS / CLIENTS; ++i) {
          try {
            if (i % 10 === 0) {
              const m = await s.rpc("tools/call", { name: "read_sensor", arguments: { sensor: "temperature" } });
              assert.ok(m.result.structuredContent.value !== undefined);
            } else {
              await echo(s, i);
            }
          } catch (e) { failures.push(`client ${k} request ${i}: ${e.message}`); }
        }
      } finally { await s.end(); }
    }));
    const seconds = (Date.now() - t0) / 1000;
    console.log(`${REQUESTS} requests from ${CLIENTS} clients in ${seconds.toFixed(1)} s (${(REQUESTS / seconds).toFixed(0)} requests/s)`);
    assert.deepEqual(failures.slice(0, 5), []);
    const s = await session("after");
    const st = await stats(s);
    await s.end();
    console.log(JSON.stringify(st.network));
    assert.equal(st.network.connections_in_use, 1, "only the connection asking");
    assert.equal(st.network.sessions_in_use, 1, "only the session asking");
    assert.equal(st.network.rx_dropped, 0);
  });
}

if (PART === "limits") {
  test("more clients than connection slots: 503 or a refused connection, the others served", async () => {
    const s = await session("watcher");
    const slots = (await stats(s)).network.connections;
    s.agent.destroy();
    // Every slot holds a request that has not finished arriving (not idle: not evictable).
    const held = [];
    for (let i = 0; i < slots; ++i) {
      const c = await connectRaw(port);
      await c.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INIT.length}\r\n\r\n`);
      held.push(c);
    }
    await new Promise((r) => setTimeout(r, 200));
    const extra = await connectRaw(port).catch(() => null);
    let live = held;
    if (extra) {
      await extra.write(request("POST", "/mcp", POST_HEADERS, INIT));
      const { buf, closed } = await extra.until(({ buf: b, closed: c }) => c || b.length > 0, 5000);
      await new Promise((r) => setTimeout(r, 200));
      // Under load the newcomer may reach the board more than the reclaim grace (1 s) after the
      // held bodies paused, or overtake one still in lwIP's accept queue: then it is served and
      // exactly that one held connection ended (408 or 503; docs/http.md "Under attack").
      const gaveWay = answeredWith(held, 408, 503);
      if (/^HTTP\/1\.1 200 /.test(buf.toString("latin1"))) {
        assert.equal(gaveWay.length, 1, "served only if a held connection gave way");
        live = held.filter((c) => !gaveWay.includes(c));
      } else if (buf.length > 0) {
        assert.match(buf.toString("latin1"), /^HTTP\/1\.1 503 /, "refused with 503");
        assert.match(buf.toString("latin1"), /Retry-After: /i);
      } else {
        assert.ok(closed, "or the connection is refused");
      }
      extra.end();
    }
    // The held requests finish and are answered.
    for (const c of live) await c.write(INIT);
    for (const c of held) if (!live.includes(c)) c.end();
    for (const c of live) {
      const [r] = await c.responses(1, 10000);
      assert.equal(r.status, 200);
      c.end();
    }
    await new Promise((r) => setTimeout(r, 300));
    const t = await session("after");
    const st = await stats(t);
    await t.end();
    assert.equal(st.network.connections_in_use, 1, JSON.stringify(st.network));
    assert.ok(st.network.refused >= 1 || st.http.reclaimed_slow >= 1, "the refusal (or the reclaim) is counted");
  });

  test("a client that stops reading is dropped after the send timeout; the others are served", async () => {
    const s = await session("stall");
    const base = (await stats(s)).network.connections_in_use;
    // A client with a 2 KiB receive buffer (Node cannot set SO_RCVBUF: a Python helper)
    // pipelines requests and never reads: the answers fill the windows between it and the
    // board until the board can send no more; its output then waits, and after
    // send_timeout_ms without progress the board drops the connection.
    const one = request("POST", "/mcp", { ...POST_HEADERS, "Mcp-Session-Id": s.sid },
      JSON.stringify({ jsonrpc: "2.0", id: 5, method: "tools/call", params: { name: "get_log", arguments: {} } }));
    const script = [
      "import socket, sys, time",
      "k = socket.socket(); k.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 2048)",
      `k.connect(("127.0.0.1", ${port})); k.setblocking(False)`,
      `req = bytes.fromhex("${one.toString("hex")}") * 50`,
      "end = time.time() + 8",
      "while time.time() < end:",
      "    try: k.send(req)",
      "    except BlockingIOError: time.sleep(0.05)",
      "    except OSError: break",
      "print('stalled', flush=True); time.sleep(40)",
    ].join("\n");
    const { spawn } = await import("node:child_process");
    const py = spawn("python3", ["-c", script], { stdio: ["ignore", "pipe", "inherit"] });
    try {
      await new Promise((resolve) => py.stdout.once("data", resolve));
      // Meanwhile (and now) another client is served.
      const other = await session("other");
      const t0 = Date.now();
      for (let i = 0; i < 20; ++i) await echo(other, i);
      assert.ok(Date.now() - t0 < SEND_TIMEOUT_MS, "served while the other one stalls");
      // The stalled one goes: its slot frees once its output made no progress for the timeout.
      let st;
      const deadline = Date.now() + 6 * SEND_TIMEOUT_MS;
      do {
        await new Promise((r) => setTimeout(r, 500));
        st = await stats(other);
      } while (st.network.connections_in_use > base + 1 && Date.now() < deadline);
      assert.ok(st.network.connections_in_use <= base + 1, `dropped: ${JSON.stringify(st.network)}`);
      await other.end();
    } finally {
      py.kill("SIGKILL");
    }
    await s.end();
  });

  test("a reset in the middle of a body, and a FIN on an event stream, free their slots", async () => {
    const s = await session("faults");
    await new Promise((r) => setTimeout(r, 500));
    const base = (await stats(s)).network.connections_in_use;
    const c = await connectRaw(port);
    const body = JSON.stringify({ jsonrpc: "2.0", id: 9, method: "tools/call", params: { name: "echo", arguments: { text: "x".repeat(500) } } });
    await c.write(request("POST", "/mcp", { ...POST_HEADERS, "Mcp-Session-Id": s.sid }, body).subarray(0, 300));
    c.sock.resetAndDestroy();
    const g = await connectRaw(port);
    await g.write(request("GET", "/mcp", { Accept: "text/event-stream", "Mcp-Session-Id": s.sid }));
    await g.until(({ buf }) => buf.toString("latin1").includes("\r\n\r\n"), 5000);
    assert.match(g.buffer.toString("latin1"), /^HTTP\/1\.1 200 /);
    g.sock.end();  // FIN while the stream is open
    await new Promise((r) => setTimeout(r, 500));
    const st = await stats(s);
    assert.equal(st.network.connections_in_use, base, JSON.stringify(st.network));
    // The session's GET stream can be opened again (no 409: the old one ended with its FIN).
    const g2 = await connectRaw(port);
    await g2.write(request("GET", "/mcp", { Accept: "text/event-stream", "Mcp-Session-Id": s.sid }));
    await g2.until(({ buf }) => buf.toString("latin1").includes("\r\n\r\n"), 5000);
    assert.match(g2.buffer.toString("latin1"), /^HTTP\/1\.1 200 /);
    g2.end();
    await s.end();
  });

  test("more TCP connections than lwIP has PCBs: refused, then served again", async () => {
    const s = await session("pcbs");
    const size = (await stats(s)).network.tcp_pcb_size;
    s.agent.destroy();
    // Twice as many bare connections as PCBs: lwIP refuses those it has no PCB for (its SYN
    // goes unanswered or is reset; QEMU's forward may accept it and then close it).
    const socks = await Promise.all(Array.from({ length: 2 * size }, () => new Promise((resolve) => {
      const k = net.connect({ host: "127.0.0.1", port });
      k.on("error", () => {});
      k.setTimeout(3000, () => resolve(k));
      k.on("connect", () => setTimeout(() => resolve(k), 1500));
      k.on("close", () => resolve(k));
    })));
    for (const k of socks) k.destroy();
    // Recovery: after the PCBs come back (closed, or TIME_WAIT reused), a new client is served.
    let ok = false;
    const deadline = Date.now() + 15000;
    while (!ok && Date.now() < deadline) {
      try {
        const t = await session("again");
        await echo(t, 1);
        const st = await stats(t);
        await t.end();
        assert.ok(st.network.tcp_pcb_max <= st.network.tcp_pcb_size);
        ok = true;
      } catch { await new Promise((r) => setTimeout(r, 500)); }
    }
    assert.ok(ok, "served again once lwIP has PCBs");
  });

  test("soak: 10,000 requests with flat high-water marks", async () => {
    const s = await session("soak");
    const marks = (st) => ({
      stack: st.stack_high_water, arena: st.network.http_arena_high_water, pool: st.network.pbuf_pool_max,
      heap: st.network.heap_max, seg: st.network.tcp_seg_max,
    });
    const run = async (n, from) => {
      const clients = [s, await session("soak2")];  // the image has 2 session slots
      await Promise.all(clients.map(async (c, k) => {
        for (let i = from + k; i < from + n; i += clients.length) await echo(c, i);
      }));
      for (const c of clients.slice(1)) await c.end();
    };
    await run(10000, 0);  // warm-up: the same work, so timing-dependent peaks are reached
    const before_ = marks(await stats(s));
    const t0 = Date.now();
    await run(10000, 10000);
    const seconds = (Date.now() - t0) / 1000;
    const st = await stats(s);
    console.log(`10,000 requests in ${seconds.toFixed(1)} s; high-water marks ${JSON.stringify(before_)} -> ${JSON.stringify(marks(st))}`);
    assert.deepEqual(marks(st), before_, "high-water marks flat after the warm-up");
    assert.equal(st.notifications_dropped, 0);
    assert.equal(st.network.rx_dropped, 0);
    await s.end();
  });
}
