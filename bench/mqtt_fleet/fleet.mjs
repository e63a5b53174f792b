// bench/mqtt_fleet/fleet.mjs - the fleet benchmark of MCP over MQTT (bench/README.md, section 5;
// scripts/bench runs it through bench/mqtt_fleet/run.sh; the bench preset's bench_mqtt_fleet
// runs it with --check): N emcp-sensors processes on one Mosquitto of its own, found by one
// client, each called.
//
//   node bench/mqtt_fleet/fleet.mjs --sensors PATH [--devices N] [--concurrency C] [--rounds R]
//        [--json FILE] [--deadline-s S] [--broker-nagle] [--baseline FILE] [--check]
//
// The steps, each bounded in time, the whole run by --deadline-s:
//  1. Mosquitto on a free loopback port (tests/mcp/lib/broker.mjs), its queue raised for the fleet;
//     the file descriptor limits of this process and of the broker checked against what N needs.
//  2. A watcher (an MCP client's MQTT connection, tests/mcp/lib/mqtt_transport.mjs) subscribes
//     $mcp-server/presence/+/devices/fleet/#; the broker's RSS with no device.
//  3. N `emcp-sensors --simulate --mqtt URL --mqtt-name devices/fleet/NNN --mqtt-id fleet-NNN`
//     started at once: the time from the first start until the watcher has every presence, and
//     each device's from its start to its presence; the broker's RSS with N devices.
//  4. A second client joins the fleet: from its SUBSCRIBE until all N retained presences.
//  5. A session with every device, C at a time, each on an MQTT connection of its own (the text
//     makes the mcp-client-id the MQTT client id and wants a new one for every initialize):
//     connect, subscribe the RPC (No Local) and capability topics, initialize,
//     notifications/initialized. Then R rounds of tools/call read_sensor over every session, C in
//     flight; then one call to every device at once. Every answer is checked.
//     The processor time the broker, the devices and this process spent on those calls.
//  6. Memory with the sessions open: the broker's, each device's (VmRSS, RssAnon, Pss), ours.
//  7. Every session ends (notifications/disconnected on its RPC and presence topics,
//     DISCONNECT); every device gets SIGTERM and must end with status 0, having counted one
//     connection, one session and no protocol error, and its presence must be cleared; the
//     broker must have dropped no message ($SYS) and end with status 0 after SIGTERM.
// Prints a Markdown summary on stdout and writes the figures as JSON (--json); --baseline FILE,
// the JSON of a run with --broker-nagle (Mosquitto's default: Nagle's algorithm on its sockets),
// adds that run's calls to the summary. Exit status 0 when
// every check held; 1 with the problems on stderr otherwise (everything started is stopped and the
// broker's folder removed either way). --check: the same checks at a small N (default 10), no
// figures asked for.
import { execFileSync, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { performance } from "node:perf_hooks";
import { parseArgs } from "node:util";
import { mosquittoProgram, startBroker } from "../../tests/mcp/lib/broker.mjs";
import { MqttClientTransport, PRESENCE, connectMcpClient, endMcpClient, presenceProblems } from "../../tests/mcp/lib/mqtt_transport.mjs";
import { stopServer, watchServer } from "../../tests/mcp/lib/server_exit.mjs";

const { values: opt } = parseArgs({
  options: {
    sensors: { type: "string" },
    devices: { type: "string" },
    concurrency: { type: "string", default: "16" },
    rounds: { type: "string", default: "5" },
    json: { type: "string" },
    "deadline-s": { type: "string" },
    "broker-nagle": { type: "boolean", default: false },
    baseline: { type: "string" },
    check: { type: "boolean", default: false },
  },
});
if (!opt.sensors) {
  console.error("usage: fleet.mjs --sensors PATH [--devices N] [--concurrency C] [--rounds R] [--json FILE] [--deadline-s S] [--broker-nagle] [--baseline FILE] [--check]");
  process.exit(2);
}
const N = Number(opt.devices ?? (opt.check ? 10 : 200));
const C = Number(opt.concurrency);
const ROUNDS = Number(opt.rounds);
if (!(N >= 1 && N <= 9999 && C >= 1 && ROUNDS >= 1)) {
  console.error("fleet.mjs: --devices 1..9999, --concurrency and --rounds at least 1");
  process.exit(2);
}
// The whole run's bound: generous for the machine's load, a hang still ends.
const DEADLINE_S = Number(opt["deadline-s"] ?? 60 + N);
const REVISION = "2025-11-25";  // the newest revision the MCP-over-MQTT text binds
const STEP_MS = 30000 + 100 * N;  // a step of the fleet (all devices) at most
const REQUEST_MS = 15000;         // one request's answer at most
const PREFIX = "devices/fleet";
const width = Math.max(3, String(N).length);
const pad = (i) => String(i).padStart(width, "0");
const now = () => performance.now();
const problems = [];
const problem = (text) => { if (problems.length < 50) problems.push(text); };

// ---- /proc ---------------------------------------------------------------------------------------

/// The fields of /proc/PID/status in KiB ({ VmRSS, VmHWM, RssAnon }), and Pss from smaps_rollup
/// (shared pages divided among the processes sharing them).
function memory(pid) {
  const out = {};
  for (const line of readFileSync(`/proc/${pid}/status`, "utf8").split("\n")) {
    const m = /^(VmRSS|VmHWM|RssAnon):\s+(\d+) kB/.exec(line);
    if (m) out[m[1]] = Number(m[2]);
  }
  const pss = /^Pss:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/smaps_rollup`, "utf8"));
  out.Pss = pss ? Number(pss[1]) : 0;
  return out;
}

/// The time a process has run on a processor so far, ms (/proc/PID/schedstat's first field, in
/// ns: finer than /proc/PID/stat's clock ticks, which round a device's few ms to 0).
function cpuMs(pid) {
  return Number(readFileSync(`/proc/${pid}/schedstat`, "utf8").split(" ")[0]) / 1e6;
}

/// The soft limit of open files of a process.
function openFilesLimit(pid = "self") {
  const m = /^Max open files\s+(\d+|unlimited)/m.exec(readFileSync(`/proc/${pid}/limits`, "utf8"));
  return m[1] === "unlimited" ? Infinity : Number(m[1]);
}

// ---- small tools -----------------------------------------------------------------------------------

function percentile(values, p) {
  if (values.length === 0) return NaN;
  const s = [...values].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil((p / 100) * s.length) - 1))];
}
const median = (v) => percentile(v, 50);
const sum = (v) => v.reduce((a, b) => a + b, 0);

/// Resolves once `pred()` holds; rejects after `ms` naming `what`.
async function until(pred, ms, what) {
  const deadline = Date.now() + ms;
  while (!pred()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

/// Runs `fn(item, index)` over `items`, at most `limit` at once.
async function pool(items, limit, fn) {
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
}

// ---- what runs ------------------------------------------------------------------------------------

let broker = null;
const devices = [];  // { id, name, index, proc, w, startedAt, onlineAt, announces, offlineAt }
const byId = new Map();
const clients = [];  // MQTT.js connections to end on failure
let stopping = false;

// The bound of the whole run: stop everything we started and fail.
const watchdog = setTimeout(() => {
  console.error(`fleet.mjs: not done within ${DEADLINE_S} s (--deadline-s): stopping everything`);
  abort(1);
}, DEADLINE_S * 1000);

// Stopped from outside (a terminal's ^C, a test runner's SIGTERM): stop what we started too; and
// whatever ends this process, no device outlives it (broker.mjs does the same for the broker).
for (const sig of ["SIGINT", "SIGTERM"]) process.on(sig, () => { console.error(`fleet.mjs: ${sig}: stopping everything`); abort(1); });
process.on("exit", () => { for (const d of devices) if (d.proc?.exitCode === null && d.proc.signalCode === null) d.proc.kill("SIGKILL"); });

let aborting = false;
async function abort(code) {
  if (aborting) return;
  aborting = true;
  for (const d of devices) if (d.proc?.exitCode === null && d.proc.signalCode === null) d.proc.kill("SIGKILL");
  for (const c of clients) c.end(true);
  await broker?.stop().catch(() => {});
  process.exit(code);
}

// One MCP session on an MQTT connection of its own (MqttClientTransport), with requests by id.
class Session {
  constructor(device, index) {
    this.device = device;
    this.clientId = `fleet-client-${pad(index)}-${Math.random().toString(16).slice(2, 10)}`;
    this.t = new MqttClientTransport({ url: broker.url, clientId: this.clientId, server: { id: device.id, name: device.name } });
    this.pending = new Map();
    this.nextId = 1;
    this.t.onmessage = (m) => {
      const p = m.id !== undefined ? this.pending.get(m.id) : undefined;
      if (p) {
        this.pending.delete(m.id);
        p.resolve(m);
      } else if (m.id !== undefined) {
        problem(`${device.id}: an answer to no request of ours: ${JSON.stringify(m).slice(0, 200)}`);
      }
    };
    this.t.onerror = (e) => {
      problem(`${device.id} (session ${this.clientId}): ${e.message}`);
      for (const p of this.pending.values()) p.reject(e);
      this.pending.clear();
    };
  }

  async start() {
    await this.t.start();
    clients.push(this.t.mqtt);
  }

  /// The answer to `method` with `params` (its round trip in ms as `ms`).
  async request(method, params) {
    const id = this.nextId++;
    const t0 = now();
    const answer = new Promise((resolve, reject) => {
      const timer = setTimeout(() => { this.pending.delete(id); reject(new Error(`${this.device.id}: no answer to ${method} within ${REQUEST_MS} ms`)); }, REQUEST_MS);
      this.pending.set(id, { resolve: (m) => { clearTimeout(timer); resolve(m); }, reject: (e) => { clearTimeout(timer); reject(e); } });
    });
    await this.t.send({ jsonrpc: "2.0", id, method, params });
    const m = await answer;
    m.ms = now() - t0;
    if (m.error) throw new Error(`${this.device.id}: ${method} answered with error ${JSON.stringify(m.error)}`);
    return m;
  }

  async initialize() {
    const m = await this.request("initialize", { protocolVersion: REVISION, capabilities: {}, clientInfo: { name: "emcp-fleet-bench", version: "1.0.0" } });
    if (m.result?.protocolVersion !== REVISION || m.result?.serverInfo?.name !== "emcp-sensors")
      throw new Error(`${this.device.id}: initialize answered ${JSON.stringify(m.result).slice(0, 200)}`);
    await this.t.send({ jsonrpc: "2.0", method: "notifications/initialized" });
    return m.ms;
  }

  /// One tools/call of read_sensor (the temperature), its answer checked; its round trip, ms.
  async call() {
    const m = await this.request("tools/call", { name: "read_sensor", arguments: { sensor: "temperature" } });
    const s = m.result?.structuredContent;
    if (m.result?.isError || s?.sensor !== "temperature" || typeof s?.value !== "number" || s?.unit !== "°C")
      throw new Error(`${this.device.id}: read_sensor answered ${JSON.stringify(m.result).slice(0, 200)}`);
    return m.ms;
  }
}

async function main() {
  const R = { devices: N, concurrency: C, rounds: ROUNDS, revision: REVISION };
  // ---- 1. the broker, with room for the fleet ----
  // Each device and each session is one connection (one descriptor) at the broker; here each
  // device is also a stderr pipe and each session a socket. Mosquitto takes the limit it inherits.
  const need = 2 * N + 64;
  R.nofile = { ours: openFilesLimit(), need };
  if (R.nofile.ours < need)
    throw new Error(`the open files limit is ${R.nofile.ours}, the fleet needs ${need}: raise it (ulimit -n; bench/mqtt_fleet/run.sh raises the soft limit to the hard one)`);
  // Mosquitto's defaults (mosquitto.conf(5)): max_connections -1 (no limit of its own), at most
  // 1000 QoS 1 messages queued per client: a client subscribing to N retained presences gets N at
  // once, so the queue is raised with N. $SYS every second: its count of dropped messages.
  // set_tcp_nodelay: Mosquitto leaves Nagle's algorithm on by default, and a PUBLISH it writes
  // right after a PUBACK to the same client then waits for that client's delayed acknowledgement
  // (--broker-nagle keeps the default, to measure what it costs).
  const settings = ["max_connections -1", `max_queued_messages ${Math.max(1000, 4 * N)}`, "sys_interval 1",
                    `set_tcp_nodelay ${opt["broker-nagle"] ? "false" : "true"}`];
  R.settings = settings;
  broker = await startBroker({ settings, logTypes: ["error", "warning", "notice"] });
  R.nofile.broker = openFilesLimit(broker.pid);
  if (R.nofile.broker < need) throw new Error(`the broker's open files limit is ${R.nofile.broker}, the fleet needs ${need}`);
  R.mosquitto = /mosquitto version (\S+)/.exec(execFileSync("sh", ["-c", `"${mosquittoProgram()}" -h || true`], { encoding: "utf8" }))?.[1] ?? "?";
  R.node = process.version;

  // ---- 2. the watcher ----
  const watcher = await connectMcpClient(broker.url, `fleet-watcher-${Math.random().toString(16).slice(2, 10)}`);
  clients.push(watcher);
  watcher.on("message", (topic, payload, packet) => {
    const t = now();
    const m = PRESENCE.exec(topic);
    if (!m) return;
    const d = byId.get(m[1]);
    if (!d || d.name !== m[2]) {
      problem(`a presence of no device we started, or under another name: ${topic}`);
      return;
    }
    if (payload.length === 0) {
      if (!stopping) problem(`${d.id}: its presence was cleared before we stopped it`);
      d.offlineAt ??= t;
      return;
    }
    for (const p of presenceProblems(topic, payload, packet)) problem(p);
    d.announces++;
    d.onlineAt ??= t;
  });
  await watcher.subscribeAsync(`$mcp-server/presence/+/${PREFIX}/#`, { qos: 1 });
  const m0 = memory(broker.pid);

  // ---- 3. the fleet starts ----
  for (let i = 1; i <= N; ++i) {
    const d = { index: i, id: `fleet-${pad(i)}`, name: `${PREFIX}/${pad(i)}`, announces: 0, onlineAt: null, offlineAt: null };
    devices.push(d);
    byId.set(d.id, d);
  }
  const t0 = now();
  for (const d of devices) {
    d.startedAt = now();
    d.proc = spawn(opt.sensors, ["--simulate", "--mqtt", broker.url, "--mqtt-name", d.name, "--mqtt-id", d.id],
                   { stdio: ["ignore", "ignore", "pipe"] });
    d.w = watchServer(d.proc, `emcp-sensors ${d.id}`);
    d.w.exited.then((how) => { if (!stopping) problem(`${d.id} ended before we stopped it (status ${how.code}, signal ${how.signal}): ${d.w.stderr().slice(-500)}`); });
    // A spawn holds this thread for milliseconds: let the presences that came meanwhile be
    // taken (and timed) between two.
    await new Promise((r) => setImmediate(r));
  }
  const spawned = now();
  await until(() => devices.every((d) => d.onlineAt !== null) || problems.length, STEP_MS, `all ${N} presences`);
  if (problems.length) throw new Error("the fleet did not come up");
  const tAll = Math.max(...devices.map((d) => d.onlineAt));
  const lag = devices.map((d) => d.onlineAt - d.startedAt);
  R.discovery = { all_ms: tAll - t0, spawn_ms: spawned - t0, first_ms: Math.min(...devices.map((d) => d.onlineAt)) - t0,
                  p50_ms: median(lag), p99_ms: percentile(lag, 99), max_ms: Math.max(...lag) };
  const m1 = memory(broker.pid);

  // ---- 4. a client joining the fleet ----
  const joinerId = `fleet-joiner-${Math.random().toString(16).slice(2, 10)}`;
  const joiner = await connectMcpClient(broker.url, joinerId);
  clients.push(joiner);
  const retained = new Map();
  joiner.on("message", (topic, payload, packet) => {
    const t = now();
    const m = PRESENCE.exec(topic);
    if (!m || payload.length === 0) return;
    if (!packet.retain) problem(`${topic}: a presence to a new subscriber without the retain flag`);
    for (const p of presenceProblems(topic, payload, packet)) problem(p);
    if (!retained.has(m[1])) retained.set(m[1], t);
  });
  const tSub = now();
  await joiner.subscribeAsync(`$mcp-server/presence/+/${PREFIX}/#`, { qos: 1 });
  await until(() => retained.size === N, STEP_MS, `the ${N} retained presences at a new subscriber`);
  R.join = { all_ms: Math.max(...retained.values()) - tSub };
  await endMcpClient(joiner, joinerId);

  // ---- 5. a session with every device; calls ----
  const sessions = devices.map((d, i) => new Session(d, i + 1));
  const connectMs = [], initMs = [];
  const tOpen = now();
  await pool(sessions, C, async (s) => {
    const a = now();
    await s.start();
    connectMs.push(now() - a);
    initMs.push(await s.initialize());
  });
  const openMs = now() - tOpen;
  R.sessions = { all_ms: openMs, per_s: (N * 1000) / openMs, connect_p50_ms: median(connectMs), connect_p99_ms: percentile(connectMs, 99),
                 init_p50_ms: median(initMs), init_p99_ms: percentile(initMs, 99) };
  const callMs = [];
  const work = [];
  for (let r = 0; r < ROUNDS; ++r) work.push(...sessions);
  const cpuBefore = { broker: cpuMs(broker.pid), devices: sum(devices.map((d) => cpuMs(d.proc.pid))), client: process.cpuUsage() };
  const tCalls = now();
  await pool(work, C, async (s) => { callMs.push(await s.call()); });
  const callsMs = now() - tCalls;
  const client = process.cpuUsage(cpuBefore.client);
  const perCall = (ms) => (ms * 1000) / callMs.length;  // µs
  R.calls = { n: callMs.length, per_s: (callMs.length * 1000) / callsMs, p50_ms: median(callMs), p99_ms: percentile(callMs, 99),
              max_ms: Math.max(...callMs),
              broker_us: perCall(cpuMs(broker.pid) - cpuBefore.broker),
              devices_us: perCall(sum(devices.map((d) => cpuMs(d.proc.pid))) - cpuBefore.devices),
              client_us: perCall((client.user + client.system) / 1000) };
  const tBurst = now();
  const burst = await Promise.all(sessions.map((s) => s.call()));
  R.burst = { all_ms: now() - tBurst, p50_ms: median(burst) };

  // ---- 6. memory with every device connected and in a session ----
  const m2 = memory(broker.pid);
  const mem = devices.map((d) => memory(d.proc.pid));
  const cpu = devices.map((d) => cpuMs(d.proc.pid));
  R.broker = { rss0_kib: m0.VmRSS, rss_devices_kib: m1.VmRSS, rss_sessions_kib: m2.VmRSS, hwm_kib: m2.VmHWM, anon_sessions_kib: m2.RssAnon,
               cpu_ms: cpuMs(broker.pid) };
  R.device = {
    rss_median_kib: median(mem.map((m) => m.VmRSS)), rss_max_kib: Math.max(...mem.map((m) => m.VmRSS)),
    hwm_max_kib: Math.max(...mem.map((m) => m.VmHWM)),
    anon_median_kib: median(mem.map((m) => m.RssAnon)), anon_max_kib: Math.max(...mem.map((m) => m.RssAnon)),
    pss_median_kib: median(mem.map((m) => m.Pss)),
    rss_total_kib: sum(mem.map((m) => m.VmRSS)), pss_total_kib: sum(mem.map((m) => m.Pss)),
    cpu_median_ms: median(cpu), cpu_max_ms: Math.max(...cpu),
  };
  R.client = { rss_kib: Math.round(process.memoryUsage().rss / 1024), connections: N + 1 };

  // ---- 7. everything ends, and ends well ----
  const tClose = now();
  await pool(sessions, C, (s) => s.t.close());
  R.close = { all_ms: now() - tClose };
  for (const s of sessions) for (const v of s.t.violations) problem(`${s.device.id} (session ${s.clientId}): ${v}`);
  stopping = true;
  const tStop = now();
  await Promise.all(devices.map((d) => stopServer(d.w).catch((e) => problem(e.message))));
  const stopped = now();
  for (const d of devices) {
    // emcp-sensors' summary line at its end (ports/posix/src/serve/mqtt_serve.cpp, stop_mqtt()).
    const s = /MQTT: (\d+) connections \((\d+) dials, (\d+) refused by the broker, (\d+) protocol errors, (\d+) keep-alive timeouts\), (\d+) sessions \(.*?\), (\d+) initialize refused \(no free slot\), (\d+) answers too large/.exec(d.w.stderr());
    if (!s) problem(`${d.id}: no MQTT figures on its stderr at its end: ${d.w.stderr().slice(-300)}`);
    else if (s[1] !== "1" || s[3] !== "0" || s[4] !== "0" || s[5] !== "0" || s[6] !== "1" || s[7] !== "0" || s[8] !== "0")
      problem(`${d.id}: wanted 1 connection, 1 session and nothing refused, too large or broken: ${s[0]}`);
    if (d.announces !== 1) problem(`${d.id}: announced itself ${d.announces} times to the watcher (wanted once)`);
  }
  await until(() => devices.every((d) => d.offlineAt !== null), STEP_MS, "every device's presence cleared at its stop")
    .catch((e) => problem(`${e.message}: ${devices.filter((d) => d.offlineAt === null).length} left`));
  R.stop = { exited_ms: stopped - tStop, cleared_ms: Math.max(...devices.map((d) => d.offlineAt ?? NaN)) - tStop };
  // The broker's count of messages it dropped (queue or in-flight limits): a fresh subscription
  // gets the retained value, which is at most sys_interval old; wait that long first.
  await new Promise((r) => setTimeout(r, 1500));
  let dropped = null;
  watcher.on("message", (topic, payload) => { if (topic === "$SYS/broker/publish/messages/dropped") dropped = Number(payload); });
  await watcher.subscribeAsync("$SYS/broker/publish/messages/dropped", { qos: 0 });
  await until(() => dropped !== null, 5000, "the broker's $SYS count of dropped messages").catch((e) => problem(e.message));
  if (dropped !== 0) problem(`the broker dropped ${dropped} messages ($SYS/broker/publish/messages/dropped)`);
  R.broker.dropped = dropped;
  await endMcpClient(watcher, watcher.options.clientId);
  const b = broker;
  broker = null;
  await b.stop();  // rejects unless status 0 after SIGTERM; removes its folder
  return R;
}

function markdown(R, nagle) {
  const ms = (v) => (v >= 100 ? `${Math.round(v)} ms` : `${v.toFixed(1)} ms`);
  const mib = (k) => `${(k / 1024).toFixed(1)} MiB`;
  const kib = (k) => `${Math.round(k).toLocaleString("en-US")} KiB`;
  const b = R.broker, d = R.device;
  return [
    `## MQTT fleet: ${R.devices} emcp-sensors processes on one Mosquitto ${R.mosquitto}, one client (Node ${R.node}, MQTT.js)`,
    "",
    "| step | time | per device or call |",
    "|---|---:|---|",
    `| discovery: the first device started until the watcher had all ${R.devices} presences | ${ms(R.discovery.all_ms)} | a device's start to its presence: p50 ${ms(R.discovery.p50_ms)}, p99 ${ms(R.discovery.p99_ms)}, max ${ms(R.discovery.max_ms)} (starting them all took ${ms(R.discovery.spawn_ms)}) |`,
    `| a client joining the fleet: its SUBSCRIBE until all ${R.devices} retained presences | ${ms(R.join.all_ms)} | |`,
    `| a session with every device, ${R.concurrency} at a time (MQTT connection, subscriptions, initialize, initialized) | ${ms(R.sessions.all_ms)} | ${Math.round(R.sessions.per_s)} sessions/s; connection and subscriptions p50 ${ms(R.sessions.connect_p50_ms)}, p99 ${ms(R.sessions.connect_p99_ms)}; initialize p50 ${ms(R.sessions.init_p50_ms)}, p99 ${ms(R.sessions.init_p99_ms)} |`,
    `| tools/call read_sensor: ${R.rounds} rounds over every session, ${R.concurrency} in flight | ${ms((R.calls.n * 1000) / R.calls.per_s)} | **${Math.round(R.calls.per_s)} calls/s**, p50 ${ms(R.calls.p50_ms)}, p99 ${ms(R.calls.p99_ms)} (${R.calls.n} calls) |`,
    `| one call to every device at once (${R.devices} in flight) | ${ms(R.burst.all_ms)} | p50 ${ms(R.burst.p50_ms)} |`,
    `| every session ended (notifications/disconnected, DISCONNECT), ${R.concurrency} at a time | ${ms(R.close.all_ms)} | |`,
    `| SIGTERM to every device until all exited (status 0) / until the watcher saw every presence cleared | ${ms(R.stop.exited_ms)} / ${ms(R.stop.cleared_ms)} | |`,
    "",
    "| memory | resident (VmRSS) | |",
    "|---|---:|---|",
    `| Mosquitto, no device (the watcher connected) | ${mib(b.rss0_kib)} | |`,
    `| Mosquitto, ${R.devices} devices connected | ${mib(b.rss_devices_kib)} | ${kib((b.rss_devices_kib - b.rss0_kib) / R.devices)} more per device |`,
    `| Mosquitto, ${R.devices} devices and ${R.devices} sessions (${2 * R.devices + 1} connections) | ${mib(b.rss_sessions_kib)} | peak ${mib(b.hwm_kib)}; ${kib((b.rss_sessions_kib - b.rss_devices_kib) / R.devices)} more per session |`,
    `| one emcp-sensors, median / max | ${mib(d.rss_median_kib)} / ${mib(d.rss_max_kib)} | anonymous (RssAnon) ${kib(d.anon_median_kib)} / ${kib(d.anon_max_kib)}; proportional (Pss) ${kib(d.pss_median_kib)} |`,
    `| the ${R.devices} devices together | ${mib(d.rss_total_kib)} | proportional (Pss: shared pages divided among the processes sharing them) ${mib(d.pss_total_kib)} |`,
    `| the client: one Node process, ${R.client.connections} MQTT connections | ${mib(R.client.rss_kib)} | |`,
    "",
    ...(nagle ? [`- with Mosquitto's default \`set_tcp_nodelay false\` (the same run with \`--broker-nagle\`): ${Math.round(nagle.calls.per_s)} calls/s, p50 ${ms(nagle.calls.p50_ms)}, p99 ${ms(nagle.calls.p99_ms)}; initialize p50 ${ms(nagle.sessions.init_p50_ms)}: the broker writes a PUBLISH to a client right after its PUBACK, and Nagle's algorithm holds the PUBLISH until the client acknowledges the PUBACK, which it delays`] : []),
    `- processor time per tools/call (the rounds above): the broker ${Math.round(R.calls.broker_us)} µs, the device ${Math.round(R.calls.devices_us)} µs, the client ${Math.round(R.calls.client_us)} µs; over the whole run the broker ${Math.round(b.cpu_ms)} ms, a device ${d.cpu_median_ms.toFixed(1)} ms (median, max ${d.cpu_max_ms.toFixed(1)} ms) from its start through its session`,
    `- checked: every device announced itself once with notifications/server/online and the text's user properties, answered initialize (${R.revision}) and every read_sensor call with a temperature, counted one MQTT connection and one session and no protocol error, ended with status 0 after SIGTERM and cleared its presence; no session saw a message break the text (tests/mcp/lib/mqtt_transport.mjs); the broker dropped ${b.dropped} messages (\`$SYS\`) and ended with status 0`,
    `- settings (\`bench/mqtt_fleet/fleet.mjs\`): ${R.devices} devices (\`--simulate\`), ${R.concurrency} sessions or calls at a time, ${R.rounds} rounds; Mosquitto: ${R.settings.map((s) => `\`${s}\``).join(", ")}, the rest its defaults; open files limit ${R.nofile.broker} (the broker), ${R.nofile.ours} (the client)`,
  ].join("\n");
}

try {
  const R = await main();
  clearTimeout(watchdog);
  if (problems.length) throw new Error("checks failed");
  if (opt.json) writeFileSync(opt.json, JSON.stringify(R, null, 2) + "\n");
  if (opt.check) {
    console.log(`fleet check: ${N} devices discovered (${R.discovery.all_ms.toFixed(0)} ms), ${R.calls.n + N} calls answered, every device and the broker ended with status 0`);
  } else {
    console.log(markdown(R, opt.baseline ? JSON.parse(readFileSync(opt.baseline, "utf8")) : null));
  }
  process.exit(0);
} catch (e) {
  clearTimeout(watchdog);
  console.error(`fleet.mjs: FAILED: ${e.message}`);
  for (const p of problems) console.error(`  ${p}`);
  await abort(1);
}
