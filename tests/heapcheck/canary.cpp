// Deliberately uses the heap: the zero-heap checker must reject this object
// (test zero_heap_nm_detects_malloc is expected to fail).
#include <stdlib.h>
void* emcp_heapcheck_canary(size_t n) { return malloc(n); }
