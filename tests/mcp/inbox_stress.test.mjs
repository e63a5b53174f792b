// The server's inbox under load (emcp/mcp/inbox.h), judged by the official SDK client:
// emcp-inbox-stress (tests/threads/inbox_stress.cpp) has four producer threads and a timer
// signal post log lines (each producer's sequence numbers) and resource changes while this
// client calls a tool that a worker thread finishes through the inbox, for EMCP_STRESS_SECONDS
// (60 by default). Every post the server took must reach the client once, in each producer's
// order; every post it refused was counted where it was refused; every message the server sent
// is valid against the revision's schema; the server ends cleanly (exit 0, no sanitizer report).
//
// The same on a board (EMCP_TRANSPORT=qemu: board_rtos_inbox_stress, the firmware
// tests/threads/inbox_stress_rtos.cpp under FreeRTOS, EMCP_FIRMWARE): four producer tasks at
// different priorities and a hardware timer interrupt post; its tool `stats` answers the same
// figures while they run, with each task's stack high-water mark (and the main stack's, which
// the interrupts use): halfway through and at the end they must be the same (flat; a task's may
// grow by the context a switch-out pushes, which lands at random depths), within each stack and
// within the worst case the footprint check computed for it (EMCP_FIRMWARE's .footprint.json).
//
// EMCP_INBOX_STRESS: the program (on Linux); EMCP_TRANSPORT: stdio (default), http or qemu.
import assert from "node:assert/strict";
import { test } from "node:test";

import { LoggingMessageNotificationSchema, ResourceUpdatedNotificationSchema } from "@modelcontextprotocol/sdk/types.js";

import { ON_BOARD, closeChecked, connect, imageReport, waitFor } from "./lib/harness.mjs";

const SERVER = process.env.EMCP_INBOX_STRESS;
const KIND = process.env.EMCP_TRANSPORT || "stdio";
const SECONDS = Number(process.env.EMCP_STRESS_SECONDS || 60);
const REVISION = "2025-11-25";
const LOGGERS = ["p0", "p1", "p2", "p3", "isr"];
const WHO = ON_BOARD ? "tasks and a timer interrupt" : "threads and a signal handler";

