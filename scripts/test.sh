#!/usr/bin/env bash
# Build perflog three times (a warnings-as-errors release build, an ASan+UBSan build and a TSan
# build) and run every test in each, then fuzz the API's parsers for 10 s each. Needs the packages of packaging/build-deps.txt (scripts/install-deps.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
# ctest runs the tests that do not measure (tests/CMakeLists.txt: PARALLEL_SAFE_TESTS) beside one
# another; they mostly wait for ticks, so one more than the cores. The measuring ones run alone.
test_jobs=$((jobs + 1))

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

cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DPERFLOG_WERROR=ON -DPERFLOG_SANITIZE=ON >/dev/null
cmake --build build-asan -j "$jobs"
# test_scheduler and test_prometheus_fleet measure timing and agreement with Prometheus, which the
# release build above does; under a sanitizer they would measure the sanitizer. Neither do the
# tests labelled acceptance (tests/CMakeLists.txt: the copy scenarios, heavy I/O). Their code paths
# (sampler, /metrics) are exercised here by the other tests.
ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$test_jobs" -E 'scheduler|prometheus_fleet' -LE acceptance

cmake -S . -B build-tsan -DCMAKE_BUILD_TYPE=Debug -DPERFLOG_WERROR=ON -DPERFLOG_TSAN=ON >/dev/null
cmake --build build-tsan -j "$jobs"
# test_clockstep runs in the two builds above but not here: libfaketime interposes
# pthread_cond_timedwait, which ThreadSanitizer then sees as a mutex locked twice.
# test_scheduler and test_prometheus_fleet neither, as under ASan; the HTTP threads are raced
# under TSan by test_api and test_hostile.
TSAN_OPTIONS="halt_on_error=1" \
  ctest --test-dir build-tsan --output-on-failure -j "$test_jobs" -E 'clockstep|scheduler|prometheus_fleet' -LE acceptance

# libFuzzer on the pure parsers (tests/fuzz: time, pattern, query string, config, /proc and /sys),
# 10 s per target, two at a time (CI time; scripts/fuzz.sh N runs longer).
./scripts/fuzz.sh 10
