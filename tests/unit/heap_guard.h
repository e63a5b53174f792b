// Allocation spy for the unit tests: any malloc/new while a NoHeapScope is alive is a test
// failure. Replaces the global allocation functions of the test binary (plain builds) or hooks
// the sanitizer allocator (ASan builds).
#ifndef EMCP_TESTS_HEAP_GUARD_H
#define EMCP_TESTS_HEAP_GUARD_H

#include <stddef.h>

namespace emcp_test {

/// Number of allocations made since the program started while a NoHeapScope was active.
size_t guarded_allocations();
/// True when the spy is installed in this build (always, in plain and ASan builds).
bool heap_spy_active();

/// Counts the allocations made while it is alive.
class AllocationCounter {
 public:
  AllocationCounter();
  ~AllocationCounter();
  AllocationCounter(const AllocationCounter&) = delete;
  AllocationCounter& operator=(const AllocationCounter&) = delete;
  size_t allocations() const;

 private:
  size_t start_;
};

/// Fails the current test when anything allocates while it is alive. (A failing assertion
/// inside the scope allocates its message too: the failure then says so.)
class NoHeapScope : public AllocationCounter {
 public:
  NoHeapScope();
  ~NoHeapScope();

 private:
  int failures_;  // the current test's failures when the scope opened
};

}  // namespace emcp_test

#endif
