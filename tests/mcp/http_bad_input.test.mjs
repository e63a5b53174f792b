// Malformed, hostile and out-of-limit HTTP and WebSocket input to emcp-sensors --http: each case
// with the status (or WebSocket close code) RFC 9110 / RFC 6455 / the MCP transport spec call
// for, and after each one a fresh initialize must still succeed: the server keeps serving.
// The stateless revision 2026-07-28 has a table of its own (headers against the body, `_meta`,
// legacy methods, forged requestState and inputResponses, a listen flood), each answer checked
// against the official 2026-07-28 schema and followed by a working header-validated tools/call;
// forged and replayed states of a real input round and Mcp-Param-* headers run against
// emcp-everything (EMCP_EVERYTHING; not on a board, whose image is the sensors one).
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors EMCP_EVERYTHING=build/native/bin/emcp-everything \
//     node --test tests/mcp/http_bad_input.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { startNetworkServer, stopNetworkServer, ON_BOARD } from "./lib/harness.mjs";
import { answeredWith, connectRaw, once, request, newSession, INIT, POST_HEADERS } from "./lib/rawhttp.mjs";
import { serverSockets, waitSockets } from "./lib/proc_sockets.mjs";
import { check } from "./lib/schema.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
const EVERYTHING = ON_BOARD ? null : process.env.EMCP_EVERYTHING ?? new URL("../../build/native/bin/emcp-everything", import.meta.url).pathname;
// The head and body timeouts of the slow-client rows: on Linux 800 ms, on a server of their own
// (the table's server keeps the default 10 s, so that no row's request meets a deadline on a
// loaded machine); a board keeps its default for every row (EMCP_HTTP_TIMEOUT_MS=10000). The
// connection slots: emcp-sensors --http's 16 on Linux; on a board, the image's, from its build
// options (EMCP_IMAGE_CONNECTIONS, given by tests/boards/CMakeLists.txt).
const TIMEOUT_MS = Number(process.env.EMCP_HTTP_TIMEOUT_MS ?? 800);
const SLOTS = ON_BOARD ? Number(process.env.EMCP_IMAGE_CONNECTIONS) : 16;
assert.ok(SLOTS > 0, "on a board, EMCP_IMAGE_CONNECTIONS (the image's connection slots) must be given");
// How long to wait for something the server must do at a deadline (a 408 at TIMEOUT_MS) or at
// once (reading a hang-up): the deadline, as long again and 5 s. Only a bound on the wait: what
// the test asserts about the time is a lower bound measured from before the connection began
// (load can only make it longer) and the server's own counters (which deadline ended it).
const LIVENESS_MS = 2 * TIMEOUT_MS + 5000;
let server, port;

before(async () => {
  server = await startNetworkServer(SERVER, ["--simulate"], ["--ws"]);
  port = server.port;
});
after(async () => { await stopNetworkServer(server); });

const post = (body, extra = {}) => request("POST", "/mcp", { ...POST_HEADERS, ...extra }, body);
const ping = JSON.stringify({ jsonrpc: "2.0", id: 7, method: "ping" });

/// Linux: waits until the server `s` holds no open connection but the `keep` the test still
/// holds (its sockets in /proc: every connection the test ended has been read as ended and
/// closed), and asserts it. Their slots are then free: a newcomer is served at once. No-op on a
/// board.
async function serverIdle(s = server, keep = 0) {
  if (ON_BOARD) return;
  const k = await waitSockets(s.proc.pid, (x) => x.open.length === keep, LIVENESS_MS);
  assert.equal(k.open.length, keep, `the server holds connections the test ended (${keep} still open): ${k.summary}`);
  assert.equal(k.listening.length, 1, `one listening socket: ${k.summary}`);
}

/// device_stats' "http" object (the engine's counters), asked without a session (2026-07-28).
async function httpStats(p = port) {
  const r = await once(p, mpost(mreq("stats", "tools/call", { name: "device_stats", arguments: {} })), ON_BOARD ? 15000 : 10000);
  assert.equal(r.status, 200, `device_stats: ${r.body}`);
  const h = JSON.parse(r.body).result?.structuredContent?.http;
  assert.ok(h, `device_stats has the http object: ${r.body}`);
  return h;
}
const COUNTERS = ["refused_busy", "reclaimed_slow", "reclaimed_idle", "displaced", "timeout_head", "timeout_body", "timeout_idle", "timeout_send"];
/// The counters that moved between two httpStats() readings.
function moved(a, b) {
  return Object.fromEntries(COUNTERS.map((k) => [k, b[k] - a[k]]).filter(([, v]) => v !== 0));
}

/// The server still serves: a fresh initialize is answered 200.
/// Linux: exactly that, at the first try, once the server holds no connection (serverIdle):
/// ports/posix reads its connections' hang-ups before it accepts, so the slots of the row's
/// connections are free by then. A board (`afterBurst`: the row opened more connections than
/// the image has slots or lwIP has PCBs): its lwIP may have no slot or PCB for the newcomer
/// yet, documented (docs/http.md "On a board: lwIP"): 503 with Retry-After, a connection
/// reset (closed without an answer), or, when lwIP dropped the SYN for want of a PCB, no answer
/// at all within the wait (QEMU's user network accepted the connection on the host's side and
/// retries it in the guest only later); it is asked again, 20 times at most, 100 ms apart.
async function stillServing({ afterBurst = false, s = server } = {}) {
  await serverIdle(s);
  const attempt = async () => {
    try {
      return await once(s.port, post(INIT));
    } catch (e) {
      if (ON_BOARD && afterBurst && /timed out waiting/.test(e.message)) return { timedOut: true };
      throw e;
    }
  };
  let r = await attempt();
  const busy = (x) => (x.status === 503 && /^\d+$/.test(x.headers["retry-after"] ?? "")) || (x.status === undefined && x.closed) || x.timedOut === true;
  for (let i = 0; ON_BOARD && afterBurst && i < 20 && busy(r); ++i) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    r = await attempt();
  }
  assert.equal(r.status, 200, `a fresh initialize still works: ${JSON.stringify({ status: r.status, closed: r.closed, timedOut: r.timedOut })}`);
  assert.match(r.body.toString(), /"protocolVersion":"2025-11-25"/);
}

