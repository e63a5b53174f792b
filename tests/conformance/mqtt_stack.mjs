// A server for run.mjs made of three programs, so that the conformance suite runs through MCP over
// MQTT (docs/mqtt.md): a Mosquitto of its own on a free loopback port (tests/mcp/lib/broker.mjs),
// `DEVICE --mqtt URL --mqtt-name NAME` (emcp-everything dialing it), and `BRIDGE --mqtt URL
// --mqtt-name NAME --http 0` (emcp-bridge's gateway: Streamable HTTP in front of the device found
// by its presence). The bridge's "serving MCP on http://..." line is passed on, which is what
// run.mjs waits for. SIGTERM stops the bridge, the device and the broker in that order; the
// exit status is 0 only when each ended cleanly (status 0, no sanitizer report), else 1 with
// the reasons on stderr.
//
//   node mqtt_stack.mjs DEVICE BRIDGE
import { spawn } from "node:child_process";
import { startBroker } from "../mcp/lib/broker.mjs";
import { stopServer, watchServer } from "../mcp/lib/server_exit.mjs";

const [device, bridge] = process.argv.slice(2);
if (!device || !bridge) {
  process.stderr.write("usage: node mqtt_stack.mjs DEVICE BRIDGE\n");
  process.exit(2);
}
const name = `devices/conformance/${Math.random().toString(16).slice(2, 10)}`;
const broker = await startBroker();
const started = [];
function start(cmd, args, pass) {
  const proc = spawn(cmd, args, { stdio: ["pipe", "ignore", "pipe"] });
  const w = watchServer(proc, [cmd, ...args].join(" "));
  if (pass) proc.stderr.on("data", (d) => process.stderr.write(d));
  started.push(w);
  return w;
}
start(device, ["--mqtt", broker.url, "--mqtt-name", name], false);
// --session-takeover: the suite opens a session per scenario and leaves the last one idle; the
// gateway serves one at a time (docs/gateway.md).
start(bridge, ["--mqtt", broker.url, "--mqtt-name", name, "--http", "0", "--session-takeover", "--quiet"], true);

let stopping = false;
async function stop() {
  if (stopping) return;
  stopping = true;
  const problems = [];
  for (const w of started.reverse()) await stopServer(w, "SIGTERM").catch((e) => problems.push(e.message));
  await broker.stop().catch((e) => problems.push(e.message));
  for (const p of problems) process.stderr.write(`mqtt_stack: ${p}\n`);
  process.exit(problems.length ? 1 : 0);
}
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
// A program that ends on its own before the stop is a failure of the stack.
for (const w of started) w.exited.then(() => { if (!stopping) { process.stderr.write(`mqtt_stack: ${w.name} ended on its own\n`); stop(); } });
