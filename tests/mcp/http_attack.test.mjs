// Attacks on the HTTP engine's connection and session slots (docs/http.md, "Under attack: fair
// slots"), each bounded in time. Each is judged by what a legitimate client gets (served, within
// a bound, every 503/429 with Retry-After) and by the server's own counters (device_stats'
// "http" object), read before and after through a legitimate session; afterwards every slot is
// free but the reading connection and the sessions the test still holds.
//
// Host (default): emcp-sensors (EMCP_SENSORS) --http with 2 s head/body timeouts and 3 s
// keep-alive; the attacker connects from 127.0.0.2, the legitimate client from 127.0.0.3 (the
// server sees two peers). Board (EMCP_RUN_BOARD): the sensors-net firmware in QEMU; every
// client is one peer there (QEMU's user network), so the per-peer scenarios become same-peer
// ones and the per-peer rules are left to the engine's unit tests (HttpFair.*); and every client
// connects from one address there (below: QEMU keeps each client's port).
//
// A legitimate request not served within its bound fails the test with what the server saw:
// device_stats' "network" and "http" objects and the frames QEMU's NIC model dropped (lost()).
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors node --test tests/mcp/http_attack.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startNetworkServer, stopNetworkServer, ON_BOARD } from "./lib/harness.mjs";
import { connectRaw, parseResponses, request, rpcCall, POST_HEADERS } from "./lib/rawhttp.mjs";
import { waitSockets } from "./lib/proc_sockets.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;

// The figures of each mode: the server's (slots, timeouts: HttpOptions and the command line
// below, or the board's image) and the test's own (counts, durations). No assertion is a time
// bound: a deadline is checked from below (a connection ended no sooner than its deadline after
// it began, measured from before it began: load only makes that longer) and by the server's
// counters (which deadline or rule ended it); the bounds on waits (legitMs, settleMs,
// livenessMs) are only how long the test waits for what the server must do, seconds beyond the
// deadlines it depends on.
const MODES = {
  host: {
    slots: 16, sessions: 8,          // emcp-sensors --http
    headMs: 4000, keepaliveMs: 3000, // --timeout-ms, --keepalive-ms (below)
    graceMs: 1000,                   // reclaim_grace_ms (the default)
    firstByteMs: 300,                // a byte-by-byte head's first byte, after its connection
    reconnectMs: 8000,               // scenario 3: attack length after the ramp
    floodCount: 200, floodParallel: 4,
    resets: 50, resetsAtOnce: 5,
    testMs: 90000,
  },
  board: {
    // Its slots: the image's build options (EMCP_IMAGE_CONNECTIONS, EMCP_IMAGE_SESSIONS, given
    // by tests/boards/CMakeLists.txt from examples/sensors/firmware.cmake), not what it says itself.
    slots: Number(process.env.EMCP_IMAGE_CONNECTIONS), sessions: Number(process.env.EMCP_IMAGE_SESSIONS),
    headMs: 10000, keepaliveMs: 5000, // HttpOptions' default; emcp::board::HttpService::keepalive_ms
    graceMs: 1000,
    firstByteMs: 3000,
    reconnectMs: 20000,
    floodCount: 40, floodParallel: 2,
    resets: 20, resetsAtOnce: 2,
    testMs: 180000,
  },
};
const F = { ...MODES[ON_BOARD ? "board" : "host"] };
assert.ok(F.slots > 0 && F.sessions > 0, "on a board, EMCP_IMAGE_CONNECTIONS and EMCP_IMAGE_SESSIONS must be given");
// A legitimate request is served within this (with retries); the slots are free again within
// this after an attack; what must happen at a deadline happens within this of it.
F.legitMs = F.headMs + 5000;
F.settleMs = F.headMs + F.keepaliveMs + 5000;
F.livenessMs = 2 * F.headMs + 5000;

// Two peers on the host (every loopback address is one); one through QEMU's user network, and
// one address there. QEMU's user network (slirp) hands the board each host connection as one
// from 10.0.2.2 with the host's source port kept; the host's kernel keeps ports apart per
// source address only, so clients on two addresses can hold the same port at once and the board
// sees two connections as one (issue 28: a legitimate ping whose port an attacker's connection
// had, never answered: slirp itself gave the board's answer to the other socket). No TCP can
// serve that; from one address, the kernel never gives two open connections one port.
const LEGIT = { localAddress: "127.0.0.3" };
const ATTACKER = ON_BOARD ? LEGIT : { localAddress: "127.0.0.2" };

const COUNTERS = ["refused_busy", "reclaimed_slow", "reclaimed_idle", "displaced", "timeout_head", "timeout_body",
  "timeout_idle", "timeout_send", "session_refused_rate", "session_refused_full", "session_evicted", "session_expired"];
// device_stats' "network" counters of what can cost a client its connection (network images).
const NET_COUNTERS = ["rx_dropped", "rx_overrun", "syn_dropped", "time_wait_reopened", "pbuf_pool_failures",
  "tcp_pcb_failures", "tcp_seg_failures", "heap_failures"];

let server, port;
const sleep = (ms) => new Promise((r) => setTimeout(r, Math.max(0, ms)));

// ---- requests ----------------------------------------------------------------------------------

let nextId = 100;
const initBody = (name) => ({ jsonrpc: "2.0", id: 0, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name, version: "1" } } });
/// A POST to /mcp on a connection of its own (Connection: close).
const post = (body, sid) => request("POST", "/mcp", { ...POST_HEADERS, Connection: "close", ...(sid ? { "Mcp-Session-Id": sid } : {}) },
  typeof body === "string" ? body : JSON.stringify(body));
const ping = (sid) => post({ jsonrpc: "2.0", id: ++nextId, method: "ping" }, sid);

