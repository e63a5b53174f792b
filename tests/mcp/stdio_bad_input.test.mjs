// Malformed and hostile input over stdio: each line gets the answer JSON-RPC 2.0 and MCP call
// for (code and id, or no answer at all), every answer matches the official schema, and a
// ping right after each one is answered: the server keeps serving. With EMCP_TRANSPORT=qemu
// the same lines go to the firmware in QEMU over its emulated UART, through emcp-bridge.
// The stateless revision 2026-07-28 has a table of its own (each line followed by a working
// server/discover): `_meta` missing or wrong, legacy methods, forged requestState and
// inputResponses, a listen flood; forged and replayed states of a real input round run against
// emcp-everything (EMCP_EVERYTHING; not on a board, whose image is the sensors one).
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors EMCP_EVERYTHING=build/native/bin/emcp-everything \
//     node --test tests/mcp/stdio_bad_input.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { check } from "./lib/schema.mjs";
import { startQemu, stopQemu } from "./lib/harness.mjs";
import { stopServer, watchServer } from "./lib/server_exit.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
const QEMU = process.env.EMCP_TRANSPORT === "qemu";
const EVERYTHING = QEMU ? null : process.env.EMCP_EVERYTHING ?? new URL("../../build/native/bin/emcp-everything", import.meta.url).pathname;

/// A raw line client: send a line, read the next line the server writes.
class LineClient {
  static async open(args, command = SERVER) {
    if (!QEMU || command !== SERVER) return new LineClient(command, args);
    const qemu = await startQemu(process.env.EMCP_QEMU_MACHINE, process.env.EMCP_FIRMWARE);
    const c = new LineClient(process.env.EMCP_BRIDGE, ["--tcp", `127.0.0.1:${qemu.port}`, "--quiet"]);
    c.qemu = qemu;
    return c;
  }
  constructor(command, args) {
    this.proc = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.watch = watchServer(this.proc, command);
    this.lines = [];
    this.waiters = [];
    createInterface({ input: this.proc.stdout }).on("line", (l) => {
      const w = this.waiters.shift();
      if (w) w(l);
      else this.lines.push(l);
    });
  }
  send(text) {
    this.sent = text;
    this.proc.stdin.write(text + "\n");
  }
  next(ms = QEMU ? 20000 : 3000) {
    if (this.lines.length) return Promise.resolve(this.lines.shift());
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => reject(new Error(`no answer within ${ms} ms; last line sent: ${String(this.sent).slice(0, 200)}`)), ms);
      this.waiters.push((l) => { clearTimeout(t); resolve(l); });
    });
  }
  /// Ends the input (or sends `by`, "SIGTERM"); the server (or the bridge) must end cleanly
  /// (server_exit.mjs).
  async close(by = "end of input") {
    try {
      await stopServer(this.watch, by);
    } finally {
      if (this.qemu) await stopQemu(this.qemu);
    }
  }
}

const init = (v) => JSON.stringify({ jsonrpc: "2.0", id: "init", method: "initialize", params: { protocolVersion: v, capabilities: {}, clientInfo: { name: "bad-input", version: "1" } } });
const deep = (n) => "[".repeat(n) + "]".repeat(n);
const big = "x".repeat(6000);

// [description, line, expected answer: {id, code, message?} or null for no answer]
const BEFORE_INIT = [
  ["truncated JSON", '{"jsonrpc":"2.0","id":1,"method":"ping"', { id: null, code: -32700 }],
  ["not JSON at all", "hello world", { id: null, code: -32700 }],
  ["empty object", "{}", { id: null, code: -32600 }],
  ["a batch before initialize", '[{"jsonrpc":"2.0","id":1,"method":"ping"}]', { id: null, code: -32600, message: /before initialize/ }],
  ["wrong jsonrpc version", '{"jsonrpc":"1.0","id":2,"method":"ping"}', { id: 2, code: -32600 }],
  ["request before initialize", '{"jsonrpc":"2.0","id":4,"method":"tools/list"}', { id: 4, code: -32600, message: /not initialized/ }],
  ["initialize with a numeric protocolVersion", '{"jsonrpc":"2.0","id":5,"method":"initialize","params":{"protocolVersion":2025}}', { id: 5, code: -32602 }],
  ["notification before initialize", '{"jsonrpc":"2.0","method":"notifications/roots/list_changed"}', null],
];

