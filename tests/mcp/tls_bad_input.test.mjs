// TLS on the server's port (emcp's TlsLayer over Mbed TLS), judged by Node's TLS (OpenSSL):
// what a client negotiates, session resumption with a ticket, clients the server must refuse
// (TLS 1.0 and 1.1, static-RSA or CBC suites only, a renegotiation), a tampered ticket, and
// hostile input at the TLS layer, each ending only its own connection while the server goes on
// serving. What the server sent is also read off the wire (a record's type and length are in
// clear, and so is an alert before the handshake ends: RFC 5246 6.2.1, 7.2), apart from OpenSSL.
//
// EMCP_SENSORS: the server; EMCP_TLS_DIR: the test PKI (tests/tls/make_certs.sh), trusted through
// NODE_EXTRA_CA_CERTS. Loopback only; every wait is bounded.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import https from "node:https";
import net from "node:net";
import { Duplex } from "node:stream";
import tls from "node:tls";
import { startNetworkServer, stopNetworkServer, TLS, ON_BOARD } from "./lib/harness.mjs";
import { parseResponses, request, POST_HEADERS } from "./lib/rawhttp.mjs";

// The server's handshake timeout: --timeout-ms for the Linux server; a board's is its default
// (EMCP_TLS_TIMEOUT_MS=10000).
const TIMEOUT_MS = Number(process.env.EMCP_TLS_TIMEOUT_MS || 1000);
let server;
let port;
// On Linux a second server with the RSA key (server-rsa): what an RSA certificate could serve
// (static-RSA key exchange, ECDHE-RSA) must be refused too. A board serves its EC key only.
let rsaServer = null;
let rsaPort = null;

before(async () => {
  assert.ok(TLS, "EMCP_TLS_DIR must name the test PKI");
  const args = ["--simulate", "--timeout-ms", String(TIMEOUT_MS)];
  server = await startNetworkServer(process.env.EMCP_SENSORS, args);
  port = server.port;
  if (!ON_BOARD) {
    rsaServer = await startNetworkServer(process.env.EMCP_SENSORS, args, ["--ws"], "server-rsa");
    rsaPort = rsaServer.port;
  }
});
after(async () => {
  if (server) await stopNetworkServer(server);
  if (rsaServer) await stopNetworkServer(rsaServer);
});

const INIT = JSON.stringify({
  jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "tls-test", version: "1" } },
});

/// One HTTPS initialize on a fresh connection: { status, body }.
function initialize(options = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: "127.0.0.1", port, path: "/mcp", method: "POST", agent: false, timeout: 5000,
      headers: { "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
      ...options,
    }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, body: Buffer.concat(parts).toString(), socket: res.socket }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(INIT);
  });
}