// [name, bytes or async (sid) => bytes, expected status, extra check]
const CASES = [
  ["malformed request line", () => Buffer.from("GARBAGE\r\n\r\n"), 400],
  ["bad character in the method", () => Buffer.from("G@T /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"), 400],
  ["unsupported HTTP version", () => Buffer.from("GET /mcp HTTP/2.0\r\nHost: 127.0.0.1\r\n\r\n"), 505],
  ["request target too long (414)", () => request("GET", "/" + "a".repeat(300)), 414],
  ["header bomb: 100 headers (431)", () => {
    const h = {};
    for (let i = 0; i < 100; ++i) h[`X-Pad-${i}`] = "x";
    return request("GET", "/mcp", h);
  }, 431],
  ["head larger than the limit (431)", () => request("GET", "/mcp", { "X-Big": "y".repeat(9000) }), 431],
  ["kept header too long (431)", () => post(ping, { Origin: "http://" + "o".repeat(200) }), 431],
  ["header line without a colon", () => Buffer.from("GET /mcp HTTP/1.1\r\nHost 127.0.0.1\r\n\r\n"), 400],
  ["obsolete line folding", () => Buffer.from("GET /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-A: 1\r\n  folded\r\n\r\n"), 400],
  ["bare CR in the head", () => Buffer.from("GET /mcp HTTP/1.1\rHost: 127.0.0.1\r\n\r\n"), 400],
  ["HTTP/1.1 without Host", () => Buffer.from("GET /mcp HTTP/1.1\r\n\r\n"), 400],
  ["POST without Content-Length (411)", () => request("POST", "/mcp", { ...POST_HEADERS, "Content-Length": null }), 411],
  ["Content-Length not a number", () => post(ping, { "Content-Length": "12abc" }), 400],
  ["two different Content-Length headers", () => Buffer.concat([Buffer.from(
    "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
    "Content-Length: 5\r\nContent-Length: 6\r\n\r\n"), Buffer.from("hello!")]), 400],
  ["body larger than the limit (413)", () => post("x".repeat(10), { "Content-Length": "70000" }), 413],
  ["Content-Length and Transfer-Encoding together", () => post(ping, { "Transfer-Encoding": "chunked" }), 400],
  ["unsupported Transfer-Encoding (501)", () => request("POST", "/mcp", { ...POST_HEADERS, "Transfer-Encoding": "gzip" }, ""), 501],
  ["bad chunk size", () => request("POST", "/mcp", { ...POST_HEADERS, "Transfer-Encoding": "chunked" }, "zz\r\nabc\r\n0\r\n\r\n"), 400],
  ["chunk longer than its size", () => request("POST", "/mcp", { ...POST_HEADERS, "Transfer-Encoding": "chunked" }, "2\r\nabcdef\r\n0\r\n\r\n"), 400],
  ["chunked body larger than the limit (413)", () => request("POST", "/mcp", { ...POST_HEADERS, "Transfer-Encoding": "chunked" }, "20000\r\n"), 413],
  ["wrong method on the endpoint (405 + Allow)", () => request("PUT", "/mcp", { "Content-Length": "0" }), 405,
    (r) => assert.equal(r.headers.allow, "GET, POST, DELETE, OPTIONS")],
  // CORS: a preflight of an origin the Origin check refuses is 403 without CORS headers; one of
  // a localhost page is 204 with them; OPTIONS without Origin is 204 with Allow.
  ["CORS preflight of a foreign origin (403)", () => request("OPTIONS", "/mcp", { Origin: "https://evil.example",
    "Access-Control-Request-Method": "POST" }), 403, (r) => assert.equal(r.headers["access-control-allow-origin"], undefined)],
  ["CORS preflight of a localhost page (204)", () => request("OPTIONS", "/mcp", { Origin: "http://localhost:5173",
    "Access-Control-Request-Method": "POST", "Access-Control-Request-Headers": "content-type, mcp-protocol-version" }), 204,
    (r) => {
      assert.equal(r.headers["access-control-allow-origin"], "http://localhost:5173");
      assert.match(r.headers["access-control-allow-headers"], /MCP-Protocol-Version/);
    }],
  ["OPTIONS without Origin (204 + Allow)", () => request("OPTIONS", "/mcp"), 204,
    (r) => assert.equal(r.headers.allow, "GET, POST, DELETE, OPTIONS")],
  ["unknown path (404)", () => request("GET", "/nothing-here"), 404],
  ["POST that accepts neither JSON nor SSE (406)", () => post(INIT, { Accept: "text/html" }), 406],
  ["POST that accepts JSON only (406)", () => post(INIT, { Accept: "application/json" }), 406],
  ["GET stream without text/event-stream (406)", async (sid) => request("GET", "/mcp", { Accept: "application/json", "Mcp-Session-Id": sid }), 406],
  ["POST with Content-Type text/plain (415)", () => post(INIT, { "Content-Type": "text/plain" }), 415],
  ["request before initialize without a session (400)", () => post(ping), 400,
    (r) => assert.equal(JSON.parse(r.body).error.code, -32000)],
  ["unknown session id (404)", () => post(ping, { "Mcp-Session-Id": "00000000000000000000000000000000" }), 404],
  ["deleted session (404)", async (sid) => {
    const d = await once(port, request("DELETE", "/mcp", { "Mcp-Session-Id": sid }));
    assert.equal(d.status, 200);
    return post(ping, { "Mcp-Session-Id": sid });
  }, 404],
  ["DELETE without a session id (400)", () => request("DELETE", "/mcp"), 400],
  ["GET without a session id (400)", () => request("GET", "/mcp", { Accept: "text/event-stream" }), 400],
  ["Origin of another site (403)", () => post(INIT, { Origin: "http://evil.example.com" }), 403],
  ["Origin null (403)", () => post(INIT, { Origin: "null" }), 403],
  ["Host of another name: DNS rebinding (403)", () => post(INIT, { Host: "evil.example.com:8080" }), 403],
  ["unsupported MCP-Protocol-Version (400)", async (sid) => post(ping, { "Mcp-Session-Id": sid, "MCP-Protocol-Version": "1999-01-01" }), 400],
  ["body that is not JSON (400, -32700)", () => post("{not json"), 400,
    (r) => assert.equal(JSON.parse(r.body).error.code, -32700)],
  ["empty body (400, -32700)", () => post(""), 400, (r) => assert.equal(JSON.parse(r.body).error.code, -32700)],
  ["JSON that is not JSON-RPC (400, -32600)", async (sid) => post("{\"jsonrpc\":\"1.0\",\"id\":3,\"method\":\"ping\"}", { "Mcp-Session-Id": sid }), 400,
    (r) => assert.equal(JSON.parse(r.body).error.code, -32600)],
  ["batch at 2025-11-25 (400, -32600)", async (sid) => post(`[${ping}]`, { "Mcp-Session-Id": sid }), 400,
    (r) => assert.equal(JSON.parse(r.body).error.code, -32600)],
  ["legacy POST without sessionId (400)", () => request("POST", "/messages", { "Content-Type": "application/json" }, ping), 400],
  ["legacy POST with an unknown sessionId (404)", () => request("POST", "/messages?sessionId=abc", { "Content-Type": "application/json" }, ping), 404],
  ["WebSocket upgrade with version 8 (426)", () => request("GET", "/ws", {
    Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "8" }), 426,
    (r) => assert.equal(r.headers["sec-websocket-version"], "13")],
  ["WebSocket upgrade without a key (400)", () => request("GET", "/ws", {
    Upgrade: "websocket", Connection: "Upgrade", "Sec-WebSocket-Version": "13" }), 400],
  ["plain GET on the WebSocket path (426)", () => request("GET", "/ws"), 426],
];

for (const [name, make, status, check] of CASES) {
  test(name, async () => {
    const sid = make.length > 0 ? await newSession(port) : undefined;
    const r = await once(port, await make(sid));
    assert.equal(r.status, status, `${name}: body ${r.body}`);
    if (check) check(r);
    await stillServing();
  });
}