/// The JSON-RPC messages of an answer (JSON or event stream).
function messagesOf(r) {
  const text = r.body.toString();
  if ((r.headers["content-type"] ?? "").startsWith("text/event-stream")) {
    return text.split("\n\n").map((e) => e.split("\n").filter((l) => l.startsWith("data:")).map((l) => l.slice(5).trim()).join(""))
      .filter((d) => d !== "").map((d) => JSON.parse(d));
  }
  return text ? [JSON.parse(text)] : [];
}

/// One request on a fresh connection from `peer`: the response, or null when the connection
/// ended without one (throws when it could not connect or nothing came within `ms`).
async function exchange(bytes, peer, ms) {
  const c = await connectRaw(port, peer);
  try {
    await c.write(bytes);
    const [r] = await c.responses(1, ms);
    return r ?? null;
  } finally {
    c.end();
  }
}

/// The legitimate client: `bytes` on a fresh connection; on 503 or 429 it waits Retry-After
/// seconds (1 when missing: counted) and tries again, on no answer 200 ms, all within
/// `boundMs` (throws beyond). Resolves with the response and what it met on the way:
/// { tries, statuses (per try: a status or "none"), busy (503s), limited (429s),
/// noRetryAfter, dropped, ms, firstTryAt }. `onRefused(response)`: called on each 503/429.
async function serve(bytes, { boundMs = F.legitMs, peer = LEGIT, what = "request", onRefused = null } = {}) {
  const t0 = Date.now();
  const seen = { tries: 0, statuses: [], busy: 0, limited: 0, noRetryAfter: 0, dropped: 0, errors: [], firstTryAt: t0 };
  for (;;) {
    const left = t0 + boundMs - Date.now();
    if (left <= 0) throw new Error(`${what} not served within ${boundMs} ms: ${JSON.stringify(seen)}; ${await lost(what)}`);
    ++seen.tries;
    let r = null;
    try {
      r = await exchange(bytes, peer, left);
    } catch (e) {
      seen.errors.push(e.message.slice(0, 120));
    }
    if (r === null) {
      ++seen.dropped;
      seen.statuses.push("none");
      await sleep(Math.min(200, t0 + boundMs - Date.now()));
      continue;
    }
    seen.statuses.push(r.status);
    if (r.status === 503 || r.status === 429) {
      if (r.status === 503) ++seen.busy; else ++seen.limited;
      const ra = r.headers["retry-after"];
      if (!/^\d+$/.test(ra ?? "")) ++seen.noRetryAfter;
      onRefused?.(r);
      await sleep(Math.min(1000 * (Number(ra) || 1), t0 + boundMs - Date.now()));
      continue;
    }
    return { ...r, ...seen, ms: Date.now() - t0 };
  }
}

/// A Streamable HTTP session of `peer`, opened through serve(): its id.
async function openSession(name, peer = LEGIT, opts = {}) {
  const r = await serve(post(initBody(name)), { peer, what: `initialize (${name})`, ...opts });
  assert.equal(r.status, 200, `initialize (${name}): ${r.body}`);
  const sid = r.headers["mcp-session-id"];
  const n = await serve(post({ jsonrpc: "2.0", method: "notifications/initialized" }, sid), { peer, what: "initialized" });
  assert.equal(n.status, 202, `initialized (${name})`);
  return sid;
}

/// Ends sessions with DELETE from `peer`; resolves with how many were still there (200).
async function endSessions(sids, peer) {
  let live = 0;
  for (const sid of sids) {
    const r = await serve(request("DELETE", "/mcp", { "Mcp-Session-Id": sid, Connection: "close" }), { peer, what: "DELETE" });
    assert.ok(r.status === 200 || r.status === 404, `DELETE: ${r.status}`);
    if (r.status === 200) ++live;
  }
  return live;
}

/// Frames QEMU's NIC model dropped since QEMU started (its receive FIFO full, or the board's
/// receiver not on yet while it boots): it cannot tell the board (the LAN9118's RX_DROP reads 0
/// there), it tells its stderr, one line a frame.
const qemuDroppedFrames = () => (server?.stderr().match(/Failed to send packet/g) ?? []).length;

/// What the server saw, for a request that was lost: device_stats' "network" (lwIP's pools and
/// pcbs per state, frames the NIC and its driver dropped, SYNs without a pcb, TIME_WAIT
/// reopened: examples/sensors/app.cpp) and "http" objects, read once on a fresh connection
/// (never through serve(), which called this), and QEMU's dropped frames; printed and returned.
async function lost(what) {
  let figures;
  try {
    const r = await exchange(post({ jsonrpc: "2.0", id: ++nextId, method: "tools/call", params: { name: "device_stats", arguments: {} } }, reader.sid),
      LEGIT, F.legitMs);
    const st = r === null ? null : messagesOf(r).find((x) => x.id !== undefined)?.result?.structuredContent;
    figures = st ? JSON.stringify({ network: st.network ?? null, http: st.http }) : `device_stats: ${r?.status ?? "no answer"}`;
  } catch (e) {
    figures = `device_stats not read: ${e.message.slice(0, 120)}`;
  }
  const text = `server figures after the loss: ${figures}${ON_BOARD ? `; QEMU's NIC dropped ${qemuDroppedFrames()} frames since it started` : ""}`;
  console.log(`# lost: ${what}: ${text}`);
  return text;
}

// ---- figures -----------------------------------------------------------------------------------

// The legitimate session the figures are read through. On the host it must never be evicted
// (its peer is under its share and it is active); on a board every session is the same peer's,
// and a new one may take its slot (then it is opened again: `reinits`).
const reader = { sid: null, reinits: 0 };

