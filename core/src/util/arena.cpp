#include "emcp/util/arena.h"

#include <string.h>

EMCP_NS_BEGIN

Status Arena::alloc(size_t size, size_t align, void** out) {
  *out = nullptr;
  if (align == 0 || align > 16 || (align & (align - 1)) != 0) return Status::kInvalidArgument;
  uintptr_t addr = reinterpret_cast<uintptr_t>(base_) + used_;
  size_t pad = static_cast<size_t>((align - (addr & (align - 1))) & (align - 1));
  if (pad > cap_ - used_ || size > cap_ - used_ - pad) return Status::kNoSpace;
  *out = base_ + used_ + pad;
  used_ += pad + size;
  if (used_ > high_water_) high_water_ = used_;
  return Status::kOk;
}

Status Arena::append(const void* bytes, size_t size, char** out) {
  if (size > cap_ - used_) {
    *out = nullptr;
    return Status::kNoSpace;
  }
  *out = reinterpret_cast<char*>(base_ + used_);
  if (size != 0) memcpy(*out, bytes, size);
  used_ += size;
  if (used_ > high_water_) high_water_ = used_;
  return Status::kOk;
}

EMCP_NS_END
