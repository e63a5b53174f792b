// emcp/mcp/schema.h - JSON Schema for tool arguments, structured output and elicitation forms,
// declared once as constant data.
//
// A Param describes one property of an object schema: its JSON type, whether it is required,
// and the constraints emcp checks (enum, minimum/maximum, string length, array length). The
// same table is written as the tool's `inputSchema` in tools/list and used to validate
// `arguments` in tools/call, so the two can never disagree. Tables live in flash (constexpr).
//
// Properties the subset cannot express can carry raw JSON Schema text (`raw()`), written
// verbatim in place of the generated one; emcp then checks only the declared type.
//
// Context: pure data and pure functions; any context.
//
// Example:
//   constexpr const char* kUnits[] = {"C", "F"};
//   constexpr emcp::mcp::Param kReadParams[] = {
//       emcp::mcp::Param::string("unit", "Temperature unit").one_of(kUnits),
//       emcp::mcp::Param::integer("samples", "Readings to average").range(1, 100).required(),
//   };
#ifndef EMCP_MCP_SCHEMA_H
#define EMCP_MCP_SCHEMA_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/value.h"
#include "emcp/json/writer.h"
#include "emcp/util/span.h"

EMCP_NS_BEGIN
namespace mcp {

enum class ParamType : uint8_t { kString, kInteger, kNumber, kBoolean, kArray, kObject };

/// Called only when a Param table nests deeper than EMCP_SCHEMA_MAX_DEPTH: in a constexpr
/// table that is a compile error ("call to non-constexpr function"), by design.
void schema_nested_too_deep();
/// Called only for an x-mcp-header the spec forbids (Param::in_header): a compile error in a
/// constexpr table.
void schema_header_not_allowed();
/// Called only for a default of the wrong type (Param::with_default): a compile error in a
/// constexpr table.
void schema_default_mismatch();
/// Called only for a length beyond what Param::length() holds: a compile error in a constexpr
/// table.
void schema_length_out_of_range();

/// One property of an object schema. Build with the constexpr factories and modifiers.
struct Param {
  // Doubles first, then pointers, then the small fields: 80 bytes on 32-bit targets, no padding
  // holes (the declaration order of members is all that changes the layout).
  double min = 0;
  double max = 0;
  /// The default of an integer or boolean property (default_kind kInteger: `integer`, a boolean as
  /// 0/1) or of a number property (kNumber: `number`).
  union DefaultValue {
    int64_t integer;
    double number;
    constexpr DefaultValue() : integer(0) {}
    constexpr explicit DefaultValue(int64_t v) : integer(v) {}
    constexpr explicit DefaultValue(double v) : number(v) {}
  } default_value;
  const char* name = "";
  const char* description = nullptr;
  const char* title = nullptr;
  const char* const* enums = nullptr;  ///< allowed string values
  const char* format = nullptr;   ///< "email", "uri", "date", "date-time" (written, not checked)
  const char* default_text = nullptr;  ///< kString default (kText) or JSON text (kJson)
  const Param* items = nullptr;   ///< kArray: the element schema (one Param, its name unused)
  const Param* props = nullptr;   ///< kObject: the properties
  const char* raw_json = nullptr; ///< replaces the generated schema of this property
  const char* header = nullptr;   ///< x-mcp-header: mirrored in the HTTP header Mcp-Param-{header}
  /// max_len's value for "no maximum" (length() takes at most kNoMaxLength - 1).
  static constexpr uint16_t kNoMaxLength = UINT16_MAX;
  uint16_t min_len = 0;           ///< strings: characters (code points); arrays: items
  uint16_t max_len = kNoMaxLength;
  uint16_t enum_count = 0;
  uint16_t prop_count = 0;
  ParamType type = ParamType::kString;
  /// What "default" this property has: none, default_text as a string value, default_text as
  /// JSON text, default_value.integer or default_value.number.
  enum class DefaultKind : uint8_t { kNone, kText, kJson, kInteger, kNumber };
  DefaultKind default_kind = DefaultKind::kNone;
  bool is_required = false;
  bool has_min = false;
  bool has_max = false;
  uint8_t depth = 1;              ///< nesting: 1 for a scalar, 1 + the deepest child otherwise
  bool has_header = false;        ///< it, or a property inside it, has a header

