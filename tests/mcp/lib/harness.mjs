// Test harness around the official SDK client: spawns a server over stdio, forces the
// protocol revision the client asks for, and records every message the server sends.
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { check } from "./schema.mjs";

/// A transport that wraps another: rewrites the initialize request's protocolVersion and keeps
/// every incoming message (with the method of the request it answers).
export class RecordingTransport {
  constructor(inner, revision) {
    this.inner = inner;
    this.revision = revision;
    this.received = [];      // { message, method }
    this.sentMethods = new Map();  // id -> method
    inner.onmessage = (m) => {
      const method = "id" in m && !("method" in m) ? this.sentMethods.get(m.id) : undefined;
      this.received.push({ message: m, method });
      this.onmessage?.(m);
    };
    inner.onclose = () => this.onclose?.();
    inner.onerror = (e) => this.onerror?.(e);
  }
  async start() { return this.inner.start(); }
  async close() { return this.inner.close(); }
  async send(message, options) {
    if (message.method === "initialize" && this.revision) {
      message = { ...message, params: { ...message.params, protocolVersion: this.revision } };
    }
    if ("id" in message && "method" in message) this.sentMethods.set(message.id, message.method);
    return this.inner.send(message, options);
  }
  get sessionId() { return undefined; }
  /// Every recorded server message checked against the schema of `revision`.
  schemaProblems(revision) {
    return this.received.flatMap(({ message, method }) => check(revision, message, method));
  }
  notifications(method) {
    return this.received.filter(({ message }) => message.method === method && !("id" in message)).map(({ message }) => message);
  }
}

/// Connects an SDK client to `command args` over stdio at `revision`.
export async function connect({ command, args = [], revision, capabilities = {}, handlers = [] }) {
  const inner = new StdioClientTransport({ command, args, stderr: "pipe" });
  const transport = new RecordingTransport(inner, revision);
  const client = new Client({ name: "emcp-sdk-test", version: "1.0.0" }, { capabilities });
  for (const [schema, handler] of handlers) client.setRequestHandler(schema, handler);
  await client.connect(transport);
  return { client, transport };
}

/// Waits until `predicate()` is true, polling every 20 ms, at most `ms`.
export async function waitFor(predicate, ms = 5000, what = "condition") {
  const end = Date.now() + ms;
  while (!predicate()) {
    if (Date.now() > end) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
