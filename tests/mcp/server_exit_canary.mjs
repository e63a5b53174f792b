// The canaries of the stop helper every Node test uses for its servers (lib/server_exit.mjs):
// starts emcp-server-exit-canary MODE (tests/server_exit_canary.cpp) as any test starts a
// network server (harness.mjs's startNetworkServer), stops it with stopNetworkServer (SIGTERM)
// and exits with status 0 only if the helper found nothing wrong; otherwise prints what it
// said and exits with status 1. tests/CMakeLists.txt runs it under expect_failure.sh for the
// modes that end wrongly (the helper must fail, for that reason) and plainly for `clean`.
//
//   node tests/mcp/server_exit_canary.mjs build/native/bin/emcp-server-exit-canary status
import { startNetworkServer, stopNetworkServer } from "./lib/harness.mjs";

const [canary, mode] = process.argv.slice(2);
const server = await startNetworkServer(canary, [mode], []);
try {
  await stopNetworkServer(server);
  console.log(`stopNetworkServer: emcp-server-exit-canary ${mode} ended cleanly`);
} catch (e) {
  console.log(`stopNetworkServer failed: ${e.message}`);
  process.exitCode = 1;
}