test(`posts from ${WHO} reach the SDK client over ${KIND} in order, none lost or repeated`, { timeout: (SECONDS + 120) * 1000 }, async () => {
  assert.ok(SERVER || ON_BOARD, "EMCP_INBOX_STRESS names the program");
  const conn = await connect({ command: SERVER, revision: REVISION, transport: KIND });
  const { client } = conn;
  let schemaProblems = [];
  let final, half, calls = 0;
  const seen = Object.fromEntries(LOGGERS.map((l) => [l, { next: 0, wrong: [] }]));
  const updates = new Map();
  try {
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => {
      const s = seen[n.params.logger];
      assert.ok(s, `a log line from an unknown logger ${n.params.logger}`);
      const seq = Number(n.params.data);
      if (seq !== s.next && s.wrong.length < 10) s.wrong.push(`${seq} where ${s.next} was due`);
      s.next = seq + 1;
    });
    client.setNotificationHandler(ResourceUpdatedNotificationSchema, (n) => {
      updates.set(n.params.uri, (updates.get(n.params.uri) || 0) + 1);
    });
    await client.setLoggingLevel("info");
    for (let p = 0; p < 4; ++p) await client.subscribeResource({ uri: `stress://p${p}` });
    assert.equal((await client.callTool({ name: "start", arguments: {} })).content[0].text, "started");
    // The board's figures while its tasks run (the Linux program has no `stats`).
    const hasStats = (await client.listTools()).tools.some((t) => t.name === "stats");
    assert.equal(hasStats, ON_BOARD, "the firmware answers `stats`");
    const end = Date.now() + SECONDS * 1000;
    const halfway = Date.now() + SECONDS * 500;
    while (Date.now() < end) {
      if (hasStats && !half && Date.now() >= halfway)
        half = JSON.parse((await client.callTool({ name: "stats", arguments: {} })).content[0].text);
      const r = await client.callTool({ name: "work", arguments: { n: calls } });
      assert.deepEqual(r.content, [{ type: "text", text: String(calls * 2) }], `work ${calls}, finished by the worker thread`);
      ++calls;
    }
    const stop = await client.callTool({ name: "stop", arguments: {} });
    final = JSON.parse(stop.content[0].text);
    // Over stdio the notifications came before the answer; over HTTP on the GET stream beside it.
    await waitFor(() => LOGGERS.every((l) => seen[l].next >= final[l].logs) &&
                        [0, 1, 2, 3].every((p) => (updates.get(`stress://p${p}`) || 0) >= final[`p${p}`].updates),
                  10000, "every notification the server took");
  } finally {
    schemaProblems = await closeChecked(conn, REVISION);
  }
  let posted = 0, refused = 0;
  for (const l of LOGGERS) {
    assert.deepEqual(seen[l].wrong, [], `${l}: log lines out of order, lost or repeated`);
    assert.equal(seen[l].next, final[l].logs, `${l}: the log lines the inbox took`);
    posted += final[l].logs + final[l].updates;
    refused += final[l].refused;
  }
  for (let p = 0; p < 4; ++p)
    assert.equal(updates.get(`stress://p${p}`) || 0, final[`p${p}`].updates, `p${p}: resource changes`);
  assert.equal(final.notifications_dropped, 0, "the server sent every notification it ran");
  // The inbox took the producers' posts, the worker's completions and the reaper's.
  assert.equal(final.inbox.posted, posted + calls + 1);
  assert.equal(final.inbox.run, final.inbox.posted - 1, "all but the final completion had run when it was written");
  assert.equal(final.inbox.refused, refused + final.completions_refused);
  assert.ok(final.inbox.high_water <= final.inbox.slots);
  assert.ok(refused > 0, "the bursts filled the inbox (the refusal path was taken)");
  assert.deepEqual(schemaProblems, []);
  if (ON_BOARD) checkStacks(half, final);
  console.log(`inbox stress over ${KIND}, ${SECONDS} s: ${calls} tool calls finished by the worker; posted ${final.inbox.posted}` +
              ` (${LOGGERS.map((l) => `${l} ${final[l].logs}+${final[l].updates} refused ${final[l].refused}`).join(", ")}), refused ${final.inbox.refused},` +
              ` high-water ${final.inbox.high_water} of ${final.inbox.slots} slots, retried ${final.inbox.retried}`);
});

// The board's high-water marks: the inbox's and every stack's the same halfway and at the end.
function checkStacks(half, final) {
  assert.ok(half, "`stats` answered halfway");
  const report = imageReport();
  const context = report.rtos.task_context;
  const need = Object.fromEntries(report.rtos.tasks.map((t) => [t.label, t.need]));
  need.main = report.rtos.main_stack.total;
  assert.equal(final.inbox.high_water, half.inbox.high_water, "the inbox's high-water mark is flat");
  assert.deepEqual(Object.keys(final.stacks).sort(), ["emcp", "main", "p0", "p1", "p2", "p3", "worker"]);
  for (const [name, s] of Object.entries(final.stacks)) {
    const h = half.stacks[name];
    assert.ok(s.used >= h.used, `${name}: a high-water mark never shrinks`);
    // An interrupt's frame lands on the main stack at any depth of the handler it interrupts;
    // a task's stack takes the context a switch-out pushes at any depth of the task.
    assert.ok(s.used - h.used <= context, `${name}: stack high-water flat: ${h.used} B halfway, ${s.used} B at the end`);
    assert.ok(s.used < s.size, `${name}: the stack never reached its end (${s.used} of ${s.size} B)`);
    assert.ok(s.used <= need[name], `${name}: within the footprint check's worst case (${s.used} of ${need[name]} B)`);
  }
  console.log(`stack high-water marks halfway / at the end (of the stack): ` +
              Object.entries(final.stacks).map(([n, s]) => `${n} ${half.stacks[n].used}/${s.used} of ${s.size} B`).join(", ") +
              `; inbox high-water ${half.inbox.high_water}/${final.inbox.high_water}`);
}
