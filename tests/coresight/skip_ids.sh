#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause
# Sources tracekit does not decode are named on stderr with their trace ID, read from the
# register their protocol keeps it in (ETMTRACEIDR for ETMv3 and PTM), and --id selects them.
#   usage: skip_ids.sh TRACEKIT TESTDATA
set -euo pipefail
T=$1
S=$2/opencsd/snapshots/TC2
[ -d "$S" ] || { echo "SKIP: $S not found"; exit 77; }
err=$(mktemp)
trap 'rm -f "$err"' EXIT

# TC2 has no ETMv4 source: exit status 1 after the skip lines.
rc=0
"$T" dump --snapshot "$S" --id 0x13 >/dev/null 2>"$err" || rc=$?
[ "$rc" = 1 ]
[ "$(grep -c skipping "$err")" = 1 ]
grep -qx "tracekit dump: skipping PTM_0 (trace ID 0x13): PTM is not decoded" "$err"

rc=0
"$T" decode --snapshot "$S" >/dev/null 2>"$err" || rc=$?
[ "$rc" = 1 ]
diff <(grep skipping "$err") - <<'END'
tracekit decode: skipping ETM_0 (trace ID 0x10): ETMv3 is not decoded
tracekit decode: skipping ETM_1 (trace ID 0x11): ETMv3 is not decoded
tracekit decode: skipping ETM_2 (trace ID 0x12): ETMv3 is not decoded
tracekit decode: skipping PTM_0 (trace ID 0x13): PTM is not decoded
tracekit decode: skipping PTM_1 (trace ID 0x14): PTM is not decoded
tracekit decode: skipping ITM_0 (trace ID 0x20): ITM is not decoded
END
echo "TC2: skipped sources named with their trace IDs"
