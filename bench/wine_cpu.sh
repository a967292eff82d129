#!/usr/bin/env bash
# CPU time per tick of the cross-built perflogd.exe UNDER WINE, on Linux. A wine figure, not a
# Windows one: wine emulates the Windows API (and its PDH knows only two counters), so this is the
# cost of the daemon's own loop and storage plus wine's emulation. Measured like cpu_vs_sadc.sh:
# on-CPU ns of all threads of the process (/proc/PID/task/*/schedstat) over a window, divided by
# the ticks stored in it; wineserver's share (it serves the process's system calls) is given apart.
#
# usage: bench/wine_cpu.sh [SECONDS] [DIR]   (default 60 s, build-win/perflog: its perflogd.exe)
set -euo pipefail
name=wine_cpu
secs=${1:-60}
bin=$(cd "${2:-build-win/perflog}" && pwd)
wine=$(command -v wine64 || command -v wine || echo /usr/lib/wine/wine64)
[ -x "$wine" ] || { echo "$name: wine64 not found (apt-get install wine64)" >&2; exit 2; }
[ -f "$bin/perflogd.exe" ] || { echo "$name: no $bin/perflogd.exe; cross-build it (docs/windows.md)" >&2; exit 2; }
command -v sqlite3 >/dev/null || { echo "$name: sqlite3 not found" >&2; exit 2; }
dir=$(mktemp -d /tmp/perflog-bench-wine-XXXXXX)
export WINEPREFIX=$dir/prefix WINEDEBUG=-all
server=$(dirname "$(readlink -f "$wine")")/wineserver
pp=
trap '[ -n "$pp" ] && kill -INT $pp 2>/dev/null; sleep 2; "$server" -k 2>/dev/null || true; rm -rf "$dir"' EXIT

cpu_ns() { # sum of on-CPU ns over all threads of a pid
  local sum=0 t
  for t in /proc/$1/task/*/schedstat; do read -r ns _ < "$t" && sum=$((sum + ns)); done
  echo $sum
}

"$wine" "$bin/perflogd.exe" --version >/dev/null 2>&1 # creates the prefix (several seconds)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
"$wine" "$bin/perflogd.exe" --db "Z:${dir//\//\\}\\perflog.db" --listen "127.0.0.1:$port" \
  --log-level warn >"$dir/perflogd.log" 2>&1 & pp=$!
sleep 10 # past start-up: database created, first ticks stored
ws=$(pgrep -n -f "wineserver" || true)
p0=$(cpu_ns $pp); w0=$( [ -n "$ws" ] && cpu_ns "$ws" || echo 0)
t0=$(sqlite3 "$dir/perflog.db" "SELECT count(*) FROM ticks")
sleep "$secs"
p1=$(cpu_ns $pp); w1=$( [ -n "$ws" ] && cpu_ns "$ws" || echo 0)
t1=$(sqlite3 "$dir/perflog.db" "SELECT count(*) FROM ticks")
ticks=$((t1 - t0))
[ "$ticks" -gt 0 ] || { echo "$name: perflogd.exe stored no ticks; its log:" >&2; tail -5 "$dir/perflogd.log" >&2; exit 1; }
echo "perflogd.exe under wine ($("$wine" --version 2>/dev/null || echo wine)), NOT a Windows figure:"
echo "  $ticks ticks in ${secs} s"
echo "  process:    $(( (p1 - p0) / ticks / 1000 )) us CPU per tick"
echo "  wineserver: $(( (w1 - w0) / ticks / 1000 )) us CPU per tick (system calls it serves for the process)"
ls -l "$bin/perflogd.exe" | awk '{print "  perflogd.exe size: " $5 " bytes"}'
