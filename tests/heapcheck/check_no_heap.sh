#!/bin/sh
# Zero-heap proof: fails when any object in the given archives/objects/ELFs references (defines
# or needs) a heap or exception symbol. Usage: check_no_heap.sh NM FILE...
# The list covers the C allocator, C++ operator new/delete (all overloads, mangled), exception
# allocation and throwing, and libc functions that allocate behind your back.
# Except the standard placement forms of operator new and new[] (`new (p) T`), which allocate
# nothing (they return p): _Znwm/_Znam + Pv for a 64-bit size_t (unsigned long), _Znwj/_Znaj + Pv
# for a 32-bit one (unsigned int). GCC emits them out of line at -O0 (a Debug build, or none),
# inline otherwise; every other operator new is refused, nothrow and align_val_t ones included.
# It reads both symbol tables: the static one (objects, archives, unstripped programs) and the
# dynamic one (what a dynamically linked program imports, which stripping keeps). It fails, too,
# when it cannot see: a missing file, an nm that does not run or reports an error, or a file
# with no symbols in either table (a stripped static program proves nothing).
set -u
if [ $# -lt 2 ]; then
  echo "usage: check_no_heap.sh NM FILE..." >&2
  exit 2
fi
nm_tool=$1
shift
pattern='^(malloc|calloc|realloc|free|reallocarray|memalign|posix_memalign|aligned_alloc|valloc|pvalloc|strdup|strndup|_Znw[mj].*|_Zna[mj].*|_Zdl.*|_Zda.*|__cxa_allocate_exception|__cxa_throw|__cxa_begin_catch|__cxa_rethrow|_Unwind_Resume|__gxx_personality_v0|_sbrk|sbrk|_malloc_r|_free_r|_calloc_r|_realloc_r|printf|sprintf|snprintf|vsnprintf|fprintf|vfprintf|puts|fputs|fwrite|fgets|strtod|strtof|fopen|fdopen|__cxa_guard_acquire)$'
placement='^_Zn[wa][mj]Pv$'
err=$(mktemp)
trap 'rm -f "$err"' EXIT
status=0
for f in "$@"; do
  if [ ! -f "$f" ]; then
    echo "zero-heap check FAILED: $f: no such file" >&2
    status=1
    continue
  fi
  # "FILE: VALUE TYPE NAME" per symbol, both tables. nm says "no symbols" on stderr (status 0)
  # for a table that is absent, e.g. the dynamic table of an object or a static program.
  if ! static=$("$nm_tool" -A "$f" 2>"$err") || ! dynamic=$("$nm_tool" -D -A "$f" 2>>"$err") ||
     grep -v -E ': no symbols$' "$err" | grep -q .; then
    echo "zero-heap check FAILED: $f: '$nm_tool' could not read its symbols:" >&2
    sed 's/^/  /' "$err" >&2
    status=1
    continue
  fi
  all=$(printf '%s\n%s\n' "$static" "$dynamic" | grep -v '^$')
  if [ -z "$all" ]; then
    echo "zero-heap check FAILED: $f lists no symbols (stripped?): nothing can be checked" >&2
    status=1
    continue
  fi
  # Symbol names without their version suffix (malloc@GLIBC_2.2.5 in a linked program).
  hits=$(printf '%s\n' "$all" | awk '{print $1" "$NF}' | sed 's/@.*//' | awk -v p="$pattern" -v ok="$placement" '{ if ($2 ~ p && $2 !~ ok) print }' | sort -u)
  if [ -n "$hits" ]; then
    echo "zero-heap check FAILED for $f: these objects reference forbidden symbols:" >&2
    printf '%s\n' "$hits" | sed 's/^/  /' >&2
    status=1
  fi
done
if [ $status -eq 0 ]; then echo "zero-heap check passed: $*"; fi
exit $status
