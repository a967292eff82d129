#!/usr/bin/env bash
# The compressed tier's figures: file bytes per stored value (everything: raw rows, chunks, ticks,
# roll-ups, indexes, the schema) of a bench_seed database of HOURS hours, plain and chunked by the
# writer's steps (rows older than CHUNK_AFTER_S), with the bytes by kind (SQLite dbstat: the pages
# in use); the writer's longest chunking step; and counter_values by object and counter over the
# last hour and over everything, from the stock sqlite3 shell with `.load build/perflog_chunk`
# (median of 3 runs). The file bytes are the main file's size after a TRUNCATE checkpoint (an
# empty WAL): page_count * page_size, free pages included; their count is printed beside it.
#
# usage: bench/dense_store.sh [HOURS [CHUNK_AFTER_S]]   (default 24 h, 300 s); BUILD=build
set -euo pipefail
hours=${1:-24}
after=${2:-300}
build=${BUILD:-build}
ext=$build/perflog_chunk
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT

"$build/bench/bench_seed" "$dir/plain.db" "$hours" >/dev/null
cp "$dir/plain.db" "$dir/chunked.db"
"$build/bench/bench_seed" "$dir/chunked.db" 0 "$after" | grep chunked

# non-NULL raw cells of every object, raw and chunked (obj_*_all)
values_sql() {
    sqlite3 "$1" "SELECT name FROM sqlite_master WHERE type = 'table' AND name GLOB 'obj_*'
                  AND name NOT GLOB '*_1[mh]' AND name NOT GLOB '*_chunks'" |
        while read -r t; do
            cols=$(sqlite3 "$1" "SELECT group_concat('count(' || name || ')', ' + ')
                                 FROM pragma_table_info('$t') WHERE name NOT IN ('tick', 'inst')")
            echo "SELECT $cols FROM ${t}_all"
        done | paste -sd'#' | sed 's/#/ UNION ALL /g'
}

median3() { sort -n | sed -n 2p; }

timed() { # DB SQL: seconds, the median of 3
    for _ in 1 2 3; do
        printf '.load %s\n.timer on\n%s\n' "$ext" "$2" | sqlite3 "$1" | awk '/Run Time/ {print $4}'
    done | median3
}

for kind in plain chunked; do
    db=$dir/$kind.db
    sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
    values=$(printf '.load %s\nSELECT sum(n) FROM (%s);\n' "$ext" \
        "$(values_sql "$db" | sed 's/SELECT /SELECT /g; s/ FROM /  AS n FROM /g')" | sqlite3 "$db")
    bytes=$(stat -c %s "$db")
    geom=$(sqlite3 "$db" "SELECT page_size || ' B pages, ' || freelist_count || ' of them free'
                          FROM pragma_page_size, pragma_freelist_count")
    echo "== $kind, $hours h: $bytes file bytes ($geom), $values values," \
         "$(echo "scale=3; $bytes / $values" | bc) B/value"
    sqlite3 "$db" "SELECT '   ' || k || ': ' || printf('%.3f', 1.0 * sum(pgsize) / $values) || ' B/value'
                   FROM (SELECT CASE WHEN name = 'sqlite_schema' THEN 'schema (the SQL of tables and views)'
                                     WHEN name GLOB 'ticks*' THEN 'ticks (plain and chunked) and their indexes'
                                     WHEN name GLOB '*_chunks*' THEN 'chunks'
                                     WHEN name GLOB '*_1[mh]' THEN 'roll-ups'
                                     WHEN name GLOB 'obj_*' THEN 'raw rows' ELSE 'other' END AS k,
                                pgsize FROM dbstat) GROUP BY k ORDER BY k"
    mx=$(sqlite3 "$db" "SELECT max(t_ms) FROM ticks")
    q="SELECT count(*), sum(value) FROM counter_values WHERE object = 'PhysicalDisk'
       AND counter = 'Disk Write Bytes/sec'"
    echo "   counter_values by object and counter, last hour: $(timed "$db" "$q AND t_ms > $mx - 3600000;") s," \
         "all $hours h: $(timed "$db" "$q;") s"
done
