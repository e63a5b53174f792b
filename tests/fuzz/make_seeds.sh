#!/bin/sh
# Builds the fuzz seed corpus from the MCP specification texts: every ```json block of
# shared/spec/*.txt becomes one seed file (both as written and as one compact-ish line, the
# way stdio carries it). With FIXTURES_DIR, each wire fixture's client side (its "> " lines)
# becomes one seed too: whole sessions that initialize and then use every feature.
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
fi
count=$(ls "$out" | wc -l)
echo "seed corpus: $count files in $out"
[ "$count" -gt 0 ]
