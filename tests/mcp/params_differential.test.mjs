// Differential test of tool argument validation: for every tool the example servers publish,
// a corpus of argument objects generated from the tool's published `inputSchema` goes to the
// server (tools/call over stdio, raw JSON-RPC lines) and to an independent JSON Schema 2020-12
// validator (ajv's Ajv2020) run on that same schema; emcp's accept/reject must match ajv's.
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors EMCP_EVERYTHING=build/native/bin/emcp-everything \
//     node --test --test-reporter=spec tests/mcp/params_differential.test.mjs
//
// emcp "rejects" when the call is answered with -32602 and the message of its argument check
// (core/src/mcp/server.cpp, check_arguments: "Invalid params: argument \"x\" ..." or
// "Invalid params: arguments ..."); it "accepts" when the tool ran: a result (isError results
// too), or a progress notification for the call (the handler runs only after the check; the
// call is then cancelled so long tools end at once). Anything else (another error, no answer
// within the time limit, a server message the official schema refuses, the server exiting)
// fails the test. Requests the server sends while a tool runs (sampling, elicitation, roots)
// are answered.
//
// Tools whose schema uses keywords the Param writer never writes ($ref, additionalProperties,
// ...) come from `with_input_schema`: emcp checks only that their arguments are an object
// (docs/mcp.md). For them a subtest checks exactly that: every case of their corpus (each an
// object) reaches the handler, so emcp refuses nothing the schema allows and lets through all
// the schema refuses (their count is printed; the corpus must have some).
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import Ajv2020 from "ajv/dist/2020.js";
import { check } from "./lib/schema.mjs";
import { stderrTail, stopServer, watchServer } from "./lib/server_exit.mjs";

const REVISION = "2025-11-25";
const build = (name) => new URL(`../../build/native/bin/${name}`, import.meta.url).pathname;
const SERVERS = [
  // A small page size, so that tools/list is followed across pages.
  { name: "emcp-sensors", command: process.env.EMCP_SENSORS ?? build("emcp-sensors"), args: ["--simulate", "--page-size", "5"] },
  { name: "emcp-everything", command: process.env.EMCP_EVERYTHING ?? build("emcp-everything"), args: ["--stdio"] },
  // The unit tests' fixture application: nested object and array parameters, an integer without
  // declared bounds, a tool whose handler refuses odd numbers itself (even).
  { name: "emcp-fixture-stdio", command: process.env.EMCP_FIXTURE ?? build("emcp-fixture-stdio"), args: [] },
];
const CALL_TIMEOUT_MS = 5000;

// ---- The judge ------------------------------------------------------------------------------

// ajv 8 (tests/mcp/package.json pins it). Options spelled out where they decide verdicts:
// - Ajv2020: JSON Schema 2020-12, MCP 2025-11-25's default dialect for inputSchema.
// - format is an annotation in 2020-12 (format-annotation vocabulary), not an assertion.
// - never change the instance: no type coercion, no defaults filled in, nothing removed.
// - strict: false: keywords ajv does not know are ignored (annotations), as the spec has it.
// - minLength/maxLength count code points (ucs2length: a surrogate pair is one character);
//   ajv 8 always does (its `unicode` option is deprecated, only `unicode: false` changes it).
function makeJudge() {
  return new Ajv2020({
    strict: false, allErrors: true, validateFormats: false,
    coerceTypes: false, useDefaults: false, removeAdditional: false,
  });
}

// ---- The corpus -----------------------------------------------------------------------------

/// JSON text written as is (numbers like 3.0 or 1e2, strings with \u escapes).
class Raw {
  constructor(text) { this.text = text; }
}
/// An object whose member names are given as JSON text (escaped names).
class RawObject {
  constructor(entries) { this.entries = entries; }  // [[JSON string literal, value]]
}

function toJson(v) {
  if (v instanceof Raw) return v.text;
  if (v instanceof RawObject) return `{${v.entries.map(([k, x]) => `${k}:${toJson(x)}`).join(",")}}`;
  if (Array.isArray(v)) return `[${v.map(toJson).join(",")}]`;
  if (v !== null && typeof v === "object") return `{${Object.entries(v).map(([k, x]) => `${JSON.stringify(k)}:${toJson(x)}`).join(",")}}`;
  return JSON.stringify(v);
}

