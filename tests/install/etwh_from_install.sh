#!/usr/bin/env bash
# The etwh_from_install test: `cmake --install` the build into a temporary prefix, then run the
# installed etwh with the build and source trees hidden (a private mount namespace with an empty
# tmpfs over each), so that nothing can come from them: the library (RUNPATH), the agents, the
# stress writer, the data (catalog, scenarios, stress profiles, expectations, mutants.json) and
# the mutant build of `etwh selftest`. Every command runs, each checked for what it must produce:
# --version, list (table and --json), run (with --json), stress of a shipped profile by name
# (its accounting line and JSON), compare of two stress results, report (a self-contained page),
# expectations update (a rewritten file that loads), selftest.
# Usage: etwh_from_install.sh BUILD_DIR SOURCE_DIR MUTANT...
# Exit 0: all ran as expected; 77: skipped (no mount namespace here), with the reason; else 1.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/hidden_trees.sh"

build=$(realpath "$1")
source=$(realpath "$2")
shift 2
mutants=("$@")
readonly skip=77

prefix=$(mktemp -d "${TMPDIR:-/tmp}/etwh-install-XXXXXX")
trap 'rm -rf "$prefix"' EXIT
require_outside_trees "$prefix" "$build" "$source"

hidden=("$source")
[[ "$build/" == "$source"/* ]] || hidden+=("$build")

# Hiding needs a mount namespace (root, or unprivileged user namespaces): probe first.
if ! probe=$(unshare --mount --propagation private \
               mount -t tmpfs -o size=64k etwh-hidden "${hidden[0]}" 2>&1); then
  echo "etwh_from_install: SKIPPED: cannot hide the build and source trees" \
       "(unshare --mount and a tmpfs mount are not permitted here: $probe)"
  exit "$skip"
fi

cmake --install "$build" --prefix "$prefix" > "$prefix.install.log" 2>&1 || {
  cat "$prefix.install.log" >&2; rm -f "$prefix.install.log"; exit 1; }
rm -f "$prefix.install.log"

# Runs in the private namespace: $1 the prefix, then the folders to hide, "--", the mutants.
inner=$(cat <<'EOF'
set -euo pipefail
prefix=$1; shift
while [ "$1" != "--" ]; do
  mount -t tmpfs -o size=64k,mode=0555 etwh-hidden "$1"
  [ -z "$(ls -A "$1")" ] || { echo "etwh_from_install: $1 is still visible" >&2; exit 1; }
  shift
done
shift
cd /
unset ETWRT_HOME ETWRT_BROKER ETWRT_MUTANT LD_LIBRARY_PATH
etwh=$prefix/bin/etwh
work=$prefix/work
mkdir "$work"

# Runs "$@", shows its output, and fails unless it exits with $1 and prints a line matching $2.
expect() {
  local want_exit=$1 pattern=$2; shift 2
  echo "+ ${*#$prefix/}"
  local out code=0
  out=$("$@" 2>&1) || code=$?
  printf '%s\n' "$out" | tail -n 25
  if [ "$code" -ne "$want_exit" ]; then
    echo "etwh_from_install: '$*' exited with $code, expected $want_exit" >&2; exit 1
  fi
  if ! printf '%s\n' "$out" | grep -Eq -- "$pattern"; then
    echo "etwh_from_install: '$*' printed no line matching '$pattern'" >&2; exit 1
  fi
}

# Fails, saying why, unless python3's check of the JSON file $1 (the document is `doc`) holds.
expect_json() {
  local file=$1 check=$2
  python3 - "$file" "$check" <<'PY' || { echo "etwh_from_install: $file: $check does not hold" >&2; exit 1; }
import json, sys
doc = json.load(open(sys.argv[1]))
sys.exit(0 if eval(sys.argv[2]) else 1)
PY
}

expect 0 '^etwh [0-9]+\.[0-9]+\.[0-9]+$' "$etwh" --version
expect 0 '^SES-MAX-8 +runtime +1 ' "$etwh" list
"$etwh" list --json > "$work/list.json"
expect_json "$work/list.json" \
  'doc["schema_version"] == 1 and "SES-MAX-8" in [r["id"] for r in doc["rules"]]'
expect 0 'cases, 0 not as expected' "$etwh" run --json "$work/run.json"
expect_json "$work/run.json" 'doc["schema_version"] >= 1 and len(doc["results"]) > 0'

# A shipped stress profile by its name, twice (the stress writer, the profiles): the accounting
# table's row of each session, and JSON where every session balances.
balanced='all(s["written"] == s["delivered"] + s["reported_lost"] and s["written"] > 0
              for r in doc["results"] for s in r["sessions"]) and len(doc["results"]) == 2'
for run in old new; do
  expect 0 '^  s0 +[1-9][0-9,]* +[0-9,]+ +[0-9,]+ +[0-9.]+ [kM]?/s ' \
    "$etwh" stress fast_steady --sweep duration_ms=300 --repetitions 2 --json "$work/$run.json"
  expect_json "$work/$run.json" "doc['schema_version'] >= 1 and $balanced"
done
# Two repetitions a side cannot make a significant difference: no regression, exit 0.
expect 0 '; 0 regressions$' "$etwh" compare "$work/old.json" "$work/new.json" --json "$work/compare.json"
expect_json "$work/compare.json" 'doc["schema_version"] >= 1'

# One page of everything, self-contained: no http(s) reference but the SVG namespace (a name,
# never fetched), no protocol-relative source, no @import.
expect 0 '' "$etwh" report "$work/run.json" "$work/new.json" "$work/compare.json" \
  -o "$work/page.html"
[ -s "$work/page.html" ] || { echo "etwh_from_install: report wrote no page" >&2; exit 1; }
network=$( (grep -Eio 'https?://[^"'"'"' <>)]*' "$work/page.html" | grep -vx 'http://www.w3.org/2000/svg'
            grep -Eio '(src|href) *= *["'"'"']?//[^"'"'"' >]*|@import' "$work/page.html") || true)
if [ -n "$network" ]; then
  echo "etwh_from_install: the page is not self-contained, it refers to: $network" >&2; exit 1
fi

# The installed expectations, rewritten from the run; the new file loads in a run.
cp "$prefix/share/etwh/expectations/etwrt.json" "$work/copy.json"
expect 0 'copy.json: [0-9]+ cases of .*run.json read' \
  "$etwh" expectations update --platform etwrt --from "$work/run.json" --file "$work/copy.json"
expect_json "$work/copy.json" 'isinstance(doc, dict)'
expect 0 'cases, 0 not as expected' "$etwh" run --expectations "$work/copy.json" \
  "$prefix/share/etwh/scenarios/conformance/sourceid.json"
only=()
for m in "$@"; do only+=(--only "$m"); done
expect 0 "of $# mutants killed" "$etwh" selftest "${only[@]}"
EOF
)
unshare --mount --propagation private bash -c "$inner" inner "$prefix" "${hidden[@]}" -- \
  "${mutants[@]}"