const AFTER_INIT = [
  ["method is a number", '{"jsonrpc":"2.0","id":3,"method":5}', { id: 3, code: -32600 }],
  ["missing id: a notification, never answered", '{"jsonrpc":"2.0","method":"tools/list"}', null],
  ["string id longer than 64 bytes", `{"jsonrpc":"2.0","id":"${"i".repeat(65)}","method":"ping"}`, { id: null, code: -32600, message: /id too long/ }],
  ["huge numeric id", '{"jsonrpc":"2.0","id":1e300,"method":"ping"}', { id: null, code: -32600 }],
  ["fractional id", '{"jsonrpc":"2.0","id":1.5,"method":"ping"}', { id: null, code: -32600 }],
  ["id beyond int64", '{"jsonrpc":"2.0","id":9223372036854775808,"method":"ping"}', { id: null, code: -32600 }],
  ["null id in a request", '{"jsonrpc":"2.0","id":null,"method":"ping"}', { id: null, code: -32600 }],
  ["params nested 40 deep", `{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"read_all","arguments":{"a":${deep(40)}}}}`, { id: 6, code: -32600, message: /nesting too deep/ }],
  ["invalid UTF-8 in a string", '{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"\u00ff"}}'.replace("\u00ff", "\xff"), "raw-invalid-utf8"],
  ["duplicate keys", '{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_sensor","name":"set_led"}}', { id: 8, code: -32600, message: /duplicate/ }],
  ["duplicate envelope member", '{"jsonrpc":"2.0","id":9,"id":10,"method":"ping"}', { id: 9, code: -32600, message: /duplicate member/ }],
  ["control character in a string", '{"jsonrpc":"2.0","id":11,"method":"ping","params":{"x":"a\tb"}}'.replace("\\t", "\t"), { id: null, code: -32700 }],
  ["trailing comma", '{"jsonrpc":"2.0","id":12,"method":"ping",}', { id: null, code: -32700 }],
  ["two values on one line", '{"jsonrpc":"2.0","id":13,"method":"ping"} {}', { id: null, code: -32700 }],
  ["byte order mark", '\ufeff{"jsonrpc":"2.0","id":14,"method":"ping"}', { id: null, code: -32700 }],
  ["a batch at revision 2025-11-25", '[{"jsonrpc":"2.0","id":15,"method":"ping"}]', { id: null, code: -32600, message: /batches are not part of protocol revision 2025-11-25/ }],
  ["an empty batch", "[]", { id: null, code: -32600 }],
  ["unknown method", '{"jsonrpc":"2.0","id":16,"method":"tools/frobnicate"}', { id: 16, code: -32601 }],
  ["params is a string", '{"jsonrpc":"2.0","id":17,"method":"tools/list","params":"all"}', { id: 17, code: -32600 }],
  ["tools/call without name", '{"jsonrpc":"2.0","id":18,"method":"tools/call","params":{}}', { id: 18, code: -32602 }],
  ["tools/call of an unknown tool", '{"jsonrpc":"2.0","id":19,"method":"tools/call","params":{"name":"rm_rf"}}', { id: 19, code: -32602, message: /unknown tool/ }],
  ["arguments not an object", '{"jsonrpc":"2.0","id":20,"method":"tools/call","params":{"name":"read_sensor","arguments":[1]}}', { id: 20, code: -32602 }],
  ["argument of the wrong type", '{"jsonrpc":"2.0","id":21,"method":"tools/call","params":{"name":"set_led","arguments":{"on":"yes"}}}', { id: 21, code: -32602, message: /"on" must be a boolean/ }],
  ["argument out of range", '{"jsonrpc":"2.0","id":22,"method":"tools/call","params":{"name":"sample_sensor","arguments":{"sensor":"load","interval_ms":1}}}', { id: 22, code: -32602, message: /below the minimum/ }],
  ["resources/read without uri", '{"jsonrpc":"2.0","id":23,"method":"resources/read","params":{}}', { id: 23, code: -32602 }],
  ["resources/read of an unknown uri", '{"jsonrpc":"2.0","id":24,"method":"resources/read","params":{"uri":"file:///etc/passwd"}}', { id: 24, code: -32002 }],
  ["prompts/get of an unknown prompt", '{"jsonrpc":"2.0","id":25,"method":"prompts/get","params":{"name":"x"}}', { id: 25, code: -32602 }],
  ["logging/setLevel with a bad level", '{"jsonrpc":"2.0","id":26,"method":"logging/setLevel","params":{"level":"verbose"}}', { id: 26, code: -32602 }],
  ["completion with a bad ref type", '{"jsonrpc":"2.0","id":27,"method":"completion/complete","params":{"ref":{"type":"ref/tool","name":"x"},"argument":{"name":"a","value":""}}}', { id: 27, code: -32602 }],
  ["an invalid cursor", '{"jsonrpc":"2.0","id":28,"method":"tools/list","params":{"cursor":"p999"}}', { id: 28, code: -32602 }],
  ["a response to a request never sent", '{"jsonrpc":"2.0","id":99,"result":{}}', null],
  ["an error response to a request never sent", '{"jsonrpc":"2.0","id":98,"error":{"code":-1,"message":"no"}}', null],
  // A malformed response's id numbers the server's requests, not the client's: never echoed.
  ["a response with both result and error", '{"jsonrpc":"2.0","id":1,"result":{},"error":{"code":1,"message":"x"}}', { id: null, code: -32600, message: /both result and error/ }],
  ["an error response whose error is not an object", '{"jsonrpc":"2.0","id":2,"error":5}', { id: null, code: -32600 }],
  ["a key longer than 64 bytes", `{"jsonrpc":"2.0","id":29,"method":"ping","params":{"${"k".repeat(65)}":1}}`, { id: 29, code: -32600, message: /key too long/ }],
  ["a number with 41 significant digits", `{"jsonrpc":"2.0","id":30,"method":"ping","params":{"n":${"1".repeat(41)}}}`, { id: 30, code: -32600, message: /too many digits/ }],
  ["a number beyond double", '{"jsonrpc":"2.0","id":31,"method":"ping","params":{"n":1e999}}', { id: 31, code: -32600, message: /number too large/ }],
  ["more than the 4 KiB arena holds", `{"jsonrpc":"2.0","id":32,"method":"tools/call","params":{"name":"read_all","arguments":{"a":"${big}"}}}`, { id: 32, code: -32600, message: /too large for the arena/ }],
  ["a line longer than 64 KiB", `{"jsonrpc":"2.0","id":33,"method":"tools/call","params":{"name":"read_all","arguments":{"a":"${"y".repeat(70000)}"}}}`, { id: 33, code: -32600, message: /longer than the line limit/ }],
  ["cancelling a request that is not pending", '{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":12345}}', null],
  ["a lone high surrogate escape", '{"jsonrpc":"2.0","id":34,"method":"ping","params":{"s":"\\ud800"}}', { id: null, code: -32700 }],
  // MCP tasks of 2025-11-25 (emcp-sensors on Linux has a task store; its firmware has none).
  ...(QEMU ? [] : [
    ["params.task not an object", '{"jsonrpc":"2.0","id":35,"method":"tools/call","params":{"name":"sample_sensor","arguments":{"sensor":"load"},"task":5}}', { id: 35, code: -32602, message: /task must be an object/ }],
    ["params.task with a negative ttl", '{"jsonrpc":"2.0","id":36,"method":"tools/call","params":{"name":"sample_sensor","arguments":{"sensor":"load"},"task":{"ttl":-5}}}', { id: 36, code: -32602, message: /non-negative integer/ }],
    ["params.task on a tool that does not run as a task", '{"jsonrpc":"2.0","id":37,"method":"tools/call","params":{"name":"read_sensor","arguments":{"sensor":"load"},"task":{}}}', { id: 37, code: -32601, message: /does not run as a task/ }],
    ["params.task with bad arguments: the arguments first", '{"jsonrpc":"2.0","id":38,"method":"tools/call","params":{"name":"sample_sensor","arguments":{"sensor":"x"},"task":{}}}', { id: 38, code: -32602, message: /"sensor"/ }],
    ["tasks/get of an unknown task", '{"jsonrpc":"2.0","id":39,"method":"tasks/get","params":{"taskId":"0123456789abcdef0123456789abcdef"}}', { id: 39, code: -32602, message: /Failed to retrieve task/ }],
    ["tasks/get without a taskId", '{"jsonrpc":"2.0","id":40,"method":"tasks/get","params":{}}', { id: 40, code: -32602, message: /taskId must be a string/ }],
    ["tasks/result of an unknown task", '{"jsonrpc":"2.0","id":41,"method":"tasks/result","params":{"taskId":"nope"}}', { id: 41, code: -32602 }],
    ["tasks/cancel of an unknown task", '{"jsonrpc":"2.0","id":42,"method":"tasks/cancel","params":{"taskId":7}}', { id: 42, code: -32602 }],
    ["tasks/list with an invalid cursor", '{"jsonrpc":"2.0","id":43,"method":"tasks/list","params":{"cursor":"p999"}}', { id: 43, code: -32602 }],
    ["tasks/update, a method of the 2026-07-28 extension only", '{"jsonrpc":"2.0","id":44,"method":"tasks/update","params":{"taskId":"x","inputResponses":{}}}', { id: 44, code: -32601 }],
  ]),
];