// The keywords emcp's Param writer produces (core/src/mcp/schema.cpp, write_param_schema).
const PARAM_VOCABULARY = new Set(["type", "properties", "required", "title", "description", "enum", "minimum",
  "maximum", "minLength", "maxLength", "format", "minItems", "maxItems", "items", "default", "x-mcp-header"]);

/// The keywords of `schema` (at any depth) the Param writer never writes.
function foreignKeywords(schema, out = new Set(), depth = 0) {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema) || depth > 16) return out;
  for (const [k, v] of Object.entries(schema)) {
    if (!PARAM_VOCABULARY.has(k)) out.add(k);
    else if (k === "type" && typeof v !== "string") out.add("type (a list)");
    else if (k === "properties") for (const p of Object.values(v ?? {})) foreignKeywords(p, out, depth + 1);
    else if (k === "items") foreignKeywords(v, out, depth + 1);
  }
  return out;
}

// One value of each JSON type (integer 7 is a number too; 1.5 is a number, not an integer).
const TYPE_SAMPLES = [["a string", "x"], ["a number", 1.5], ["an integer", 7], ["a boolean", true], ["null", null], ["an array", []], ["an object", {}]];
// Characters of 2, 3 and 4 bytes in UTF-8 (the last one is a surrogate pair in UTF-16).
const WIDE = [["é", 2, "\\u00e9"], ["€", 3, "\\u20ac"], ["🔥", 4, "\\ud83d\\udd25"]];
const BYTE_BUDGET = 1800;  // bytes of wide characters per string: requests stay well inside a 4 KiB arena
const MAX_DEPTH = 6;       // follows the schema, not the input

class Corpus {
  constructor(root) {
    this.root = root;
  }

  resolve(s) {
    for (let i = 0; i < 8 && s && typeof s === "object" && typeof s.$ref === "string"; ++i) {
      if (!s.$ref.startsWith("#")) return {};
      let node = this.root;
      for (const part of s.$ref.slice(1).split("/").slice(1)) {
        node = node?.[decodeURIComponent(part).replace(/~1/g, "/").replace(/~0/g, "~")];
      }
      s = node ?? {};
    }
    return s && typeof s === "object" ? s : {};
  }

  types(s) {
    if (typeof s.type === "string") return [s.type];
    if (Array.isArray(s.type)) return s.type;
    if (s.properties) return ["object"];
    if (s.items) return ["array"];
    return [];
  }

  /// A value the schema most likely accepts (the judge decides; this only builds cases).
  valid(schema, depth = 0) {
    const s = this.resolve(schema);
    if ("const" in s) return s.const;
    if (s.default !== undefined) return s.default;
    if (Array.isArray(s.enum) && s.enum.length) return s.enum[0];
    const alt = s.anyOf ?? s.oneOf ?? s.allOf;
    if (Array.isArray(alt) && alt.length) return this.valid(alt[0], depth + 1);
    if (depth > MAX_DEPTH) return null;
    switch (this.types(s)[0]) {
      case "string": {
        const n = Math.max(s.minLength ?? 0, 1);
        return "a".repeat(s.maxLength !== undefined ? Math.min(n, s.maxLength) : n);
      }
      case "integer": return this.inRange(s, [1, 0, 10, -1], true);
      case "number": return this.inRange(s, [1.5, 1, 0, -1.5], false);
      case "boolean": return true;
      case "null": return null;
      case "array": {
        const n = Math.min(Math.max(s.minItems ?? 0, 1), s.maxItems ?? 1);
        return Array.from({ length: n }, () => this.valid(s.items ?? {}, depth + 1));
      }
      case "object": {
        const o = {};
        for (const k of s.required ?? []) o[k] = this.valid(s.properties?.[k] ?? {}, depth + 1);
        return o;
      }
      default: return "x";
    }
  }

