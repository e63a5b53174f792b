// A fleet behind a standard proxy (docs/deploy.md): Debian's nginx, configured by
// examples/fleet/nginx.conf (filled in here: the one copy), terminates TLS in front of three
// emcp-sensors --http instances started with --session-prefix b1- / b2- / b3- and one shared
// --state-key-file. Checked through nginx over https, with a CA and certificate made here:
//   (a) the official SDK clients' feature tests (sdk_features.test.mjs over Streamable HTTP,
//       HTTP+SSE and WebSocket at every legacy revision; sdk_v2.test.mjs at 2026-07-28) pass;
//   (b) 2026-07-28 requests are balanced: three in a row land on the three instances;
//   (c) every request of a legacy session lands on the instance that opened it (Streamable HTTP
//       and HTTP+SSE), whatever else goes round-robin between them;
//   (d) event streams pass unbuffered: the client reads event 1 before the server is made to
//       send event 2 (no clock involved), and a copy of the config with proxy_buffering on holds
//       the same event back until the stream ends (the check can fail);
//   (e) an unknown session id gets the instance's own 404;
//   (f) a UART board behind emcp-bridge --http (the gateway) behind the same nginx configuration,
//       its one upstream three times: a session, a tool call, a subscription's updates on the
//       GET stream while it is open (unbuffered), the session's end.
// Where a request landed is told by the instances themselves: each has its own LED (read on
// its own port), and only the instance that opened a session knows its id. nginx's access log
// (the upstream it chose) is checked beside that. Every process started here is stopped, and
// must end cleanly: each emcp-sensors and nginx with status 0 (lib/server_exit.mjs), nginx's
// error log without an [emerg], [alert] or [crit] line.
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors node --test tests/mcp/fleet_nginx.test.mjs
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import http from "node:http";
import https from "node:https";
import net from "node:net";
import { tmpdir } from "node:os";
import { freePort, startGateway, startLineBoard, startNetworkServer, stopNetworkServer } from "./lib/harness.mjs";
import { stopServer, stderrTail, watchServer } from "./lib/server_exit.mjs";

const here = (p) => new URL(p, import.meta.url).pathname;
const SENSORS = process.env.EMCP_SENSORS ?? here("../../build/native/bin/emcp-sensors");
const NGINX = process.env.EMCP_NGINX ?? "nginx";
const TEMPLATE = here("../../examples/fleet/nginx.conf");
const MODERN = "2026-07-28";
const LEGACY = "2025-11-25";
const T = { timeout: 60000 };  // a bound on each check (a held event would hang it), not a time claim

let dir;            // this test's files: the PKI, the state key, nginx's prefixes
let instances = [];  // { tag, port, server }
let nginx;          // the fleet's nginx: { watch, prefix, port }
let base;           // https://127.0.0.1:PORT
let agent;          // trusts the test CA

// ---- nginx --------------------------------------------------------------------------------------

/// The template with every @NAME@ filled in from `values` (none may be left).
function fill(template, values) {
  const text = template.replace(/@([A-Z0-9_]+)@/g, (m, name) => {
    assert.ok(name in values, `the template's ${m} has a value`);
    return values[name];
  });
  return text;
}

function waitListening(port, watch, prefix) {
  const deadline = Date.now() + 10000;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      if (watch.proc.exitCode !== null || watch.proc.signalCode !== null || Date.now() > deadline) {
        const log = (() => { try { return readFileSync(`${prefix}/error.log`, "utf8"); } catch { return ""; } })();
        reject(new Error(`nginx is not listening on ${port}: ${watch.stderr()}\n${log}`));
        return;
      }
      const s = net.connect(port, "127.0.0.1");
      s.once("connect", () => { s.destroy(); resolve(); });
      s.once("error", () => setTimeout(attempt, 50));
    };
    attempt();
  });
}

