// The other end of an emulated board's Ethernet wire: QEMU's socket network (`-nic socket`),
// whose stream carries each frame as a 4-byte big-endian length and the frame. The tests that
// speak raw frames to a board (board_icmp, board_mdns) build and read them with this: no DHCP
// server here, so the board takes its static address (10.0.2.15) after its DHCP timeout.
import { spawn } from "node:child_process";
import net from "node:net";

export const BOARD_IP = [10, 0, 2, 15];
export const OUR_IP = [10, 0, 2, 2];
export const OUR_MAC = Buffer.from([0x02, 0x00, 0x00, 0x00, 0x00, 0x02]);
export const QEMU_BOARD_MAC = [0x52, 0x54, 0x00, 0x12, 0x34, 0x56];  // QEMU's default for the NIC

/// The Internet checksum (RFC 1071) of `buf`.
export function checksum(buf) {
  let sum = 0;
  for (let i = 0; i + 1 < buf.length; i += 2) sum += buf.readUInt16BE(i);
  if (buf.length & 1) sum += buf[buf.length - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return ~sum & 0xffff;
}

/// An Ethernet frame.
export function ethernet(dstMac, type, payload, srcMac = OUR_MAC) {
  const eth = Buffer.alloc(14);
  Buffer.from(dstMac).copy(eth, 0);
  Buffer.from(srcMac).copy(eth, 6);
  eth.writeUInt16BE(type, 12);
  return Buffer.concat([eth, payload]);
}

/// An IPv4 packet (no options, checksum set) carrying `payload` of protocol `proto`.
export function ipv4(proto, src, dst, payload, { id = 1, ttl = 64 } = {}) {
  const ip = Buffer.alloc(20);
  ip[0] = 0x45; ip.writeUInt16BE(20 + payload.length, 2); ip.writeUInt16BE(id & 0xffff, 4); ip[8] = ttl; ip[9] = proto;
  Buffer.from(src).copy(ip, 12); Buffer.from(dst).copy(ip, 16);
  ip.writeUInt16BE(checksum(ip), 10);
  return Buffer.concat([ip, payload]);
}

/// An ARP packet: request (op 1) or reply (op 2), from `senderMac`/`senderIp` about `targetIp`.
export function arp(op, senderMac, senderIp, targetMac, targetIp) {
  const a = Buffer.alloc(28);
  a.writeUInt16BE(1, 0); a.writeUInt16BE(0x0800, 2); a[4] = 6; a[5] = 4; a.writeUInt16BE(op, 6);
  Buffer.from(senderMac).copy(a, 8); Buffer.from(senderIp).copy(a, 14);
  Buffer.from(targetMac).copy(a, 18); Buffer.from(targetIp).copy(a, 24);
  return a;
}

/// An ARP request frame (broadcast) for `targetIp` from us.
export function arpRequest(targetIp = BOARD_IP) {
  return ethernet([0xff, 0xff, 0xff, 0xff, 0xff, 0xff], 0x0806, arp(1, OUR_MAC, OUR_IP, [0, 0, 0, 0, 0, 0], targetIp));
}

/// Starts QEMU's `machine` (mps2-an385 by default) with `firmware`, its NIC on a socket network
/// whose other end this returns once connected: { qemu, frames (every frame received, in
/// order), send(frame), close() }. The UART's output is drained, not read. With `answerArp`,
/// ARP requests for OUR_IP are answered (the board then sends us unicast IP).
export async function startWire(firmware, { machine = "mps2-an385", answerArp = false } = {}) {
  const port = await new Promise((resolve, reject) => {
    const srv = net.createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => { const { port: p } = srv.address(); srv.close(() => resolve(p)); });
  });
  const qemu = spawn("qemu-system-arm", ["-M", machine, "-display", "none", "-monitor", "none", "-serial", "stdio",
    "-nic", `socket,model=lan9118,listen=127.0.0.1:${port}`, "-kernel", firmware], { stdio: ["pipe", "pipe", "pipe"] });
  const kill = () => { if (qemu.exitCode === null && qemu.signalCode === null) qemu.kill("SIGKILL"); };
  process.on("exit", kill);
  qemu.stdout.resume();  // the UART's output (QEMU waits on a full pipe)
  qemu.stderr.resume();
  let sock = null;
  for (const end = Date.now() + 10000; sock === null && Date.now() < end;) {
    sock = await new Promise((resolve) => {
      const s = net.connect({ host: "127.0.0.1", port });
      s.once("connect", () => resolve(s));
      s.once("error", () => resolve(null));
    });
    if (sock === null) await new Promise((r) => setTimeout(r, 100));
  }
  if (sock === null) {
    kill();
    throw new Error("QEMU's socket network did not accept a connection");
  }
  const send = (frame) => { const h = Buffer.alloc(4); h.writeUInt32BE(frame.length); sock.write(Buffer.concat([h, frame])); };
  let inbuf = Buffer.alloc(0);
  const frames = [];
  sock.on("data", (d) => {
    inbuf = Buffer.concat([inbuf, d]);
    while (inbuf.length >= 4 && inbuf.length >= 4 + inbuf.readUInt32BE(0)) {
      const n = inbuf.readUInt32BE(0);
      const f = inbuf.subarray(4, 4 + n);
      frames.push(f);
      inbuf = inbuf.subarray(4 + n);
      // An ARP request for our address: answered from OUR_MAC.
      if (answerArp && f.length >= 42 && f.readUInt16BE(12) === 0x0806 && f.readUInt16BE(20) === 1 &&
          f.subarray(38, 42).equals(Buffer.from(OUR_IP)))
        send(ethernet(f.subarray(6, 12), 0x0806, arp(2, OUR_MAC, OUR_IP, f.subarray(22, 28), f.subarray(28, 32))));
    }
  });
  sock.on("error", () => {});
  return { qemu, frames, send, close: () => { sock.destroy(); kill(); } };
}

/// The board's MAC address, once it answers ARP for its (static) address: an ARP request every
/// half second until a reply comes, for at most `ms` (its DHCP timeout comes first).
export async function boardMac(wire, ms = 30000) {
  let asked = 0;
  for (const end = Date.now() + ms; Date.now() < end; await new Promise((r) => setTimeout(r, 20))) {
    const reply = wire.frames.find((f) => f.readUInt16BE(12) === 0x0806 && f.readUInt16BE(20) === 2 &&
      f.subarray(28, 32).equals(Buffer.from(BOARD_IP)));
    if (reply) return reply.subarray(22, 28);
    if (Date.now() >= asked + 500) {
      wire.send(arpRequest());
      asked = Date.now();
    }
  }
  throw new Error(`timed out after ${ms} ms waiting for the ARP reply to its static address`);
}
