// Runs the official MCP conformance suite (@modelcontextprotocol/conformance, pinned by
// package-lock.json) against emcp-everything on a loopback port: every server scenario of
// `--suite all` (the active ones and the pending ones). Fails on any check that is not
// SUCCESS or INFO (a FAILURE, or a WARNING such as a missing priming event), and when a
// scenario did not run. No expected-failures file.
//
//   node run.mjs path/to/emcp-everything
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, dirname } from "node:path";
import { fileURLToPath } from "node:url";

const here = dirname(fileURLToPath(import.meta.url));
const server = process.argv[2] ?? join(here, "../../build/native/bin/emcp-everything");
const cli = join(here, "node_modules/@modelcontextprotocol/conformance/dist/index.js");

function start() {
  return new Promise((resolve, reject) => {
    const proc = spawn(server, ["--http", "0"], { stdio: ["ignore", "ignore", "pipe"] });
    let err = "";
    const timer = setTimeout(() => { proc.kill("SIGKILL"); reject(new Error(`no start: ${err}`)); }, 5000);
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

const { proc, port } = await start();
const outDir = mkdtempSync(join(tmpdir(), "emcp-conformance-"));
let failed = false;
try {
  const list = await run(["list"], 30000);
  const all = [...list.out.matchAll(/^\s+-\s+([a-z0-9-]+)/gm)].map((m) => m[1]);
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
    console.log(`${bad.length ? "FAIL" : "ok  "} ${name}: ${scored} checks`);
    for (const c of bad) console.log(`       ${c.status} ${c.id}: ${c.errorMessage ?? c.description}`);
    if (bad.length) failed = true;
  }
  // Every server scenario the CLI lists must have run (the list also names client scenarios).
  const serverScenarios = all.filter((s) => r.out.includes(`Running client scenario '${s}'`));
  if (ran.size === 0 || ran.size !== serverScenarios.length) {
    console.log(`scenarios run: ${ran.size}, started: ${serverScenarios.length}`);
    failed = true;
  }
  // The pending scenarios are part of the goal: make sure they ran.
  for (const must of ["json-schema-2020-12", "server-sse-polling", "server-sse-multiple-streams", "dns-rebinding-protection"]) {
    if (!ran.has(must)) { console.log(`scenario ${must} did not run`); failed = true; }
  }
  console.log(`${ran.size} server scenarios, ${checks} scored checks, ${seconds} s, exit code ${r.code}`);
  if (r.code !== 0) { failed = true; console.log(r.out.slice(-3000)); }
} finally {
  proc.kill("SIGTERM");
  rmSync(outDir, { recursive: true, force: true });
}
process.exit(failed ? 1 : 0);
