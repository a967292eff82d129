#!/usr/bin/env bash
# Bytes per stored value of a perflog database: the whole file over every raw value it holds, plain
# and chunked (the obj_*_all views, read with the perflog_chunk extension), and the pages by kind
# (SQLite dbstat), as bench/dense_store.sh prints them; with PID, the daemon's VmRSS/VmHWM.
# Reads a copy (sqlite3 .backup, so a running daemon's file is read whole, WAL included, and is
# not checkpointed by this script); the copy's WAL is checkpointed (TRUNCATE) before it is measured.
#
# usage: bench/storage_report.sh DB [PID]     (PERFLOG_BUILD_DIR or ./build: the extension)
set -euo pipefail
name=storage_report
# shellcheck source=bench/lib.sh
. "$(dirname "$0")/lib.sh"
bench_need_tools sqlite3 bc
bench_find_build
db=$1
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
sqlite3 "file:$db?mode=ro" ".backup '$dir/copy.db'"
sqlite3 "$dir/copy.db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
values=$(bench_values "$dir/copy.db" "$build/perflog_chunk")
bytes=$(stat -c %s "$dir/copy.db")
ticks=$(sqlite3 "$dir/copy.db" "SELECT max(id) FROM ticks")
echo "file bytes: $bytes (a copy, after checkpoint), ticks: $ticks (by id), values: $values," \
     "$(echo "scale=3; $bytes / $values" | bc) B/value"
bench_bytes_by_kind "$dir/copy.db" "$values"
if [ -n "${2:-}" ]; then
  grep -E '^(VmRSS|VmHWM)' /proc/"$2"/status
fi
