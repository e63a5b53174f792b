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
import { waitFor } from "./lib/harness.mjs";
import { BOARD_IP, OUR_IP, QEMU_BOARD_MAC, boardMac, checksum, ethernet, ipv4, startWire } from "./lib/wire.mjs";

const FIRMWARE = process.env.EMCP_FIRMWARE;
let wire = null;
after(() => wire?.close());

function echoRequest(mac, id, seq, data) {
  const icmp = Buffer.concat([Buffer.from([8, 0, 0, 0, id >> 8, id & 255, seq >> 8, seq & 255]), data]);
  icmp.writeUInt16BE(checksum(icmp), 2);
  return ethernet(mac, 0x0800, ipv4(1, OUR_IP, BOARD_IP, icmp, { id: seq }));
}

test("the board answers ARP for its address and ICMP echo requests", async () => {
  assert.ok(FIRMWARE, "EMCP_FIRMWARE names the image");
  wire = await startWire(FIRMWARE);
  const { frames, send } = wire;
  // No DHCP server here: the static address after the firmware's DHCP timeout (10 s). Any
  // image that serves the network (netcheck, which says so on its UART, or a sensors network
  // image, whose UART speaks MCP): an ARP request every half second until one is answered.
  const mac = await boardMac(wire);
  assert.deepEqual([...mac], QEMU_BOARD_MAC, "QEMU's MAC for the board");
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
});