  inRange(s, candidates, integral) {
    const lo = s.minimum ?? (s.exclusiveMinimum !== undefined ? s.exclusiveMinimum + (integral ? 1 : 0.5) : undefined);
    const hi = s.maximum ?? (s.exclusiveMaximum !== undefined ? s.exclusiveMaximum - (integral ? 1 : 0.5) : undefined);
    for (const c of [...candidates, lo, hi]) {
      if (c !== undefined && (lo === undefined || c >= lo) && (hi === undefined || c <= hi)) return integral ? Math.ceil(c) : c;
    }
    return lo ?? hi ?? 0;
  }

  /// [label, value] pairs for one property's value: every JSON type, then what its keywords
  /// make interesting (bounds, lengths, enum members and near misses, nested cases).
  variants(schema, depth) {
    const s = this.resolve(schema);
    const out = TYPE_SAMPLES.map(([t, v]) => [`${t} (${toJson(v)})`, v]);
    const types = this.types(s);
    if (Array.isArray(s.enum)) out.push(...this.enumVariants(s.enum));
    if ("const" in s) out.push(...this.enumVariants([s.const]));
    if (types.includes("string") && !Array.isArray(s.enum)) out.push(...this.stringVariants(s));
    if (types.includes("integer") || types.includes("number")) out.push(...this.numberVariants(s, !types.includes("number")));
    if (types.includes("boolean")) out.push(["false", false], ['the string "true"', "true"], ["0", 0], ["1", 1]);
    if (types.includes("array") && depth < MAX_DEPTH) out.push(...this.arrayVariants(s, depth));
    if (types.includes("object") && depth < MAX_DEPTH) {
      for (const [label, v] of this.objectCases(s, depth + 1)) out.push([`object: ${label}`, v]);
    }
    if (s.default !== undefined) out.push([`its default (${toJson(s.default)})`, s.default]);
    return out;
  }

  enumVariants(values) {
    const out = [];
    for (const e of values) {
      out.push([`member ${toJson(e)}`, e]);
      if (typeof e !== "string") continue;
      out.push([`member ${toJson(e)} written with \\u escapes`, new Raw(`"${[...e].map((c) => `\\u${c.codePointAt(0).toString(16).padStart(4, "0")}`).join("")}"`)]);
    }
    const e = values.find((v) => typeof v === "string" && v.length > 1);
    if (e !== undefined) {
      const near = [
        ["first letter case changed", e[0] === e[0].toUpperCase() ? e[0].toLowerCase() + e.slice(1) : e[0].toUpperCase() + e.slice(1)],
        ["upper case", e.toUpperCase()],
        ["trailing space", `${e} `],
        ["leading space", ` ${e}`],
        ["last character dropped", e.slice(0, -1)],
        ["one character more", `${e}s`],
        ["a NUL appended", `${e}\u0000`],
        ["a Cyrillic homoglyph", e.replace(/[aeo]/, (c) => ({ a: "а", e: "е", o: "о" })[c])],
        ["an accent added", e.replace(/[aeo]/, (c) => ({ a: "á", e: "é", o: "ó" })[c])],
        ["empty string", ""],
      ];
      for (const [label, v] of near) if (!values.includes(v)) out.push([`near miss of ${toJson(e)}: ${label} (${toJson(v)})`, v]);
    }
    return out;
  }

  stringVariants(s) {
    const lengths = new Set([0, 1]);
    for (const n of [s.minLength, s.maxLength]) if (n !== undefined) { lengths.add(n - 1); lengths.add(n); lengths.add(n + 1); }
    if (s.minLength === undefined && s.maxLength === undefined) lengths.add(300);
    const out = [];
    for (const n of [...lengths].filter((x) => x >= 0).sort((a, b) => a - b)) {
      out.push([`${n} ASCII characters`, "a".repeat(n)]);
      if (n === 0) continue;
      for (const [ch, bytes] of WIDE) {
        const k = Math.min(n, Math.floor(BYTE_BUDGET / bytes));
        out.push([`${n} code points: ${k} × "${ch}" (${bytes} bytes in UTF-8)${k < n ? " and ASCII" : ""}`, ch.repeat(k) + "a".repeat(n - k)]);
      }
      const k = Math.min(n, 150);
      const [ch, , escaped] = WIDE[2];
      out.push([`${n} code points: ${k} × "${ch}" written as \\u surrogate pairs${k < n ? ", and ASCII" : ""}`, new Raw(`"${escaped.repeat(k)}${"a".repeat(n - k)}"`)]);
    }
    return out;
  }

