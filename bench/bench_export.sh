#!/usr/bin/env bash
# PDH-CSV export figures: GET /api/v1/export of one day of 1 s data for 50 counters
# (86 400 rows x 50 = 4.32 M values) streamed to /dev/null by curl, while perflogd's resident memory
# is sampled; then the same for one hour, to show that memory does not grow with the range. See
# bench/README.md.
#
# usage: bench/bench_export.sh          (from any directory)
#   PERFLOG_BUILD_DIR  build directory holding perflogd and bench/bench_seed (default ./build, then
#                      the build/ next to this script's parent)
#   BENCH_RUNS         timed runs per range (default 3; medians are reported)
#   BENCH_KEEP=1       keep the work directory (database, logs, samples) and print its path
#
# Figures are printed, never asserted: the exit status is non-zero only when something broke (the
# daemon died, a request failed, the header did not have 50 columns, a row count was wrong).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name=bench_export
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_find_build
runs=${BENCH_RUNS:-3}
bench_need_tools sqlite3 curl python3 awk

dir=$(mktemp -d /var/tmp/perflog-bench-export-XXXXXX)
db=$dir/perflog.db
pp='' sp=''
cleanup() {
  if [ -n "$sp" ]; then kill "$sp" 2>/dev/null || true; wait "$sp" 2>/dev/null || true; fi
  if [ -n "$pp" ]; then kill "$pp" 2>/dev/null || true; wait "$pp" 2>/dev/null || true; fi
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "work directory kept: $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

rss_kib() { awk '/^VmRSS:/ { print $2 }' "/proc/$pp/status"; }
hwm_kib() { awk '/^VmHWM:/ { print $2 }' "/proc/$pp/status"; }
median() { sort -g | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }

echo "== seeding 24 h of 1 s ticks"
"$build/bench/bench_seed" "$db" 24 | tee "$dir/seed.txt"
seed_end=$(sqlite3 "$db" 'SELECT max(t_ms) FROM ticks')

port=$(free_port)
base=http://127.0.0.1:$port
echo "== perflogd on $base"
"$build/perflogd" --db "$db" --listen "127.0.0.1:$port" --log-level warn >"$dir/perflogd.log" 2>&1 &
pp=$!
for _ in $(seq 1 100); do
  if curl -fsS "$base/api/v1/health" 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin).get("last_sample_ms") else 1)' 2>/dev/null; then break; fi
  daemon_alive
  sleep 0.2
done
curl -fsS "$base/api/v1/health" >/dev/null || die "perflogd never answered /api/v1/health"
sleep 2

# 50 columns: Processor 0, 1, _Total x 8 counters (24) + PhysicalDisk(vda) x 12 + Memory x 10 + TCP x 4.
# The daemon samples this machine meanwhile; its instances are the seeded ones on a 2-vCPU VM with vda.
pats=(--data-urlencode 'counter=\Processor(*)\*' --data-urlencode 'counter=\PhysicalDisk(vda)\*'
      --data-urlencode 'counter=\Memory\*' --data-urlencode 'counter=\TCP\*')
ncols=50

# export_url FROM_MS TO_MS: the GET URL (curl -G with the patterns).
export_get() { # FROM_MS TO_MS OUT [curl options...]
  local from=$1 to=$2 out=$3
  shift 3
  curl -sS -G "$base/api/v1/export" "${pats[@]}" --data-urlencode "from=$(awk -v t="$from" 'BEGIN { printf "%.3f", t / 1000 }')" \
    --data-urlencode "to=$(awk -v t="$to" 'BEGIN { printf "%.3f", t / 1000 }')" --data-urlencode tz=utc -o "$out" "$@"
}

# Ranges wholly in the seeded ticks: the answer comes from SQLite (the daemon's own ticks come after).
day_from=$((seed_end - 86400000 + 1)) day_to=$seed_end
hour_from=$((seed_end - 3600000 + 1)) hour_to=$seed_end

# verify RANGE_NAME FROM TO: an untimed export to a file: 50 columns, one row per tick, CRLF.
verify() {
  local name=$1 from=$2 to=$3 f=$dir/verify-$1.csv ticks rows cols code before peak
  before=$(rss_kib)
  sample_rss "$dir/rss-verify-$name.txt" &
  sp=$!
  code=$(export_get "$from" "$to" "$f" -w '%{http_code}')
  sleep 0.1
  kill "$sp" 2>/dev/null || true
  wait "$sp" 2>/dev/null || true
  sp=''
  peak=$(sort -n "$dir/rss-verify-$name.txt" | tail -1)
  peak=$(( ${peak:-0} > $(hwm_kib) ? ${peak:-0} : $(hwm_kib) ))
  FRESH[$name]="$before $peak"
  [ "$code" = 200 ] || die "$name: HTTP $code: $(head -c 300 "$f")"
  # every tick, plain or chunked (the daemon chunks the seeded day as it runs)
  ticks=$(printf '.load %s\nSELECT count(*) FROM ticks_all WHERE t_ms BETWEEN %s AND %s;\n' \
    "$build/perflog_chunk" "$from" "$to" | sqlite3 "$db")
  rows=$(($(wc -l <"$f") - 1))
  cols=$(head -1 "$f" | python3 -c 'import csv, sys; print(len(next(csv.reader(sys.stdin))) - 1)')
  echo "  $name: $rows rows, $cols columns, $(wc -c <"$f") bytes; header: $(head -1 "$f" | cut -c1-120)..."
  [ "$cols" = "$ncols" ] || die "$name: the header has $cols counter columns, not $ncols"
  [ "$rows" = "$ticks" ] || die "$name: $rows rows for $ticks ticks"
  [ "$(grep -c $'\r$' "$f")" = "$((rows + 1))" ] || die "$name: not every line ends in CRLF"
  ROWS[$name]=$rows
  rm -f "$f"
}

