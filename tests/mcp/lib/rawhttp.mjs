// A raw HTTP/1.1 client over node:net for the transport tests: sends exactly the bytes given
// (malformed ones too) and parses what comes back. Loopback only; every wait is bounded, by
// WAIT_MS unless the caller says otherwise: a bound on how long to wait for what must come
// (an answer, a close), seconds beyond what a server needs on a loaded machine, never a claim
// about the time it took.
import http from "node:http";
import net from "node:net";

const WAIT_MS = 10000;

/// Parses HTTP responses out of `buf` (a Buffer). Returns { responses, rest }; each response is
/// { status, headers (lower-case names), body (Buffer) }. Bodies: Content-Length, chunked, or
/// none for 1xx/204/304 and SSE heads (then body is what followed so far).
export function parseResponses(buf, { final = false } = {}) {
  const responses = [];
  let off = 0;
  for (;;) {
    const end = buf.indexOf("\r\n\r\n", off);
    if (end < 0) break;
    const head = buf.subarray(off, end).toString("latin1").split("\r\n");
    const m = /^HTTP\/1\.[01] (\d{3})/.exec(head[0]);
    if (!m) throw new Error(`bad status line: ${JSON.stringify(head[0])}`);
    const headers = {};
    for (const line of head.slice(1)) {
      const i = line.indexOf(":");
      const k = line.slice(0, i).trim().toLowerCase();
      headers[k] = headers[k] ? `${headers[k]}, ${line.slice(i + 1).trim()}` : line.slice(i + 1).trim();
    }
    const status = Number(m[1]);
    let p = end + 4;
    if (status < 200 || status === 204 || status === 304 || status === 101) {
      responses.push({ status, headers, body: Buffer.alloc(0) });
      off = p;
      if (status === 101) { off = p; break; }
      continue;
    }
    if (headers["content-length"] !== undefined) {
      const n = Number(headers["content-length"]);
      if (buf.length < p + n) break;
      responses.push({ status, headers, body: buf.subarray(p, p + n) });
      off = p + n;
      continue;
    }
    if (/chunked/i.test(headers["transfer-encoding"] ?? "")) {
      const parts = [];
      let complete = false;
      for (;;) {
        const le = buf.indexOf("\r\n", p);
        if (le < 0) break;
        const size = parseInt(buf.subarray(p, le).toString("latin1"), 16);
        if (Number.isNaN(size)) throw new Error("bad chunk size");
        if (buf.length < le + 2 + size + 2) break;
        if (size === 0) { p = le + 4; complete = true; break; }
        parts.push(buf.subarray(le + 2, le + 2 + size));
        p = le + 2 + size + 2;
      }
      if (!complete) {
        if (final) responses.push({ status, headers, body: Buffer.concat(parts), incomplete: true });
        break;
      }
      responses.push({ status, headers, body: Buffer.concat(parts) });
      off = p;
      continue;
    }
    // Until close (HTTP/1.0 style).
    if (!final) break;
    responses.push({ status, headers, body: buf.subarray(p) });
    off = buf.length;
  }
  return { responses, rest: buf.subarray(off) };
}

/// Opens a connection to 127.0.0.1:port (`options`: more of net.connect's, such as
/// localAddress: another loopback address is another peer). Returns helpers to write, wait for
/// responses or for the close, and to end.
export function connectRaw(port, options = {}) {
  return new Promise((resolve, reject) => {
    const sock = net.connect({ ...options, host: "127.0.0.1", port });
    let buf = Buffer.alloc(0);
    let closed = false;
    const waiters = new Set();
    const wake = () => { for (const w of waiters) w(); };
    sock.on("data", (d) => { buf = Buffer.concat([buf, d]); wake(); });
    sock.on("close", () => { closed = true; wake(); });
    sock.on("error", () => {});
    sock.once("connect", () => resolve({
      sock,
      write: (data) => new Promise((r) => sock.write(data, () => r())),
      /// Waits until `pred({ buf, closed })` holds, at most `ms`.
      until: (pred, ms = WAIT_MS) => new Promise((res, rej) => {
        const check = () => {
          if (pred({ buf, closed })) { waiters.delete(check); clearTimeout(t); res({ buf, closed }); }
        };
        const t = setTimeout(() => { waiters.delete(check); rej(new Error(`timed out after ${ms} ms; got ${JSON.stringify(buf.toString("latin1").slice(0, 300))} closed=${closed}`)); }, ms);
        waiters.add(check);
        check();
      }),
      /// Waits for `n` complete responses (or the close).
      responses: async (n = 1, ms = WAIT_MS) => {
        await new Promise((res, rej) => {
          const check = () => {
            let got = 0;
            try { got = parseResponses(buf, { final: closed }).responses.length; } catch (e) { waiters.delete(check); clearTimeout(t); rej(e); return; }
            if (got >= n || closed) { waiters.delete(check); clearTimeout(t); res(); }
          };
          const t = setTimeout(() => { waiters.delete(check); rej(new Error(`timed out waiting for ${n} response(s); got ${JSON.stringify(buf.toString("latin1").slice(0, 400))}`)); }, ms);
          waiters.add(check);
          check();
        });
        return parseResponses(buf, { final: closed }).responses;
      },
      get buffer() { return buf; },
      get closed() { return closed; },
      end: () => { sock.destroy(); },
    }));
    sock.once("error", reject);
  });
}