  static constexpr Param make(const char* name, const char* description, ParamType t) {
    Param p;
    p.name = name;
    p.description = description;
    p.type = t;
    return p;
  }
  static constexpr Param string(const char* name, const char* description = nullptr) {
    return make(name, description, ParamType::kString);
  }
  static constexpr Param integer(const char* name, const char* description = nullptr) {
    return make(name, description, ParamType::kInteger);
  }
  static constexpr Param number(const char* name, const char* description = nullptr) {
    return make(name, description, ParamType::kNumber);
  }
  static constexpr Param boolean(const char* name, const char* description = nullptr) {
    return make(name, description, ParamType::kBoolean);
  }
  /// An array whose elements follow `item` (declare it as its own constexpr Param).
  static constexpr Param array(const char* name, const Param& item, const char* description = nullptr) {
    Param p = make(name, description, ParamType::kArray);
    if (item.has_header) schema_header_not_allowed();  // not reachable through array items
    p.items = &item;
    p.depth = static_cast<uint8_t>(item.depth + 1);
    if (p.depth > EMCP_SCHEMA_MAX_DEPTH) schema_nested_too_deep();
    return p;
  }
  /// A nested object with its own properties.
  template <size_t N>
  static constexpr Param object(const char* name, const Param (&props)[N],
                                const char* description = nullptr) {
    Param p = make(name, description, ParamType::kObject);
    p.props = props;
    p.prop_count = static_cast<uint16_t>(N);
    for (size_t i = 0; i < N; ++i) {
      if (props[i].depth + 1 > p.depth) p.depth = static_cast<uint8_t>(props[i].depth + 1);
      p.has_header = p.has_header || props[i].has_header;
    }
    if (p.depth > EMCP_SCHEMA_MAX_DEPTH) schema_nested_too_deep();
    return p;
  }

  constexpr Param required() const {
    Param p = *this;
    p.is_required = true;
    return p;
  }
  constexpr Param titled(const char* t) const {
    Param p = *this;
    p.title = t;
    return p;
  }
  /// Inclusive bounds for numbers and integers (integers: int64's bounds apply beyond them).
  constexpr Param range(double lo, double hi) const {
    Param p = *this;
    p.has_min = p.has_max = true;
    p.min = lo;
    p.max = hi;
    return p;
  }
  constexpr Param minimum(double lo) const {
    Param p = *this;
    p.has_min = true;
    p.min = lo;
    return p;
  }
  constexpr Param maximum(double hi) const {
    Param p = *this;
    p.has_max = true;
    p.max = hi;
    return p;
  }
  /// String length in characters, or array length in items: each at most 65,534 (a larger one
  /// does not compile in a constexpr table); `hi` UINT32_MAX: no maximum.
  constexpr Param length(uint32_t lo, uint32_t hi) const {
    if (lo >= kNoMaxLength || (hi >= kNoMaxLength && hi != UINT32_MAX) || lo > hi) schema_length_out_of_range();
    Param p = *this;
    p.min_len = static_cast<uint16_t>(lo);
    p.max_len = hi == UINT32_MAX ? kNoMaxLength : static_cast<uint16_t>(hi);
    return p;
  }
  template <size_t N>
  constexpr Param one_of(const char* const (&values)[N]) const {
    Param p = *this;
    p.enums = values;
    p.enum_count = static_cast<uint16_t>(N);
    return p;
  }
  constexpr Param with_format(const char* f) const {
    Param p = *this;
    p.format = f;
    return p;
  }
  /// The value an absent argument takes: written as the schema's "default", and what
  /// ToolCall::integer(name) / number(name) / boolean(name) / str(name) return when the client
  /// left the argument out. Typed: a string property takes text (`with_default("C")`), an
  /// integer a whole number (`with_default(10)`), a number any number, a boolean
  /// true or false; anything else does not compile in a constexpr table. An array or object
  /// property takes JSON text (with_default_json).
  constexpr Param with_default(const char* text) const {
    if (type != ParamType::kString) schema_default_mismatch();
    Param p = *this;
    p.default_kind = DefaultKind::kText;
    p.default_text = text;
    return p;
  }
  constexpr Param with_default(int v) const { return with_default(static_cast<long long>(v)); }
  constexpr Param with_default(long v) const { return with_default(static_cast<long long>(v)); }
  constexpr Param with_default(long long v) const {
    if (type == ParamType::kInteger) return with_value(DefaultKind::kInteger, DefaultValue(static_cast<int64_t>(v)));
    if (type != ParamType::kNumber || v > (1LL << 53) || v < -(1LL << 53)) schema_default_mismatch();
    return with_value(DefaultKind::kNumber, DefaultValue(static_cast<double>(v)));  // exact
  }
  constexpr Param with_default(double v) const {
    if (type == ParamType::kNumber) return with_value(DefaultKind::kNumber, DefaultValue(v));
    if (type != ParamType::kInteger || !(v >= -9223372036854775808.0 && v < 9223372036854775808.0) ||
        v != static_cast<double>(static_cast<long long>(v)))
      schema_default_mismatch();
    return with_value(DefaultKind::kInteger, DefaultValue(static_cast<int64_t>(v)));
  }
  constexpr Param with_default(bool v) const {
    if (type != ParamType::kBoolean) schema_default_mismatch();
    return with_value(DefaultKind::kInteger, DefaultValue(static_cast<int64_t>(v ? 1 : 0)));
  }
  /// A default written as JSON text, for arrays and objects: with_default_json("[1,2]").
  constexpr Param with_default_json(const char* json) const {
    if (type != ParamType::kArray && type != ParamType::kObject) schema_default_mismatch();
    Param p = *this;
    p.default_kind = DefaultKind::kJson;
    p.default_text = json;
    return p;
  }
  /// Mirrors this argument into the HTTP header `Mcp-Param-{name}` (MCP 2026-07-28 Streamable
  /// HTTP, server/tools.mdx "x-mcp-header"): written as "x-mcp-header" in the tool's
  /// inputSchema, and a request's header is checked against the argument (-32020, HTTP 400).
  /// Strings, integers and booleans only, not inside an array; `name` an HTTP token of 1 to 38
  /// characters, unique in the tool (case-insensitive: not checked here). Anything else does
  /// not compile in a constexpr table.
  constexpr Param in_header(const char* header_name) const {
    Param p = *this;
    if (type != ParamType::kString && type != ParamType::kInteger && type != ParamType::kBoolean)
      schema_header_not_allowed();
    size_t n = 0;
    for (; header_name[n] != '\0'; ++n) {
      const char c = header_name[n];
      const bool tchar = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
                         c == '!' || c == '#' || c == '$' || c == '%' || c == '&' || c == '\'' || c == '*' ||
                         c == '+' || c == '-' || c == '.' || c == '^' || c == '_' || c == '`' || c == '|' || c == '~';
      if (!tchar) schema_header_not_allowed();
    }
    if (n == 0 || n > 38) schema_header_not_allowed();
    p.header = header_name;
    p.has_header = true;
    return p;
  }
  /// Raw JSON Schema text for this property (written verbatim; only `type` is validated).
  constexpr Param raw(const char* json) const {
    Param p = *this;
    p.raw_json = json;
    return p;
  }

