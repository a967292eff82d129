#!/usr/bin/env bash
# Cross-build SQLite, Jansson and libmicrohttpd as static x86_64-w64-mingw32 libraries from Debian's
# own source packages (apt-get source), into a prefix that toolchain-mingw64.cmake points at.
#
#   packaging/windows/build-deps.sh [BUILD_DIR]     (default: build-win/deps, git-ignored)
#
# Nothing downloaded is committed: sources, objects and the prefix all stay under BUILD_DIR. The
# deb-src lines are written to a private apt configuration under BUILD_DIR, derived from the
# system's own deb lines (same mirror, suite and keyring), so the host's apt setup is not changed
# and no root is needed. A prefix already complete (its stamp file present) is reused.
set -euo pipefail
cd "$(dirname "$0")/../.."
top=$PWD
out=$(realpath -m "${1:-build-win/deps}")
prefix=$out/prefix
host=x86_64-w64-mingw32
jobs=$(nproc)
stamp=$prefix/.perflog-deps-1

if [ -f "$stamp" ]; then
    echo "build-deps: $prefix is complete (remove it to rebuild)"
    exit 0
fi
# The posix-threads flavour, as in toolchain-mingw64.cmake (C11 atomics and winpthreads).
cc=$(command -v $host-gcc-posix || command -v $host-gcc) ||
    { echo "build-deps: $host-gcc not found (Debian package gcc-mingw-w64-x86-64-posix)" >&2; exit 1; }
command -v dpkg-source >/dev/null || { echo "build-deps: dpkg-source not found (Debian package dpkg-dev)" >&2; exit 1; }

mkdir -p "$out/apt/lists/partial" "$out/apt/cache/archives/partial" "$out/src" "$prefix"

# A private sources list with the deb-src twin of every Debian deb entry of the host.
srclist=$out/apt/sources.list
: >"$srclist"
if [ -f /etc/apt/sources.list.d/debian.sources ]; then
    # deb822: keep URIs, Suites, Components and Signed-By of each stanza.
    awk '
        /^Types:/ { t = $0 }
        /^URIs:/ { u = $2 } /^Suites:/ { $1 = ""; s = $0 } /^Components:/ { $1 = ""; c = $0 }
        /^Signed-By:/ { k = $2 }
        /^$/ { emit() } END { emit() }
        function emit(  n, i, a) {
            if (u != "" && t ~ /deb/) {
                n = split(s, a, " ")
                for (i = 1; i <= n; i++)
                    printf "deb-src [signed-by=%s] %s %s%s\n", (k ? k : "/usr/share/keyrings/debian-archive-keyring.gpg"), u, a[i], c
            }
            t = u = s = c = k = ""
        }' /etc/apt/sources.list.d/debian.sources >>"$srclist"
fi
if [ -f /etc/apt/sources.list ]; then
    sed -n 's/^deb \(.*debian.*\)$/deb-src \1/p' /etc/apt/sources.list >>"$srclist"
fi
if [ ! -s "$srclist" ]; then
    echo "build-deps: no Debian 'deb' lines found to derive deb-src lines from" >&2
    exit 1
fi
aptopts=(-o "Dir::Etc::SourceList=$srclist" -o Dir::Etc::SourceParts=/dev/null
    -o "Dir::State::Lists=$out/apt/lists" -o "Dir::Cache=$out/apt/cache"
    -o Debug::NoLocking=1 -o "APT::Sandbox::User=$(id -un)" -q)
echo "build-deps: apt-get update (deb-src only, private lists in $out/apt)"
apt-get "${aptopts[@]}" update >"$out/apt/update.log" 2>&1 || { cat "$out/apt/update.log" >&2; exit 1; }

fetch() { # fetch PACKAGE -> prints the unpacked directory
    local pkg=$1
    (cd "$out/src" && rm -rf "$pkg"-[0-9]* && apt-get "${aptopts[@]}" source --download-only "$pkg" >/dev/null &&
        dpkg-source --no-check -x "$(ls -t "$pkg"_*.dsc | head -n1)" >/dev/null)
    ls -d "$out/src/$pkg"-[0-9]* | head -n1
}

export PKG_CONFIG_LIBDIR=$prefix/lib/pkgconfig
cross=(--host=$host --prefix="$prefix" --enable-static --disable-shared)

