// The allocation spy must see allocations, or every "no heap" assertion is worthless.
#include <gtest/gtest.h>
#include <stdlib.h>

#include "heap_guard.h"

TEST(HeapGuard, SpyIsInstalled) { EXPECT_TRUE(emcp_test::heap_spy_active()); }

TEST(HeapGuard, SeesMallocAndNew) {
  size_t seen = 0;
  {
    emcp_test::AllocationCounter scope;
    void* volatile p = malloc(16);
    free(p);
    int* volatile q = new int(3);
    delete q;
    seen = scope.allocations();
  }
  EXPECT_EQ(seen, 2u);
}
