// testssl.sh (Debian's testssl.sh: a TLS scanner we did not write, with its own handshakes on raw
// sockets beside OpenSSL's) judges the server's TLS against the policy of docs/http.md ("The TLS
// policy, as testssl.sh checks it"): `emcp-sensors --http 0 --tls-cert ... --tls-key ...` with
// the test PKI's EC P-256 key for the protocols (-p), forward secrecy and curves (-f), every
// suite offered and their order (-P), Heartbleed, CCS, Ticketbleed, renegotiation, CRIME,
// BREACH, POODLE, TLS_FALLBACK_SCSV, SWEET32, BEAST, LUCKY13 and RC4; with its RSA 2048 key, at
// the same time, for -f and -P again and what only an RSA key can bring about: ROBOT (RSA key
// transport), DROWN (an RSA certificate on SSLv2), FREAK (RSA export), LOGJAM (DHE-RSA). Together
// that is testssl.sh's whole vulnerability run (-U), split between the two. The JSON findings
// must all be rated OK or INFO, apart from those the policy accepts with a reason; the
// protocols, suites and curves must be exactly the policy's. Each server then stops with exit
// status 0 and nothing from a sanitizer on stderr. (The checks are a subset: testssl.sh's whole
// default run takes minutes here; docs/http.md says what the others would report.)
//
// Loopback only: --ip 127.0.0.1 and --nodns none (no DNS lookup, nothing leaves the machine).
// EMCP_SENSORS: the server; EMCP_TLS_DIR: the test PKI (tests/tls/make_certs.sh); EMCP_TESTSSL:
// the scanner (testssl).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { startNetworkServer, stopNetworkServer, TLS } from "./lib/harness.mjs";

const TESTSSL = process.env.EMCP_TESTSSL || "testssl";
// The policy (docs/http.md): TLS 1.2 only; ECDHE with AES-GCM or ChaCha20-Poly1305, by the key
// (OpenSSL's names, as testssl.sh reports them); the P-256 curve.
const PROTOCOLS = ["SSLv2", "SSLv3", "TLS1", "TLS1_1", "TLS1_2", "TLS1_3"];
const FS = ["PFS", "PFS_ciphers", "PFS_ECDHE_curves", "cipher_order", "cipherorder_TLSv1_2"];
const ANY_KEY = ["-H", "-I", "-T", "-R", "-C", "-B", "-O", "-Z", "-W", "-A", "-L", "-4"];
const ANY_KEY_IDS = ["heartbleed", "CCS", "ticketbleed", "secure_renego", "secure_client_renego", "CRIME_TLS", "BREACH",
  "POODLE_SSL", "fallback_SCSV", "SWEET32", "BEAST", "LUCKY13", "RC4"];
const RSA_ONLY = ["-BB", "-D", "-F", "-J"];
const RSA_ONLY_IDS = ["ROBOT", "DROWN", "FREAK", "LOGJAM"];
// Per key: the server's certificate (the test PKI's), what testssl.sh runs, the ids those checks
// must have left in the JSON (a scan that could not run one, or was cut short, has fewer), and
// the suites.
const KEYS = [
  { name: "server", key: "EC P-256", checks: ["-p", "-f", "-P", ...ANY_KEY], required: [...PROTOCOLS, ...FS, ...ANY_KEY_IDS],
    suites: ["ECDHE-ECDSA-AES128-GCM-SHA256", "ECDHE-ECDSA-CHACHA20-POLY1305", "ECDHE-ECDSA-AES256-GCM-SHA384"] },
  { name: "server-rsa", key: "RSA 2048", checks: ["-f", "-P", ...RSA_ONLY], required: [...FS, ...RSA_ONLY_IDS],
    suites: ["ECDHE-RSA-AES128-GCM-SHA256", "ECDHE-RSA-CHACHA20-POLY1305", "ECDHE-RSA-AES256-GCM-SHA384"] },
];
const CURVES = "prime256v1";
// Findings rated worse than OK/INFO that the policy accepts, each with its reason.
const ACCEPTED = [
  { id: "engine_problem", severity: "WARN",
    why: "the scanning host's OpenSSL has no GOST engine: a limit of the scanner's host, not a finding about the server" },
];
const RATED_FINE = new Set(["OK", "INFO"]);

let dir;
const scans = {};

