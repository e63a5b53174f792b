// CORS in a real browser: headless Chromium (Debian's package, driven by puppeteer-core) loads a
// page whose script, the official SDK client bundled for the browser (esbuild), connects to
// `emcp-sensors --http` on another origin: from http://localhost:PORT (an origin the Origin
// check accepts by default) it initializes, lists the tools and calls one; the same page from
// http://evil.test:PORT (resolved to 127.0.0.1 by Chromium's host rules) is refused: its
// preflight gets 403, and the browser never lets the script see an answer.
//
//   EMCP_SENSORS=build/native/bin/emcp-sensors node --test tests/mcp/browser_cors.test.mjs
// (EMCP_CHROMIUM: the browser, default /usr/bin/chromium; EMCP_TEST_OUT: where the screenshot
// of the page goes, default the system's temporary folder.)
import { test, before, after } from "node:test";
import assert from "node:assert/strict";
import { createServer } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { build } from "esbuild";
import puppeteer from "puppeteer-core";
import { startNetworkServer, stopNetworkServer } from "./lib/harness.mjs";

const SERVER = process.env.EMCP_SENSORS ?? new URL("../../build/native/bin/emcp-sensors", import.meta.url).pathname;
const CHROMIUM = process.env.EMCP_CHROMIUM ?? "/usr/bin/chromium";
const OUT = process.env.EMCP_TEST_OUT ?? tmpdir();

let mcp, pages, browser, pagePort;

before(async () => {
  const bundle = await build({
    entryPoints: [new URL("browser/client.mjs", import.meta.url).pathname],
    bundle: true, format: "esm", platform: "browser", write: false, logLevel: "silent",
  });
  const js = bundle.outputFiles[0].text;
  const html = '<!doctype html><meta charset="utf-8"><title>emcp CORS</title>' +
    '<pre id="out" style="font: 14px monospace; white-space: pre-wrap"></pre><script type="module" src="client.js"></script>';
  pages = createServer((req, res) => {
    const path = new URL(req.url, "http://x").pathname;
    if (path === "/") res.writeHead(200, { "Content-Type": "text/html" }).end(html);
    else if (path === "/client.js") res.writeHead(200, { "Content-Type": "text/javascript" }).end(js);
    else res.writeHead(404).end();
  });
  await new Promise((r) => pages.listen(0, "127.0.0.1", r));
  pagePort = pages.address().port;
  mcp = await startNetworkServer(SERVER, ["--simulate"], []);
  browser = await puppeteer.launch({
    executablePath: CHROMIUM,
    headless: true,
    // evil.test: a name the Origin check does not accept, served from loopback all the same.
    args: ["--no-sandbox", "--disable-gpu", "--host-resolver-rules=MAP evil.test 127.0.0.1, MAP localhost 127.0.0.1"],
  });
});

after(async () => {
  if (browser) await browser.close();
  if (mcp) await stopNetworkServer(mcp);
  if (pages) await new Promise((r) => pages.close(r));
});

async function runPage(origin) {
  const page = await browser.newPage();
  const failures = [];
  page.on("requestfailed", (r) => failures.push(`${r.method()} ${r.url()}: ${r.failure()?.errorText}`));
  const preflights = [];
  page.on("response", (r) => { if (r.request().method() === "OPTIONS") preflights.push(r.status()); });
  await page.goto(`${origin}/?mcp=${encodeURIComponent(`http://127.0.0.1:${mcp.port}/mcp`)}`);
  await page.waitForFunction(() => window.__outcome !== undefined, { timeout: 20000 });
  const outcome = await page.evaluate(() => window.__outcome);
  return { page, outcome, failures, preflights };
}

test("a page of an allowed origin (localhost) initializes, lists the tools and calls one", async () => {
  const { page, outcome, preflights } = await runPage(`http://localhost:${pagePort}`);
  assert.equal(outcome.ok, true, JSON.stringify(outcome));
  assert.equal(outcome.server, "emcp-sensors");
  assert.match(outcome.session, /^[0-9a-f]{32}$/);  // Mcp-Session-Id, readable through Expose-Headers
  assert.ok(outcome.tools.includes("read_sensor") && outcome.tools.includes("sample_sensor"), outcome.tools.join());
  assert.match(outcome.text, /^temperature: \d+\.\d °C \(simulated\)$/);
  assert.ok(preflights.length > 0 && preflights.every((s) => s === 204), `preflights: ${preflights}`);
  const shot = join(OUT, "browser-cors.png");
  await page.screenshot({ path: shot, fullPage: true });
  console.log(`screenshot of the page (the tool list): ${shot}`);
  await page.close();
});

test("the same page from an origin the server does not allow is refused", async () => {
  const { page, outcome, preflights } = await runPage(`http://evil.test:${pagePort}`);
  assert.equal(outcome.ok, false);
  assert.match(outcome.error, /fetch|network|Failed/i, outcome.error);
  assert.ok(preflights.length > 0 && preflights.every((s) => s === 403), `preflights: ${preflights}`);
  await page.close();
});