test("a second GET stream of a session is refused (409)", async () => {
  const sid = await newSession(port);
  const first = await connectRaw(port);
  await first.write(request("GET", "/mcp", { Accept: "text/event-stream", "Mcp-Session-Id": sid }));
  await first.until(({ buf }) => buf.includes("\r\n\r\n"));
  assert.match(first.buffer.toString(), /^HTTP\/1\.1 200 OK/);
  const second = await once(port, request("GET", "/mcp", { Accept: "text/event-stream", "Mcp-Session-Id": sid }));
  assert.equal(second.status, 409);
  first.end();
  await stillServing();
});

/// The slow-client rows: `fn(s)` against a server whose head and body timeouts are TIMEOUT_MS
/// (Linux: one of its own; a board: the table's), then that server still serves.
async function slowServer(fn) {
  const run = async (s) => {
    await serverIdle(s);
    await fn(s);
    await stillServing({ s });
  };
  if (ON_BOARD) await run(server);
  else await ownServer(["--timeout-ms", String(TIMEOUT_MS)], run);
}

test("slow client: a head that does not finish in time gets 408 and the connection ends", async () => {
  await slowServer(async (s) => {
    const before_ = await httpStats(s.port);
    // From before the connection begins: the server's deadline runs from its accept, which is later.
    const t0 = performance.now();
    const c = await connectRaw(s.port);
    await c.write("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n");
    await c.until(({ closed }) => closed, LIVENESS_MS);
    const ms = performance.now() - t0;
    assert.match(c.buffer.toString(), /^HTTP\/1\.1 408 [\s\S]*request head too slow/);
    // (-1: the server's clock counts whole milliseconds.)
    assert.ok(ms >= TIMEOUT_MS - 1, `closed ${ms.toFixed(0)} ms after the connection began: before the head timeout (${TIMEOUT_MS} ms)`);
    assert.deepEqual(moved(before_, await httpStats(s.port)), { timeout_head: 1 }, "ended by the head timeout, and by nothing else");
  });
});

test("slow client: a body that stalls gets 408", async () => {
  await slowServer(async (s) => {
    const before_ = await httpStats(s.port);
    const c = await connectRaw(s.port);
    // From before the bytes go: the pause the server measures begins when they arrive.
    const t0 = performance.now();
    await c.write(post(INIT, { "Content-Length": "500" }));  // fewer bytes than announced
    await c.until(({ closed }) => closed, LIVENESS_MS);
    const ms = performance.now() - t0;
    assert.match(c.buffer.toString(), /^HTTP\/1\.1 408 [\s\S]*body too slow/);
    assert.ok(ms >= TIMEOUT_MS - 1, `closed ${ms.toFixed(0)} ms after the body paused: before the body timeout (${TIMEOUT_MS} ms)`);
    assert.deepEqual(moved(before_, await httpStats(s.port)), { timeout_body: 1 }, "ended by the body timeout, and by nothing else");
  });
});

test("abrupt close in the middle of a body", async () => {
  for (let i = 0; i < 20; ++i) {
    const c = await connectRaw(port);
    await c.write(post(INIT).subarray(0, 150 + i));
    c.end();
  }
  await stillServing({ afterBurst: true });  // 20 connections: more than a board has slots
});

test("Expect: 100-continue gets 100 then the answer", async () => {
  const c = await connectRaw(port);
  await c.write(request("POST", "/mcp", { ...POST_HEADERS, Expect: "100-continue", "Content-Length": Buffer.byteLength(INIT) }));
  await c.until(({ buf }) => buf.includes("100 Continue"));
  await c.write(INIT);
  const rs = await c.responses(2);
  assert.deepEqual(rs.map((r) => r.status), [100, 200]);
  c.end();
});

test("keep-alive: pipelined requests are answered in order on one connection", async () => {
  const sid = await newSession(port);
  const c = await connectRaw(port);
  const reqs = [1, 2, 3].map((id) => post(JSON.stringify({ jsonrpc: "2.0", id, method: "ping" }), { "Mcp-Session-Id": sid }));
  await c.write(Buffer.concat(reqs));
  const rs = await c.responses(3);
  assert.deepEqual(rs.map((r) => JSON.parse(r.body).id), [1, 2, 3]);
  c.end();
});

test("HTTP/1.0: the answer ends with the connection", async () => {
  const body = INIT;
  const c = await connectRaw(port);
  await c.write(`POST /mcp HTTP/1.0\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${body.length}\r\n\r\n${body}`);
  await c.until(({ closed }) => closed);
  assert.match(c.buffer.toString(), /^HTTP\/1\.1 200 OK[\s\S]*Connection: close[\s\S]*"protocolVersion"/);
});

// ---- every connection slot taken (docs/http.md "Under attack: fair slots") ----------------------
// A newcomer takes the slot of (1) a request still arriving reclaim_grace_ms after it began (the
// first one: after the accept), which is answered 408, (2) a connection idle between requests,
// (3) when its peer holds fewer than its share, one of a peer over its share; only when none of
// these exists is it refused: 503 with Retry-After: 1. Here every connection is the test's, one
// peer (127.0.0.1), which holds every slot: (3) never applies.
//   Linux: each row says which status each connection gets, and the server's counters must
//   agree; where the grace decides, the row runs on a server of its own whose grace no load can
//   reach (`--reclaim-grace-ms 600000`, and `--timeout-ms 600000`: nothing times out meanwhile).
//   Board (the image's 1 s grace and 10 s timeouts, QEMU beside other tests): the newcomer may
//   reach the board more than the grace after the others began (one of them is taken: 408), or
//   overtake one still on its way through QEMU's user network (that one is refused: 503); the
//   client then sees exactly one refusal, the newcomer's or one other connection's.

/// Linux: runs `fn(s)` against an emcp-sensors of its own started with `args` (--http options),
/// then stops it (it must end cleanly).
async function ownServer(args, fn) {
  const s = await startNetworkServer(SERVER, ["--simulate"], args);
  try {
    return await fn(s);
  } finally {
    await stopNetworkServer(s);
  }
}
const YOUNG_FOREVER = ["--timeout-ms", "600000", "--reclaim-grace-ms", "600000"];

/// Waits until one connection of `conns` has closed (LIVENESS_MS at most); returns the closed ones.
async function firstClosed(conns) {
  await Promise.any(conns.map((c) => c.until(({ closed }) => closed, LIVENESS_MS))).catch(() => {});
  return conns.filter((c) => c.closed);
}

/// Board: when the newcomer was served, the one connection of `conns` that was refused or gave
/// way for it (waits for it to close; fails unless exactly one did, with 408 or 503).
async function theOneThatGaveWay(conns) {
  await firstClosed(conns);
  const gaveWay = answeredWith(conns, 408, 503);
  assert.equal(gaveWay.length, 1, `served only if exactly one other connection was refused or gave way: ${conns.map((c) => JSON.stringify(c.buffer.toString("latin1").slice(0, 12))).join(" ")}`);
  assert.equal(conns.filter((c) => c.closed).length, 1, "and only that one closed");
  return gaveWay[0];
}