/// nginx with `conf` in its own prefix folder, in the foreground (its log, pid and temporary
/// files in that folder); resolves once it accepts connections.
async function startNginx(name, conf, port) {
  const prefix = `${dir}/${name}`;
  mkdirSync(`${prefix}/tmp`, { recursive: true });
  writeFileSync(`${prefix}/nginx.conf`, conf);
  const proc = spawn(NGINX, ["-e", "stderr", "-p", prefix, "-c", `${prefix}/nginx.conf`, "-g", "daemon off;"],
                     { stdio: ["ignore", "ignore", "pipe"] });
  const watch = watchServer(proc, `nginx (${name})`);
  await waitListening(port, watch, prefix);
  return { watch, prefix, port };
}

/// Stops nginx (SIGTERM: it must exit with status 0) and reads its error log.
async function stopNginx(n) {
  if (!n) return;
  await stopServer(n.watch, "SIGTERM");
  const log = readFileSync(`${n.prefix}/error.log`, "utf8");
  const bad = log.split("\n").filter((l) => /\[(emerg|alert|crit)\]/.test(l));
  assert.deepEqual(bad, [], `nginx's error log:\n${stderrTail(log)}`);
}

/// The lines of nginx's access log after `from` once there are at least `lines` of them (nginx
/// writes a request's line once its answer went out: the client may read the answer first; a
/// stream's when it ends). Whole lines only: a read can come while nginx is writing one (seen
/// as '127.0.0.1 "POST /mcp HT'), which counts once its newline is there.
async function accessLog(from, lines) {
  for (let waited = 0; ; waited += 20) {
    const text = readFileSync(`${nginx.prefix}/access.log`, "utf8");
    const all = text.slice(0, text.lastIndexOf("\n") + 1).split("\n").filter(Boolean).slice(from);
    if (all.length >= lines) return all;
    assert.ok(waited < 10000, `nginx's access log: ${lines} lines after line ${from}, not ${all.length}:\n${all.join("\n")}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

/// A line of the test's own in nginx's access log (a request for /mark-N, which an instance
/// answers 404): returns how many lines the log holds up to it, where a check's lines start.
let marks = 0;
async function mark() {
  const path = `/mark-${++marks}`;
  assert.equal((await request(`${base}${path}`, { method: "GET" })).status, 404);
  for (let waited = 0; ; waited += 20) {
    const at = (await accessLog(0, 0)).findIndex((l) => l.includes(`"GET ${path} HTTP/1.1"`));
    if (at >= 0) return at + 1;
    assert.ok(waited < 10000, `${path} in nginx's access log`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

// ---- Requests -----------------------------------------------------------------------------------

/// One request; resolves with { status, headers, text } once the answer is complete.
function request(url, { method = "POST", headers = {}, body } = {}) {
  const u = new URL(url);
  const lib = u.protocol === "https:" ? https : http;
  const data = body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = lib.request(u, {
      method, agent: u.protocol === "https:" ? agent : undefined,
      headers: { accept: "application/json, text/event-stream", ...(data ? { "content-type": "application/json" } : {}), ...headers },
    }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => { text += d; });
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, text }));
    });
    req.on("error", reject);
    req.end(data);
  });
}

/// The JSON-RPC messages of an answer (a JSON body or an event stream's data lines).
function messages(r) {
  if (/event-stream/.test(r.headers["content-type"] ?? "")) {
    return r.text.split("\n").filter((l) => /^data: ./.test(l)).map((l) => JSON.parse(l.slice(6)));
  }
  return r.text ? [JSON.parse(r.text)] : [];
}

let nextId = 1;
/// A 2026-07-28 request (its _meta and headers) to `url`; the answer's result.
async function modern(url, method, params = {}, capabilities = {}) {
  const name = params.name ?? params.uri;
  const id = nextId++;
  const r = await request(`${url}/mcp`, {
    headers: { "mcp-protocol-version": MODERN, "mcp-method": method, ...(name ? { "mcp-name": name } : {}) },
    body: { jsonrpc: "2.0", id, method, params: { ...params, _meta: { "io.modelcontextprotocol/protocolVersion": MODERN, "io.modelcontextprotocol/clientCapabilities": capabilities } } },
  });
  const answer = messages(r).find((m) => m.id === id);
  assert.ok(answer?.result, `${method} at ${url}: HTTP ${r.status} ${r.text.slice(0, 300)}`);
  return answer.result;
}

