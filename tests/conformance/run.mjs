// Runs the official MCP conformance suite against emcp-everything on a loopback port (on Linux,
// or on an emulated board through scripts/run-board). Two versions, pinned by package-lock.json:
// @modelcontextprotocol/conformance 0.1.16, and 0.2.0-alpha.12 under the npm alias
// conformance-0.2. Each run starts its own server.
//
//   node run.mjs [OPTIONS] path/to/emcp-everything        (started with --http 0)
//   node run.mjs [OPTIONS] COMMAND ARGS...                (ARGS must make it serve HTTP; e.g.
//        scripts/run-board mps2-an385 everything --http 0)
// The server prints http://127.0.0.1:PORT/mcp on stderr once it serves; its stdin stays open
// (scripts/run-board stops the board at the end of its input). It is stopped with SIGTERM and
// must then exit with status 0, with no sanitizer report on stderr: the run fails otherwise.
//
// OPTIONS (before the server):
//   --run NAME[,NAME...]  the runs (default 0.1):
//     0.1             0.1.16 `server --suite all`: every server scenario (active and pending),
//                     each scored.
//     2025-11-25      0.2.0-alpha.12 `server --requirements 2025-11-25`.
//     2026-07-28      0.2.0-alpha.12 `server --requirements 2026-07-28`.
//     all-2026-07-28  0.2.0-alpha.12 `server --suite all --spec-version 2026-07-28`, then
//                     `server --scenario NAME` for each extension scenario (the spec-version
//                     filter leaves the extensions out): all the suite has for that wire.
//     0.2             the three 0.2 runs.
//   --unscored fail|report  all-2026-07-28: whether a failing scenario outside the requirement
//                     set that pending-0.2.txt does not list fails the run (default) or is
//                     only reported.
//   --pending FILE    that allow-list (default pending-0.2.txt beside this file).
//   --keep DIR        keep the suite's results in DIR/RUN/N/server-*/checks.json (DIR/RUN must
//                     not exist).
//   --all-pass        the requirement runs: the scenarios they run and do not score must pass
//                     too (the 2025-11-25 runs over HTTP and through MCP over MQTT: every
//                     scenario that passes over HTTP passes through the broker).
//   --check-docs      the scenario counts the documents quote for this run (DOC_FIGURES) must be
//                     those of the suite's own list: a difference is a problem of the run (the
//                     Linux runs of the ctest suite pass it).
//
// The rules. A scenario passes when none of its checks is a FAILURE or a WARNING and one at
// least is a SUCCESS (a scenario that checked nothing proves nothing); SKIPPED and INFO checks
// do not fail it (SKIPPED ones are printed). The scored scenarios must pass: every one in run
// 0.1, those of the revision's requirement set (`list --requirements 2025-11-25|2026-07-28`) in
// the 0.2 runs. The others ("not scored": pending, extension, added after release) are
// printed; in the requirement runs they do not count (as in the suite); in all-2026-07-28
// each must pass or be listed in pending-0.2.txt with a reason, and an entry that passes is
// stale, an error. Every run must run exactly the scenarios the suite's own `list` names for
// it, and the suite's exit code must agree with the results (it counts FAILUREs and scenarios
// that threw: of the scored scenarios with --requirements, of all otherwise).
import { spawn } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, join, dirname } from "node:path";
import { fileURLToPath } from "node:url";
import { stopServer, watchServer } from "../mcp/lib/server_exit.mjs";

const here = dirname(fileURLToPath(import.meta.url));
const CLI = {
  "0.1": join(here, "node_modules/@modelcontextprotocol/conformance/dist/index.js"),
  "0.2": join(here, "node_modules/conformance-0.2/dist/index.js"),
};
const startMs = Number(process.env.EMCP_SERVER_START_MS ?? 5000);
const suiteMs = Number(process.env.EMCP_CONFORMANCE_RUN_MS ?? 600000);  // one suite command
const listMs = 30000;
const messageChars = 600;  // a check's message is cut there (wire-schema-valid quotes messages)

// ---------------------------------------------------------------------------- the suite

