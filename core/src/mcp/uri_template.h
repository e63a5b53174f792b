// Internal: matching URIs against RFC 6570 templates with simple expressions.
#ifndef EMCP_SRC_MCP_URI_TEMPLATE_H
#define EMCP_SRC_MCP_URI_TEMPLATE_H

#include <stdint.h>

#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace mcp {

/// True when `uri` is an expansion of `tmpl`, which may hold literal text and expressions
/// {name} (a value without '/', '?' or '#', at least one character) and {+name} (reserved
/// expansion: '/' allowed). A value ends where the literal text after it matches first. Fills
/// names[i]/values[i] (views into tmpl and uri) for up to `max` variables; *count gets how many.
/// Other RFC 6570 operators are not supported: a template using them matches nothing.
bool match_uri_template(StrView tmpl, StrView uri, StrView* names, StrView* values, uint8_t max,
                        uint8_t* count);

}  // namespace mcp
EMCP_NS_END

#endif