/// device_stats' "http" object, read through the reader's session (its "network" object, on a
/// board, into `network`).
let network = null;
async function figures() {
  for (let k = 0; ; ++k) {
    const r = await serve(post({ jsonrpc: "2.0", id: ++nextId, method: "tools/call", params: { name: "device_stats", arguments: {} } }, reader.sid),
      { what: "device_stats" });
    if (r.status === 404 && k === 0) {
      ++reader.reinits;
      reader.sid = await openSession("reader");
      continue;
    }
    assert.equal(r.status, 200, `device_stats: ${r.status} ${r.body}`);
    const m = messagesOf(r).find((x) => x.id !== undefined);
    const h = m?.result?.structuredContent?.http;
    assert.ok(h, `device_stats reports the http object: ${r.body.toString().slice(0, 300)}`);
    network = m.result.structuredContent.network ?? null;
    if (ON_BOARD) assert.ok(network, "a network image reports the network object");
    return h;
  }
}

/// Reads the figures until only the reading connection holds a connection slot and `sessions`
/// sessions are left (at most F.settleMs after the attack), then asserts exactly that. On Linux
/// the kernel must agree, not only the server: once the reader's connection has ended, the
/// server holds no connection socket at all (/proc: lib/proc_sockets.mjs), one listening.
async function settled(sessions = 1) {
  const end = Date.now() + F.settleMs;
  let h;
  for (;;) {
    h = await figures();
    if ((h.connections_in_use === 1 && h.sessions_in_use === sessions) || Date.now() > end) break;
    await sleep(200);
  }
  assert.equal(h.connections_in_use, 1, `every connection slot free but the reader's: ${JSON.stringify(h)}`);
  assert.equal(h.sessions_in_use, sessions, `every session slot free but the test's ${sessions}: ${JSON.stringify(h)}`);
  if (!ON_BOARD) {
    const k = await waitSockets(server.proc.pid, (x) => x.open.length === 0, F.settleMs);
    assert.equal(k.open.length, 0, `the server's sockets: no connection left once the reader's ended: ${k.summary}`);
    assert.equal(k.listening.length, 1, `one listening socket: ${k.summary}`);
  }
  return h;
}

function delta(a, b) {
  const d = {};
  for (const k of COUNTERS) d[k] = b[k] - a[k];
  return d;
}

/// The network counters that moved from `a` to `b` (device_stats' "network" objects; {} on the
/// host), with the pcbs per state at `b` and the frames QEMU's NIC dropped since `qemuBefore`.
function netDelta(a, b, qemuBefore) {
  if (!a || !b) return {};
  const d = {};
  for (const k of NET_COUNTERS) if (b[k] !== a[k]) d[k] = b[k] - a[k];
  const states = ["closed", "listen", "syn_sent", "syn_rcvd", "established", "fin_wait_1", "fin_wait_2", "close_wait",
    "closing", "last_ack", "time_wait"];
  d.pcbs = Object.fromEntries(b.tcp_states.map((n, i) => [states[i], n]).filter(([, n]) => n !== 0));
  d.qemu_dropped_frames = qemuDroppedFrames() - qemuBefore;
  return d;
}

/// Prints a scenario's figures (the counters that moved, and what the test counted).
function report(name, d, extra = {}) {
  const moved = Object.fromEntries(Object.entries(d).filter(([, v]) => v !== 0));
  console.log(`# ${name}: counters ${JSON.stringify(moved)}; ${JSON.stringify(extra)}`);
}

/// The reader's session survived the scenario (host: it must).
function readerKept() {
  if (!ON_BOARD) assert.equal(reader.reinits, 0, "the legitimate reading session was never evicted");
}

// ---- the attacker ------------------------------------------------------------------------------

/// A raw connection from the attacker, with when it began (before connecting: the server's
/// accept is later), when it was connected, its first byte went and it closed (performance.now()).
async function attackerConn() {
  const startedAt = performance.now();
  const c = await connectRaw(port, ATTACKER);
  c.startedAt = startedAt;
  c.openedAt = performance.now();
  c.closedAt = null;
  c.firstByteAt = null;
  c.sock.once("close", () => { c.closedAt = performance.now(); });
  return c;
}

const status = (c) => /^HTTP\/1\.[01] (\d{3})/.exec(c.buffer.toString("latin1"))?.[1] ?? "none";
/// How an attacker connection ended, by what it was told (docs/http.md "Under attack"):
/// "503" (displaced: its peer over its share; or refused at its accept), "408-slow" (its slot
/// taken for a newcomer: "too slow while others wait"), "408-timeout" (its own head deadline),
/// "none" (closed without an answer), "open".
function ending(c) {
  const s = status(c);
  if (s === "408") return /too slow while others wait/.test(c.buffer.toString("latin1")) ? "408-slow" : "408-timeout";
  return c.closed ? s : "open";
}

