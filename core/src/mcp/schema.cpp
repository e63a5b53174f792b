#include "emcp/mcp/schema.h"

#include "emcp/util/assert.h"

EMCP_NS_BEGIN
namespace mcp {

void schema_nested_too_deep() { EMCP_ASSERT(false && "Param table nested deeper than EMCP_SCHEMA_MAX_DEPTH"); }
// Param tables are in flash, dozens to an image: keep the layout at 80 bytes on 32-bit targets.
static_assert(sizeof(void*) != 4 || sizeof(Param) == 80, "Param grew: see the layout note in schema.h");

void schema_length_out_of_range() { EMCP_ASSERT(false && "Param::length beyond 65,534"); }
void schema_default_mismatch() { EMCP_ASSERT(false && "Param::with_default of a type the property does not have"); }
void schema_header_not_allowed() { EMCP_ASSERT(false && "Param::in_header on a type or name x-mcp-header does not allow"); }

namespace {

const char* type_name(ParamType t) {
  switch (t) {
    case ParamType::kString: return "string";
    case ParamType::kInteger: return "integer";
    case ParamType::kNumber: return "number";
    case ParamType::kBoolean: return "boolean";
    case ParamType::kArray: return "array";
    case ParamType::kObject: return "object";
  }
  return "string";
}

void write_param_schema(json::Writer& w, const Param& p);

// int64's range as doubles: -2^63 is exact; 2^63 is the first double above INT64_MAX.
constexpr double kInt64Min = -9223372036854775808.0;
constexpr double kTwoPow63 = 9223372036854775808.0;

void write_properties(json::Writer& w, const Param* props, size_t n) {
  w.member_str("type", "object");
  w.key("properties");
  w.begin_object();
  for (size_t i = 0; i < n; ++i) {
    w.key(props[i].name);
    write_param_schema(w, props[i]);
  }
  w.end_object();
  bool any = false;
  for (size_t i = 0; i < n; ++i) any = any || props[i].is_required;
  if (any) {
    w.key("required");
    w.begin_array();
    for (size_t i = 0; i < n; ++i)
      if (props[i].is_required) w.string(props[i].name);
    w.end_array();
  }
}

// Recursion follows the schema tables: constant program data at most EMCP_SCHEMA_MAX_DEPTH
// deep (Param::object / Param::array refuse to build deeper ones), never the input.
void write_param_schema(json::Writer& w, const Param& p) {
  if (p.raw_json != nullptr) {
    w.raw(p.raw_json);
    return;
  }
  w.begin_object();
  if (p.type == ParamType::kObject) {
    write_properties(w, p.props, p.prop_count);
  } else {
    w.member_str("type", type_name(p.type));
  }
  if (p.title != nullptr) w.member_str("title", p.title);
  if (p.description != nullptr) w.member_str("description", p.description);
  if (p.header != nullptr) w.member_str("x-mcp-header", p.header);
  if (p.enum_count != 0) {
    w.key("enum");
    w.begin_array();
    for (uint16_t i = 0; i < p.enum_count; ++i) w.string(p.enums[i]);
    w.end_array();
  }
  if (p.type == ParamType::kInteger || p.type == ParamType::kNumber) {
    // JSON Schema's "integer" is any number without a fraction (1e20 too); the validator takes
    // what ToolCall::integer() can return, int64, so the schema says so: int64's bounds where
    // none is declared or the declared one lies beyond.
    const bool whole = p.type == ParamType::kInteger;
    if (p.has_min && !(whole && p.min < kInt64Min)) w.member_double("minimum", p.min);
    else if (whole) w.member_int("minimum", INT64_MIN);
    if (p.has_max && !(whole && p.max >= kTwoPow63)) w.member_double("maximum", p.max);
    else if (whole) w.member_int("maximum", INT64_MAX);
  }
  if (p.type == ParamType::kString) {
    if (p.min_len != 0) w.member_int("minLength", p.min_len);
    if (p.max_len != Param::kNoMaxLength) w.member_int("maxLength", p.max_len);
    if (p.format != nullptr) w.member_str("format", p.format);
  }
  if (p.type == ParamType::kArray) {
    if (p.min_len != 0) w.member_int("minItems", p.min_len);
    if (p.max_len != Param::kNoMaxLength) w.member_int("maxItems", p.max_len);
    if (p.items != nullptr) {
      w.key("items");
      write_param_schema(w, *p.items);
    }
  }
  if (p.default_kind != Param::DefaultKind::kNone) {
    w.key("default");
    if (p.default_kind == Param::DefaultKind::kText) w.string(p.default_text);
    else if (p.default_kind == Param::DefaultKind::kJson) w.raw(p.default_text);
    else if (p.default_kind == Param::DefaultKind::kNumber) w.number(p.default_value.number);
    else if (p.type == ParamType::kBoolean) w.boolean(p.default_value.integer != 0);
    else w.int64(p.default_value.integer);
  }
  w.end_object();
}

// A length above the property's maximum (kNoMaxLength: none).
bool beyond_max(size_t len, const Param& p) { return p.max_len != Param::kNoMaxLength && len > p.max_len; }

// Number of Unicode code points in valid UTF-8 (the reader validated it).
size_t code_points(StrView s) {
  size_t n = 0;
  for (char c : s)
    if ((static_cast<uint8_t>(c) & 0xC0) != 0x80) ++n;
  return n;
}

bool fail(SchemaError* err, const char* reason, StrView name) {
  err->reason = reason;
  err->name = name;
  return false;
}

bool check(json::Value v, const Param& p, StrView name, SchemaError* err);

bool check_object(json::Value v, const Param* props, size_t n, SchemaError* err) {
  for (size_t i = 0; i < n; ++i) {
    const json::Value m = v.get(props[i].name);
    if (!m.exists()) {
      if (props[i].is_required) return fail(err, "is required", props[i].name);
      continue;
    }
    if (!check(m, props[i], props[i].name, err)) return false;
  }
  return true;
}

// Recursion follows the schema tables (at most EMCP_SCHEMA_MAX_DEPTH deep), never the input.
bool check(json::Value v, const Param& p, StrView name, SchemaError* err) {
  switch (p.type) {
    case ParamType::kString: {
      if (!v.is_string()) return fail(err, "must be a string", name);
      if (p.raw_json != nullptr) return true;
      const StrView s = v.as_string().value();
      if (p.enum_count != 0) {
        bool found = false;
        for (uint16_t i = 0; i < p.enum_count && !found; ++i) found = s.equals(p.enums[i]);
        if (!found) return fail(err, "must be one of the allowed values", name);
      }
      // A string has at most as many code points as bytes and at least a quarter as many (UTF-8's
      // longest sequence is 4 bytes): counting them is needed only when its bytes do not
      // already settle both bounds (most strings: no minimum, fewer bytes than the maximum).
      if ((s.size() + 3) / 4 >= p.min_len && !beyond_max(s.size(), p)) return true;
      const size_t len = code_points(s);
      if (len < p.min_len) return fail(err, "is too short", name);
      if (beyond_max(len, p)) return fail(err, "is too long", name);
      return true;
    }
    case ParamType::kInteger:
    case ParamType::kNumber: {
      if (!v.is_number()) {
        return fail(err, p.type == ParamType::kInteger ? "must be an integer" : "must be a number",
                    name);
      }
      const double d = v.as_double().value();
      if (p.type == ParamType::kInteger && !v.as_int().ok()) {
        // Beyond int64 (integral or not): outside the bounds the schema states. A double of
        // -2^63 here stands for a number below it (-2^63 itself passed as_int).
        if (d >= kTwoPow63) return fail(err, "is above the maximum", name);
        if (d <= kInt64Min) return fail(err, "is below the minimum", name);
        return fail(err, "must be an integer", name);
      }
      if (p.raw_json != nullptr) return true;
      if (p.has_min && d < p.min) return fail(err, "is below the minimum", name);
      if (p.has_max && d > p.max) return fail(err, "is above the maximum", name);
      return true;
    }
    case ParamType::kBoolean:
      return v.is_bool() || fail(err, "must be a boolean", name);
    case ParamType::kArray: {
      if (!v.is_array()) return fail(err, "must be an array", name);
      if (p.raw_json != nullptr) return true;
      if (v.size() < p.min_len) return fail(err, "has too few items", name);
      if (beyond_max(v.size(), p)) return fail(err, "has too many items", name);
      if (p.items == nullptr) return true;
      int32_t i = 0;
      for (json::Value e : v.elements()) {
        if (!check(e, *p.items, name, err)) {
          err->index = i;
          return false;
        }
        ++i;
      }
      return true;
    }
    case ParamType::kObject:
      if (!v.is_object()) return fail(err, "must be an object", name);
      if (p.raw_json != nullptr) return true;
      if (!check_object(v, p.props, p.prop_count, err)) {
        if (err->parent.empty()) err->parent = name;
        return false;
      }
      return true;
  }
  return true;
}

}  // namespace

void write_object_schema(json::Writer& w, Span<const Param> props) {
  w.begin_object();
  write_properties(w, props.data(), props.size());
  w.end_object();
}

bool validate(json::Value value, Span<const Param> props, SchemaError* err) {
  *err = SchemaError{};
  if (!value.exists()) return check_object(json::Value(), props.data(), props.size(), err);
  if (!value.is_object()) return fail(err, "must be an object", StrView());
  return check_object(value, props.data(), props.size(), err);
}

}  // namespace mcp
EMCP_NS_END
