// Bearer-token authorization on the emulated board, over HTTPS: the sensors TLS firmware with a
// static token, an ES256 JWT key and its issuer provisioned into its credentials region
// (scripts/run-board --auth-token/--jwt-key/--issuer), its wall clock from the host through
// semihosting. The test authorization server (lib/oauth_server.mjs) issues the JWTs with keys
// made now; the full table runs on Linux (auth.test.mjs), this is the board's share of it: the
// metadata, the challenges, malformed Authorization headers (400 invalid_request), tokens that
// pass and tokens that must not (expired, another audience, alg none, a bad signature, typed
// "JWT": the board is provisioned with --require-at-jwt), each with the error_description of
// the check that refused it, a scope the token lacks, a token in the query string, and a token
// from the authorization code flow (PKCE, resource indicator) calling a tool.
//
// EMCP_RUN_BOARD (the board), EMCP_TLS_DIR and NODE_EXTRA_CA_CERTS (the test PKI).
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import fs from "node:fs";
import https from "node:https";
import os from "node:os";
import path from "node:path";
import { startNetworkServer, stopNetworkServer, ON_BOARD, TLS } from "./lib/harness.mjs";
import { startAuthServer, flipSignatureBit } from "./lib/oauth_server.mjs";

const STATIC = "board-static-token-0123456789abcdef";
let as, server, port, resource, metadataUrl;
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "emcp-board-auth-"));

before(async () => {
  assert.ok(ON_BOARD && TLS, "EMCP_RUN_BOARD and EMCP_TLS_DIR must be set");
  as = await startAuthServer({ alg: "ES256" });
  const pub = path.join(tmp, "jwt.pem");
  fs.writeFileSync(pub, as.publicKeyPem);
  server = await startNetworkServer(null, ["--auth-token", STATIC, "--jwt-key", pub, "--issuer", as.issuer, "--require-at-jwt"]);
  port = server.port;
  resource = `https://127.0.0.1:${port}/mcp`;
  metadataUrl = `https://127.0.0.1:${port}/.well-known/oauth-protected-resource/mcp`;
});
after(async () => {
  if (server) await stopNetworkServer(server);
  if (as) await as.close();
  fs.rmSync(tmp, { recursive: true, force: true });
});

const rpc = (id, method, params) => JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
const INIT = rpc(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "board-auth", version: "1" } });

/// One HTTPS request on a fresh connection: { status, headers, body }. `authorization` (a string,
/// or an array for the header twice) replaces the `Bearer <token>` header.
function request(method, p, { token, authorization, headers = {}, body } = {}) {
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: "127.0.0.1", port, path: p, method, agent: false, timeout: 15000,
      headers: { ...(body ? { "Content-Type": "application/json", Accept: "application/json, text/event-stream" } : {}),
                 ...(token ? { Authorization: `Bearer ${token}` } : {}),
                 ...(authorization !== undefined ? { Authorization: authorization } : {}), ...headers },
    }, (res) => {
      const parts = [];
      res.on("data", (d) => parts.push(d));
      res.on("end", () => resolve({ status: res.statusCode, headers: res.headers, body: Buffer.concat(parts).toString() }));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end(body);
  });
}
const post = (token, body, headers) => request("POST", "/mcp", { token, body, headers });
const challenge = (r) => r.headers["www-authenticate"] ?? "";
/// The challenge's error and error_description (RFC 6750 3).
const refusal = (r) => ({ error: /error="([^"]*)"/.exec(challenge(r))?.[1], why: /error_description="([^"]*)"/.exec(challenge(r))?.[1] });
const jwt = (claims = {}, options = {}) => as.mint({ claims: { aud: resource, scope: "sensors:read device:control", ...claims }, ...options });

/// Initializes a session with `token` and calls `tool`; the POST's answer.
async function callWith(token, tool, args) {
  const init = await post(token, INIT);
  assert.equal(init.status, 200, `initialize: ${init.status} ${init.body}`);
  const sid = init.headers["mcp-session-id"];
  const h = { "Mcp-Session-Id": sid, "MCP-Protocol-Version": "2025-11-25" };
  assert.equal((await post(token, JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }), h)).status, 202);
  return post(token, rpc(2, "tools/call", { name: tool, arguments: args }), h);
}

