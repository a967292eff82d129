#!/usr/bin/env bash
# Build perflogd and start it in the foreground on ./perflog.db, listening on 127.0.0.1:9931.
# Extra arguments go to perflogd (e.g. --config perflogd.json, --log-level debug).
set -euo pipefail
cd "$(dirname "$0")/.."
# The dashboard's charts (uPlot, pinned in web/dashboard/package-lock.json) are embedded when
# present; without npm the daemon still builds and its page says the charts are unavailable.
if command -v npm >/dev/null && [ ! -d web/dashboard/node_modules/uplot ]; then
  npm ci --prefix web/dashboard --ignore-scripts --no-audit --no-fund >/dev/null
fi
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
# perflog_chunk: the shell extension that reads the compressed tier (`.load build/perflog_chunk`).
cmake --build build -j "$(nproc)" --target perflogd perflog perflog_chunk
exec ./build/perflogd --db ./perflog.db "$@"
