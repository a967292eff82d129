#!/usr/bin/env bash
# Fuzz the pure parsers of the HTTP API and of the run edges (tests/fuzz) with libFuzzer for SECONDS each (default 60),
# the targets in parallel. The committed seeds of tests/fuzz/corpus/<target> are read only;
# new inputs go to a temporary directory, so the tree is not modified. Logs are in
# build-fuzz/fuzz_<target>.log. Exits non-zero if any target found a crash, a leak or a timeout.
# Needs clang and libclang-rt-14-dev (packaging/build-deps.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
targets=(timeparse pattern query others)

case $secs in
'' | *[!0-9]*)
  echo "usage: $0 [SECONDS]" >&2
  exit 2
  ;;
esac

CC=clang cmake -S . -B build-fuzz -DPERFLOG_FUZZ=ON >/dev/null
cmake --build build-fuzz -j 2 --target "${targets[@]/#/fuzz_}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

declare -A pids
for t in "${targets[@]}"; do
  mkdir -p "$work/$t"
  # -jobs/-workers are not used: one process per target, all in parallel on two cores.
  build-fuzz/tests/fuzz/fuzz_"$t" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/fuzz_$t-" \
    "$work/$t" "tests/fuzz/corpus/$t" >"build-fuzz/fuzz_$t.log" 2>&1 &
  pids[$t]=$!
done

failed=0
for t in "${targets[@]}"; do
  rc=0
  wait "${pids[$t]}" || rc=$?
  stats=$(grep -E '^#[0-9]+.*(DONE|pulse|NEW|REDUCE|INITED)' "build-fuzz/fuzz_$t.log" | tail -n 1 || true)
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "build-fuzz/fuzz_$t.log")
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "build-fuzz/fuzz_$t.log")
  if [ "$rc" -eq 0 ]; then
    echo "fuzz_$t: ok: $stats (execs ${execs:-?}, ${rate:-?} exec/s)"
  else
    failed=1
    echo "fuzz_$t: FAILED (exit $rc), see build-fuzz/fuzz_$t.log:" >&2
    grep -E 'ERROR: |SUMMARY: |Test unit written' "build-fuzz/fuzz_$t.log" >&2 || true
  fi
done
exit "$failed"
