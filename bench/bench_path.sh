#!/bin/sh
# bench_path.sh DB [COUNTER_PATH]: counter_values of one counter for the newest 1 h and 7 days of
# DB, by path and by object + instance + counter, from the stock sqlite3 shell (.timer), 3 runs
# each; prints every run and the medians of real and user seconds. Two query shapes: the rows
# themselves (SELECT t_ms, value, to /dev/null: what a user reads) and one aggregate
# (SELECT count(*), sum(value)). DB: e.g. `build/bench/bench_seed DB 168` (7 days of 1 s ticks),
# then `build/bench/bench_seed DB 0 3600` to chunk all but the newest hour. The shell loads
# $BUILD/perflog_chunk (BUILD=build by default) as the README shows, for the chunked rows.
# Needs sqlite3 and awk. Nothing is asserted.
set -eu
db=$1
ext=${BUILD:-build}/perflog_chunk
path=${2:-'\PhysicalDisk(vda)\Disk Bytes/sec'}
obj=${path#\\}; obj=${obj%%(*}
inst=${path#*(}; inst=${inst%%)*}
ctr=${path##*\\}
end=$(sqlite3 "$db" 'SELECT max(t_ms) FROM ticks')
echo "== $db: schema version $(sqlite3 "$db" 'PRAGMA user_version'), $(sqlite3 "$db" 'SELECT count(*) FROM ticks') ticks; $path; $(date -u +%FT%TZ), load $(cut -d' ' -f1 /proc/loadavg)"
for shape in rows agg; do
  for span in 3600000 604800000; do
    for by in path objc; do
      if [ $by = path ]; then w="path = '$path'"; else w="object = '$obj' AND instance = '$inst' AND counter = '$ctr'"; fi
      if [ $shape = rows ]; then sel='t_ms, value'; else sel='count(*), sum(value)'; fi
      for i in 1 2 3; do
        printf '.load %s\n.output /dev/null\n.timer on\nSELECT %s FROM counter_values WHERE %s AND t_ms BETWEEN %s AND %s;\n' \
          "$ext" "$sel" "$w" $((end - span + 1)) "$end" | sqlite3 "$db" |
          awk -v s=$shape -v sp=$((span / 3600000)) -v b=$by '/Run Time/ {print s, sp "h", b, $4, $6}'
      done
    done
  done
done | awk '{print; k = $1 " " $2 " " $3; r[k] = r[k] " " $4; u[k] = u[k] " " $5; if (!(k in seen)) {seen[k] = 1; order[++n] = k}}
  function med(l,  a, m, i, j, x) {
    m = split(l, a, " ")
    for (i = 2; i <= m; i++) { x = a[i] + 0; for (j = i - 1; j >= 1 && a[j] + 0 > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
    return a[int((m + 1) / 2)] }
  END { print "== medians (real s, user s)"; for (i = 1; i <= n; i++) printf "%-16s real %s  user %s\n", order[i], med(r[order[i]]), med(u[order[i]]) }'