test("more connections than slots: the extra ones get 503, the rest keep working", async () => {
  // Every slot holds a request whose head is in and whose body has not come yet: not idle.
  // Linux: it stays young (its own server), so none may be taken: 503, then each held request
  // is finished and answered 200; the server counts one refusal and nothing else.
  const run = async (p) => {
    const before_ = ON_BOARD ? null : await httpStats(p);
    const head = request("POST", "/mcp", { ...POST_HEADERS, "Content-Length": Buffer.byteLength(INIT) });
    const held = [];
    for (let i = 0; i < SLOTS; ++i) {
      const c = await connectRaw(p);
      await c.write(head);
      held.push(c);
    }
    const extra = await connectRaw(p);
    await extra.write(post(INIT));
    const [r] = await extra.responses(1, LIVENESS_MS);
    extra.end();
    let live = held;
    if (!ON_BOARD || r?.status !== 200) {
      assert.equal(r?.status, 503, `the newcomer is refused: ${extra.buffer.toString("latin1").slice(0, 80)}`);
      assert.equal(r.headers["retry-after"], "1", "and told when to come back");
    } else {
      const gave = await theOneThatGaveWay(held);
      live = held.filter((c) => c !== gave);
    }
    // The held requests finish and are answered.
    for (const c of live) await c.write(INIT);
    for (const c of live) {
      const [a] = await c.responses(1, LIVENESS_MS);
      assert.equal(a?.status, 200, "a held request is served");
    }
    for (const c of held) c.end();
    if (!ON_BOARD) assert.deepEqual(moved(before_, await httpStats(p)), { refused_busy: 1 }, "one refusal, no reclaim, no timeout");
  };
  if (ON_BOARD) await run(port);
  else await ownServer(YOUNG_FOREVER, async (s) => { await run(s.port); await serverIdle(s); });
  await stillServing();
});

test("slots all taken by keep-alive connections idle between requests: the longest idle one makes room", async () => {
  // Deterministic everywhere: an idle connection may always be taken, the one idle longest
  // first (step 2), and it is closed without an answer (it asked nothing).
  await serverIdle();
  const before_ = await httpStats();
  const idle = [];
  try {
    for (let i = 0; i < SLOTS; ++i) {
      const c = await connectRaw(port);
      await c.write(request("GET", "/nope"));
      assert.equal((await c.responses(1))[0].status, 404);
      idle.push(c);
    }
    const r = await once(port, post(INIT));
    assert.equal(r.status, 200, "the newcomer is served at once");
    const closed = await firstClosed(idle);
    assert.deepEqual(closed.map((c) => idle.indexOf(c)), [0], "the one idle the longest, and only it, was closed");
    assert.equal(idle[0].buffer.toString("latin1").match(/HTTP\/1\.1 /g).length, 1, "closed without another answer");
    if (!ON_BOARD) assert.deepEqual(moved(before_, await httpStats()), { reclaimed_idle: 1 }, "counted as an idle connection that gave way");
  } finally {
    for (const c of idle) c.end();
  }
  await stillServing();
});

