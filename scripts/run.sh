#!/usr/bin/env bash
# Build perflogd and start it in the foreground on ./perflog.db, listening on 127.0.0.1:9931.
# Extra arguments go to perflogd (e.g. --config perflogd.json, --log-level debug).
set -euo pipefail
cd "$(dirname "$0")/.."
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null
cmake --build build -j "$(nproc)" --target perflogd perflog
exec ./build/perflogd --db ./perflog.db "$@"
