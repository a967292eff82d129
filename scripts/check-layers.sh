#!/usr/bin/env bash
# The walls between the layers (docs/hacking.md): every #include "x/y.h" of a layer's sources must
# name its own layer or one it may use. What a layer may use is read from its CMakeLists.txt,
# `perflog_layer(NAME USES a b ...)`, the same list the build links, taken transitively. A header
# of a layer named without its folder ("sample.h" for "model/sample.h") is an error too: the
# build finds it only next to the including file. Exits 1 and lists each breach.
#   scripts/check-layers.sh [--list]   (--list: print the layers and what each may use first)
set -euo pipefail
cd "$(dirname "$0")/.."

declare -A uses dir_of
layers=()
while IFS= read -r line; do
  # perflog_layer(name USES a b c ...)
  body=${line#*perflog_layer(}
  body=${body%%)*}
  read -r -a words <<<"$body"
  name=${words[0]}
  layers+=("$name")
  dir_of[$name]=${name//_//}
  deps=()
  seen_uses=0
  for w in "${words[@]:1}"; do
    if [ "$w" = USES ]; then seen_uses=1; continue; fi
    case $w in [A-Z]*) seen_uses=0; continue ;; esac
    [ $seen_uses = 1 ] && deps+=("$w")
  done
  uses[$name]="${deps[*]:-}"
done < <(grep -hE '^(# )?perflog_layer\(' -- */CMakeLists.txt */*/CMakeLists.txt 2>/dev/null)

if [ ${#layers[@]} -eq 0 ]; then
  echo "check-layers: no perflog_layer() in any */CMakeLists.txt" >&2
  exit 1
fi

# What each layer may use, transitively (and itself).
declare -A may
closure() {
  local todo=("$1") out=" $1 " l d
  while [ ${#todo[@]} -gt 0 ]; do
    l=${todo[0]}
    todo=("${todo[@]:1}")
    for d in ${uses[$l]:-}; do
      case $out in *" $d "*) ;; *) out+="$d " todo+=("$d") ;; esac
    done
  done
  echo "$out"
}
for l in "${layers[@]}"; do may[$l]=$(closure "$l"); done

# The layer of a path: the layer whose folder is its longest prefix.
layer_of() {
  local p=$1 best="" bestlen=0 l d
  for l in "${layers[@]}"; do
    d=${dir_of[$l]}
    case $p in "$d"/*) if [ ${#d} -gt $bestlen ]; then best=$l bestlen=${#d}; fi ;; esac
  done
  echo "$best"
}

if [ "${1:-}" = --list ]; then
  for l in "${layers[@]}"; do echo "$l (${dir_of[$l]}/) may use:${may[$l]}"; done
fi

bad=0
while IFS= read -r f; do
  own=$(layer_of "$f")
  [ -n "$own" ] || continue
  while IFS=: read -r n inc; do
    inc=${inc#*\"}
    inc=${inc%%\"*}
    if [ -f "$inc" ]; then
      target=$(layer_of "$inc")
    elif [ -f "$(dirname "$f")/$inc" ] && [ -n "$(layer_of "$(dirname "$f")/$inc")" ]; then
      echo "$f:$n: #include \"$inc\": name the header with its layer (\"$(dirname "$f")/$inc\")"
      bad=1
      continue
    else
      continue # a generated or system header
    fi
    [ -n "$target" ] || continue
    case ${may[$own]} in
    *" $target "*) ;;
    *)
      echo "$f:$n: #include \"$inc\": layer $own may not use layer $target (it may use:${may[$own]})"
      bad=1
      ;;
    esac
  done < <(grep -n '^[[:space:]]*#[[:space:]]*include[[:space:]]*"' "$f" || true)
done < <(git ls-files -- '*.c' '*.h' 2>/dev/null || find . -name '*.[ch]' | sed 's|^\./||')

if [ $bad = 0 ]; then
  echo "check-layers: ${#layers[@]} layers, no include crosses a wall"
fi
exit $bad
