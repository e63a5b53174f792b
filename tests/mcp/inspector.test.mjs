// The official MCP Inspector's web UI (@modelcontextprotocol/inspector-client, pinned), in
// headless Chromium, connected DIRECTLY to `emcp-sensors --http` over Streamable HTTP: no
// Inspector proxy runs; the browser itself talks to the device, across origins, through the
// server's CORS answers. The test serves the UI's prebuilt static files (its dist/ folder) from
// http://localhost:PORT, opens it with the transport and the server's URL as query parameters,
// picks "Connection Type: Direct", connects, lists the tools on the Tools tab (they must be the
// server's, as an SDK client in Node reads them), runs one (read_all) and keeps a screenshot of
// the tool list. Every request the page makes is recorded: all of them go to the page's origin or
// to the MCP server, but for the one the UI always makes at start-up for the proxy's default
// settings (GET <proxy>/config, best effort: its failure is logged and ignored); the proxy's
// address is pointed at a port of this test that refuses it, so no real proxy is ever reached.
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors node --test tests/mcp/inspector.test.mjs
// (EMCP_CHROMIUM: the browser, default /usr/bin/chromium; EMCP_TEST_OUT: where the screenshot
// inspector-tools.png goes, default the system's temporary folder.)
//
// Why the 1.x line (1.0.3, the last; its UI shows a banner "MCP Inspector v1 is deprecated"):
// Inspector 2.x's web UI (@modelcontextprotocol/inspector 2.12.0) has no direct connection: its
// browser transport always goes through its own Node back end (POST /api/mcp/connect on the
// page's origin), and 2.x needs Node 22.19.
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, extname, join, normalize, sep } from "node:path";
import puppeteer from "puppeteer-core";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { startNetworkServer, stopNetworkServer } from "./lib/harness.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
const CHROMIUM = process.env.EMCP_CHROMIUM ?? "/usr/bin/chromium";
const OUT = process.env.EMCP_TEST_OUT ?? tmpdir();
const STEP = 30000;  // the bound of every wait in the browser

// The package's prebuilt UI: dist/index.html and dist/assets/*.
const require = createRequire(import.meta.url);
const DIST = join(dirname(require.resolve("@modelcontextprotocol/inspector-client/package.json")), "dist");
const TYPES = { ".html": "text/html", ".js": "text/javascript", ".css": "text/css", ".svg": "image/svg+xml" };

let mcp, pages, trap, browser, pagePort, trapPort, expected;
const trapped = [];  // what reached the stand-in for the proxy

function listen(server) {
  return new Promise((r) => server.listen(0, "127.0.0.1", () => r(server.address().port)));
}

before(async () => {
  // The UI's static files; any other path is the single-page app (as the package's own server).
  pages = createServer(async (req, res) => {
    let path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
    if (path === sep || !path.startsWith(sep) || !extname(path)) path = "/index.html";
    const file = join(DIST, path);
    if (!file.startsWith(DIST + sep)) return res.writeHead(403).end();
    try {
      const body = await readFile(file);
      res.writeHead(200, { "Content-Type": TYPES[extname(file)] ?? "application/octet-stream" }).end(body);
    } catch {
      res.writeHead(404).end();
    }
  });
  pagePort = await listen(pages);
  // Where the UI believes its proxy is: records, answers 404 without CORS headers (the page
  // cannot read it, as when no proxy runs).
  trap = createServer((req, res) => { trapped.push(`${req.method} ${req.url}`); res.writeHead(404).end(); });
  trapPort = await listen(trap);
  mcp = await startNetworkServer(SERVER, ["--simulate"], []);
  // The tools as the server lists them (to an SDK client in Node, no browser in between).
  const client = new Client({ name: "inspector-test", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`http://127.0.0.1:${mcp.port}/mcp`)));
  expected = (await client.listTools()).tools;
  await client.close();
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // Tall enough for the whole tool list in the screenshot.
    defaultViewport: { width: 1400, height: 1800 },
    args: ["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP localhost 127.0.0.1"],
  });
});

after(async () => {
  if (browser) await browser.close();
  if (mcp) await stopNetworkServer(mcp);
  for (const s of [pages, trap]) if (s) await new Promise((r) => s.close(r));
});

// Clicks the first element matching `selector` whose text is `text` (trimmed), once it shows.
async function clickText(page, selector, text) {
  const handle = await page.waitForFunction((sel, t) => [...document.querySelectorAll(sel)]
    .find((e) => e.textContent.trim() === t && !e.disabled && e.offsetParent !== null), { timeout: STEP }, selector, text);
  await handle.asElement().click();
}

