// Every line the server must write in the wire fixtures (tests/fixtures/mcp/*.jsonl, which the
// unit test McpFixtures.EveryFixtureMatches compares byte for byte with the server's output)
// is valid against the official JSON schema of the revision negotiated in that fixture. The
// folder must hold the fixtures (one per revision the schemas cover, at least): no fixture is a
// failure, not a pass of zero tests. EMCP_FIXTURES_DIR reads another folder (the canary
// mcp_fixtures_schema_detects_no_fixtures points it at an empty one).
import { test } from "node:test";
import assert from "node:assert/strict";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { check, MODERN_REVISIONS, REVISIONS } from "./lib/schema.mjs";

// A request of the modern era (2026-07-28) names its revision or capabilities in _meta (or is
// one of that era's own methods): its answer is checked against that revision's schema, even
// an error to a revision not served.
const META = "io.modelcontextprotocol/";
function modernRequest(m) {
  const meta = m.params?._meta;
  return (meta && typeof meta === "object" && (`${META}protocolVersion` in meta || `${META}clientCapabilities` in meta)) ||
    m.method === "server/discover" || m.method === "subscriptions/listen";
}

const dir = process.env.EMCP_FIXTURES_DIR ?? new URL("../fixtures/mcp", import.meta.url).pathname;
const files = readdirSync(dir).filter((f) => f.endsWith(".jsonl")).sort();

test("the fixtures are there: one per revision at least", () => {
  const missing = [...REVISIONS, ...MODERN_REVISIONS].map((r) => `rev-${r}.jsonl`).filter((f) => !files.includes(f));
  assert.deepEqual(missing, [], `${dir} holds ${files.length} fixture(s) (*.jsonl); missing`);
});

for (const file of files) {
  test(file, () => {
    let revision = "2025-11-25";  // what a client that has not initialized speaks
    const methods = new Map();     // request id -> method, for the client's requests
    const modern = new Set();      // request ids of modern-era requests
    let current = undefined;       // the era of the last request (notifications relate to it)
    const problems = [];
    let checked = 0;
    let unexpressible = 0;
    for (const line of readFileSync(join(dir, file), "utf8").split("\n")) {
      if (line.startsWith("> ")) {
        let input;
        try { input = JSON.parse(line.slice(2)); } catch { continue; }  // deliberately broken input
        for (const m of Array.isArray(input) ? input : [input]) {
          if (m && typeof m === "object" && "method" in m && "id" in m) {
            methods.set(JSON.stringify(m.id), m.method);
            const isModern = modernRequest(m);
            if (isModern) modern.add(JSON.stringify(m.id));
            else modern.delete(JSON.stringify(m.id));
            current = isModern ? MODERN_REVISIONS[0] : undefined;
          }
        }
      } else if (line.startsWith("< ")) {
        const output = JSON.parse(line.slice(2));
        for (const m of Array.isArray(output) ? output : [output]) {
          if (m.result?.protocolVersion) revision = m.result.protocolVersion;
          if (m.id === null && revision < "2025-11-25") {
            // JSON-RPC 2.0's "id": null for an unreadable id: the schemas before 2025-11-25
            // cannot express it (their RequestId is string | integer). Counted, not checked.
            ++unexpressible;
            continue;
          }
          const method = "method" in m ? undefined : methods.get(JSON.stringify(m.id));
          // A notification on a listen stream (its subscriptionId) is of the modern era.
          const listened = m.params?._meta?.[`${META}subscriptionId`] !== undefined;
          const era = "method" in m ? (listened ? MODERN_REVISIONS[0] : current ?? revision)
                                    : (modern.has(JSON.stringify(m.id)) ? MODERN_REVISIONS[0] : revision);
          problems.push(...check(era, m, method));
          ++checked;
        }
      }
    }
    assert.ok(checked > 0, "the fixture has server output");
    assert.deepEqual(problems, []);
  });
}