// Runs the suite's CLI (version "0.1" or "0.2") under Node 20 through the fs.globSync shim.
function suite(version, args, timeoutMs) {
  return new Promise((resolve) => {
    const p = spawn(process.execPath, ["--import", join(here, "shim/register.mjs"), CLI[version], ...args],
      { cwd: here, stdio: ["ignore", "pipe", "pipe"] });
    let out = "";
    p.stdout.on("data", (d) => { out += d; });
    p.stderr.on("data", (d) => { out += d; });
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; p.kill("SIGKILL"); }, timeoutMs);
    p.on("exit", (code, signal) => {
      clearTimeout(timer);
      resolve({ code, out, failure: timedOut ? `killed after ${timeoutMs / 1000} s` : signal ? `died of ${signal}` : null });
    });
  });
}

// The `list` command's output as { heading: [{ name, tag, group }] }. It prints
//   Server scenarios (test against a server):
//     - server-initialize [2025-06-18,2025-11-25]
//   Run and reported, but never scored:
//     pending (2):
//       - json-schema-2020-12 [server]
// (tag: the bracket; group: the indented subheading above the item).
function parseList(text) {
  const sections = {};
  let items = null, group = null;
  for (const line of text.split("\n")) {
    if (/^\S/.test(line)) { items = sections[line.replace(/:$/, "")] = []; group = null; continue; }
    const g = /^\s+([\w-]+) \(\d+\):$/.exec(line);
    if (g) { group = g[1]; continue; }
    const m = /^\s+-\s+(\S+)(?:\s+\[([^\]]*)\])?/.exec(line);
    if (m && items) items.push({ name: m[1], tag: m[2], group });
  }
  return sections;
}

const section = (sections, prefix) => Object.entries(sections).find(([h]) => h.startsWith(prefix))?.[1] ?? [];

async function list(version, args) {
  const r = await suite(version, ["list", ...args], listMs);
  const sections = parseList(r.out);
  if (r.code !== 0 || section(sections, "Server scenarios").length === 0) {
    throw new Error(`cannot read the suite's scenario list (list ${args.join(" ")}: exit code ${r.code}` +
      `${r.failure ? ", " + r.failure : ""}):\n${r.out.slice(-2000)}`);
  }
  return sections;
}

// ---------------------------------------------------------------------------- the runs

// A run: the suite version; plan() -> { scored: [name], unscored: Map(name -> why not scored) },
// together exactly what must run; commands(plan) -> [{ args, judged }] (judged: the scenarios
// whose FAILUREs set that command's exit code, null: all it ran); allowList: whether
// pending-0.2.txt applies.
function requirementsRun(revision) {
  return {
    version: "0.2",
    title: `0.2.0-alpha.12 server --requirements ${revision}`,
    async plan() {
      const s = await list("0.2", ["--requirements", revision]);
      const unscored = section(s, "Run and reported").filter((e) => e.tag === "server");
      return {
        scored: section(s, "Server scenarios").map((e) => e.name),
        unscored: new Map(unscored.map((e) => [e.name, e.group])),
      };
    },
    commands: (plan) => [{ args: ["--requirements", revision], judged: plan.scored }],
  };
}

const RUNS = {
  "0.1": {
    version: "0.1",
    title: "0.1.16 server --suite all",
    async plan() {
      return { scored: section(await list("0.1", []), "Server scenarios").map((e) => e.name), unscored: new Map() };
    },
    commands: () => [{ args: ["--suite", "all"], judged: null }],
  },
  "2025-11-25": requirementsRun("2025-11-25"),
  "2026-07-28": requirementsRun("2026-07-28"),
  "all-2026-07-28": {
    version: "0.2",
    title: "0.2.0-alpha.12 server --suite all --spec-version 2026-07-28, then each extension scenario",
    allowList: true,
    async plan() {
      const atWire = section(await list("0.2", ["--server", "--spec-version", "2026-07-28"]), "Server scenarios");
      const extensions = section(await list("0.2", ["--server"]), "Server scenarios").filter((e) => e.tag === "extension");
      const req = await list("0.2", ["--requirements", "2026-07-28"]);
      const scored = new Set(section(req, "Server scenarios").map((e) => e.name));
      const why = new Map(section(req, "Run and reported").map((e) => [e.name, e.group]));
      for (const e of extensions) if (!why.has(e.name)) why.set(e.name, "extension");
      const names = [...atWire, ...extensions].map((e) => e.name);
      return {
        scored: names.filter((n) => scored.has(n)),
        unscored: new Map(names.filter((n) => !scored.has(n)).map((n) => [n, why.get(n) ?? "in no requirement set"])),
        extensions: extensions.map((e) => e.name),
      };
    },
    commands: (plan) => [
      { args: ["--suite", "all", "--spec-version", "2026-07-28"], judged: null },
      ...plan.extensions.map((name) => ({ args: ["--scenario", name], judged: null })),
    ],
  },
};
const RUNS_02 = ["2025-11-25", "2026-07-28", "all-2026-07-28"];