const direct = (inst) => `http://127.0.0.1:${inst.port}`;
const setLed = (url, on) => modern(url, "tools/call", { name: "set_led", arguments: { on } });
/// Each instance's LED, read on its own port: ["on", "off", ...] in instance order.
const leds = () => Promise.all(instances.map(async (i) => (await modern(direct(i), "resources/read", { uri: "device://led" })).contents[0].text));

/// A legacy session through nginx: initialize and initialized; returns { sid, post(body) }.
async function legacySession(capabilities = {}) {
  const init = await request(`${base}/mcp`, {
    body: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: LEGACY, capabilities, clientInfo: { name: "fleet", version: "1" } } },
  });
  assert.equal(init.status, 200, init.text);
  const sid = init.headers["mcp-session-id"];
  const post = (body) => request(`${base}/mcp`, { headers: { "mcp-session-id": sid, "mcp-protocol-version": LEGACY }, body });
  assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status, 202);
  return { sid, post };
}

/// An open response whose text grows as it arrives; until(pred) resolves once pred(text) holds.
function openStream(url, { method = "GET", headers = {}, body, via = agent } = {}) {
  const u = new URL(url);
  const s = { text: "", status: 0, ended: false, waiters: [] };
  const check = () => { s.waiters = s.waiters.filter((w) => !(w.pred(s.text) && (w.resolve(), true))); };
  s.until = (pred) => new Promise((resolve) => { s.waiters.push({ pred, resolve }); check(); });
  s.done = new Promise((resolve) => {
    s.req = https.request(u, { method, agent: via, headers: { accept: "text/event-stream, application/json", ...(body ? { "content-type": "application/json" } : {}), ...headers } }, (res) => {
      s.status = res.statusCode;
      res.setEncoding("utf8");
      res.on("data", (d) => { s.text += d; check(); });
      res.on("end", () => { s.ended = true; check(); resolve(); });
      res.on("error", () => resolve());
    });
    s.req.on("error", () => resolve());
    s.req.end(body ? JSON.stringify(body) : undefined);
  });
  return s;
}

// ---- The fleet ----------------------------------------------------------------------------------

before(async () => {
  dir = mkdtempSync(`${tmpdir()}/emcp-fleet-`);
  execFileSync("sh", [here("../tls/make_certs.sh"), `${dir}/pki`]);
  agent = new https.Agent({ ca: readFileSync(`${dir}/pki/ca.pem`), keepAlive: true });
  writeFileSync(`${dir}/state.key`, `${randomBytes(32).toString("hex")}\n`);
  for (const tag of ["b1", "b2", "b3"]) {
    const server = await startNetworkServer(SENSORS, ["--simulate", "--session-prefix", `${tag}-`, "--state-key-file", `${dir}/state.key`]);
    instances.push({ tag, port: server.port, server });
  }
  const port = await freePort();
  const values = {
    LISTEN: `127.0.0.1:${port}`, SERVER_NAME: "localhost", CERT: `${dir}/pki/server.pem`, KEY: `${dir}/pki/server.key`,
    B1: `127.0.0.1:${instances[0].port}`, B2: `127.0.0.1:${instances[1].port}`, B3: `127.0.0.1:${instances[2].port}`,
  };
  nginx = await startNginx("nginx", fill(readFileSync(TEMPLATE, "utf8"), values), port);
  base = `https://127.0.0.1:${port}`;
});

after(async () => {
  agent?.destroy();
  const problems = [];
  await stopNginx(nginx).catch((e) => problems.push(e.message));
  for (const i of instances) await stopNetworkServer(i.server).catch((e) => problems.push(e.message));
  if (problems.length === 0 && dir) rmSync(dir, { recursive: true, force: true });
  assert.deepEqual(problems, [], "every process ended cleanly");
});