test("the Inspector's web UI connects directly to emcp-sensors, lists its tools and runs one", async () => {
  const started = Date.now();
  const page = await browser.newPage();
  const requests = [];
  page.on("request", (r) => requests.push(`${r.method()} ${r.url()}`));
  const preflights = [];
  page.on("response", (r) => { if (r.request().method() === "OPTIONS") preflights.push(r.status()); });
  const console_ = [];
  page.on("console", (m) => console_.push(`${m.type()}: ${m.text()}`));
  page.on("pageerror", (e) => console_.push(`pageerror: ${e.message}`));
  try {
    const origin = `http://localhost:${pagePort}`;
    const mcpUrl = `http://127.0.0.1:${mcp.port}/mcp`;
    const query = new URLSearchParams({ transport: "streamable-http", serverUrl: mcpUrl, MCP_PROXY_PORT: String(trapPort) });
    await page.goto(`${origin}/?${query}`, { timeout: STEP });

    // The sidebar took the transport and the URL from the query.
    await page.waitForSelector("#sse-url-input", { timeout: STEP });
    assert.equal(await page.$eval("#sse-url-input", (e) => e.value), mcpUrl);
    // Connection Type: Via Proxy (the default) -> Direct.
    await page.click("#connection-type-select");
    await clickText(page, "[role=option]", "Direct");
    await page.waitForFunction(() => document.querySelector("#connection-type-select")?.textContent.trim() === "Direct" &&
                                     !document.querySelector("[role=listbox]") && document.body.style.pointerEvents !== "none",
                               { timeout: STEP });

    await clickText(page, "button", "Connect");
    await page.waitForFunction(() => [...document.querySelectorAll("span")].some((s) => s.textContent === "Connected"),
                               { timeout: STEP }).catch((e) => { throw new Error(`not connected: ${e.message}`); });

    // Tools tab, List Tools: the list shows each tool's title (its name when it has none).
    await clickText(page, "[role=tab]", "Tools");
    await clickText(page, "button", "List Tools");
    const labels = expected.map((t) => t.title || t.name);
    assert.ok(labels.length >= 10, `the server lists ${labels.length} tools`);
    await page.waitForFunction((want) => {
      const shown = new Set([...document.querySelectorAll("span.truncate")].map((s) => s.textContent.trim()));
      return want.every((l) => shown.has(l));
    }, { timeout: STEP }, labels).catch((e) => { throw new Error(`tool list: ${e.message}`); });
    const shown = await page.$$eval("span.truncate", (s) => s.map((e) => e.textContent.trim()));
    for (const l of labels) assert.ok(shown.includes(l), `${l} not in ${shown.join(", ")}`);
    // The list scrolls inside its pane (Tailwind's max-h-96): lifted, for the picture to show it all.
    await page.addStyleTag({ content: ".max-h-96 { max-height: none !important; }" });
    const shot = join(OUT, "inspector-tools.png");
    await page.screenshot({ path: shot, fullPage: true });
    console.log(`screenshot of the Inspector's tool list: ${shot}`);

    // Run read_all (no arguments): its result (structured content: the readings) shows in the UI.
    const readAll = expected.find((t) => t.name === "read_all");
    assert.ok(readAll, "emcp-sensors lists read_all");
    await clickText(page, "span.truncate", readAll.title || readAll.name);
    await clickText(page, "button", "Run Tool");
    await page.waitForFunction(() => /Tool Result:\s*Success/.test(document.body.innerText), { timeout: STEP })
      .catch((e) => { throw new Error(`tool result: ${e.message}`); });
    assert.match(await page.evaluate(() => document.body.innerText), /temperature:\s*-?\d+(\.\d+)?\s/);
    await page.screenshot({ path: join(OUT, "inspector-tool-result.png"), fullPage: true });

    // Nothing but the page's origin and the MCP server, save the UI's start-up GET <proxy>/config.
    const proxyConfig = `GET http://localhost:${trapPort}/config`;
    const elsewhere = requests.filter((r) => !r.split(" ")[1].startsWith(`${origin}/`) &&
                                             !r.split(" ")[1].startsWith(mcpUrl) && r !== proxyConfig);
    assert.deepEqual(elsewhere, [], `requests elsewhere:\n${requests.join("\n")}`);
    assert.ok(requests.some((r) => r === `POST ${mcpUrl}`), `no POST to the MCP server:\n${requests.join("\n")}`);
    // Cross-origin with MCP's headers: the browser asked first, and the server said yes.
    assert.ok(preflights.length > 0 && preflights.every((s) => s === 204), `preflights: ${preflights}`);
    assert.ok(!requests.some((r) => /:6277\//.test(r)), "a request to the default proxy port");
    assert.ok(trapped.every((r) => r === "GET /config"), `the proxy's stand-in got: ${trapped.join(", ")}`);
    console.log(`${requests.length} requests from the page (${[...new Set(requests)].join("; ")}), ` +
                `${trapped.length} to the (absent) proxy: ${trapped.join(", ") || "none"}; ${Date.now() - started} ms`);
  } catch (e) {
    // What the page showed and asked for, to see why.
    await page.screenshot({ path: join(OUT, "inspector-failure.png"), fullPage: true }).catch(() => {});
    e.message += `\nrequests:\n${requests.join("\n")}\nconsole:\n${console_.join("\n")}`;
    throw e;
  } finally {
    await page.close();
  }
});
