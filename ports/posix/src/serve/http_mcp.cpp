// HttpMcp (emcp/posix/http_mcp.h): the command line of a one-object server program.
#include "emcp/posix/http_mcp.h"

#include <string.h>

#include "emcp/posix/platform.h"

EMCP_NS_BEGIN
namespace posix {

HttpMcp::HttpMcp(const mcp::ServerInfo& info) : server_(info, platform()) {}

void HttpMcp::print_usage(const char* usage) const {
  serve::say({"usage: ", program_, " [--stdio | --http PORT [network options]]\n"
              "  MCP server over stdio (the default: one JSON-RPC message per line), or over HTTP.\n",
              usage != nullptr ? usage : "", serve::kHttpUsage});
}

int HttpMcp::parse(int argc, char** argv, Option option, const char* usage) {
  if (argc > 0 && argv[0] != nullptr) {
    const char* slash = strrchr(argv[0], '/');
    program_ = slash != nullptr ? slash + 1 : argv[0];
  }
  http_.program = program_;
  bool stdio = false;
  for (int i = 1; i < argc; ++i) {
    int took = serve::parse_http_option(argc, argv, &i, &http_);
    if (took == 0 && option != nullptr) took = option(argc, argv, &i);
    if (took < 0) return 2;
    if (took > 0) continue;
    if (strcmp(argv[i], "--stdio") == 0) {
      stdio = true;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      print_usage(usage);
      return 0;
    } else {
      serve::say({program_, ": unknown option ", argv[i], "\n"});
      print_usage(usage);
      return 2;
    }
  }
  if (stdio && (http_.enabled || http_.mqtt.url != nullptr)) {
    serve::say({program_, http_.enabled ? ": --stdio and --http exclude each other\n" : ": --stdio and --mqtt exclude each other\n"});
    return 2;
  }
  if (!serve::check_http_options(http_)) return 2;
  return -1;
}

int HttpMcp::serve(const Loop& loop) {
  if (http_.enabled || http_.mqtt.url != nullptr) return serve::http(server_, http_, loop);
  serve::say({program_, EMCP_LEGACY_ERA ? EMCP_MODERN_ERA ? ": serving MCP on stdio (protocol revisions 2024-11-05 to 2026-07-28)\n"
                                                           : ": serving MCP on stdio (protocol revisions 2024-11-05 to 2025-11-25)\n"
                                         : ": serving MCP on stdio (protocol revision 2026-07-28)\n"});
  return serve::stdio(server_, program_, loop);
}

}  // namespace posix
EMCP_NS_END