describe("a fleet of three emcp-sensors behind nginx (examples/fleet/nginx.conf)", () => {
  // The official SDK clients' feature tests first, on fresh instances (the tests read their
  // logs and counters), each in its own node process that trusts the test CA
  // (NODE_EXTRA_CA_CERTS is read at start-up), against the fleet's URL: every legacy revision
  // (a session each, on the instance round-robin gives it), then 2026-07-28. [file, transport,
  // suites skipped (they start servers of their own: pagination, emcp-everything), fewest
  // passing tests].
  const features = [
    ["sdk_features.test.mjs", "http", 2, 80],
    ["sdk_features.test.mjs", "sse", 2, 80],
    ["sdk_features.test.mjs", "ws", 2, 80],
    ["sdk_v2.test.mjs", "http", 1, 15],
  ];
  for (const [file, transport, skipped, passed] of features) {
    test(`(a) the official SDK client's ${file} over ${transport} through nginx`, { timeout: 240000 }, async () => {
      const { NODE_TEST_CONTEXT, ...outer } = process.env;  // the child runs its own tests
      const env = { ...outer, EMCP_URL: base, EMCP_TRANSPORT: transport, EMCP_FLEET_SIZE: "3",
                    NODE_EXTRA_CA_CERTS: `${dir}/pki/ca.pem`, EMCP_TLS_DIR: "" };
      const child = spawn(process.execPath, ["--test", "--test-reporter=tap", here(file)], { env, cwd: here("."), stdio: ["ignore", "pipe", "pipe"] });
      let out = "";
      child.stdout.on("data", (d) => { out += d; });
      child.stderr.on("data", (d) => { out += d; });
      const code = await new Promise((r) => child.once("close", r));
      const count = (what) => Number(new RegExp(`^# ${what} (\\d+)$`, "m").exec(out)?.[1] ?? NaN);
      // Each failed subtest's report (its YAML block), then the summary.
      const failed = [...out.matchAll(/^( *)not ok \d+ - .*\n(?:\1 .*\n)*?\1  \.\.\.$/gm)].map((m) => m[0])
        .filter((b) => !b.includes("subtestsFailed"));
      const summary = `${file} over ${transport}: exit ${code}; failed:\n${failed.join("\n")}\nits output ends:\n${stderrTail(out, 12)}`;
      assert.equal(code, 0, summary);
      assert.equal(count("fail"), 0, summary);
      assert.equal(count("cancelled"), 0, summary);
      assert.equal(count("todo"), 0, summary);
      assert.equal(count("skipped"), 0, summary);
      assert.equal((out.match(/^ *ok \d+ - .* # SKIP\b/gm) ?? []).length, skipped, summary);
      assert.ok(count("pass") >= passed, summary);
    });
  }

  test("(b) 2026-07-28 requests are balanced: three in a row switch the three instances' LEDs", T, async () => {
    for (const i of instances) await setLed(direct(i), false);
    assert.deepEqual(await leds(), ["off", "off", "off"]);
    const from = await mark();
    for (let k = 0; k < 3; ++k) {
      const r = await setLed(base, true);
      assert.equal(r.content[0].text, "LED is now on");
      assert.equal(r.resultType, "complete");
    }
    // Each instance switched its own: each took one of the three.
    assert.deepEqual(await leds(), ["on", "on", "on"]);
    const lines = (await accessLog(from, 3)).filter((l) => l.includes('"POST /mcp '));
    assert.equal(lines.length, 3, lines.join("\n"));
    assert.ok(lines.every((l) => /"POST \/mcp HTTP\/1\.1" 200 .* group=fleet /.test(l)), lines.join("\n"));
    const upstreams = lines.map((l) => / upstream=(\S+)$/.exec(l)[1]).sort();
    assert.deepEqual(upstreams, instances.map((i) => `127.0.0.1:${i.port}`).sort());
    // A multi round-trip request: its retry lands on another instance, which takes the state
    // the first one issued (the fleet's shared --state-key-file).
    const caps = { elicitation: { form: {} } };
    const call = { name: "calibrate_temperature", arguments: {} };
    const ask = await modern(base, "tools/call", call, caps);
    assert.equal(ask.resultType, "input_required", JSON.stringify(ask));
    const [key] = Object.keys(ask.inputRequests);
    const done = await modern(base, "tools/call", {
      ...call, requestState: ask.requestState,
      inputResponses: { [key]: { action: "accept", content: { reference_celsius: 22.5 } } },
    }, caps);
    assert.match(done.content[0].text, /^Calibrated: reference 22\.5 °C/, JSON.stringify(done));
    const [first, retry] = (await accessLog(from, 5)).filter((l) => l.includes('"POST /mcp ')).slice(3, 5).map((l) => / upstream=(\S+)$/.exec(l)[1]);
    assert.notEqual(first, retry, "the retry went to another instance");
  });

  test("(c) every request of a legacy session lands on its instance, round-robin traffic between them", T, async () => {
    for (const i of instances) await setLed(direct(i), false);
    const from = await mark();
    const { sid, post } = await legacySession();
    const home = instances.find((i) => sid.startsWith(`${i.tag}-`));
    assert.ok(home, `the session id ${sid} starts with an instance's tag`);
    assert.match(sid, /^b[123]-[0-9a-f]{32}$/);
    const others = instances.filter((i) => i !== home);
    const expectLeds = (homeLed) => instances.map((i) => (i === home ? homeLed : "off"));
    for (const [k, on] of [true, false, true, false, true].entries()) {
      // A stateless request between the session's: the round-robin turn moves on.
      await modern(base, "tools/call", { name: "read_sensor", arguments: { sensor: "load" } });
      const r = await post({ jsonrpc: "2.0", id: 10 + k, method: "tools/call", params: { name: "set_led", arguments: { on } } });
      assert.equal(r.status, 200, `request ${k} of the session: ${r.text}`);  // elsewhere: 404
      const answer = messages(r).find((m) => m.id === 10 + k);
      assert.equal(answer.result.content[0].text, `LED is now ${on ? "on" : "off"}`);
      assert.deepEqual(await leds(), expectLeds(on ? "on" : "off"), `after request ${k} of the session on ${home.tag}`);
      const p = await post({ jsonrpc: "2.0", id: 20 + k, method: "ping" });
      assert.equal(p.status, 200, p.text);
    }
    // Its stream and its end: GET and DELETE go there too. A subscription made through nginx
    // hears its instance's LED (switched on its own port) and no other's.
    assert.equal((await post({ jsonrpc: "2.0", id: 30, method: "resources/subscribe", params: { uri: "device://led" } })).status, 200);
    const stream = openStream(`${base}/mcp`, { headers: { "mcp-session-id": sid, "mcp-protocol-version": LEGACY } });
    await stream.until((t) => t.includes("retry:"));  // the priming event: the stream is open
    assert.equal(stream.status, 200);
    for (const o of others) await setLed(direct(o), true);
    await setLed(direct(home), false);
    await stream.until((t) => t.includes('"notifications/resources/updated"'));
    assert.equal(stream.text.match(/notifications\/resources\/updated/g).length, 1, "one update: its instance's");
    const del = await request(`${base}/mcp`, { method: "DELETE", headers: { "mcp-session-id": sid } });
    assert.equal(del.status, 200, del.text);
    await stream.done;
    assert.equal((await post({ jsonrpc: "2.0", id: 31, method: "ping" })).status, 404, "the session ended on its instance");
    // nginx says the same: every request that carried the id went to the tag's group.
    // (initialized, 5 set_led, 5 ping, subscribe, GET, DELETE, the last ping; 6 without the id)
    const lines = await accessLog(from, 21);
    const mine = lines.filter((l) => / group=b\d /.test(l));
    assert.equal(mine.length, 15, lines.join("\n"));
    assert.ok(mine.every((l) => l.includes(` group=${home.tag} upstream=127.0.0.1:${home.port}`)), mine.join("\n"));
  });

  test("(c) HTTP+SSE (2024-11-05): the endpoint names the session's instance, every POST goes there", T, async () => {
    const stream = openStream(`${base}/sse`);
    await stream.until((t) => /event: endpoint\ndata: (\S+)\n/.test(t));
    const endpoint = /event: endpoint\ndata: (\S+)\n/.exec(stream.text)[1];
    const m = /^\/messages\?sessionId=(b[123])-[0-9a-f]{32}$/.exec(endpoint);
    assert.ok(m, endpoint);
    const body = (id, method, params) => ({ jsonrpc: "2.0", id, method, params });
    const posts = [
      body(1, "initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "fleet", version: "1" } }),
      { jsonrpc: "2.0", method: "notifications/initialized" },
      body(2, "ping", {}), body(3, "tools/list", {}), body(4, "tools/call", { name: "echo", arguments: { text: "here" } }),
    ];
    for (const b of posts) {
      await modern(base, "server/discover");  // round-robin traffic between
      const r = await request(`${base}${endpoint}`, { body: b });
      assert.equal(r.status, 202, `${b.method}: ${r.text}`);  // another instance: 404
    }
    await stream.until((t) => t.includes('"text":"here"'));
    const from = await mark();
    stream.req.destroy();
    await accessLog(from, 1);  // the stream's line, once nginx saw it closed
    const sse = (await accessLog(0, 0)).filter((l) => l.includes(`POST ${endpoint}`));
    assert.equal(sse.length, posts.length);
    assert.ok(sse.every((l) => l.includes(` group=${m[1]} `)), sse.join("\n"));
  });

  test("(d) event streams pass unbuffered: event 1 is read before event 2 is caused", T, async () => {
    // The session's GET stream: each update is caused only once the one before has arrived.
    const { sid, post } = await legacySession();
    const home = instances.find((i) => sid.startsWith(`${i.tag}-`));
    assert.equal((await post({ jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "device://led" } })).status, 200);
    const stream = openStream(`${base}/mcp`, { headers: { "mcp-session-id": sid } });
    await stream.until((t) => t.includes("retry:"));
    for (let n = 1; n <= 3; ++n) {
      await setLed(direct(home), n % 2 === 1);
      await stream.until((t) => (t.match(/notifications\/resources\/updated/g) ?? []).length === n);
    }
    assert.equal(stream.ended, false, "the stream is still open");
    // A POST's event stream: the tool's question (elicitation) must reach the client before
    // the tool can answer, which it does only once the client has answered it.
    const asked = await legacySession({ elicitation: {} });
    const call = openStream(`${base}/mcp`, {
      method: "POST", headers: { "mcp-session-id": asked.sid },
      body: { jsonrpc: "2.0", id: 7, method: "tools/call", params: { name: "calibrate_temperature", arguments: {} } },
    });
    await call.until((t) => t.includes('"method":"elicitation/create"'));
    assert.equal(call.ended, false);
    const question = JSON.parse(call.text.split("\n").find((l) => l.includes("elicitation/create")).slice(6));
    const reply = await asked.post({ jsonrpc: "2.0", id: question.id, result: { action: "accept", content: { reference_celsius: 22.5 } } });
    assert.equal(reply.status, 202, reply.text);
    await call.done;
    assert.match(call.text, /"id":7,"result":\{"content":\[\{"type":"text","text":"Calibrated: reference 22\.5/);
    for (const session of [sid, asked.sid])
      assert.equal((await request(`${base}/mcp`, { method: "DELETE", headers: { "mcp-session-id": session } })).status, 200);
    await stream.done;
  });

  test("(d) the check can fail: with proxy_buffering on, nginx holds the event until the stream ends", T, async () => {
    const template = readFileSync(TEMPLATE, "utf8");
    assert.equal(template.split("proxy_buffering off;").length, 2, "the template says proxy_buffering off once");
    const port = await freePort();
    const conf = fill(template.replace("proxy_buffering off;", "proxy_buffering on;"), {
      LISTEN: `127.0.0.1:${port}`, SERVER_NAME: "localhost", CERT: `${dir}/pki/server.pem`, KEY: `${dir}/pki/server.key`,
      B1: `127.0.0.1:${instances[0].port}`, B2: `127.0.0.1:${instances[1].port}`, B3: `127.0.0.1:${instances[2].port}`,
    });
    const buffered = await startNginx("buffered", conf, port);
    try {
      const { sid, post } = await legacySession();
      const home = instances.find((i) => sid.startsWith(`${i.tag}-`));
      assert.equal((await post({ jsonrpc: "2.0", id: 1, method: "resources/subscribe", params: { uri: "device://led" } })).status, 200);
      const stream = openStream(`https://127.0.0.1:${port}/mcp`, { headers: { "mcp-session-id": sid } });
      await setLed(direct(home), true);
      // The instance sends the update at once to a stream it has (the fleet's nginx delivers
      // it in milliseconds, above); this one holds it while the stream is open. The LED is
      // switched again after the wait, for the case that the GET was slower than the first.
      await new Promise((r) => setTimeout(r, 1500));
      await setLed(direct(home), false);
      await new Promise((r) => setTimeout(r, 300));
      assert.doesNotMatch(stream.text, /resources\/updated/, "held while the stream is open");
      const del = await request(`${direct(home)}/mcp`, { method: "DELETE", headers: { "mcp-session-id": sid } });
      assert.equal(del.status, 200);
      await stream.done;
      assert.match(stream.text, /notifications\/resources\/updated/, "delivered when the stream ended");
    } finally {
      await stopNginx(buffered);
    }
  });

  test("(e) an unknown session id: the instance's 404, whichever tag it carries", T, async () => {
    const zeros = "0".repeat(32);
    for (const [id, group] of [[`b2-${zeros}`, "b2"], [`b9-${zeros}`, "fleet"], [zeros, "fleet"]]) {
      const from = await mark();
      const r = await request(`${base}/mcp`, { headers: { "mcp-session-id": id }, body: { jsonrpc: "2.0", id: 1, method: "ping" } });
      assert.equal(r.status, 404, `${id}: ${r.text}`);
      assert.match(r.text, /unknown or ended session/, "emcp's answer, not nginx's page");
      assert.match((await accessLog(from, 1))[0], new RegExp(`"POST /mcp HTTP/1.1" 404 \\d+ group=${group} `));
    }
    const from = await mark();
    const r = await request(`${base}/messages?sessionId=b3-${zeros}`, { body: { jsonrpc: "2.0", id: 1, method: "ping" } });
    assert.equal(r.status, 404, r.text);
    assert.match(r.text, /unknown or ended session/);
    assert.match((await accessLog(from, 1))[0], /" 404 \d+ group=b3 upstream=/);
  });

  test("(f) a UART board behind emcp-bridge --http behind nginx: a session, a tool, an unbuffered stream, its end", T, async () => {
    const board = await startLineBoard(SENSORS, ["--simulate"]);
    const gw = await startGateway(board.port, ["--quiet"]);
    let front = null;
    try {
      const port = await freePort();
      const one = `127.0.0.1:${gw.port}`;  // one device: the template's three upstreams are the gateway
      front = await startNginx("gateway", fill(readFileSync(TEMPLATE, "utf8"), {
        LISTEN: `127.0.0.1:${port}`, SERVER_NAME: "localhost", CERT: `${dir}/pki/server.pem`, KEY: `${dir}/pki/server.key`,
        B1: one, B2: one, B3: one,
      }), port);
      const url = `https://127.0.0.1:${port}/mcp`;
      const init = await request(url, {
        body: { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: LEGACY, capabilities: {}, clientInfo: { name: "fleet", version: "1" } } },
      });
      assert.equal(init.status, 200, init.text);
      const sid = init.headers["mcp-session-id"];
      assert.match(sid, /^[0-9a-f]{32}$/, "the gateway's session id");
      const headers = { "mcp-session-id": sid, "mcp-protocol-version": LEGACY };
      const post = (body) => request(url, { headers, body });
      assert.equal((await post({ jsonrpc: "2.0", method: "notifications/initialized" })).status, 202);
      const r = await post({ jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "read_sensor", arguments: { sensor: "load" } } });
      assert.equal(r.status, 200, r.text);
      assert.match(messages(r).find((m) => m.id === 1).result.content[0].text, /^load: /);
      assert.equal((await post({ jsonrpc: "2.0", id: 2, method: "resources/subscribe", params: { uri: "sensor://uptime" } })).status, 200);
      // The uptime changes every second: its update reaches the client through nginx while the
      // stream is open (proxy_buffering off), twice.
      const stream = openStream(url, { headers });
      await stream.until((t) => (t.match(/notifications\/resources\/updated/g) ?? []).length >= 2);
      assert.equal(stream.status, 200);
      assert.equal(stream.ended, false, "the stream is still open");
      assert.equal((await request(url, { method: "DELETE", headers })).status, 200);
      await stream.done;
      assert.equal((await post({ jsonrpc: "2.0", id: 3, method: "ping" })).status, 404, "the session ended");
    } finally {
      await stopNginx(front);
      await stopNetworkServer({ ...gw, board });
    }
  });
});
