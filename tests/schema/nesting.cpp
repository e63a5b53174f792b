// Compiles with EMCP_SCHEMA_TEST_DEPTH levels of nested Param objects: EMCP_SCHEMA_MAX_DEPTH (4)
// must build, one more must not (Param::object refuses in a constant expression).
#include "emcp/mcp/schema.h"

using emcp::mcp::Param;

constexpr Param kLeaf[] = {Param::integer("x")};
constexpr Param kL2[] = {Param::object("l1", kLeaf)};       // depth 2
constexpr Param kL3[] = {Param::object("l2", kL2)};         // depth 3
constexpr Param kL4[] = {Param::object("l3", kL3)};         // depth 4
#if EMCP_SCHEMA_TEST_DEPTH >= 5
constexpr Param kL5[] = {Param::object("l4", kL4)};         // depth 5: over the limit
int depth() { return kL5[0].depth; }
#else
int depth() { return kL4[0].depth; }
#endif
