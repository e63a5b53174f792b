// A real MQTT broker for the tests: Debian's Mosquitto, started on a free loopback port with a
// configuration of its own in a temporary folder (never the system's broker on 1883, never a
// fixed port), logging everything there; with `tls`, a second listener with TLS whose
// certificates OpenSSL makes at test time. stop() fails the test unless the broker ends
// cleanly (status 0 after SIGTERM, within a few seconds). No broker outlives the test process.
//
//   const broker = await startBroker();           // or startBroker({ tls: true })
//   const client = await mqtt.connectAsync(broker.url, { protocolVersion: 5 });
//   ...
//   await broker.stop();
import { execFileSync, spawn } from "node:child_process";
import { accessSync, constants, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import net from "node:net";
import os from "node:os";
import path from "node:path";
import { freePort } from "./harness.mjs";
import { endProblem, watchServer } from "./server_exit.mjs";

/// How long the broker may take to accept connections after its start, and to end after SIGTERM.
const START_MS = 10000;
const STOP_MS = 5000;

/// The mosquitto program: EMCP_MOSQUITTO (tests/CMakeLists.txt finds it), else the PATH, else
/// Debian's /usr/sbin (not on a user's PATH).
export function mosquittoProgram() {
  if (process.env.EMCP_MOSQUITTO) return process.env.EMCP_MOSQUITTO;
  for (const dir of [...(process.env.PATH ?? "").split(":").filter(Boolean), "/usr/sbin"]) {
    const candidate = path.join(dir, "mosquitto");
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {}
  }
  throw new Error("mosquitto not found (Debian's package mosquitto; scripts/test installs it)");
}

const live = new Set();
// A safety net: whatever a test does, no broker outlives the test process.
process.on("exit", () => { for (const p of live) p.kill("SIGKILL"); });

/// Makes a CA, a server certificate for 127.0.0.1 and localhost and a client certificate (EC
/// P-256) in `dir` with OpenSSL. Returns the paths and the CA's PEM text (what a client trusts).
function makeCertificates(dir) {
  const file = (name) => path.join(dir, name);
  const openssl = (...args) => execFileSync("openssl", args, { stdio: ["ignore", "pipe", "pipe"] });
  openssl("req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", file("ca.key"), "-out", file("ca.crt"), "-days", "2", "-subj", "/CN=emcp test broker CA");
  openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", file("server.key"), "-out", file("server.csr"), "-subj", "/CN=127.0.0.1");
  writeFileSync(file("server.ext"), "subjectAltName=IP:127.0.0.1,DNS:localhost\n");
  openssl("x509", "-req", "-in", file("server.csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key"),
    "-CAcreateserial", "-out", file("server.crt"), "-days", "2", "-extfile", file("server.ext"));
  openssl("req", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
    "-keyout", file("client.key"), "-out", file("client.csr"), "-subj", "/CN=emcp test device");
  writeFileSync(file("client.ext"), "extendedKeyUsage=clientAuth\n");
  openssl("x509", "-req", "-in", file("client.csr"), "-CA", file("ca.crt"), "-CAkey", file("ca.key"),
    "-CAcreateserial", "-out", file("client.crt"), "-days", "2", "-extfile", file("client.ext"));
  return { cafile: file("ca.crt"), certfile: file("server.crt"), keyfile: file("server.key"),
           ca: readFileSync(file("ca.crt"), "utf8"), clientCert: file("client.crt"), clientKey: file("client.key") };
}

// Resolves once 127.0.0.1:port accepts a TCP connection; rejects when `exited` comes first or
// the time is up.
async function waitAccepting(port, exited, what) {
  const deadline = Date.now() + START_MS;
  let gone = null;
  exited.then((how) => { gone = how; });
  for (;;) {
    const ok = await new Promise((resolve) => {
      const s = net.connect(port, "127.0.0.1");
      s.once("connect", () => { s.destroy(); resolve(true); });
      s.once("error", () => resolve(false));
    });
    if (ok) return;
    if (gone !== null) throw new Error(`${what} ended before it accepted connections (status ${gone.code}, signal ${gone.signal})`);
    if (Date.now() > deadline) throw new Error(`${what} accepted no connection on port ${port} within ${START_MS} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/// Starts Mosquitto. `tls`: a second listener with TLS (certificates made now); `clientCerts`: that
/// listener requires a client certificate signed by the same CA (`require_certificate`); `settings`:
/// more lines of mosquitto.conf(5) (limits, say; before the listeners); `logTypes`: what it logs
/// (its log_type lines; "all" by default, a benchmark's broker logs less). Resolves with
///   { port, url: "mqtt://127.0.0.1:PORT", pid (the running broker's process id),
///     tls: { port, url: "mqtts://127.0.0.1:PORT", ca, cafile (its path, until stop()),
///            clientCert, clientKey (a certificate the listener accepts, and its key: paths),
///            clientCerts (required) } (only with `tls`),
///     log(): the broker's log so far,
///     restart(): stops it (cleanly, as stop()) and starts it again on the same ports,
///     signal(sig): sends `sig` to the running broker (SIGSTOP, SIGCONT: a stalled broker; the
///       caller resumes it before stop()),
///     stop(): SIGTERM; rejects unless it ended with status 0 within STOP_MS }.
export async function startBroker({ tls = false, clientCerts = false, settings = [], logTypes = ["all"] } = {}) {
  const program = mosquittoProgram();
  const dir = mkdtempSync(path.join(os.tmpdir(), "emcp-broker-"));
  const logFile = path.join(dir, "mosquitto.log");
  const certs = tls ? makeCertificates(dir) : null;
  let port = 0, tlsPort = 0;
  let current = null;  // the running broker's watchServer record
  let finalLog = null; // the log, kept once the folder is removed

  const configure = () => {
    const lines = [
      // Stay the user who started it (root does not drop to the "mosquitto" user: the folder is ours).
      `user ${os.userInfo().username}`,
      "per_listener_settings false",
      "allow_anonymous true",
      "persistence false",
      `log_dest file ${logFile}`,
      ...logTypes.map((t) => `log_type ${t}`),
      "log_timestamp_format %H:%M:%S",
      "connection_messages true",
      ...settings,
      `listener ${port} 127.0.0.1`,
    ];
    if (tls) lines.push(`listener ${tlsPort} 127.0.0.1`, `cafile ${certs.cafile}`, `certfile ${certs.certfile}`, `keyfile ${certs.keyfile}`,
                        ...(clientCerts ? ["require_certificate true"] : []));
    writeFileSync(path.join(dir, "mosquitto.conf"), lines.join("\n") + "\n");
  };

  const launch = async () => {
    configure();
    const proc = spawn(program, ["-c", path.join(dir, "mosquitto.conf")], { stdio: ["ignore", "pipe", "pipe"] });
    live.add(proc);
    proc.once("exit", () => live.delete(proc));
    const w = watchServer(proc, `mosquitto on port ${port}`);
    proc.stdout.on("data", () => {});
    try {
      await waitAccepting(port, w.exited, w.name);
      if (tls) await waitAccepting(tlsPort, w.exited, w.name);
    } catch (e) {
      proc.kill("SIGKILL");
      await w.ended;
      throw new Error(`${e.message}; its stderr: ${w.stderr() || "(nothing)"}; its log:\n${readLog()}`);
    }
    current = w;
  };

  const readLog = () => {
    if (finalLog !== null) return finalLog;
    try { return readFileSync(logFile, "utf8"); } catch { return ""; }
  };

  const end = async () => {
    const w = current;
    if (w === null) return;
    current = null;
    if (w.proc.exitCode !== null || w.proc.signalCode !== null) {
      const how = await w.ended;
      throw new Error(endProblem(w, how, " on its own, before stop()") ?? `${w.name} ended on its own before stop()`);
    }
    w.proc.kill("SIGTERM");
    let timer;
    const how = await Promise.race([w.ended, new Promise((r) => { timer = setTimeout(() => r(null), STOP_MS); })]);
    clearTimeout(timer);
    if (how === null) {
      w.proc.kill("SIGKILL");
      await w.ended;
      throw new Error(`${w.name} did not end within ${STOP_MS} ms of SIGTERM; its log ends:\n${readLog().slice(-2000)}`);
    }
    const problem = endProblem(w, how, " after SIGTERM");
    if (problem !== null) throw new Error(problem);
  };

  // A free port can be taken by someone else before the broker binds it: try again, on others.
  for (let attempt = 1; ; ++attempt) {
    port = await freePort();
    if (tls) do tlsPort = await freePort(); while (tlsPort === port);
    try {
      await launch();
      break;
    } catch (e) {
      if (attempt === 3 || !/Address already in use/.test(e.message)) {
        rmSync(dir, { recursive: true, force: true });
        throw e;
      }
    }
  }

  const broker = {
    port,
    url: `mqtt://127.0.0.1:${port}`,
    get pid() { return current?.proc.pid ?? null; },
    log: readLog,
    async restart() {
      await end();
      await launch();
    },
    signal(sig) {
      if (current === null) throw new Error("the broker is not running");
      current.proc.kill(sig);
    },
    async stop() {
      try {
        await end();
      } finally {
        finalLog = readLog();
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
  if (tls) broker.tls = { port: tlsPort, url: `mqtts://127.0.0.1:${tlsPort}`, ca: certs.ca, cafile: certs.cafile,
                         clientCert: certs.clientCert, clientKey: certs.clientKey, clientCerts };
  return broker;
}
