#!/usr/bin/env python3
"""Turn perflog's folder-per-program layout into the layered one (see README.md next to this file).

    move.py [--dry-run] [--check] WORKTREE

Steps, each re-runnable (a second run on a moved tree changes nothing):
  1. place every tracked file of the source folders by rule (PLACE below); files no rule places are
     printed and the script exits 1 before touching anything;
  2. `git mv` each file whose place changed;
  3. rewrite #include "x.h" in every C file of the layers, tests/, bench/ to name its layer
     ("collectors/model/sample.h"), the header -> path map built from where the headers are now;
  4. rewrite every old path still named in build files, scripts, docs and tests;
  5. install the CMake files and scripts of templates/;
  6. apply the identifier renames of RENAMES (for code merged after the branch that renamed them);
  7. clang-format the files it changed (include order) and print what is left for a hand fix.
--dry-run prints the plan (steps 1 and 3's cross-layer includes) and changes nothing.
"""
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
TEMPLATES = os.path.join(HERE, "templates")

# The layers by folder. A new layer goes inside the folder of the user's it fits (the top level
# keeps the user's folders): the data model in collectors/model, the query engine in
# storage/query, the copy runs in daemon/runs, the client's HTTP in cli/http. base/ fits none of
# them (everything uses it, it uses nothing) and is the one new top-level folder.
LAYERS = ["base", "collectors/model", "collectors", "storage", "storage/query", "daemon/runs", "web",
          "config", "daemon", "cli/http", "cli"]
SOURCE_DIRS = sorted({l.split("/", 1)[0] for l in LAYERS})  # top folders whose files are placed

# Placement rules: (regex on the path in the tree, destination directory or None = keep the path).
# First match wins. A path of the new layout matches a keep rule, so a second run is a no-op.
PLACE = [
    # the layers' own build files (a second run meets them)
    (r"^[a-z]+(/[a-z]+)?/CMakeLists\.txt$", None),
    # ---- base: no perflog dependency at all ----
    (r"^daemon/(log(_[a-z_]+)?\.[ch]|printf_attr\.h|clock\.[ch]|monocond(_[a-z]+)?\.[ch]|thread_prio(_[a-z]+)?\.[ch])$", "base"),
    (r"^storage/sbuf\.[ch]$", "base"),
    (r"^collectors/(name_hash\.h|glob_match(_[a-z]+)?\.[ch])$", "base"),
    (r"^web/(sock\.h|term_escape\.[ch])$", "base"),
    (r"^(daemon|web|storage|collectors|config|cli)/utf8(_[a-z]+)?\.[ch]$", "base"),
    (r"^base/[^/]+$", None),
    # ---- model: the counter table, samples, deltas, names and times ----
    (r"^collectors/(counters|sample|delta|pdh_path|collector_config|pid_io)\.[ch]$", "collectors/model"),
    (r"^web/(pattern|timeparse)\.[ch]$", "collectors/model"),
    (r"^collectors/model/[^/]+$", None),
    # ---- collectors: the platform readers ----
    (r"^collectors/(linux|windows)/[^/]+$", None),
    (r"^collectors/[^/]+$", None),
    # ---- storage ----
    (r"^storage/[^/]+$", None),
    # ---- query: what reads stored and live ticks and formats them ----
    (r"^daemon/live\.[ch]$", "storage/query"),
    (r"^web/(series|data|export|csv|metrics|report_proc)(_[a-z_]+)?\.[ch]$", "storage/query"),
    (r"^web/tz(_[a-z_]+)?\.[ch]$", "storage/query"),  # time zones for the CSV rows, beside csv_zone
    (r"^storage/query/[^/]+$", None),
    # ---- runs: the copy-run domain ----
    (r"^daemon/(runs?(_[a-z_]+)?|follow(_[a-z_]+)?|pid_alive(_[a-z]+)?)\.[ch]$", "daemon/runs"),
    (r"^web/(report|claims|peer_url)(_[a-z_]+)?\.[ch]$", "daemon/runs"),
    (r"^daemon/runs/[^/]+$", None),
    # ---- web: HTTP, routes, handlers, query strings, dashboard ----
    (r"^web/(http|api|query|dashboard)(_[a-z_]+)?\.[ch]$", None),
    (r"^web/dashboard/.+$", None),
    # ---- config ----
    (r"^config/[^/]+$", None),
    # ---- daemon: the program (everything left of daemon/ is the program's) ----
    (r"^daemon/[^/]+$", None),
    # ---- cli: the client; its HTTP client in cli/http ----
    (r"^cli/(httpc|netio)(_[a-z_]+)?\.[ch]$", "cli/http"),
    (r"^cli/http/[^/]+$", None),
    (r"^cli/[^/]+$", None),
]

