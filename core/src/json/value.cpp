#include "emcp/json/value.h"

#include <string.h>

#include "emcp/json/number.h"

EMCP_NS_BEGIN
namespace json {

namespace {
// A kDouble node keeps the number's decimal digits: u.s.data points at [int32 exp10][digits],
// u.s.size is the digit count, `boolean` the sign.
struct DecimalNode {
  const uint8_t* digits;
  uint32_t count;
  int32_t exp10;
};
DecimalNode decimal_node(const Node* n) {
  DecimalNode d;
  memcpy(&d.exp10, n->u.s.data, sizeof(int32_t));
  d.digits = reinterpret_cast<const uint8_t*>(n->u.s.data) + sizeof(int32_t);
  d.count = n->u.s.size;
  return d;
}
}  // namespace

const char* type_name(Type t) {
  switch (t) {
    case Type::kMissing: return "missing";
    case Type::kNull: return "null";
    case Type::kBool: return "boolean";
    case Type::kInt: return "integer";
    case Type::kDouble: return "number";
    case Type::kString: return "string";
    case Type::kArray: return "array";
    case Type::kObject: return "object";
  }
  return "unknown";
}

Result<bool> Value::as_bool() const {
  if (!node_) return Status::kNotFound;
  if (node_->type != Type::kBool) return Status::kWrongType;
  return node_->boolean;
}

Result<int64_t> Value::as_int() const {
  if (!node_) return Status::kNotFound;
  if (node_->type == Type::kInt) return node_->u.i;
  if (node_->type != Type::kDouble) return Status::kWrongType;
  // Exact, from the digits: integral when the exponent is not negative (no trailing zero
  // digits are stored), in range when D * 10^exp fits int64 with the sign.
  const DecimalNode d = decimal_node(node_);
  if (d.count == 0) return int64_t{0};           // 0.0, -0.0, 0e30: zero whatever the exponent
  if (d.exp10 < 0) return Status::kOutOfRange;  // has a fraction
  if (static_cast<int64_t>(d.count) + d.exp10 > 19) return Status::kOutOfRange;
  uint64_t u = 0;
  for (uint32_t i = 0; i < d.count; ++i) u = u * 10u + d.digits[i];
  for (int32_t i = 0; i < d.exp10; ++i) {
    if (u > UINT64_MAX / 10u) return Status::kOutOfRange;
    u *= 10u;
  }
  const uint64_t limit = static_cast<uint64_t>(INT64_MAX) + (node_->boolean ? 1u : 0u);
  if (u > limit) return Status::kOutOfRange;
  return node_->boolean ? static_cast<int64_t>(0u - u) : static_cast<int64_t>(u);
}

Result<double> Value::as_double() const {
  if (!node_) return Status::kNotFound;
  if (node_->type == Type::kDouble) {
    const DecimalNode d = decimal_node(node_);
    double v = 0;
    // Cannot fail: the reader checked the range before the node was made.
    (void)decimal_to_double(node_->boolean, d.digits, d.count, d.exp10, &v);
    return v;
  }
  if (node_->type == Type::kInt) return static_cast<double>(node_->u.i);
  return Status::kWrongType;
}

Result<StrView> Value::as_string() const {
  if (!node_) return Status::kNotFound;
  if (node_->type != Type::kString) return Status::kWrongType;
  return StrView(node_->u.s.data, node_->u.s.size);
}

Value Value::get(StrView key) const {
  if (!node_ || node_->type != Type::kObject) return Value();
  for (const Node* n = node_->u.c.first; n != nullptr; n = n->next)
    if (n->key_len == key.size() && StrView(n->key, n->key_len) == key) return Value(n);
  return Value();
}

Value Value::get(const char* key) const {
  if (!node_ || node_->type != Type::kObject) return Value();
  for (const Node* n = node_->u.c.first; n != nullptr; n = n->next)
    if (StrView(n->key, n->key_len).equals(key)) return Value(n);
  return Value();
}

Value Value::at(size_t i) const {
  if (!container()) return Value();
  const Node* n = node_->u.c.first;
  for (; n != nullptr && i != 0; --i) n = n->next;
  return Value(n);
}

size_t Value::size() const { return container() ? node_->u.c.count : 0; }

void write_value(Writer& w, Value v) {
  const Node* const root = v.node();
  if (root == nullptr) {
    w.null();
    return;
  }
  const Node* parents[EMCP_JSON_MAX_DEPTH];
  uint32_t depth = 0;
  const Node* n = root;
  for (;;) {
    if (depth != 0 && parents[depth - 1]->type == Type::kObject)
      w.key(StrView(n->key, n->key_len));
    bool descended = false;
    switch (n->type) {
      case Type::kObject:
      case Type::kArray:
        if (n->type == Type::kObject) w.begin_object();
        else w.begin_array();
        if (n->u.c.first != nullptr) {
          if (depth == EMCP_JSON_MAX_DEPTH) {
            w.set_error(Status::kDepthLimit);
            return;
          }
          parents[depth++] = n;
          n = n->u.c.first;
          descended = true;
        } else if (n->type == Type::kObject) {
          w.end_object();
        } else {
          w.end_array();
        }
        break;
      case Type::kString: w.string(StrView(n->u.s.data, n->u.s.size)); break;
      case Type::kInt: w.int64(n->u.i); break;
      case Type::kDouble: {
        // The digits as they came, exactly (no binary round trip).
        const DecimalNode d = decimal_node(n);
        char buf[kMaxDecimalChars];
        w.raw(StrView(buf, format_decimal(n->boolean, d.digits, d.count, d.exp10, buf)));
        break;
      }
      case Type::kBool: w.boolean(n->boolean); break;
      case Type::kNull:
      case Type::kMissing: w.null(); break;
    }
    if (descended) continue;
    // Next sibling, or close containers on the way up.
    for (;;) {
      if (depth == 0) return;
      if (n->next != nullptr) {
        n = n->next;
        break;
      }
      n = parents[--depth];
      if (n->type == Type::kObject) w.end_object();
      else w.end_array();
    }
  }
}

namespace {
// One node of copy_value(): the source's value, its bytes in the arena, no links yet.
Status copy_node(Arena& a, const Node* src, StrView key, Node** out) {
  void* mem = nullptr;
  if (a.alloc(sizeof(Node), alignof(Node), &mem) != Status::kOk) return Status::kNoSpace;
  Node* n = static_cast<Node*>(mem);
  *n = *src;
  n->next = nullptr;
  n->key = "";  // (an empty member name is a name: never a null pointer)
  n->key_len = 0;
  char* bytes = nullptr;
  if (!key.empty()) {
    if (a.append(key.data(), key.size(), &bytes) != Status::kOk) return Status::kNoSpace;
    n->key = bytes;
    n->key_len = static_cast<uint32_t>(key.size());
  }
  switch (src->type) {
    case Type::kString:
      if (src->u.s.size == 0) break;
      if (a.append(src->u.s.data, src->u.s.size, &bytes) != Status::kOk) return Status::kNoSpace;
      n->u.s.data = bytes;
      break;
    case Type::kDouble: {  // [int32 exp10][digits], aligned for the exponent
      void* digits = nullptr;
      if (a.alloc(sizeof(int32_t) + src->u.s.size, alignof(int32_t), &digits) != Status::kOk) return Status::kNoSpace;
      memcpy(digits, src->u.s.data, sizeof(int32_t) + src->u.s.size);
      n->u.s.data = static_cast<const char*>(digits);
      break;
    }
    case Type::kArray:
    case Type::kObject:
      n->u.c.first = nullptr;
      n->u.c.count = 0;
      break;
    default: break;
  }
  *out = n;
  return Status::kOk;
}
}  // namespace

Status copy_value(Arena& arena, Value v, StrView key, Node** out) {
  const Node* src = v.node();
  if (src == nullptr) return Status::kNotFound;
  const Arena::Mark start = arena.mark();
  struct Frame {
    const Node* src;  // the container being copied
    Node* dst;        // its copy
    Node* last;       // the copy's last child so far
  };
  Frame frames[EMCP_JSON_MAX_DEPTH];
  uint32_t depth = 0;
  Node* root = nullptr;
  for (;;) {
    Node* n = nullptr;
    const StrView name = depth == 0 ? key : StrView(src->key, src->key_len);
    if (copy_node(arena, src, name, &n) != Status::kOk) {
      arena.rewind(start);
      return Status::kNoSpace;
    }
    if (depth == 0) {
      root = n;
    } else {
      Frame& f = frames[depth - 1];
      if (f.last != nullptr) f.last->next = n;
      else f.dst->u.c.first = n;
      f.last = n;
      ++f.dst->u.c.count;
    }
    if ((src->type == Type::kArray || src->type == Type::kObject) && src->u.c.first != nullptr) {
      if (depth == EMCP_JSON_MAX_DEPTH) {  // (the reader never builds a deeper tree)
        arena.rewind(start);
        return Status::kDepthLimit;
      }
      frames[depth++] = Frame{src, n, nullptr};
      src = src->u.c.first;
      continue;
    }
    // The next sibling, or up until there is one; done back at the root.
    for (;;) {
      if (depth == 0) {
        *out = root;
        return Status::kOk;
      }
      if (src->next != nullptr) {
        src = src->next;
        break;
      }
      src = frames[--depth].src;
    }
  }
}

void TreeBuilder::begin() {
  depth_ = 0;
  root_ = nullptr;
  string_ = nullptr;
  key_ = nullptr;
  key_len_ = 0;
  complete_ = false;
  status_ = Status::kOk;
  dup_key_ = StrView();
}

Status TreeBuilder::add(Type t, const Reader& r, Node** out) {
  void* mem = nullptr;
  if (arena_.alloc(sizeof(Node), alignof(Node), &mem) != Status::kOk) return Status::kNoSpace;
  Node* n = static_cast<Node*>(mem);
  n->key = key_;
  n->key_len = key_len_;
  n->next = nullptr;
  n->type = t;
  n->boolean = false;
  n->u.c.first = nullptr;
  n->u.c.count = 0;
  key_ = nullptr;
  key_len_ = 0;
  switch (t) {
    case Type::kInt: n->u.i = r.int_value(); break;
    case Type::kDouble: {
      // Kept as decimal digits (converted on demand by as_double): [int32 exp10][digits].
      const Reader::Decimal d = r.decimal();
      void* digits = nullptr;
      if (arena_.alloc(sizeof(int32_t) + d.count, alignof(int32_t), &digits) != Status::kOk)
        return Status::kNoSpace;
      memcpy(digits, &d.exp10, sizeof(int32_t));
      if (d.count != 0) memcpy(static_cast<char*>(digits) + sizeof(int32_t), d.digits, d.count);
      n->boolean = d.negative;
      n->u.s.data = static_cast<const char*>(digits);
      n->u.s.size = d.count;
      break;
    }
    case Type::kString:
      n->u.s.data = "";
      n->u.s.size = 0;
      break;
    default: break;
  }
  if (depth_ == 0) {
    root_ = n;
  } else {
    Frame& f = frames_[depth_ - 1];
    if (f.container->type == Type::kObject) {
      for (const Node* s = f.container->u.c.first; s != nullptr; s = s->next) {
        if (s->key_len == n->key_len && StrView(s->key, s->key_len) == StrView(n->key, n->key_len)) {
          dup_key_ = StrView(n->key, n->key_len);
          return Status::kInvalidArgument;
        }
      }
    }
    if (f.last != nullptr) f.last->next = n;
    else f.container->u.c.first = n;
    f.last = n;
    ++f.container->u.c.count;
  }
  *out = n;
  return Status::kOk;
}

Status TreeBuilder::on_event(Event e, const Reader& r) {
  // Depth and completion are tracked even after a failure, so the caller knows when the value
  // it handed over has ended; nodes are only built while everything went well.
  const bool build = status_ == Status::kOk;
  Node* n = nullptr;
  Status s = Status::kOk;
  switch (e) {
    case Event::kKey: {
      if (!build) break;
      if (depth_ == 0 || frames_[depth_ - 1].container->type != Type::kObject) {
        s = Status::kInvalidState;
        break;
      }
      char* k = nullptr;
      s = arena_.append(r.text().data(), r.text().size(), &k);
      key_ = k;
      key_len_ = static_cast<uint32_t>(r.text().size());
      break;
    }
    case Event::kObjectBegin:
    case Event::kArrayBegin:
      if (build) {
        if (depth_ >= EMCP_JSON_MAX_DEPTH) {
          s = Status::kDepthLimit;  // a reader configured deeper than the tree can hold
        } else {
          s = add(e == Event::kObjectBegin ? Type::kObject : Type::kArray, r, &n);
          if (s == Status::kOk) frames_[depth_] = Frame{n, nullptr};
        }
      }
      ++depth_;
      break;
    case Event::kObjectEnd:
    case Event::kArrayEnd:
      if (depth_ == 0) {
        if (status_ == Status::kOk) status_ = Status::kInvalidState;
        return status_;
      }
      if (--depth_ == 0) complete_ = true;
      break;
    case Event::kStringPart:
    case Event::kString: {
      if (build) {
        if (string_ == nullptr) s = add(Type::kString, r, &string_);
        const size_t len = r.text().size();
        if (s == Status::kOk && len != 0) {
          char* p = nullptr;
          s = arena_.append(r.text().data(), len, &p);
          if (s == Status::kOk) {
            if (string_->u.s.size == 0) string_->u.s.data = p;
            string_->u.s.size += static_cast<uint32_t>(len);
          }
        }
      }
      if (e == Event::kString) {
        string_ = nullptr;
        if (depth_ == 0) complete_ = true;
      }
      break;
    }
    case Event::kInt:
    case Event::kDouble:
    case Event::kTrue:
    case Event::kFalse:
    case Event::kNull:
      if (build) {
        s = add(e == Event::kInt      ? Type::kInt
                : e == Event::kDouble ? Type::kDouble
                : e == Event::kNull   ? Type::kNull
                                      : Type::kBool,
                r, &n);
        if (s == Status::kOk && e != Event::kDouble) n->boolean = e == Event::kTrue;
      }
      if (depth_ == 0) complete_ = true;
      break;
    default:
      s = Status::kInvalidState;
      break;
  }
  if (build) status_ = s;
  return status_;
}

}  // namespace json
EMCP_NS_END
