#!/bin/sh
# optdoc_canary.sh ROOT table|other: tools/optdoc.py check on a copy of the checkout's headers
# and docs/configuration.md with one default changed in the generated table (table) or one
# other header's option left out of the text (other): the check must fail and say which (run
# through tests/expect_failure.sh).
root=$1 drift=$2
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir -p "$t/docs" "$t/core" "$t/boards/common" "$t/ports"
cp -r "$root/core/include" "$t/core/"
cp -r "$root/boards/common/include" "$t/boards/common/"
for d in "$root"/ports/*/include; do
  mkdir -p "$t/ports/$(basename "$(dirname "$d")")" && cp -r "$d" "$t/ports/$(basename "$(dirname "$d")")/"
done
case $drift in
  table) edit='s/^| `EMCP_ARENA_SIZE` | `4096` |/| `EMCP_ARENA_SIZE` | `4097` |/' ;;
  other) edit='/`EMCP_BOARD_RX_HOLD`/d' ;;
  *) echo "optdoc_canary.sh: table or other" >&2; exit 2 ;;
esac
sed "$edit" "$root/docs/configuration.md" >"$t/docs/configuration.md"
python3 "$root/tools/optdoc.py" check --root "$t"
