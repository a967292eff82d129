#!/usr/bin/env bash
# The Windows stage: cross-build SQLite, Jansson and libmicrohttpd for x86_64-w64-mingw32 from
# Debian's sources, cross-build perflogd.exe and perflog.exe with -Werror, and test them under wine
# (tests/windows/test_wine.py). Needs the packages of packaging/build-deps.txt. Everything goes to
# build-win/ (git-ignored). See docs/windows.md.
set -euo pipefail
cd "$(dirname "$0")/.."
jobs=$(nproc)
t0=$(date +%s)

./packaging/windows/build-deps.sh build-win/deps
t1=$(date +%s)
cmake -S . -B build-win/perflog -DCMAKE_TOOLCHAIN_FILE=packaging/windows/toolchain-mingw64.cmake \
    -DPERFLOG_WIN_DEPS=build-win/deps/prefix -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPERFLOG_WERROR=ON >/dev/null
cmake --build build-win/perflog -j "$jobs"
t2=$(date +%s)
PERFLOG_WIN_BIN=build-win/perflog python3 tests/windows/test_wine.py
t3=$(date +%s)
echo "windows stage: dependencies $((t1 - t0)) s, cross build $((t2 - t1)) s, wine test $((t3 - t2)) s"
