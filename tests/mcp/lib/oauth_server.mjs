// A small OAuth 2.1 authorization server for the tests (node:http on a loopback port): the one
// an MCP client discovers through the resource server's metadata (RFC 9728) and that issues the
// JWT access tokens emcp verifies. Keys are made at test time with node:crypto; nothing is
// written anywhere but where the caller says.
//
//   GET  /.well-known/oauth-authorization-server   RFC 8414 metadata (issuer = http://127.0.0.1:PORT)
//   POST /register                                 RFC 7591 dynamic client registration (public clients)
//   GET  /authorize                                auto-approves: checks client_id, redirect_uri, PKCE
//                                                  S256 and `resource` (RFC 8707), then 302 to the
//                                                  redirect URI with code, state and iss (RFC 9207)
//   POST /token                                    authorization_code (PKCE verifier, redirect_uri,
//                                                  resource checked) and refresh_token grants
//
// Access tokens are JWTs (RFC 9068 claims): iss, aud (= the requested resource), sub, scope,
// iat, exp, client_id, jti; signed ES256 (default), RS256 or HS256. mint() signs arbitrary
// headers and claims with any key (the bad-input tables); obtainToken() runs the whole code
// flow over HTTP without an MCP client.
//
// Example:
//   const as = await startAuthServer({ alg: "ES256" });
//   fs.writeFileSync(pubFile, as.publicKeyPem);             // emcp-sensors --jwt-key pubFile --issuer as.issuer
//   const token = as.mint({ claims: { aud: resource, scope: "sensors:read" } });
//   await as.close();
import crypto from "node:crypto";
import http from "node:http";

/// base64url without padding (RFC 7515 2) of a Buffer or a string (UTF-8).
export function b64url(data) {
  return Buffer.from(data).toString("base64url");
}

/// The JWS signature of `input` (a string) with `alg` and `key` (KeyObject, PEM text or, for
/// HS256, the secret bytes): ES256 as R||S (RFC 7518 3.4), RS256 PKCS#1 v1.5, HS256 HMAC,
/// "none" empty.
export function signature(alg, key, input) {
  switch (alg) {
    case "ES256": return crypto.sign("sha256", Buffer.from(input), { key, dsaEncoding: "ieee-p1363" });
    case "RS256": return crypto.sign("sha256", Buffer.from(input), key);
    case "HS256": return crypto.createHmac("sha256", key).update(input).digest();
    case "none": return Buffer.alloc(0);
    default: throw new Error(`signature(): unknown alg ${alg}`);
  }
}

/// A JWS compact token: `header` and `claims` objects (members set to undefined are left out),
/// signed with `alg` (default header.alg) and `key`.
export function signJwt(header, claims, alg, key) {
  const input = `${b64url(JSON.stringify(header))}.${b64url(JSON.stringify(claims))}`;
  return `${input}.${b64url(signature(alg ?? header.alg, key, input))}`;
}

/// `token` (a compact JWS) with one bit of its decoded signature flipped (bit `bit`, counted from
/// the first byte's lowest), re-encoded: a signature of the same length that the key did not
/// make, always in the one canonical base64url (flipping a bit of the text instead may only
/// touch the last character's unused bits, which a strict decoder refuses as an encoding).
export function flipSignatureBit(token, bit = 80) {
  const [h, p, s] = token.split(".");
  const sig = Buffer.from(s, "base64url");
  if (bit >= sig.length * 8) throw new Error(`flipSignatureBit: a ${sig.length}-byte signature has no bit ${bit}`);
  sig[bit >> 3] ^= 1 << (bit & 7);
  return `${h}.${p}.${b64url(sig)}`;
}

/// True when `s` is the one canonical unpadded base64url text of its bytes (RFC 4648 5, RFC 7515
/// 2): only the url-safe alphabet, a possible length, zero unused bits (Node's decoder accepts
/// what is not; re-encoding tells).
export function canonicalBase64url(s) {
  return /^[A-Za-z0-9_-]*$/.test(s) && s.length % 4 !== 1 && Buffer.from(s, "base64url").toString("base64url") === s;
}

/// The decoded header and claims of a compact JWS (no verification: the tests' own tokens).
export function decodeJwt(token) {
  const [h, p] = token.split(".");
  return { header: JSON.parse(Buffer.from(h, "base64url")), claims: JSON.parse(Buffer.from(p, "base64url")) };
}

