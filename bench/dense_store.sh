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
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
trap 'rm -rf "$dir"' EXIT

"$build/bench/bench_seed" "$dir/plain.db" "$hours" >/dev/null
cp "$dir/plain.db" "$dir/chunked.db"
"$build/bench/bench_seed" "$dir/chunked.db" 0 "$after" | grep chunked

median3() { sort -n | sed -n 2p; }

timed() { # DB SQL: seconds, the median of 3
    for _ in 1 2 3; do
        printf '.load %s\n.timer on\n%s\n' "$ext" "$2" | sqlite3 "$1" | awk '/Run Time/ {print $4}'
    done | median3
}

for kind in plain chunked; do
    db=$dir/$kind.db
    sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
    values=$(bench_values "$db" "$ext")
    bytes=$(stat -c %s "$db")
    geom=$(sqlite3 "$db" "SELECT page_size || ' B pages, ' || freelist_count || ' of them free'
                          FROM pragma_page_size, pragma_freelist_count")
    echo "== $kind, $hours h: $bytes file bytes ($geom), $values values," \
         "$(echo "scale=3; $bytes / $values" | bc) B/value"
    bench_bytes_by_kind "$db" "$values"
    mx=$(sqlite3 "$db" "SELECT max(t_ms) FROM ticks")
    q="SELECT count(*), sum(value) FROM counter_values WHERE object = 'PhysicalDisk'
       AND counter = 'Disk Write Bytes/sec'"
    echo "   counter_values by object and counter, last hour: $(timed "$db" "$q AND t_ms > $mx - 3600000;") s," \
         "all $hours h: $(timed "$db" "$q;") s"
done
