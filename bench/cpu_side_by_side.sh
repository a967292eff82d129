#!/usr/bin/env bash
# CPU per tick of two perflogd binaries running side by side (same counters, same window), each on
# its own SQLite file, with sysstat's sadc (-S XDISK -S SNMP 1) in the same window: all threads'
# on-CPU time from /proc/PID/task/*/schedstat after WARM seconds, over WIN seconds. Unlike
# cpu_vs_sadc.sh (one binary a run, its first minute), this sees the steady state (chunk steps from
# ~6 min on) and no drift between runs. Also prints each daemon's /api/v1/health memory at the end.
#
# usage: bench/cpu_side_by_side.sh OLD_PERFLOGD NEW_PERFLOGD [WARM [WIN]]   (default 360 s, 600 s)
set -euo pipefail
old=$1 new=$2 warm=${3:-360} win=${4:-600}
sadc=/usr/lib/sysstat/sadc
[ -x "$sadc" ] || { echo "sadc not found: apt-get install sysstat" >&2; exit 1; }
dir=$(mktemp -d /var/tmp/perflog-bench-side-XXXXXX)
trap 'kill $po $pn $ps 2>/dev/null || true; rm -rf "$dir"' EXIT

name=cpu_side_by_side
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
cpu_ns() { bench_cpu_ns "$1"; }

"$old" --db "$dir/old.db" --listen 127.0.0.1:9971 --log-level warn & po=$!
"$new" --db "$dir/new.db" --listen 127.0.0.1:9972 --log-level warn & pn=$!
"$sadc" -S XDISK -S SNMP 1 $((warm + win + 30)) "$dir/sa.data" & ps=$!
sleep "$warm"
o0=$(cpu_ns $po); n0=$(cpu_ns $pn); s0=$(cpu_ns $ps)
t0o=$(sqlite3 "$dir/old.db" "SELECT max(id) FROM ticks"); t0n=$(sqlite3 "$dir/new.db" "SELECT max(id) FROM ticks")
sleep "$win"
o1=$(cpu_ns $po); n1=$(cpu_ns $pn); s1=$(cpu_ns $ps)
t1o=$(sqlite3 "$dir/old.db" "SELECT max(id) FROM ticks"); t1n=$(sqlite3 "$dir/new.db" "SELECT max(id) FROM ticks")
for p in 9971 9972; do
  echo "health memory :$p $(curl -sf 127.0.0.1:$p/api/v1/health | python3 -c 'import json, sys; print(json.load(sys.stdin)["memory"])')"
done
awk -v o=$((o1 - o0)) -v n=$((n1 - n0)) -v s=$((s1 - s0)) -v to=$((t1o - t0o)) -v tn=$((t1n - t0n)) \
    -v w="$win" -v warm="$warm" 'BEGIN {
  printf "window %d s after %d s; ticks old %d, new %d\n", w, warm, to, tn
  printf "old %.1f us/tick, new %.1f us/tick (new/old %.3f), sadc %.1f us/sample\n", o / to / 1000, n / tn / 1000, (n / tn) / (o / to), s / w / 1000
  printf "ratio to sadc: old %.3f, new %.3f (goal <= 0.5)\n", (o / to) / (s / w), (n / tn) / (s / w)
}'
