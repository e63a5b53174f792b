// Every allocating operator new and new[] of the C++17 library, called from an object compiled
// at -O0 (tests/heapcheck/canaries.cmake): the zero-heap checker must list each of them
// (zero_heap_nm_detects_new_O0), although it lets the placement forms through. And a form of
// one's own that only looks like placement new (an extra argument after the pointer: its name
// starts as placement new's does): refused too.
#include <cstddef>
#include <new>

struct alignas(64) Wide {
  char bytes[64];
};
void* operator new(std::size_t n, void* hint, int);

void* emcp_canary_new(std::size_t n) { return ::operator new(n); }
void* emcp_canary_new_array(std::size_t n) { return ::operator new[](n); }
void* emcp_canary_new_nothrow(std::size_t n) { return ::operator new(n, std::nothrow); }
void* emcp_canary_new_array_nothrow(std::size_t n) { return ::operator new[](n, std::nothrow); }
Wide* emcp_canary_new_aligned() { return new Wide; }
Wide* emcp_canary_new_array_aligned(std::size_t n) { return new Wide[n]; }
Wide* emcp_canary_new_aligned_nothrow() { return new (std::nothrow) Wide; }
Wide* emcp_canary_new_array_aligned_nothrow(std::size_t n) { return new (std::nothrow) Wide[n]; }
void* emcp_canary_new_look_alike(void* hint) { return ::operator new(8, hint, 1); }
