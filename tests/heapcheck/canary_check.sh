#!/bin/sh
# The zero-heap checker against a canary object, symbol by symbol.
#   canary_check.sh caught NM OBJECT NAME...  check_no_heap.sh must fail on OBJECT and list
#                                             every NAME among the forbidden symbols;
#   canary_check.sh passes NM OBJECT NAME...  OBJECT must hold every NAME (the canary does
#                                             reference them: not optimized away) and
#                                             check_no_heap.sh must pass it.
# A NAME is an extended regular expression for one whole symbol name (_Znw[mj]: either size_t).
set -u
if [ $# -lt 4 ]; then
  echo "usage: canary_check.sh caught|passes NM OBJECT NAME..." >&2
  exit 2
fi
mode=$1 nm_tool=$2 object=$3
shift 3
checker=$(dirname "$0")/check_no_heap.sh
out=$(sh "$checker" "$nm_tool" "$object" 2>&1)
status=$?
printf '%s\n' "$out"
case "$mode" in
  caught)
    if [ "$status" -ne 1 ]; then
      echo "canary_check: FAILED: the checker exited with $status; it must refuse $object (status 1)"
      exit 1
    fi
    # The checker's lines: "  FILE: [VALUE ]NAME".
    listed=$(printf '%s\n' "$out" | sed -n 's/^  .* \([^ ]*\)$/\1/p')
    missing=0
    for name in "$@"; do
      if ! printf '%s\n' "$listed" | grep -E -q -x -e "$name"; then
        echo "canary_check: FAILED: the checker did not list $name"
        missing=1
      fi
    done
    [ "$missing" -eq 0 ] || exit 1
    echo "canary_check: refused, with every one of: $*" ;;
  passes)
    symbols=$("$nm_tool" "$object" | awk '{print $NF}')
    for name in "$@"; do
      if ! printf '%s\n' "$symbols" | grep -E -q -x -e "$name"; then
        echo "canary_check: FAILED: $object holds no $name: the canary proves nothing (inlined?)"
        exit 1
      fi
    done
    if [ "$status" -ne 0 ]; then
      echo "canary_check: FAILED: the checker refused $object (status $status); it must pass it"
      exit 1
    fi
    echo "canary_check: passed, holding: $*" ;;
  *) echo "usage: canary_check.sh caught|passes NM OBJECT NAME..." >&2; exit 2 ;;
esac
