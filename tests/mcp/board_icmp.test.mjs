// ARP and ICMP echo on the emulated MPS2 (emcp-netcheck over the LAN9118 driver and lwIP; and the
// sensors network image under FreeRTOS, lwIP answering from its own thread). QEMU's
// user network does not carry pings to a guest, so here the board's NIC is on QEMU's socket
// network instead: this test is the other end of the wire, speaking raw Ethernet frames (QEMU's
// stream framing: a 4-byte big-endian length, then the frame). Without a DHCP server the board
// takes its static address (10.0.2.15) after its DHCP timeout; then an ARP request for it must
// get its MAC, and ICMP echo requests of several sizes must come back as echo replies with
// the same identifier, sequence number and data, their checksums right.
//
//   EMCP_FIRMWARE=build/mps2-an385/bin/emcp-netcheck-mps2-an385.elf node --test board_icmp.test.mjs
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import net from "node:net";
import { freePort, waitFor } from "./lib/harness.mjs";

const FIRMWARE = process.env.EMCP_FIRMWARE;
const BOARD_IP = [10, 0, 2, 15];
const OUR_IP = [10, 0, 2, 2];
const OUR_MAC = Buffer.from([0x02, 0x00, 0x00, 0x00, 0x00, 0x02]);
let qemu = null;
process.on("exit", () => { if (qemu && qemu.exitCode === null) qemu.kill("SIGKILL"); });
after(() => { if (qemu && qemu.exitCode === null) qemu.kill("SIGKILL"); });

function checksum(buf) {
  let sum = 0;
  for (let i = 0; i + 1 < buf.length; i += 2) sum += buf.readUInt16BE(i);
  if (buf.length & 1) sum += buf[buf.length - 1] << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return ~sum & 0xffff;
}

function arpRequest() {
  const f = Buffer.alloc(42);
  Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).copy(f, 0);
  OUR_MAC.copy(f, 6);
  f.writeUInt16BE(0x0806, 12);
  f.writeUInt16BE(1, 14); f.writeUInt16BE(0x0800, 16); f[18] = 6; f[19] = 4; f.writeUInt16BE(1, 20);
  OUR_MAC.copy(f, 22); Buffer.from(OUR_IP).copy(f, 28);
  Buffer.from(BOARD_IP).copy(f, 38);
  return f;
}

function echoRequest(mac, id, seq, data) {
  const icmp = Buffer.concat([Buffer.from([8, 0, 0, 0, id >> 8, id & 255, seq >> 8, seq & 255]), data]);
  icmp.writeUInt16BE(checksum(icmp), 2);
  const ip = Buffer.alloc(20);
  ip[0] = 0x45; ip.writeUInt16BE(20 + icmp.length, 2); ip.writeUInt16BE(seq, 4); ip[8] = 64; ip[9] = 1;
  Buffer.from(OUR_IP).copy(ip, 12); Buffer.from(BOARD_IP).copy(ip, 16);
  ip.writeUInt16BE(checksum(ip), 10);
  const eth = Buffer.alloc(14);
  mac.copy(eth, 0); OUR_MAC.copy(eth, 6); eth.writeUInt16BE(0x0800, 12);
  return Buffer.concat([eth, ip, icmp]);
}

test("the board answers ARP for its address and ICMP echo requests", async () => {
  assert.ok(FIRMWARE, "EMCP_FIRMWARE names the image");
  const port = await freePort();
  qemu = spawn("qemu-system-arm", ["-M", "mps2-an385", "-display", "none", "-monitor", "none", "-serial", "stdio",
    "-nic", `socket,model=lan9118,listen=127.0.0.1:${port}`, "-kernel", FIRMWARE], { stdio: ["pipe", "pipe", "pipe"] });
  qemu.stdout.resume();  // the UART's output, not read here (drained: QEMU waits on a full pipe)
  let sock = null;
  for (const end = Date.now() + 10000; sock === null && Date.now() < end;) {
    sock = await new Promise((resolve) => {
      const s = net.connect({ host: "127.0.0.1", port });
      s.once("connect", () => resolve(s));
      s.once("error", () => resolve(null));
    });
    if (sock === null) await new Promise((r) => setTimeout(r, 100));
  }
  assert.ok(sock, "QEMU's socket network");
  let inbuf = Buffer.alloc(0);
  const frames = [];
  sock.on("data", (d) => {
    inbuf = Buffer.concat([inbuf, d]);
    while (inbuf.length >= 4 && inbuf.length >= 4 + inbuf.readUInt32BE(0)) {
      const n = inbuf.readUInt32BE(0);
      frames.push(inbuf.subarray(4, 4 + n));
      inbuf = inbuf.subarray(4 + n);
    }
  });
  const send = (frame) => { const h = Buffer.alloc(4); h.writeUInt32BE(frame.length); sock.write(Buffer.concat([h, frame])); };
  // No DHCP server here: the static address after the firmware's DHCP timeout (10 s). Any
  // image that serves the network (netcheck, which says so on its UART, or a sensors network
  // image, whose UART speaks MCP): an ARP request every half second until one is answered.
  let mac = null;
  let asked = 0;
  await waitFor(() => {
    const reply = frames.find((f) => f.readUInt16BE(12) === 0x0806 && f.readUInt16BE(20) === 2 &&
      f.subarray(28, 32).equals(Buffer.from(BOARD_IP)));
    if (reply) mac = reply.subarray(22, 28);
    else if (Date.now() >= asked + 500) {
      send(arpRequest());
      asked = Date.now();
    }
    return reply !== undefined;
  }, 30000, "the ARP reply to its static address");
  assert.deepEqual([...mac], [0x52, 0x54, 0x00, 0x12, 0x34, 0x56], "QEMU's MAC for the board");
  for (const [seq, size] of [[1, 0], [2, 56], [3, 1000], [4, 1472]]) {
    const data = Buffer.alloc(size);
    for (let i = 0; i < size; ++i) data[i] = (i * 7 + seq) & 255;
    send(echoRequest(mac, 0x4d43, seq, data));
    let reply = null;
    await waitFor(() => {
      reply = frames.find((f) => f.readUInt16BE(12) === 0x0800 && f[23] === 1 && f[34] === 0 && f.readUInt16BE(40) === seq);
      return reply !== undefined;
    }, 5000, `the echo reply ${seq}`);
    const ip = reply.subarray(14, 34), icmp = reply.subarray(34, 14 + ip.readUInt16BE(2));
    assert.equal(checksum(ip), 0, "IP header checksum");
    assert.equal(checksum(icmp), 0, "ICMP checksum");
    assert.deepEqual([...ip.subarray(12, 16)], BOARD_IP);
    assert.deepEqual([...ip.subarray(16, 20)], OUR_IP);
    assert.equal(icmp.readUInt16BE(4), 0x4d43, "identifier");
    assert.ok(icmp.subarray(8).equals(data), `data of ${size} bytes comes back`);
  }
  sock.destroy();
});
