// emcp/json/value.h - a compact, read-only JSON tree in the message arena.
//
// The JSON-RPC decoder captures `params`, `result` and `error` into this tree as the reader's
// events arrive; handlers read it through Value, a two-word handle with typed accessors that
// report a missing member (kNotFound) and a wrong type (kWrongType) as statuses, never crash.
// Nodes and strings live in the arena: a Value and everything it returns stay valid until the
// arena is rewound below them (for a request: until its response is done).
//
// Cost: one Node per value (24 bytes on 32-bit targets), plus the bytes of keys and strings,
// and 4 bytes + one per digit for a number with a fraction or an exponent: such numbers stay
// decimal digits until as_double() converts them, exactly as read (as_int() is exact too).
// Member lookup is a linear scan (objects in MCP messages are small).
//
// Context: the loop that owns the arena.
//
// Example:
//   emcp::json::Value args = msg.params["arguments"];
//   emcp::Result<int64_t> count = args["count"].as_int();   // kNotFound / kWrongType / kOk
//   for (emcp::json::Value item : args["items"].elements()) { ... }
#ifndef EMCP_JSON_VALUE_H
#define EMCP_JSON_VALUE_H

#include <stddef.h>
#include <stdint.h>

#include "emcp/json/reader.h"
#include "emcp/json/writer.h"
#include "emcp/util/arena.h"
#include "emcp/util/span.h"
#include "emcp/util/status.h"

EMCP_NS_BEGIN
namespace json {

enum class Type : uint8_t { kMissing, kNull, kBool, kInt, kDouble, kString, kArray, kObject };

/// Name of a type as JSON Schema spells it ("integer", "number", "object"...; "missing").
const char* type_name(Type t);

/// One value of the tree. Treat as opaque; read it through Value.
struct Node {
  const char* key;    // member name (nullptr for array elements and roots)
  const Node* next;   // next sibling
  uint32_t key_len;
  Type type;
  bool boolean;
  struct Str {
    const char* data;
    uint32_t size;
  };
  struct Children {
    const Node* first;
    uint32_t count;
  };
  union {
    int64_t i;
    Str s;  // kString; kDouble: the decimal digits in the arena (see value.cpp)
    Children c;
  } u;
};

class Value {
 public:
  /// A missing value (what lookups of absent members return).
  constexpr Value() = default;
  constexpr explicit Value(const Node* node) : node_(node) {}

  Type type() const { return node_ ? node_->type : Type::kMissing; }
  bool exists() const { return node_ != nullptr; }
  bool is_null() const { return type() == Type::kNull; }
  bool is_bool() const { return type() == Type::kBool; }
  bool is_int() const { return type() == Type::kInt; }
  /// Int or Double.
  bool is_number() const { return type() == Type::kInt || type() == Type::kDouble; }
  bool is_string() const { return type() == Type::kString; }
  bool is_array() const { return type() == Type::kArray; }
  bool is_object() const { return type() == Type::kObject; }

  /// kNotFound when missing, kWrongType when not a boolean.
  Result<bool> as_bool() const;
  /// An Int, or a Double with an integral value inside the int64 range (JSON Schema's
  /// "integer"); kOutOfRange for a non-integral or too large Double; kWrongType otherwise.
  Result<int64_t> as_int() const;
  /// An Int (converted; exact up to 2^53) or a Double.
  Result<double> as_double() const;
  /// The UTF-8 bytes (may contain NUL).
  Result<StrView> as_string() const;

  /// Member `key` of an object; missing when absent or when this is not an object.
  Value get(StrView key) const;
  /// The same for a NUL-terminated key (no strlen: keys in tables are C strings).
  Value get(const char* key) const;
  Value operator[](StrView key) const { return get(key); }
  Value operator[](const char* key) const { return get(key); }
  /// Element `i` of an array (or member i of an object); missing when out of range.
  Value at(size_t i) const;
  /// Number of elements or members (0 for scalars and missing values).
  size_t size() const;
  /// The member name when this value is an object member, else empty.
  StrView key() const { return node_ && node_->key ? StrView(node_->key, node_->key_len) : StrView(); }

