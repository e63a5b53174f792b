// emcp-sensors as an OAuth 2.1 resource server (MCP authorization; RFC 6750, RFC 9728, RFC 8707),
// judged from outside:
//   - the official SDK client's OAuth flow end to end against a small authorization server of
//     the tests (lib/oauth_server.mjs: metadata, dynamic registration, PKCE, JWTs signed with a
//     key made at test time): 401, discovery, registration, token, a tool call; then a call that
//     needs a scope the token lacks (403 insufficient_scope) and what the SDK does about it
//     (step-up); a token for another audience is refused;
//   - a bad-input table of credentials, each with its status and WWW-Authenticate challenge, the
//     server serving afterwards; the protected resource metadata; the static token; WebSocket;
//   - the other key types (RS256, HS256) and the key files the server must refuse.
// Loopback only; every wait is bounded; every server is stopped in after().
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors node --test tests/mcp/auth.test.mjs
import { test, describe, before, after } from "node:test";
import assert from "node:assert/strict";
import crypto from "node:crypto";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { WebSocket } from "ws";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { UnauthorizedError } from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthMetadataSchema, OAuthProtectedResourceMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import { startNetworkServer, stopNetworkServer } from "./lib/harness.mjs";
import { connectRaw, once, request, INIT, POST_HEADERS } from "./lib/rawhttp.mjs";
import { startAuthServer, makeKey, signJwt, signature, b64url, decodeJwt, flipSignatureBit, canonicalBase64url } from "./lib/oauth_server.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
const STATIC = "static-test-token-0123456789abcdef";   // --auth-token (grants every scope)
const ALL = "sensors:read device:control";             // the sensors example's scopes
const MAX_AUTH = 1024;                                  // EMCP_HTTP_MAX_AUTH of the native build
const REDIRECT = "http://127.0.0.1:9/oauth/callback";  // never contacted: the test reads the redirect itself
const SUITE_MS = 60000;                                 // each describe() at most (a run takes about 17 s)

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "emcp-auth-"));
const cleanups = [];
after(async () => {
  // Every cleanup runs; a server that did not end cleanly (stopNetworkServer) fails the file.
  const problems = [];
  for (const f of cleanups.reverse()) await f().catch((e) => problems.push(e.message));
  fs.rmSync(tmp, { recursive: true, force: true });
  assert.deepEqual(problems, [], "the servers and authorization servers ended cleanly");
});

/// Writes `text` to a file of the temporary folder; returns its path.
function writeTmp(name, text) {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, text);
  return file;
}

/// emcp-sensors --simulate on a free loopback port with `args` (and --ws); stopped at the end.
async function startSensors(args) {
  const s = await startNetworkServer(SERVER, ["--simulate", ...args], ["--ws"]);
  cleanups.push(() => stopNetworkServer(s));
  return { ...s, resource: `http://127.0.0.1:${s.port}/mcp`,
           metadataUrl: `http://127.0.0.1:${s.port}/.well-known/oauth-protected-resource/mcp` };
}

/// A test authorization server, closed at the end.
async function startAs(options) {
  const as = await startAuthServer(options);
  cleanups.push(() => as.close());
  return as;
}

/// The parameters of a `Bearer` challenge (RFC 7235 auth-params, quoted or not).
function challenge(header) {
  assert.ok(header, "a WWW-Authenticate header");
  const m = /^Bearer(?:[ ]+(.*))?$/i.exec(header);
  assert.ok(m, `a Bearer challenge: ${header}`);
  const params = {};
  const rest = m[1] ?? "";
  const re = /([A-Za-z0-9_]+)=(?:"((?:[^"\\]|\\.)*)"|([^\s,"]+))[ ]*(?:,[ ]*|$)/y;
  while (re.lastIndex < rest.length) {
    const x = re.exec(rest);
    assert.ok(x, `well-formed auth-params: ${header}`);
    params[x[1]] = x[2] !== undefined ? x[2].replace(/\\(.)/g, "$1") : x[3];
  }
  return params;
}

const rpc = (id, method, params) => JSON.stringify({ jsonrpc: "2.0", id, method, ...(params ? { params } : {}) });
const callTool = (id, name, args) => rpc(id, "tools/call", { name, arguments: args });
const INITIALIZED = JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" });

/// A POST to `path` (default /mcp) with `auth` as the Authorization header (null: none) on a
/// fresh connection: { status, headers, body, closed }.
function post(port, auth, body, { path: p = "/mcp", sid, headers = {} } = {}) {
  const h = { ...POST_HEADERS, ...headers };
  if (auth !== null && auth !== undefined) h.Authorization = auth;
  if (sid) h["Mcp-Session-Id"] = sid;
  return once(port, request("POST", p, h, body));
}
/// A GET on a fresh connection.
function get(port, p, headers = {}) {
  return once(port, request("GET", p, headers));
}

/// Initializes a session (`revision`, default 2025-11-25) with `auth`; returns its id.
async function session(port, auth, revision = "2025-11-25") {
  const init = rpc(1, "initialize", { protocolVersion: revision, capabilities: {}, clientInfo: { name: "auth-test", version: "1" } });
  const r = await post(port, auth, init);
  assert.equal(r.status, 200, `initialize: ${r.body}`);
  const sid = r.headers["mcp-session-id"];
  assert.ok(sid);
  const n = await post(port, auth, INITIALIZED, { sid, headers: { "MCP-Protocol-Version": revision } });
  assert.equal(n.status, 202);
  return sid;
}

/// The JSON-RPC answers in a POST's body (JSON, or the data lines of an SSE stream).
function answers(r) {
  const text = r.body.toString();
  if (/^application\/json/.test(r.headers["content-type"] ?? "")) return [JSON.parse(text)].flat();
  return text.split("\n").filter((l) => l.startsWith("data:")).map((l) => JSON.parse(l.slice(5))).flat();
}
/// The answer to request `id` in a POST's body.
function answer(r, id) {
  const a = answers(r).find((m) => m.id === id && !("method" in m));
  assert.ok(a, `an answer to ${id} in ${r.body}`);
  return a;
}

/// The error_description of each refusal (emcp's texts: the check that refused the request).
/// RFC 6750 3.1 and the MCP authorization text fix the status and the error code; the
/// description says which check answered, so that each row of a table is known to reach the
/// check it is about (a "bad signature" that is refused as an encoding proves nothing).
const WHY = {
  query: "token in the query string",
  twice: "more than one Authorization header",
  noToken: "no token after Bearer",
  twoTokens: "more than one token after Bearer",
  b64token: "the token is not an RFC 6750 b64token",
  syntax: "the Authorization header is not a scheme and its credentials",
  parts: "token is not three base64url parts",
  base64url: "token part is not base64url",
  json: "token header or claims are not a JSON object",
  duplicate: "token has a duplicate header or claim name",
  claimType: "token claim of the wrong type",
  alg: "token algorithm not accepted",
  crit: "token has critical extensions",
  typ: "token typ is not at+jwt",
  signature: "token signature invalid",
  missing: "token lacks exp, iss or aud",
  expired: "token expired",
  early: "token not yet valid",
  issuer: "token from another issuer",
  audience: "token for another audience",
};

/// What a cut token is refused for, judged here (RFC 7515 7.1, RFC 4648 5): not three parts
/// or an empty header or claims part; a part that is not canonical base64url; else the
/// signature (a shorter one never verifies).
function whyCut(authorization) {
  const parts = authorization.replace(/^Bearer /, "").split(".");
  if (parts.length !== 3 || parts[0] === "" || parts[1] === "") return WHY.parts;
  if (!parts.every(canonicalBase64url)) return WHY.base64url;
  return WHY.signature;
}

/// Tokens that expire during a test: the server reads the wall clock, this process's (one
/// machine), in whole seconds, and a token is valid while that is at most `exp` + 60 (its skew).
/// Which side of the end a request was judged on is known from the times around it, not
/// assumed: "valid" when it was answered within the last valid second, "expired" when it was
/// sent after it, "either" when it straddled the end (the server read the clock in between).
const SKEW_S = 60;
function sideOf(sentMs, answeredMs, lastValidS) {
  if (Math.floor(answeredMs / 1000) <= lastValidS) return "valid";
  return Math.floor(sentMs / 1000) > lastValidS ? "expired" : "either";
}
/// Runs `attempt(lastValidS)` with a token window of 2 s, then 4, 8... (the window ends with the
/// whole second `lastValidS`), until one returns true: an attempt returns false when a request
/// that was to be judged valid reached the server too late (a machine stalled for seconds), after
/// asserting that what it got fits the side that request was on.
async function withTokenWindow(attempt) {
  for (let windowS = 2; windowS <= 64; windowS *= 2) {
    if (await attempt(Math.floor(Date.now() / 1000) + windowS)) return;
    console.log(`# a ${windowS} s token window was too short for the requests meant to be valid; again with ${2 * windowS} s`);
  }
  assert.fail("no token window up to 64 s was long enough");
}
/// Until the server's clock is past `lastValidS` (this process's, in whole seconds).
async function pastS(lastValidS) {
  while (Math.floor(Date.now() / 1000) <= lastValidS) await new Promise((r) => setTimeout(r, 1000 - (Date.now() % 1000) + 5));
}

