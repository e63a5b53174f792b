// A bounded load test over loopback: C concurrent keep-alive clients, each with its own
// Streamable HTTP session, send N requests in all (JSON answers, and for half the clients every
// 10th a deferred tool call with progress, answered as an event stream); every answer must be
// right, no request may
// fail, and once the clients ended their sessions and closed their connections every
// connection and session slot must be free: by the server's own report when it stops, and by the
// kernel's before (its sockets in /proc: none left open, one listening; lib/proc_sockets.mjs).
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors node --test tests/mcp/http_load.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import http from "node:http";
import { startNetworkServer, stopNetworkServer } from "./lib/harness.mjs";
import { rpcCall as call } from "./lib/rawhttp.mjs";
import { waitSockets } from "./lib/proc_sockets.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
const CLIENTS = Number(process.env.EMCP_LOAD_CLIENTS ?? 8);
const REQUESTS = Number(process.env.EMCP_LOAD_REQUESTS ?? 4000);


// The JSON-RPC messages of an answer (JSON or event stream).
function messages(r) {
  if ((r.headers["content-type"] ?? "").startsWith("text/event-stream")) {
    return r.data.split("\n\n").map((e) => e.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join(""))
      .filter((d) => d !== "").map((d) => JSON.parse(d));
  }
  return r.data ? [JSON.parse(r.data)] : [];
}

test(`${CLIENTS} clients, ${REQUESTS} requests: no failure, all slots free afterwards`, async () => {
  const server = await startNetworkServer(SERVER, ["--simulate"], []);
  const failures = [];
  let sockets = null;
  let done = 0;
  let streams = 0;
  const t0 = Date.now();
  try {
    await Promise.all(Array.from({ length: CLIENTS }, async (_, k) => {
      const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
      try {
        const init = await call(agent, server.port, { jsonrpc: "2.0", id: 0, method: "initialize",
          params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: `load${k}`, version: "1" } } });
        assert.equal(init.status, 200);
        const sid = init.headers["mcp-session-id"];
        assert.equal((await call(agent, server.port, { jsonrpc: "2.0", method: "notifications/initialized" }, sid)).status, 202);
        for (let i = 1; i <= REQUESTS / CLIENTS; ++i) {
          // The sensors example runs 4 sampling jobs at once (EMCP_MAX_DEFERRED): half the
          // clients use them, so none is ever turned away as busy.
          const withProgress = i % 10 === 0 && k < 4;
          const body = withProgress
            ? { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "sample_sensor", arguments: { sensor: "load", samples: 2, interval_ms: 10 }, _meta: { progressToken: `p${i}` } } }
            : { jsonrpc: "2.0", id: i, method: "tools/call", params: { name: "echo", arguments: { text: `client ${k} request ${i}` } } };
          try {
            const r = await call(agent, server.port, body, sid);
            const ms = messages(r);
            const answer = ms.find((m) => m.id === i);
            if (r.status !== 200 || !answer || answer.error) throw new Error(`status ${r.status}: ${r.data.slice(0, 200)}`);
            if (withProgress) {
              ++streams;
              if (!ms.some((m) => m.method === "notifications/progress")) throw new Error("no progress before the answer");
              if (!/^Sampled load 2 times/.test(answer.result.content[0].text)) throw new Error(answer.result.content[0].text);
            } else if (answer.result.content[0].text !== `client ${k} request ${i}`) {
              throw new Error(`wrong answer: ${JSON.stringify(answer)}`);
            }
            ++done;
          } catch (e) {
            failures.push(`client ${k} request ${i}: ${e.message}`);
          }
        }
        assert.equal((await call(agent, server.port, null, sid)).status, 200);  // DELETE ends the session
      } finally {
        agent.destroy();
      }
    }));
    const seconds = (Date.now() - t0) / 1000;
    console.log(`# ${done} answers (${streams} as event streams) in ${seconds.toFixed(2)} s: ${(done / seconds).toFixed(0)} req/s over ${CLIENTS} connections`);
  } finally {
    // The server reads the clients' hang-ups: then it holds no connection socket (a liveness
    // bound: it has been sent every one of them already).
    sockets = await waitSockets(server.proc.pid, (x) => x.open.length === 0, 10000);
    await stopNetworkServer(server);  // SIGTERM: exit status 0, no sanitizer report
  }
  assert.equal(sockets.open.length, 0, `the server's sockets once the clients left: ${sockets.summary}`);
  assert.equal(sockets.listening.length, 1, `one listening socket: ${sockets.summary}`);
  assert.deepEqual(failures.slice(0, 5), []);
  assert.equal(done, REQUESTS);
  const m = /in use at stop: (\d+) connections, (\d+) sessions/.exec(server.stderr());
  assert.ok(m, server.stderr());
  assert.equal(Number(m[1]), 0, "connection slots free");
  assert.equal(Number(m[2]), 0, "session slots free");
});
