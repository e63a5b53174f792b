// The names of the MCP revisions (what each one has: emcp/mcp/revision.h).
#include "server_internal.h"

EMCP_NS_BEGIN
namespace mcp {

namespace {

constexpr const char* kVersionNames[] = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25",
                                              "2026-07-28"};

}  // namespace

const char* version_str(Version v) { return kVersionNames[static_cast<uint8_t>(v)]; }

bool parse_version(StrView s, Version* out) {
  for (uint8_t i = 0; i < sizeof kVersionNames / sizeof kVersionNames[0]; ++i) {
    if (s == StrView(kVersionNames[i])) {
      *out = static_cast<Version>(i);
      return true;
    }
  }
  return false;
}

}  // namespace mcp
EMCP_NS_END
