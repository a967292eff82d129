#!/usr/bin/env bash
# CPU of the sampler thread per tick, two perflogd binaries: on-CPU ns of the "perflog-sample"
# thread (/proc/PID/task/TID/schedstat) over the stored ticks of SECONDS (default 60), after 5 s
# of start-up. Run one after the other, old then new, ROUNDS times (default 3): side by side the
# two would tick at the same wall-clock instant (the grid is the whole second) and contend for the
# same two cores and kernel locks, which on this VM swung the ratio from +9% to +48%. Prints each
# round, the medians, and the median of the rounds' own new/old (a round's two runs are the
# closest in time, so their ratio is the least disturbed by the machine's load).
#
# ROOT (default: the machine itself) is a tree to read instead, such as bench_growth's
# /dev/shm/growth/root-8 (256 CPUs, 1 000 disks, 1 000 NICs).
#
# usage: bench/sampler_cpu_ab.sh OLD_PERFLOGD NEW_PERFLOGD [SECONDS [ROUNDS [ROOT]]]
set -euo pipefail
old=${1:?usage: $0 OLD_PERFLOGD NEW_PERFLOGD [SECONDS [ROUNDS [ROOT]]]}
new=${2:?usage: $0 OLD_PERFLOGD NEW_PERFLOGD [SECONDS [ROUNDS [ROOT]]]}
secs=${3:-60}
rounds=${4:-3}
root=${5:-}
dir=$(mktemp -d /var/tmp/perflog-bench-ab-XXXXXX)
pid=
trap '[ -n "$pid" ] && kill $pid 2>/dev/null; rm -rf "$dir"' EXIT

sampler_ns() {
  local t
  for t in /proc/$1/task/*; do
    if [ "$(cat "$t/comm")" = perflog-sample ]; then
      read -r ns _ <"$t/schedstat"
      echo "$ns"
    fi
  done
}

# One daemon for secs: prints its sampler thread's us per tick.
measure() {
  local db="$dir/$2.db" port n0 n1 t0 t1
  rm -f "$db"*
  port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  "$1" --db "$db" --listen "127.0.0.1:$port" --log-level warn ${root:+--root "$root"} &
  pid=$!
  sleep 5
  n0=$(sampler_ns $pid) t0=$(sqlite3 "$db" "SELECT count(*) FROM ticks")
  sleep "$secs"
  n1=$(sampler_ns $pid) t1=$(sqlite3 "$db" "SELECT count(*) FROM ticks")
  kill $pid
  wait $pid || true
  pid=
  awk -v ns=$((n1 - n0)) -v n=$((t1 - t0)) 'BEGIN { printf "%.1f\n", ns / n / 1000 }'
}

for ((i = 0; i < rounds; i++)); do
  o=$(measure "$old" old)
  n=$(measure "$new" new)
  echo "round $((i + 1)): old $o us per tick, new $n us per tick ($(uptime | sed 's/.*load/load/'))"
  echo "$o" >>"$dir/old"
  echo "$n" >>"$dir/new"
  awk -v a="$n" -v b="$o" 'BEGIN {print (a / b - 1) * 100}' >>"$dir/ratio"
done
median() { sort -g "$1" | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
mo=$(median "$dir/old")
mn=$(median "$dir/new")
echo "median of $rounds rounds: old $mo us, new $mn us per tick; median of the rounds' new/old: $(median "$dir/ratio" | awk '{printf "%+.1f%%", $1}')"