async function expectAnswer(c, revision, name, line, want, pingId) {
  if (want === "raw-invalid-utf8") {
    c.proc.stdin.write(Buffer.concat([Buffer.from('{"jsonrpc":"2.0","id":7,"method":"ping","params":{"x":"'), Buffer.from([0xff]), Buffer.from('"}}\n')]));
    want = { id: null, code: -32700 };
  } else {
    c.send(line);
  }
  c.send(JSON.stringify({ jsonrpc: "2.0", id: pingId, method: "ping" }));
  if (want !== null) {
    const answer = JSON.parse(await c.next());
    if (want.id === null) {
      // An id that could not be read: MCP 2025-11-25 (and a client that has not initialized,
      // which speaks the latest revision) has no "id" member; JSON-RPC 2.0 would say null.
      assert.equal("id" in answer, false, `${name}: no id (${JSON.stringify(answer)})`);
    } else {
      assert.equal(answer.id, want.id, `${name}: id`);
    }
    assert.equal(answer.error?.code, want.code, `${name}: code (${JSON.stringify(answer)})`);
    if (want.message) assert.match(answer.error.message, want.message, name);
    if (revision) assert.deepEqual(check(revision, answer), [], name);
  }
  const pong = JSON.parse(await c.next());
  assert.deepEqual(pong, { jsonrpc: "2.0", id: pingId, result: {} }, `${name}: the server still serves (got ${JSON.stringify(pong)})`);
}

test(`${BEFORE_INIT.length + AFTER_INIT.length} bad inputs, each answered, each followed by a working ping`, async () => {
  const c = await LineClient.open(["--simulate"]);
  try {
    let ping = 1000;
    for (const [name, line, want] of BEFORE_INIT) await expectAnswer(c, null, name, line, want, ping++);
    c.send(init("2025-11-25"));
    const answer = JSON.parse(await c.next());
    assert.equal(answer.result.protocolVersion, "2025-11-25");
    c.send('{"jsonrpc":"2.0","method":"notifications/initialized"}');
    for (const [name, line, want] of AFTER_INIT) await expectAnswer(c, "2025-11-25", name, line, want, ping++);
  } finally {
    await c.close();
  }
  assert.ok(BEFORE_INIT.length + AFTER_INIT.length >= 30);
});

test("batches at 2025-03-26: answered as an array, initialize refused inside one", async () => {
  const c = await LineClient.open(["--simulate"]);
  try {
    c.send(init("2025-03-26"));
    assert.equal(JSON.parse(await c.next()).result.protocolVersion, "2025-03-26");
    c.send(JSON.stringify([
      { jsonrpc: "2.0", id: 1, method: "ping" },
      { jsonrpc: "2.0", method: "notifications/initialized" },
      { jsonrpc: "2.0", id: 2, method: "tools/call", params: { name: "read_sensor", arguments: { sensor: "load" } } },
      { jsonrpc: "2.0", id: 3, method: "initialize", params: {} },
      7,
    ]));
    const answers = JSON.parse(await c.next());
    assert.ok(Array.isArray(answers));
    // At 2025-03-26 an unreadable id is null, as JSON-RPC 2.0 says (that revision's schema
    // has no way to write it: its RequestId is string | integer).
    assert.deepEqual(answers.map((a) => a.id), [1, 2, 3, null]);
    assert.deepEqual(answers[0].result, {});
    assert.match(answers[1].result.content[0].text, /^load: /);
    assert.equal(answers[2].error.code, -32600);
    assert.equal(answers[3].error.code, -32600);
    for (const a of answers.slice(0, 3)) assert.deepEqual(check("2025-03-26", a, a.id === 2 ? "tools/call" : "ping"), []);
    // Only notifications: no answer at all.
    c.send(JSON.stringify([{ jsonrpc: "2.0", method: "notifications/initialized" }]));
    c.send(JSON.stringify({ jsonrpc: "2.0", id: 9, method: "ping" }));
    assert.deepEqual(JSON.parse(await c.next()), { jsonrpc: "2.0", id: 9, result: {} });
  } finally {
    await c.close();
  }
});