// The scenario counts the documents give, per run: [file (from the checkout's root), a pattern
// whose groups are the figures (whitespace in the file counts as one space), the figures the
// run's plan gives].
const all = (p) => p.scored.length + p.unscored.size;
const DOC_FIGURES = {
  "0.1": [
    ["tests/README.md", /all (\d+) server scenarios \(`--suite all`/, (p) => [all(p)]],
    ["examples/everything/README.md", /all (\d+) server scenarios of the suite/, (p) => [all(p)]],
  ],
  "2025-11-25": [
    ["tests/README.md", /`server --requirements 2025-11-25` \((\d+) scored \+ (\d+) unscored scenarios\)/,
     (p) => [p.scored.length, p.unscored.size]],
    ["docs/status.md", /and its 2025-11-25 one \((\d+)\)/, (p) => [p.scored.length]],
  ],
  "2026-07-28": [
    ["tests/README.md", /`server --requirements 2026-07-28` \((\d+) scored \+ (\d+) unscored\)/,
     (p) => [p.scored.length, p.unscored.size]],
    ["docs/status.md", /2026-07-28 requirement set \((\d+) scored scenarios\)/, (p) => [p.scored.length]],
    ["docs/mcp.md", /passes its (\d+) scored 2026-07-28 scenarios/, (p) => [p.scored.length]],
  ],
  "all-2026-07-28": [
    ["tests/README.md", /`server --suite all --spec-version 2026-07-28` \((\d+)\), then `--scenario` for each extension scenario \((\d+) more/,
     (p) => [all(p) - p.extensions.length, p.extensions.length]],
  ],
};

// What the documents say that the plan does not: one problem a sentence.
function checkDocFigures(name, plan, problems) {
  for (const [file, pattern, figures] of DOC_FIGURES[name] ?? []) {
    const text = readFileSync(join(here, "../..", file), "utf8").replace(/\s+/g, " ");
    const m = text.match(pattern);
    if (!m) {
      problems.push(`${file}: no sentence matching ${pattern} (the counts this run checks)`);
      continue;
    }
    const said = m.slice(1).map(Number);
    const want = figures(plan);
    if (said.join() !== want.join()) {
      problems.push(`${file}: "${m[0]}" says ${said.join(", ")}; the suite's list gives ${want.join(", ")} (correct the document)`);
    }
  }
}

// ---------------------------------------------------------------------------- the server

// Starts the server and resolves once it printed its URL. stop() ends it with SIGTERM and
// returns what is wrong with how it ended, or null: it must exit with status 0 and leave no
// sanitizer report on stderr (../mcp/lib/server_exit.mjs), and not have ended during the run.
function startServer(command, args) {
  return new Promise((resolve, reject) => {
    const proc = spawn(command, args, { stdio: ["pipe", "ignore", "pipe"] });
    const watch = watchServer(proc, basename(command));
    let url = null;
    const timer = setTimeout(() => { proc.kill("SIGKILL"); reject(new Error(`no URL within ${startMs} ms: ${watch.stderr()}`)); }, startMs);
    proc.on("error", (e) => { clearTimeout(timer); reject(e); });
    proc.on("exit", (code, signal) => { clearTimeout(timer); reject(new Error(`server exited (${signal ?? `code ${code}`}): ${watch.stderr()}`)); });
    proc.stderr.on("data", () => {
      const m = /http:\/\/127\.0\.0\.1:\d+\/mcp/.exec(watch.stderr());
      if (!m || url) return;
      url = m[0];
      clearTimeout(timer);
      resolve({ url, stop: () => stopServer(watch, "SIGTERM").then(() => null, (e) => e.message) });
    });
  });
}

// ---------------------------------------------------------------------------- results

const failing = (c) => c.status === "FAILURE" || c.status === "WARNING";
const printed = (c) => c.status !== "SUCCESS" && c.status !== "INFO";
const passes = (checks) => checks !== null && !checks.some(failing) && checks.some((c) => c.status === "SUCCESS");

function oneLine(text) {
  const t = String(text ?? "").replace(/\s+/g, " ").trim();
  return t.length > messageChars ? `${t.slice(0, messageChars)}...` : t;
}

// The results of one suite command in dir: Map(scenario -> checks, or null when the scenario's
// folder has no checks.json: it threw). Folders are server-<scenario>-<ISO time>.
function readResults(dir) {
  const results = new Map();
  for (const d of readdirSync(dir)) {
    const file = join(dir, d, "checks.json");
    results.set(d.replace(/^server-/, "").replace(/-\d{4}-\d\d-\d\dT.*$/, ""),
      existsSync(file) ? JSON.parse(readFileSync(file, "utf8")) : null);
  }
  return results;
}

// Runs the run's suite commands against one server. Returns { ran: Map(scenario -> checks or
// null), thrown: Map(scenario -> the suite's error), codes: [exit code per command] }.
async function execute(run, plan, dir, opts, problems) {
  const server = await startServer(opts.server, opts.serverArgs);
  const ran = new Map(), thrown = new Map(), codes = [];
  try {
    for (const [i, cmd] of run.commands(plan).entries()) {
      const out = join(dir, String(i));
      mkdirSync(out, { recursive: true });
      const r = await suite(run.version, ["server", "--url", server.url, ...cmd.args, "-o", out], suiteMs);
      codes.push(r.code);
      const results = readResults(out);
      for (const [name, checks] of results) {
        if (ran.has(name)) problems.push(`scenario ${name} ran twice`);
        ran.set(name, checks);
        // The suite says "Failed to run scenario NAME: ERROR" (in a suite) or "Server test
        // error: ERROR" (alone).
        const m = new RegExp(`(?:Failed to run scenario ${name}:|Server test error:)\\s*(.*)`).exec(r.out);
        if (checks === null) thrown.set(name, m ? m[1] : "(no message; timed out?)");
      }
      const judged = [...results].filter(([name]) => !cmd.judged || cmd.judged.includes(name));
      const want = judged.some(([, c]) => c === null || c.some((x) => x.status === "FAILURE")) ? 1 : 0;
      if (r.failure || r.code !== want) {
        problems.push(`suite ${cmd.args.join(" ")}: exit code ${r.code}${r.failure ? ` (${r.failure})` : ""}, ` +
          `its results say ${want}; its output ends:\n${r.out.slice(-3000)}`);
      }
    }
  } finally {
    const ending = await server.stop();
    if (ending) problems.push(ending);
  }
  return { ran, thrown, codes };
}

// ---------------------------------------------------------------------------- the allow-list

// pending-0.2.txt: "scenario[:check-id]  # reason" per line; blank lines and lines starting
// with # are comments. Each entry must name a scenario that all-2026-07-28 runs unscored.
function readPending(file, plan, problems) {
  if (!existsSync(file)) { problems.push(`no allow-list ${file}`); return []; }
  const entries = [];
  readFileSync(file, "utf8").split("\n").forEach((raw, i) => {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) return;
    const where = `${basename(file)}:${i + 1}`;
    const hash = line.indexOf("#");
    const key = (hash < 0 ? line : line.slice(0, hash)).trim();
    const reason = hash < 0 ? "" : line.slice(hash + 1).trim();
    const [scenario, check = null] = key.split(/:(.*)/s);
    if (!/^\S+$/.test(key) || !reason) problems.push(`${where}: not "scenario[:check-id]  # reason": ${raw}`);
    else if (plan.scored.includes(scenario)) problems.push(`${where}: ${scenario} is scored (2026-07-28 requires it): it must pass`);
    else if (!plan.unscored.has(scenario)) problems.push(`${where}: all-2026-07-28 does not run ${scenario}`);
    else if (entries.some((e) => e.scenario === scenario && e.check === check)) problems.push(`${where}: ${key} is listed twice`);
    else entries.push({ scenario, check, reason, where });
  });
  return entries;
}

// ---------------------------------------------------------------------------- one run

// Prints one scenario's verdict and its checks other than SUCCESS and INFO. Returns "pass",
// "fail" (scored), "not counted" (not scored, failing, where that does not count), "allowed"
// (by pending-0.2.txt) or "unlisted" (not scored, failing, not allowed).
function judge(scenario, checks, thrownBy, run, plan, pending, opts, problems) {
  const ok = passes(checks);
  const scored = !plan.unscored.has(scenario);
  const entries = pending.filter((e) => e.scenario === scenario);
  const whole = entries.find((e) => e.check === null);
  const byCheck = new Map(entries.filter((e) => e.check).map((e) => [e.check, e]));

  let verdict = ok ? "pass" : scored ? "fail" : run.allowList ? "unlisted" : "not counted";
  let note = scored ? "" : ` [not scored: ${plan.unscored.get(scenario)}]`;
  if (verdict === "unlisted") {
    // Allowed: the whole scenario is listed, or it checked something and each failing check is.
    if (whole) { verdict = "allowed"; note += ` [allowed: ${whole.reason}]`; }
    else if (checks?.some((c) => c.status === "SUCCESS") && checks.filter(failing).every((c) => byCheck.has(c.id))) {
      verdict = "allowed"; note += " [allowed: each failing check is listed]";
    } else if (opts.unscored === "report") note += " [not listed; --unscored report]";
  }
  if (ok && whole) problems.push(`${whole.where}: stale, ${scenario} passes`);
  for (const [id, e] of byCheck) {
    const seen = (checks ?? []).filter((c) => c.id === id);
    if (!seen.some(failing)) {
      problems.push(`${e.where}: stale, ${scenario}:${id} ${seen.length ? `is ${seen.map((c) => c.status).join(", ")}` : "is not reported"}`);
    }
  }

  const what = checks === null ? `no checks.json, the scenario threw: ${oneLine(thrownBy)}`
    : `${checks.filter((c) => c.status !== "INFO").length} checks`;
  console.log(`${ok ? "ok  " : "FAIL"} ${scenario}: ${what}${note}`);
  for (const c of (checks ?? []).filter(printed)) {
    const allowed = failing(c) && byCheck.has(c.id) ? ` [allowed: ${byCheck.get(c.id).reason}]` : "";
    console.log(`       ${c.status} ${c.id}: ${oneLine(c.errorMessage ?? c.description)}${allowed}`);
  }
  return verdict;
}

async function runOnce(name, opts, outRoot) {
  const run = RUNS[name];
  const problems = [];
  console.log(`\n== ${name}: ${run.title}`);
  const plan = await run.plan();
  if (opts.checkDocs) checkDocFigures(name, plan, problems);
  const expected = [...plan.scored, ...plan.unscored.keys()];
  const pending = run.allowList ? readPending(opts.pending, plan, problems) : [];

  const dir = join(outRoot, name);
  if (existsSync(dir)) throw new Error(`${dir} exists (from an earlier --keep?)`);
  const t0 = Date.now();
  const { ran, thrown, codes } = await execute(run, plan, dir, opts, problems);
  const seconds = ((Date.now() - t0) / 1000).toFixed(1);

  // In the suite's order: the scored scenarios, then the others; anything unexpected last.
  const order = [...expected.filter((n) => ran.has(n)), ...[...ran.keys()].filter((n) => !expected.includes(n))];
  const verdicts = { pass: [], fail: [], "not counted": [], allowed: [], unlisted: [] };
  let checkCount = 0;
  for (const scenario of order) {
    const checks = ran.get(scenario);
    checkCount += (checks ?? []).filter((c) => !["INFO", "SKIPPED"].includes(c.status)).length;
    verdicts[judge(scenario, checks, thrown.get(scenario), run, plan, pending, opts, problems)].push(scenario);
  }
  if (verdicts.fail.length) problems.push(`${verdicts.fail.length} scored scenarios fail: ${verdicts.fail.join(", ")}`);
  if (verdicts.unlisted.length && opts.unscored === "fail") {
    problems.push(`${verdicts.unlisted.length} scenarios that are not scored fail and ${basename(opts.pending)} ` +
      `does not list them: ${verdicts.unlisted.join(", ")}`);
  }
  if (verdicts["not counted"].length && opts.allPass) {
    problems.push(`${verdicts["not counted"].length} scenarios that are not scored fail (--all-pass): ${verdicts["not counted"].join(", ")}`);
  }
  // Every scenario the suite lists for this run must have run, and nothing else.
  for (const n of expected.filter((n) => !ran.has(n))) problems.push(`scenario ${n} (in the suite's list) did not run`);
  for (const n of order.filter((n) => !expected.includes(n))) problems.push(`scenario ${n} ran but is not in the suite's list`);

  const passed = (scored) => verdicts.pass.filter((n) => plan.unscored.has(n) !== scored).length;
  console.log(`${ran.size} scenarios, ${checkCount} scored checks, exit code ${codes[0]}` +
    (codes.length > 1 ? ` (then ${codes.length - 1} --scenario commands, exit codes ${codes.slice(1).join(" ")})` : ""));
  const unscored = !plan.unscored.size ? "" : `; not scored: ${passed(false)} of ${plan.unscored.size} pass, ` + (run.allowList
    ? `${verdicts.allowed.length} allowed to fail, ${verdicts.unlisted.length} fail unlisted`
    : `${verdicts["not counted"].length} fail (not counted here)`);
  console.log(`  scored: ${passed(true)} of ${plan.scored.length} pass${unscored}; ${seconds} s`);
  for (const p of problems) console.log(`problem: ${p}`);
  console.log(`${name}: ${problems.length ? `FAIL (${problems.length} problems)` : "PASS"}`);
  return problems.length === 0;
}

// ---------------------------------------------------------------------------- command line

function usage(why) {
  console.error(`run.mjs: ${why}\nusage: node run.mjs [--run NAME[,NAME...]] [--unscored fail|report] ` +
    `[--pending FILE] [--keep DIR] [--check-docs] [--all-pass] [SERVER [ARGS...]]\n  runs: ${Object.keys(RUNS).join(", ")}, 0.2 (${RUNS_02.join(", ")})`);
  process.exit(2);
}

function parseArgs(argv) {
  const o = { runs: ["0.1"], unscored: "fail", pending: join(here, "pending-0.2.txt"), keep: null, checkDocs: false, allPass: false };
  let i = 0;
  for (; i < argv.length && argv[i].startsWith("--"); i += 2) {
    if (argv[i] === "--check-docs" || argv[i] === "--all-pass") {
      o[argv[i] === "--all-pass" ? "allPass" : "checkDocs"] = true;
      --i;  // no value
      continue;
    }
    const [flag, value] = [argv[i], argv[i + 1]];
    if (value === undefined) usage(`${flag} needs a value`);
    if (flag === "--run") o.runs = value.split(",").flatMap((r) => (r === "0.2" ? RUNS_02 : [r]));
    else if (flag === "--unscored") o.unscored = value;
    else if (flag === "--pending") o.pending = value;
    else if (flag === "--keep") o.keep = value;
    else usage(`unknown option ${flag}`);
  }
  for (const r of o.runs) if (!RUNS[r]) usage(`unknown run ${r}`);
  if (o.allPass && o.runs.some((r) => RUNS[r].allowList)) usage("--all-pass is for the requirement runs (all-2026-07-28 has pending-0.2.txt)");
  if (!["fail", "report"].includes(o.unscored)) usage("--unscored is fail or report");
  o.server = argv[i] ?? join(here, "../../build/native/bin/emcp-everything");
  o.serverArgs = argv.length > i + 1 ? argv.slice(i + 1) : ["--http", "0"];
  return o;
}

const opts = parseArgs(process.argv.slice(2));
const outRoot = opts.keep ?? mkdtempSync(join(tmpdir(), "emcp-conformance-"));
let ok = true;
try {
  for (const name of opts.runs) {
    try {
      if (!(await runOnce(name, opts, outRoot))) ok = false;
    } catch (e) {
      console.log(`problem: ${e.message}\n${name}: FAIL`);
      ok = false;
    }
  }
} finally {
  if (!opts.keep) rmSync(outRoot, { recursive: true, force: true });
}
process.exit(ok ? 0 : 1);