/// Checks how `atk` (every slot's attacker connection) ended around one legitimate request `r`
/// (serve()'s), against the server's counters `d`: every connection answered, 503 or 408, and
/// told when to come back with a 503; each way counted by the server as the client saw it (a
/// 503 the server counts as a displacement, or as a refusal at the accept beside the
/// legitimate client's own); exactly one gave its slot to the legitimate request (its last try);
/// one taken as slow had begun the grace before at least; each ended by its deadline lived that
/// long at least. Returns the one that gave way.
function checkEndings(atk, r, d) {
  const ends = atk.map(ending);
  const count = (e) => ends.filter((x) => x === e).length;
  assert.deepEqual(ends.filter((e) => !["503", "408-slow", "408-timeout"].includes(e)), [], `every attacker connection answered 503 or 408: ${ends}`);
  for (const [i, c] of atk.entries()) {
    if (ends[i] === "503") assert.match(c.buffer.toString("latin1"), /\r\nRetry-After: 1\r\n/, `attacker connection ${i}'s 503 says when to come back`);
    if (ends[i] === "408-timeout") {
      const lived = c.closedAt - c.startedAt;
      assert.ok(lived >= F.headMs - 1, `attacker connection ${i} ended by its head deadline ${lived.toFixed(0)} ms after it began: sooner than the head timeout (${F.headMs} ms) from the accept`);
    }
  }
  assert.equal(count("408-slow"), d.reclaimed_slow, "each slow one that gave way is counted");
  assert.equal(count("408-timeout"), d.timeout_head, "each head deadline is counted");
  assert.equal(count("503") + r.busy, d.displaced + d.refused_busy, "each 503 is counted: a displacement, or a refusal at the accept");
  const gave = atk.filter((_, i) => ends[i] === "503" || ends[i] === "408-slow");
  assert.equal(gave.length, 1, `exactly one attacker connection gave its slot to the legitimate request: ${ends}`);
  if (ending(gave[0]) === "408-slow") {
    const age = gave[0].closedAt - gave[0].startedAt;
    assert.ok(age >= F.graceMs - 1, `taken as slow ${age.toFixed(0)} ms after it began: younger than the grace (${F.graceMs} ms)`);
  }
  return { gave: gave[0], ends };
}

// A valid request head, to be sent one byte at a time (never complete in time: 300 ms a byte).
const SLOW_HEAD = "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" +
  "Accept: application/json, text/event-stream\r\nContent-Length: 100\r\n\r\n";

/// Sends SLOW_HEAD one byte every `everyMs`, the first after `firstMs`, until the connection ends.
function dribble(c, firstMs, everyMs = 300) {
  let i = 0;
  let timer;
  const step = () => {
    if (c.closed || c.sock.destroyed || i >= SLOW_HEAD.length) return;
    if (i === 0) c.firstByteAt = performance.now();
    c.sock.write(SLOW_HEAD[i++]);
    timer = setTimeout(step, everyMs);
  };
  timer = setTimeout(step, firstMs);
  c.sock.once("close", () => clearTimeout(timer));
}

/// Waits until every connection of `conns` has closed, at most `ms` after it began (no throw:
/// the test asserts how each ended).
async function allClosed(conns, ms) {
  await Promise.all(conns.map((c) => c.until(({ closed }) => closed, Math.max(1, c.startedAt + ms - performance.now())).catch(() => {})));
}

// ---- the server --------------------------------------------------------------------------------

before(async () => {
  server = await startNetworkServer(SERVER, ["--simulate", "--timeout-ms", String(F.headMs), "--keepalive-ms", String(F.keepaliveMs)]);
  port = server.port;
  reader.sid = await openSession("reader");
  const h = await figures();
  console.log(`# ${ON_BOARD ? "board" : "host"}: ${JSON.stringify(h)}`);
  assert.equal(h.connections, F.slots, "the connection slots of the mode's table (on a board: the image's build options)");
  assert.equal(h.sessions, F.sessions, "the session slots of the mode's table (on a board: the image's build options)");
});
after(async () => { if (server) await stopNetworkServer(server); });

// ---- 1 -----------------------------------------------------------------------------------------

test("silent connections on every slot: 408 at the head timeout from the accept; the legitimate client is served", { timeout: F.testMs }, async () => {
  const b = await settled();
  const atk = [];
  try {
    for (let i = 0; i < F.slots; ++i) atk.push(await attackerConn());
    // Host: the attacker (one peer) holds every slot, more than its share (half), so the
    // legitimate peer's newcomer is served at once: it takes the slot of the attacker's oldest
    // connection, displaced (503 with Retry-After: 1) while that one is younger than the grace
    // at the server, taken as slow (408) once it is older; the rest end with 408 at the head
    // timeout from their accept.
    // Board (one peer, no share to claim): while every connection is younger than the grace and
    // has not finished its head, none may be taken (a fresh connection is not lost to the next
    // one): 503 with Retry-After: 1; once older, one gives way (408).
    const r = await serve(ping(reader.sid), { what: "ping during silent connections" });
    await allClosed(atk, F.livenessMs);
    const a = await settled();
    const d = delta(b, a);
    const lifetimes = atk.map((c) => (c.closedAt ?? Infinity) - c.startedAt);
    const { gave, ends } = checkEndings(atk, r, d);
    report("silent connections", d, { legit: { statuses: r.statuses, ms: r.ms }, ends,
      attackerLifetimesMs: [Math.round(Math.min(...lifetimes)), Math.round(Math.max(...lifetimes))] });

    assert.equal(r.status, 200, "the legitimate request is served");
    assert.equal(r.noRetryAfter, 0, "every 503 carries Retry-After");
    assert.ok(r.statuses.slice(0, -1).every((x) => x === 503), `only 503 before it is served: ${r.statuses}`);
    if (!ON_BOARD) {
      assert.deepEqual(r.statuses, [200], "served at once: the attacker is over its share");
      assert.equal(gave, atk[0], "the attacker's oldest gave way");
    } else {
      assert.equal(ending(gave), "408-slow", "one peer: a connection gives way only as slow");
    }
    readerKept();
  } finally {
    for (const c of atk) c.end();
  }
});

// ---- 2 -----------------------------------------------------------------------------------------