# Identifier renames made on branch `layers` (old layout); applied again here so code merged from
# other branches that still uses an old name follows. Word-bounded, in C files only.
RENAMES_FILE = os.path.join(HERE, "renames.txt")

# Text files whose old paths are rewritten (step 4). Not C sources (their includes are step 3).
PATH_REWRITE_GLOBS = (
    r"^(CMakeLists\.txt|README\.md|\.github/.*|docs/.*\.md|scripts/.*|packaging/.*|bench/.*\.(sh|txt|md)|"
    r"bench/CMakeLists\.txt|tests/CMakeLists\.txt|tests/fuzz/CMakeLists\.txt|tests/integration/.*\.(py|cjs)|"
    r"tests/windows/.*\.py|web/dashboard/.*\.(cmake|json|js)|\.clang-format|\.gitignore)$"
)

C_DIRS = SOURCE_DIRS + ["tests/unit", "tests/fuzz", "bench", "tests/windows"]


def git(wt, *args, capture=True):
    r = subprocess.run(["git", "-C", wt] + list(args), capture_output=capture, text=True)
    if r.returncode != 0:
        sys.exit(f"git {' '.join(args)}: {r.stderr.strip()}")
    return r.stdout


def place(path):
    """The new path of `path`, or None when no rule places it."""
    for rx, dest in PLACE:
        if re.match(rx, path):
            if dest is None:
                return path
            return dest + "/" + os.path.basename(path)
    return None


def tracked(wt):
    return [p for p in git(wt, "ls-files", "-z").split("\0") if p]


def plan_moves(files):
    moves, unplaced = [], []
    for p in files:
        top = p.split("/", 1)[0]
        if top not in SOURCE_DIRS or "/" not in p:
            continue
        if top == "web" and "/node_modules/" in p:
            continue
        q = place(p)
        if q is None:
            unplaced.append(p)
        elif q != p:
            moves.append((p, q))
    return moves, unplaced


def layer_of(path):
    """The layer (its folder) of a path: the layer folder that is the path's longest prefix, so
    storage/query/series.h is storage/query's and storage/db.h storage's."""
    best = None
    for l in LAYERS:
        if path.startswith(l + "/") and (best is None or len(l) > len(best)):
            best = l
    return best


INCLUDE_RX = re.compile(r'^(\s*#\s*include\s+)"([^"]+)"', re.M)


def header_map(files):
    """basename -> [new paths] of every header in a layer folder."""
    m = {}
    for p in files:
        if p.endswith(".h") and layer_of(p) and "/dashboard/" not in p:
            m.setdefault(os.path.basename(p), []).append(p)
    return m


def resolve(inc, including, hmap, files_set):
    """The layered name of `inc` as included from file `including`, or None (leave it)."""
    if inc in files_set and layer_of(inc):  # already layered
        return inc
    base = os.path.basename(inc)
    cands = hmap.get(base)
    if not cands:
        return None
    if len(cands) == 1:
        return cands[0]
    # Two headers of one name: the one next to the including file, as "x.h" meant before.
    here = [c for c in cands if os.path.dirname(c) == os.path.dirname(including)]
    if len(here) == 1:
        return here[0]
    raise SystemExit(f"{including}: #include \"{inc}\" is ambiguous: {cands}")