/// Asserts a refusal: `status`, and for 401/403/400 a Bearer challenge naming the metadata with
/// `error` (null: no error parameter; undefined: not checked), `scope` and `description` (the
/// error_description; when given, or null for none).
function assertRefusal(r, status, { error, scope, description, metadataUrl } = {}) {
  assert.equal(r.status, status, `status (body: ${r.body})`);
  if (status === 401 || status === 403 || (status === 400 && error !== undefined)) {
    const c = challenge(r.headers["www-authenticate"]);
    if (metadataUrl) assert.equal(c.resource_metadata, metadataUrl, "resource_metadata");
    if (error === null) assert.equal(c.error, undefined, "no error parameter");
    else if (error !== undefined) assert.equal(c.error, error, "error parameter");
    if (scope !== undefined) assert.equal(c.scope, scope, "scope parameter");
    if (error === null || description === null) assert.equal(c.error_description, undefined, "no error_description");
    else if (description !== undefined) assert.equal(c.error_description, description, "error_description");
    return c;
  }
  return null;
}

/// A fetch that records what the SDK sends and receives.
function recordingFetch(log) {
  return async (url, init = {}) => {
    const res = await fetch(url, { ...init, signal: init.signal ?? AbortSignal.timeout(10000) });
    log.push({ method: init.method ?? "GET", url: String(url), status: res.status,
               authorization: new Headers(init.headers).get("authorization"),
               wwwAuthenticate: res.headers.get("www-authenticate") });
    return res;
  };
}

/// An OAuthClientProvider (SDK 1.32.2) for a public client whose "user agent" is the test: it
/// fetches the authorization URL itself (the test server approves at once), does not follow the
/// redirect and keeps the code from its Location for transport.finishAuth().
class TestOAuthProvider {
  constructor({ tokens } = {}) {
    this._tokens = tokens;
    this.redirects = [];        // { url (URL), status, location (URL) }
    this.savedTokens = [];
    this.invalidated = [];
  }
  get redirectUrl() { return REDIRECT; }
  get clientMetadata() {
    return { client_name: "emcp auth test", redirect_uris: [REDIRECT], grant_types: ["authorization_code", "refresh_token"],
             response_types: ["code"], token_endpoint_auth_method: "none" };
  }
  state() { this._state = crypto.randomBytes(12).toString("base64url"); return this._state; }
  clientInformation() { return this._client; }
  saveClientInformation(info) { this._client = info; }
  tokens() { return this._tokens; }
  saveTokens(tokens) { this._tokens = tokens; this.savedTokens.push(tokens); }
  saveCodeVerifier(v) { this._verifier = v; }
  codeVerifier() { return this._verifier; }
  invalidateCredentials(what) {
    this.invalidated.push(what);
    if (what === "all" || what === "client") this._client = undefined;
    if (what === "all" || what === "tokens") this._tokens = undefined;
    if (what === "all" || what === "verifier") this._verifier = undefined;
  }
  async redirectToAuthorization(url) {
    const res = await fetch(url, { redirect: "manual", signal: AbortSignal.timeout(5000) });
    const location = res.headers.get("location");
    this.redirects.push({ url, status: res.status, location: location ? new URL(location) : null, state: this._state });
  }
  /// The code of the last redirect (after checking it came back to us with our state).
  lastCode() {
    const r = this.redirects.at(-1);
    assert.ok(r, "the SDK sent the user to the authorization endpoint");
    assert.equal(r.status, 302);
    assert.equal(`${r.location.origin}${r.location.pathname}`, REDIRECT);
    assert.equal(r.location.searchParams.get("state"), r.state, "state round-trips");
    assert.equal(r.location.searchParams.get("error"), null, `no error: ${r.location}`);
    return r.location.searchParams.get("code");
  }
}

/// A client connected through the OAuth flow: connect (401, discovery, registration, redirect),
/// finishAuth(code), then a second transport that connects with the token. Returns
/// { client, transport, provider, log (every fetch of both transports), firstLog }.
async function connectWithOAuth(server, provider = new TestOAuthProvider()) {
  const log = [];
  const t1 = new StreamableHTTPClientTransport(new URL(server.resource), { authProvider: provider, fetch: recordingFetch(log) });
  const c1 = new Client({ name: "emcp-auth-test", version: "1.0.0" });
  await assert.rejects(c1.connect(t1), UnauthorizedError, "the first connect ends at the redirect");
  const firstLog = log.slice();
  await t1.finishAuth(provider.lastCode());
  await t1.close();
  const transport = new StreamableHTTPClientTransport(new URL(server.resource), { authProvider: provider, fetch: recordingFetch(log) });
  const client = new Client({ name: "emcp-auth-test", version: "1.0.0" });
  await client.connect(transport);
  cleanups.push(() => client.close());
  return { client, transport, provider, log, firstLog };
}

// ---- a) the official SDK client's OAuth flow ---------------------------------------------------

