// The board announces its MCP server on the LAN over mDNS / DNS-SD (board/mdns.h,
// docs/discovery.md): lwIP's responder on the emulated MPS2, seen from the other end of its
// Ethernet wire (QEMU's socket network: lib/wire.mjs), with DNS messages built and read here by
// hand (RFC 1035 section 4, RFC 6762, RFC 6763). Multicast needs no user network (QEMU's
// slirp carries none): the frames to 224.0.0.251 (01:00:5e:00:00:fb) reach the board only if its
// NIC's hash filter lets that group in, which the driver sets when lwIP joins it.
//
// Once the board has its static address (no DHCP server here): three probes for its names
// (RFC 6762 section 8.1), then the announcement; a multicast query for `_mcp._tcp.local` PTR is
// answered to the group; unicast "legacy" queries from another port than 5353 (section 6.7:
// PTR, SRV, TXT, A) are answered to the sender with the query's id and question. Every answer
// names the instance (the board's name), its host (the board's name and its MAC's last three
// bytes), port 80, the TXT records exactly as docs/discovery.md lists them for what this image
// serves, and the address 10.0.2.15.
//
//   EMCP_FIRMWARE=build/mps2-an385/bin/emcp-minimal-net-mps2-an385.elf EMCP_MDNS_IMAGE=minimal-net \
//     node --test board_mdns.test.mjs
import { test, after } from "node:test";
import assert from "node:assert/strict";
import { waitFor } from "./lib/harness.mjs";
import { BOARD_IP, OUR_IP, QEMU_BOARD_MAC, boardMac, checksum, ethernet, ipv4, startWire } from "./lib/wire.mjs";

const FIRMWARE = process.env.EMCP_FIRMWARE;
const IMAGE = process.env.EMCP_MDNS_IMAGE ?? "minimal-net";
const BOARD = process.env.EMCP_BOARD_NAME ?? "mps2-an385";
// What each image serves (its build: examples/*/firmware.cmake), as docs/discovery.md's records.
const ALL_REVISIONS = "revisions=2024-11-05,2025-03-26,2025-06-18,2025-11-25,2026-07-28";
const SENSORS = ["path=/mcp", "sse=/sse", "ws=/ws", ALL_REVISIONS, "tls=0"];
const EXPECTED_TXT = {
  "minimal-net": ["path=/mcp", "sse=/sse", ALL_REVISIONS, "tls=0"],  // NetMcp: no SHA-1, no /ws
  "sensors-net": SENSORS,
  "sensors-net-rtos": SENSORS,
  "sensors-tls": ["path=/mcp", "sse=/sse", "ws=/ws", ALL_REVISIONS, "tls=1"],
};
const INSTANCE = BOARD;  // NetMcp's and the sensors image's default: the board's name
const HOST = `${BOARD}-${QEMU_BOARD_MAC.slice(3).map((b) => b.toString(16).padStart(2, "0")).join("")}.local`;
const SERVICE = "_mcp._tcp.local";
const MDNS_GROUP = [224, 0, 0, 251];
const MDNS_MAC = [0x01, 0x00, 0x5e, 0x00, 0x00, 0xfb];
const T = { A: 1, PTR: 12, TXT: 16, SRV: 33, ANY: 255 };
const CACHE_FLUSH = 0x8000;

let wire = null;
after(() => wire?.close());

// ---- DNS messages (RFC 1035 section 4) --------------------------------------------------------
function encodeName(name) {
  const parts = name.split(".").map((l) => { const b = Buffer.from(l, "utf8"); return Buffer.concat([Buffer.from([b.length]), b]); });
  return Buffer.concat([...parts, Buffer.from([0])]);
}

function query(id, name, type) {
  const h = Buffer.alloc(12);
  h.writeUInt16BE(id, 0); h.writeUInt16BE(1, 4);  // flags 0 (a standard query), one question
  const q = Buffer.alloc(4);
  q.writeUInt16BE(type, 0); q.writeUInt16BE(1, 2);  // class IN, QU bit clear
  return Buffer.concat([h, encodeName(name), q]);
}

// A name at `off` (labels and compression pointers); returns [name, offset after it].
function readName(msg, off) {
  const labels = [];
  let end = -1;
  for (let jumps = 0; ; ) {
    const len = msg[off];
    if (len === undefined) throw new Error("name runs past the message");
    if ((len & 0xc0) === 0xc0) {
      if (++jumps > 16) throw new Error("compression loop");
      if (end < 0) end = off + 2;
      off = ((len & 0x3f) << 8) | msg[off + 1];
      continue;
    }
    if (len === 0) return [labels.join("."), end < 0 ? off + 1 : end];
    labels.push(msg.subarray(off + 1, off + 1 + len).toString("utf8"));
    off += 1 + len;
  }
}