test("byte-by-byte heads on every slot: 408 at the head timeout from the accept; the legitimate client is served at once", { timeout: F.testMs }, async () => {
  const b = await settled();
  const atk = [];
  try {
    for (let i = 0; i < F.slots; ++i) atk.push(await attackerConn());
    // Every head begins F.firstByteMs after the connections, but the first connection's: its
    // first byte comes 500 ms after the others'. Oldest by its accept, youngest by its first
    // byte: both the head deadline and the age that decides which slow head gives way run from
    // the accept (docs/http.md), so on the host (the kernel accepts in order) the first
    // connection is the one to go, whatever the timing; were they counted from the first byte,
    // another would go. (Not on the board: QEMU's user network may reorder the accepts.)
    for (const [i, c] of atk.entries()) dribble(c, F.firstByteMs + (i === 0 ? 500 : 0));
    // The legitimate request: after the grace, counted from the first bytes.
    await sleep(atk.at(-1).openedAt + F.firstByteMs + F.graceMs + 300 - performance.now());
    const r = await serve(ping(reader.sid), { what: "ping during byte-by-byte heads" });
    await allClosed(atk, F.livenessMs);
    const a = await settled();
    const d = delta(b, a);
    const lifetimes = atk.map((c) => (c.closedAt ?? Infinity) - c.startedAt);
    const { gave, ends } = checkEndings(atk, r, d);
    report("byte-by-byte heads", d, { legit: { statuses: r.statuses, ms: r.ms }, ends,
      attackerLifetimesMs: [Math.round(Math.min(...lifetimes)), Math.round(Math.max(...lifetimes))] });

    assert.equal(r.status, 200, "the legitimate request is served");
    assert.equal(r.noRetryAfter, 0, "every 503 carries Retry-After");
    assert.ok(r.statuses.slice(0, -1).every((x) => x === 503), `only 503 before it is served: ${r.statuses}`);
    if (!ON_BOARD) {
      assert.deepEqual(r.statuses, [200], "served at the first try");
      assert.equal(gave, atk[0], `the connection accepted first gave way, though its first byte came last: ${ends}`);
    } else {
      assert.equal(ending(gave), "408-slow", "one peer: a connection gives way only as slow");
    }
    readerKept();
  } finally {
    for (const c of atk) c.end();
  }
});

// ---- 3 -----------------------------------------------------------------------------------------

test("reconnecting slow heads keep every slot busy: every legitimate request is served", { timeout: F.testMs }, async () => {
  const b = await settled();
  const t0 = Date.now();
  // The attacker opens its connections across one head timeout (so their ages are spread, as
  // in a steady attack: a synchronized start only puts them all inside the grace at once),
  // then holds every slot, reconnecting each one as soon as it is closed, for F.reconnectMs and
  // until the legitimate client has made `wanted` requests (so a slow machine makes the attack
  // longer, not the sample smaller).
  const rampEnd = t0 + F.headMs;
  const stopAt = rampEnd + F.reconnectMs;
  const wanted = F.reconnectMs / 250 / 2;
  let attacking = true;
  let stop;
  const stopped = new Promise((resolve) => { stop = resolve; });
  const atk = { opened: 0, s408: 0, s503: 0, none: 0, failed: 0 };
  const live = new Set();
  const slot = async (i) => {
    await Promise.race([sleep(t0 + (i * F.headMs) / F.slots - Date.now()), stopped]);
    while (attacking) {
      let c;
      try {
        c = await attackerConn();
      } catch {
        ++atk.failed;
        await sleep(20);
        continue;
      }
      ++atk.opened;
      live.add(c);
      dribble(c, 0);
      await Promise.race([c.until(({ closed }) => closed, F.livenessMs).catch(() => {}), stopped]);
      live.delete(c);
      if (!c.closed) { c.end(); break; }
      const s = status(c);
      if (s === "408") ++atk.s408; else if (s === "503") ++atk.s503; else ++atk.none;
    }
  };
  const attack = Promise.all(Array.from({ length: F.slots }, (_, i) => slot(i)));
  try {
    // The legitimate client: a request on a new connection every 250 ms while the attack holds.
    const results = [];
    await sleep(rampEnd - Date.now());
    for (let next = Date.now(); next < stopAt || results.length < wanted; next += 250) {
      await sleep(next - Date.now());
      results.push(await serve(ping(reader.sid), { what: "ping during reconnecting slow heads" }).catch((e) => ({ error: e.message })));
      if (next + 250 < Date.now()) next = Date.now() - 250;
    }
    attacking = false;
    stop();
    await attack;
    for (const c of live) c.end();
    const a = await settled();
    const d = delta(b, a);
    const served = results.filter((r) => r.status === 200);
    const busy = results.reduce((n, r) => n + (r.busy ?? 0), 0);
    const slowest = Math.max(...results.map((r) => r.ms ?? Infinity));
    report("reconnecting slow heads", d, { legit: { requests: results.length, served: served.length, busy, slowestMs: slowest }, attacker: atk });

    assert.deepEqual(results.filter((r) => r.status !== 200).map((r) => r.error ?? r.status), [], "every legitimate request is served");
    assert.equal(results.reduce((n, r) => n + (r.noRetryAfter ?? 0), 0), 0, "every 503 carries Retry-After");
    if (!ON_BOARD) {
      assert.equal(busy, 0, "no legitimate request is refused: a slow head always gives way");
      assert.equal(results.reduce((n, r) => n + r.dropped, 0), 0);
    }
    assert.ok(atk.s408 >= F.slots, "the attacker's slow heads are answered 408");
    assert.ok(d.reclaimed_slow >= 1, "slow heads gave their slots to the legitimate client");
    assert.ok(d.refused_busy >= busy);
    readerKept();
  } finally {
    attacking = false;
    stop();
    await attack;
    for (const c of live) c.end();
  }
});

// ---- 4 -----------------------------------------------------------------------------------------

/// The attacker's initialize flood: `count` requests from `parallel` keep-alive connections;
/// each answer goes into `got` as it comes.
async function flood(count, parallel, got = []) {
  let sent = 0;
  const t0 = Date.now();
  await Promise.all(Array.from({ length: parallel }, async () => {
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, ...ATTACKER });
    try {
      while (sent < count) {
        const k = sent++;
        const r = await rpcCall(agent, port, initBody(`flood${k}`));
        got.push({ status: r.status, retryAfter: r.headers["retry-after"], sid: r.headers["mcp-session-id"] });
      }
    } finally {
      agent.destroy();
    }
  }));
  return { got, ms: Date.now() - t0 };
}

