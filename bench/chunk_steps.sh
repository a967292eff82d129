#!/usr/bin/env bash
# The writer's chunk steps on a large file, for two or more builds on the same data: perflogd of the
# first build samples ROOT (a fixture tree, e.g. bench_growth's root-8: 256 CPUs, 1000 disks, 1000
# NICs) for SECONDS with the compressed tier off (retention.chunk_after_minutes 0), its file is
# copied (.backup), and then each build's bench_seed chunks a fresh copy of it (`bench_seed COPY 0
# 60`: db_maintain until nothing is left, every row older than 60 s), RUNS times, the builds
# alternating. Printed: each run's line, then per build the medians over runs of the step median,
# the longest step and the total, and whether every build's chunk tables are the same (.dump).
#
# usage: bench/chunk_steps.sh ROOT SECONDS RUNS BUILD [BUILD ...]   (e.g. /dev/shm/g/root-8 420 5)
# A SECONDS of 420 gives one 300-tick span to chunk (spans wait 60 s once they are complete).
set -euo pipefail
root=$1 secs=$2 runs=$3
shift 3
builds=("$@")
dir=$(mktemp -d /dev/shm/perflog-bench-chunk-XXXXXX)
trap 'kill $pp 2>/dev/null || true; rm -rf "$dir"' EXIT

echo '{"retention": {"chunk_after_minutes": 0}}' > "$dir/conf.json"
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"${builds[0]}/perflogd" --config "$dir/conf.json" --db "$dir/src-live.db" --root "$root" \
    --listen "127.0.0.1:$port" --log-level warn & pp=$!
sleep "$secs"
sqlite3 "$dir/src-live.db" ".backup $dir/src.db"
kill $pp
echo "source: $(sqlite3 "$dir/src.db" "SELECT count(*) FROM ticks") ticks, $(stat -c %s "$dir/src.db") bytes"

for r in $(seq "$runs"); do
    for i in "${!builds[@]}"; do
        cp "$dir/src.db" "$dir/b$i.db"
        line=$("${builds[$i]}/bench/bench_seed" "$dir/b$i.db" 0 60 | grep chunked)
        echo "run $r ${builds[$i]}: ${line#bench_seed: }"
        echo "$line" | sed -E 's/.* ([0-9.]+) s; step median ([0-9.]+) ms, p99 [0-9.]+ ms, longest ([0-9.]+) ms/\2 \3 \1/' \
            >> "$dir/b$i.txt"
        if [ "$r" = "$runs" ]; then
            sqlite3 "$dir/b$i.db" "SELECT name FROM sqlite_schema WHERE name GLOB '*_chunks' ORDER BY name" |
                while read -r t; do sqlite3 "$dir/b$i.db" ".dump $t"; done | md5sum > "$dir/b$i.md5"
        fi
    done
done

echo "| build | step median ms | longest step ms | total s |"
echo "| --- | --- | --- | --- |"
for i in "${!builds[@]}"; do
    med() { cut -d' ' -f"$1" "$dir/b$i.txt" | sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
    echo "| ${builds[$i]} | $(med 1) | $(med 2) | $(med 3) |"
done
if [ "$(cat "$dir"/b*.md5 | sort -u | wc -l)" = 1 ]; then
    echo "chunk tables: the same in every build"
else
    echo "chunk tables: DIFFERENT between builds"
fi