  numberVariants(s, integral) {
    const out = [];
    const add = (label, v) => out.push([label, v]);
    const bounds = [["minimum", s.minimum, -1], ["maximum", s.maximum, 1]];
    for (const [name, b, dir] of bounds) {
      if (typeof b !== "number") continue;
      // The judge compares doubles: an integral bound beyond 2^53 (int64's ends: 2^63 - 1 reads
      // as 2^63) is not what the server compares with, so cases at it prove nothing. The wire
      // fixtures check int64's ends exactly; the cases beyond int64 below stay decidable.
      if (!Number.isSafeInteger(b) && Number.isInteger(b)) continue;
      add(`at its ${name} (${b})`, b);
      add(`at its ${name}, written ${b}.0`, new Raw(`${b}.0`));
      add(`at its ${name}, written with an exponent (${b}e0)`, new Raw(`${b}e0`));
      add(`1 beyond its ${name} (${b + dir})`, b + dir);
      add(`0.5 beyond its ${name} (${b + dir / 2})`, b + dir / 2);
      add(`0.5 inside its ${name} (${b - dir / 2})`, b - dir / 2);
      add(`a millionth beyond its ${name}`, b + dir * 1e-6);
    }
    for (const [name, b, dir] of [["exclusiveMinimum", s.exclusiveMinimum, -1], ["exclusiveMaximum", s.exclusiveMaximum, 1]]) {
      if (typeof b !== "number") continue;
      add(`at its ${name} (${b})`, b);
      add(`1 inside its ${name} (${b - dir})`, b - dir);
      add(`1 beyond its ${name} (${b + dir})`, b + dir);
    }
    const mid = this.inRange(s, [1, 0, 10], true);
    add(`an integral value written with a fraction (${mid}.0)`, new Raw(`${mid}.0`));
    add(`an integral value written ${mid * 10}e-1`, new Raw(`${mid * 10}e-1`));
    add(`an integral value with a fraction of 0.5 (${mid + 0.5})`, mid + 0.5);
    add("minus zero", new Raw("-0"));
    add("zero written 0.0", new Raw("0.0"));
    add("-1", -1);
    add("1e20: integral, beyond int64", new Raw("1e20"));
    add("-1e20: integral, beyond int64", new Raw("-1e20"));
    // The doubles next to int64's ends, beyond them (exact in both judges' arithmetic).
    add("2^63 + 2048: integral, beyond int64", new Raw("9223372036854777856"));
    add("-2^63 - 2048: integral, beyond int64", new Raw("-9223372036854777856"));
    add("2^53 + 2: integral, exact as a double", new Raw("9007199254740994"));
    add("1e300", new Raw("1e300"));
    add("-1e300", new Raw("-1e300"));
    add("1e-300", new Raw("1e-300"));
    if (!integral) add("a fraction (0.25)", 0.25);
    return out;
  }

  arrayVariants(s, depth) {
    const out = [];
    const item = s.items ?? {};
    const good = () => this.valid(item, depth + 1);
    const lengths = new Set([0, 1]);
    for (const n of [s.minItems, s.maxItems]) if (n !== undefined) { lengths.add(n - 1); lengths.add(n); lengths.add(n + 1); }
    for (const n of [...lengths].filter((x) => x >= 0 && x <= 64).sort((a, b) => a - b)) {
      out.push([`an array of ${n} valid items`, Array.from({ length: n }, good)]);
    }
    // Each item variant once: at the end of an array that otherwise has its minimum of valid items.
    const pad = Math.max((s.minItems ?? 0) - 1, 1);
    for (const [label, v] of this.variants(item, depth + 1)) {
      out.push([`an array whose last item is ${label}`, [...Array.from({ length: pad }, good), v]]);
    }
    return out;
  }

