// An MCP client transport over MQTT 5 written for the tests on MQTT.js (npm `mqtt`, pinned),
// step by step as the MCP-over-MQTT text says (shared/spec/mcp-over-mqtt/mqtt_transport.md),
// independently of emcp's own MQTT code. It is an SDK Transport (start, send, close, onmessage,
// onclose, onerror), so the official SDK client runs over it, and it records every way the
// server's side breaks the text (`violations`):
//   - connect: MQTT 5, Clean Start, Session Expiry 0, user properties MCP-COMPONENT-TYPE and
//     MCP-META, the Will: notifications/disconnected on $mcp-client/presence/{client-id};
//   - discovery: subscribe $mcp-server/presence/+/{server-name-filter}; a retained
//     notifications/server/online names each server instance ({server-id}, {server-name});
//   - before initialize: subscribe the RPC topic with No Local, and the server's capability
//     topic; initialize goes to the control topic, everything after to the RPC topic;
//   - every PUBLISH carries MCP-COMPONENT-TYPE and MCP-MQTT-CLIENT-ID; the server's must say
//     mcp-server and its server-id; a message of our own coming back breaks No Local;
//   - close: notifications/disconnected on the RPC topic and on our presence topic, then
//     DISCONNECT.
import mqtt from "mqtt";

const DISCONNECTED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/disconnected" });
/// A server's presence topic: [1] its server-id, [2] its server-name.
export const PRESENCE = /^\$mcp-server\/presence\/([^/]+)\/(.+)$/;

/// The user properties of every PUBLISH a client sends (the text).
export function clientProperties(clientId) {
  return { "MCP-COMPONENT-TYPE": "mcp-client", "MCP-MQTT-CLIENT-ID": clientId };
}

/// Connects to the broker at `url` as an MCP client with the MQTT client id `clientId`, as the
/// text says: MQTT 5, Clean Start, Session Expiry 0, the CONNECT's user properties, the Will
/// (notifications/disconnected on $mcp-client/presence/{clientId}); no automatic reconnect; its
/// socket with TCP_NODELAY (MQTT.js leaves Nagle's algorithm on: a PUBACK and the next PUBLISH,
/// two small writes, would wait for the broker's delayed acknowledgement).
/// Resolves with the MQTT.js client; rejects when the broker refuses or does not answer.
export async function connectMcpClient(url, clientId) {
  const client = await mqtt.connectAsync(url, {
    protocolVersion: 5,
    clientId,
    clean: true,
    reconnectPeriod: 0,
    connectTimeout: 5000,
    properties: { sessionExpiryInterval: 0, userProperties: { "MCP-COMPONENT-TYPE": "mcp-client", "MCP-META": "{}" } },
    will: {
      topic: `$mcp-client/presence/${clientId}`,
      payload: Buffer.from(DISCONNECTED),
      qos: 1,
      retain: false,
      properties: { userProperties: clientProperties(clientId) },
    },
  });
  client.stream.setNoDelay?.(true);
  return client;
}

/// Ends a connection of connectMcpClient as the text says: notifications/disconnected on the
/// client's presence topic (and first on `rpc`, the RPC topic of a session, unless null), then
/// DISCONNECT.
export async function endMcpClient(client, clientId, rpc = null) {
  const opts = { qos: 1, properties: { userProperties: clientProperties(clientId) } };
  if (rpc) await client.publishAsync(rpc, DISCONNECTED, opts).catch(() => {});
  await client.publishAsync(`$mcp-client/presence/${clientId}`, DISCONNECTED, opts).catch(() => {});
  await client.endAsync();
}

/// Where a server's message breaks the text's user properties: MCP-COMPONENT-TYPE mcp-server and
/// MCP-MQTT-CLIENT-ID its server-id `id`. Returns the problems (none: []).
export function serverPropertyProblems(topic, packet, id) {
  const user = packet.properties?.userProperties ?? {};
  const out = [];
  if (user["MCP-COMPONENT-TYPE"] !== "mcp-server")
    out.push(`${topic}: MCP-COMPONENT-TYPE is ${JSON.stringify(user["MCP-COMPONENT-TYPE"])}`);
  if (user["MCP-MQTT-CLIENT-ID"] !== id)
    out.push(`${topic}: MCP-MQTT-CLIENT-ID is ${JSON.stringify(user["MCP-MQTT-CLIENT-ID"])}, not ${id}`);
  return out;
}

/// Where a non-empty message on a presence topic (PRESENCE) breaks the text: it must be
/// notifications/server/online naming the topic's server-name, with the server's properties.
/// Returns the problems (none: []).
export function presenceProblems(topic, payload, packet) {
  const [, id, name] = PRESENCE.exec(topic);
  let m;
  try { m = JSON.parse(payload); } catch { return [`presence is not JSON: ${payload}`]; }
  const out = [];
  if (m.method !== "notifications/server/online" || m.params?.server_name !== name)
    out.push(`presence message is not notifications/server/online for ${name}: ${payload}`);
  return out.concat(serverPropertyProblems(topic, packet, id));
}