 private:
  constexpr Param with_value(DefaultKind kind, DefaultValue v) const {
    Param p = *this;
    p.default_kind = kind;
    p.default_value = v;
    return p;
  }
};

/// Writes an object schema {"type":"object","properties":{...},"required":[...]} for `props`.
void write_object_schema(json::Writer& w, Span<const Param> props);

/// Why arguments did not match a schema: the JSON-pointer-like path of the offending value and
/// a short reason (static text). `path` is valid as long as the arguments tree.
struct SchemaError {
  const char* reason = "";
  StrView name;       ///< the property's name ("" for the arguments object itself)
  StrView parent;     ///< the enclosing property's name for nested objects, else ""
  int32_t index = -1; ///< the element index inside an array, else -1
};

/// Checks `value` (an object; missing counts as {}) against the properties `props`: required
/// members present, types (integer accepts integral numbers within int64, as the written schema
/// states with int64's minimum/maximum where none is declared; number accepts integers), enum
/// membership, inclusive minimum/maximum, string length in code points, array length, and the
/// same for nested objects and array elements. Members not declared are allowed. Returns true
/// when valid; otherwise fills `*err`.
bool validate(json::Value value, Span<const Param> props, SchemaError* err);

class Reply;

/// The schema code a Param table brings with it: Tool::with_params / with_output point a tool
/// at kParamSchema, so firmware whose tools take no arguments links none of it (about 2 KiB on
/// Cortex-M, and the number conversions it needs).
struct ParamSchema {
  /// write_object_schema().
  void (*write)(json::Writer& w, Span<const Param> props);
  /// validate(); on failure answers `r` with -32602 naming the argument and returns false.
  bool (*check_arguments)(json::Value args, Span<const Param> props, Reply& r);
};
extern const ParamSchema kParamSchema;

}  // namespace mcp
EMCP_NS_END

#endif  // EMCP_MCP_SCHEMA_H
