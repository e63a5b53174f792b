// docs/porting.md's excerpt of emcp/platform.h: compiled beside the real struct, and checked
// to be it, member by member (type and place) and as a whole.
#include <stddef.h>
#include <stdint.h>

#include <type_traits>

#include "emcp/mcp/server.h"

namespace doc {
constexpr emcp::mcp::ServerInfo kInfo = {"doc", "1.0"};
extern const emcp::Platform kPlatform;
// @BLOCK@
}  // namespace doc

#define EMCP_DOC_SAME(m)                                                               \
  static_assert(std::is_same<decltype(doc::Platform::m), decltype(emcp::Platform::m)>::value && \
                    offsetof(doc::Platform, m) == offsetof(emcp::Platform, m),         \
                "docs/porting.md's Platform::" #m " is not emcp::Platform's")
EMCP_DOC_SAME(now_ms);
EMCP_DOC_SAME(random);
EMCP_DOC_SAME(log);
EMCP_DOC_SAME(unix_time_s);
EMCP_DOC_SAME(wake);
EMCP_DOC_SAME(critical_enter);
EMCP_DOC_SAME(critical_exit);
static_assert(sizeof(doc::Platform) == sizeof(emcp::Platform), "docs/porting.md's Platform lacks a member");
