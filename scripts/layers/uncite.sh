#!/usr/bin/env bash
# uncite.sh WORKTREE - make the repository stand alone: citations of documents it does not hold.
#  - links to ../shared/design.md become links to docs/design.md (which holds the contract, with the
#    same section numbers);
#  - "design section N" / "design §N" become "docs/design.md §N" (design.md §N inside docs/);
#  - "issue N" citations in code, scripts, tests and docs are dropped in the forms below;
# then lists what is left for a hand fix (and exits 0: a leftover is a wording to fix, not a break).
set -euo pipefail
wt=${1:?usage: uncite.sh WORKTREE}
cd "$wt"
mapfile -t files < <(git ls-files -- '*.c' '*.h' '*.py' '*.sh' '*.cjs' '*.js' '*.cmake' '*CMakeLists.txt' \
  '*.md' '*.service' 'packaging/man/*' 'packaging/deb/*' |
  grep -v -e '^scripts/layers/' -e '^tests/fixtures/' -e '/node_modules/' -e '^docs/design\.md$' -e '^docs/hacking\.md$')
[ ${#files[@]} -gt 0 ] || exit 0
perl -0pi -e '
  my $f = $ARGV;
  my $indocs = $f =~ m{^docs/};
  my $d = $indocs ? "design.md" : "docs/design.md";
  s{(?:\.\./)+shared/design\.md (?:section |§ ?)(\d+)}{$d §$1}g;
  s{\((?:\.\./)+shared/design\.md\)}{($d)}g;
  s{(?:\.\./)+shared/design\.md}{$d}g;
  s{(?<![/\w])design(?:\.md)? (?:section |§ ?)(\d+)}{$d §$1}g;
  s{\(SPEC of issue \d+, }{(}g;
  s{ \(issue \d+\)}{}g;
  s{\(issue \d+, }{(}g;
  s{\(issue \d+: }{(}g;
  s{, issue \d+\)}{)}g;
  s{\bissue \d+\x27s }{the }g;
  s{ of issue \d+\b}{}g;
  s{ \(issue \d+, "([^"]+)"\)}{ ("$1")}g;
' -- "${files[@]}"
left=$(grep -nE '\bissue [0-9]+|shared/design' -- "${files[@]}" || true)
if [ -n "$left" ]; then
  echo "uncite: citations left for a hand fix:"
  echo "$left"
fi
