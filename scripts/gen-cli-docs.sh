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
  for c in $(sed -n 's/^    {"\([a-z]*\)", tk_cmd_.*/\1/p' "$top/tools/main.c"); do
    printf '\n## tracekit %s\n\n```\n' "$c"
    "$T" "$c" --help 2>&1
    printf '```\n'
  done
  for c in dump decode; do
    printf '\n## tracekit %s --snapshot|--trace (Arm CoreSight)\n\n```\n' "$c"
    "$T" "$c" --snapshot --help 2>&1
    printf '```\n'
  done
} > "$out.tmp"
mv "$out.tmp" "$out"
