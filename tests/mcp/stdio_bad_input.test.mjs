// Malformed and hostile input over stdio: each line gets the answer JSON-RPC 2.0 and MCP call
// for (code and id, or no answer at all), every answer matches the official schema, and a
// ping right after each one is answered: the server keeps serving. With EMCP_TRANSPORT=qemu
// the same lines go to the firmware in QEMU over its emulated UART, through emcp-bridge.
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors node --test tests/mcp/stdio_bad_input.test.mjs
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { check } from "./lib/schema.mjs";
import { startQemu, stopQemu } from "./lib/harness.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
const QEMU = process.env.EMCP_TRANSPORT === "qemu";

/// A raw line client: send a line, read the next line the server writes.
class LineClient {
  static async open(args) {
    if (!QEMU) return new LineClient(SERVER, args);
    const qemu = await startQemu(process.env.EMCP_QEMU_MACHINE, process.env.EMCP_FIRMWARE);
    const c = new LineClient(process.env.EMCP_BRIDGE, ["--tcp", `127.0.0.1:${qemu.port}`, "--quiet"]);
    c.qemu = qemu;
    return c;
  }
  constructor(command, args) {
    this.proc = spawn(command, args, { stdio: ["pipe", "pipe", "ignore"] });
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
  async close() {
    this.proc.stdin.end();
    if (this.proc.exitCode === null) await new Promise((r) => this.proc.on("exit", r));
    if (this.qemu) await stopQemu(this.qemu);
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