# sample_rss OUT: VmRSS (KiB) of perflogd every 50 ms until killed.
sample_rss() {
  while :; do
    awk '/^VmRSS:/ { print $2 }' "/proc/$pp/status" 2>/dev/null || break
    sleep 0.05
  done >"$1"
}

# timed NAME FROM TO RUN: one export to /dev/null with RSS sampling; appends a line to $dir/NAME.txt:
# seconds bytes rss_before_kib peak_sampled_kib peak_hwm_kib
timed() {
  local name=$1 from=$2 to=$3 run=$4 before peak hwm w code bytes secs
  daemon_alive
  echo 5 >"/proc/$pp/clear_refs" 2>/dev/null || true # resets VmHWM to the current RSS
  before=$(rss_kib)
  sample_rss "$dir/rss-$name-$run.txt" &
  sp=$!
  w=$(export_get "$from" "$to" /dev/null -w '%{http_code} %{size_download} %{time_total}')
  sleep 0.1
  kill "$sp" 2>/dev/null || true
  wait "$sp" 2>/dev/null || true
  sp=''
  hwm=$(hwm_kib)
  read -r code bytes secs <<<"$w"
  [ "$code" = 200 ] || die "$name run $run: HTTP $code"
  peak=$(sort -n "$dir/rss-$name-$run.txt" | tail -1)
  [ -n "$peak" ] || peak=$before
  echo "$secs $bytes $before $peak $hwm" >>"$dir/$name.txt"
  awk -v n="$name" -v r="$run" -v s="$secs" -v b="$bytes" -v rows="${ROWS[$name]}" -v c="$ncols" \
      -v rb="$before" -v pk="$peak" -v hw="$hwm" -v k="$(wc -l <"$dir/rss-$name-$run.txt")" 'BEGIN {
    printf "  %-4s run %d: %.3f s, %.2f M values/s, %.1f MB/s, RSS before %.1f MiB, peak %.1f MiB (VmHWM %.1f), growth %.2f MiB (%d samples)\n",
      n, r, s, rows * c / s / 1e6, b / s / 1e6, rb / 1024, pk / 1024, hw / 1024, ((pk > hw ? pk : hw) - rb) / 1024, k }'
}

declare -A ROWS FRESH
echo 5 >"/proc/$pp/clear_refs" 2>/dev/null || true
echo "== verifying the answers (untimed; also warms the page cache)"
verify day "$day_from" "$day_to"
verify hour "$hour_from" "$hour_to"

for name in day hour; do
  echo "== $name: $runs timed runs, ${ROWS[$name]} rows x $ncols counters = $((ROWS[$name] * ncols)) values"
  : >"$dir/$name.txt"
  for run in $(seq 1 "$runs"); do
    if [ "$name" = day ]; then timed day "$day_from" "$day_to" "$run"; else timed hour "$hour_from" "$hour_to" "$run"; fi
  done
done
daemon_alive

echo
echo "== medians of $runs runs (values = rows x $ncols; MB = 10^6 bytes; growth = max(sampled peak, VmHWM) - RSS before)"
printf '%-6s %10s %9s %12s %9s %12s %12s %12s %12s\n' range values seconds "M values/s" "MB/s" "RSS before" "peak RSS" "growth" "goal"
for name in day hour; do
  f=$dir/$name.txt
  vals=$((ROWS[$name] * ncols))
  s=$(awk '{ print $1 }' "$f" | median)
  b=$(awk '{ print $2 }' "$f" | median)
  rb=$(awk '{ print $3 }' "$f" | median)
  pk=$(awk '{ print ($4 > $5 ? $4 : $5) }' "$f" | median)
  gr=$(awk '{ print (($4 > $5 ? $4 : $5) - $3) }' "$f" | median)
  vps=$(awk -v v="$vals" '{ print v / $1 }' "$f" | median)
  mbs=$(awk '{ print $2 / $1 }' "$f" | median)
  awk -v n="$name" -v v="$vals" -v s="$s" -v vps="$vps" -v mbs="$mbs" -v rb="$rb" -v pk="$pk" -v gr="$gr" 'BEGIN {
    printf "%-6s %10d %9.3f %12.2f %9.1f %9.1f MiB %8.1f MiB %8.2f MiB %s\n", n, v, s, vps / 1e6, mbs / 1e6,
      rb / 1024, pk / 1024, gr / 1024,
      n == "day" ? sprintf("%s %s", (gr / 1024 <= 16 ? "pass" : "MISS"), (vps >= 2e6 ? "pass" : "MISS")) : "-" }'
done
read -r fb fp <<<"${FRESH[day]}"
awk -v b="$fb" -v p="$fp" -v e="$(rss_kib)" 'BEGIN {
  printf "first export of the day on the fresh daemon (to a file, untimed): RSS before %.1f MiB, peak %.1f MiB, growth %.2f MiB; RSS after all runs %.1f MiB\n",
    b / 1024, p / 1024, (p - b) / 1024, e / 1024 }'
echo "(goals for the day: RSS growth <= 16 MiB, >= 2 M values/s; body $(awk '{ print $2 }' "$dir/day.txt" | median) bytes)"