  /// [label, object] pairs for an object schema.
  objectCases(schema, depth = 0) {
    const s = this.resolve(schema);
    const props = s.properties ?? {};
    const required = (s.required ?? []).filter((k) => typeof k === "string");
    const names = Object.keys(props);
    const base = {};
    for (const k of required) base[k] = this.valid(props[k] ?? {}, depth);
    const full = { ...base };
    for (const k of names) if (!(k in full)) full[k] = this.valid(props[k], depth);
    const out = [["empty object", {}], ["required members only", base], ["every member", full]];
    for (const k of names) {
      const optional = !required.includes(k);
      if (optional) out.push([`required members and "${k}"`, { ...base, [k]: full[k] }]);
      for (const [label, v] of this.variants(props[k], depth)) out.push([`"${k}": ${label}`, { ...base, [k]: v }]);
    }
    for (const k of required) {
      const without = (o) => Object.fromEntries(Object.entries(o).filter(([m]) => m !== k));
      out.push([`"${k}" missing`, without(base)]);
      if (names.length > 1) out.push([`every member but "${k}"`, without(full)]);
    }
    // Members the schema does not declare (additionalProperties decides, or allows them).
    for (const [t, v] of TYPE_SAMPLES) out.push([`an undeclared member (${t})`, { ...base, zz_undeclared: v }]);
    for (const k of names) {
      const other = k[0] === k[0].toUpperCase() ? k.toLowerCase() : k[0].toUpperCase() + k.slice(1);
      if (other === k || names.includes(other)) continue;
      const renamed = Object.fromEntries(Object.entries(full).map(([m, x]) => [m === k ? other : m, x]));
      out.push([`"${k}" spelt "${other}"`, renamed]);
      out.push([`"${k}" and also "${other}"`, { ...full, [other]: full[k] }]);
    }
    out.push(['an empty member name', { ...base, "": 1 }]);
    // The same members with a name written with \u escapes: the same object.
    const first = Object.keys(full)[0];
    if (first && !/^[\ud800-\udfff]/.test(first)) {
      const esc = `"\\u${first.charCodeAt(0).toString(16).padStart(4, "0")}${JSON.stringify(first.slice(1)).slice(1)}`;
      out.push([`"${first}" written with a \\u escape`, new RawObject(Object.entries(full).map(([m, x]) => [m === first ? esc : JSON.stringify(m), x]))]);
    }
    return out;
  }
}

/// The corpus of one tool: [{ label, text }] with distinct argument texts.
function corpusFor(inputSchema) {
  const seen = new Set();
  const cases = [];
  for (const [label, value] of new Corpus(inputSchema).objectCases(inputSchema)) {
    const text = toJson(value);
    if (seen.has(text)) continue;
    seen.add(text);
    cases.push({ label, text });
  }
  return cases;
}

// ---- The server, over stdio -----------------------------------------------------------------

/// JSON-RPC over the server's stdin/stdout: requests by id (answered, or settled by a progress
/// notification for their token), the server's own requests answered, every server message
/// checked against the official schema of the revision.
class Peer {
  constructor({ command, args, name }) {
    this.name = name;
    this.proc = spawn(command, args, { stdio: ["pipe", "pipe", "pipe"] });
    this.watch = watchServer(this.proc, name);
    this.pending = new Map();    // id -> { method, resolve, reject, timer, token }
    this.methods = new Map();    // id -> method (for the schema check of late answers)
    this.cancelled = new Set();  // ids cancelled after their progress: a late answer is fine
    this.problems = [];          // server messages that are wrong, or not expected
    this.serverRequests = new Map();  // method -> count
    this.nextId = 1;
    this.proc.stdin.on("error", () => {});  // a server that died: its exit reports it
    this.exited = new Promise((resolve) => {
      const ended = (why) => {
        if (this.exit) return;
        this.exit = why;
        for (const p of this.pending.values()) {
          clearTimeout(p.timer);
          p.reject(new Error(`${this.name} ended (${why}) during ${p.method}; stderr: ${stderrTail(this.watch.stderr())}`));
        }
        this.pending.clear();
        resolve();
      };
      this.proc.once("exit", (code, signal) => ended(`exit code ${code}, signal ${signal}`));
      this.proc.once("error", (e) => ended(`could not run ${command}: ${e.message}`));
    });
    createInterface({ input: this.proc.stdout }).on("line", (line) => this.onLine(line));
  }

  send(message) {
    this.proc.stdin.write(typeof message === "string" ? `${message}\n` : `${JSON.stringify(message)}\n`);
  }