/// Runs testssl.sh against https://localhost:PORT/mcp (SNI localhost, connecting to 127.0.0.1):
/// resolves with { code, seconds, findings (its JSON), output (its screen, for messages) }.
function scan(port, { name, checks }) {
  const jsonfile = path.join(dir, `${name}.json`);
  const args = ["--warnings", "batch", "--color", "0", "--nodns", "none", "--ip", "127.0.0.1",
    "--connect-timeout", "10", "--openssl-timeout", "10", "--jsonfile", jsonfile, ...checks,
    `https://localhost:${port}/mcp`];
  return new Promise((resolve, reject) => {
    const t0 = Date.now();
    const proc = spawn(TESTSSL, args, { cwd: dir, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    proc.stdout.on("data", (d) => { output += d; });
    proc.stderr.on("data", (d) => { output += d; });
    proc.on("error", reject);
    proc.on("close", (code) => {
      let findings = [];
      try { findings = JSON.parse(readFileSync(jsonfile, "utf8")); } catch (e) { output += `\n(no JSON: ${e.message})`; }
      resolve({ code, seconds: (Date.now() - t0) / 1000, findings, output });
    });
  });
}

const servers = {};

before(async () => {
  assert.ok(TLS, "EMCP_TLS_DIR must name the test PKI");
  dir = mkdtempSync(path.join(tmpdir(), "emcp-testssl-"));
  for (const k of KEYS) servers[k.name] = await startNetworkServer(process.env.EMCP_SENSORS, ["--simulate"], [], k.name);
  // Both at once (two cores): most of a scan is testssl.sh's own start and its shell at work.
  for (const k of KEYS) scans[k.name] = scan(servers[k.name].port, k);
});

after(async () => {
  for (const s of Object.values(servers)) if (s.proc.exitCode === null && s.proc.signalCode === null) await stopNetworkServer(s);
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const finding = (r, id) => r.findings.find((f) => f.id === id);
const tail = (r) => r.output.split("\n").slice(-30).join("\n");

for (const { name, key, checks, required, suites } of KEYS) {
  test(`${key} key: testssl.sh ran every chosen check (${checks.join(" ")})`, async () => {
    const r = await scans[name];
    console.log(`testssl.sh ${checks.join(" ")} against the ${key} server: ${r.seconds.toFixed(1)} s`);
    assert.equal(r.code, 0, `testssl.sh exited ${r.code}:\n${tail(r)}`);
    const missing = required.filter((id) => !finding(r, id));
    assert.deepEqual(missing, [], `checks without a finding:\n${tail(r)}`);
  });

  test(`${key} key: every finding is rated OK or INFO, or accepted by the policy`, async () => {
    const r = await scans[name];
    const worse = r.findings.filter((f) => !RATED_FINE.has(f.severity) &&
      !ACCEPTED.some((a) => a.id === f.id && a.severity === f.severity));
    assert.deepEqual(worse.map((f) => `${f.id} ${f.severity}: ${f.finding}`), [],
                     "findings rated worse than docs/http.md allows");
  });

  test(`${key} key: ${checks.includes("-p") ? "TLS 1.2 only; " : ""}exactly the policy's suites, all forward secret, on P-256`, async () => {
    const r = await scans[name];
    if (checks.includes("-p")) {
      for (const id of PROTOCOLS.filter((p) => p !== "TLS1_2"))
        assert.match(finding(r, id)?.finding ?? "", /^not offered/, `${id}: ${finding(r, id)?.finding}`);
      assert.equal(finding(r, "TLS1_2")?.finding, "offered");
    }
    // -P: every suite the server takes, per protocol, in its order of preference.
    const orders = r.findings.filter((f) => f.id.startsWith("cipherorder_"));
    assert.deepEqual(orders.map((f) => f.id), ["cipherorder_TLSv1_2"], "suites offered on no other protocol");
    assert.deepEqual(orders[0].finding.split(/\s+/).sort(), [...suites].sort(), "the suites offered");
    assert.deepEqual(finding(r, "PFS_ciphers").finding.split(/\s+/).sort(), [...suites].sort(),
                     "every suite has forward secrecy");
    assert.equal(finding(r, "PFS_ECDHE_curves").finding, CURVES);
  });
}

test("each server stops with exit status 0 and no sanitizer report", async () => {
  await Promise.all(Object.values(scans));
  for (const [name, s] of Object.entries(servers)) {
    await stopNetworkServer(s);
    assert.equal(s.proc.signalCode, null, `${name}: ended by ${s.proc.signalCode}`);
    assert.equal(s.proc.exitCode, 0, `${name}: exit status ${s.proc.exitCode}\n${s.stderr()}`);
    assert.doesNotMatch(s.stderr(), /Sanitizer|runtime error:/, name);
  }
});
