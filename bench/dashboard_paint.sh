#!/usr/bin/env bash
# The dashboard's first paint of the live view (charts drawn with their data), measured by the
# browser test in a real Debian chromium: RUNS runs (default 3) of tests/integration/test_dashboard.py,
# each printing the median of three new browser contexts; this prints every run's figure and the
# median of the runs. Needs a release build in build/ and `npm ci --prefix web/dashboard`.
set -euo pipefail
cd "$(dirname "$0")/.."
runs=${1:-3}
export PERFLOGD=${PERFLOGD:-build/perflogd} PERFLOG_SOURCE_DIR=$PWD PERFLOG_BUILD_DIR=${PERFLOG_BUILD_DIR:-$PWD/build}
vals=()
for i in $(seq "$runs"); do
  line=$(python3 tests/integration/test_dashboard.py | grep '^first paint of the live view' || true)
  echo "run $i: ${line:-no figure, see the output of the test}"
  v=$(sed -n 's/^first paint of the live view: median \([0-9.]*\) ms.*/\1/p' <<<"$line")
  [ -n "$v" ] && vals+=("$v")
done
[ "${#vals[@]}" -gt 0 ] || exit 1
printf '%s\n' "${vals[@]}" | sort -n | awk '{a[NR]=$1} END {printf "first paint, median of %d runs: %s ms\n", NR, a[int((NR+1)/2)]}'