/// Resolves with the first message for which `pick(topic, payload, packet)` returns a value,
/// within `ms`.
function waitMessage(client, pick, ms, what) {
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => { client.off("message", on); reject(new Error(`timed out after ${ms} ms waiting for ${what}`)); }, ms);
    const on = (topic, payload, packet) => {
      const v = pick(topic, payload, packet);
      if (v !== undefined) {
        clearTimeout(timer);
        client.off("message", on);
        resolve(v);
      }
    };
    client.on("message", on);
  });
}

export class MqttClientTransport {
  /// `url` the broker; `serverNameFilter` what to discover ("#": any); `serverName` (optional)
  /// the one to pick among those found; `server` ({ id, name }, optional) a server found before
  /// (by another client's discovery): no discovery then.
  constructor({ url, serverNameFilter = "#", serverName = null, clientId = null, discoverMs = 10000, server = null }) {
    this.url = url;
    this.filter = serverNameFilter;
    this.wanted = serverName;
    this.known = server;
    this.clientId = clientId ?? `mcp-client-${Math.random().toString(16).slice(2, 10)}`;
    this.discoverMs = discoverMs;
    this.violations = [];
    this.servers = new Map();  // server-id -> { name, online }
    this.closed = false;
  }

  get sessionId() { return undefined; }
  setProtocolVersion() {}

  userProperties() {
    return clientProperties(this.clientId);
  }

  async start() {
    this.mqtt = await connectMcpClient(this.url, this.clientId);
    this.mqtt.on("message", (topic, payload, packet) => this.onPacket(topic, payload, packet));
    this.mqtt.on("close", () => {
      if (!this.closed) this.onerror?.(new Error("the broker connection closed"));
    });
    const server = this.known ?? await this.discover();
    this.serverId = server.id;
    this.serverName = server.name;
    this.control = `$mcp-server/${server.id}/${server.name}`;
    this.rpc = `$mcp-rpc/${this.clientId}/${server.id}/${server.name}`;
    this.capability = `$mcp-server/capability/${server.id}/${server.name}`;
    // Before initialize (the text): the RPC topic with No Local, the capability topic.
    const granted = await this.mqtt.subscribeAsync({
      [this.rpc]: { qos: 1, nl: true },
      [this.capability]: { qos: 1 },
    });
    for (const g of granted) if (g.qos > 2) this.violations.push(`SUBACK refused ${g.topic}: ${g.qos}`);
  }

  // The first server announcing itself on the presence topics of the filter (and the name wanted).
  async discover() {
    const presence = `$mcp-server/presence/+/${this.filter}`;
    const found = waitMessage(this.mqtt, (topic, payload) => {
      const m = PRESENCE.exec(topic);
      if (!m || payload.length === 0) return undefined;
      if (this.wanted && m[2] !== this.wanted) return undefined;
      return { id: m[1], name: m[2] };
    }, this.discoverMs, `a server on ${presence}`);
    await this.mqtt.subscribeAsync(presence, { qos: 1 });
    return found;
  }

  onPacket(topic, payload, packet) {
    const user = packet.properties?.userProperties ?? {};
    const presence = PRESENCE.exec(topic);
    if (presence) {
      const online = payload.length !== 0;
      this.servers.set(presence[1], { name: presence[2], online });
      if (online) {
        this.violations.push(...presenceProblems(topic, payload, packet));
      } else if (presence[1] === this.serverId && !this.closed) {
        this.serverGone = true;
        this.onerror?.(new Error(`the server ${this.serverId} went offline`));
      }
      return;
    }
    if (topic !== this.rpc && topic !== this.capability) {
      this.violations.push(`a message on a topic not subscribed for: ${topic}`);
      return;
    }
    if (user["MCP-MQTT-CLIENT-ID"] === this.clientId) {
      this.violations.push(`our own message came back on ${topic} (No Local)`);
      return;
    }
    this.violations.push(...serverPropertyProblems(topic, packet, this.serverId));
    let message;
    try {
      message = JSON.parse(payload.toString("utf8"));
    } catch (e) {
      this.violations.push(`not JSON on ${topic}: ${payload}`);
      return;
    }
    if (topic === this.capability && !/list_changed$|^notifications\/resources\/updated$/.test(message.method ?? ""))
      this.violations.push(`not a capability notification on ${topic}: ${payload}`);
    if (message.method === "notifications/disconnected") {
      this.serverGone = true;
      this.onerror?.(new Error("the server sent notifications/disconnected"));
      return;
    }
    this.onmessage?.(message);
  }

  async send(message) {
    if (this.closed) throw new Error("the transport is closed");
    const topic = message.method === "initialize" ? this.control : this.rpc;
    await this.mqtt.publishAsync(topic, JSON.stringify(message), {
      qos: 1,
      properties: { payloadFormatIndicator: true, userProperties: this.userProperties() },
    });
  }

  async close() {
    if (this.closed) return;
    this.closed = true;
    if (this.mqtt?.connected) {
      await endMcpClient(this.mqtt, this.clientId, this.rpc && !this.serverGone ? this.rpc : null);
    } else {
      this.mqtt?.end(true);
    }
    this.onclose?.();
  }
}