/// The connections of `conns` (connectRaw's) whose first answer has one of `statuses`, e.g. the
/// ones that gave their slot to a newcomer: answeredWith(held, 408, 503).
export function answeredWith(conns, ...statuses) {
  const re = new RegExp(`^HTTP/1\\.1 (${statuses.join("|")}) `);
  return conns.filter((c) => re.test(c.buffer.toString("latin1")));
}

export const INIT = JSON.stringify({
  jsonrpc: "2.0", id: 1, method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw", version: "1" } },
});

/// A whole request: method, path, headers (object), body (string or Buffer).
export function request(method, path, headers = {}, body) {
  const h = { Host: "127.0.0.1", ...headers };
  if (body !== undefined && h["Content-Length"] === undefined && !/chunked/i.test(h["Transfer-Encoding"] ?? ""))
    h["Content-Length"] = Buffer.byteLength(body);
  let head = `${method} ${path} HTTP/1.1\r\n`;
  for (const [k, v] of Object.entries(h)) if (v !== null) head += `${k}: ${v}\r\n`;
  head += "\r\n";
  return body === undefined ? Buffer.from(head) : Buffer.concat([Buffer.from(head), Buffer.from(body)]);
}

export const POST_HEADERS = { "Content-Type": "application/json", Accept: "application/json, text/event-stream" };

/// One request on a fresh connection; resolves with the first response and whether the
/// server closed the connection.
export async function once(port, bytes, ms = WAIT_MS) {
  const c = await connectRaw(port);
  await c.write(bytes);
  const [r] = await c.responses(1, ms);
  await new Promise((res) => setTimeout(res, 20));
  const closed = c.closed;
  c.end();
  return { ...r, closed };
}

/// Initializes a Streamable HTTP session; returns its id.
export async function newSession(port) {
  const r = await once(port, request("POST", "/mcp", POST_HEADERS, INIT));
  if (r.status !== 200 || !r.headers["mcp-session-id"]) throw new Error(`initialize failed: ${r.status} ${r.body}`);
  const sid = r.headers["mcp-session-id"];
  const n = await once(port, request("POST", "/mcp", { ...POST_HEADERS, "Mcp-Session-Id": sid },
    JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })));
  if (n.status !== 202) throw new Error(`initialized: ${n.status}`);
  return sid;
}

/// A JSON-RPC POST to /mcp (or, with `body` null, the session's DELETE) through `agent` (an
/// http.Agent: keep-alive clients); resolves with { status, headers, data }.
export function rpcCall(agent, port, body, sid) {
  return new Promise((resolve, reject) => {
    const headers = { ...POST_HEADERS };
    if (sid) headers["Mcp-Session-Id"] = sid;
    const req = http.request({ host: "127.0.0.1", port, path: "/mcp", method: body === null ? "DELETE" : "POST", agent, headers, timeout: 15000 }, (res) => {
      let data = "";
      res.setEncoding("utf8");
      res.on("data", (d) => { data += d; });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, data }));
    });
    req.on("timeout", () => req.destroy(new Error("timeout")));
    req.on("error", reject);
    req.end(body === null ? undefined : JSON.stringify(body));
  });
}