test("re-initialize starts the session afresh", async () => {
  const c = await LineClient.open(["--simulate"]);
  try {
    c.send(init("2025-06-18"));
    assert.equal(JSON.parse(await c.next()).result.protocolVersion, "2025-06-18");
    c.send('{"jsonrpc":"2.0","id":2,"method":"logging/setLevel","params":{"level":"emergency"}}');
    assert.deepEqual(JSON.parse(await c.next()).result, {});
    c.send(init("2024-11-05"));
    const again = JSON.parse(await c.next());
    assert.equal(again.result.protocolVersion, "2024-11-05");
    assert.equal("title" in again.result.serverInfo, false);
    // The log level went back to the default (info): a tool's info log is sent again.
    c.send('{"jsonrpc":"2.0","id":3,"method":"tools/call","params":{"name":"set_led","arguments":{"on":true}}}');
    const log = JSON.parse(await c.next());
    assert.equal(log.method, "notifications/message");
    assert.equal(JSON.parse(await c.next()).id, 3);
  } finally {
    await c.close();
  }
});

test("SIGTERM in the middle of a session ends the server (on a board: the bridge) with status 0", async () => {
  const c = await LineClient.open(["--simulate"]);
  try {
    c.send(init("2025-11-25"));
    assert.equal(JSON.parse(await c.next()).result.protocolVersion, "2025-11-25");
  } finally {
    await c.close("SIGTERM");
  }
});

test("an unsupported revision is answered with the latest", async () => {
  const c = await LineClient.open(["--simulate"]);
  try {
    c.send(init("1999-01-01"));
    assert.equal(JSON.parse(await c.next()).result.protocolVersion, "2025-11-25");
  } finally {
    await c.close();
  }
});

test("the server (on a board: the bridge) exits at the end of its input", async () => {
  const c = await LineClient.open(["--simulate"]);
  try {
    c.send(init("2025-11-25"));
    await c.next();
    const code = await new Promise((resolve) => {
      c.proc.on("exit", resolve);
      c.proc.stdin.end();
    });
    assert.equal(code, 0);
  } finally {
    if (c.qemu) await stopQemu(c.qemu);
  }
});

// ---- MCP 2026-07-28 (stateless) ----------------------------------------------------------------
// Each request carries its revision and capabilities in params._meta; no initialize. Expected
// codes from the spec pages (2026-07-28/): a missing or ill-typed required _meta field -32602
// (basic/index.mdx, "Per-request protocol fields"), a revision not served -32022 with
// data.supported and data.requested (basic/versioning.mdx), a capability needed and not
// declared -32021 with data.requiredCapabilities (basic/index.mdx), a method the revision does
// not have -32601, requestState attacker-controlled: refused when it fails verification, and
// inputResponses that are not an InputResponses object a JSON-RPC error (basic/patterns/mrtr.mdx;
// -32602 as the server documents, docs/mcp.md), an unknown resource -32602 (server/resources.mdx).
// Beyond the spec, what the server documents: a message beyond the arena -32600 "message too
// large for the arena" (docs/json.md), one listen more than EMCP_MAX_LISTENS -32603 (docs/mcp.md).

const MODERN = "2026-07-28";
const PV = "io.modelcontextprotocol/protocolVersion";
const CC = "io.modelcontextprotocol/clientCapabilities";
const CAPS = { elicitation: {}, sampling: {} };
const META = { [PV]: MODERN, [CC]: CAPS };
/// A 2026-07-28 request line: `params` with `_meta` (META unless given; null leaves it out).
const modern = (id, method, params = {}, meta = META) =>
  JSON.stringify({ jsonrpc: "2.0", id, method, params: meta === null ? params : { ...params, _meta: meta } });
const readLoad = (id, extra = {}, meta = META) => modern(id, "tools/call", { name: "read_sensor", arguments: { sensor: "load" }, ...extra }, meta);
const randomState = Buffer.from("a state this server never wrote, 48 bytes long..").toString("base64url");

