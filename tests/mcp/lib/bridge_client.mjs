// A line client on emcp-bridge's stdio (stdio mode), for the tests of the bridge itself: its
// messages by id, every one in order, its stderr; ending its input must end the bridge cleanly
// (lib/server_exit.mjs: status 0, no sanitizer report; end() throws otherwise).
import { spawn } from "node:child_process";
import { createInterface } from "node:readline";
import { stopServer, watchServer } from "./server_exit.mjs";

/// Starts `bridge` (the emcp-bridge program) with `args`; `procs`, when given, collects the
/// process so that a test's after() can kill what is left of a failed test.
export function bridgeClient(bridge, args, procs = null) {
  const p = spawn(bridge, args, { stdio: ["pipe", "pipe", "pipe"] });
  procs?.push(p);
  const watch = watchServer(p, "emcp-bridge");
  const waiting = new Map();
  const notes = [];  // the messages without an id
  const all = [];    // every message, in order
  const stderr = () => watch.stderr();
  createInterface({ input: p.stdout }).on("line", (l) => {
    const m = JSON.parse(l);
    all.push(m);
    if (!("id" in m)) { notes.push(m); return; }
    const w = waiting.get(m.id);
    if (w) { waiting.delete(m.id); w(m); }
  });
  const send = (msg) => p.stdin.write(JSON.stringify(msg) + "\n");
  return {
    proc: p,
    notes,
    all,
    stderr,
    send,
    /// Sends a request; resolves with its answer, rejects after `ms` with the bridge's stderr.
    call(msg, ms = 20000) {
      return new Promise((resolve, reject) => {
        const t = setTimeout(() => reject(new Error(`no answer to ${JSON.stringify(msg.id)}; bridge said: ${stderr().slice(-3000)}`)), ms);
        waiting.set(msg.id, (m) => { clearTimeout(t); resolve(m); });
        send(msg);
      });
    },
    /// Ends the input; resolves with the exit status (0: it throws otherwise).
    async end() {
      await stopServer(watch, "end of input");
      return p.exitCode;
    },
  };
}