/// A signing key for `alg`: { alg, privateKey, publicKey, publicKeyPem } (ES256: EC P-256;
/// RS256: RSA 2048) or { alg, secret } (HS256: 48 printable random characters, so a file holding
/// it has no line ending to strip).
export function makeKey(alg = "ES256") {
  if (alg === "HS256") return { alg, secret: Buffer.from(crypto.randomBytes(36).toString("base64url")) };
  const { privateKey, publicKey } = alg === "ES256"
    ? crypto.generateKeyPairSync("ec", { namedCurve: "P-256" })
    : crypto.generateKeyPairSync("rsa", { modulusLength: 2048 });
  return { alg, privateKey, publicKey, publicKeyPem: publicKey.export({ type: "spki", format: "pem" }) };
}

const sha256url = (text) => crypto.createHash("sha256").update(text).digest("base64url");
const nowS = () => Math.floor(Date.now() / 1000);
const isAbsoluteUri = (s) => { try { const u = new URL(s); return u.hash === "" && !s.includes("#"); } catch { return false; } };

/// Starts the authorization server on 127.0.0.1 (a free port).
///   alg            "ES256" (default), "RS256" or "HS256": how access tokens are signed
///   lifetime       access-token lifetime in seconds (default 300)
///   refreshTokens  issue refresh tokens (default false: an MCP client must not assume them)
///   grantScope     (requested scope, client) => the scope granted (default: as requested, or
///                  defaultScope when the request names none)
///   defaultScope   scope granted to a request without one (default "")
///   resources      when given, the only `resource` values /authorize accepts (invalid_target)
/// Resolves with the server object described at the end.
export async function startAuthServer({ alg = "ES256", lifetime = 300, refreshTokens = false, grantScope,
                                        defaultScope = "", resources } = {}) {
  const key = makeKey(alg);
  const signingKey = alg === "HS256" ? key.secret : key.privateKey;
  const clients = new Map();   // client_id -> registered metadata
  const codes = new Map();     // code -> { client_id, redirect_uri, challenge, resource, scope, expires, used }
  const refresh = new Map();   // refresh token -> { client_id, resource, scope }
  const log = [];              // every request: { method, path, params, status }
  const issued = [];           // every access token issued: { token, claims }
  let issuer = "";

  const grant = grantScope ?? ((requested) => requested ?? defaultScope);

  function mint({ claims = {}, header = {}, alg: a = alg, key: k = signingKey, defaults = true } = {}) {
    const t = nowS();
    const base = defaults ? { iss: issuer, sub: "test-user", iat: t, exp: t + lifetime, jti: crypto.randomUUID() } : {};
    return signJwt({ alg: a, typ: "at+jwt", ...header }, { ...base, ...claims }, a, k);
  }

  function accessToken(client_id, resource, scope) {
    const claims = { aud: resource, scope, client_id };
    if (scope === "") delete claims.scope;   // no scope granted: no claim
    const token = mint({ claims });
    issued.push({ token, claims: decodeJwt(token).claims });
    const body = { access_token: token, token_type: "Bearer", expires_in: lifetime };
    if (scope !== "") body.scope = scope;
    if (refreshTokens) {
      const rt = crypto.randomBytes(24).toString("base64url");
      refresh.set(rt, { client_id, resource, scope });
      body.refresh_token = rt;
    }
    return body;
  }

  const json = (res, status, body, extra = {}) => {
    res.writeHead(status, { "Content-Type": "application/json", "Cache-Control": "no-store", ...extra });
    res.end(JSON.stringify(body));
    return status;
  };
  const oauthError = (res, status, error, description) =>
    json(res, status, { error, ...(description ? { error_description: description } : {}) });

  function metadata() {
    return {
      issuer,
      authorization_endpoint: `${issuer}/authorize`,
      token_endpoint: `${issuer}/token`,
      registration_endpoint: `${issuer}/register`,
      response_types_supported: ["code"],
      grant_types_supported: ["authorization_code", "refresh_token"],
      code_challenge_methods_supported: ["S256"],
      token_endpoint_auth_methods_supported: ["none"],
      authorization_response_iss_parameter_supported: true,
    };
  }

  function register(res, body) {
    let m;
    try { m = JSON.parse(body); } catch { return oauthError(res, 400, "invalid_client_metadata", "not JSON"); }
    if (!m || typeof m !== "object" || !Array.isArray(m.redirect_uris) || m.redirect_uris.length === 0 ||
        !m.redirect_uris.every((u) => typeof u === "string" && isAbsoluteUri(u)))
      return oauthError(res, 400, "invalid_redirect_uri", "redirect_uris: absolute URIs required");
    if (m.token_endpoint_auth_method !== undefined && m.token_endpoint_auth_method !== "none")
      return oauthError(res, 400, "invalid_client_metadata", "public clients only (token_endpoint_auth_method none)");
    const client_id = `client-${crypto.randomBytes(8).toString("hex")}`;
    const info = { ...m, client_id, client_id_issued_at: nowS(), token_endpoint_auth_method: "none" };
    clients.set(client_id, info);
    return json(res, 201, info);
  }

  function authorize(res, q) {
    // Errors about the client or its redirect URI are never redirected (RFC 6749 4.1.2.1).
    const client = clients.get(q.get("client_id") ?? "");
    if (!client) return oauthError(res, 400, "invalid_client", "unknown client_id");
    const redirect = q.get("redirect_uri");
    if (!redirect || !client.redirect_uris.includes(redirect))
      return oauthError(res, 400, "invalid_request", "redirect_uri is not one the client registered");
    const back = (params) => {
      const u = new URL(redirect);
      for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) u.searchParams.set(k, v);
      u.searchParams.set("iss", issuer);
      res.writeHead(302, { Location: u.href, "Cache-Control": "no-store" });
      res.end();
      return 302;
    };
    const state = q.get("state") ?? undefined;
    const fail = (error, description) => back({ error, error_description: description, state });
    if (q.get("response_type") !== "code") return fail("unsupported_response_type", "response_type must be code");
    const challenge = q.get("code_challenge");
    if (q.get("code_challenge_method") !== "S256" || !challenge || !/^[A-Za-z0-9_-]{43}$/.test(challenge))
      return fail("invalid_request", "PKCE with S256 is required");
    const resources_ = q.getAll("resource");
    if (resources_.length !== 1 || !isAbsoluteUri(resources_[0]) || (resources && !resources.includes(resources_[0])))
      return fail("invalid_target", "one absolute resource URI is required (RFC 8707)");
    const scope = grant(q.get("scope") ?? undefined, client);
    const code = crypto.randomBytes(24).toString("base64url");
    codes.set(code, { client_id: client.client_id, redirect_uri: redirect, challenge, resource: resources_[0], scope,
                      expires: Date.now() + 60000, used: false });
    return back({ code, state });
  }

  function token(res, body) {
    const p = new URLSearchParams(body);
    const client = clients.get(p.get("client_id") ?? "");
    if (!client) return oauthError(res, 401, "invalid_client", "unknown client_id");
    if (p.get("grant_type") === "authorization_code") {
      const c = codes.get(p.get("code") ?? "");
      if (!c || c.used || c.expires < Date.now() || c.client_id !== client.client_id)
        return oauthError(res, 400, "invalid_grant", "unknown, used or expired code");
      c.used = true;   // one use, even when what follows fails
      if (p.get("redirect_uri") !== c.redirect_uri) return oauthError(res, 400, "invalid_grant", "redirect_uri differs");
      const verifier = p.get("code_verifier") ?? "";
      if (!/^[A-Za-z0-9._~-]{43,128}$/.test(verifier) || sha256url(verifier) !== c.challenge)
        return oauthError(res, 400, "invalid_grant", "PKCE verifier does not match");
      const resource = p.getAll("resource");
      if (resource.length !== 1 || resource[0] !== c.resource)
        return oauthError(res, 400, "invalid_target", "resource must be the one authorized");
      return json(res, 200, accessToken(client.client_id, c.resource, c.scope));
    }
    if (p.get("grant_type") === "refresh_token" && refreshTokens) {
      const r = refresh.get(p.get("refresh_token") ?? "");
      if (!r || r.client_id !== client.client_id) return oauthError(res, 400, "invalid_grant", "unknown refresh token");
      const resource = p.getAll("resource");
      if (resource.length > 1 || (resource.length === 1 && resource[0] !== r.resource))
        return oauthError(res, 400, "invalid_target", "resource must be the one authorized");
      // A refresh may narrow the scope, never widen it (RFC 6749 6).
      let scope = r.scope;
      if (p.get("scope") !== null) {
        const asked = p.get("scope").split(" ").filter(Boolean);
        const had = new Set(r.scope.split(" ").filter(Boolean));
        if (!asked.every((s) => had.has(s))) return oauthError(res, 400, "invalid_scope", "a refresh cannot widen the scope");
        scope = asked.join(" ");
      }
      return json(res, 200, accessToken(client.client_id, r.resource, scope));
    }
    return oauthError(res, 400, "unsupported_grant_type");
  }

  const server = http.createServer((req, res) => {
    const chunks = [];
    let size = 0;
    req.on("data", (d) => { size += d.length; if (size <= 65536) chunks.push(d); });
    req.on("end", () => {
      const url = new URL(req.url, issuer);
      const body = Buffer.concat(chunks).toString("utf8");
      const entry = { method: req.method, path: url.pathname, params: Object.fromEntries(url.searchParams) };
      if (req.method === "POST" && /x-www-form-urlencoded/.test(req.headers["content-type"] ?? ""))
        entry.params = { ...entry.params, ...Object.fromEntries(new URLSearchParams(body)) };
      let status;
      if (size > 65536) status = oauthError(res, 413, "invalid_request", "too large");
      else if (req.method === "GET" && url.pathname === "/.well-known/oauth-authorization-server") status = json(res, 200, metadata());
      else if (req.method === "POST" && url.pathname === "/register") status = register(res, body);
      else if (req.method === "GET" && url.pathname === "/authorize") status = authorize(res, url.searchParams);
      else if (req.method === "POST" && url.pathname === "/token") status = token(res, body);
      else status = oauthError(res, 404, "not_found");
      entry.status = status;
      log.push(entry);
    });
  });
  server.keepAliveTimeout = 1000;
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", resolve);
  });
  const port = server.address().port;
  issuer = `http://127.0.0.1:${port}`;

  /// Registers a client and runs the code flow over HTTP (what an MCP client does), for
  /// `resource` and `scope`; resolves with the token response.
  async function obtainToken({ resource, scope }) {
    const redirect = "http://127.0.0.1:9/callback";
    const reg = await (await fetch(`${issuer}/register`, {
      method: "POST", headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ redirect_uris: [redirect], token_endpoint_auth_method: "none", client_name: "obtainToken" }),
    })).json();
    const verifier = crypto.randomBytes(32).toString("base64url");
    const u = new URL(`${issuer}/authorize`);
    const params = { response_type: "code", client_id: reg.client_id, redirect_uri: redirect, state: "s",
                     code_challenge: sha256url(verifier), code_challenge_method: "S256", resource };
    if (scope !== undefined) params.scope = scope;
    for (const [k, v] of Object.entries(params)) u.searchParams.set(k, v);
    const a = await fetch(u, { redirect: "manual" });
    const code = new URL(a.headers.get("location")).searchParams.get("code");
    if (!code) throw new Error(`obtainToken: no code (${a.status} ${a.headers.get("location")})`);
    const t = await fetch(`${issuer}/token`, {
      method: "POST", headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ grant_type: "authorization_code", code, code_verifier: verifier, redirect_uri: redirect,
                                  client_id: reg.client_id, resource }),
    });
    if (t.status !== 200) throw new Error(`obtainToken: ${t.status} ${await t.text()}`);
    return t.json();
  }

  return {
    issuer, port, alg, key,
    /// What emcp-sensors --jwt-key reads (ES256, RS256), or --jwt-secret (HS256).
    publicKeyPem: key.publicKeyPem,
    secret: key.secret,
    clients, log, issued,
    /// A JWT: defaults (iss, sub, iat, exp, jti) unless `defaults` is false, then `claims` (a
    /// member set to undefined removes it); header { alg, typ } then `header`; signed with
    /// `alg` (default the server's) and `key` (default the server's signing key).
    mint,
    obtainToken,
    metadata,
    close: () => new Promise((resolve) => { server.closeAllConnections?.(); server.close(() => resolve()); }),
  };
}