function parse(msg) {
  const m = { id: msg.readUInt16BE(0), flags: msg.readUInt16BE(2), questions: [], answers: [], authority: [], additional: [] };
  const counts = [4, 6, 8, 10].map((o) => msg.readUInt16BE(o));
  let off = 12;
  for (let i = 0; i < counts[0]; ++i) {
    const [name, next] = readName(msg, off);
    m.questions.push({ name, type: msg.readUInt16BE(next), klass: msg.readUInt16BE(next + 2) });
    off = next + 4;
  }
  for (const [section, n] of [["answers", counts[1]], ["authority", counts[2]], ["additional", counts[3]]]) {
    for (let i = 0; i < n; ++i) {
      const [name, next] = readName(msg, off);
      const rr = { name, type: msg.readUInt16BE(next), klass: msg.readUInt16BE(next + 2), ttl: msg.readUInt32BE(next + 4) };
      const rdlen = msg.readUInt16BE(next + 8), rd = next + 10;
      if (rd + rdlen > msg.length) throw new Error("record runs past the message");
      if (rr.type === T.PTR) rr.data = readName(msg, rd)[0];
      else if (rr.type === T.A) rr.data = [...msg.subarray(rd, rd + 4)].join(".");
      else if (rr.type === T.SRV) rr.data = { priority: msg.readUInt16BE(rd), weight: msg.readUInt16BE(rd + 2),
        port: msg.readUInt16BE(rd + 4), target: readName(msg, rd + 6)[0] };
      else if (rr.type === T.TXT) {
        rr.data = [];
        for (let p = rd; p < rd + rdlen; p += 1 + msg[p]) rr.data.push(msg.subarray(p + 1, p + 1 + msg[p]).toString("utf8"));
      }
      m[section].push(rr);
      off = rd + rdlen;
    }
  }
  return m;
}

// ---- UDP over the wire -------------------------------------------------------------------------
function udpFrame(dstMac, dstIp, srcPort, dstPort, payload) {
  const udp = Buffer.alloc(8);
  udp.writeUInt16BE(srcPort, 0); udp.writeUInt16BE(dstPort, 2); udp.writeUInt16BE(8 + payload.length, 4);
  const body = Buffer.concat([udp, payload]);
  const pseudo = Buffer.concat([Buffer.from(OUR_IP), Buffer.from(dstIp), Buffer.from([0, 17]), udp.subarray(4, 6), body]);
  body.writeUInt16BE(checksum(pseudo) || 0xffff, 6);
  return ethernet(dstMac, 0x0800, ipv4(17, OUR_IP, dstIp, body, { ttl: 255 }));
}

// The board's UDP datagrams from port 5353 received since frame `from`: { dstIp, dstPort, msg }.
function boardMdns(from = 0) {
  const out = [];
  for (const f of wire.frames.slice(from)) {
    if (f.length < 42 || f.readUInt16BE(12) !== 0x0800 || f[23] !== 17) continue;
    const ihl = (f[14] & 15) * 4, udp = 14 + ihl;
    if (!f.subarray(26, 30).equals(Buffer.from(BOARD_IP)) || f.readUInt16BE(udp) !== 5353) continue;
    out.push({ dstMac: [...f.subarray(0, 6)], dstIp: [...f.subarray(30, 34)], dstPort: f.readUInt16BE(udp + 2),
      ttl: f[22], msg: parse(f.subarray(udp + 8, 14 + f.readUInt16BE(16))) });
  }
  return out;
}

async function answer(from, what, match) {
  let found;
  await waitFor(() => (found = boardMdns(from).find(match)) !== undefined, 5000, what);
  return found;
}

// ---- what every answer must say ----------------------------------------------------------------
function one(records, type, name) {
  const r = records.filter((x) => x.type === type && x.name.toLowerCase() === name.toLowerCase());
  assert.equal(r.length, 1, `one ${Object.keys(T).find((k) => T[k] === type)} record for ${name}: ${JSON.stringify(records)}`);
  return r[0];
}

// The instance's records among `records`: SRV, TXT and A exactly as expected, with the
// cache-flush bit (unique records, RFC 6762 section 10.2) where `flush` says, TTL 120 s where
// `ttl` says.
function checkInstance(records, { flush, ttl = true }) {
  const instance = `${INSTANCE}.${SERVICE}`;
  const srv = one(records, T.SRV, instance);
  assert.deepEqual(srv.data, { priority: 0, weight: 0, port: 80, target: HOST }, "SRV: the host and port 80");
  const txt = one(records, T.TXT, instance);
  assert.deepEqual(txt.data, EXPECTED_TXT[IMAGE], "TXT: docs/discovery.md's records for this image");
  const a = one(records, T.A, HOST);
  assert.equal(a.data, BOARD_IP.join("."), "A: the board's address");
  for (const r of [srv, txt, a]) {
    assert.equal(r.klass, 1 | (flush ? CACHE_FLUSH : 0), `class IN${flush ? " with cache-flush" : ""}: ${r.name}`);
    if (ttl) assert.equal(r.ttl, 120, `TTL of ${r.name}`);
  }
}

