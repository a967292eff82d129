#!/usr/bin/env bash
# Bytes per stored value of a perflog database, and the daemon's resident memory.
# Checkpoints the WAL (TRUNCATE) first so the main file holds everything. Raw-tier bytes come from
# SQLite's dbstat table (tables ticks, instances and obj_* without the roll-up tiers).
#
# usage: bench/storage_report.sh DB [PID]
set -euo pipefail
db=$1
sqlite3 "$db" "PRAGMA wal_checkpoint(TRUNCATE);" >/dev/null
echo "file bytes: $(stat -c %s "$db") (after checkpoint)"
sqlite3 "$db" <<'SQL'
.mode list
SELECT 'ticks stored: ' || count(*) || ', first ' || min(time_utc) || ', last ' || max(time_utc)
  FROM (SELECT strftime('%Y-%m-%dT%H:%M:%SZ', t_ms / 1000, 'unixepoch') AS time_utc FROM ticks);
WITH raw AS (SELECT sum(pgsize) AS bytes FROM dbstat
             WHERE name IN ('ticks', 'ticks_t_ms', 'instances', 'obj_processor', 'obj_disk',
                            'obj_net', 'obj_memory', 'obj_tcp')),
     vals AS (SELECT (SELECT count(*) FROM obj_processor) * 8 + (SELECT count(*) FROM obj_disk) * 11
                   + (SELECT count(*) FROM obj_net) * 10 + (SELECT count(*) FROM obj_memory) * 11
                   + (SELECT count(*) FROM obj_tcp) * 4 AS fields,
                     (SELECT count(*) FROM obj_processor) * 8 + (SELECT count(*) FROM obj_disk) * 12
                   + (SELECT count(*) FROM obj_net) * 12 + (SELECT count(*) FROM obj_memory) * 10
                   + (SELECT count(*) FROM obj_tcp) * 4 AS counters)
SELECT 'raw tier bytes: ' || bytes || ', raw field values: ' || fields || ', counter values: ' || counters
       || char(10) || 'bytes per raw field value: ' || printf('%.2f', 1.0 * bytes / fields)
       || char(10) || 'bytes per counter value (what counter_values returns): ' || printf('%.2f', 1.0 * bytes / counters)
FROM raw, vals;
SQL
if [ -n "${2:-}" ]; then
  grep -E '^(VmRSS|VmHWM)' /proc/"$2"/status
fi