  /// Iteration over the elements of an array or the members of an object.
  class Iterator {
   public:
    explicit Iterator(const Node* n) : n_(n) {}
    Value operator*() const { return Value(n_); }
    Iterator& operator++() {
      n_ = n_->next;
      return *this;
    }
    bool operator!=(const Iterator& o) const { return n_ != o.n_; }

   private:
    const Node* n_;
  };
  struct Range {
    const Node* first;
    Iterator begin() const { return Iterator(first); }
    Iterator end() const { return Iterator(nullptr); }
  };
  /// Children in document order (empty for scalars).
  Range children() const { return Range{container() ? node_->u.c.first : nullptr}; }
  Range elements() const { return children(); }
  Range members() const { return children(); }

  const Node* node() const { return node_; }

 private:
  bool container() const {
    return node_ && (node_->type == Type::kArray || node_->type == Type::kObject);
  }
  const Node* node_ = nullptr;
};

/// Writes `v` (and everything under it) as JSON; a missing value is written as null. Not
/// recursive: it keeps EMCP_JSON_MAX_DEPTH node pointers on the stack (128 B on 32-bit targets
/// with the default); deeper trees set kDepthLimit on the writer.
void write_value(Writer& w, Value v);

/// Copies `v` and everything under it into `arena` (nodes, keys, strings, number digits), so
/// the copy outlives the arena `v` lives in. The copy's root gets member name `key` (empty:
/// none), ready to be linked into an object. Not recursive (EMCP_JSON_MAX_DEPTH frames of 12
/// bytes on the stack on 32-bit targets). kNotFound for a missing value; kNoSpace when the copy
/// does not fit, kDepthLimit for a tree deeper than that (the arena is left as it was then);
/// *out is set only on kOk.
Status copy_value(Arena& arena, Value v, StrView key, Node** out);

/// Builds a tree from reader events into an arena. The JSON-RPC decoder drives one per
/// captured member; tests and applications may use it for any JSON.
class TreeBuilder {
 public:
  explicit TreeBuilder(Arena& arena) : arena_(arena) {}

  /// Starts a new tree (the arena is not touched).
  void begin();
  /// Feeds one reader event; `r` is the reader that produced it (for text and numbers).
  /// Returns kOk or the first failure, which stays: kNoSpace (arena full: the tree is
  /// incomplete; keep feeding to stay in step, or stop), kInvalidArgument (a duplicate key in an
  /// object), kDepthLimit (nesting beyond EMCP_JSON_MAX_DEPTH, possible only with a reader
  /// configured deeper), or kInvalidState (an event that cannot occur in a valid document).
  Status on_event(Event e, const Reader& r);
  /// True when the root value is complete.
  bool complete() const { return complete_; }
  /// The root (missing until complete, and after any failure).
  Value root() const { return complete_ && status_ == Status::kOk ? Value(root_) : Value(); }
  /// kOk, or the first failure of on_event().
  Status status() const { return status_; }
  /// After kInvalidArgument: the duplicate key (valid while the arena holds it).
  StrView duplicate_key() const { return dup_key_; }

 private:
  Status add(Type t, const Reader& r, Node** out);
  struct Frame {
    Node* container;
    Node* last;
  };
  Arena& arena_;
  Frame frames_[EMCP_JSON_MAX_DEPTH];
  uint32_t depth_ = 0;
  Node* root_ = nullptr;
  Node* string_ = nullptr;  // string value being appended to
  const char* key_ = nullptr;
  uint32_t key_len_ = 0;
  bool complete_ = false;
  Status status_ = Status::kOk;
  StrView dup_key_;
};

}  // namespace json
EMCP_NS_END

#endif  // EMCP_JSON_VALUE_H
