#!/bin/sh
# Builds the fuzz seed corpus from the MCP specification texts: every ```json block of
# shared/spec/*.txt becomes one seed file (both as written and as one compact-ish line, the
# way stdio carries it). With FIXTURES_DIR, each wire fixture's client side (its "> " lines)
# becomes one seed too: whole sessions that initialize and then use every feature; the
# stateless revision's fixture (rev-2026-07-28.jsonl, required there) also message by message
# and section by section (a comment line starts a section: errors, input rounds with their
# requestState, listens), so that a target reaches each of its requests without all before it.
# Usage: make_seeds.sh SPEC_DIR OUT_DIR [FIXTURES_DIR]
set -eu
spec=$1
out=$2
fixtures=${3:-}
rm -rf "$out"
mkdir -p "$out"
for f in "$spec"/*.txt; do
  base=$(basename "$f" .txt)
  awk -v dir="$out" -v base="$base" '
    /^```json[ \t]*$/ { n++; inblock = 1; file = sprintf("%s/%s_%03d.json", dir, base, n); next }
    /^```/ && inblock { inblock = 0; close(file); next }
    inblock { print > file }
  ' "$f"
done
# One-line variants (newlines inside JSON text are whitespace, so joining lines keeps meaning).
for s in "$out"/*.json; do
  tr '\n' ' ' < "$s" > "${s%.json}.line"
done
if [ -n "$fixtures" ]; then
  for f in "$fixtures"/*.jsonl; do
    sed -n 's/^> //p' "$f" > "$out/session_$(basename "$f" .jsonl).txt"
  done
  modern="$fixtures/rev-2026-07-28.jsonl"
  [ -f "$modern" ] || { echo "make_seeds.sh: no fixture $modern" >&2; exit 1; }
  awk -v dir="$out" '
    /^#/ { if (n > 0) { part++; n = 0 } next }
    /^> / {
      m++; n++
      f = sprintf("%s/message_rev-2026-07-28_%03d.txt", dir, m); print substr($0, 3) > f; close(f)
      f = sprintf("%s/session_rev-2026-07-28_part_%02d.txt", dir, part); print substr($0, 3) >> f; close(f)
    }
  ' "$modern"
  [ -n "$(ls "$out" | grep '^message_rev-2026-07-28_')" ] || { echo "make_seeds.sh: no messages in $modern" >&2; exit 1; }
fi
count=$(ls "$out" | wc -l)
echo "seed corpus: $count files in $out"
[ "$count" -gt 0 ]