async function stillServing(to = port) {
  // A board whose lwIP has no PCB or listener slot free yet (after a burst of connections)
  // refuses or drops a newcomer for a moment (docs/http.md): it is asked again, for up to 10 s.
  const end = Date.now() + (ON_BOARD ? 10000 : 0);
  for (;;) {
    try {
      const r = await initialize({ port: to });
      assert.equal(r.status, 200, "a fresh HTTPS initialize still works");
      assert.match(r.body, /"protocolVersion":"2025-11-25"/);
      return;
    } catch (e) {
      if (Date.now() >= end || e instanceof assert.AssertionError) throw e;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
  }
}

/// Waits until pred() holds, for at most `ms`.
async function until(pred, ms = 5000) {
  const end = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/// A raw TCP connection: write bytes, collect what comes back, know when it closed.
function raw() {
  return new Promise((resolve, reject) => {
    const s = net.connect(port, "127.0.0.1", () => {
      const c = { socket: s, buf: Buffer.alloc(0), closed: false };
      s.on("data", (d) => { c.buf = Buffer.concat([c.buf, d]); });
      s.on("close", () => { c.closed = true; });
      s.on("error", () => { c.closed = true; });
      c.until = (pred, ms) => until(() => pred(c), ms);
      resolve(c);
    });
    s.on("error", reject);
  });
}

/// A TLS record header: type, version 3.3 (TLS 1.2), length.
const record = (type, length) => Buffer.from([type, 3, 3, length >> 8, length & 0xff]);
const ALERT = 0x15;

/// A TCP connection to the server as a Duplex for tls.connect({ socket }): the bytes pass as
/// they are, and the server's records are read off them as they come (type, length, and the
/// first two bytes of the body: an alert's level and description while it is in clear). When
/// the TLS client is done, only our side is shut: `serverEnded` says the server ended its own.
/// `sent`: every byte the client sent.
function tapped(to = port) {
  const seen = { records: [], serverEnded: false, closed: false, sent: Buffer.alloc(0) };
  let pending = Buffer.alloc(0);
  const sock = net.connect(to, "127.0.0.1");
  const duplex = new Duplex({
    read() {},
    write(chunk, _enc, cb) { seen.sent = Buffer.concat([seen.sent, chunk]); sock.write(chunk, cb); },
    final(cb) { sock.end(); cb(); },
    destroy(err, cb) { sock.end(); cb(err); },
  });
  sock.on("data", (d) => {
    pending = Buffer.concat([pending, d]);
    while (pending.length >= 5 && pending.length >= 5 + pending.readUInt16BE(3)) {
      const length = pending.readUInt16BE(3);
      seen.records.push({ type: pending[0], length, head: [...pending.subarray(5, 7)] });
      pending = pending.subarray(5 + length);
    }
    if (!duplex.destroyed) duplex.push(d);
  });
  sock.on("end", () => { seen.serverEnded = true; if (!duplex.destroyed) duplex.push(null); });
  sock.on("close", () => { seen.closed = true; });
  sock.on("error", () => {});
  seen.until = (pred, ms) => until(() => pred(seen), ms);
  return { duplex, seen };
}

/// A TLS handshake over a tapped connection: resolves { socket, seen, error } once it is
/// established or failed.
function handshakeTapped(options = {}, to = port) {
  const { duplex, seen } = tapped(to);
  return new Promise((resolve) => {
    const socket = tls.connect({ socket: duplex, servername: "localhost", ...options });
    socket.once("secureConnect", () => resolve({ socket, seen, error: null }));
    socket.once("error", (error) => resolve({ socket, seen, error }));
  });
}

/// An initialize on an established TLS socket: resolves with the first response.
function initializeOn(socket) {
  return new Promise((resolve, reject) => {
    let buf = Buffer.alloc(0);
    const timer = setTimeout(() => reject(new Error("no answer within 5 s")), 5000);
    socket.on("data", (d) => {
      buf = Buffer.concat([buf, d]);
      const { responses } = parseResponses(buf);
      if (responses.length > 0) {
        clearTimeout(timer);
        resolve({ status: responses[0].status, body: responses[0].body.toString() });
      }
    });
    socket.write(request("POST", "/mcp", POST_HEADERS, INIT));
  });
}

test("a TLS 1.2 client gets ECDHE with an AEAD suite on P-256, and the certificate checks out", async () => {
  const s = tls.connect({ host: "127.0.0.1", port, servername: "localhost" });
  await new Promise((resolve, reject) => { s.once("secureConnect", resolve); s.once("error", reject); });
  assert.equal(s.authorized, true, String(s.authorizationError));
  assert.equal(s.getProtocol(), "TLSv1.2");
  const { name } = s.getCipher();
  assert.match(name, /^ECDHE-(ECDSA|RSA)-(AES(128|256)-GCM-SHA(256|384)|CHACHA20-POLY1305)$/);
  assert.equal(s.getEphemeralKeyInfo().name, "prime256v1");
  s.destroy();
});

test("a returning client resumes its session with the ticket it was given", async () => {
  const first = await initialize();
  assert.equal(first.status, 200);
  const session = first.socket.getSession?.() ?? null;
  assert.ok(session, "the first connection got a session (ticket) to resume");
  const s = tls.connect({ host: "127.0.0.1", port, servername: "localhost", session });
  await new Promise((resolve, reject) => { s.once("secureConnect", resolve); s.once("error", reject); });
  assert.equal(s.isSessionReused(), true, "the second handshake resumed the session");
  s.destroy();
});

// Clients the server must refuse (docs/http.md, "TLS": TLS 1.2 only, ECDHE with an AEAD suite):
// OpenSSL made to offer only what is refused (TLS 1.0 and 1.1 need SECLEVEL=0 to be offered at
// all). Each gets one fatal alert in clear, before any handshake message of the server, then the
// end: protocol_version (70) for an old version, handshake_failure (40) for no suite in common
// (RFC 5246 7.2.2, 7.4.1.3); OpenSSL's reason says the same from its side.
const OLD_TLS = { ciphers: "DEFAULT@SECLEVEL=0" };
const CBC_SUITES = ["ECDHE-ECDSA-AES128-SHA256", "ECDHE-ECDSA-AES256-SHA384", "ECDHE-ECDSA-AES128-SHA",
  "ECDHE-ECDSA-AES256-SHA", "ECDHE-RSA-AES128-SHA256", "ECDHE-RSA-AES256-SHA384", "ECDHE-RSA-AES128-SHA",
  "ECDHE-RSA-AES256-SHA", "AES128-SHA256", "AES128-SHA"].join(":");
const REFUSED = [
  ["a TLS 1.0 client", { ...OLD_TLS, minVersion: "TLSv1", maxVersion: "TLSv1" }, 70,
   "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION", "tlsv1 alert protocol version"],
  ["a TLS 1.1 client", { ...OLD_TLS, minVersion: "TLSv1.1", maxVersion: "TLSv1.1" }, 70,
   "ERR_SSL_TLSV1_ALERT_PROTOCOL_VERSION", "tlsv1 alert protocol version"],
  ["a client offering only static-RSA key exchange (no forward secrecy)",
   { maxVersion: "TLSv1.2", ciphers: "AES128-GCM-SHA256:AES256-GCM-SHA384" }, 40,
   "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE", "sslv3 alert handshake failure"],
  ["a client offering only CBC suites (ECDHE and static RSA)", { maxVersion: "TLSv1.2", ciphers: CBC_SUITES }, 40,
   "ERR_SSL_SSLV3_ALERT_HANDSHAKE_FAILURE", "sslv3 alert handshake failure"],
];

for (const [name, options, description, code, reason] of REFUSED) {
  for (const [key, keyPort] of [["EC P-256", () => port], ["RSA 2048", () => rsaPort]]) {
    if (key.startsWith("RSA") && ON_BOARD) continue;
    test(`${name}, ${key} key: one fatal alert (${description}) and the end; the server goes on`, async () => {
      const { seen, error } = await handshakeTapped(options, keyPort());
      assert.ok(error, "the handshake failed");
      assert.equal(error.code, code, error.message);
      assert.equal(error.reason, reason);
      await seen.until(({ serverEnded }) => serverEnded);
      assert.deepEqual(seen.records, [{ type: ALERT, length: 2, head: [2, description] }],
                       "the server's only record: the fatal alert, in clear");
      await stillServing(keyPort());
    });
  }
}

test("a tampered session ticket: a full handshake instead of a resumption, and the connection serves", async () => {
  const first = await initialize();
  assert.equal(first.status, 200);
  const session = first.socket.getSession();
  const ticket = first.socket.getTLSTicket();
  assert.ok(session && ticket, "the first connection got a session and a ticket");
  const at = session.indexOf(ticket);
  assert.ok(at >= 0, "the ticket is in the session OpenSSL keeps");
  // The same session, its ticket's protected state and tag flipped (Mbed TLS's ticket: key
  // name, IV, length, the encrypted state, a 16-byte GCM tag): the server cannot open it.
  const tampered = Buffer.from(session);
  for (const i of [ticket.length >> 1, ticket.length - 4]) tampered[at + i] ^= 0x5a;
  // RFC 5077 3.4: a server that cannot or does not want to honour a ticket does a full handshake.
  const { socket, seen, error } = await handshakeTapped({ session: tampered });
  assert.equal(error, null, String(error));
  assert.ok(seen.sent.includes(tampered.subarray(at, at + ticket.length)), "the ClientHello offered the tampered ticket");
  assert.equal(socket.isSessionReused(), false, "a full handshake, not a resumption");
  assert.equal(seen.records.filter(({ type }) => type === ALERT).length, 0, "no alert");
  const r = await initializeOn(socket);
  assert.equal(r.status, 200, "served on the connection that offered the tampered ticket");
  assert.match(r.body, /"protocolVersion":"2025-11-25"/);
  socket.destroy();
  // The untouched session still resumes: what failed is the flip, not the session's form.
  const again = await initialize({ session });
  assert.equal(again.socket.isSessionReused(), true, "the genuine ticket resumes");
  await stillServing();
});

// A client asks to renegotiate its established TLS 1.2 connection: docs/http.md says refused.
// Mbed TLS answers one warning no_renegotiation alert (RFC 5246 7.2.2) and keeps the connection
// (the requester "can decide whether to proceed"); OpenSSL raises ERR_SSL_NO_RENEGOTIATION when
// it gets that alert and ends the connection itself with a fatal handshake_failure, so the same
// connection cannot be used again from here (tests/unit/tls_layer_test.cpp,
// TlsLayer.RenegotiationIsRefused, goes on with it): a new one must be served.
test("a client that asks to renegotiate gets one no_renegotiation alert, no new handshake; the server goes on", async () => {
  const { socket, seen, error } = await handshakeTapped();
  assert.equal(error, null, String(error));
  assert.equal(socket.getProtocol(), "TLSv1.2");
  const before = seen.records.length;
  // Whichever comes first: OpenSSL's error, the renegotiation done, or 5 s.
  let done;
  const outcome = new Promise((resolve) => { done = resolve; });
  socket.once("error", done);
  const timer = setTimeout(() => done(new Error("neither an error nor a renegotiation within 5 s")), 5000);
  assert.equal(socket.renegotiate({}, () => done(new Error("the renegotiation completed"))), true,
               "OpenSSL sent its ClientHello");
  const e = await outcome;
  clearTimeout(timer);
  assert.equal(e.code, "ERR_SSL_NO_RENEGOTIATION", e.message);
  await seen.until(({ serverEnded }) => serverEnded);
  // The server's records after the ClientHello, up to its end: one alert (encrypted now: 2 bytes, and the
  // AEAD's 8-byte explicit nonce and 16-byte tag for AES-GCM, the tag alone for ChaCha20).
  const { name } = socket.getCipher();
  const alertLength = 2 + (/GCM/.test(name) ? 8 + 16 : 16);
  assert.deepEqual(seen.records.slice(before).map(({ type, length }) => ({ type, length })),
                   [{ type: ALERT, length: alertLength }], `the server's records after the ClientHello (${name})`);
  await stillServing();
});

test("a client that insists on TLS 1.3 fails the handshake; the server goes on", async () => {
  await assert.rejects(initialize({ minVersion: "TLSv1.3" }));
  await stillServing();
});

test("plain HTTP to the TLS port: 400 in plain text, then close", async () => {
  const c = await raw();
  c.socket.write(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: ${INIT.length}\r\n\r\n${INIT}`);
  await c.until(({ closed }) => closed);
  assert.match(c.buf.toString("latin1"), /^HTTP\/1\.1 400 Bad Request\r\n[^]*this port speaks HTTPS/);
  await stillServing();
});

const HOSTILE = [
  ["a handshake record of garbage", () => Buffer.concat([record(0x16, 16), Buffer.alloc(16, 0xa5)])],
  ["an application-data record before any handshake", () => Buffer.concat([record(0x17, 32), Buffer.alloc(32, 1)])],
  ["bytes that are no TLS record at all", () => Buffer.from([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 0xff, 0xfe])],
  ["a record larger than the input buffer (18 KiB)", () => Buffer.concat([record(0x16, 18 * 1024), Buffer.alloc(18 * 1024, 0x16)])],
  ["a record of length zero", () => record(0x16, 0)],
];

for (const [name, bytes] of HOSTILE) {
  test(`${name}: the connection ends (with an alert, or closed), the server goes on`, async () => {
    const c = await raw();
    c.socket.write(bytes());
    await c.until(({ closed }) => closed, TIMEOUT_MS + 3000);
    if (c.buf.length > 0) assert.equal(c.buf[0], ALERT, `only a TLS alert may come back, got ${c.buf.subarray(0, 8).toString("hex")}`);
    await stillServing();
  });
}

test("a truncated ClientHello, then hang-up: the server goes on", async () => {
  const c = await raw();
  c.socket.end(Buffer.concat([record(0x16, 200), Buffer.from([1, 0, 0, 196, 3, 3]), Buffer.alloc(20, 7)]));
  await c.until(({ closed }) => closed);
  await stillServing();
});

test("a client that stalls mid-handshake is dropped at the handshake timeout", async () => {
  // From before the connection: the handshake's deadline runs from later (load only makes the
  // time measured longer); the wait is the deadline, as long again and 5 s (a bound on waiting).
  const t0 = performance.now();
  const c = await raw();
  c.socket.write(Buffer.concat([record(0x16, 200), Buffer.from([1, 0, 0, 196, 3, 3])]));
  await c.until(({ closed }) => closed, 2 * TIMEOUT_MS + 5000);
  const ms = performance.now() - t0;
  assert.ok(ms >= TIMEOUT_MS - 1, `dropped ${ms.toFixed(0)} ms after the connection began: before the handshake timeout (${TIMEOUT_MS} ms)`);
  await stillServing();
});

test("more stalled handshakes than connection slots: clients still get through, the stalled ones end", async () => {
  // The server has 16 connection slots; 24 stalled handshakes take them all and more. Once they
  // are older than the engine's reclaim grace (1 s; docs/http.md "Under attack": a connection
  // that has not sent its first request by then is slow), a newcomer takes the slot of the
  // oldest, so real clients get through meanwhile; every stalled one ends by its timeout.
  const stalled = [];
  for (let i = 0; i < 24; ++i) {
    const c = await raw();
    c.socket.write(Buffer.concat([record(0x16, 200), Buffer.from([1, 0, 0, 196, 3, 3])]));
    stalled.push(c);
  }
  await new Promise((r) => setTimeout(r, 1200));
  await stillServing();
  await stillServing();
  // Each ends by its timeout once the server has taken it in: on a board, lwIP takes a
  // connection queued behind its PCB pool only when one is free, and its clock starts then
  // (a clean clone's run, another QEMU beside it, once took longer than one timeout).
  for (const c of stalled) await c.until(({ closed }) => closed, 2 * TIMEOUT_MS + 3000);
  await stillServing();
});
