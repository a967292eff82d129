#!/usr/bin/env bash
# CPU per tick of two perflogd binaries running side by side (same counters, same window), each on
# its own SQLite file, with sysstat's sadc (-S XDISK -S SNMP 1) in the same window: all threads'
# on-CPU time from /proc/PID/task/*/schedstat after WARM seconds, over WIN seconds. Unlike
# cpu_vs_sadc.sh (one binary a run, its first minute), this sees the steady state (chunk steps from
# ~6 min on) and no drift between runs. Also prints each daemon's /api/v1/health memory at the end.
#
# With RUNS > 1 the runs alternate which binary starts first (the old one in the first run): two
# identical binaries read 20-30 % apart by start order on this VM (bench/README.md, eighth
# session), so one run, or runs in one order, cannot tell a change of that size. The summary gives
# the medians over the runs of each binary's ratio to sadc.
#
# usage: bench/cpu_side_by_side.sh OLD_PERFLOGD NEW_PERFLOGD [WARM [WIN [RUNS]]]
#        (default 360 s, 600 s, 1 run)
set -euo pipefail
old=$1 new=$2 warm=${3:-360} win=${4:-600} runs=${5:-1}
sadc=/usr/lib/sysstat/sadc
[ -x "$sadc" ] || { echo "sadc not found: apt-get install sysstat" >&2; exit 1; }
dir=$(mktemp -d /var/tmp/perflog-bench-side-XXXXXX)
po='' pn='' ps=''
trap 'kill $po $pn $ps 2>/dev/null || true; rm -rf "$dir"' EXIT

name=cpu_side_by_side
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
cpu_ns() { bench_cpu_ns "$1"; }
max_tick() { sqlite3 "$dir/$1.db" "SELECT max(id) FROM ticks"; }

start() { # which (old|new): start that binary on its own file and port
  if [ "$1" = old ]; then
    "$old" --db "$dir/old.db" --listen 127.0.0.1:9971 --log-level warn & po=$!
  else
    "$new" --db "$dir/new.db" --listen 127.0.0.1:9972 --log-level warn & pn=$!
  fi
}

: > "$dir/ratios"
for run in $(seq 1 "$runs"); do
  rm -f "$dir"/old.db* "$dir"/new.db* "$dir/sa.data"
  if [ $((run % 2)) -eq 1 ]; then first=old second=new; else first=new second=old; fi
  start $first
  start $second
  "$sadc" -S XDISK -S SNMP 1 $((warm + win + 30)) "$dir/sa.data" & ps=$!
  sleep "$warm"
  o0=$(cpu_ns $po); n0=$(cpu_ns $pn); s0=$(cpu_ns $ps)
  t0o=$(max_tick old); t0n=$(max_tick new)
  sleep "$win"
  o1=$(cpu_ns $po); n1=$(cpu_ns $pn); s1=$(cpu_ns $ps)
  t1o=$(max_tick old); t1n=$(max_tick new)
  for p in 9971 9972; do
    echo "health memory :$p $(curl -sf 127.0.0.1:$p/api/v1/health | python3 -c 'import json, sys; print(json.load(sys.stdin)["memory"])')"
  done
  kill $po $pn $ps 2>/dev/null || true
  wait $po $pn $ps 2>/dev/null || true
  po='' pn='' ps=''
  awk -v o=$((o1 - o0)) -v n=$((n1 - n0)) -v s=$((s1 - s0)) -v to=$((t1o - t0o)) -v tn=$((t1n - t0n)) \
      -v w="$win" -v warm="$warm" -v run="$run" -v first="$first" -v out="$dir/ratios" 'BEGIN {
    printf "run %d (%s started first): window %d s after %d s; ticks old %d, new %d\n", run, first, w, warm, to, tn
    printf "old %.1f us/tick, new %.1f us/tick (new/old %.3f), sadc %.1f us/sample\n", o / to / 1000, n / tn / 1000, (n / tn) / (o / to), s / w / 1000
    printf "ratio to sadc: old %.3f, new %.3f (goal <= 0.5)\n", (o / to) / (s / w), (n / tn) / (s / w)
    printf "%.4f %.4f %.4f\n", (o / to) / (s / w), (n / tn) / (s / w), (n / tn) / (o / to) >> out
  }'
done
if [ "$runs" -gt 1 ]; then
  python3 - "$dir/ratios" <<'EOF'
import statistics, sys
rows = [list(map(float, line.split())) for line in open(sys.argv[1]) if line.strip()]
old, new, rel = (statistics.median(r[i] for r in rows) for i in range(3))
print(f"medians of {len(rows)} runs, start order alternating: ratio to sadc old {old:.3f}, "
      f"new {new:.3f}; new/old {rel:.3f}")
EOF
fi
