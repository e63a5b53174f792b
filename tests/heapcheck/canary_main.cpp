// With canary.cpp, a program that calls malloc; the build strips it (test
// zero_heap_nm_detects_stripped_program: the checker must still see malloc, in the dynamic
// symbol table).
#include <stddef.h>
void* emcp_heapcheck_canary(size_t n);
int main(int argc, char**) { return emcp_heapcheck_canary(static_cast<size_t>(argc)) != nullptr ? 0 : 1; }
