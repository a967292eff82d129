#!/usr/bin/env bash
# HTTP API figures: throughput and latency of /api/v1/latest, /api/v1/data and /metrics
# under wrk, an export-sized read, prometheus-node-exporter's /metrics as a peer in the same run, and
# the sampler's timing while the API is loaded (from the ticks table). See bench/README.md.
#
# usage: bench/bench_http.sh            (from any directory)
#   PERFLOG_BUILD_DIR  build directory holding perflogd and bench/bench_seed (default ./build, then
#                      the build/ next to this script's parent)
#   BENCH_SECONDS      length of each wrk run (default 30)
#   BENCH_HOURS        hours of 1 s ticks seeded before the daemon starts (default 24)
#   BENCH_KEEP=1       keep the work directory (database, logs, wrk output) and print its path
#
# Figures are printed, never asserted: the exit status is 0 when a goal is missed, non-zero only when
# something broke (the daemon died, a request failed or answered an error, a tool is missing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
name=bench_http
# shellcheck source=bench/lib.sh
. "$here/lib.sh"
bench_find_build
secs=${BENCH_SECONDS:-30}
hours=${BENCH_HOURS:-24}
node_exporter=/usr/bin/prometheus-node-exporter
bench_need_tools wrk sqlite3 curl python3
[ -x "$node_exporter" ] || { echo "bench_http: $node_exporter not found (apt-get install prometheus-node-exporter)" >&2; exit 2; }

dir=$(mktemp -d /var/tmp/perflog-bench-http-XXXXXX)
db=$dir/perflog.db
pp='' np=''
cleanup() {
  if [ -n "$pp" ]; then kill "$pp" 2>/dev/null || true; wait "$pp" 2>/dev/null || true; fi
  if [ -n "$np" ]; then kill "$np" 2>/dev/null || true; wait "$np" 2>/dev/null || true; fi
  if [ "${BENCH_KEEP:-0}" = 1 ]; then echo "work directory kept: $dir"; else rm -rf "$dir"; fi
}
trap cleanup EXIT

broke=0 # set when something failed; the summary is still printed, then the exit status is 1
fail() { echo "bench_http: FAILED: $*" >&2; broke=1; }
now_ms() { date +%s%3N; }

# The summary: one line per figure (name, measured, goal, verdict), printed at the end.
summary=$dir/summary.txt
: >"$summary"
fig() { printf '%-52s %16s %12s %6s\n' "$1" "$2" "${3:--}" "${4:--}" >>"$summary"; }
# verdict VALUE MAX: pass when VALUE <= MAX, else MISS
verdict() { awk -v v="$1" -v m="$2" 'BEGIN { print (v + 0 <= m + 0) ? "pass" : "MISS" }'; }

# ---- wrk with a Lua done hook: exact numbers (latency in µs) instead of its rounded text ----
lua=$dir/report.lua
cat >"$lua" <<'EOF'
done = function(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    "WRK requests=%d duration_us=%d bytes=%d p50_us=%.1f p90_us=%.1f p99_us=%.1f max_us=%.1f " ..
    "connect=%d read=%d write=%d status=%d timeout=%d\n",
    summary.requests, summary.duration, summary.bytes, latency:percentile(50),
    latency:percentile(90), latency:percentile(99), latency.max, e.connect, e.read, e.write,
    e.status, e.timeout))
end
EOF