describe("OAuth flow of the official SDK client (ES256 JWTs from the test authorization server)", { timeout: SUITE_MS }, () => {
  let as, server;
  before(async () => {
    as = await startAs({ alg: "ES256" });
    server = await startSensors(["--jwt-key", writeTmp("flow-es256.pem", as.publicKeyPem), "--issuer", as.issuer]);
  });

  test("the test authorization server's metadata is what the SDK expects (RFC 8414)", async () => {
    const r = await fetch(`${as.issuer}/.well-known/oauth-authorization-server`, { signal: AbortSignal.timeout(5000) });
    assert.equal(r.status, 200);
    const m = OAuthMetadataSchema.parse(await r.json());
    assert.equal(m.issuer, as.issuer);
    assert.deepEqual(m.code_challenge_methods_supported, ["S256"]);
    assert.deepEqual(m.token_endpoint_auth_methods_supported, ["none"]);
  });

  test("the test authorization server checks PKCE and the resource at /token", async () => {
    const reg = await (await fetch(`${as.issuer}/register`, { method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: [REDIRECT] }) })).json();
    const verifier = crypto.randomBytes(32).toString("base64url");
    const code = async () => {
      const u = new URL(`${as.issuer}/authorize`);
      for (const [k, v] of Object.entries({ response_type: "code", client_id: reg.client_id, redirect_uri: REDIRECT,
        code_challenge: crypto.createHash("sha256").update(verifier).digest("base64url"), code_challenge_method: "S256",
        resource: server.resource })) u.searchParams.set(k, v);
      const a = await fetch(u, { redirect: "manual" });
      return new URL(a.headers.get("location")).searchParams.get("code");
    };
    const exchange = async (c, v, resource) => fetch(`${as.issuer}/token`, { method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code: c, code_verifier: v, redirect_uri: REDIRECT,
                                  client_id: reg.client_id, resource }) });
    assert.equal((await exchange(await code(), crypto.randomBytes(32).toString("base64url"), server.resource)).status, 400);
    assert.equal((await exchange(await code(), verifier, "http://127.0.0.1:1/mcp")).status, 400);
    const c = await code();
    assert.equal((await exchange(c, verifier, server.resource)).status, 200);
    assert.equal((await exchange(c, verifier, server.resource)).status, 400, "a code is used once");
    // Without PKCE or without a resource, /authorize redirects with an error instead of a code.
    const u = new URL(`${as.issuer}/authorize`);
    for (const [k, v] of Object.entries({ response_type: "code", client_id: reg.client_id, redirect_uri: REDIRECT, resource: server.resource }))
      u.searchParams.set(k, v);
    const noPkce = new URL((await fetch(u, { redirect: "manual" })).headers.get("location"));
    assert.equal(noPkce.searchParams.get("error"), "invalid_request");
    u.searchParams.delete("resource");
    u.searchParams.set("code_challenge", crypto.createHash("sha256").update(verifier).digest("base64url"));
    u.searchParams.set("code_challenge_method", "S256");
    const noResource = new URL((await fetch(u, { redirect: "manual" })).headers.get("location"));
    assert.equal(noResource.searchParams.get("error"), "invalid_target");
  });

  test("401, discovery (RFC 9728, RFC 8414), registration (RFC 7591), token, then read_sensor succeeds", async () => {
    const { client, provider, firstLog, log } = await connectWithOAuth(server);
    // The first request (initialize, no token) got 401 naming the metadata.
    assert.equal(firstLog[0].method, "POST");
    assert.equal(firstLog[0].url, server.resource);
    assert.equal(firstLog[0].authorization, null);
    assert.equal(firstLog[0].status, 401);
    const c = challenge(firstLog[0].wwwAuthenticate);
    assert.equal(c.resource_metadata, server.metadataUrl);
    assert.equal(c.error, undefined, "no error parameter without a token (RFC 6750 3.1)");
    assert.equal(c.scope, "sensors:read", "the scope every request needs");
    // Then: the protected resource metadata, the authorization server's, the registration.
    const steps = firstLog.slice(1).map((e) => `${e.method} ${e.url} ${e.status}`);
    assert.deepEqual(steps, [
      `GET ${server.metadataUrl} 200`,
      `GET ${as.issuer}/.well-known/oauth-authorization-server 200`,
      `POST ${as.issuer}/register 201`,
    ]);
    // The authorization request: PKCE S256, the resource (RFC 8707), the scope of the challenge.
    const auth = provider.redirects[0].url;
    assert.equal(auth.origin + auth.pathname, `${as.issuer}/authorize`);
    assert.equal(auth.searchParams.get("code_challenge_method"), "S256");
    assert.equal(auth.searchParams.get("resource"), server.resource);
    assert.equal(auth.searchParams.get("scope"), "sensors:read");
    assert.equal(auth.searchParams.get("client_id"), provider.clientInformation().client_id);
    const tokenRequest = as.log.filter((e) => e.path === "/token").at(-1);
    assert.equal(tokenRequest.status, 200);
    assert.equal(tokenRequest.params.resource, server.resource, "resource in the token request too");
    assert.ok(tokenRequest.params.code_verifier);
    // The token: a JWT for this server, from this issuer, with the scope asked for.
    const { header, claims } = decodeJwt(provider.tokens().access_token);
    assert.equal(header.alg, "ES256");
    assert.equal(claims.iss, as.issuer);
    assert.equal(claims.aud, server.resource);
    assert.equal(claims.scope, "sensors:read");
    // Every later request carries it; none was refused.
    const mcp = log.filter((e) => e.url === server.resource && log.indexOf(e) >= firstLog.length);
    assert.ok(mcp.length >= 2);
    for (const e of mcp) {
      assert.equal(e.authorization, `Bearer ${provider.tokens().access_token}`);
      assert.ok(e.status < 300, `${e.method} ${e.status}`);
    }
    const r = await client.callTool({ name: "read_sensor", arguments: { sensor: "temperature" } });
    assert.notEqual(r.isError, true);
    assert.equal(r.structuredContent.sensor, "temperature");
    const tools = await client.listTools();
    assert.ok(tools.tools.some((t) => t.name === "set_relay"), "listing is allowed with sensors:read");
  });

  test("set_relay with sensors:read only: 403 insufficient_scope; the SDK steps up through a new authorization", async () => {
    const { client, provider, log } = await connectWithOAuth(server);
    const redirectsBefore = provider.redirects.length;
    const from = log.length;
    // SDK 1.32.2 without a refresh token: on 403 insufficient_scope it runs auth() with the
    // challenge's scope, which (no refresh token) sends the user to the authorization endpoint
    // again and ends in UnauthorizedError; the application finishes the authorization and retries.
    await assert.rejects(client.callTool({ name: "set_relay", arguments: { on: true } }), UnauthorizedError);
    const refused = log.slice(from).find((e) => e.url === server.resource && e.status === 403);
    assert.ok(refused, "the call got 403");
    const c = challenge(refused.wwwAuthenticate);
    assert.equal(c.error, "insufficient_scope");
    assert.deepEqual(c.scope.split(" ").sort(), ["device:control", "sensors:read"]);
    assert.equal(c.resource_metadata, server.metadataUrl);
    assert.equal(provider.redirects.length, redirectsBefore + 1, "one new authorization request");
    const stepUp = provider.redirects.at(-1).url;
    assert.equal(stepUp.searchParams.get("scope"), c.scope, "it asks for the scope of the challenge");
    assert.equal(stepUp.searchParams.get("resource"), server.resource);
    await client.transport.finishAuth(provider.lastCode());
    assert.deepEqual(decodeJwt(provider.tokens().access_token).claims.scope.split(" ").sort(), ["device:control", "sensors:read"]);
    const r = await client.callTool({ name: "set_relay", arguments: { on: true } });
    assert.notEqual(r.isError, true);
    await client.callTool({ name: "set_relay", arguments: { on: false } });
    // The same session went on: sensors still readable.
    const s = await client.callTool({ name: "read_sensor", arguments: { sensor: "uptime" } });
    assert.notEqual(s.isError, true);
  });

  test("a token for another audience is refused (401 invalid_token), also through the SDK", async () => {
    // A genuine token of the same authorization server (same key, same issuer), for another resource.
    const other = await as.obtainToken({ resource: "http://127.0.0.1:1/mcp", scope: ALL });
    assert.equal(decodeJwt(other.access_token).claims.aud, "http://127.0.0.1:1/mcp");
    const r = await post(server.port, `Bearer ${other.access_token}`, INIT);
    assertRefusal(r, 401, { error: "invalid_token", metadataUrl: server.metadataUrl });
    // Given to the SDK as its stored token: refused, so the SDK starts a new authorization.
    const provider = new TestOAuthProvider({ tokens: { access_token: other.access_token, token_type: "Bearer" } });
    const log = [];
    const t = new StreamableHTTPClientTransport(new URL(server.resource), { authProvider: provider, fetch: recordingFetch(log) });
    const c = new Client({ name: "emcp-auth-test", version: "1.0.0" });
    await assert.rejects(c.connect(t), UnauthorizedError);
    await t.close();
    assert.equal(log[0].authorization, `Bearer ${other.access_token}`);
    assert.equal(log[0].status, 401);
    assert.equal(challenge(log[0].wwwAuthenticate).error, "invalid_token");
    assert.equal(provider.redirects.length, 1);
    assert.equal(provider.redirects[0].url.searchParams.get("resource"), server.resource);
    // The right audience from the same server works.
    const good = await as.obtainToken({ resource: server.resource, scope: "sensors:read" });
    assert.equal((await post(server.port, `Bearer ${good.access_token}`, INIT)).status, 200);
  });
});

describe("SDK step-up when the authorization server also issues refresh tokens", { timeout: SUITE_MS }, () => {
  let as, server;
  before(async () => {
    as = await startAs({ alg: "ES256", refreshTokens: true });
    server = await startSensors(["--jwt-key", writeTmp("flow-refresh.pem", as.publicKeyPem), "--issuer", as.issuer]);
  });

  test("SDK 1.32.2 refreshes instead of re-authorizing: the scope does not widen and the call fails with 403", async () => {
    const { client, provider, log } = await connectWithOAuth(server);
    assert.ok(provider.tokens().refresh_token);
    const redirectsBefore = provider.redirects.length;
    const from = log.length;
    // On 403 insufficient_scope the SDK calls auth() with the challenge's scope, but holding a
    // refresh token it refreshes (a refresh request carries no scope: the SDK does not ask for
    // the wider one), gets the same scope back, retries, gets the same challenge and gives up.
    await assert.rejects(client.callTool({ name: "set_relay", arguments: { on: true } }),
      (e) => e instanceof StreamableHTTPError && e.code === 403 && /after trying upscoping/.test(e.message));
    const mcp403 = log.slice(from).filter((e) => e.url === server.resource && e.status === 403);
    assert.equal(mcp403.length, 2, "refused, refreshed, refused again");
    const refreshes = as.log.filter((e) => e.path === "/token" && e.params.grant_type === "refresh_token");
    assert.equal(refreshes.length, 1);
    assert.equal(refreshes[0].params.scope, undefined, "the refresh asks for no scope");
    assert.equal(refreshes[0].params.resource, server.resource);
    assert.equal(provider.redirects.length, redirectsBefore, "no new authorization request");
    assert.equal(decodeJwt(provider.tokens().access_token).claims.scope, "sensors:read");
    // Until a request succeeds, the same challenge again fails at once (no new refresh).
    await assert.rejects(client.callTool({ name: "set_relay", arguments: { on: true } }),
      (e) => e instanceof StreamableHTTPError && e.code === 403);
    assert.equal(as.log.filter((e) => e.path === "/token" && e.params.grant_type === "refresh_token").length, 1);
    // The session still works for what the token grants.
    const r = await client.callTool({ name: "read_sensor", arguments: { sensor: "load" } });
    assert.notEqual(r.isError, true);
    // An application that drops its tokens is sent to authorize again, but with the scope of the
    // 401 challenge (sensors:read: the SDK prefers a challenge's scope to scopes_supported), so
    // the new token is no wider and set_relay fails the same way.
    provider.invalidateCredentials("tokens");
    await assert.rejects(client.callTool({ name: "set_relay", arguments: { on: true } }), UnauthorizedError);
    assert.equal(provider.redirects.length, redirectsBefore + 1);
    assert.equal(provider.redirects.at(-1).url.searchParams.get("scope"), "sensors:read");
    await client.transport.finishAuth(provider.lastCode());
    await assert.rejects(client.callTool({ name: "set_relay", arguments: { on: true } }),
      (e) => e instanceof StreamableHTTPError && e.code === 403 && /after trying upscoping/.test(e.message));
    assert.equal(as.log.filter((e) => e.path === "/token" && e.params.grant_type === "refresh_token").length, 2);
    await client.callTool({ name: "read_sensor", arguments: { sensor: "load" } });   // a success resets the SDK's loop guard
    // What works: keep the access token, drop the refresh token. The 403 then leads to an
    // authorization request with the challenge's (wider) scope, as without refresh tokens.
    const { refresh_token, ...rest } = provider.tokens();
    assert.ok(refresh_token);
    provider.saveTokens(rest);
    await assert.rejects(client.callTool({ name: "set_relay", arguments: { on: true } }), UnauthorizedError);
    assert.equal(provider.redirects.length, redirectsBefore + 2);
    assert.deepEqual(provider.redirects.at(-1).url.searchParams.get("scope").split(" ").sort(), ["device:control", "sensors:read"]);
    await client.transport.finishAuth(provider.lastCode());
    const ok = await client.callTool({ name: "set_relay", arguments: { on: false } });
    assert.notEqual(ok.isError, true);
  });
});

