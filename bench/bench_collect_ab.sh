#!/usr/bin/env bash
# Side-by-side cost of two builds' collectors on this machine: runs OLD/bench/bench_collect and
# NEW/bench/bench_collect alternately ROUNDS times (default 7) of N collects each (default 2000)
# on ROOT (default /), and prints each round and the medians over rounds of the per-collect
# median wall time and of the CPU time per collect, and new/old. Alternating the two spreads the
# other loads of a shared machine over both. Build the old tree with the new bench_collect.c
# (the collector API is the same), e.g.:
#   git archive main | tar -x -C "$OLD_SRC"; cp bench/bench_collect.c "$OLD_SRC/bench/"
#   cmake -S "$OLD_SRC" -B "$OLD_SRC/build"; cmake --build "$OLD_SRC/build" --target bench_collect
#   bench/bench_collect_ab.sh "$OLD_SRC/build" build
set -euo pipefail
old=${1:?usage: $0 OLD_BUILD NEW_BUILD [ROUNDS [N [ROOT]]]}
new=${2:?usage: $0 OLD_BUILD NEW_BUILD [ROUNDS [N [ROOT]]]}
rounds=${3:-7}
n=${4:-2000}
root=${5:-/}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT

for ((i = 0; i < rounds; i++)); do
  for which in old new; do
    dir=$old
    [ "$which" = new ] && dir=$new
    line=$("$dir/bench/bench_collect" "$root" "$n")
    echo "$which: $line"
    # "collect median X us" and "CPU Y us per collect"
    echo "$line" | sed -n 's/.*collect median \([0-9.]*\) us.*CPU \([0-9.]*\) us per collect.*/\1 \2/p' >>"$out/$which"
  done
done
median() { sort -g | awk '{a[NR] = $1} END {print a[int((NR + 1) / 2)]}'; }
ow=$(cut -d' ' -f1 "$out/old" | median)
nw=$(cut -d' ' -f1 "$out/new" | median)
oc=$(cut -d' ' -f2 "$out/old" | median)
nc=$(cut -d' ' -f2 "$out/new" | median)
echo "median of $rounds rounds: wall old $ow us, new $nw us ($(awk -v a="$nw" -v b="$ow" 'BEGIN {printf "%+.1f%%", (a / b - 1) * 100}'))"
echo "median of $rounds rounds: CPU  old $oc us, new $nc us ($(awk -v a="$nc" -v b="$oc" 'BEGIN {printf "%+.1f%%", (a / b - 1) * 100}'))"