# SQLite: Debian ships the canonical tree. Its Makefile generates the amalgamation with host
# tools (lemon, tclsh), so that part is configured for the build machine; the one file it yields
# is platform-independent and is then compiled for the target.
echo "build-deps: sqlite3"
src=$(fetch sqlite3)
(cd "$src" && mkdir -p build-mingw && cd build-mingw &&
    ../configure --disable-tcl --disable-readline >config.log.out 2>&1 &&
    make -j"$jobs" sqlite3.c >make.log 2>&1 &&
    "$cc" -O2 -DSQLITE_THREADSAFE=1 -DSQLITE_OMIT_LOAD_EXTENSION \
        -c sqlite3.c -o sqlite3.o &&
    $host-ar rcs libsqlite3.a sqlite3.o &&
    install -D -m644 libsqlite3.a "$prefix/lib/libsqlite3.a" &&
    install -D -m644 sqlite3.h "$prefix/include/sqlite3.h" &&
    install -D -m644 sqlite3ext.h "$prefix/include/sqlite3ext.h") || { tail -n 30 "$src"/build-mingw/*.log* >&2; exit 1; }
mkdir -p "$prefix/lib/pkgconfig"
cat >"$prefix/lib/pkgconfig/sqlite3.pc" <<PC
prefix=$prefix
Name: SQLite
Description: SQL database engine (static, mingw-w64)
Version: $(sed -n 's/^#define SQLITE_VERSION *"\(.*\)"/\1/p' "$prefix/include/sqlite3.h")
Libs: -L\${prefix}/lib -lsqlite3
Cflags: -I\${prefix}/include
PC

# Jansson: its CMake build, static, with the same toolchain file as perflog.
echo "build-deps: jansson"
src=$(fetch jansson)
(cmake -S "$src" -B "$src/build-mingw" -DCMAKE_TOOLCHAIN_FILE="$top/packaging/windows/toolchain-mingw64.cmake" \
    -DPERFLOG_WIN_DEPS="$prefix" -DCMAKE_BUILD_TYPE=Release -DCMAKE_INSTALL_PREFIX="$prefix" \
    -DJANSSON_BUILD_SHARED_LIBS=OFF -DJANSSON_BUILD_DOCS=OFF -DJANSSON_EXAMPLES=OFF \
    -DJANSSON_WITHOUT_TESTS=ON >"$src/cmake.log" 2>&1 &&
    cmake --build "$src/build-mingw" -j"$jobs" >>"$src/cmake.log" 2>&1 &&
    cmake --install "$src/build-mingw" >>"$src/cmake.log" 2>&1) || { tail -n 30 "$src/cmake.log" >&2; exit 1; }
# Jansson's MinGW config formats json_int_t (long long) with Microsoft's "I64d". perflog builds
# with mingw-w64's C99 printf (__USE_MINGW_ANSI_STDIO), where "lld" is the standard spelling and
# the one GCC's format checks accept.
sed -i 's/#define JSON_INTEGER_FORMAT "I64d"/#define JSON_INTEGER_FORMAT "lld"/' "$prefix/include/jansson_config.h"

# libmicrohttpd: HTTP only (no TLS: perflog serves plain HTTP), no docs or examples.
echo "build-deps: libmicrohttpd"
src=$(fetch libmicrohttpd)
(cd "$src" && mkdir -p build-mingw && cd build-mingw &&
    ../configure "${cross[@]}" CC="$cc" --disable-https --disable-doc --disable-examples --disable-curl \
        --disable-tools --without-gnutls >config.log.out 2>&1 &&
    make -j"$jobs" -C src/microhttpd >make.log 2>&1 && make -C src/microhttpd install >install.log 2>&1 &&
    make -C src/include install >>install.log 2>&1 && make install-pkgconfigDATA >>install.log 2>&1) ||
    { tail -n 30 "$src"/build-mingw/*.log* >&2; exit 1; }
[ -f "$prefix/lib/pkgconfig/libmicrohttpd.pc" ] || { echo "build-deps: libmicrohttpd.pc missing" >&2; exit 1; }

touch "$stamp"
echo "build-deps: done, prefix $prefix"
