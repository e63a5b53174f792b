#include "heap_guard.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <atomic>
#include <new>

namespace {
std::atomic<int> g_armed{0};
std::atomic<size_t> g_count{0};
inline void note() {
  if (g_armed.load(std::memory_order_relaxed) > 0) g_count.fetch_add(1);
}
}  // namespace

#if defined(__SANITIZE_ADDRESS__)
#define EMCP_TEST_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define EMCP_TEST_ASAN 1
#endif
#endif

#if defined(EMCP_TEST_ASAN)
// The sanitizer owns malloc and operator new; it calls these hooks on every allocation.
#include <sanitizer/allocator_interface.h>
namespace {
void on_malloc(const volatile void*, size_t) { note(); }
void on_free(const volatile void*) {}
const int g_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
}  // namespace
#else
// Plain build: interpose the C allocator (forwarding to glibc's) and every operator new.
extern "C" {
void* __libc_malloc(size_t);
void* __libc_calloc(size_t, size_t);
void* __libc_realloc(void*, size_t);
void __libc_free(void*);
void* malloc(size_t n) {
  note();
  return __libc_malloc(n);
}
void* calloc(size_t a, size_t b) {
  note();
  return __libc_calloc(a, b);
}
void* realloc(void* p, size_t n) {
  note();
  return __libc_realloc(p, n);
}
void free(void* p) { __libc_free(p); }
}
namespace {
const int g_installed = 1;
}
// operator new forwards to the counted malloc above.
void* operator new(size_t n) {
  void* p = malloc(n ? n : 1);
  if (!p) abort();
  return p;
}
void* operator new[](size_t n) { return operator new(n); }
void* operator new(size_t n, const std::nothrow_t&) noexcept { return malloc(n ? n : 1); }
void* operator new[](size_t n, const std::nothrow_t&) noexcept { return malloc(n ? n : 1); }
void operator delete(void* p) noexcept { free(p); }
void operator delete[](void* p) noexcept { free(p); }
void operator delete(void* p, size_t) noexcept { free(p); }
void operator delete[](void* p, size_t) noexcept { free(p); }
#endif


namespace emcp_test {

size_t guarded_allocations() { return g_count.load(); }
bool heap_spy_active() { return g_installed != 0; }

AllocationCounter::AllocationCounter() : start_(g_count.load()) { g_armed.fetch_add(1); }
AllocationCounter::~AllocationCounter() { g_armed.fetch_sub(1); }
size_t AllocationCounter::allocations() const { return g_count.load() - start_; }

namespace {
int test_failures() {
  const ::testing::TestInfo* t = ::testing::UnitTest::GetInstance()->current_test_info();
  if (t == nullptr) return 0;
  const ::testing::TestResult& r = *t->result();
  int n = 0;
  for (int i = 0; i < r.total_part_count(); ++i) n += r.GetTestPartResult(i).failed() ? 1 : 0;
  return n;
}
}  // namespace

NoHeapScope::NoHeapScope() : failures_(test_failures()) {}

NoHeapScope::~NoHeapScope() {
  size_t n = allocations();
  if (n == 0) return;
  if (test_failures() != failures_)
    ADD_FAILURE() << n << " heap allocation(s) inside a NoHeapScope (with the failure messages above)";
  else
    ADD_FAILURE() << n << " heap allocation(s) inside a NoHeapScope";
}

}  // namespace emcp_test