  onLine(line) {
    let m;
    try {
      m = JSON.parse(line);
    } catch {
      this.problems.push(`not JSON: ${line.slice(0, 300)}`);
      return;
    }
    const isResponse = m && typeof m === "object" && "id" in m && !("method" in m);
    this.problems.push(...check(REVISION, m, isResponse ? this.methods.get(m.id) : undefined));
    if (isResponse) {
      const p = this.pending.get(m.id);
      if (p) {
        this.pending.delete(m.id);
        clearTimeout(p.timer);
        p.resolve({ response: m });
      } else if (!this.cancelled.has(m.id)) {
        this.problems.push(`an answer to no request of ours: ${line.slice(0, 300)}`);
      }
      return;
    }
    if (m.method && "id" in m) return this.answerServerRequest(m);
    if (m.method === "notifications/progress") {
      for (const [id, p] of this.pending) {
        if (p.token === undefined || p.token !== m.params?.progressToken) continue;
        this.pending.delete(id);
        clearTimeout(p.timer);
        // The handler runs: the arguments passed the check. Stop the call (long tools).
        this.cancelled.add(id);
        this.send({ jsonrpc: "2.0", method: "notifications/cancelled", params: { requestId: id, reason: "verdict known" } });
        p.resolve({ progress: m });
      }
    }
  }

  // What a client that declared sampling, elicitation and roots answers.
  answerServerRequest(m) {
    this.serverRequests.set(m.method, (this.serverRequests.get(m.method) ?? 0) + 1);
    const results = {
      "sampling/createMessage": { role: "assistant", content: { type: "text", text: "no model here" }, model: "none", stopReason: "endTurn" },
      "elicitation/create": { action: "decline" },
      "roots/list": { roots: [] },
      ping: {},
    };
    if (m.method in results) this.send({ jsonrpc: "2.0", id: m.id, result: results[m.method] });
    else {
      this.problems.push(`an unexpected request from the server: ${m.method}`);
      this.send({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
    }
  }

  /// Sends a request (an object, or its JSON text with `id`); resolves with { response } or,
  /// when `token` is given, possibly { progress }; rejects after `ms`.
  request(method, params, { id = this.nextId++, text, token, ms = CALL_TIMEOUT_MS } = {}) {
    if (this.exit) return Promise.reject(new Error(`${this.name} has ended (${this.exit})`));
    this.methods.set(id, method);
    const line = text ?? JSON.stringify({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.pending.delete(id);
        this.cancelled.add(id);
        reject(new Error(`no answer within ${ms} ms to ${method}: ${line.slice(0, 300)}`));
      }, ms);
      this.pending.set(id, { method, resolve, reject, timer, token });
      this.send(line);
    });
  }

  /// Ends the input and waits for the server; what is wrong with how it ended (server_exit.mjs:
  /// exit status 0, no sanitizer report), or null.
  async close() {
    return stopServer(this.watch, "end of input").then(() => null, (e) => e.message);
  }
}

async function startSession(peer) {
  const init = await peer.request("initialize", {
    protocolVersion: REVISION,
    capabilities: { sampling: {}, elicitation: { form: {} }, roots: { listChanged: false } },
    clientInfo: { name: "emcp-params-differential", version: "1.0.0" },
  });
  assert.equal(init.response.result?.protocolVersion, REVISION, `initialize: ${JSON.stringify(init.response)}`);
  peer.send({ jsonrpc: "2.0", method: "notifications/initialized" });
  const tools = [];
  let cursor;
  let pages = 0;
  do {
    const { response } = await peer.request("tools/list", cursor === undefined ? {} : { cursor });
    assert.ok(response.result, `tools/list: ${JSON.stringify(response)}`);
    tools.push(...response.result.tools);
    cursor = response.result.nextCursor;
    assert.ok(++pages <= 64, "tools/list pages do not end");
  } while (cursor !== undefined);
  return { tools, pages };
}