test("slots all taken by silent connections: 503 within the reclaim grace, then the oldest gives way", async () => {
  // A connection that has not sent its head keeps its slot for reclaim_grace_ms after its
  // accept; then it is slow, and the oldest gives way with 408.
  // Linux, in two parts: (a) on a server whose grace no load reaches, the newcomer is refused:
  // 503, whenever it comes; (b) on one with the default 1 s grace (and no head timeout within
  // the row), a newcomer that follows Retry-After is served once the grace has passed, at the
  // price of the oldest silent connection (408) and of no other; every answer before is 503 with
  // Retry-After: 1, and it is served no sooner than the grace after the silent ones began.
  const fill = async (p) => {
    const silent = [];
    for (let i = 0; i < SLOTS; ++i) silent.push(await connectRaw(p));
    return silent;
  };
  if (!ON_BOARD) {
    await ownServer(YOUNG_FOREVER, async (s) => {
      const before_ = await httpStats(s.port);
      const silent = await fill(s.port);
      const early = await once(s.port, post(INIT), LIVENESS_MS);
      assert.equal(early.status, 503, "every slot is younger than the grace");
      assert.equal(early.headers["retry-after"], "1");
      assert.ok(silent.every((c) => !c.closed && c.buffer.length === 0), "no silent connection was touched");
      for (const c of silent) c.end();
      await serverIdle(s);
      assert.deepEqual(moved(before_, await httpStats(s.port)), { refused_busy: 1 });
    });
    await ownServer(["--timeout-ms", "600000"], async (s) => {
      const before_ = await httpStats(s.port);
      const t0 = performance.now();  // before the first silent connection: its accept comes later
      const silent = await fill(s.port);
      await new Promise((r) => setTimeout(r, 1000));  // reclaim_grace_ms (the default)
      const statuses = [];
      let r;
      for (;;) {
        r = await once(s.port, post(INIT), LIVENESS_MS);
        statuses.push(r.status);
        if (r.status !== 503) break;
        assert.equal(r.headers["retry-after"], "1", "a refusal says when to come back");
        assert.ok(performance.now() - t0 < LIVENESS_MS * 4, `served after the grace: ${statuses}`);
        await new Promise((resolve) => setTimeout(resolve, 1000));
      }
      const servedMs = performance.now() - t0;
      assert.equal(r.status, 200, `the newcomer is served once the silent ones are beyond the grace: ${statuses}`);
      assert.ok(servedMs >= 1000 - 1, `not before the grace: ${servedMs.toFixed(0)} ms`);
      const closed = await firstClosed(silent);
      assert.deepEqual(closed.map((c) => silent.indexOf(c)), [0], "the oldest silent one, and only it, gave way");
      assert.match(silent[0].buffer.toString(), /^HTTP\/1\.1 408 [\s\S]*too slow while others wait/, "the oldest silent one was told why");
      for (const c of silent) c.end();
      await serverIdle(s);
      const want = statuses.length > 1 ? { refused_busy: statuses.length - 1, reclaimed_slow: 1 } : { reclaimed_slow: 1 };
      assert.deepEqual(moved(before_, await httpStats(s.port)), want, `the refusals and the one reclaim (tries: ${statuses})`);
    });
    await stillServing();
    return;
  }
  // Board: the same, with the outcomes above.
  const silent = await fill(port);
  try {
    const early = await once(port, post(INIT), LIVENESS_MS);
    let gave = null;
    if (early.status === 200) {
      gave = await theOneThatGaveWay(silent);
    } else {
      assert.equal(early.status, 503, "every slot is younger than the grace");
      assert.equal(early.headers["retry-after"], "1");
    }
    // Beyond the grace, a newcomer that follows Retry-After is served, and a silent one gives way.
    const open = silent.filter((c) => c !== gave);
    let r;
    for (let k = 0; k < 10; ++k) {
      r = await once(port, post(INIT), LIVENESS_MS);
      if (r.status !== 503) break;
      assert.equal(r.headers["retry-after"], "1");
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
    assert.equal(r.status, 200, "the newcomer is served once the silent ones are beyond the grace");
    if (gave === null) {  // (otherwise the first newcomer's slot, free again, was taken)
      await open[0].until(({ closed }) => closed, LIVENESS_MS);
      assert.match(open[0].buffer.toString(), /^HTTP\/1\.1 408 /, "the oldest silent one was told why");
    }
  } finally {
    for (const c of silent) c.end();
  }
  await stillServing({ afterBurst: true });
});

// ---- MCP 2026-07-28 (stateless) ----------------------------------------------------------------
// Expected from the spec pages (2026-07-28/): basic/transports/streamable-http.mdx ("Protocol
// Version Header", "Standard Request Headers", "Server Validation": a required header missing,
// different from the body or holding invalid characters is 400 with -32020; an unknown method
// 404 with -32601; GET and DELETE SHOULD be 405; an Mcp-Session-Id is ignored), basic/index.mdx
// (a required _meta field missing: -32602 and 400; a capability needed and not declared -32021
// and 400), basic/versioning.mdx (-32022 with data.supported and data.requested, 400),
// basic/patterns/mrtr.mdx (requestState attacker-controlled: refused when it fails
// verification; malformed inputResponses a JSON-RPC error: -32602 as docs/mcp.md says), and
// the official schema for every JSON-RPC body. Where the spec gives no status (a feature's
// error), the one docs/http.md documents: 200; a message beyond the arena: 400 with -32600
// "message too large for the arena" (docs/json.md); one listen more than EMCP_MAX_LISTENS:
// -32603 (docs/mcp.md).

const MODERN = "2026-07-28";
const PV = "io.modelcontextprotocol/protocolVersion";
const CC = "io.modelcontextprotocol/clientCapabilities";
const META = { [PV]: MODERN, [CC]: { elicitation: {}, sampling: {} } };
const NAME_OF = { "tools/call": "name", "prompts/get": "name", "resources/read": "uri" };

/// A 2026-07-28 POST: the headers a conforming client sends for `body` (MCP-Protocol-Version,
/// Mcp-Method, Mcp-Name), then `headers` over them (null leaves one out).
function mpost(body, headers = {}) {
  const h = { ...POST_HEADERS, "MCP-Protocol-Version": MODERN };
  if (body && typeof body === "object" && !Array.isArray(body)) {
    if (typeof body.method === "string") h["Mcp-Method"] = body.method;
    const name = body.params?.[NAME_OF[body.method]];
    if (typeof name === "string") h["Mcp-Name"] = name;
  }
  return request("POST", "/mcp", { ...h, ...headers }, typeof body === "string" ? body : JSON.stringify(body));
}
/// A 2026-07-28 request body (`_meta` = META unless given; null leaves it out).
const mreq = (id, method, params = {}, meta = META) =>
  ({ jsonrpc: "2.0", id, method, params: meta === null ? params : { ...params, _meta: meta } });
const readLoad = (id, extra = {}, meta = META) => mreq(id, "tools/call", { name: "read_sensor", arguments: { sensor: "load" }, ...extra }, meta);
const randomState = Buffer.from("a state this server never wrote, 48 bytes long..").toString("base64url");
/// Checks an HTTP answer against [status, want]: want is { id, code, message?, data? } for a
/// JSON-RPC error body, { result: true } for a result, or null for no body.
function expectHttp(name, r, status, want, method) {
  assert.equal(r.status, status, `${name}: status (body ${r.body})`);
  if (want === null) return assert.equal(r.body.length, 0, `${name}: no body`);
  assert.match(r.headers["content-type"] ?? "", /^application\/json/, name);
  const answer = JSON.parse(r.body);
  assert.deepEqual(check(MODERN, answer, method), [], name);
  if (want.result) return assert.equal(answer.result?.resultType, "complete", `${name}: ${r.body}`);
  if (want.id === null) assert.equal("id" in answer, false, `${name}: no id (${r.body})`);
  else assert.equal(answer.id, want.id, `${name}: id (${r.body})`);
  assert.equal(answer.error?.code, want.code, `${name}: code (${r.body})`);
  if (want.message) assert.match(answer.error.message, want.message, name);
  if (want.code === -32022) {
    assert.ok(answer.error.data?.supported?.includes(MODERN), `${name}: data.supported (${r.body})`);
    assert.equal(answer.error.data.requested, want.data.requested, `${name}: data.requested`);
  } else if (want.data) {
    assert.deepEqual(answer.error.data, want.data, `${name}: data`);
  }
  assert.equal(r.headers["mcp-session-id"], undefined, `${name}: no session id at 2026-07-28`);
}

/// The server still serves the modern era: a tools/call with its headers validated (on
/// emcp-sensors read_sensor, else emcp-everything's test_simple_text), at the first try (on
/// Linux once the server holds no connection: serverIdle). `afterBurst` on a board: as
/// stillServing's (503 asked again, 20 times at most).
async function stillServingModern(p = port, { afterBurst = false, s = server, keep = 0 } = {}) {
  if (p === port) await serverIdle(server, keep);
  else if (s !== server) await serverIdle(s, keep);
  const body = p === port ? readLoad("still") : mreq("still", "tools/call", { name: "test_simple_text", arguments: {} });
  let r = await once(p, mpost(body));
  for (let i = 0; ON_BOARD && afterBurst && i < 20 && r.status === 503 && /^\d+$/.test(r.headers["retry-after"] ?? ""); ++i) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    r = await once(p, mpost(body));
  }
  expectHttp("a 2026-07-28 tools/call afterwards", r, 200, { result: true }, "tools/call");
}