if (!ON_BOARD) {
  // The flood replaces the attacker's own sessions (free: it harms nobody else) and the
  // sessions of the other peer are active, so none of them goes; the second legitimate session
  // takes one of the attacker's (over its share). The per-peer bucket, which limits taking
  // other peers' unused sessions, is left to the engine's unit tests (HttpFair.*): a session
  // counts as active for 60 s.
  test("a session flood from one peer while another keeps working: the other's sessions untouched", { timeout: F.testMs }, async () => {
    const b = await settled();
    const got = [];
    const legitSids = [];
    // The legitimate client: a session on a keep-alive connection, a ping every 50 ms.
    const agent = new http.Agent({ keepAlive: true, maxSockets: 1, ...LEGIT });
    try {
      const init = await rpcCall(agent, port, initBody("worker"));
      assert.equal(init.status, 200);
      const sid = init.headers["mcp-session-id"];
      legitSids.push(sid);
      assert.equal((await rpcCall(agent, port, { jsonrpc: "2.0", method: "notifications/initialized" }, sid)).status, 202);
      let flooding = true;
      const pings = [];
      const worker = (async () => {
        while (flooding || pings.length < 20) {
          const t = Date.now();
          const r = await rpcCall(agent, port, { jsonrpc: "2.0", id: ++nextId, method: "ping" }, sid).catch((e) => ({ status: e.message }));
          pings.push(r.status);
          await sleep(t + 50 - Date.now());
        }
      })();
      // A second legitimate session, opened while the flood runs (or just after it).
      let floodDone = false;
      const second = (async () => {
        while (!floodDone && got.length < F.floodCount / 2) await sleep(1);
        return serve(post(initBody("worker-2")), { what: "a second legitimate initialize" });
      })();
      const { ms } = await flood(F.floodCount, F.floodParallel, got).finally(() => { floodDone = true; });
      const s2 = await second.finally(() => { flooding = false; });
      await worker;
      if (s2.headers["mcp-session-id"]) legitSids.push(s2.headers["mcp-session-id"]);

      const ok = got.filter((g) => g.status === 200);
      const limited = got.filter((g) => g.status === 429);
      // The attacker's sessions that are left (DELETE: 200), then the legitimate ones.
      const attackerLeft = await endSessions(ok.map((g) => g.sid), ATTACKER);
      got.length = 0;
      const legitLeft = await endSessions(legitSids.splice(0), LEGIT);
      agent.destroy();
      const a = await settled();
      const d = delta(b, a);
      report("session flood", d, { attacker: { sent: F.floodCount, ok: ok.length, limited: limited.length, ms, left: attackerLeft },
        legit: { pings: pings.length, second: s2.statuses, left: legitLeft } });

      assert.deepEqual(pings.filter((s) => s !== 200), [], "every call of the legitimate session succeeds (never 404)");
      assert.equal(legitLeft, 2, "both legitimate sessions outlived the flood");
      assert.equal(s2.status, 200, "a second legitimate session opens during the flood");
      assert.deepEqual(s2.statuses, [200], "at the first try");
      assert.equal(ok.length, F.floodCount, `the flood only churns its own sessions: ${[...new Set(got.map((g) => g.status))]}`);
      assert.equal(d.session_refused_rate, 0, "no other peer's session was taken, so no token spent");
      assert.equal(d.session_refused_full, 0, "no 503: the attacker's own sessions give way");
      // Sessions opened: the attacker's, the worker's and the second; free at the start: all but
      // the reader's. Every one beyond took a slot by eviction.
      assert.equal(d.session_evicted, Math.max(0, ok.length + 2 - (F.sessions - 1)), "an eviction for each session beyond the free slots");
      assert.equal(attackerLeft, Math.min(ok.length, F.sessions - 3), "the attacker kept only the slots nobody else uses");
      readerKept();
    } finally {
      agent.destroy();
      await endSessions(got.filter((g) => g.status === 200).map((g) => g.sid), ATTACKER).catch(() => {});
      await endSessions(legitSids, LEGIT).catch(() => {});
    }
  });
} else {
  // Through QEMU every client is one peer: the flood replaces that peer's own least recently
  // used sessions, which may be the legitimate client's (the spec promises another peer's
  // active sessions only: engine unit tests HttpFair.*). What holds here: the flood is
  // served (or refused with Retry-After while every session is in use), never limited as a
  // rate (it takes only its own peer's sessions), and the server keeps serving.
  test("a session flood (one peer, the board): its own sessions churn, then a new one is served", { timeout: F.testMs }, async () => {
    const b = await settled();
    const got = [];
    try {
      const { ms } = await flood(F.floodCount, F.floodParallel, got);
      const ok = got.filter((g) => g.status === 200);
      const refused = got.filter((g) => g.status === 429 || g.status === 503);
      const fresh = await serve(post(initBody("after-flood")), { what: "initialize after the flood" });  // waits out the bucket
      const sids = [...ok.map((g) => g.sid), fresh.headers["mcp-session-id"]];
      got.length = 0;
      await endSessions(sids.filter(Boolean), LEGIT);
      const a = await settled();
      const d = delta(b, a);
      report("session flood (board)", d, { attacker: { sent: F.floodCount, ok: ok.length, refused: refused.length, ms },
        fresh: fresh.statuses, readerReinits: reader.reinits });

      assert.deepEqual(ok.concat(refused).length, F.floodCount, "the flood gets 200 or 503");
      assert.ok(ok.length > 0, "the flood is served");
      assert.equal(refused.filter((g) => g.status === 429).length, 0, "one peer taking its own sessions spends no token");
      assert.equal(refused.filter((g) => !/^\d+$/.test(g.retryAfter ?? "")).length, 0, "every 503 carries Retry-After");
      assert.equal(fresh.status, 200, "a new session opens after the flood");
      assert.equal(d.session_refused_rate, 0);
    } finally {
      await endSessions(got.filter((g) => g.status === 200).map((g) => g.sid), LEGIT).catch(() => {});
    }
  });
}

