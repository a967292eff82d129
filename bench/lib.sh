# shellcheck shell=bash
# shellcheck disable=SC2154  # name, pp and dir are set by the sourcing script
# bench/lib.sh - what the bench/*.sh scripts share; sourced, not run. Each script sets `name`
# (for messages) first; `pp` (perflogd's pid) and `dir` (its work directory) once it starts one.

# The build directory with perflogd and bench/bench_seed: $PERFLOG_BUILD_DIR, else ./build, else
# the one beside this folder. Exits 2 when there is none.
bench_find_build() {
  local here d
  here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
  build=${PERFLOG_BUILD_DIR:-}
  if [ -z "$build" ]; then
    for d in ./build "$here/../build"; do
      if [ -x "$d/perflogd" ]; then build=$d; break; fi
    done
  fi
  if [ -z "$build" ] || [ ! -x "$build/perflogd" ] || [ ! -x "$build/bench/bench_seed" ]; then
    echo "$name: no build with perflogd and bench/bench_seed; build first or set PERFLOG_BUILD_DIR" >&2
    exit 2
  fi
  build=$(cd "$build" && pwd)
}

# Exit 2 naming the first of the given tools that is not installed.
bench_need_tools() {
  local tool
  for tool in "$@"; do
    command -v "$tool" >/dev/null || { echo "$name: $tool not found (apt-get install $tool)" >&2; exit 2; }
  done
}

die() { echo "$name: $*" >&2; exit 1; }
free_port() { python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
daemon_alive() { kill -0 "$pp" 2>/dev/null || die "perflogd died; its log:$(echo; tail -20 "$dir/perflogd.log")"; }

# The non-NULL raw cells of every object table of DB, plain and chunked (its obj_*_all views;
# EXT: perflog_chunk without .so, for the chunked half): the "values" of file bytes per value.
bench_values() { # DB EXT
  local sql
  sql=$(sqlite3 "$1" "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'obj_*'
                      AND name NOT GLOB '*_1[mh]' AND name NOT GLOB '*_chunks'" |
    while read -r t; do
      echo "SELECT $(sqlite3 "$1" "SELECT group_concat('count(' || name || ')', ' + ')
                                   FROM pragma_table_info('$t') WHERE name NOT IN ('tick', 'inst')") AS n FROM ${t}_all"
    done | paste -sd'#' | sed 's/#/ UNION ALL /g')
  printf '.load %s\nSELECT sum(n) FROM (%s);\n' "$2" "$sql" | sqlite3 "$1"
}

# DB's pages in use by kind (SQLite dbstat), in bytes per value (VALUES), one line each.
bench_bytes_by_kind() { # DB VALUES
  sqlite3 "$1" "SELECT '   ' || k || ': ' || printf('%.3f', 1.0 * sum(pgsize) / $2) || ' B/value'
                FROM (SELECT CASE WHEN name = 'sqlite_schema' THEN 'schema (the SQL of tables and views)'
                                  WHEN name GLOB 'ticks*' THEN 'ticks (plain and chunked) and their indexes'
                                  WHEN name GLOB '*_chunks*' THEN 'chunks'
                                  WHEN name GLOB '*_1[mh]' THEN 'roll-ups'
                                  WHEN name GLOB 'obj_*' THEN 'raw rows' ELSE 'other' END AS k,
                             pgsize FROM dbstat) GROUP BY k ORDER BY k"
}

# The on-CPU nanoseconds of every thread of pid $1 (/proc/PID/task/*/schedstat), summed.
bench_cpu_ns() {
  local sum=0 t ns
  for t in /proc/"$1"/task/*/schedstat; do read -r ns _ < "$t" && sum=$((sum + ns)); done
  echo $sum
}
