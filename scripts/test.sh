#!/usr/bin/env bash
# Build perflog three times (a warnings-as-errors release build, an ASan+UBSan build and a TSan
# build) and run every test in each, then fuzz the parsers for 3 s each. Needs the packages of packaging/build-deps.txt (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."

# The layers' walls (docs/hacking.md): no #include of a layer a layer may not use.
./scripts/check-layers.sh
jobs=$(nproc)
# ctest runs the tests that do not measure (tests/CMakeLists.txt: PARALLEL_SAFE_TESTS) beside one
# another; they mostly wait for ticks, so two more than the cores. The measuring ones run alone,
# first (their COST), so that no core waits for a long test to drain before each of them.
test_jobs=$((jobs + 2))

# ---- the web dashboard's npm packages ----
# uPlot (embedded into perflogd by the build) and playwright-core (drives Debian's chromium in
# tests/integration/test_dashboard.py), exactly as web/dashboard/package-lock.json pins them. The C
# build does not need them; without them the dashboard test fails and says so.
if command -v npm >/dev/null; then
  npm ci --prefix web/dashboard --ignore-scripts --no-audit --no-fund
else
  echo "npm not found: the dashboard will build without uPlot and test_dashboard will fail" >&2
fi
# ---- end of the dashboard block ----

cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFLOG_WERROR=ON >/dev/null
cmake --build build -j "$jobs"
ctest --test-dir build --output-on-failure -j "$test_jobs"

# The Windows build: cross-built with mingw-w64 and tested under wine (docs/windows.md).
./scripts/test-windows.sh

# Tests that run in the release pass only. test_scheduler, test_prometheus_fleet, test_accuracy
# (against sar), test_reload and test_notify measure timing or agreement with a peer, which under a
# sanitizer would measure the sanitizer; test_idle_wakeups counts wake-ups per thread over 20 s
# and test_crash kills the daemon 20 times (SQLite's recovery, not our memory); test_deb checks
# the package; test_runs_writeback waits out the kernel's write-back of 300 MiB (about 50 s). The
# code paths they drive (sampler, writer, HTTP, run manager) run under the sanitizers in the other
# tests.
release_only='scheduler|prometheus_fleet|accuracy|reload|notify|idle_wakeups|crash|test_deb|runs_writeback'

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPERFLOG_WERROR=ON -DPERFLOG_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs"
# Nor the tests labelled acceptance (tests/CMakeLists.txt: the copy scenarios, heavy I/O).
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$test_jobs" -E "$release_only" -LE acceptance

cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DPERFLOG_WERROR=ON -DPERFLOG_TSAN=ON >/dev/null
cmake --build build-tsan -j "$jobs"
# test_clockstep runs in the two builds above but not here: libfaketime interposes
# pthread_cond_timedwait, which ThreadSanitizer then sees as a mutex locked twice. Nor do the
# groups of unit/test_db_chunks, unit/test_db and unit/test_rollup_acc: one thread each, nothing
# for ThreadSanitizer to find, and 428 s of this pass for the first (its last test, by three
# minutes, in the rehearsal of 2026-12-06), 61 s and 24 s for the others (2026-12-07); ASan and
# UBSan run them.
# The HTTP threads are raced under TSan by test_api and test_hostile.
TSAN_OPTIONS="halt_on_error=1" \
  ctest --test-dir build-tsan --output-on-failure -j "$test_jobs" -E "clockstep|test_db_chunks|unit/test_db\$|test_rollup_acc|$release_only" -LE acceptance

# libFuzzer on the pure parsers (tests/fuzz: time, pattern, query string, config, /proc and /sys),
# 3 s per target, two at a time (CI time; scripts/fuzz.sh N runs longer).
./scripts/fuzz.sh 3
