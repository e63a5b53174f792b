// The LAN9118 driver and lwIP on the emulated MPS2 (emcp-netcheck, examples/netcheck): QEMU's
// user network gives the board its address by DHCP and forwards a free loopback port to the
// board's port 80, where the firmware echoes TCP. Four connections at once each send 64 KiB of
// their own pattern in pieces of assorted sizes and must get every byte back in order; a second
// round shows the connections' PCBs come back; then the firmware's counters over the UART.
// A round takes about 50 ms, or about a second when one of the four connects has to be
// repeated: QEMU's port forward listens with a backlog of 1, so the host's kernel may drop a
// SYN of simultaneous connects and the client sends it again after 1 s.
//
//   EMCP_QEMU_MACHINE=mps2-an385 EMCP_FIRMWARE=build/mps2-an385/bin/emcp-netcheck-mps2-an385.elf \
//     node --test board_net.test.mjs
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { once } from "node:events";
import net from "node:net";
import { freePort, waitFor } from "./lib/harness.mjs";

const MACHINE = process.env.EMCP_QEMU_MACHINE || "mps2-an385";
const FIRMWARE = process.env.EMCP_FIRMWARE;
const TOTAL = 64 * 1024;
const CONNECTIONS = 4;
const ROUND_MS = 60000;  // the bound on one round of 4 x 64 KiB
const PIECES = [1, 7, 100, 1460, 1461, 3000, 513, 64, 8192];

let qemu = null;
let port = 0;
let uart = "";
let qemuErr = "";

// A safety net: whatever happens, QEMU does not outlive the test process.
process.on("exit", () => { if (qemu && qemu.exitCode === null && qemu.signalCode === null) qemu.kill("SIGKILL"); });

/// Starts QEMU with the UART on stdio (a pipe: QEMU leaves it raw) and the NIC on the user
/// network, a free loopback port forwarded to the board's port 80; resolves once the board has
/// printed its address, or rejects with what QEMU and the UART said.
async function startBoard() {
  port = await freePort();
  uart = "";
  qemuErr = "";
  qemu = spawn("qemu-system-arm", ["-M", MACHINE, "-display", "none", "-monitor", "none", "-serial", "stdio",
    "-nic", `user,model=lan9118,hostfwd=tcp:127.0.0.1:${port}-:80`, "-kernel", FIRMWARE],
  { stdio: ["pipe", "pipe", "pipe"] });
  qemu.stdout.on("data", (d) => { uart += d; });
  qemu.stderr.on("data", (d) => { qemuErr += d; });
  await waitFor(() => /^ip \d+\.\d+\.\d+\.\d+/m.test(uart) || qemu.exitCode !== null, 30000,
    "the board's address line (ip ...)").catch((e) => {
    throw new Error(`${e.message}; UART said:\n${uart}\nQEMU said:\n${qemuErr}`);
  });
  if (qemu.exitCode !== null) throw new Error(`QEMU exited (${qemu.exitCode}): ${qemuErr}`);
}

before(async () => {
  assert.ok(FIRMWARE, "EMCP_FIRMWARE names the netcheck image");
  // The free port can be taken by another process before QEMU binds it (rarely): try again.
  for (let attempt = 1; ; ++attempt) {
    try {
      await startBoard();
      return;
    } catch (e) {
      if (attempt === 3 || !/host forwarding/i.test(qemuErr)) throw e;
    }
  }
});

after(async () => {
  if (qemu && qemu.exitCode === null && qemu.signalCode === null) {
    const exited = once(qemu, "exit");
    qemu.kill("SIGKILL");
    await exited;
  }
});

/// `n` bytes of a pseudo-random pattern of its own for each `seed`.
function pattern(seed, n) {
  const b = Buffer.alloc(n);
  let x = seed * 2654435761 >>> 0;
  for (let i = 0; i < n; ++i) {
    x = (Math.imul(x, 1103515245) + 12345) >>> 0;
    b[i] = x >>> 24;
  }
  return b;
}

/// Sends TOTAL bytes on a new connection in pieces, half-closes once all came back, and
/// resolves with what came back.
function echo(id) {
  const data = pattern(id + 1, TOTAL);
  return new Promise((resolve, reject) => {
    const sock = net.connect(port, "127.0.0.1");
    const chunks = [];
    let got = 0;
    const timer = setTimeout(() => {
      sock.destroy();
      reject(new Error(`connection ${id}: ${got} of ${TOTAL} bytes back after ${ROUND_MS} ms`));
    }, ROUND_MS);
    sock.on("data", (d) => {
      chunks.push(d);
      got += d.length;
      if (got >= TOTAL) sock.end();
    });
    sock.on("error", (e) => {
      clearTimeout(timer);
      reject(new Error(`connection ${id}: ${e.message} after ${got} bytes back`));
    });
    sock.on("close", () => { clearTimeout(timer); resolve({ data, back: Buffer.concat(chunks) }); });
    sock.on("connect", async () => {
      let off = 0;
      for (let k = 0; off < TOTAL; ++k) {
        const n = Math.min(PIECES[k % PIECES.length], TOTAL - off);
        const more = sock.write(data.subarray(off, off + n));
        off += n;
        if (!more) await once(sock, "drain");
      }
    });
  });
}

function firstDifference(a, b) {
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; ++i) if (a[i] !== b[i]) return i;
  return n;
}

async function round(name) {
  const start = Date.now();
  const results = await Promise.all(Array.from({ length: CONNECTIONS }, (_, i) => echo(i)));
  results.forEach(({ data, back }, i) => {
    assert.equal(back.length, TOTAL, `${name}, connection ${i}: ${back.length} of ${TOTAL} bytes came back`);
    assert.ok(back.equals(data),
      `${name}, connection ${i}: the echo differs from byte ${firstDifference(back, data)} on`);
  });
  const s = (Date.now() - start) / 1000;
  console.log(`# ${name}: ${CONNECTIONS} x ${TOTAL} bytes echoed in ${s.toFixed(2)} s`);
}

test("DHCP: the board reports the address QEMU's user network gives", () => {
  const m = /^ip (\S+) \((dhcp|static)\)/m.exec(uart);
  assert.ok(m, uart);
  assert.equal(m[1], "10.0.2.15");
  assert.equal(m[2], "dhcp");
  assert.match(uart, /^mac 52:54:00:12:34:56 link up$/m, "the MAC address QEMU gave the NIC, and the link");
});

test("4 connections at once echo 64 KiB each, every byte in order", { timeout: 2 * ROUND_MS }, async () => {
  await round("first round");
});

test("the PCBs come back: a second round of 4 connections", { timeout: 2 * ROUND_MS }, async () => {
  await round("second round");
});

test("the firmware's counters: every connection accepted and closed, none aborted", { timeout: 20000 }, async () => {
  const before = uart.length;
  qemu.stdin.write("s");
  await waitFor(() => /^stats .*\n/m.test(uart.slice(before)), 10000, "the stats line");
  const line = /^stats .*$/m.exec(uart.slice(before))[0];
  console.log(`# ${line}`);
  const count = (name) => Number(new RegExp(`\\b${name} (\\d+)`).exec(line)[1]);
  assert.equal(count("accepted"), 2 * CONNECTIONS, line);
  assert.equal(count("closed"), 2 * CONNECTIONS, line);
  assert.equal(count("aborted"), 0, line);
  assert.equal(count("refused"), 0, line);
  assert.equal(count("rx_errors"), 0, line);
  assert.equal(count("tx_dropped"), 0, line);
  assert.ok(count("rx") > 2 * CONNECTIONS * TOTAL / 1460, `at least the data's frames came in: ${line}`);
});
