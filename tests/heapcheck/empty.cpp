// An object with no symbols at all (test zero_heap_nm_no_symbols: the checker must refuse to
// pass what it cannot see).
