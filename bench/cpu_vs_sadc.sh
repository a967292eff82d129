#!/usr/bin/env bash
# CPU time per tick: perflogd (default counters, committing to a real SQLite file) against sysstat's
# sadc (-S XDISK -S SNMP, writing its binary file), both sampling every second over the same window.
# CPU time is read from /proc/PID/task/*/schedstat (ns, all threads), before and after the window.
#
# usage: bench/cpu_vs_sadc.sh [SECONDS] [PERFLOGD]   (default 120 s, build/perflogd)
# The values per tick are counted through counter_values with $BUILD/perflog_chunk (BUILD=build by
# default) loaded: in a window past the first chunk step the view needs it.
set -euo pipefail
secs=${1:-120}
perflogd=${2:-build/perflogd}
sadc=/usr/lib/sysstat/sadc
[ -x "$sadc" ] || { echo "sadc not found: apt-get install sysstat" >&2; exit 1; }
dir=$(mktemp -d /var/tmp/perflog-bench-cpu-XXXXXX)
trap 'kill $pp $sp 2>/dev/null || true; rm -rf "$dir"' EXIT

name=cpu_vs_sadc
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
cpu_ns() { bench_cpu_ns "$1"; }

"$perflogd" --db "$dir/perflog.db" --log-level warn & pp=$!
"$sadc" -S XDISK -S SNMP 1 $((secs + ${WARMUP:-10} + 20)) "$dir/sa.data" & sp=$!
sleep "${WARMUP:-10}" # both past start-up: database created, first samples taken (WARMUP: seconds)
p0=$(cpu_ns $pp); s0=$(cpu_ns $sp)
# Ticks counted by id: in a window past ~6 min the oldest ticks move into ticks_chunks, and a
# count(*) of ticks would shrink.
t0=$(sqlite3 "$dir/perflog.db" "SELECT max(id) FROM ticks")
sleep "$secs"
p1=$(cpu_ns $pp); s1=$(cpu_ns $sp)
t1=$(sqlite3 "$dir/perflog.db" "SELECT max(id) FROM ticks")
ticks=$((t1 - t0))
[ "$ticks" -gt 0 ] || { echo "perflogd stored no ticks" >&2; exit 1; }
values=$(sqlite3 -cmd ".load ${BUILD:-build}/perflog_chunk" "$dir/perflog.db" "SELECT count(*) FROM counter_values WHERE t_ms = (SELECT max(t_ms) FROM ticks)")
awk -v p=$((p1 - p0)) -v s=$((s1 - s0)) -v n="$ticks" -v secs="$secs" -v v="$values" 'BEGIN {
  printf "window: %d s, perflogd ticks: %d, counter values per tick: %d\n", secs, n, v
  printf "perflogd: %.1f us CPU per tick\n", p / n / 1000
  printf "sadc -S XDISK -S SNMP: %.1f us CPU per sample (%d samples assumed, one per second)\n", s / secs / 1000, secs
  printf "ratio perflogd/sadc: %.2f (goal <= 0.5)\n", (p / n) / (s / secs)
}'