// ---- b) the bad-input table -----------------------------------------------------------------

describe("auth bad input: --auth-token and --jwt-key (ES256) together", { timeout: SUITE_MS }, () => {
  let as, server, port;
  const otherEc = makeKey("ES256");
  const otherRsa = makeKey("RS256");
  before(async () => {
    as = await startAs({ alg: "ES256" });
    server = await startSensors(["--auth-token", STATIC, "--jwt-key", writeTmp("bad-es256.pem", as.publicKeyPem),
                                 "--issuer", as.issuer]);
    port = server.port;
  });

  const now = () => Math.floor(Date.now() / 1000);
  /// A JWT of the test authorization server for this server: every scope unless `claims` says.
  const jwt = (claims = {}, options = {}) => as.mint({ claims: { aud: server.resource, scope: ALL, client_id: "bad-input", ...claims }, ...options });
  /// A token from raw header and claims texts, signed ES256 with the server's key.
  const raw = (headerText, claimsText, alg = "ES256", key = as.key.privateKey) => {
    const input = `${b64url(headerText)}.${b64url(claimsText)}`;
    return `${input}.${b64url(signature(alg, key, input))}`;
  };
  const claimsText = (extra = "") =>
    `{"iss":${JSON.stringify(as.issuer)},"aud":${JSON.stringify(server.resource)},"scope":"${ALL}","iat":${now()},"exp":${now() + 300}${extra}}`;
  const parts = (t) => t.split(".");
  const bearer = (t) => `Bearer ${t}`;

  /// The server still serves: a fresh initialize with the static token, and with a good JWT.
  async function stillServing() {
    assert.equal(server.proc.exitCode, null, "the server is running");
    const a = await post(port, bearer(STATIC), INIT);
    assert.equal(a.status, 200, `static token: ${a.body}`);
    const b = await post(port, bearer(jwt()), INIT);
    assert.equal(b.status, 200, `JWT: ${b.body}`);
    assert.match(b.body.toString(), /"protocolVersion":"2025-11-25"/);
  }

  // [name, () => Authorization header value (null: none), expected status, error (null: none),
  //  detail: for 400 and 401 invalid_token the error_description (WHY, or a function of the
  //  header value), for 403 and a missing header the challenge's scope]. RFC 6750 3.1 and the
  //  MCP authorization text ("Error Handling"): no credentials, or another scheme's (the request
  //  "lacks any authentication information"), 401 without an error code; a malformed request,
  //  400 invalid_request; a token that is not valid, 401 invalid_token.
  const HEAD_CASES = [
    ["no token", () => null, 401, null, "sensors:read"],
    ["Basic credentials", () => `Basic ${Buffer.from("user:pass").toString("base64")}`, 401, null, "sensors:read"],
    ["the static token under another scheme", () => `Token ${STATIC}`, 401, null, "sensors:read"],
    ["\"Bearer\" alone", () => "Bearer", 400, "invalid_request", WHY.noToken],
    ["\"Bearer \" and spaces only", () => "Bearer    ", 400, "invalid_request", WHY.noToken],
    ["\"Bearer a b\" (two tokens)", () => "Bearer a b", 400, "invalid_request", WHY.twoTokens],
    ["the static token then another word", () => `Bearer ${STATIC} x`, 400, "invalid_request", WHY.twoTokens],
    ["a character outside token68", () => `Bearer ${STATIC}!`, 400, "invalid_request", WHY.b64token],
    ["'=' inside the token", () => `Bearer ${STATIC.slice(0, 10)}=${STATIC.slice(10)}`, 400, "invalid_request", WHY.b64token],
    ["a tab instead of the space", () => `Bearer\t${STATIC}`, 400, "invalid_request", WHY.syntax],
    ["unknown static token", () => "Bearer unknown-token-0123456789abcdef", 401, "invalid_token", WHY.parts],
    ["the static token and one more character", () => `Bearer ${STATIC}0`, 401, "invalid_token", WHY.parts],
    ["the static token less its last character", () => `Bearer ${STATIC.slice(0, -1)}`, 401, "invalid_token", WHY.parts],
    ["the static token in another case", () => `Bearer ${STATIC.toUpperCase()}`, 401, "invalid_token", WHY.parts],
    ["the static token with '=' padding", () => `Bearer ${STATIC}==`, 401, "invalid_token", WHY.parts],
    ["expired JWT (exp an hour ago)", () => bearer(jwt({ iat: now() - 7200, exp: now() - 3600 })), 401, "invalid_token", WHY.expired],
    ["JWT expired 30 s ago: within the 60 s skew, accepted", () => bearer(jwt({ iat: now() - 600, exp: now() - 30 })), 200],
    ["JWT expired 90 s ago: beyond the skew", () => bearer(jwt({ iat: now() - 600, exp: now() - 90 })), 401, "invalid_token", WHY.expired],
    ["nbf 30 s ahead: within the skew, accepted", () => bearer(jwt({ nbf: now() + 30 })), 200],
    ["exp written as a float with an integral value: accepted", () => bearer(raw('{"alg":"ES256"}', claimsText().replace(/"exp":(\d+)/, '"exp":$1.0'))), 200],
    ["exp with a fraction", () => bearer(jwt({ exp: now() + 300.5 })), 401, "invalid_token", WHY.claimType],
    ["exp beyond int64", () => bearer(raw('{"alg":"ES256"}', claimsText().replace(/"exp":(\d+)/, '"exp":1e19'))), 401, "invalid_token", WHY.claimType],
    ["exp null", () => bearer(jwt({ exp: null })), 401, "invalid_token", WHY.claimType],
    ["a JWT not yet valid (nbf in an hour)", () => bearer(jwt({ nbf: now() + 3600 })), 401, "invalid_token", WHY.early],
    ["a JWT issued in the future (iat in an hour)", () => bearer(jwt({ iat: now() + 3600, exp: now() + 7200 })), 401, "invalid_token", WHY.early],
    ["no exp claim", () => bearer(jwt({ exp: undefined })), 401, "invalid_token", WHY.missing],
    ["exp as a string", () => bearer(jwt({ exp: String(now() + 300) })), 401, "invalid_token", WHY.claimType],
    ["wrong aud", () => bearer(jwt({ aud: "http://127.0.0.1:1/mcp" })), 401, "invalid_token", WHY.audience],
    ["aud with a trailing slash", () => bearer(jwt({ aud: `${server.resource}/` })), 401, "invalid_token", WHY.audience],
    ["aud of another scheme (https)", () => bearer(jwt({ aud: server.resource.replace("http:", "https:") })), 401, "invalid_token", WHY.audience],
    ["aud an array naming this server: accepted", () => bearer(jwt({ aud: ["urn:other", server.resource] })), 200],
    ["aud an array without this server", () => bearer(jwt({ aud: ["urn:other", "http://127.0.0.1:1/mcp"] })), 401, "invalid_token", WHY.audience],
    ["no aud claim", () => bearer(jwt({ aud: undefined })), 401, "invalid_token", WHY.missing],
    ["wrong iss", () => bearer(jwt({ iss: "http://127.0.0.1:1" })), 401, "invalid_token", WHY.issuer],
    ["iss with a trailing slash", () => bearer(jwt({ iss: `${as.issuer}/` })), 401, "invalid_token", WHY.issuer],
    ["no iss claim", () => bearer(jwt({ iss: undefined })), 401, "invalid_token", WHY.missing],
    ["alg none, empty signature", () => bearer(jwt({}, { alg: "none" })), 401, "invalid_token", WHY.alg],
    ["alg none, the ES256 signature kept", () => {
      const good = parts(jwt());
      return bearer(`${b64url(JSON.stringify({ alg: "none", typ: "JWT" }))}.${good[1]}.${good[2]}`);
    }, 401, "invalid_token", WHY.alg],
    ["alg \"None\"", () => bearer(jwt({}, { alg: "none", header: { alg: "None" } })), 401, "invalid_token", WHY.alg],
    ["no alg in the header", () => bearer(jwt({}, { header: { alg: undefined } })), 401, "invalid_token", WHY.alg],
    ["HS256 signed with the ES256 public key PEM as HMAC secret", () =>
      bearer(jwt({}, { alg: "HS256", key: Buffer.from(as.publicKeyPem) })), 401, "invalid_token", WHY.alg],
    ["HS256 signed with the public key DER as HMAC secret", () =>
      bearer(jwt({}, { alg: "HS256", key: as.key.publicKey.export({ type: "spki", format: "der" }) })), 401, "invalid_token", WHY.alg],
    ["RS256 by another RSA key", () => bearer(jwt({}, { alg: "RS256", key: otherRsa.privateKey })), 401, "invalid_token", WHY.alg],
    ["RS256 header on the ES256 signature", () => {
      const good = parts(jwt());
      const h = b64url(JSON.stringify({ alg: "RS256", typ: "JWT" }));
      return bearer(`${h}.${good[1]}.${good[2]}`);
    }, 401, "invalid_token", WHY.alg],
    ["ES256 signature DER-encoded instead of R||S", () => {
      const [h, p] = parts(jwt());
      const der = crypto.sign("sha256", Buffer.from(`${h}.${p}`), as.key.privateKey);
      return bearer(`${h}.${p}.${b64url(der)}`);
    }, 401, "invalid_token", WHY.signature],
    ["signature by another EC key", () => bearer(jwt({}, { key: otherEc.privateKey })), 401, "invalid_token", WHY.signature],
    ["bad signature (one bit of the decoded signature flipped)", () => bearer(flipSignatureBit(jwt())), 401, "invalid_token", WHY.signature],
    ["bad signature (the last bit of s flipped)", () => bearer(flipSignatureBit(jwt(), 63 * 8)), 401, "invalid_token", WHY.signature],
    ["signature of zeros", () => { const [h, p] = parts(jwt()); return bearer(`${h}.${p}.${b64url(Buffer.alloc(64))}`); }, 401, "invalid_token", WHY.signature],
    ["claims widened after signing", () => {
      const [h, , s] = parts(jwt({ scope: "sensors:read" }));
      return bearer(`${h}.${b64url(claimsText())}.${s}`);
    }, 401, "invalid_token", WHY.signature],
    ["typ \"JWT\": not looked at without --require-at-jwt, accepted", () => bearer(jwt({}, { header: { typ: "JWT" } })), 200],
    ["empty signature part", () => { const [h, p] = parts(jwt()); return bearer(`${h}.${p}.`); }, 401, "invalid_token", WHY.signature],
    ["truncated: two parts", () => { const [h, p] = parts(jwt()); return bearer(`${h}.${p}`); }, 401, "invalid_token", WHY.parts],
    // Where a cut lands decides whether the rest is still canonical base64url: whyCut() says.
    ["truncated: the signature cut by 8 characters", () => bearer(jwt().slice(0, -8)), 401, "invalid_token", whyCut],
    ["truncated: the signature cut by 1 character", () => bearer(jwt().slice(0, -1)), 401, "invalid_token", WHY.base64url],
    ["truncated: half the token", () => { const t = jwt(); return bearer(t.slice(0, t.length >> 1)); }, 401, "invalid_token", whyCut],
    ["four parts", () => bearer(`${jwt()}.${b64url("x")}`), 401, "invalid_token", WHY.parts],
    // RFC 6750's b64token has '=' at its end only: padding inside the token is malformed.
    ["non-base64url: '=' padding in the claims", () => {
      const [h, p, s] = parts(jwt());
      const padded = Buffer.from(p, "base64url").toString("base64");   // standard, padded
      return bearer(`${h}.${padded.endsWith("=") ? padded : `${p}=`}.${s}`);
    }, 400, "invalid_request", WHY.b64token],
    ["non-base64url: '=' padding after the signature", () => bearer(`${jwt()}=`), 401, "invalid_token", WHY.base64url],
    ["non-base64url: '+' and '/' of standard base64", () => {
      const [h, p, s] = parts(jwt());
      return bearer(`${h}.${p}.+/${s.slice(2)}`);
    }, 401, "invalid_token", WHY.base64url],
    ["non-base64url: non-zero unused bits", () => {
      // A 64-byte signature is 86 characters, the last carrying 4 unused bits: set one.
      const [h, p, s] = parts(jwt());
      const i = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_".indexOf(s.at(-1));
      const last = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"[i | 1];
      return bearer(`${h}.${p}.${s.slice(0, -1)}${last}`);
    }, 401, "invalid_token", WHY.base64url],
    ["non-base64url: a part of length 4k+1", () => {
      // As many 'A's as make the claims part 4k+1 characters long (one 'A' does only when it was 4k).
      const [h, p, s] = parts(jwt());
      const claims = p + "A".repeat((5 - (p.length % 4)) % 4 || 4);
      assert.equal(claims.length % 4, 1);
      return bearer(`${h}.${claims}.${s}`);
    }, 401, "invalid_token", WHY.base64url],
    ["header not JSON", () => bearer(raw("{alg:ES256}", claimsText())), 401, "invalid_token", WHY.json],
    ["claims not JSON", () => bearer(raw('{"alg":"ES256"}', claimsText().slice(0, -1))), 401, "invalid_token", WHY.json],
    ["claims a JSON array", () => bearer(raw('{"alg":"ES256"}', `[${claimsText()}]`)), 401, "invalid_token", WHY.json],
    ["exp twice in the claims", () => bearer(raw('{"alg":"ES256"}', claimsText(`,"exp":${now() + 9999}`))), 401, "invalid_token", WHY.duplicate],
    ["alg twice in the header", () => bearer(raw('{"alg":"ES256","alg":"ES256"}', claimsText())), 401, "invalid_token", WHY.duplicate],
    ["crit header parameter", () => bearer(raw('{"alg":"ES256","crit":["exp"]}', claimsText())), 401, "invalid_token", WHY.crit],
    ["scope not a string", () => bearer(jwt({ scope: ["sensors:read", "device:control"] })), 401, "invalid_token", WHY.claimType],
    ["valid JWT without any scope: 403 at the head", () => bearer(jwt({ scope: undefined })), 403, "insufficient_scope", "sensors:read"],
    ["valid JWT with device:control only: 403 at the head", () => bearer(jwt({ scope: "device:control" })), 403, "insufficient_scope", "sensors:read"],
    ["valid JWT with unknown scopes only: 403 at the head", () => bearer(jwt({ scope: "admin sensors:write" })), 403, "insufficient_scope", "sensors:read"],
    ["scope matching is exact (\"sensors:READ\")", () => bearer(jwt({ scope: "sensors:READ" })), 403, "insufficient_scope", "sensors:read"],
    ["valid JWT with sensors:read: accepted", () => bearer(jwt({ scope: "sensors:read" })), 200],
    ["valid JWT with scopes among others: accepted", () => bearer(jwt({ scope: "openid  sensors:read profile" })), 200],
    ["lower-case scheme \"bearer\": accepted (RFC 7235 schemes are case-insensitive)", () => `bearer ${STATIC}`, 200],
    ["spaces between the scheme and the token: accepted (1*SP)", () => `Bearer   ${STATIC}`, 200],
  ];

  for (const [name, make, status, error, detail] of HEAD_CASES) {
    test(`initialize with ${name}: ${status}${error ? ` ${error}` : ""}`, async () => {
      const value = make();
      const r = await post(port, value, INIT);
      const described = status === 400 || (status === 401 && error !== null);
      if (described) assert.ok(detail, "every 400 and invalid_token row names its error_description");
      const description = described ? (typeof detail === "function" ? detail(value) : detail) : undefined;
      const scope = described ? undefined : detail;
      assertRefusal(r, status, { error, scope, description, metadataUrl: status === 200 ? undefined : server.metadataUrl });
      if (status === 200) assert.match(r.body.toString(), /"protocolVersion"/);
      await stillServing();
    });
  }

  test("two Authorization headers (good then bad, bad then good, twice the good one, one empty): 400 invalid_request", async () => {
    for (const [a, b] of [[STATIC, "unknown-token-0123456789"], ["unknown-token-0123456789", STATIC], [STATIC, STATIC],
                          [STATIC, ""], ["", STATIC]]) {
      const second = (v) => (v === "" ? "" : ` Bearer ${v}`);
      const bytes = Buffer.from(`POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization:${second(a)}\r\nAuthorization:${second(b)}\r\n` +
        `Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nContent-Length: ${INIT.length}\r\n\r\n${INIT}`);
      const r = await once(port, bytes);
      assertRefusal(r, 400, { error: "invalid_request", description: WHY.twice, metadataUrl: server.metadataUrl });
    }
    await stillServing();
  });

  test(`oversize: an Authorization header of ${MAX_AUTH + 1} bytes gets 431 (${MAX_AUTH} bytes: 401)`, async () => {
    const at = (n) => `Bearer ${"a".repeat(n - 7)}`;
    assert.equal((await post(port, at(MAX_AUTH + 1), INIT)).status, 431);
    assertRefusal(await post(port, at(MAX_AUTH), INIT), 401, { error: "invalid_token", description: WHY.parts });
    await stillServing();
  });

  test("oversize: a validly signed JWT larger than the limit gets 431", async () => {
    const t = jwt({ pad: "p".repeat(1200) });
    assert.ok(t.length > MAX_AUTH);
    const r = await post(port, bearer(t), INIT);
    assert.equal(r.status, 431, `body ${r.body}`);
    await stillServing();
  });

  test(`the largest valid JWT the header holds (${MAX_AUTH - 7} bytes) is accepted`, async () => {
    let best = null;
    for (let n = 0; n < 1200; ++n) {
      const t = jwt({ pad: "p".repeat(n), iat: 1, jti: "j" });
      if (t.length <= MAX_AUTH - 7) best = t; else break;
    }
    assert.ok(best.length >= MAX_AUTH - 10, `token of ${best.length} bytes`);
    const r = await post(port, bearer(best), INIT);
    assert.equal(r.status, 200, `a ${best.length}-byte token: ${r.body}`);
  });

  // [name, () => [path, Authorization], status]. A real JWT does not fit in the request target
  // (EMCP_HTTP_MAX_TARGET, 256 bytes): 414 before the token is looked at, never used either.
  const QUERY_CASES = [
    ["?access_token=<the static token> without a header", () => [`/mcp?access_token=${STATIC}`, null], 400],
    ["?access_token=<the static token> with the static token in the header", () => [`/mcp?access_token=${STATIC}`, bearer(STATIC)], 400],
    ["an empty ?access_token= with a good header", () => ["/mcp?access_token=", bearer(STATIC)], 400],
    ["access_token after another parameter", () => [`/mcp?x=1&access_token=${STATIC}`, bearer(STATIC)], 400],
    ["?access_token without a value", () => ["/mcp?access_token", bearer(STATIC)], 400],
    ["?access_token=<a good JWT> without a header (too long a target)", () => [`/mcp?access_token=${jwt()}`, null], 414],
    ["?access_token=<a good JWT> with a good header too (too long a target)", () => [`/mcp?access_token=${jwt()}`, bearer(jwt())], 414],
  ];
  for (const [name, make, status] of QUERY_CASES) {
    test(`token in the query string: ${name}: ${status}${status === 400 ? " invalid_request" : ""}`, async () => {
      const [p, auth] = make();
      const r = await post(port, auth, INIT, { path: p });
      if (status === 400) assertRefusal(r, 400, { error: "invalid_request", description: WHY.query, metadataUrl: server.metadataUrl });
      else assert.equal(r.status, status);
      await stillServing();
    });
  }
  test("a parameter that only ends like access_token is not one (200)", async () => {
    const r = await post(port, bearer(STATIC), INIT, { path: "/mcp?my_access_token=1&access_tokens=2" });
    assert.equal(r.status, 200);
  });
  test("token in the query string of GET /sse and of the WebSocket upgrade: 400", async () => {
    assertRefusal(await get(port, `/sse?access_token=${STATIC}`, { Accept: "text/event-stream", Authorization: bearer(STATIC) }), 400,
      { error: "invalid_request", description: WHY.query });
    const r = await wsOpen(`/ws?access_token=${STATIC}`, bearer(STATIC));
    assert.equal(r.status, 400);
    await stillServing();
  });

  test("missing scope: a sensors:read token calling set_relay, set_led, calibrate_temperature gets 403 insufficient_scope", async () => {
    const auth = bearer(jwt({ scope: "sensors:read" }));
    const sid = await session(port, auth);
    let id = 10;
    for (const [name, args] of [["set_relay", { on: true }], ["set_led", { on: true }], ["calibrate_temperature", {}]]) {
      const r = await post(port, auth, callTool(++id, name, args), { sid });
      const c = assertRefusal(r, 403, { error: "insufficient_scope", metadataUrl: server.metadataUrl });
      assert.deepEqual(c.scope.split(" ").sort(), ["device:control", "sensors:read"], `${name}: the scopes the call needs`);
    }
    // What it grants still works on the same session.
    const ok = await post(port, auth, callTool(++id, "read_sensor", { sensor: "temperature" }), { sid });
    assert.equal(ok.status, 200);
    assert.equal(answer(ok, id).result.isError, undefined);
    await stillServing();
  });

  test("a session answers only the principal that opened it; the grant is checked per request", async () => {
    // Opened with the static token: a JWT (another principal) is told the session does not exist.
    const sid = await session(port, bearer(STATIC));
    const limited = bearer(jwt({ scope: "sensors:read" }));
    const other = await post(port, limited, callTool(2, "read_sensor", { sensor: "load" }), { sid });
    assert.equal(other.status, 404, "another principal's session is unknown to it");
    const ok = await post(port, bearer(STATIC), callTool(3, "set_relay", { on: false }), { sid });
    assert.equal(ok.status, 200);
    assert.ok(answer(ok, 3).result);
    // Opened with a sensors:read JWT of subject A: A's next token (same iss and sub) works, its
    // scopes are checked per request; subject B's token does not reach the session.
    const sidA = await session(port, limited);
    const alsoA = bearer(jwt({ scope: "sensors:read device:control" }));
    const relay = await post(port, alsoA, callTool(4, "set_relay", { on: true }), { sid: sidA });
    assert.equal(relay.status, 200, "the same subject with a wider token");
    assertRefusal(await post(port, limited, callTool(5, "set_relay", { on: true }), { sid: sidA }), 403,
                  { error: "insufficient_scope" });
    const b = await post(port, bearer(jwt({ scope: "sensors:read device:control", sub: "someone-else" })), rpc(6, "ping"),
                         { sid: sidA });
    assert.equal(b.status, 404, "another subject cannot use (or learn of) the session");
    assert.equal((await once(port, request("DELETE", "/mcp", { "Mcp-Session-Id": sidA, Authorization:
      bearer(jwt({ scope: "sensors:read", sub: "someone-else" })) }))).status, 404, "nor end it");
    // A known session id is no credential.
    assertRefusal(await post(port, null, callTool(7, "read_sensor", { sensor: "load" }), { sid }), 401, { error: null });
    assertRefusal(await post(port, bearer("unknown-token-0123456789"), rpc(8, "ping"), { sid }), 401, { error: "invalid_token" });
    assertRefusal(await get(port, "/mcp", { Accept: "text/event-stream", "Mcp-Session-Id": sid }), 401, { error: null });
    assertRefusal(await once(port, request("DELETE", "/mcp", { "Mcp-Session-Id": sid })), 401, { error: null });
    assert.equal((await once(port, request("DELETE", "/mcp", { "Mcp-Session-Id": sid, Authorization: bearer(STATIC) }))).status, 200);
  });

  test("scope smuggling: an escaped tool name or method is still checked; duplicate members are refused", async () => {
    const auth = bearer(jwt({ scope: "sensors:read" }));
    const sid = await session(port, auth);
    const rows = [
      ['{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"set\\u005frelay","arguments":{"on":true}}}', 403],
      ['{"jsonrpc":"2.0","id":3,"method":"tools\\/call","params":{"name":"set_relay","arguments":{"on":true}}}', 403],
      ['{"jsonrpc":"2.0","id":4,"method":"tools/call","params":{"arguments":{"on":true},"name":"set_relay"}}', 403],
      ['{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"read_sensor","name":"set_relay","arguments":{"on":true}}}', 400],
      ['{"jsonrpc":"2.0","id":6,"method":"tools/call","params":{"name":"set_relay","name":"read_sensor","arguments":{"sensor":"load"}}}', 400],
      ['{"jsonrpc":"2.0","id":7,"method":"ping","method":"tools/call","params":{"name":"set_relay","arguments":{"on":true}}}', 400],
      ['{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{"name":"read_sensor","arguments":{"sensor":"load"}},"params":{"name":"set_relay","arguments":{"on":true}}}', 400],
    ];
    for (const [body, status] of rows) {
      const r = await post(port, auth, body, { sid });
      assert.equal(r.status, status, body);
      if (status === 403) assert.equal(challenge(r.headers["www-authenticate"]).error, "insufficient_scope", body);
      else assert.doesNotMatch(r.body.toString(), /Relay is now/, body);
    }
    await stillServing();
  });

  test("the clock is read per request: a token that expires during a session is refused from then on", async () => {
    await withTokenWindow(async (lastValidS) => {
      const auth = bearer(jwt({ iat: now() - 600, exp: lastValidS - SKEW_S }));
      // A session and a ping with it, each judged by the side of the end it was on.
      let sid;
      const steps = [
        () => post(port, auth, rpc(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "auth-test", version: "1" } })),
        () => post(port, auth, INITIALIZED, { sid, headers: { "MCP-Protocol-Version": "2025-11-25" } }),
        () => post(port, auth, rpc(2, "ping"), { sid }),
      ];
      for (const [i, step] of steps.entries()) {
        const sent = Date.now();
        const r = await step();
        const side = sideOf(sent, Date.now(), lastValidS);
        if (side === "valid") {
          assert.equal(r.status, i === 1 ? 202 : 200, `step ${i} within the token's validity: ${r.body}`);
          if (i === 0) sid = r.headers["mcp-session-id"];
          continue;
        }
        if (side === "expired") assertRefusal(r, 401, { error: "invalid_token", description: WHY.expired });
        else assert.ok([200, 202, 401].includes(r.status), `step ${i} across the end: ${r.status}`);
        return false;
      }
      await pastS(lastValidS);
      assertRefusal(await post(port, auth, rpc(3, "ping"), { sid }), 401, { error: "invalid_token", description: WHY.expired });
      // A fresh token carries on with the same session.
      assert.equal((await post(port, bearer(jwt()), rpc(4, "ping"), { sid })).status, 200);
      return true;
    });
  });

  test("a batch (2025-03-26) with one call beyond the token's scope is refused whole (403)", async () => {
    const auth = bearer(jwt({ scope: "sensors:read" }));
    const sid = await session(port, auth, "2025-03-26");
    const batch = `[${callTool(2, "read_sensor", { sensor: "load" })},${callTool(3, "set_relay", { on: true })}]`;
    const r = await post(port, auth, batch, { sid, headers: { "MCP-Protocol-Version": "2025-03-26" } });
    assertRefusal(r, 403, { error: "insufficient_scope" });
    await stillServing();
  });

  test("the static token grants every scope", async () => {
    const sid = await session(port, bearer(STATIC));
    const r = await post(port, bearer(STATIC), callTool(2, "set_relay", { on: true }), { sid });
    assert.equal(r.status, 200);
    assert.ok(answer(r, 2).result, `set_relay: ${r.body}`);
    const s = await post(port, bearer(STATIC), callTool(3, "read_sensor", { sensor: "temperature" }), { sid });
    assert.equal(answer(s, 3).result.structuredContent.sensor, "temperature");
    await post(port, bearer(STATIC), callTool(4, "set_relay", { on: false }), { sid });
  });

  test("every endpoint needs the token: GET /mcp, DELETE /mcp, GET /sse, POST /messages, unknown paths", async () => {
    assertRefusal(await get(port, "/mcp", { Accept: "text/event-stream" }), 401, { error: null, metadataUrl: server.metadataUrl });
    assertRefusal(await once(port, request("DELETE", "/mcp")), 401, { error: null });
    assertRefusal(await get(port, "/sse", { Accept: "text/event-stream" }), 401, { error: null });
    assertRefusal(await once(port, request("POST", "/messages?sessionId=x", { "Content-Type": "application/json" }, rpc(1, "ping"))), 401, { error: null });
    assertRefusal(await get(port, "/nothing-here"), 401, { error: null });
    assert.equal((await get(port, "/nothing-here", { Authorization: bearer(STATIC) })).status, 404);
    assertRefusal(await get(port, "/.well-known/oauth-protected-resource/other"), 401, { error: null });
  });

  test("HTTP+SSE (2024-11-05): the stream needs the token, and each POST the scope of its call", async () => {
    const auth = bearer(jwt({ scope: "sensors:read" }));
    const c = await connectRaw(port);
    try {
      await c.write(request("GET", "/sse", { Accept: "text/event-stream", Authorization: auth }));
      await c.until(({ buf }) => /event: endpoint\r?\ndata: [^\r\n]+\r?\n/.test(buf.toString()));
      const endpoint = /event: endpoint\r?\ndata: ([^\r\n]+)/.exec(c.buffer.toString())[1];
      const legacy = (a, body) => once(port, request("POST", endpoint, a === null ? { "Content-Type": "application/json" }
        : { "Content-Type": "application/json", Authorization: a }, body));
      assertRefusal(await legacy(null, rpc(1, "ping")), 401, { error: null });
      const init = rpc(1, "initialize", { protocolVersion: "2024-11-05", capabilities: {}, clientInfo: { name: "sse", version: "1" } });
      assert.equal((await legacy(auth, init)).status, 202);
      assert.equal((await legacy(auth, INITIALIZED)).status, 202);
      const r = await legacy(auth, callTool(2, "set_relay", { on: true }));
      assertRefusal(r, 403, { error: "insufficient_scope" });
      assert.equal((await legacy(auth, callTool(3, "read_sensor", { sensor: "load" }))).status, 202);
      await c.until(({ buf }) => buf.toString().includes('"id":3'));
      assert.ok(!c.buffer.toString().includes('"id":2'), "the refused call was not run");
    } finally {
      c.end();
    }
    await stillServing();
  });

  // -- the protected resource metadata (RFC 9728) --

  for (const wk of ["/.well-known/oauth-protected-resource/mcp", "/.well-known/oauth-protected-resource"]) {
    test(`protected resource metadata at ${wk}, without a token`, async () => {
      for (const headers of [{}, { Authorization: "Bearer unknown-token-0123456789" }]) {
        const r = await get(port, wk, headers);
        assert.equal(r.status, 200);
        assert.match(r.headers["content-type"], /^application\/json/);
        const doc = JSON.parse(r.body);
        OAuthProtectedResourceMetadataSchema.parse(doc);   // the SDK's schema
        assert.equal(doc.resource, server.resource, "the canonical URI");
        assert.deepEqual(doc.authorization_servers, [as.issuer]);
        assert.deepEqual(doc.scopes_supported, ["sensors:read", "device:control"]);
        assert.deepEqual(doc.bearer_methods_supported, ["header"]);
      }
    });
  }
  test("the 401's resource_metadata URL serves the document; other methods on it: 405", async () => {
    const r401 = await post(port, null, INIT);
    const url = new URL(challenge(r401.headers["www-authenticate"]).resource_metadata);
    assert.equal(url.href, server.metadataUrl);
    const doc = await (await fetch(url, { signal: AbortSignal.timeout(5000) })).json();
    assert.equal(doc.resource, server.resource);
    const p = await once(port, request("POST", url.pathname, { "Content-Type": "application/json" }, "{}"));
    assert.equal(p.status, 405);
    assert.equal(p.headers.allow, "GET");
  });

  // -- WebSocket --

  /// Opens ws://127.0.0.1:port`p` with `auth`; resolves { status, headers } on a refused upgrade
  /// or { ws } once open.
  function wsOpen(p, auth) {
    return new Promise((resolve, reject) => {
      const ws = new WebSocket(`ws://127.0.0.1:${port}${p}`, { headers: auth ? { Authorization: auth } : {}, handshakeTimeout: 5000 });
      ws.on("unexpected-response", (req, res) => {
        resolve({ status: res.statusCode, headers: res.headers });
        res.resume();
        req.destroy();
      });
      ws.on("open", () => resolve({ status: 101, ws }));
      ws.on("error", (e) => reject(e));
    });
  }
  /// Sends `message` on `ws` and resolves with the answer to `id` (5 s at most).
  function wsCall(ws, message, id) {
    return new Promise((resolve, reject) => {
      const t = setTimeout(() => { ws.off("message", on); reject(new Error(`no answer to ${id}`)); }, 5000);
      const on = (data) => {
        const m = JSON.parse(data.toString());
        if (m.id === id && !("method" in m)) { clearTimeout(t); ws.off("message", on); resolve(m); }
      };
      ws.on("message", on);
      ws.send(message);
    });
  }

  test("WebSocket upgrade without a token, or with a bad one: 401", async () => {
    const a = await wsOpen("/ws", null);
    assert.equal(a.status, 401);
    const ca = challenge(a.headers["www-authenticate"]);
    assert.equal(ca.resource_metadata, server.metadataUrl);
    assert.equal(ca.error, undefined);
    const b = await wsOpen("/ws", bearer(jwt({ aud: "http://127.0.0.1:1/mcp" })));
    assert.equal(b.status, 401);
    assert.equal(challenge(b.headers["www-authenticate"]).error, "invalid_token");
    const c = await wsOpen("/ws", bearer(jwt({ scope: undefined })));
    assert.equal(c.status, 403);
    assert.equal(challenge(c.headers["www-authenticate"]).error, "insufficient_scope");
    await stillServing();
  });

  test("WebSocket with a token lacking device:control: read_sensor works, set_relay closes with 1008", async () => {
    const { ws, status } = await wsOpen("/ws", bearer(jwt({ scope: "sensors:read" })));
    assert.equal(status, 101);
    const closed = new Promise((resolve) => ws.on("close", (code) => resolve(code)));
    try {
      const init = await wsCall(ws, rpc(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "ws", version: "1" } }), 1);
      assert.ok(init.result);
      ws.send(INITIALIZED);
      const r = await wsCall(ws, callTool(2, "read_sensor", { sensor: "temperature" }), 2);
      assert.equal(r.result.structuredContent.sensor, "temperature");
      ws.send(callTool(3, "set_relay", { on: true }));
      const code = await Promise.race([closed, new Promise((_, rej) => setTimeout(() => rej(new Error("no close in 5 s")), 5000))]);
      assert.equal(code, 1008, "policy violation");
    } finally {
      ws.terminate();
    }
    await stillServing();
  });

  test("a WebSocket ends (1008) at its first message after its token expired", async () => {
    await withTokenWindow(async (lastValidS) => {
      const sent = Date.now();
      const { ws, status } = await wsOpen("/ws", bearer(jwt({ scope: "sensors:read", exp: lastValidS - SKEW_S })));
      if (sideOf(sent, Date.now(), lastValidS) !== "valid") {
        ws?.terminate();
        return false;  // (upgraded or refused: either may be, the end passed meanwhile)
      }
      assert.equal(status, 101);
      const closed = new Promise((resolve) => ws.on("close", (code) => resolve(code)));
      try {
        // The server checks the token at each message (after the upgrade).
        const initSent = Date.now();
        const init = await wsCall(ws, rpc(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "ws", version: "1" } }), 1)
          .catch((e) => ({ error: e.message }));
        if (sideOf(initSent, Date.now(), lastValidS) !== "valid") return false;
        assert.ok(init.result, `initialize within the token's validity: ${JSON.stringify(init)}`);
        ws.send(INITIALIZED);
        await pastS(lastValidS);
        ws.send(callTool(2, "read_sensor", { sensor: "temperature" }));
        const code = await Promise.race([closed, new Promise((_, rej) => setTimeout(() => rej(new Error("no close in 5 s")), 5000))]);
        assert.equal(code, 1008, "policy violation: the token expired");
        return true;
      } finally {
        ws.terminate();
      }
    });
    await stillServing();
  });

  test("WebSocket with the static token: set_relay works", async () => {
    const { ws, status } = await wsOpen("/ws", bearer(STATIC));
    assert.equal(status, 101);
    try {
      await wsCall(ws, rpc(1, "initialize", { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "ws", version: "1" } }), 1);
      ws.send(INITIALIZED);
      const r = await wsCall(ws, callTool(2, "set_relay", { on: false }), 2);
      assert.ok(r.result, JSON.stringify(r));
    } finally {
      ws.terminate();
    }
  });
});