// [description, line, expected answer: {id, code, message?, data?} or null for no answer, method
// of the request (for the schema), { todo: reason } when the server disagrees with the spec]
const MODERN_ROWS = [
  // _meta missing, incomplete or of the wrong type: -32602.
  ["server/discover without params", '{"jsonrpc":"2.0","id":"m1","method":"server/discover"}', { id: "m1", code: -32602 }],
  ["server/discover with params an array", '{"jsonrpc":"2.0","id":"m2","method":"server/discover","params":[]}', { id: "m2", code: -32602 }],
  ["_meta a string", modern("m3", "server/discover", {}, MODERN), { id: "m3", code: -32602 }],
  ["_meta without protocolVersion", modern("m4", "tools/list", {}, { [CC]: {} }), { id: "m4", code: -32602, message: /protocolVersion/ }],
  ["_meta without clientCapabilities", modern("m5", "tools/list", {}, { [PV]: MODERN }), { id: "m5", code: -32602, message: /clientCapabilities/ }],
  ["protocolVersion a number", modern("m6", "tools/list", {}, { [PV]: 20260728, [CC]: {} }), { id: "m6", code: -32602 }],
  ["protocolVersion null", modern("m7", "tools/list", {}, { [PV]: null, [CC]: {} }), { id: "m7", code: -32602 }],
  ["clientCapabilities an array", modern("m8", "tools/list", {}, { [PV]: MODERN, [CC]: ["sampling"] }), { id: "m8", code: -32602 }],
  ["clientCapabilities a string", modern("m9", "tools/list", {}, { [PV]: MODERN, [CC]: "all" }), { id: "m9", code: -32602 }],
  ["clientCapabilities null", modern("m10", "tools/list", {}, { [PV]: MODERN, [CC]: null }), { id: "m10", code: -32602 }],
  ["a revision not served and no clientCapabilities: the missing field first", modern("m11", "tools/list", {}, { [PV]: "1999-01-01" }),
    { id: "m11", code: -32602 }],
  ["logLevel not a level", readLoad("m12", {}, { ...META, "io.modelcontextprotocol/logLevel": "loud" }), { id: "m12", code: -32602 }],
  ["logLevel a number", readLoad("m13", {}, { ...META, "io.modelcontextprotocol/logLevel": 7 }), { id: "m13", code: -32602 }],
  // Contradictory: the revision twice (no parser differentials), and a revision not served.
  ["protocolVersion twice in _meta, each different",
    `{"jsonrpc":"2.0","id":"m14","method":"tools/list","params":{"_meta":{"${PV}":"2026-07-28","${PV}":"2025-11-25","${CC}":{}}}}`,
    { id: "m14", code: -32600, message: /duplicate/ }],
  ["a revision not served", modern("m15", "tools/list", {}, { [PV]: "1999-01-01", [CC]: {} }),
    { id: "m15", code: -32022, data: { requested: "1999-01-01" } }],
  ["a legacy revision named in _meta", modern("m16", "tools/call", { name: "read_sensor", arguments: { sensor: "load" } }, { [PV]: "2025-11-25", [CC]: {} }),
    { id: "m16", code: -32022, data: { requested: "2025-11-25" } }],
  ["an empty protocolVersion", modern("m17", "server/discover", {}, { [PV]: "", [CC]: {} }), { id: "m17", code: -32022, data: { requested: "" } }],
  ["a revision not served on subscriptions/listen", modern("m18", "subscriptions/listen", { notifications: {} }, { [PV]: "2099-01-01", [CC]: {} }),
    { id: "m18", code: -32022, data: { requested: "2099-01-01" } }],
  ["a batch of 2026-07-28 requests", `[${modern("m19", "server/discover")}]`, { id: null, code: -32600 }],
  // The legacy era's methods do not exist at 2026-07-28.
  ["initialize with 2026-07-28 _meta", modern("m20", "initialize", { protocolVersion: MODERN, capabilities: {}, clientInfo: { name: "x", version: "1" } }),
    { id: "m20", code: -32601 }],
  ["ping with 2026-07-28 _meta", modern("m21", "ping"), { id: "m21", code: -32601 }],
  ["logging/setLevel with 2026-07-28 _meta", modern("m22", "logging/setLevel", { level: "debug" }), { id: "m22", code: -32601 }],
  ["resources/subscribe with 2026-07-28 _meta", modern("m23", "resources/subscribe", { uri: "sensor://load" }), { id: "m23", code: -32601 }],
  ["resources/unsubscribe with 2026-07-28 _meta", modern("m24", "resources/unsubscribe", { uri: "sensor://load" }), { id: "m24", code: -32601 }],
  ["an unknown method with 2026-07-28 _meta", modern("m25", "tools/frobnicate"), { id: "m25", code: -32601 }],
  ["a notification with 2026-07-28 _meta: never answered", JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized", params: { _meta: META } }), null],
  ["resources/read of an unknown uri: -32602, not -32002", modern("m26", "resources/read", { uri: "file:///etc/passwd" }),
    { id: "m26", code: -32602, data: { uri: "file:///etc/passwd" } }, "resources/read"],
  // requestState this server never wrote, or not a string: -32602 before the handler runs.
  ["requestState: random base64url", readLoad("m27", { requestState: randomState }), { id: "m27", code: -32602, message: /requestState/ }],
  ["requestState: not base64url", readLoad("m28", { requestState: "not base64url!" }), { id: "m28", code: -32602, message: /requestState/ }],
  ["requestState: 300 characters", readLoad("m29", { requestState: "A".repeat(300) }), { id: "m29", code: -32602, message: /requestState/ }],
  ["requestState: empty", readLoad("m30", { requestState: "" }), { id: "m30", code: -32602, message: /requestState/ }],
  ["requestState: a number", readLoad("m31", { requestState: 1 }), { id: "m31", code: -32602, message: /requestState/ }],
  ["requestState: null", readLoad("m32", { requestState: null }), { id: "m32", code: -32602, message: /requestState/ }],
  ["requestState: an object", readLoad("m33", { requestState: { round: 1 } }), { id: "m33", code: -32602, message: /requestState/ }],
  ["requestState on resources/read", modern("m34", "resources/read", { uri: "sensor://load", requestState: randomState }),
    { id: "m34", code: -32602, message: /requestState/ }, "resources/read"],
  ["requestState on prompts/get", modern("m35", "prompts/get", { name: "diagnose_device", requestState: randomState }),
    { id: "m35", code: -32602, message: /requestState/ }, "prompts/get"],
  // inputResponses that are not an object: -32602; beyond the arena: the oversize message's error.
  ["inputResponses: a number", readLoad("m36", { inputResponses: 7 }), { id: "m36", code: -32602, message: /inputResponses/ }],
  ["inputResponses: an array", readLoad("m37", { inputResponses: [{ action: "accept" }] }), { id: "m37", code: -32602, message: /inputResponses/ }],
  ["inputResponses: a string", readLoad("m38", { inputResponses: "accept" }), { id: "m38", code: -32602, message: /inputResponses/ }],
  ["inputResponses: null", readLoad("m39", { inputResponses: null }), { id: "m39", code: -32602, message: /inputResponses/ }],
  ["inputResponses beyond the arena", readLoad("m40", { inputResponses: { a: { action: "accept", content: { text: big } } } }),
    { id: "m40", code: -32600, message: /too large for the arena/ }],
  ["inputResponses beyond the arena, the id after them",
    `{"jsonrpc":"2.0","method":"tools/call","params":{"name":"read_sensor","inputResponses":{"a":"${big}"},"_meta":${JSON.stringify(META)}},"id":"m41"}`,
    { id: "m41", code: -32600, message: /too large for the arena/ }],
  ["inputResponses of 300 keys beyond the arena", readLoad("m42", { inputResponses: Object.fromEntries(Array.from({ length: 300 }, (_, i) => [`k${i}`, {}])) }),
    { id: "m42", code: -32600, message: /too large for the arena/ }],
  ["requestState beyond the arena", readLoad("m43", { requestState: "A".repeat(6000) }), { id: "m43", code: -32600, message: /too large for the arena/ }],
];

/// Reads what the server writes until the answer with `id`; returns the messages before it.
async function until(c, id) {
  const before = [];
  for (;;) {
    const m = JSON.parse(await c.next());
    if (m.id === id) return { answer: m, before };
    before.push(m);
  }
}

/// Sends `line`, then a server/discover that must be answered; checks what came before it.
async function expectModern(c, name, line, want, method, probeId) {
  c.send(line);
  c.send(modern(probeId, "server/discover"));
  const { answer: probe, before } = await until(c, probeId);
  assert.equal(probe.result?.resultType, "complete", `${name}: the server still serves (got ${JSON.stringify(probe)})`);
  assert.ok(probe.result.supportedVersions.includes(MODERN), name);
  assert.deepEqual(check(MODERN, probe, "server/discover"), [], name);
  if (want === null) return assert.deepEqual(before, [], `${name}: no answer`);
  assert.equal(before.length, 1, `${name}: one answer (got ${JSON.stringify(before).slice(0, 400)})`);
  expectError(name, before[0], want, method);
}

function expectError(name, answer, want, method) {
  if (want.id === null) assert.equal("id" in answer, false, `${name}: no id (${JSON.stringify(answer)})`);
  else assert.equal(answer.id, want.id, `${name}: id (${JSON.stringify(answer).slice(0, 300)})`);
  assert.equal(answer.error?.code, want.code, `${name}: code (${JSON.stringify(answer).slice(0, 400)})`);
  if (want.message) assert.match(answer.error.message, want.message, name);
  if (want.code === -32022) {
    assert.ok(answer.error.data?.supported?.includes(MODERN), `${name}: data.supported (${JSON.stringify(answer.error)})`);
    assert.equal(answer.error.data.requested, want.data.requested, `${name}: data.requested`);
  } else if (want.data) {
    assert.deepEqual(answer.error.data, want.data, `${name}: data`);
  }
  assert.deepEqual(check(MODERN, answer, method), [], name);
}

/// Runs rows as subtests (a row the server gets wrong is marked todo with its reason).
async function runModernRows(t, c, rows, lineOf = (line) => line) {
  let probe = 0;
  for (const [name, line, want, method, opts] of rows)
    await t.test(name, { todo: opts?.todo }, () => expectModern(c, name, lineOf(line), want, method, `probe-${++probe}`));
}

test(`2026-07-28: ${MODERN_ROWS.length} bad inputs, each answered, each followed by a working server/discover`, async (t) => {
  const c = await LineClient.open(["--simulate"]);
  try {
    await runModernRows(t, c, MODERN_ROWS);
    // A legacy client on the same stream after them is served as ever.
    c.send(init("2025-11-25"));
    assert.equal(JSON.parse(await c.next()).result.protocolVersion, "2025-11-25");
  } finally {
    await c.close();
  }
  assert.ok(MODERN_ROWS.length >= 40);
});

test("2026-07-28: a listen flood: one more than EMCP_MAX_LISTENS is -32603, cancelling frees slots", async () => {
  const c = await LineClient.open(["--simulate"]);
  const listen = (id) => modern(id, "subscriptions/listen", { notifications: { toolsListChanged: true } });
  const acked = (m, id) => m.method === "notifications/subscriptions/acknowledged" && m.params._meta["io.modelcontextprotocol/subscriptionId"] === id;
  try {
    // Listens until one is refused: their number is the server's limit (4 by default; a board
    // may build with fewer).
    const open = [];
    let refused;
    for (let i = 1; i <= 9 && !refused; ++i) {
      c.send(listen(`L${i}`));
      const m = JSON.parse(await c.next());
      if (acked(m, `L${i}`)) {
        assert.deepEqual(check(MODERN, m), [], `L${i}`);
        open.push(`L${i}`);
      } else {
        refused = m;
      }
    }
    assert.ok(refused, "a listen is refused at last");
    expectError("the listen beyond the limit", refused, { id: `L${open.length + 1}`, code: -32603, message: /EMCP_MAX_LISTENS/ }, "subscriptions/listen");
    const limit = Number(/keeps (\d+) open/.exec(refused.error.message)?.[1]);
    assert.equal(open.length, limit, `as many listens as the server says it keeps (${refused.error.message})`);
    if (!QEMU) assert.equal(limit, 4, "EMCP_MAX_LISTENS defaults to 4");
    // More of them, each refused, and a listen id already open: -32600. The server keeps serving.
    for (let i = 0; i < 3; ++i) {
      c.send(listen(`X${i}`));
      expectError(`flood ${i}`, JSON.parse(await c.next()), { id: `X${i}`, code: -32603 }, "subscriptions/listen");
    }
    c.send(listen(open[0]));
    expectError("a listen id already open", JSON.parse(await c.next()), { id: open[0], code: -32600 }, "subscriptions/listen");
    c.send(readLoad("f1"));
    assert.equal((await until(c, "f1")).answer.result?.resultType, "complete", "a tool call after the flood");
    // Cancelling frees slots: as many new listens are acknowledged, and the next is refused again.
    const freed = open.splice(0, Math.min(2, open.length));
    for (const id of freed) c.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } }));
    for (let i = 0; i < freed.length; ++i) {
      c.send(listen(`N${i}`));
      const m = JSON.parse(await c.next());
      assert.ok(acked(m, `N${i}`), `a slot freed by cancelling is taken again (got ${JSON.stringify(m)})`);
      open.push(`N${i}`);
    }
    c.send(listen("N-extra"));
    expectError("full again", JSON.parse(await c.next()), { id: "N-extra", code: -32603 }, "subscriptions/listen");
    // A freed id may listen again once it is no longer open.
    for (const id of open) c.send(JSON.stringify({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id } }));
    c.send(listen(freed[0]));
    assert.ok(acked(JSON.parse(await c.next()), freed[0]), "every slot free after cancelling all");
    c.send(modern("last", "server/discover"));
    const { answer } = await until(c, "last");
    assert.equal(answer.result?.resultType, "complete");
  } finally {
    await c.close();
  }
});