function checkPtr(records) {
  const ptr = one(records, T.PTR, SERVICE);
  assert.equal(ptr.data, `${INSTANCE}.${SERVICE}`, "PTR: the service type names the instance");
  assert.equal(ptr.klass, 1, "a shared record: no cache-flush bit");
  return ptr;
}

test("the board probes, announces _mcp._tcp and answers multicast and legacy unicast queries", async () => {
  assert.ok(FIRMWARE, "EMCP_FIRMWARE names the image");
  assert.ok(EXPECTED_TXT[IMAGE], `EMCP_MDNS_IMAGE names an image this test knows (${IMAGE})`);
  wire = await startWire(FIRMWARE, { answerArp: true });
  const mac = await boardMac(wire);
  assert.deepEqual([...mac], QEMU_BOARD_MAC, "QEMU's MAC for the board");

  // Probes, then the announcement, to the group from port 5353 (TTL 255: RFC 6762 section 11).
  const announced = await answer(0, "the announcement", (d) => (d.msg.flags & 0x8000) !== 0 &&
    d.msg.answers.some((r) => r.type === T.PTR && r.name === SERVICE));
  const all = boardMdns(0);
  const probes = all.slice(0, all.indexOf(announced)).filter((d) => (d.msg.flags & 0x8000) === 0 &&
    d.msg.questions.some((q) => q.name.toLowerCase() === HOST.toLowerCase() && q.type === T.ANY));
  assert.ok(probes.length >= 3, `three probes for ${HOST} before the announcement (${probes.length})`);
  for (const d of [...probes, announced]) {
    assert.deepEqual(d.dstIp, MDNS_GROUP, "to 224.0.0.251");
    assert.deepEqual(d.dstMac, MDNS_MAC, "to its group's MAC address");
    assert.equal(d.dstPort, 5353);
    assert.equal(d.ttl, 255, "IP TTL 255");
  }
  assert.equal(announced.msg.flags & 0x8400, 0x8400, "a response, authoritative");
  checkPtr(announced.msg.answers);
  checkInstance(announced.msg.answers, { flush: true });

  // A multicast query (from port 5353, to the group): the answer goes to the group, the
  // instance's records as additional records.
  let from = wire.frames.length;
  wire.send(udpFrame(MDNS_MAC, MDNS_GROUP, 5353, 5353, query(0, SERVICE, T.PTR)));
  const multi = await answer(from, "the answer to the multicast query", (d) => (d.msg.flags & 0x8000) !== 0 &&
    d.msg.answers.some((r) => r.type === T.PTR));
  assert.deepEqual(multi.dstIp, MDNS_GROUP, "a multicast query's answer goes to the group");
  assert.equal(multi.dstPort, 5353);
  assert.equal(multi.msg.id, 0, "id 0 in a multicast answer");
  assert.equal(multi.msg.questions.length, 0, "no question in a multicast answer");
  assert.equal(multi.msg.answers.length, 1, "the PTR alone among the answers");
  checkPtr(multi.msg.answers);
  checkInstance(multi.msg.additional, { flush: true });

  // Legacy unicast queries (RFC 6762 section 6.7), from port 40000 to the board's address: the
  // answer comes back to that port with the id and the question, without cache-flush bits.
  const legacy = async (id, name, type) => {
    from = wire.frames.length;
    wire.send(udpFrame(mac, BOARD_IP, 40000, 5353, query(id, name, type)));
    const d = await answer(from, `the answer to the legacy query for ${name}`, (x) => x.msg.id === id && (x.msg.flags & 0x8000) !== 0);
    assert.deepEqual(d.dstIp, OUR_IP, "a legacy query's answer comes to its sender");
    assert.equal(d.dstPort, 40000, "to the sender's port");
    assert.deepEqual(d.msg.questions, [{ name, type, klass: 1 }], "the question repeated");
    return d.msg;
  };
  const ptr = await legacy(0x4d43, SERVICE, T.PTR);
  checkPtr(ptr.answers);
  checkInstance(ptr.additional, { flush: false, ttl: false });
  const instance = `${INSTANCE}.${SERVICE}`;
  const srv = await legacy(0x4d44, instance, T.SRV);
  assert.deepEqual(one(srv.answers, T.SRV, instance).data, { priority: 0, weight: 0, port: 80, target: HOST }, "SRV on its own");
  assert.equal(one(srv.additional, T.A, HOST).data, BOARD_IP.join("."), "with the host's address");
  const txt = await legacy(0x4d45, instance, T.TXT);
  assert.deepEqual(one(txt.answers, T.TXT, instance).data, EXPECTED_TXT[IMAGE], "TXT on its own");
  const a = await legacy(0x4d46, HOST, T.A);
  assert.equal(one(a.answers, T.A, HOST).data, BOARD_IP.join("."), "A on its own");
});
