// Mbed TLS's static pool full, on the emulated board: emcp-sensors-tls-tight has 4 connection
// slots but a pool for the certificate, 2 established connections and a handshake. A third
// connection's TLS buffers do not fit: it gets a TLS alert (internal_error) and the two
// established ones go on; once one of them ends, the next connection gets in, and device_stats
// counts the refusal. Judged by Node's OpenSSL.
// The pool's figures docs/http.md and docs/footprint.md quote (the parsed certificate and key, an
// established connection, a handshake) are read from device_stats while the first connection is
// the only one, and checked against both documents (this image is emcp-sensors-tls but for its
// slots: the same Mbed TLS build, pool and credentials).
//
// EMCP_RUN_BOARD (the board), EMCP_TLS_DIR and NODE_EXTRA_CA_CERTS (the test PKI).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import tls from "node:tls";
import { readFileSync } from "node:fs";
import { startNetworkServer, stopNetworkServer, ON_BOARD, TLS } from "./lib/harness.mjs";
import { parseResponses } from "./lib/rawhttp.mjs";

let server;
let port;
before(async () => {
  assert.ok(ON_BOARD && TLS, "EMCP_RUN_BOARD and EMCP_TLS_DIR must be set");
  server = await startNetworkServer(null, []);
  port = server.port;
});
after(async () => { if (server) await stopNetworkServer(server); });

const rpc = (id, method, params) => JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
const INIT = rpc(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "pool", version: "1" } });
const post = (body, sid) => Buffer.from(
  "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\n" +
  (sid ? `Mcp-Session-Id: ${sid}\r\nMCP-Protocol-Version: 2025-11-25\r\n` : "") +
  `Content-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}`);

/// A TLS connection: resolves once the handshake is done, rejects with the TLS error otherwise.
function connect() {
  return new Promise((resolve, reject) => {
    const s = tls.connect({ host: "127.0.0.1", port, servername: "localhost" });
    const c = { socket: s, buf: Buffer.alloc(0), closed: false };
    s.on("data", (d) => { c.buf = Buffer.concat([c.buf, d]); });
    s.on("close", () => { c.closed = true; });
    s.once("secureConnect", () => resolve(c));
    s.once("error", (e) => (c.closed ? null : reject(e)));
    setTimeout(() => reject(new Error("no handshake in 15 s")), 15000).unref();
  });
}

/// Sends one request on `c` and waits for its answer (15 s at most).
async function exchange(c, bytes) {
  c.buf = Buffer.alloc(0);
  c.socket.write(bytes);
  const end = Date.now() + 15000;
  for (;;) {
    const { responses } = parseResponses(c.buf);
    if (responses.length > 0) return responses[0];
    if (c.closed) throw new Error("closed before the answer");
    if (Date.now() > end) throw new Error("no answer in 15 s");
    await new Promise((r) => setTimeout(r, 20));
  }
}

async function deviceStats(c, sid, id) {
  const stats = await exchange(c, post(rpc(id, "tools/call", { name: "device_stats", arguments: {} }), sid));
  assert.equal(stats.status, 200);
  const body = stats.body.toString();
  return JSON.parse(body.slice(body.indexOf("{"))).result.structuredContent.network;
}

const doc = (rel) => readFileSync(new URL(`../../${rel}`, import.meta.url), "utf8").replace(/\s+/g, " ");
const num = (s) => Number(s.replace(/,/g, ""));
// The parsed certificate's size follows the test PKI's, made anew by each run
// (tests/tls/make_certs.sh): its random serial and the CA's ECDSA signature (DER integers with or
// without a leading zero) move it by a few bytes, which the pool's 8-byte blocks round to 0 or 8.
const CERT_SLACK = 16;

