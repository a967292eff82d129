#!/usr/bin/env bash
# Fuzz the pure parsers of the HTTP API, of tool outputs, of the config, of /proc and /sys and of the
# run edges' cgroup files, and the JSON bodies of the POST endpoints
# (tests/fuzz) with libFuzzer for SECONDS each (default 60), JOBS targets at a time (default 2,
# the cores of a CI machine; FUZZ_JOBS overrides it). The seeds - the committed
# tests/fuzz/corpus/<target> and, for the claims, config and /proc parsers, the fixtures of the
# tests - are read only; new inputs go to a temporary directory, so the tree is not modified.
# Logs are in build-fuzz/fuzz_<target>.log. Exits non-zero if any target found a crash, a leak or
# a timeout. Needs clang and libclang-rt-14-dev (packaging/build-deps.txt).
set -euo pipefail
cd "$(dirname "$0")/.."
secs=${1:-60}
jobs=${FUZZ_JOBS:-2}
targets=(timeparse pattern query claims config proc_stat diskstats net_dev meminfo vmstat net_snmp
  netstat softirqs softnet pressure pid sysfs post_bodies request others chunk tz linkwatch)

case $secs$jobs in
'' | *[!0-9]*)
  echo "usage: [FUZZ_JOBS=N] $0 [SECONDS]" >&2
  exit 2
  ;;
esac
targets+=(cifs_stats mountstats) # the network file system clients' /proc files

# The seed directories of a target (libFuzzer reads them recursively).
seeds() {
  if [ -d "tests/fuzz/corpus/$1" ]; then
    echo "tests/fuzz/corpus/$1"
  fi
  case $1 in
  claims) echo tests/fixtures/claims ;; # the tool outputs of the claims unit test
  tz) echo /usr/share/zoneinfo/Europe ;; # TZif files of the tz database (tzdata)
  config) echo tests/fixtures/config ;;
  proc_stat | diskstats | net_dev | meminfo | vmstat | net_snmp | netstat | softirqs | softnet | pressure | sysfs | cifs_stats | mountstats)
    echo tests/fixtures/linux
    ;;
  others) echo tests/fixtures/edges ;; # the cgroup trees of the run edges' unit test
  esac
}

CC=clang cmake -S . -B build-fuzz -DPERFLOG_FUZZ=ON >/dev/null
cmake --build build-fuzz -j 2 --target "${targets[@]/#/fuzz_}"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# Reports one finished target; sets failed on a finding.
failed=0
report() {
  local t=$1 rc=$2 stats execs rate
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
}

# One process per target (-jobs/-workers are not used), at most $jobs at a time.
declare -A running=() # pid -> target
wait_one() {
  local pid rc=0
  wait -n -p pid "${!running[@]}" || rc=$?
  report "${running[$pid]}" "$rc"
  unset "running[$pid]"
}
for t in "${targets[@]}"; do
  while [ "${#running[@]}" -ge "$jobs" ]; do
    wait_one
  done
  mkdir -p "$work/$t"
  # shellcheck disable=SC2046 # seeds prints directory names without blanks
  build-fuzz/tests/fuzz/fuzz_"$t" -max_total_time="$secs" -timeout=5 -rss_limit_mb=2048 \
    -print_final_stats=1 -artifact_prefix="build-fuzz/fuzz_$t-" \
    "$work/$t" $(seeds "$t") >"build-fuzz/fuzz_$t.log" 2>&1 &
  running[$!]=$t
done
while [ "${#running[@]}" -gt 0 ]; do
  wait_one
done
exit "$failed"