// [name, () => bytes, status, expected body (see expectHttp), method of the request, { todo }]
const MODERN_CASES = [
  // Headers against the body: -32020, 400.
  ["Mcp-Method different from the body's method", () => mpost(readLoad("h1"), { "Mcp-Method": "tools/list" }), 400, { id: "h1", code: -32020 }],
  ["Mcp-Method missing", () => mpost(mreq("h2", "tools/list"), { "Mcp-Method": null }), 400, { id: "h2", code: -32020 }],
  ["Mcp-Method in another case (values are case-sensitive)", () => mpost(readLoad("h3"), { "Mcp-Method": "Tools/Call" }), 400, { id: "h3", code: -32020 }],
  ["Mcp-Method for a notification's method on a request", () => mpost(mreq("h4", "tools/list"), { "Mcp-Method": "notifications/cancelled" }), 400, { id: "h4", code: -32020 }],
  ["Mcp-Name different from params.name (tools/call)", () => mpost(readLoad("h5"), { "Mcp-Name": "set_relay" }), 400, { id: "h5", code: -32020 }],
  ["Mcp-Name missing (tools/call)", () => mpost(readLoad("h6"), { "Mcp-Name": null }), 400, { id: "h6", code: -32020 }],
  ["Mcp-Name different from params.uri (resources/read)", () => mpost(mreq("h7", "resources/read", { uri: "sensor://load" }), { "Mcp-Name": "device://relay" }), 400,
    { id: "h7", code: -32020 }],
  ["Mcp-Name missing (resources/read)", () => mpost(mreq("h8", "resources/read", { uri: "sensor://load" }), { "Mcp-Name": null }), 400, { id: "h8", code: -32020 }],
  ["Mcp-Name different from params.name (prompts/get)", () => mpost(mreq("h9", "prompts/get", { name: "diagnose_device" }), { "Mcp-Name": "other" }), 400,
    { id: "h9", code: -32020 }],
  ["Mcp-Name in base64 form naming another tool", () => mpost(readLoad("h10"), { "Mcp-Name": `=?base64?${Buffer.from("set_relay").toString("base64")}?=` }), 400,
    { id: "h10", code: -32020 }],
  ["Mcp-Name in a broken base64 form", () => mpost(readLoad("h11"), { "Mcp-Name": "=?base64?cmVhZF9zZW5zb3I?=" }), 400, { id: "h11", code: -32020 }],
  ["Mcp-Name with bytes beyond ASCII (not in base64 form)", () => mpost(mreq("h12", "tools/call", { name: "réad_sensor", arguments: {} })), 400,
    { id: "h12", code: -32020 }],
  ["Mcp-Name naming a tool while the body names none", () => mpost(mreq("h13", "tools/call", { arguments: { sensor: "load" } }), { "Mcp-Name": "read_sensor" }), 400,
    { id: "h13", code: -32020 }, "tools/call"],
  ["MCP-Protocol-Version 2025-11-25, _meta 2026-07-28", () => mpost(mreq("h14", "tools/list"), { "MCP-Protocol-Version": "2025-11-25" }), 400, { id: "h14", code: -32020 }],
  ["MCP-Protocol-Version 2026-07-28, _meta a revision not served", () => mpost(mreq("h15", "tools/list", {}, { [PV]: "1999-01-01", [CC]: {} })), 400,
    { id: "h15", code: -32020 }],
  ["MCP-Protocol-Version missing, _meta 2026-07-28", () => mpost(mreq("h16", "tools/list"), { "MCP-Protocol-Version": null }), 400, { id: "h16", code: -32020 }],
  ["MCP-Protocol-Version and _meta both a revision not served", () => mpost(mreq("h17", "tools/list", {}, { [PV]: "1999-01-01", [CC]: {} }), { "MCP-Protocol-Version": "1999-01-01" }),
    400, { id: "h17", code: -32022, data: { requested: "1999-01-01" } }],
  // _meta: -32602, 400, before the headers are compared.
  ["_meta without protocolVersion", () => mpost(mreq("h18", "tools/list", {}, { [CC]: {} })), 400, { id: "h18", code: -32602 }],
  ["_meta without clientCapabilities", () => mpost(mreq("h19", "tools/list", {}, { [PV]: MODERN })), 400, { id: "h19", code: -32602 }],
  ["clientCapabilities not an object", () => mpost(mreq("h20", "tools/list", {}, { [PV]: MODERN, [CC]: [] })), 400, { id: "h20", code: -32602 }],
  ["protocolVersion not a string", () => mpost(mreq("h21", "tools/list", {}, { [PV]: 2026, [CC]: {} })), 400, { id: "h21", code: -32602 }],
  ["_meta missing and the headers different too: -32602 first", () => mpost(mreq("h22", "tools/list", {}, { [CC]: {} }), { "Mcp-Method": "tools/call" }), 400,
    { id: "h22", code: -32602 }],
  ["server/discover without _meta", () => mpost(mreq("h23", "server/discover", {}, null)), 400, { id: "h23", code: -32602 }],
  ["2026-07-28 headers, a body without _meta", () => mpost(mreq("h24", "tools/list", {}, null)), 400, { id: "h24", code: -32602 }, "tools/list"],
  // Methods the revision does not have: 404 with -32601.
  ["initialize at 2026-07-28", () => mpost(mreq("h25", "initialize", { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: "x", version: "1" } })), 404,
    { id: "h25", code: -32601 }],
  ["ping at 2026-07-28", () => mpost(mreq("h26", "ping")), 404, { id: "h26", code: -32601 }],
  ["logging/setLevel at 2026-07-28", () => mpost(mreq("h27", "logging/setLevel", { level: "debug" })), 404, { id: "h27", code: -32601 }],
  ["resources/subscribe at 2026-07-28", () => mpost(mreq("h28", "resources/subscribe", { uri: "sensor://load" })), 404, { id: "h28", code: -32601 }],
  ["an unknown method at 2026-07-28", () => mpost(mreq("h29", "tools/frobnicate")), 404, { id: "h29", code: -32601 }],
  // One message per POST, requests and notifications only.
  ["a batch at 2026-07-28", () => mpost([mreq("h30", "tools/list")], { "Mcp-Method": "tools/list" }), 400, { id: null, code: -32600 }],
  ["a response at 2026-07-28", () => mpost({ jsonrpc: "2.0", id: "h31", result: {} }, { "Mcp-Method": "tools/list" }), 400, { id: null, code: -32600 }],
  ["a body that is not JSON at 2026-07-28", () => mpost("{not json", { "Mcp-Method": "tools/list" }), 400, { id: null, code: -32700 }],
  ["a notification at 2026-07-28: 202, no body", () => mpost({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: 1, _meta: META } }), 202, null],
  // The legacy transport's pieces are not part of 2026-07-28.
  ["an Mcp-Session-Id of no session is ignored", () => mpost(readLoad("h32"), { "Mcp-Session-Id": "00000000000000000000000000000000" }), 200, { result: true }, "tools/call"],
  ["GET at 2026-07-28 (405)", () => request("GET", "/mcp", { Accept: "text/event-stream", "MCP-Protocol-Version": MODERN }), 405, undefined],
  ["DELETE at 2026-07-28 (405)", () => request("DELETE", "/mcp", { "MCP-Protocol-Version": MODERN }), 405, undefined],
  // requestState and inputResponses the server never wrote: -32602; beyond the arena: -32600.
  ["requestState: random base64url", () => mpost(readLoad("h33", { requestState: randomState })), 200, { id: "h33", code: -32602, message: /requestState/ }, "tools/call"],
  ["requestState: not a string", () => mpost(readLoad("h34", { requestState: 1 })), 200, { id: "h34", code: -32602, message: /requestState/ }, "tools/call"],
  ["requestState: 300 characters", () => mpost(readLoad("h35", { requestState: "A".repeat(300) })), 200, { id: "h35", code: -32602, message: /requestState/ }, "tools/call"],
  ["requestState on resources/read", () => mpost(mreq("h36", "resources/read", { uri: "sensor://load", requestState: randomState })), 200,
    { id: "h36", code: -32602, message: /requestState/ }, "resources/read"],
  ["inputResponses: an array", () => mpost(readLoad("h37", { inputResponses: [] })), 200, { id: "h37", code: -32602, message: /inputResponses/ }, "tools/call"],
  ["inputResponses: null", () => mpost(readLoad("h38", { inputResponses: null })), 200, { id: "h38", code: -32602, message: /inputResponses/ }, "tools/call"],
  ["inputResponses beyond the arena", () => mpost(readLoad("h39", { inputResponses: { a: { action: "accept", content: { text: "x".repeat(6000) } } } })), 400,
    { id: "h39", code: -32600, message: /too large for the arena/ }],
];

for (const [name, make, status, want, method, opts] of MODERN_CASES) {
  test(`2026-07-28: ${name}`, { todo: opts?.todo }, async () => {
    const r = await once(port, make());
    if (want === undefined) {
      assert.equal(r.status, status, `${name}: body ${r.body}`);
      assert.match(r.headers.allow ?? "", /POST/, `${name}: Allow`);
    } else {
      expectHttp(name, r, status, want, method);
    }
    await stillServingModern();
  });
}