def rewrite_includes(wt, files, hmap):
    files_set = set(files)
    changed = []
    for p in files:
        if not p.endswith((".c", ".h")):
            continue
        if not any(p == d or p.startswith(d + "/") for d in C_DIRS):
            continue
        if p.startswith("tests/fixtures/"):
            continue
        fp = os.path.join(wt, p)
        with open(fp, encoding="utf-8") as f:
            text = f.read()

        def sub(m):
            r = resolve(m.group(2), p, hmap, files_set)
            return m.group(0) if r is None else f'{m.group(1)}"{r}"'

        new = INCLUDE_RX.sub(sub, text)
        if new != text:
            with open(fp, "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(p)
    return changed


CMAKE_INCLUDE_RX = re.compile(r'#include \\"([^"\\]+)\\"')


def rewrite_cmake_includes(wt, files, hmap):
    """#include lines that .cmake scripts write into generated C (web/dashboard/embed.cmake)."""
    files_set = set(files)
    for p in files:
        if not p.endswith(".cmake") or "/node_modules/" in p:
            continue
        fp = os.path.join(wt, p)
        with open(fp, encoding="utf-8") as f:
            text = f.read()

        def sub(m):
            r = resolve(m.group(1), p, hmap, files_set)
            return m.group(0) if r is None else '#include \\"' + r + '\\"'

        new = CMAKE_INCLUDE_RX.sub(sub, text)
        if new != text:
            with open(fp, "w", encoding="utf-8") as f:
                f.write(new)


def rewrite_paths(wt, files, moves):
    """Old file paths still named in build files, scripts and docs become the new ones."""
    if not moves:
        return []
    # Longest first, word-bounded on the left so "web/csv.c" does not touch "xweb/csv.c".
    pairs = sorted(moves, key=lambda m: -len(m[0]))
    rx = re.compile(r"(?<![A-Za-z0-9_./-])(" + "|".join(re.escape(a) for a, _ in pairs) + r")(?![A-Za-z0-9_])")
    table = dict(pairs)
    changed = []
    for p in files:
        if not re.match(PATH_REWRITE_GLOBS, p) or "/node_modules/" in p or p.startswith("scripts/layers/"):
            continue
        fp = os.path.join(wt, p)
        if not os.path.isfile(fp) or os.path.islink(fp):
            continue
        try:
            with open(fp, encoding="utf-8") as f:
                text = f.read()
        except UnicodeDecodeError:
            continue
        # Also ${CMAKE_SOURCE_DIR}/web/csv.c and ../web/csv.c: the look-behind allows '/' only
        # after a '}' or '.', handled by a second pass with that prefix.
        new = rx.sub(lambda m: table[m.group(1)], text)
        new = re.sub(r"(\}/|\.\./|\./)(" + "|".join(re.escape(a) for a, _ in pairs) + r")(?![A-Za-z0-9_])",
                     lambda m: m.group(1) + table[m.group(2)], new)
        if new != text:
            with open(fp, "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(p)
    return changed


FOREACH_RX = re.compile(r"foreach\(name ([^)]*)\)(.*?)endforeach\(\)", re.S)
NAME_SRC_RX = re.compile(r"\$\{CMAKE_SOURCE_DIR\}/([\w/]+)/\$\{name\}\.c")

# Sources that a list of explicit sources (a fuzz target built without the layers) now needs
# because of the hand edits of branch `layers`: when the key is listed, the values are added.
EXTRA_SOURCES = {
    "config/json_locate.c": ["base/utf8.c"],
    "web/api.c": ["base/utf8.c"],
    "web/metrics.c": ["base/utf8.c"],
    "cli/run_util.c": ["base/utf8.c", "collectors/model/pid_io.c"],
    "collectors/linux/linux_pid.c": ["collectors/model/pid_io.c"],
    "collectors/linux/linux_collector.c": ["collectors/model/collector_config.c"],
    "collectors/windows/pdh_collector.c": ["collectors/model/collector_config.c", "base/grow.c"],
    # grow_array, the one growing-array helper
    "collectors/model/sample.c": ["base/grow.c"],
    "collectors/linux/linux_others.c": ["base/grow.c"],
    "collectors/linux/linux_devcache.c": ["base/grow.c"],
    "storage/query/series.c": ["base/grow.c"],
    "storage/query/report_proc.c": ["base/grow.c"],
    "daemon/runs/report.c": ["base/grow.c"],
    # text_set_err and text_hex_digit
    "web/query.c": ["base/text.c"],
    "cli/http/httpc_parse.c": ["base/text.c"],
    "cli/typeperf_args.c": ["base/text.c"],
}


def fix_cmake_lists(wt, moves):
    """tests/ and tests/fuzz CMakeLists.txt: `foreach(name a b) ... ${CMAKE_SOURCE_DIR}/web/${name}.c`
    loops get a per-name source variable (the names may have gone to different layers); explicit
    source lists get what the moved code now needs; the fuzz targets, built from sources rather
    than from the layers, get every layer's include directory."""
    table = dict(moves)
    for rel in ("tests/CMakeLists.txt", "tests/fuzz/CMakeLists.txt"):
        p = os.path.join(wt, rel)
        if not os.path.exists(p):
            continue
        with open(p) as f:
            text = f.read()
        orig = text

        def loop(m):
            names, body = m.group(1).split(), m.group(2)
            dirs = set(NAME_SRC_RX.findall(body))
            if not dirs:
                return m.group(0)
            sets = []
            for d in dirs:
                for n in names:
                    old = f"{d}/{n}.c"
                    new = table.get(old, old)
                    sets.append(f"set(PERFLOG_SRC_{n} ${{CMAKE_SOURCE_DIR}}/{new})")
            body = NAME_SRC_RX.sub(lambda _m: "${PERFLOG_SRC_${name}}", body)
            return ("# (where each source of the loop is now)\n" + "\n".join(sorted(set(sets))) +
                    f"\nforeach(name {m.group(1)}){body}endforeach()")

        text = FOREACH_RX.sub(loop, text)
        # Only the fuzz targets build from explicit lists alone; a unit test links perflog_core
        # (every layer) and would compile the extra source a second time.
        for key, extra in (EXTRA_SOURCES.items() if rel == "tests/fuzz/CMakeLists.txt" else ()):
            tok = "${CMAKE_SOURCE_DIR}/" + key
            if tok not in text:
                continue
            add = [e for e in extra if "${CMAKE_SOURCE_DIR}/" + e not in text]
            if add:
                text = text.replace(tok, tok + "".join(" ${CMAKE_SOURCE_DIR}/" + e for e in add))
        if rel == "tests/fuzz/CMakeLists.txt" and "PERFLOG_LAYER_INCLUDES" not in text:
            line = ("# The fuzz targets build from their sources, not the layers: every layer's headers.\n"
                    "get_property(PERFLOG_LAYER_INCLUDES GLOBAL PROPERTY PERFLOG_LAYER_INCLUDES)\n"
                    "include_directories(${PERFLOG_LAYER_INCLUDES} ${PERFLOG_LAYER_INCLUDE}/cli)\n\n")
            i = text.find("set(FUZZ_FLAGS")
            text = text[:i] + line + text[i:] if i >= 0 else line + text
        if text != orig:
            with open(p, "w") as f:
                f.write(text)


def load_renames():
    out = []
    if not os.path.exists(RENAMES_FILE):
        return out
    with open(RENAMES_FILE) as f:
        for line in f:
            line = line.split("#", 1)[0].strip()
            if line:
                a, b = line.split()
                out.append((a, b))
    return out


def apply_renames(wt, files, renames):
    if not renames:
        return []
    table = dict(renames)
    rx = re.compile(r"\b(" + "|".join(re.escape(a) for a, _ in renames) + r")\b")
    changed = []
    for p in files:
        if not p.endswith((".c", ".h")) or not any(p.startswith(d + "/") for d in C_DIRS):
            continue
        if p.startswith("tests/fixtures/"):
            continue
        fp = os.path.join(wt, p)
        with open(fp, encoding="utf-8") as f:
            text = f.read()
        new = rx.sub(lambda m: table[m.group(1)], text)
        if new != text:
            with open(fp, "w", encoding="utf-8") as f:
                f.write(new)
            changed.append(p)
    return changed


# The commit whose top-level CMakeLists.txt the templates were written from (the file they replace).
ORIG_REF = "83743a4a4d74109fddf92152e06ecd59c5b17a45"
ORIG_FILES = ["CMakeLists.txt"]


def check_overwritten(wt):
    """Files the templates replace: warn, with the diff, when a merged branch changed them since
    the templates were written (as they were at ORIG_REF)."""
    for rel in ORIG_FILES:
        cur = os.path.join(wt, rel)
        if not os.path.exists(cur):
            continue
        old = git(wt, "show", f"{ORIG_REF}:{rel}")
        with open(cur) as f:
            if f.read() == old:
                continue
        print(f"HAND FIX: {rel} was changed since the template that replaces it was written; "
              f"port this change to the new {rel} (or to the layer's CMakeLists.txt):")
        subprocess.run(["git", "-C", wt, "diff", ORIG_REF, "--", rel])


def install_templates(wt, moved_before):
    """Copy templates/ over the tree (every file, same relative path); returns the paths. On a tree
    moved before (a re-run), a file that differs from its template was edited since, by hand or by
    a merge: it is kept, and the difference printed."""
    out = []
    for root, _, names in os.walk(TEMPLATES):
        for n in names:
            src = os.path.join(root, n)
            rel = os.path.relpath(src, TEMPLATES)
            dst = os.path.join(wt, rel)
            os.makedirs(os.path.dirname(dst), exist_ok=True)
            with open(src, "rb") as f:
                data = f.read()
            if moved_before and os.path.exists(dst):
                with open(dst, "rb") as f:
                    if f.read() != data:
                        print(f"HAND FIX: {rel} differs from its template; kept (check that the difference is wanted):")
                        subprocess.run(["diff", "-u", src, dst])
                        continue
            with open(dst, "wb") as f:
                f.write(data)
            os.chmod(dst, os.stat(src).st_mode & 0o777)
            out.append(rel)
    return out


def patch_test_sh(wt):
    """scripts/test.sh runs the layer check first (a line after its `cd`)."""
    p = os.path.join(wt, "scripts/test.sh")
    with open(p) as f:
        text = f.read()
    if "check-layers.sh" in text:
        return False
    line = ("\n# The layers' walls (docs/hacking.md): no #include of a layer a layer may not use.\n"
            "./scripts/check-layers.sh\n")
    new, n = re.subn(r'(cd "\$\(dirname "\$0"\)/\.\."\n)', lambda m: m.group(1) + line, text, count=1)
    if n != 1:
        print("HAND FIX: scripts/test.sh: no `cd \"$(dirname \"$0\")/..\"` line to put check-layers.sh after")
        return False
    with open(p, "w") as f:
        f.write(new)
    return True


def patch_format_globs(wt):
    """tests/CMakeLists.txt's clang-format globs (GLOB_RECURSE, so the nested layers are in their
    parents' globs already): the one new top folder, base/."""
    p = os.path.join(wt, "tests/CMakeLists.txt")
    with open(p) as f:
        text = f.read()
    if "${CMAKE_SOURCE_DIR}/base/*.[ch]" in text:
        return False
    new = text.replace("${CMAKE_SOURCE_DIR}/daemon/*.[ch]",
                       "${CMAKE_SOURCE_DIR}/base/*.[ch] ${CMAKE_SOURCE_DIR}/daemon/*.[ch]", 1)
    if new == text:
        print("HAND FIX: tests/CMakeLists.txt: clang-format glob of daemon/ not found; add base/")
        return False
    with open(p, "w") as f:
        f.write(new)
    return True


def cross_layer_report(wt, files):
    """Print the includes that break a wall, as scripts/check-layers.sh would (dry run)."""
    chk = os.path.join(TEMPLATES, "scripts/check-layers.sh")
    r = subprocess.run([chk, "--list"], capture_output=True, text=True, cwd=wt)
    sys.stdout.write(r.stdout + r.stderr)


def main():
    args = sys.argv[1:]
    dry = "--dry-run" in args
    args = [a for a in args if not a.startswith("--")]
    if len(args) != 1:
        sys.exit(__doc__)
    wt = os.path.abspath(args[0])
    if git(wt, "status", "--porcelain", "--untracked-files=no").strip() and not dry:
        sys.exit(f"{wt}: the worktree has uncommitted changes; commit or stash them first")

    files = tracked(wt)
    # A tree the move has run on before: its build files are the templates' (perhaps edited since).
    moved_before = os.path.exists(os.path.join(wt, "base/CMakeLists.txt"))
    moves, unplaced = plan_moves(files)
    if unplaced:
        print("files no rule places (add a rule to PLACE in move.py):")
        for p in unplaced:
            print("  " + p)
        sys.exit(1)
    if dry:
        for a, b in moves:
            print(f"{a} -> {b}")
        print(f"{len(moves)} moves")
        return

    if moves and not moved_before:
        check_overwritten(wt)
    for a, b in moves:
        os.makedirs(os.path.join(wt, os.path.dirname(b)), exist_ok=True)
        git(wt, "mv", a, b)
    files = tracked(wt)
    hmap = header_map(files)
    dup = {k: v for k, v in hmap.items() if len(v) > 1}
    if dup:
        print("headers of one name in two places (resolved by the including file's folder):", dup)

    renames = load_renames()
    changed = set(apply_renames(wt, files, renames))
    changed |= set(rewrite_includes(wt, files, hmap))
    rewrite_cmake_includes(wt, files, hmap)
    rewrite_paths(wt, files, moves)
    fix_cmake_lists(wt, moves)
    # Templates after the path rewrite: they name the new paths already.
    install_templates(wt, moved_before)
    patch_test_sh(wt)
    patch_format_globs(wt)
    git(wt, "add", "-A", ".")

    # Citations of documents the repository does not hold, in code comments and help texts.
    subprocess.run([os.path.join(HERE, "uncite.sh"), wt], check=False)

    files = tracked(wt)
    # clang-format every C file the style test covers: Regroup sorts the rewritten include blocks,
    # and longer names re-wrap. The tree was formatted before, so this changes only what moved.
    cfiles = [p for p in files if p.endswith((".c", ".h")) and not p.startswith("tests/fixtures/")
              and any(p.startswith(d + "/") for d in C_DIRS)]
    if cfiles:
        subprocess.run(["clang-format", "-i"] + [os.path.join(wt, p) for p in cfiles], check=True)
    git(wt, "add", "-A", ".")
    print(f"moved {len(moves)} files, rewrote {len(changed)} C files")

    # What is left: unresolved includes, walls broken.
    r = subprocess.run(["./scripts/check-layers.sh"], cwd=wt)
    if r.returncode != 0:
        print("HAND FIX: the includes above break a wall (docs/hacking.md)")
        sys.exit(2)


if __name__ == "__main__":
    main()