// ---- 2026-07-28 input rounds with a real requestState (emcp-everything) --------------------------

/// The requestState of a first round: `name` asked for input (an input-required result).
async function realState(c, id, method, params, meta = META) {
  c.send(modern(id, method, params, meta));
  const { answer } = await until(c, id);
  assert.equal(answer.result?.resultType, "input_required", `${method} ${JSON.stringify(params)} asks (got ${JSON.stringify(answer).slice(0, 300)})`);
  assert.deepEqual(check(MODERN, answer, method), [], method);
  assert.equal(typeof answer.result.requestState, "string");
  return answer.result.requestState;
}
/// `state` with one bit of its decoded byte `at` flipped (from the end when negative).
const flipped = (state, at, bit = 0x01) => {
  const raw = Buffer.from(state, "base64url");
  raw[at < 0 ? raw.length + at : at] ^= bit;
  return raw.toString("base64url");
};
const STATE_TOOL = "test_input_required_result_request_state";  // keeps "step-1" in its state
const CONFIRMED = { confirm: { action: "accept", content: { confirm: true } } };
const retry = (id, state, extra = {}) =>
  modern(id, "tools/call", { name: STATE_TOOL, arguments: {}, inputResponses: CONFIRMED, requestState: state, ...extra });

// Lines with S standing for a real state of STATE_TOOL (rows of MODERN_ROWS' shape).
const STATE_ROWS = [
  // (Every single-bit flip of every byte is tried below; these name a few.)
  ["a real state, its first byte flipped", (S) => retry("s1", flipped(S, 0)), { id: "s1", code: -32602, message: /requestState/ }],
  ["a real state, its second byte flipped", (S) => retry("s2", flipped(S, 1)), { id: "s2", code: -32602, message: /requestState/ }],
  ["a real state, a middle byte flipped", (S) => retry("s3", flipped(S, 12, 0x80)), { id: "s3", code: -32602, message: /requestState/ }],
  ["a real state, its last byte flipped", (S) => retry("s4", flipped(S, -1)), { id: "s4", code: -32602, message: /requestState/ }],
  ["a real state, its last character changed", (S) => retry("s5", S.slice(0, -1) + (S.endsWith("A") ? "B" : "A")), { id: "s5", code: -32602, message: /requestState/ }],
  ["a real state cut short", (S) => retry("s6", S.slice(0, -4)), { id: "s6", code: -32602, message: /requestState/ }],
  ["a real state with a character more", (S) => retry("s7", S + "A"), { id: "s7", code: -32602, message: /requestState/ }],
  ["a real state in standard base64 with padding", (S) => retry("s8", Buffer.from(S, "base64url").toString("base64").replace(/^[^=]*$/, "$&=")),
    { id: "s8", code: -32602, message: /requestState/ }],
  ["a real state replayed for another tool", (S) => modern("s9", "tools/call", { name: "test_input_required_result_elicitation", arguments: {}, requestState: S }),
    { id: "s9", code: -32602, message: /requestState/ }],
  ["a real state replayed on prompts/get", (S) => modern("s10", "prompts/get", { name: "test_input_required_result_prompt", requestState: S }),
    { id: "s10", code: -32602, message: /requestState/ }, "prompts/get"],
  ["a real state replayed on resources/read", (S) => modern("s11", "resources/read", { uri: "test://static-text", requestState: S }),
    { id: "s11", code: -32602, message: /requestState/ }, "resources/read"],
  ["a real state with inputResponses not an object", (S) => retry("s12", S, { inputResponses: [CONFIRMED] }), { id: "s12", code: -32602, message: /inputResponses/ }],
  ["a real state with inputResponses beyond the arena", (S) => retry("s13", S, { inputResponses: { confirm: { action: "accept", content: { confirm: true, pad: big } } } }),
    { id: "s13", code: -32600, message: /too large for the arena/ }],
  ["a real state as a number", (S) => retry("s14", Number.parseInt(Buffer.from(S, "base64url").toString("hex").slice(0, 12), 16)), { id: "s14", code: -32602, message: /requestState/ }],
  ["a real state inside an array", (S) => retry("s15", [S]), { id: "s15", code: -32602, message: /requestState/ }],
  // A capability the request needs and did not declare: -32021 with data.requiredCapabilities.
  ["a needed capability not declared", () => modern("s16", "tools/call", { name: "test_missing_capability", arguments: {} }, { [PV]: MODERN, [CC]: {} }),
    { id: "s16", code: -32021, data: { requiredCapabilities: { sampling: {} } } }],
];