// ---- the other key types, and keys the server must refuse ---------------------------------------

describe("RS256 and HS256 keys", { timeout: SUITE_MS }, () => {
  test("RS256: a valid token works; HS256 signed with the RSA public key, ES256 and none are refused", async () => {
    const as = await startAs({ alg: "RS256" });
    const server = await startSensors(["--jwt-key", writeTmp("rs256.pem", as.publicKeyPem), "--issuer", as.issuer]);
    const claims = { aud: server.resource, scope: ALL };
    const ec = makeKey("ES256");
    const rows = [
      ["valid RS256", as.mint({ claims }), 200],
      ["HS256 signed with the RSA public key PEM", as.mint({ claims, alg: "HS256", key: Buffer.from(as.publicKeyPem) }), 401],
      ["HS256 signed with the RSA public key PEM less its final newline", as.mint({ claims, alg: "HS256", key: Buffer.from(as.publicKeyPem.trimEnd()) }), 401],
      ["HS256 signed with the RSA public key DER", as.mint({ claims, alg: "HS256", key: as.key.publicKey.export({ type: "spki", format: "der" }) }), 401],
      ["ES256 (another key type)", as.mint({ claims, alg: "ES256", key: ec.privateKey }), 401],
      ["RS256 by another RSA key", as.mint({ claims, key: makeKey("RS256").privateKey }), 401],
      ["alg none", as.mint({ claims, alg: "none" }), 401],
      ["RS256 signature cut by one byte", (() => {
        const [h, p, s] = as.mint({ claims }).split(".");
        return `${h}.${p}.${b64url(Buffer.from(s, "base64url").subarray(1))}`;
      })(), 401],
    ];
    for (const [name, token, status] of rows) {
      const r = await post(server.port, `Bearer ${token}`, INIT);
      assert.equal(r.status, status, name);
      if (status === 401) assert.equal(challenge(r.headers["www-authenticate"]).error, "invalid_token", name);
    }
    assert.equal((await post(server.port, `Bearer ${as.mint({ claims })}`, INIT)).status, 200, "still serving");
  });

  test("HS256 (--jwt-secret): a valid token works; another secret, RS256/ES256 and none are refused", async () => {
    const as = await startAs({ alg: "HS256" });
    const server = await startSensors(["--jwt-secret", writeTmp("hs256.secret", `${as.secret}\n`), "--issuer", as.issuer]);
    const claims = { aud: server.resource, scope: ALL };
    const rows = [
      ["valid HS256", as.mint({ claims }), 200],
      ["HS256 with another secret", as.mint({ claims, key: Buffer.from("x".repeat(48)) }), 401],
      ["HS256 with the secret and its newline", as.mint({ claims, key: Buffer.concat([as.secret, Buffer.from("\n")]) }), 401],
      ["RS256", as.mint({ claims, alg: "RS256", key: makeKey("RS256").privateKey }), 401],
      ["ES256", as.mint({ claims, alg: "ES256", key: makeKey("ES256").privateKey }), 401],
      ["alg none", as.mint({ claims, alg: "none" }), 401],
    ];
    for (const [name, token, status] of rows) {
      const r = await post(server.port, `Bearer ${token}`, INIT);
      assert.equal(r.status, status, name);
    }
  });

  test("key files the server refuses: a PEM public key as --jwt-secret, a short secret, RSA 1024, P-384", async () => {
    const es = makeKey("ES256");
    const p384 = crypto.generateKeyPairSync("ec", { namedCurve: "P-384" }).publicKey.export({ type: "spki", format: "pem" });
    const rsa1024 = crypto.generateKeyPairSync("rsa", { modulusLength: 1024 }).publicKey.export({ type: "spki", format: "pem" });
    const cases = [
      ["--jwt-secret", writeTmp("pem-as-secret", es.publicKeyPem), /not an HS256 secret/],
      ["--jwt-secret", writeTmp("short-secret", "0123456789abcdef0123456789abcde\n"), /not an HS256 secret/],
      ["--jwt-key", writeTmp("rsa1024.pem", rsa1024), /not an EC P-256 or RSA/],
      ["--jwt-key", writeTmp("p384.pem", p384), /not an EC P-256 or RSA/],
    ];
    for (const [option, file, message] of cases) {
      await assert.rejects(startNetworkServer(SERVER, ["--simulate", option, file, "--issuer", "http://127.0.0.1:1"], []),
        (e) => /server exited \(1\)/.test(e.message) && message.test(e.message), `${option} ${path.basename(file)}`);
    }
    // A JWT key without --issuer is a usage error.
    await assert.rejects(startNetworkServer(SERVER, ["--simulate", "--jwt-key", writeTmp("es.pem", es.publicKeyPem)], []),
      (e) => /server exited \(2\)/.test(e.message) && /--issuer/.test(e.message));
  });
});

