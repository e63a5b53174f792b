// ESM loader hooks: @modelcontextprotocol/conformance (0.1.16, and 0.2.0-alpha.12 installed
// under the npm alias conformance-0.2) imports `globSync` from "fs", which Node 20 lacks (it
// came in Node 22). For imports from those packages only, "fs" resolves to a module that
// re-exports node:fs and adds a small globSync (patterns with *, ** and ?).
const SHIM = "emcp-shim:fs";
const PACKAGES = ["/node_modules/@modelcontextprotocol/conformance/", "/node_modules/conformance-0.2/"];
export async function resolve(specifier, context, next) {
  const parent = context.parentURL ?? "";
  if ((specifier === "fs" || specifier === "node:fs") && PACKAGES.some((p) => parent.includes(p))) {
    return { url: SHIM, shortCircuit: true };
  }
  return next(specifier, context);
}
export async function load(url, context, next) {
  if (url !== SHIM) return next(url, context);
  const source = `
import fs from "node:fs";
import path from "node:path";
export * from "node:fs";
export default fs;
function toRegExp(pattern) {
  let re = "";
  for (let i = 0; i < pattern.length; i++) {
    const c = pattern[i];
    if (c === "*" && pattern[i + 1] === "*") { re += ".*"; i++; if (pattern[i + 1] === "/") i++; }
    else if (c === "*") re += "[^/]*";
    else if (c === "?") re += "[^/]";
    else re += c.replace(/[.+^\${}()|[\\]\\\\]/g, "\\\\$&");
  }
  return new RegExp("^" + re + "$");
}
export function globSync(pattern, options = {}) {
  const cwd = options.cwd ?? process.cwd();
  const patterns = Array.isArray(pattern) ? pattern : [pattern];
  const res = patterns.map(toRegExp);
  const out = [];
  const walk = (dir, rel) => {
    let entries = [];
    try { entries = fs.readdirSync(dir, { withFileTypes: true }); } catch { return; }
    for (const e of entries) {
      const r = rel ? rel + "/" + e.name : e.name;
      if (res.some((x) => x.test(r))) out.push(r);
      if (e.isDirectory() && e.name !== "node_modules") walk(path.join(dir, e.name), r);
    }
  };
  walk(cwd, "");
  return out;
}
`;
  return { format: "module", source, shortCircuit: true };
}