test(`2026-07-28 input rounds: ${STATE_ROWS.length} forged, altered and replayed requestStates, each followed by a working server/discover`,
  { skip: EVERYTHING === null && "emcp-everything runs on Linux only (the board's image is the sensors one)" }, async (t) => {
    const c = await LineClient.open(["--stdio"], EVERYTHING);
    try {
      const S = await realState(c, "first", "tools/call", { name: STATE_TOOL, arguments: {} });
      await runModernRows(t, c, STATE_ROWS, (make) => make(S));
      // Each bit flipped in each byte of the state: all refused.
      const raw = Buffer.from(S, "base64url");
      for (let at = 0; at < raw.length; ++at) {
        for (let b = 0; b < 8; ++b) c.send(retry(`flip-${at}-${b}`, flipped(S, at, 1 << b)));
        for (let b = 0; b < 8; ++b) {
          const { answer } = await until(c, `flip-${at}-${b}`);
          assert.equal(answer.error?.code, -32602, `bit ${b} of byte ${at} flipped: ${JSON.stringify(answer).slice(0, 300)}`);
        }
      }
      // The real state, unaltered, still works (and again: nothing on the server is used up).
      for (const id of ["ok-1", "ok-2"]) {
        c.send(retry(id, S));
        const { answer } = await until(c, id);
        assert.equal(answer.result?.resultType, "complete", `the real state is accepted (${JSON.stringify(answer).slice(0, 300)})`);
        assert.match(answer.result.content[0].text, /came back intact/);
        assert.deepEqual(check(MODERN, answer, "tools/call"), []);
      }
    } finally {
      await c.close();
    }
  });