/// Mbed TLS's pool as device_stats gives it with one established connection open (the first,
/// whose handshake ran alone), against the figures of docs/http.md (bytes) and docs/footprint.md
/// (KiB, one decimal: the DESCRIPTION of emcp-sensors-tls in examples/sensors/firmware.cmake).
function checkDocumentedPool(net) {
  const measured = {
    credentials: net.tls_pool_used - net.tls_established_size,
    established: net.tls_established_size,
    handshake: net.tls_handshake_peak - net.tls_established_size,
    open_to_end: net.tls_handshake_peak,
  };
  console.log(`# Mbed TLS pool on the board: ${JSON.stringify(measured)}, pool ${net.tls_pool_size} B`);
  const http = doc("docs/http.md").match(/the parsed certificate and P-256 key take ([\d,]+) B, an established connection ([\d,]+) B .*? a handshake ([\d,]+) B more while it runs \(([\d,]+) B from the connection's open to its end\); a (\d+) KiB pool serves (\d+) connections/);
  assert.ok(http, "docs/http.md: the sentence with the pool's figures (\"the parsed certificate and P-256 key take N B, ...\") is not found");
  const said = { credentials: num(http[1]), established: num(http[2]), handshake: num(http[3]), open_to_end: num(http[4]) };
  const kib = (n) => (n / 1024).toFixed(1);
  const fp = doc("docs/footprint.md").match(/the parsed certificate and P-256 key ([\d.]+) KiB, an established connection ([\d.]+) KiB .*? a handshake ([\d.]+) KiB more/);
  assert.ok(fp, "docs/footprint.md: the sentence with the pool's figures (the DESCRIPTION of emcp-sensors-tls, examples/sensors/firmware.cmake) is not found");
  const problems = [];
  const near = (what, doc_value, value, slack) => {
    if (Math.abs(doc_value - value) > slack) problems.push(`${what}: the document says ${doc_value}, the board ${value}`);
  };
  near("docs/http.md, the certificate and key (B)", said.credentials, measured.credentials, CERT_SLACK);
  near("docs/http.md, an established connection (B)", said.established, measured.established, 0);
  near("docs/http.md, a handshake more (B)", said.handshake, measured.handshake, 0);
  near("docs/http.md, open to end (B)", said.open_to_end, measured.open_to_end, 0);
  if (said.open_to_end !== said.established + said.handshake) problems.push("docs/http.md: open to end is not established + handshake");
  const kibDiffers = (what, text, value) => { if (text !== kib(value)) problems.push(`docs/footprint.md, ${what}: ${text} KiB, the board ${kib(value)} KiB`); };
  kibDiffers("the certificate and key", fp[1], said.credentials);  // the document's rounding of the figure in bytes
  kibDiffers("an established connection", fp[2], measured.established);
  kibDiffers("a handshake more", fp[3], measured.handshake);
  // "a 24 KiB pool serves 2 connections": the credentials, 2 established connections and one handshake.
  assert.equal(net.tls_pool_size, num(http[5]) * 1024, "docs/http.md: the pool's size");
  const fits = measured.credentials + num(http[6]) * measured.established + measured.handshake;
  if (fits > net.tls_pool_size) problems.push(`docs/http.md: ${http[6]} connections and a handshake take ${fits} B, more than the ${net.tls_pool_size} B pool`);
  assert.deepEqual(problems, [], "the documents' Mbed TLS pool figures are not what the board measures " +
    "(update docs/http.md's \"On a board\" and the DESCRIPTION of emcp-sensors-tls in examples/sensors/firmware.cmake, then scripts/footprint)");
}

async function session(c) {
  const r = await exchange(c, post(INIT));
  assert.equal(r.status, 200, r.body.toString());
  const sid = r.headers["mcp-session-id"];
  assert.equal((await exchange(c, post(JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), sid))).status, 202);
  return sid;
}

test("a connection whose TLS buffers do not fit the pool is refused with an alert; the others go on", async () => {
  const a = await connect();
  const sa = await session(a);
  // The pool's figures with `a` the only connection (the board's own count): a connection of
  // another client (a readiness probe of scripts/run-board that QEMU's user network delivers
  // late) may still hold its buffers for a moment. The firmware takes a handshake's figures only
  // when no other connection opened or ended while it ran, so none of another's is in them.
  let first;
  for (let id = 3, end = Date.now() + 15000; ; ++id) {
    first = await deviceStats(a, sa, id);
    if (first.connections_in_use === 1 || Date.now() > end) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  assert.equal(first.connections_in_use, 1, `a is the only connection: ${JSON.stringify(first)}`);
  checkDocumentedPool(first);
  const b = await connect();
  const sb = await session(b);
  // The third: no room for its record buffers.
  await assert.rejects(connect(), (e) => /alert internal error|ECONNRESET|socket disconnected/i.test(String(e.message ?? e)),
    "the third connection is refused");
  // The established ones go on.
  for (const [c, sid] of [[a, sa], [b, sb]]) {
    const r = await exchange(c, post(rpc(5, "ping"), sid));
    assert.equal(r.status, 200);
    assert.match(r.body.toString(), /"result":\{\}/);
  }
  // One ends: its memory goes back to the pool, and the next connection gets in.
  b.socket.end();
  await new Promise((r) => setTimeout(r, 500));
  let d;
  for (let i = 0; i < 20 && !d; ++i) {
    try { d = await connect(); } catch { await new Promise((r) => setTimeout(r, 250)); }
  }
  assert.ok(d, "a connection gets in once another ended");
  const sd = await session(d);
  const net = await deviceStats(d, sd, 9);
  assert.ok(net.tls_refused_memory >= 1, `tls_refused_memory ${net.tls_refused_memory}`);
  assert.ok(net.tls_pool_failures >= 1, `tls_pool_failures ${net.tls_pool_failures}`);
  assert.ok(net.tls_pool_max <= net.tls_pool_size, "the pool never went beyond itself");
  a.socket.destroy();
  d.socket.destroy();
});
