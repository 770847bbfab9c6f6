#!/usr/bin/env bash
# Regenerate docs/commands.md from the --help of every subcommand, so docs and --help stay equal.
# The text above the first "## tracekit" heading is kept.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
T=${1:-$top/build/tools/tracekit}
out=$top/docs/commands.md
head=$(awk '/^## tracekit /{exit} {print}' "$out")
{
  printf '%s\n' "$head"
  for c in sim encode convert decode dump profile coverage report; do
    printf '\n## tracekit %s\n\n```\n' "$c"
    "$T" "$c" --help 2>&1
    printf '```\n'
  done
  printf '\n## tracekit dump/decode --snapshot (Arm CoreSight)\n\n```\n'
  "$T" dump --snapshot x --help 2>&1
  printf '```\n'
} > "$out.tmp"
mv "$out.tmp" "$out"
