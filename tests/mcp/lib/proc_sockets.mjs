// A Linux server's TCP sockets as the kernel sees them, not as the server reports them: the
// socket inodes of /proc/PID/fd (links "socket:[INODE]") matched against /proc/net/tcp and
// /proc/net/tcp6 (the same network namespace as the test). The soak (tests/soak/http_soak.cpp)
// counts the sockets the same way; here each one's TCP state says what it is:
//   - listening: LISTEN;
//   - open: ESTABLISHED or CLOSE_WAIT (the peer may have hung up, but the server has not shut
//     its side), and sockets in no table at all ("CLOSED": a TCP connection the kernel has
//     ended, after a reset, whose descriptor the server still holds): a connection the server
//     still holds, so a connection slot of its port (or a descriptor it forgot);
//   - closing: FIN_WAIT1, FIN_WAIT2, CLOSING, LAST_ACK, TIME_WAIT: the server shut its side
//     down and lingers for the peer's end (ports/posix: after the last answer, at most 2 s);
//     these hold no slot;
//   - other: Unix and UDP sockets (a child's stdio, spawned with pipes, is a Unix socket).
import fs from "node:fs";

const STATES = { "01": "ESTABLISHED", "02": "SYN_SENT", "03": "SYN_RECV", "04": "FIN_WAIT1", "05": "FIN_WAIT2",
  "06": "TIME_WAIT", "07": "CLOSE", "08": "CLOSE_WAIT", "09": "LAST_ACK", "0A": "LISTEN", "0B": "CLOSING" };
const OPEN = new Set(["ESTABLISHED", "CLOSE_WAIT", "SYN_RECV"]);

/// A table of /proc/net (its lines after the header, split), or none for a file the kernel
/// does not have (no IPv6).
function table(file) {
  try {
    return fs.readFileSync(file, "latin1").split("\n").slice(1).map((l) => l.trim().split(/\s+/)).filter((f) => f.length > 6);
  } catch (e) {
    if (e.code === "ENOENT") return [];
    throw e;
  }
}

/// The kernel's sockets: TCP (both families) inode -> { state, local, remote } ("ADDR:PORT" in
/// the table's hexadecimal); and the inodes of its Unix and UDP sockets.
function kernelSockets() {
  const tcp = new Map();
  for (const f of [...table("/proc/net/tcp"), ...table("/proc/net/tcp6")]) {
    if (f[9] !== "0") tcp.set(f[9], { state: STATES[f[3]] ?? f[3], local: f[1], remote: f[2] });  // "0": an orphan
  }
  const other = new Set(table("/proc/net/unix").map((f) => f[6]));
  for (const f of [...table("/proc/net/udp"), ...table("/proc/net/udp6")]) other.add(f[9]);
  return { tcp, other };
}

/// The TCP sockets of process `pid`: { listening, open, closing, other } (arrays of
/// { state, local, remote }, `other` a count), and `summary` for messages.
export function serverSockets(pid) {
  const inodes = [];
  const dir = `/proc/${pid}/fd`;
  for (const fd of fs.readdirSync(dir)) {
    let target;
    try {
      target = fs.readlinkSync(`${dir}/${fd}`);
    } catch (e) {
      if (e.code === "ENOENT") continue;  // closed between the listing and the link
      throw e;
    }
    const m = /^socket:\[(\d+)\]$/.exec(target);
    if (m) inodes.push(m[1]);
  }
  const k = kernelSockets();
  const out = { listening: [], open: [], closing: [], other: 0 };
  for (const inode of inodes) {
    const s = k.tcp.get(inode);
    if (s === undefined && k.other.has(inode)) ++out.other;
    else if (s === undefined) out.open.push({ state: "CLOSED", local: "", remote: "" });
    else if (s.state === "LISTEN") out.listening.push(s);
    else if (OPEN.has(s.state)) out.open.push(s);
    else out.closing.push(s);
  }
  const states = (list) => list.map((s) => s.state).join(",");
  out.summary = `listening ${out.listening.length}, open ${out.open.length} (${states(out.open)}), ` +
                `closing ${out.closing.length} (${states(out.closing)}), other ${out.other}`;
  return out;
}

/// Waits until `pred(serverSockets(pid))` holds, polling every 20 ms, at most `ms` (a liveness
/// bound: what it waits for is the server's own work on the hang-ups it has already been sent);
/// resolves with the last reading, whether or not it held (the caller asserts).
export async function waitSockets(pid, pred, ms) {
  const end = performance.now() + ms;
  for (;;) {
    const s = serverSockets(pid);
    if (pred(s) || performance.now() > end) return s;
    await new Promise((r) => setTimeout(r, 20));
  }
}