// ---- explicit typing (RFC 9068 2.1 and 4, RFC 8725 3.11) -----------------------------------------

describe("--require-at-jwt: the header's typ must be at+jwt", { timeout: SUITE_MS }, () => {
  test("at+jwt in any case, with or without application/, passes; JWT, none, another type are refused before the signature", async () => {
    const as = await startAs({ alg: "ES256" });
    const server = await startSensors(["--jwt-key", writeTmp("typed.pem", as.publicKeyPem), "--issuer", as.issuer,
                                       "--require-at-jwt"]);
    const claims = { aud: server.resource, scope: ALL };
    const typed = (typ) => as.mint({ claims, header: { typ } });
    const rows = [
      ["typ at+jwt (the test authorization server's)", as.mint({ claims }), 200],
      ["typ application/at+jwt", typed("application/at+jwt"), 200],
      ["typ AT+JWT", typed("AT+JWT"), 200],
      ["typ Application/At+Jwt", typed("Application/At+Jwt"), 200],
      ["typ JWT", typed("JWT"), 401, WHY.typ],
      ["no typ", typed(undefined), 401, WHY.typ],
      ["typ jwt", typed("jwt"), 401, WHY.typ],
      ["typ application/jwt", typed("application/jwt"), 401, WHY.typ],
      ["typ at+jwt with a parameter", typed("at+jwt; v=1"), 401, WHY.typ],
      ["typ a number", typed(1), 401, WHY.typ],
      ["typ JWT and a bad signature: decided from the header", flipSignatureBit(typed("JWT")), 401, WHY.typ],
      ["typ at+jwt and a bad signature", flipSignatureBit(as.mint({ claims })), 401, WHY.signature],
      ["typ at+jwt, expired", as.mint({ claims: { ...claims, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 } }), 401, WHY.expired],
    ];
    for (const [name, token, status, description] of rows) {
      const r = await post(server.port, `Bearer ${token}`, INIT);
      assertRefusal(r, status, status === 200 ? {} : { error: "invalid_token", description, metadataUrl: server.metadataUrl });
      if (status === 200) assert.match(r.body.toString(), /"protocolVersion"/, name);
    }
    // A token from the authorization code flow (PKCE, resource indicator) is typed: it works.
    const { access_token: token } = await as.obtainToken({ resource: server.resource, scope: "sensors:read" });
    assert.equal(decodeJwt(token).header.typ, "at+jwt");
    assert.equal((await post(server.port, `Bearer ${token}`, INIT)).status, 200);
  });

  test("--require-at-jwt without a JWT key is a usage error", async () => {
    await assert.rejects(startNetworkServer(SERVER, ["--simulate", "--auth-token", STATIC, "--require-at-jwt"], []),
      (e) => /server exited \(2\)/.test(e.message) && /--require-at-jwt needs --jwt-key or --jwt-secret/.test(e.message));
  });
});

// ---- the canonical URI's own path ------------------------------------------------------------------

describe("--audience with a path other than the endpoint's", { timeout: SUITE_MS }, () => {
  test("the challenge's resource_metadata URL serves the document", async () => {
    const as = await startAs({ alg: "ES256" });
    const server = await startSensors(["--jwt-key", writeTmp("aud-path.pem", as.publicKeyPem), "--issuer", as.issuer,
                                       "--audience", "https://sensor.example/dev/mcp"]);
    const r = await post(server.port, null, INIT);
    const url = new URL(challenge(r.headers["www-authenticate"]).resource_metadata);
    assert.equal(url.href, "https://sensor.example/.well-known/oauth-protected-resource/dev/mcp");
    const d = await get(server.port, url.pathname);
    assert.equal(d.status, 200, `GET ${url.pathname}: ${d.body}`);
    assert.equal(JSON.parse(d.body).resource, "https://sensor.example/dev/mcp");
  });
});
