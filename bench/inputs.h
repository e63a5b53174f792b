// bench/inputs.h - the two benchmark inputs, generated deterministically (no files, no RNG
// state outside the generator), so every run and every machine parses the same bytes.
#ifndef EMCP_BENCH_INPUTS_H
#define EMCP_BENCH_INPUTS_H

#include <string>

namespace bench {

/// A typical MCP `tools/call` request line (~200 bytes, compact JSON, no trailing newline):
/// jsonrpc, id, method, params with name, an arguments object of strings/numbers/booleans and a
/// `_meta` with a progressToken.
std::string make_tools_call();

/// A large MCP `tools/list` response (~20 KB, compact JSON): a result with 30 tools, each with
/// name, title, description (sentences with \n, \", \\, \u escapes and non-ASCII UTF-8),
/// inputSchema (properties with types, enums, minimum/maximum, defaults, required) and
/// annotations; plus nextCursor.
std::string make_tools_list();

}  // namespace bench

#endif  // EMCP_BENCH_INPUTS_H