test("2026-07-28: a listen flood: one more than EMCP_MAX_LISTENS is -32603, closing a listen frees its slot", async () => {
  const listen = (id) => mpost(mreq(id, "subscriptions/listen", { notifications: { toolsListChanged: true } }));
  const open = [];
  /// A listen on its own connection: its acknowledgement (the stream stays open), or a refusal.
  const tryListen = async (id) => {
    const c = await connectRaw(port);
    await c.write(listen(id));
    await c.until(({ buf, closed }) => closed || buf.includes("acknowledged") || /\r\n\r\n\{/.test(buf.toString("latin1")), ON_BOARD ? 20000 : 10000);
    const text = c.buffer.toString();
    if (text.includes("notifications/subscriptions/acknowledged")) {
      assert.match(text, /^HTTP\/1\.1 200 [\s\S]*Content-Type: text\/event-stream/, id);
      const data = JSON.parse(/^data: (.*)$/m.exec(text)[1]);
      assert.equal(data.params._meta["io.modelcontextprotocol/subscriptionId"], id);
      assert.deepEqual(check(MODERN, data), [], id);
      open.push(c);
      return null;
    }
    const [r] = await c.responses(1);
    c.end();
    return r;
  };
  let refused;
  for (let i = 1; i <= 9 && !refused; ++i) refused = await tryListen(`L${i}`);
  assert.ok(refused, "a listen is refused at last");
  expectHttp("the listen beyond the limit", refused, 200, { id: `L${open.length + 1}`, code: -32603, message: /EMCP_MAX_LISTENS/ }, "subscriptions/listen");
  const limit = Number(/keeps (\d+) open/.exec(JSON.parse(refused.body).error.message)?.[1]);
  assert.equal(open.length, limit, "as many listens as the server says it keeps");
  if (!ON_BOARD) assert.equal(limit, 4, "EMCP_MAX_LISTENS defaults to 4");
  for (let i = 0; i < 3; ++i) expectHttp(`flood ${i}`, await tryListen(`X${i}`), 200, { id: `X${i}`, code: -32603 }, "subscriptions/listen");
  await stillServingModern(port, { keep: open.length });
  // Closing listens (the client closes the stream) frees their slots, once the server has read
  // the hang-up. Linux: once its sockets show it did (only the other listens still open), each
  // freed slot is taken again at the first try. Board: asked again until then (each refusal
  // -32603), 30 times at most, 100 ms apart.
  const closing = open.splice(0, Math.min(2, open.length));
  for (const c of closing) c.end();
  await serverIdle(server, open.length);
  for (let i = 0; i < closing.length; ++i) {
    let r;
    for (let attempt = 0; attempt < (ON_BOARD ? 30 : 1) && (r = await tryListen(`N${i}`)) !== null; ++attempt) {
      expectHttp("a listen while the freed slots are not yet seen", r, 200, { id: `N${i}`, code: -32603 }, "subscriptions/listen");
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    assert.equal(r, null, `a slot freed by closing a listen is taken again (N${i})`);
  }
  expectHttp("full again", await tryListen("N-extra"), 200, { id: "N-extra", code: -32603 }, "subscriptions/listen");
  for (const c of open) c.end();
  await new Promise((resolve) => setTimeout(resolve, 150));
  await stillServingModern(port, { afterBurst: true });
  await stillServing({ afterBurst: true });
});

// ---- 2026-07-28 with emcp-everything: real input rounds, Mcp-Param-* headers ----------------------

const STATE_TOOL = "test_input_required_result_request_state";  // keeps "step-1" in its state
const CONFIRMED = { confirm: { action: "accept", content: { confirm: true } } };
const retry = (id, state, extra = {}) =>
  mreq(id, "tools/call", { name: STATE_TOOL, arguments: {}, inputResponses: CONFIRMED, requestState: state, ...extra });
const flipped = (state, at, bit = 0x01) => {
  const raw = Buffer.from(state, "base64url");
  raw[at < 0 ? raw.length + at : at] ^= bit;
  return raw.toString("base64url");
};
async function realState(p, id) {
  const r = await once(p, mpost(mreq(id, "tools/call", { name: STATE_TOOL, arguments: {} })));
  assert.equal(r.status, 200, `${r.body}`);
  const answer = JSON.parse(r.body);
  assert.deepEqual(check(MODERN, answer, "tools/call"), []);
  assert.equal(answer.result?.resultType, "input_required", `${r.body}`);
  return answer.result.requestState;
}
const custom = (id, args) => mreq(id, "tools/call", { name: "test_custom_header", arguments: args });

// [name, (S, port) => bytes, status, expected body, method, { todo }]; S a real state.
const EVERYTHING_CASES = [
  ["a real state, one byte flipped", (S) => mpost(retry("e1", flipped(S, 9))), 200, { id: "e1", code: -32602, message: /requestState/ }, "tools/call"],
  ["a real state, its last byte flipped", (S) => mpost(retry("e2", flipped(S, -1, 0x80))), 200, { id: "e2", code: -32602, message: /requestState/ }, "tools/call"],
  ["a real state cut short", (S) => mpost(retry("e3", S.slice(0, -2))), 200, { id: "e3", code: -32602, message: /requestState/ }, "tools/call"],
  ["a real state replayed for another tool", (S) => mpost(mreq("e4", "tools/call", { name: "test_input_required_result_elicitation", arguments: {}, requestState: S })),
    200, { id: "e4", code: -32602, message: /requestState/ }, "tools/call"],
  ["a real state replayed on prompts/get", (S) => mpost(mreq("e5", "prompts/get", { name: "test_input_required_result_prompt", requestState: S })),
    200, { id: "e5", code: -32602, message: /requestState/ }, "prompts/get"],
  ["a real state with inputResponses not an object", (S) => mpost(retry("e6", S, { inputResponses: "accept" })), 200,
    { id: "e6", code: -32602, message: /inputResponses/ }, "tools/call"],
  ["a real state, headers naming another tool", (S) => mpost(retry("e7", S), { "Mcp-Name": "test_input_required_result_elicitation" }), 400,
    { id: "e7", code: -32020 }],
  ["a needed capability not declared (-32021, 400)", () => mpost(mreq("e8", "tools/call", { name: "test_missing_capability", arguments: {} }, { [PV]: MODERN, [CC]: {} })),
    400, { id: "e8", code: -32021, data: { requiredCapabilities: { sampling: {} } } }],
  // Mcp-Param-* (x-mcp-header) against the arguments.
  ["Mcp-Param-Region different from the argument", () => mpost(custom("e9", { region: "eu" }), { "Mcp-Param-Region": "us" }), 400, { id: "e9", code: -32020 }],
  ["Mcp-Param-Region missing while the argument is there", () => mpost(custom("e10", { region: "eu" })), 400, { id: "e10", code: -32020 }],
  ["Mcp-Param-Dry-Run without the argument", () => mpost(custom("e11", { region: "eu" }), { "Mcp-Param-Region": "eu", "Mcp-Param-Dry-Run": "true" }), 400,
    { id: "e11", code: -32020 }],
  ["Mcp-Param-Dry-Run false for true", () => mpost(custom("e12", { region: "eu", dry_run: true }), { "Mcp-Param-Region": "eu", "Mcp-Param-Dry-Run": "false" }), 400,
    { id: "e12", code: -32020 }],
  ["Mcp-Param-Priority another number", () => mpost(custom("e13", { region: "eu", priority: 8 }), { "Mcp-Param-Region": "eu", "Mcp-Param-Priority": "7" }), 400,
    { id: "e13", code: -32020 }],
  ["Mcp-Param-Priority a fraction for an integer", () => mpost(custom("e14", { region: "eu", priority: 7 }), { "Mcp-Param-Region": "eu", "Mcp-Param-Priority": "7.5" }), 400,
    { id: "e14", code: -32020 }],
  ["Mcp-Param-Priority for a null argument", () => mpost(custom("e15", { region: "eu", priority: null }), { "Mcp-Param-Region": "eu", "Mcp-Param-Priority": "7" }), 400,
    { id: "e15", code: -32020 }],
  ["Mcp-Param-Region in base64 form of another value", () => mpost(custom("e16", { region: "eu" }), { "Mcp-Param-Region": `=?base64?${Buffer.from("us").toString("base64")}?=` }),
    400, { id: "e16", code: -32020 }],
  ["Mcp-Param-Region with bytes beyond ASCII", () => mpost(custom("e17", { region: "é" }), { "Mcp-Param-Region": "é" }), 400, { id: "e17", code: -32020 }],
];

test("2026-07-28 with emcp-everything: forged and replayed requestStates, Mcp-Param-* headers, a state of another server process",
  { skip: EVERYTHING === null && "emcp-everything runs on Linux only (the board's image is the sensors one)" }, async (t) => {
    const a = await startNetworkServer(EVERYTHING, [], []);
    let S;
    try {
      S = await realState(a.port, "first");
      for (const [name, make, status, want, method, opts] of EVERYTHING_CASES) {
        await t.test(name, { todo: opts?.todo }, async () => {
          expectHttp(name, await once(a.port, make(S)), status, want, method);
          await stillServingModern(a.port, { s: a });
        });
      }
      // Positive controls: the real state, and Mcp-Param-* headers as a client writes them.
      expectHttp("the real state", await once(a.port, mpost(retry("ok1", S))), 200, { result: true }, "tools/call");
      expectHttp("Mcp-Param-* headers that match", await once(a.port, mpost(custom("ok2", { region: "eu", priority: 7, dry_run: false }),
        { "Mcp-Param-Region": "=?base64?ZXU=?=", "Mcp-Param-Priority": "007", "Mcp-Param-Dry-Run": "false" })), 200, { result: true }, "tools/call");
    } finally {
      await stopNetworkServer(a);
    }
    // The server restarted: a new key; the old state is refused, before it asked and after.
    const b = await startNetworkServer(EVERYTHING, [], []);
    try {
      await t.test("a state of another server process", async () => {
        expectHttp("before it asked", await once(b.port, mpost(retry("b1", S))), 200, { id: "b1", code: -32602, message: /requestState/ }, "tools/call");
        const own = await realState(b.port, "b2");
        expectHttp("after it asked", await once(b.port, mpost(retry("b3", S))), 200, { id: "b3", code: -32602, message: /requestState/ }, "tools/call");
        expectHttp("its own state", await once(b.port, mpost(retry("b4", own))), 200, { result: true }, "tools/call");
        await stillServingModern(b.port, { s: b });
      });
    } finally {
      await stopNetworkServer(b);
    }
  });

// ---- WebSocket ---------------------------------------------------------------------------------

async function wsOpen() {
  const c = await connectRaw(port);
  await c.write(request("GET", "/ws", { Upgrade: "websocket", Connection: "Upgrade",
    "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==", "Sec-WebSocket-Version": "13", "Sec-WebSocket-Protocol": "mcp" }));
  await c.until(({ buf }) => buf.includes("\r\n\r\n"));
  const head = c.buffer.toString("latin1");
  assert.match(head, /^HTTP\/1\.1 101 /);
  assert.match(head, /Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK\+xOo=/);  // RFC 6455's example
  assert.match(head, /Sec-WebSocket-Protocol: mcp/);
  return { c, at: c.buffer.indexOf("\r\n\r\n") + 4 };
}

function frame(opcode, payload, { mask = true, fin = true, rsv = 0, length } = {}) {
  const p = Buffer.from(payload);
  const n = length ?? p.length;
  const parts = [Buffer.from([(fin ? 0x80 : 0) | rsv | opcode])];
  if (n < 126) parts.push(Buffer.from([(mask ? 0x80 : 0) | n]));
  else if (n < 65536) parts.push(Buffer.from([(mask ? 0x80 : 0) | 126, n >> 8, n & 255]));
  else { const b = Buffer.alloc(9); b[0] = (mask ? 0x80 : 0) | 127; b.writeBigUInt64BE(BigInt(n), 1); parts.push(b); }
  if (mask) {
    const key = Buffer.from([1, 2, 3, 4]);
    parts.push(key, Buffer.from(p.map((x, i) => x ^ key[i & 3])));
  } else {
    parts.push(p);
  }
  return Buffer.concat(parts);
}

async function wsCloseCode(bytes) {
  const { c, at } = await wsOpen();
  await c.write(bytes);
  await c.until(({ closed }) => closed);
  const rest = c.buffer.subarray(at);
  const i = rest.indexOf(0x88);
  assert.ok(i >= 0, `a close frame came back: ${rest.toString("hex")}`);
  return rest.readUInt16BE(i + 2);
}

const WS_CASES = [
  ["unmasked client frame (1002)", () => frame(1, ping, { mask: false }), 1002],
  ["reserved bits set (1002)", () => frame(1, ping, { rsv: 0x40 }), 1002],
  ["unknown opcode (1002)", () => frame(3, "x"), 1002],
  ["fragmented ping (1002)", () => frame(9, "x", { fin: false }), 1002],
  ["continuation without a message (1002)", () => frame(0, "x"), 1002],
  ["binary message (1003)", () => frame(2, "abc"), 1003],
  ["message longer than the limit (1009)", () => frame(1, "", { length: 70000 }), 1009],
  ["invalid UTF-8 in a text message (1007)", () => frame(1, Buffer.from([0x7b, 0xff, 0x7d])), 1007],
  ["UTF-8 character split at the end of a message (1007)", () => frame(1, Buffer.from([0x22, 0xc3])), 1007],
  ["surrogate encoded in UTF-8 (1007)", () => frame(1, Buffer.from([0x22, 0xed, 0xa0, 0x80, 0x22])), 1007],
  ["close with a reserved code (1002)", () => frame(8, Buffer.from([0x03, 0xed])), 1002],
];

for (const [name, make, code] of WS_CASES) {
  test(`WebSocket: ${name}`, async () => {
    assert.equal(await wsCloseCode(make()), code);
    await stillServing();
  });
}

test("WebSocket: ping is answered with pong, a fragmented message works, close is echoed", async () => {
  const { c, at } = await wsOpen();
  await c.write(frame(9, "hi"));
  await c.until(({ buf }) => buf.subarray(at).includes(Buffer.from([0x8a, 0x02, 0x68, 0x69])));
  const initMsg = Buffer.from(INIT);
  await c.write(Buffer.concat([frame(1, initMsg.subarray(0, 20), { fin: false }), frame(9, ""),
    frame(0, initMsg.subarray(20, 60), { fin: false }), frame(0, initMsg.subarray(60))]));
  await c.until(({ buf }) => buf.subarray(at).includes("protocolVersion"));
  await c.write(frame(8, Buffer.from([0x03, 0xe8])));
  await c.until(({ closed }) => closed);
  const rest = c.buffer.subarray(at);
  const i = rest.lastIndexOf(0x88);
  assert.equal(rest.readUInt16BE(i + 2), 1000);
});
