// Mbed TLS's static pool full, on the emulated board: emcp-sensors-tls-tight has 4 connection
// slots but a pool for the certificate, 2 established connections and a handshake. A third
// connection's TLS buffers do not fit: it gets a TLS alert (internal_error) and the two
// established ones go on; once one of them ends, the next connection gets in, and device_stats
// counts the refusal. Judged by Node's OpenSSL.
//
// EMCP_RUN_BOARD (the board), EMCP_TLS_DIR and NODE_EXTRA_CA_CERTS (the test PKI).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import tls from "node:tls";
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
  const stats = await exchange(d, post(rpc(9, "tools/call", { name: "device_stats", arguments: {} }), sd));
  assert.equal(stats.status, 200);
  const body = stats.body.toString();
  const net = JSON.parse(body.slice(body.indexOf("{"))).result.structuredContent.network;
  assert.ok(net.tls_refused_memory >= 1, `tls_refused_memory ${net.tls_refused_memory}`);
  assert.ok(net.tls_pool_failures >= 1, `tls_pool_failures ${net.tls_pool_failures}`);
  assert.ok(net.tls_pool_max <= net.tls_pool_size, "the pool never went beyond itself");
  a.socket.destroy();
  d.socket.destroy();
});