test("the metadata document (RFC 9728) names the board's canonical URI and the authorization server", async () => {
  const r = await request("GET", "/.well-known/oauth-protected-resource/mcp");
  assert.equal(r.status, 200);
  const doc = JSON.parse(r.body);
  assert.equal(doc.resource, resource);
  assert.deepEqual(doc.authorization_servers, [as.issuer]);
  assert.deepEqual(doc.scopes_supported, ["sensors:read", "device:control"]);
  assert.deepEqual(doc.bearer_methods_supported, ["header"]);
});

test("no token: 401 naming the metadata; a malformed header: 400; a bad token: 401 invalid_token saying why; in the query: 400", async () => {
  const a = await post(null, INIT);
  assert.equal(a.status, 401);
  assert.match(challenge(a), new RegExp(`resource_metadata="${metadataUrl.replace(/[.?]/g, "\\$&")}"`));
  assert.doesNotMatch(challenge(a), /error=/);
  // RFC 6750 3.1, MCP authorization "Error Handling": a malformed authorization request is 400.
  for (const [authorization, why] of [
    ["Bearer", "no token after Bearer"],
    [`Bearer ${STATIC} x`, "more than one token after Bearer"],
    [`Bearer ${STATIC}!`, "the token is not an RFC 6750 b64token"],
    [[`Bearer ${STATIC}`, `Bearer ${STATIC}`], "more than one Authorization header"],
  ]) {
    const r = await request("POST", "/mcp", { authorization, body: INIT });
    assert.equal(r.status, 400, `${authorization}: ${r.status}`);
    assert.deepEqual(refusal(r), { error: "invalid_request", why }, String(authorization));
  }
  const other = await request("POST", "/mcp", { authorization: `Basic ${Buffer.from("a:b").toString("base64")}`, body: INIT });
  assert.equal(other.status, 401);
  assert.doesNotMatch(challenge(other), /error=/);
  const now = Math.floor(Date.now() / 1000);
  for (const [bad, why] of [
    [jwt({ exp: now - 3600 }), "token expired"],                             // the board's clock is the host's
    [jwt({ aud: "https://elsewhere.example/mcp" }), "token for another audience"],
    [jwt({}, { alg: "none", header: { alg: "none" } }).replace(/[^.]*$/, ""), "token algorithm not accepted"],
    // One bit of the decoded signature: canonical base64url every time, so the signature check
    // answers (a character of the text may only touch unused bits: then it is the encoding's).
    [flipSignatureBit(jwt()), "token signature invalid"],
    [flipSignatureBit(jwt(), 511), "token signature invalid"],
    [jwt({}, { header: { typ: "JWT" } }), "token typ is not at+jwt"],           // --require-at-jwt
    ["unknown-static-token-0123456789", "token is not three base64url parts"],
  ]) {
    const r = await post(bad, INIT);
    assert.equal(r.status, 401, `token ${bad.slice(0, 40)}...: ${r.status}`);
    assert.deepEqual(refusal(r), { error: "invalid_token", why }, `token ${bad.slice(0, 40)}...`);
  }
  const q = await request("POST", `/mcp?access_token=${STATIC}`, { token: STATIC, body: INIT });
  assert.equal(q.status, 400);
  assert.deepEqual(refusal(q), { error: "invalid_request", why: "token in the query string" });
});

test("the static token, and a JWT of the board's audience, open sessions and call tools", async () => {
  const s = await callWith(STATIC, "set_relay", { on: false });
  assert.equal(s.status, 200, s.body);
  const j = await callWith(jwt(), "read_sensor", { sensor: "temperature" });
  assert.equal(j.status, 200, j.body);
  assert.match(j.body, /"sensor":"temperature"/);
});

test("a token without device:control calling set_relay: 403 insufficient_scope naming the scopes", async () => {
  const r = await callWith(jwt({ scope: "sensors:read" }), "set_relay", { on: true });
  assert.equal(r.status, 403);
  assert.match(challenge(r), /error="insufficient_scope"/);
  assert.match(challenge(r), /scope="sensors:read device:control"/);
});

test("a token from the authorization code flow (PKCE, resource indicator) reads a sensor", async () => {
  const { access_token: token } = await as.obtainToken({ resource, scope: "sensors:read" });
  const r = await callWith(token, "read_sensor", { sensor: "load" });
  assert.equal(r.status, 200, r.body);
});