// "Invalid params: " + check_arguments' texts; "arguments must be an object" is the protocol
// check of tools/call (never sent here: every corpus entry is an object).
const VALIDATION_MESSAGE = /^Invalid params: (argument "|arguments (?!must be an object$))/;

/// emcp's verdict on one call: { verdict: "accept" | "reject", detail } or { unexpected }.
/// A tool that runs only as a task (execution.taskSupport "required", 2025-11-25) is called with
/// params.task, for 1 ms (the server frees it at once): its task is created only once the
/// arguments passed.
async function emcpVerdict(peer, tool, argsText, asTask) {
  const id = peer.nextId++;
  const token = `diff-${id}`;
  const text = `{"jsonrpc":"2.0","id":${id},"method":"tools/call","params":{"name":${JSON.stringify(tool)},`
    + `"arguments":${argsText},${asTask ? `"task":{"ttl":1},` : ""}"_meta":{"progressToken":${JSON.stringify(token)}}}}`;
  let outcome;
  try {
    outcome = await peer.request("tools/call", undefined, { id, text, token });
  } catch (e) {
    return { unexpected: e.message };
  }
  if (outcome.progress) return { verdict: "accept", detail: "the tool ran (progress notification; cancelled)" };
  const m = outcome.response;
  if (m.result?.task) return { verdict: "accept", detail: `a task was created (${m.result.task.status})` };
  if (m.result) {
    const first = m.result.content?.find((c) => c.type === "text")?.text ?? "";
    return { verdict: "accept", detail: `${m.result.isError ? "isError result" : "result"}${first ? `: ${first.slice(0, 80)}` : ""}` };
  }
  if (m.error?.code === -32602 && VALIDATION_MESSAGE.test(m.error.message ?? "")) return { verdict: "reject", detail: m.error.message };
  // A handler's own refusal (ToolCall::invalid_params) comes after validation let the call through.
  if (m.error?.code === -32602 && !/^Invalid params: argument/.test(m.error.message ?? "")) {
    return { verdict: "accept", detail: `the handler refused: ${m.error.message}` };
  }
  return { unexpected: `not a validation verdict: ${JSON.stringify(m).slice(0, 300)}` };
}

function explain({ tool, label, text, emcp, ajv }) {
  const args = text.length > 240 ? `${text.slice(0, 240)}... (${text.length} characters)` : text;
  return [
    `${tool}: ${label}`,
    `    arguments: ${args}`,
    `    emcp: ${emcp.verdict ?? "?"} (${emcp.detail ?? emcp.unexpected})`,
    `    ajv:  ${ajv.valid ? "accept" : "reject"}${ajv.valid ? "" : ` ${JSON.stringify(ajv.errors.map(({ instancePath, keyword, message }) => ({ instancePath, keyword, message })))}`}`,
  ].join("\n");
}

// ---- The tests ------------------------------------------------------------------------------

const totals = { cases: 0, byServer: {} };

for (const server of SERVERS) {
  test(`${server.name}: emcp's argument validation agrees with ajv (JSON Schema 2020-12) on every published inputSchema`, { timeout: 120_000 }, async (t) => {
    const peer = new Peer(server);
    let ending = null;       // how the server ended, if not cleanly
    const judge = makeJudge();
    const rows = [];         // { tool, label, text, emcp, ajv, raw }
    const perTool = [];
    let silent = 0;          // calls in a row without an answer
    try {
      const { tools, pages } = await startSession(peer);
      const withSchema = tools.filter((tool) => tool.inputSchema && typeof tool.inputSchema === "object");
      assert.ok(withSchema.length > 0, `${server.name} publishes no tool with an inputSchema`);
      t.diagnostic(`${server.name}: ${tools.length} tools on ${pages} page(s) of tools/list`);
      for (const tool of withSchema) {
        const foreign = [...foreignKeywords(tool.inputSchema)];
        const validate = judge.compile(tool.inputSchema);
        const cases = corpusFor(tool.inputSchema);
        assert.ok(cases.length > 0, `${tool.name}: empty corpus`);
        let accepted = 0;
        let rejected = 0;
        for (const c of cases) {
          const instance = JSON.parse(c.text);  // the judge sees exactly what the server is sent
          const valid = validate(instance);
          const ajv = { valid, errors: valid ? [] : validate.errors };
          if (valid) ++accepted; else ++rejected;
          const emcp = await emcpVerdict(peer, tool.name, c.text, tool.execution?.taskSupport === "required");
          rows.push({ tool: tool.name, label: c.label, text: c.text, emcp, ajv, raw: foreign.length > 0 });
          // A server that stopped answering: do not wait out every case (the limit of the test).
          silent = emcp.unexpected?.startsWith("no answer") ? silent + 1 : 0;
          if (silent === 3 || peer.exit) throw new Error(`${server.name} stopped answering:\n${rows.slice(-3).map(explain).join("\n")}`);
        }
        // The generator must give the judge something to decide: a schema with properties yields
        // both verdicts, an empty one at least the accepted ones.
        assert.ok(accepted > 0, `${tool.name}: ajv accepts no case of the corpus`);
        if (Object.keys(tool.inputSchema.properties ?? {}).length) assert.ok(rejected > 0, `${tool.name}: ajv rejects no case of the corpus`);
        perTool.push({ tool: tool.name, cases: cases.length, accepted, rejected, foreign });
      }
      // Still serving after all of it.
      const { response } = await peer.request("ping", {});
      assert.deepEqual(response.result, {}, "ping after the corpus");
    } finally {
      ending = await peer.close();
    }

    if (process.env.EMCP_DIFF_VERBOSE) for (const r of rows) console.log(explain(r));
    const total = rows.length;
    totals.cases += total;
    totals.byServer[server.name] = total;
    for (const p of perTool) {
      t.diagnostic(`${p.tool}: ${p.cases} cases (ajv accepts ${p.accepted}, rejects ${p.rejected})`
        + (p.foreign.length ? ` [not a Param schema: ${p.foreign.join(", ")}]` : ""));
    }
    const asked = [...peer.serverRequests].map(([m, n]) => `${m} ×${n}`).join(", ");
    t.diagnostic(`${server.name}: ${total} cases on ${perTool.length} tools${asked ? `; server requests answered: ${asked}` : ""}`);
    assert.ok(total > 0, `${server.name}: empty corpus`);

    const unexpected = rows.filter((r) => r.emcp.unexpected);
    const differs = (r) => !r.emcp.unexpected && (r.emcp.verdict === "accept") !== r.ajv.valid;
    // Raw schemas are judged by the subtest below (what docs/mcp.md says), not by ajv.
    const disagreements = rows.filter((r) => differs(r) && !r.raw);
    const failures = [
      ...peer.problems.map((p) => `server message: ${p}`),
      ...(ending === null ? [] : [ending]),
      ...unexpected.map((r) => `no verdict: ${explain(r)}`),
      ...disagreements.map((r) => `disagreement: ${explain(r)}`),
    ];
    assert.ok(failures.length === 0,
      `${server.name}: ${disagreements.length} disagreement(s) and ${unexpected.length} call(s) without a verdict in ${total} cases, `
      + `${peer.problems.length} wrong server message(s):\n${failures.join("\n")}`);

    if (perTool.some((p) => p.foreign.length)) {
      await t.test("tools with a raw inputSchema (with_input_schema): emcp checks only that arguments is an object (docs/mcp.md)", (st) => {
        const raw = rows.filter((r) => r.raw && !r.emcp.unexpected);
        // Every case is an object: each reaches the handler, whatever the schema says of it.
        const refused = raw.filter((r) => r.emcp.verdict !== "accept");
        assert.ok(refused.length === 0, `emcp refused ${refused.length} arguments object(s) of a raw schema:\n${refused.map(explain).join("\n")}`);
        // So it lets through exactly the cases the schema refuses: the corpus must have some.
        const schemaRefuses = raw.filter((r) => !r.ajv.valid);
        assert.ok(schemaRefuses.length > 0, "no case of the raw schemas' corpus is refused by ajv: nothing shows what emcp lets through");
        st.diagnostic(`${raw.length} cases of raw inputSchemas, all let through; ajv refuses ${schemaRefuses.length} of them`);
      });
    }
  });
}

test("the corpus is not empty", () => {
  const parts = Object.entries(totals.byServer).map(([s, n]) => `${s} ${n}`).join(", ");
  console.log(`params differential: ${totals.cases} cases (${parts})`);
  assert.equal(Object.keys(totals.byServer).length, SERVERS.length, "a server's test did not finish");
  assert.ok(totals.cases > 0, "no case was run");
});
