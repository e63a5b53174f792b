// Placement new and new[] (construction in storage one owns: no allocation), compiled at -O0
// (tests/heapcheck/canaries.cmake), where GCC calls them out of line: the object must hold
// them (_Znw?Pv, _Zna?Pv) and the zero-heap checker must pass it
// (zero_heap_nm_passes_placement_new_O0), as it must pass a core built without a build type.
#include <cstddef>
#include <new>

struct Cell {
  int value;
  explicit Cell(int v) : value(v) {}
};
alignas(Cell) static unsigned char storage[4 * sizeof(Cell)];

Cell* emcp_canary_placement(int v) { return new (storage) Cell(v); }
int* emcp_canary_placement_array() { return new (storage) int[4]; }
