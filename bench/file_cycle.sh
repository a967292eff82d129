#!/usr/bin/env bash
# The file at 1 h over the raw tail's cycle: two perflogd binaries side by side on this machine's
# counters (each its own SQLite file), each file read with bench/storage_report.sh (bytes per
# stored value, by kind) at ticks FIRST, FIRST+STEP, ... (N points), and the writer thread's CPU
# per tick (schedstat) from 10 to 20 min. The tail of plain rows not chunked yet comes and goes
# with the chunk steps, so one point of the hour says little; the mean over the points is the
# figure.
#
# The writer's CPU figure depends on which daemon starts first as much as on the code (20-30 %
# between identical binaries on this VM): NEW_FIRST=1 starts the new one first; the file figures
# do not depend on it.
#
# usage: bench/file_cycle.sh OLD_PERFLOGD NEW_PERFLOGD [FIRST [STEP [N]]]  (3604, 30, 10: ~65 min)
set -euo pipefail
old=$1 new=$2 first=${3:-3604} step=${4:-30} n=${5:-10}
name=file_cycle
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_need_tools sqlite3 bc
here=$(dirname "$0")
dir=$(mktemp -d /var/tmp/perflog-bench-cycle-XXXXXX)
# BENCH_KEEP=1 keeps the files and the reports (the directory is printed at the end)
trap 'kill $po $pn 2>/dev/null || true; [ -n "${BENCH_KEEP:-}" ] && echo "kept $dir" || rm -rf "$dir"' EXIT

start_old() { "$old" --db "$dir/old.db" --listen 127.0.0.1:9973 --log-level warn & po=$!; }
start_new() { "$new" --db "$dir/new.db" --listen 127.0.0.1:9974 --log-level warn & pn=$!; }
if [ -n "${NEW_FIRST:-}" ]; then
  start_new; start_old; echo "new started first"
else
  start_old; start_new; echo "old started first"
fi

ticks() { # the newest tick id of daemon $1, 0 before it has one
  local t
  t=$(sqlite3 "file:$dir/$1.db?mode=ro" "SELECT max(id) FROM (SELECT max(id) AS id FROM ticks
      UNION ALL SELECT max(last_id) FROM ticks_chunks)" 2>/dev/null || true)
  echo "${t:-0}"
}
until_tick() { while [ "$(ticks "$1")" -lt "$2" ]; do sleep 1; done; }
writer_ns() { # PID: the writer thread's on-CPU ns
  for t in /proc/"$1"/task/*; do
    if [ "$(cat "$t/comm")" = perflog-write ]; then cut -d' ' -f1 "$t/schedstat"; fi
  done
}

until_tick new 600; wo0=$(writer_ns $po); wn0=$(writer_ns $pn); to0=$(ticks old); tn0=$(ticks new)
until_tick new 1200; wo1=$(writer_ns $po); wn1=$(writer_ns $pn); to1=$(ticks old); tn1=$(ticks new)
awk -v o=$((wo1 - wo0)) -v n=$((wn1 - wn0)) -v to=$((to1 - to0)) -v tn=$((tn1 - tn0)) 'BEGIN {
  printf "writer CPU per tick, 10-20 min: old %.1f us, new %.1f us\n", o / to / 1000, n / tn / 1000 }'

for ((i = 0; i < n; i++)); do
  t=$((first + i * step))
  for k in old new; do
    until_tick $k $t
    "$here"/storage_report.sh "$dir/$k.db" > "$dir/$k.report.$t"
    echo "$k at tick $t: $(head -1 "$dir/$k.report.$t")"
  done
done | tee "$dir/points"
for k in old new; do
  echo "$k by kind at tick $first:"; tail -n +2 "$dir/$k.report.$first"
  grep "^$k at" "$dir/points" | sed 's/.*, \([0-9.]*\) B\/value/\1/' |
    awk -v k=$k '{ s += $1; if (NR == 1 || $1 < lo) lo = $1; if ($1 > hi) hi = $1 }
                 END { printf "%s: mean %.3f B/value over %d points (%.3f-%.3f)\n", k, s / NR, NR, lo, hi }'
done