// ---- 5 -----------------------------------------------------------------------------------------

// The attacker opens as many sessions as there are slots, each with its GET event stream open.
// An open stream whose client sent a request within stream_hold_ms protects its session from
// its own peer's new sessions, and from other peers' unless its peer is over its share.
//   Host: the reader's session (another peer's, active) and the attacker's own (streams) cannot
//   give way: the attacker's last initialize is 503 with Retry-After. The legitimate
//   initialize is served at once: the attacker is over its share, so towards another peer its
//   streams do not protect its sessions; its least recently used one ends, with its stream.
//   Board (one peer): the attacker's last initialize takes the reader's session (the same
//   peer's, without a stream); the legitimate initialize then finds every session pinned by a
//   stream of its own peer: 503 with Retry-After, and served once the attacker closes them.
test("event streams that pin sessions: a legitimate initialize is served, an over-share peer's stream gives way", { timeout: F.testMs }, async () => {
  const b = await settled();
  const streams = [];
  const attackerInits = [];
  let attackerRetryAfter;
  const legitSids = [];
  const ended = (s) => s.c.closed || parseResponses(s.c.buffer).responses.length > 0;
  const countEnded = () => streams.filter(ended).length;
  const closeStreams = () => { for (const s of streams) s.c.end(); };
  try {
    for (let i = 0; i < F.sessions; ++i) {
      const r = await exchange(post(initBody(`streamer${i}`)), ATTACKER, 5000);
      attackerInits.push(r === null ? "none" : r.status);
      if (r?.status !== 200) {
        attackerRetryAfter = r?.headers["retry-after"];
        break;
      }
      const sid = r.headers["mcp-session-id"];
      const n = await serve(post({ jsonrpc: "2.0", method: "notifications/initialized" }, sid), { peer: ATTACKER, what: "initialized" });
      assert.equal(n.status, 202);
      const c = await attackerConn();
      streams.push({ sid, c });
      await c.write(request("GET", "/mcp", { Accept: "text/event-stream", "Mcp-Session-Id": sid }));
      await c.until(({ buf, closed }) => closed || buf.includes("\r\n\r\n"), 5000);
      assert.match(c.buffer.toString("latin1"), /^HTTP\/1\.1 200 /, `stream ${i} opens`);
    }
    await sleep(300);
    const before5 = countEnded();
    const r = await serve(post(initBody("legit-5")), { what: "legitimate initialize against pinned sessions",
      onRefused: ON_BOARD ? closeStreams : null });
    if (r.headers["mcp-session-id"]) legitSids.push(r.headers["mcp-session-id"]);
    const t = Date.now();
    while (countEnded() < before5 + 1 && Date.now() - t < F.livenessMs) await sleep(20);
    await sleep(300);
    const after5 = countEnded();
    closeStreams();
    const attackerLeft = await endSessions(streams.map((s) => s.sid), ATTACKER);
    streams.length = 0;
    await endSessions(legitSids.splice(0), LEGIT);
    const a = await settled();
    const d = delta(b, a);
    report("streams that pin sessions", d, { attackerInits, legit: { statuses: r.statuses, ms: r.ms },
      streamsEnded: { before: before5, after: after5 }, attackerLeft, readerReinits: reader.reinits });

    assert.equal(r.status, 200, "the legitimate initialize is served");
    assert.equal(r.noRetryAfter, 0, "every 503 carries Retry-After");
    assert.equal(before5, 0, "no attacker stream ended before the legitimate initialize");
    if (!ON_BOARD) {
      assert.deepEqual(attackerInits, [...Array(F.sessions - 1).fill(200), 503], "the attacker's last initialize finds no session that may give way");
      assert.match(attackerRetryAfter ?? "", /^\d+$/, "its 503 carries Retry-After");
      assert.deepEqual(r.statuses, [200], "the legitimate initialize is served at once");
      assert.equal(after5, 1, "one attacker stream ended for it");
      assert.equal(d.session_evicted, 1, "one eviction");
      assert.equal(d.session_refused_full, 1, "the attacker's 503 is counted");
      assert.equal(attackerLeft, F.sessions - 2, "the attacker's other sessions are left");
    } else {
      assert.deepEqual(attackerInits, Array(F.sessions).fill(200), "the reader's session (same peer, no stream) gave way");
      assert.equal(r.statuses[0], 503, "the legitimate initialize waits while its own peer's streams pin every session");
      assert.equal(r.statuses.at(-1), 200, "and is served once the streams are closed");
      assert.ok(d.session_refused_full >= 1, "the 503 is counted");
      assert.ok(d.session_evicted >= 2, "the reader's session, then one of the attacker's, gave way");
    }
    readerKept();
  } finally {
    closeStreams();
    await endSessions(streams.map((s) => s.sid), ATTACKER).catch(() => {});
    await endSessions(legitSids, LEGIT).catch(() => {});
  }
});

// ---- 6 -----------------------------------------------------------------------------------------

