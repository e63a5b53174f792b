// How a server a test started ended. Every server a test starts (an emcp program on stdio or on
// the network, emcp-bridge in either mode, scripts/run-board, a fake board standing in for one)
// must end with exit status 0, not by a signal, and leave no sanitizer report on its stderr
// (tests/sanitizer_patterns.txt): otherwise the test fails, and says how it ended with the tail
// of its stderr. QEMU processes the tests kill are boards switched off, not servers under test.
// No dependencies: tests/conformance/run.mjs uses it too.
import { readFileSync } from "node:fs";

/// One regular expression for every line of tests/sanitizer_patterns.txt.
export const SANITIZER_REPORT = new RegExp(readFileSync(new URL("../../sanitizer_patterns.txt", import.meta.url), "utf8")
  .split("\n").filter((l) => l.trim() !== "" && !l.startsWith("#")).join("|"));

/// How long a server may take to end once told to (SIGTERM or the end of its input). They take
/// milliseconds (a sanitizer's leak check at exit some more): the bound is there so that a server
/// that does not end fails the test with its stderr instead of hanging it until ctest's timeout,
/// and is far enough that load cannot reach it.
export const END_GRACE_MS = 30000;

/// Watches `proc` (a ChildProcess whose stderr is a pipe, read here to its end; or `stderr`, a
/// stream it is piped to, such as the SDK stdio transport's) as `name`, from its start. Returns
/// { name, proc, stderr(), exited, ended }: `exited` resolves with { code, signal } when the
/// process exits, `ended` once its output pipes have closed too (all of stderr read).
export function watchServer(proc, name, stderr = proc.stderr) {
  let err = "";
  stderr?.on("data", (d) => { err += d; });
  let spawnError = null;
  proc.once("error", (e) => { spawnError = e.message; });
  const exited = new Promise((resolve) => {
    if (proc.exitCode !== null || proc.signalCode !== null) resolve({ code: proc.exitCode, signal: proc.signalCode });
    proc.once("exit", (code, signal) => resolve({ code, signal }));
    proc.once("error", () => resolve({ code: null, signal: null }));
  });
  const ended = new Promise((resolve) => {
    proc.once("close", (code, signal) => resolve({ code, signal }));
    proc.once("error", () => resolve({ code: null, signal: null }));
  }).then(async (how) => {
    await new Promise((resolve) => setImmediate(resolve));  // what a piped stream still passes on
    return { ...how, error: spawnError };
  });
  return { name, proc, stderr: () => err, exited, ended };
}

/// The first line of `text` that is part of a sanitizer's report, or null.
export function sanitizerLine(text) {
  return text.split("\n").find((l) => SANITIZER_REPORT.test(l)) ?? null;
}

/// The last `lines` lines of a server's stderr, for a failure message.
export function stderrTail(text, lines = 40) {
  const all = text.trimEnd().split("\n");
  if (all.length === 1 && all[0] === "") return "(nothing)";
  return (all.length > lines ? ["...", ...all.slice(-lines)] : all).join("\n");
}

/// What is wrong with how the watched server `w` ended (`how`: what `ended` resolved with), or
/// null. `when` says when it ended ("after SIGTERM"...), for the message.
export function endProblem(w, how, when = "") {
  const status = how.error ? `could not run (${how.error})`
    : how.signal ? `was killed by ${how.signal}${when}`
    : how.code !== 0 ? `exited with status ${how.code}${when}`
    : null;
  const report = sanitizerLine(w.stderr());
  if (status === null && report === null) return null;
  const what = [status, report !== null && `left a sanitizer report on stderr (${report.trim()})`].filter(Boolean);
  return `${w.name} ${what.join(" and ")}; its stderr ends:\n${stderrTail(w.stderr())}`;
}

/// Ends the watched server `w` and checks how it ended: `by` "SIGTERM" (a network server, the
/// gateway) or "end of input" (a stdio server, the stdio bridge: its stdin is closed). A server
/// that had ended before is judged as it ended; one stopped by SIGTERM must not have ended on
/// its own before. Throws what is wrong (endProblem), or, when the server has not ended within
/// END_GRACE_MS, kills it and throws that.
export async function stopServer(w, by = "SIGTERM") {
  const p = w.proc;
  const running = p.exitCode === null && p.signalCode === null;
  if (running) {
    if (by === "SIGTERM") p.kill("SIGTERM");
    else p.stdin.end();
  }
  let timer;
  const late = new Promise((resolve) => { timer = setTimeout(() => resolve(null), END_GRACE_MS); });
  const how = await Promise.race([w.ended, late]);
  clearTimeout(timer);
  if (how === null) {
    p.kill("SIGKILL");
    await w.exited;  // not `ended`: a process it started may hold its pipes
    throw new Error(`${w.name} did not end within ${END_GRACE_MS} ms of ${by}: killed; its stderr ends:\n${stderrTail(w.stderr())}`);
  }
  const when = running ? ` after ${by === "SIGTERM" ? "SIGTERM" : "the end of its input"}` : " before the test stopped it";
  const problem = endProblem(w, how, when);
  if (problem) throw new Error(problem);
  if (!running && by === "SIGTERM") {
    throw new Error(`${w.name} ended on its own (status 0) before the test stopped it; its stderr ends:\n${stderrTail(w.stderr())}`);
  }
}
