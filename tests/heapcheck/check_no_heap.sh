#!/bin/sh
# Zero-heap proof: fails when any object in the given archives/objects/ELFs references (defines
# or needs) a heap or exception symbol. Usage: check_no_heap.sh NM FILE...
# The list covers the C allocator, C++ operator new/delete (all overloads, mangled), exception
# allocation and throwing, and libc functions that allocate behind your back.
set -eu
nm_tool=$1
shift
pattern='^(malloc|calloc|realloc|free|reallocarray|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|strdup|strndup|_Znw[mj].*|_Zna[mj].*|_Zdl.*|_Zda.*|__cxa_allocate_exception|__cxa_throw|__cxa_begin_catch|__cxa_rethrow|_Unwind_Resume|__gxx_personality_v0|_sbrk|sbrk|_malloc_r|_free_r|_calloc_r|_realloc_r|printf|sprintf|snprintf|vsnprintf|fprintf|vfprintf|puts|fputs|fwrite|fgets|strtod|strtof|fopen|fdopen|__cxa_guard_acquire)$'
status=0
for f in "$@"; do
  # Undefined and defined symbols, names only.
  # Symbol names without their version suffix (malloc@GLIBC_2.2.5 in a linked program).
  hits=$("$nm_tool" -A "$f" 2>/dev/null | awk '{print $1" "$NF}' | sed 's/@.*//' | awk -v p="$pattern" '{ if ($2 ~ p) print }' || true)
  if [ -n "$hits" ]; then
    echo "zero-heap check FAILED for $f: these objects reference forbidden symbols:" >&2
    echo "$hits" | sed 's/^/  /' >&2
    status=1
  fi
done
if [ $status -eq 0 ]; then echo "zero-heap check passed: $*"; fi
exit $status