test("resets in the middle of bodies: the legitimate client is served, every slot comes back", { timeout: F.testMs }, async () => {
  const b = await settled();
  const netBefore = network;
  const qemuBefore = qemuDroppedFrames();
  // A body announced within max_body (64 KiB: more would be 413 at once, not a body in
  // progress), its first 2 KB sent, then a reset.
  const head = request("POST", "/mcp", { ...POST_HEADERS, "Content-Length": "60000" });
  const part = Buffer.from(`{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"version":"1","name":"${"x".repeat(2000)}`);
  let started = 0;
  let done = 0;
  let failed = 0;
  let attacking = true;
  const worker = async () => {
    while (started < F.resets) {
      ++started;
      let c;
      try {
        c = await attackerConn();
      } catch {
        ++failed;
        await sleep(20);
        continue;
      }
      await c.write(Buffer.concat([head, part]));
      await sleep(50);  // the server reads the part: the body is in progress
      c.sock.resetAndDestroy();
      ++done;
    }
  };
  const legit = [];
  const legitLoop = (async () => {
    while (attacking) {
      const t = Date.now();
      legit.push(await serve(ping(reader.sid), { what: "ping during resets" }).catch((e) => ({ error: e.message })));
      await sleep(t + 100 - Date.now());
    }
  })();
  try {
    await Promise.all(Array.from({ length: F.resetsAtOnce }, worker));
  } finally {
    attacking = false;
    await legitLoop;
  }
  const a = await settled();
  const d = delta(b, a);
  report("resets in bodies", d, { resets: done, connectFailures: failed,
    legit: { requests: legit.length, busy: legit.reduce((n, r) => n + (r.busy ?? 0), 0), dropped: legit.reduce((n, r) => n + (r.dropped ?? 0), 0) },
    network: netDelta(netBefore, network, qemuBefore) });

  assert.equal(done + failed, F.resets);
  assert.deepEqual(legit.filter((r) => r.status !== 200).map((r) => r.error ?? r.status), [], "every legitimate request is served");
  // At the first try on the board too: at most 2 attacker connections and the legitimate one are
  // open at once (a reset reaches the board before the same client's next SYN), fewer than its 4
  // slots; a reset QEMU's NIC dropped would leave its connection to the body timeout (the report
  // above gives QEMU's dropped frames).
  assert.equal(failed, 0, "every attacker connection was accepted");
  assert.equal(legit.reduce((n, r) => n + r.busy + r.dropped, 0), 0, "at the first try");
  assert.equal(d.timeout_body, 0, "the resets freed their slots, not the body timeout");
  readerKept();
});

// ---- 7 -----------------------------------------------------------------------------------------

// A client that reuses its port right after the server closed its connection (the server holds
// that one in TIME_WAIT for 2 MSL). On the board QEMU's user network makes any two host
// connections with the same port the same client to the board, and the host's kernel picks
// ports at random: issue 28's lost requests met connections that way. lwIP alone answers such a
// SYN with the old connection's ACK and ignores the RST that comes back (RFC 1337), so the new
// connection waits for QEMU's SYN retransmissions (6 s, then 18 s) to outlast TIME_WAIT (2 min):
// it is never served within the bound. ports/lwip reopens TIME_WAIT for a newer SYN (RFC 1122
// 4.2.2.13, emcp/lwip/tcp.h), as Linux does for the host's server. The figures are read on the
// two connections themselves (keep-alive), so that no other connection opens between the two
// readings: the board reopened exactly one.
test("a client that reuses its port right after the server closed its connection is served at once", { timeout: F.testMs }, async () => {
  await settled();
  const qemuBefore = qemuDroppedFrames();
  const stats = (close) => request("POST", "/mcp", { ...POST_HEADERS, "Mcp-Session-Id": reader.sid, ...(close ? { Connection: "close" } : {}) },
    JSON.stringify({ jsonrpc: "2.0", id: ++nextId, method: "tools/call", params: { name: "device_stats", arguments: {} } }));
  const keepAlivePing = () => request("POST", "/mcp", { ...POST_HEADERS, "Mcp-Session-Id": reader.sid },
    JSON.stringify({ jsonrpc: "2.0", id: ++nextId, method: "ping" }));
  const statsOf = (r) => messagesOf(r).find((x) => x.id !== undefined)?.result?.structuredContent;

  // The first connection: the figures, then a ping with Connection: close (the server closes).
  const c1 = await connectRaw(port, LEGIT);
  const localPort = c1.sock.localPort;
  let first;
  try {
    await c1.write(Buffer.concat([stats(false), ping(reader.sid)]));
    await c1.until(({ closed }) => closed, F.legitMs);
    first = parseResponses(c1.buffer, { final: true }).responses;
  } finally {
    c1.end();
  }
  assert.deepEqual(first.map((r) => r.status), [200, 200], "the figures, then the ping; then the server closed");
  assert.equal(first[1].headers.connection, "close");
  const before = statsOf(first[0]);

  // The second, from the same address and port: a ping, then the figures (Connection: close).
  const t0 = Date.now();
  const c2 = await connectRaw(port, { ...LEGIT, localPort });
  let second;
  try {
    assert.equal(c2.sock.localPort, localPort);
    await c2.write(Buffer.concat([keepAlivePing(), stats(true)]));
    second = await c2.responses(2, F.legitMs).catch(async (e) => assert.fail(`${e.message}; ${await lost("the ping from a reused port")}`));
  } finally {
    c2.end();
  }
  const ms = Date.now() - t0;
  assert.deepEqual(second.map((r) => r.status), [200, 200], "the ping from the reused port, then the figures");
  assert.deepEqual(messagesOf(second[0])[0]?.result, {}, "the ping's answer");
  const after = statsOf(second[1]);
  const net = netDelta(before.network, after.network, qemuBefore);
  // Since boot: the ones before this row are clients of the earlier rows that met a connection in
  // TIME_WAIT by chance (lost requests without the hook: issue 28).
  report("port reused", {}, { localPort, ms, network: net, reopenedSinceBoot: after.network?.time_wait_reopened });
  if (ON_BOARD) assert.equal(net.time_wait_reopened, 1, "the board reopened the connection in TIME_WAIT for the new SYN, once");
  readerKept();
});

