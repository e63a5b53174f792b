// Compiles a Param table whose defaults are typed (EMCP_SCHEMA_DEFAULT_CASE 0: every allowed
// form must build) or one wrong default (1: text on an integer, the old JSON-text form;
// 2: a fraction on an integer; 3: a boolean on a string): Param::with_default refuses each in a
// constant expression; 4: a length beyond 65,534, which Param::length refuses.
#include "emcp/mcp/schema.h"

using emcp::mcp::Param;

constexpr Param kItem = Param::integer("");
constexpr Param kTable[] = {
    Param::string("unit").with_default("C"),
    Param::integer("samples").with_default(10),
    Param::integer("whole").with_default(4.0),
    Param::number("ratio").with_default(0.5),
    Param::number("count").with_default(2),
    Param::boolean("fast").with_default(true),
    Param::array("ids", kItem).with_default_json("[]"),
    Param::string("long").length(1, 65534),
    Param::string("open").length(2, UINT32_MAX),
#if EMCP_SCHEMA_DEFAULT_CASE == 1
    Param::integer("bad").with_default("10"),
#elif EMCP_SCHEMA_DEFAULT_CASE == 2
    Param::integer("bad").with_default(2.5),
#elif EMCP_SCHEMA_DEFAULT_CASE == 3
    Param::string("bad").with_default(false),
#elif EMCP_SCHEMA_DEFAULT_CASE == 4
    Param::string("bad").length(0, 65535),  // beyond what Param::length holds
#endif
};
int kinds() { return static_cast<int>(kTable[0].default_kind); }
