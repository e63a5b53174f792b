// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned by
// package-lock.json) against emcp-everything on a loopback port (on Linux, or on an emulated
// board through scripts/run-board): every server scenario of
// `--suite all` (the active ones and the pending ones). Fails on any check that is not
// SUCCESS or INFO (a FAILURE, or a WARNING such as a missing priming event), when the suite's
// own scenario list (its `list` command) cannot be read, and when the scenarios that ran are not
// exactly the server scenarios of that list. No expected-failures file.
//
//   node run.mjs path/to/emcp-everything            (started with --http 0)
//   node run.mjs COMMAND ARGS...                    (ARGS must make it serve HTTP; e.g.
//        scripts/run-board mps2-an385 everything --http 0)
// The server prints http://127.0.0.1:PORT/mcp on stderr once it serves; its stdin stays open
// (scripts/run-board stops the board at the end of its input).
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const server = process.argv[2] ?? join(here, "../../build/native/bin/emcp-everything");
const serverArgs = process.argv.length > 3 ? process.argv.slice(3) : ["--http", "0"];
const startMs = Number(process.env.EMCP_SERVER_START_MS ?? 5000);
const cli = join(here, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

function start() {
  return new Promise((resolve, reject) => {
    const proc = spawn(server, serverArgs, { stdio: ["pipe", "ignore", "pipe"] });
    let err = "";
    const timer = setTimeout(() => { proc.kill("SIGKILL"); reject(new Error(`no start: ${err}`)); }, startMs);
    proc.stderr.on("data", (d) => {
      err += d;
      const m = /http:\/\/127\.0\.0\.1:(\d+)\/mcp/.exec(err);
      if (m) { clearTimeout(timer); resolve({ proc, port: Number(m[1]) }); }
    });
    proc.on("exit", (code) => { clearTimeout(timer); reject(new Error(`server exited (${code}): ${err}`)); });
  });
}

function run(args, timeoutMs) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--import", join(here, "shim/register.mjs"), cli, ...args],
      { cwd: here, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => { out += d; });
    p.stderr.on("data", (d) => { out += d; });
    const timer = setTimeout(() => p.kill("SIGKILL"), timeoutMs);
    p.on("exit", (code) => { clearTimeout(timer); resolve({ code, out }); });
  });
}

// The names under "Server scenarios" in the output of the CLI's `list` command, which prints
//   Server scenarios (test against a server):
//     - server-initialize [2025-06-18,2025-11-25]
//   ...
//   Client scenarios (test against a client):
function serverScenarios(text) {
  const names = [];
  let inServer = false;
  for (const line of text.split("\n")) {
    if (/^\S/.test(line)) inServer = /^Server scenarios/.test(line);
    const m = /^\s+-\s+(\S+)/.exec(line);
    if (inServer && m) names.push(m[1]);
  }
  return names;
}

const { proc, port } = await start();
const outDir = mkdtempSync(join(tmpdir(), "emcp-conformance-"));
let failed = false;
try {
  // The suite's own list of server scenarios: the run must cover exactly these.
  const list = await run(["list"], 30000);
  const expected = serverScenarios(list.out);
  if (list.code !== 0 || expected.length === 0) {
    console.log(`cannot read the suite's scenario list (exit code ${list.code}):\n${list.out.slice(-2000)}`);
    failed = true;
  }
  const t0 = Date.now();
  const r = await run(["server", "--url", `http://127.0.0.1:${port}/mcp`, "--suite", "all", "-o", outDir], 600000);
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);
  const ran = new Map();
  for (const d of readdirSync(outDir)) {
    const name = d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, "");
    ran.set(name, JSON.parse(readFileSync(join(outDir, d, "checks.json"), "utf8")));
  }
  let checks = 0;
  for (const [name, list_] of [...ran].sort()) {
    const bad = list_.filter((c) => c.status !== "SUCCESS" && c.status !== "INFO");
    const scored = list_.filter((c) => c.status !== "INFO").length;
    checks += scored;
    console.log(`${bad.length || !scored ? "FAIL" : "ok  "} ${name}: ${scored} checks`);
    for (const c of bad) console.log(`       ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
    if (bad.length || !scored) failed = true;  // a scenario that checked nothing proves nothing
  }
  // Every server scenario the suite lists must have run, and nothing else.
  const missing = expected.filter((name) => !ran.has(name));
  const unlisted = [...ran.keys()].filter((name) => !expected.includes(name));
  for (const name of missing) console.log(`scenario ${name} (in the suite's list) did not run`);
  for (const name of unlisted) console.log(`scenario ${name} ran but is not in the suite's list`);
  if (missing.length || unlisted.length) failed = true;
  console.log(`${ran.size} server scenarios, ${checks} scored checks, ${seconds} s, exit code ${r.code}`);
  if (r.code !== 0) { failed = true; console.log(r.out.slice(-3000)); }
} finally {
  proc.kill("SIGTERM");
  rmSync(outDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