declare -A RPS P50 P99 WSTART WEND
# run_wrk NAME CONNECTIONS URL: fills RPS/P50/P99 (ms) and the window WSTART/WEND (ms) of NAME.
run_wrk() {
  local name=$1 conns=$2 url=$3 threads=2 out=$dir/wrk-$1.txt line
  if [ "$conns" -lt 2 ]; then threads=1; fi # wrk needs a connection per thread
  WSTART[$name]=$(now_ms)
  # --timeout 10s: a slow answer is a latency figure, not a socket error (wrk's default is 2 s)
  wrk -t"$threads" -c"$conns" -d"${secs}s" --timeout 10s --latency -s "$lua" "$url" >"$out" 2>&1 || fail "$name: wrk exited $?"
  WEND[$name]=$(now_ms)
  line=$(grep '^WRK ' "$out" || true)
  [ -n "$line" ] || { fail "$name: no figures from wrk:$(echo; cat "$out")"; RPS[$name]=0 P50[$name]=0 P99[$name]=0; return; }
  eval "$(echo "${line#WRK }" | tr ' ' '\n' | sed 's/^/local w_/')"
  # shellcheck disable=SC2154 # the w_* variables come from the eval above
  {
    RPS[$name]=$(awk -v n="$w_requests" -v d="$w_duration_us" 'BEGIN { printf "%.1f", n / (d / 1e6) }')
    P50[$name]=$(awk -v x="$w_p50_us" 'BEGIN { printf "%.2f", x / 1000 }')
    P99[$name]=$(awk -v x="$w_p99_us" 'BEGIN { printf "%.2f", x / 1000 }')
    printf '  %-14s %6d requests in %5.1f s: %9s req/s, p50 %7s ms, p99 %7s ms, max %.1f ms, %d bytes\n' \
      "$name" "$w_requests" "$(awk -v d="$w_duration_us" 'BEGIN { print d / 1e6 }')" "${RPS[$name]}" \
      "${P50[$name]}" "${P99[$name]}" "$(awk -v x="$w_max_us" 'BEGIN { print x / 1000 }')" "$w_bytes"
    if [ $((w_connect + w_read + w_write + w_status + w_timeout)) -gt 0 ]; then
      fail "$name: errors: connect $w_connect, read $w_read, write $w_write, timeout $w_timeout, non-2xx $w_status"
    fi
  }
}

# ---- the sampler while the API was loaded, from the ticks the daemon wrote ----
declare -A TCOUNT TMISSED TGAPS TPHASE TIVL
# jitter NAME: ticks whose t_ms falls in NAME's wrk window.
jitter() {
  local name=$1 s=${WSTART[$1]} e=${WEND[$1]} last=0 i r
  # The writer commits every 2 s: wait until the window's last second is in the file.
  for i in $(seq 1 50); do
    last=$(sqlite3 -cmd '.timeout 2000' "$db" 'SELECT coalesce(max(t_ms), 0) FROM ticks')
    [ "$last" -ge "$e" ] && break
    sleep 0.2
  done
  [ "$last" -ge "$e" ] || fail "$name: the daemon wrote no tick after the window (last t_ms $last)"
  # The tick before the window rides along, so a gap at the window's start is seen.
  r=$(sqlite3 -cmd '.timeout 2000' -separator ' ' "$db" \
    "SELECT t_ms, coalesce(interval_ms, -1), missed FROM ticks WHERE t_ms BETWEEN $((s - 2000)) AND $e ORDER BY t_ms" |
    python3 -c '
import sys
s, e = int(sys.argv[1]), int(sys.argv[2])
rows = [tuple(map(int, l.split())) for l in sys.stdin if l.strip()]
n = missed = gaps = 0
phase = ivl = 0
for i, (t, iv, m) in enumerate(rows):
    if not s <= t <= e:
        continue
    n += 1
    missed += m
    if i > 0 and abs(t - rows[i - 1][0] - 1000) > 20:
        gaps += 1
    phase = max(phase, min(t % 1000, 1000 - t % 1000))
    if iv > 0:
        ivl = max(ivl, abs(iv - 1000))
print(n, missed, gaps, phase, ivl)' "$s" "$e")
  read -r "TCOUNT[$name]" "TMISSED[$name]" "TGAPS[$name]" "TPHASE[$name]" "TIVL[$name]" <<<"$r"
  printf '  %-14s sampler in the window: %d ticks, missed %d, gaps %d, max |t_ms - whole s| %d ms, max |interval - 1000| %d ms\n' \
    "$name" "${TCOUNT[$name]}" "${TMISSED[$name]}" "${TGAPS[$name]}" "${TPHASE[$name]}" "${TIVL[$name]}"
  [ "${TCOUNT[$name]}" -gt 0 ] || fail "$name: no ticks in the window"
}

sampler_figs() { # sampler_figs NAME LABEL
  local n=$1 m
  m=$((${TMISSED[$n]} + ${TGAPS[$n]}))
  fig "$2: sampler ticks in window" "${TCOUNT[$n]}"
  fig "$2: sampler missed (missed + gaps)" "$m" 0 "$(verdict "$m" 0)"
  fig "$2: sampler jitter max |t_ms - whole s| (ms)" "${TPHASE[$n]}" "<= 5" "$(verdict "${TPHASE[$n]}" 5)"
  fig "$2: sampler jitter max |interval - 1000| (ms)" "${TIVL[$n]}" "<= 5" "$(verdict "${TIVL[$n]}" 5)"
}

# ---- set-up: a seeded database and the daemon on it ----
echo "== seeding $hours h of 1 s ticks"
"$build/bench/bench_seed" "$db" "$hours" | tee "$dir/seed.txt"
seeded=$(sqlite3 "$db" 'SELECT count(*) FROM ticks')
seed_end=$(sqlite3 "$db" 'SELECT max(t_ms) FROM ticks')

port=$(free_port)
base=http://127.0.0.1:$port
echo "== perflogd on $base"
"$build/perflogd" --db "$db" --listen "127.0.0.1:$port" --log-level warn >"$dir/perflogd.log" 2>&1 &
pp=$!
for i in $(seq 1 100); do
  if curl -fsS "$base/api/v1/health" 2>/dev/null | python3 -c '
import json, sys
sys.exit(0 if json.load(sys.stdin).get("last_sample_ms") else 1)' 2>/dev/null; then break; fi
  daemon_alive
  sleep 0.2
done
curl -fsS "$base/api/v1/health" >"$dir/health.json" || die "perflogd never answered /api/v1/health"
python3 -c 'import json,sys; h=json.load(open(sys.argv[1])); print("  health:", h["status"], "ticks", h["ticks"], h["problems"])' "$dir/health.json"
sleep 2 # a couple of ticks in the database, so the first window has a tick before it
first_daemon=$(sqlite3 -cmd '.timeout 2000' "$db" "SELECT coalesce(min(t_ms), 0) FROM ticks WHERE t_ms > $seed_end")

mem='%5CMemory%5CDirty%20Bytes'

# ---- export-sized read first, while now-120 still lies in the seeded ticks ----
echo "== export-sized read: one day of $mem at 1 s, 11 sequential requests"
now=$(date +%s)
day_url="$base/api/v1/data?counter=$mem&from=$((now - 86400 - 120))&to=$((now - 120))"
: >"$dir/day-times.txt"
for i in $(seq 1 11); do
  curl -fsS -o "$dir/day.json" -w '%{time_total} %{size_download}\n' "$day_url" >>"$dir/day-times.txt" ||
    fail "export read $i failed"
done
daemon_alive
day_med_ms=$(sort -n "$dir/day-times.txt" | awk '{ t[NR] = $1 } END { printf "%.1f", t[int((NR + 1) / 2)] * 1000 }')
day_min_ms=$(sort -n "$dir/day-times.txt" | awk 'NR == 1 { printf "%.1f", $1 * 1000 }')
day_max_ms=$(sort -n "$dir/day-times.txt" | awk 'END { printf "%.1f", $1 * 1000 }')
day_bytes=$(tail -1 "$dir/day-times.txt" | awk '{ print $2 }')
day_points=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(len(d["timestamps"]) if len(d["series"]) == 1 and len(d["series"][0]["values"]) == len(d["timestamps"]) else -1)' "$dir/day.json")
[ "$day_points" -ge 86000 ] || fail "export read: $day_points timestamps, expected >= 86000"
echo "  median $day_med_ms ms (min $day_min_ms, max $day_max_ms), $day_bytes bytes, $day_points timestamps"
fig "export 1 day (86400 pts) /api/v1/data median (ms)" "$day_med_ms" "<= 100" "$(verdict "$day_med_ms" 100)"
fig "export 1 day: response size (bytes)" "$day_bytes"
fig "export 1 day: timestamps in the answer" "$day_points" ">= 86000" "$([ "$day_points" -ge 86000 ] && echo pass || echo MISS)"

# ---- run B: one hour of one counter at 1 s, from the database ----
now=$(date +%s)
hour_to=$((now - 120))
hour_url="$base/api/v1/data?counter=$mem&from=$((now - 3600 - 120))&to=$hour_to"
curl -fsS -o "$dir/hour.json" "$hour_url" || fail "run B: the request fails"
hour_points=$(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["timestamps"]))' "$dir/hour.json")
db_only=$([ $((hour_to * 1000)) -lt "$first_daemon" ] && echo yes || echo "no (part from memory)")
echo "== run B: /api/v1/data one hour ($hour_points points, $(stat -c %s "$dir/hour.json") bytes; database only: $db_only)"
run_wrk B-c64 64 "$hour_url"
daemon_alive
run_wrk B-c1 1 "$hour_url"
daemon_alive
jitter B-c64
jitter B-c1
fig "B /api/v1/data 1 h @1 s, c64: req/s" "${RPS[B-c64]}"
fig "B c64: p99 (ms)" "${P99[B-c64]}" "<= 10" "$(verdict "${P99[B-c64]}" 10)"
fig "B c1: req/s" "${RPS[B-c1]}"
fig "B c1: p99 (ms)" "${P99[B-c1]}" "<= 10" "$(verdict "${P99[B-c1]}" 10)"
sampler_figs B-c64 "B c64"
sampler_figs B-c1 "B c1"

# ---- run A: latest values of every disk counter, from memory ----
latest_url="$base/api/v1/latest?counter=%5CPhysicalDisk(*)%5C*"
curl -fsS -o "$dir/latest.json" "$latest_url" || fail "run A: the request fails"
echo "== run A: /api/v1/latest \\PhysicalDisk(*)\\* ($(python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["values"]))' "$dir/latest.json") values, $(stat -c %s "$dir/latest.json") bytes)"
run_wrk A-c64 64 "$latest_url"
daemon_alive
jitter A-c64
fig "A /api/v1/latest PhysicalDisk(*) c64: req/s" "${RPS[A-c64]}"
fig "A c64: p50 (ms)" "${P50[A-c64]}"
fig "A c64: p99 (ms)" "${P99[A-c64]}"
sampler_figs A-c64 "A c64"

# ---- run C: /metrics of prometheus-node-exporter and of perflogd, same wrk, same run ----
nport=$(free_port)
# --web.max-requests=0: no cap on parallel scrapes (the default 40 would answer 503 to 64 clients)
"$node_exporter" --web.listen-address="127.0.0.1:$nport" --web.max-requests=0 >"$dir/node-exporter.log" 2>&1 &
np=$!
for i in $(seq 1 50); do
  curl -fsS -o /dev/null "http://127.0.0.1:$nport/metrics" 2>/dev/null && break
  kill -0 "$np" 2>/dev/null || die "prometheus-node-exporter died:$(echo; tail -5 "$dir/node-exporter.log")"
  sleep 0.2
done
node_bytes=$(curl -fsS -o /dev/null -w '%{size_download}' "http://127.0.0.1:$nport/metrics") || die "node exporter /metrics fails"
perf_bytes=$(curl -fsS -o /dev/null -w '%{size_download}' "$base/metrics") || fail "perflogd /metrics fails"
echo "== run C: /metrics, node exporter $(prometheus-node-exporter --version 2>&1 | head -1 | awk '{ print $3 }') ($node_bytes bytes) vs perflogd ($perf_bytes bytes)"
run_wrk C-node 64 "http://127.0.0.1:$nport/metrics"
kill -0 "$np" 2>/dev/null || die "prometheus-node-exporter died during its run"
kill "$np" 2>/dev/null || true
wait "$np" 2>/dev/null || true
np=
run_wrk C-perflogd 64 "$base/metrics"
daemon_alive
jitter C-perflogd
ratio=$(awk -v a="${RPS[C-perflogd]}" -v b="${RPS[C-node]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
echo "  perflogd/node-exporter req/s ratio: $ratio"
fig "C node-exporter /metrics c64: req/s" "${RPS[C-node]}"
fig "C perflogd /metrics c64: req/s" "${RPS[C-perflogd]}"
fig "C ratio perflogd/node-exporter req/s" "$ratio"
fig "C perflogd c64: p99 (ms)" "${P99[C-perflogd]}"
fig "C node-exporter c64: p99 (ms)" "${P99[C-node]}"
sampler_figs C-perflogd "C perflogd"

daemon_alive
echo
echo "== summary ($(date -u +%FT%TZ), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg); seeded $seeded ticks; wrk ${secs} s per run)"
printf '%-52s %16s %12s %6s\n' figure measured goal result
cat "$summary"
if [ "$broke" != 0 ]; then
  echo "bench_http: something failed (see above); figures may be incomplete" >&2
  exit 1
fi