test("2026-07-28 input rounds: a state from another server process is refused",
  { skip: EVERYTHING === null && "emcp-everything runs on Linux only" }, async () => {
    const a = await LineClient.open(["--stdio"], EVERYTHING);
    let S;
    try {
      S = await realState(a, "a1", "tools/call", { name: STATE_TOOL, arguments: {} });
    } finally {
      await a.close();
    }
    // The same server restarted: a new key. Refused before it asked anything, and after.
    const b = await LineClient.open(["--stdio"], EVERYTHING);
    try {
      await expectModern(b, "another process's state, before it asked", retry("b1", S), { id: "b1", code: -32602, message: /requestState/ }, "tools/call", "p1");
      const own = await realState(b, "b2", "tools/call", { name: STATE_TOOL, arguments: {} });
      await expectModern(b, "another process's state, after it asked", retry("b3", S), { id: "b3", code: -32602, message: /requestState/ }, "tools/call", "p2");
      b.send(retry("b4", own));
      assert.equal((await until(b, "b4")).answer.result?.resultType, "complete", "its own state is accepted");
    } finally {
      await b.close();
    }
  });

test("2026-07-28 input rounds: only what the request declared is asked, and rounds are bounded",
  { skip: EVERYTHING === null && "emcp-everything runs on Linux only" }, async () => {
    const c = await LineClient.open(["--stdio"], EVERYTHING);
    try {
      // Nothing declared: no elicitation/create in any answer (mrtr.mdx: MUST NOT).
      for (const [i, name] of ["test_input_required_result_elicitation", "test_input_required_result_multiple_inputs"].entries()) {
        c.send(modern(`n${i}`, "tools/call", { name, arguments: {} }, { [PV]: MODERN, [CC]: {} }));
        const { answer } = await until(c, `n${i}`);
        assert.deepEqual(check(MODERN, answer, "tools/call"), [], name);
        assert.notEqual(answer.result?.resultType, "input_required", `${name} asks nothing undeclared: ${JSON.stringify(answer).slice(0, 300)}`);
      }
      // Sampling declared, elicitation and roots not: only sampling is asked.
      c.send(modern("n2", "tools/call", { name: "test_input_required_result_multiple_inputs", arguments: {} }, { [PV]: MODERN, [CC]: { sampling: {} } }));
      const { answer: some } = await until(c, "n2");
      assert.deepEqual(check(MODERN, some, "tools/call"), []);
      assert.deepEqual(Object.values(some.result?.inputRequests ?? {}).map((r) => r.method), ["sampling/createMessage"], JSON.stringify(some).slice(0, 400));
      // A client that retries without ever answering: the server stops asking within
      // EMCP_MAX_INPUT_ROUNDS (8) rounds, with an error or a final result.
      let S = await realState(c, "r0", "tools/call", { name: "test_input_required_result_elicitation", arguments: {} });
      let rounds = 1;
      for (;;) {
        c.send(modern(`r${rounds}`, "tools/call", { name: "test_input_required_result_elicitation", arguments: {}, inputResponses: {}, requestState: S }));
        const { answer } = await until(c, `r${rounds}`);
        assert.deepEqual(check(MODERN, answer, "tools/call"), [], `round ${rounds}`);
        if (answer.result?.resultType !== "input_required") {
          assert.ok(rounds > 1, "a retry without the answer is asked again (mrtr.mdx: SHOULD)");
          break;
        }
        S = answer.result.requestState;
        assert.ok(++rounds <= 8, "at most EMCP_MAX_INPUT_ROUNDS rounds");
      }
      c.send(modern("end", "server/discover"));
      assert.equal((await until(c, "end")).answer.result?.resultType, "complete");
    } finally {
      await c.close();
    }
  });
