#!/usr/bin/env bash
# The worked example of harness/README.md ("A new op"), proven: new_rule.patch adds a rule with
# a new op; it must touch only the files a new op may touch, apply to a copy of this tree, build
# there, and its case must PASS on etwrt with the catalog's tests green. A patch that no longer
# applies fails this test: refresh it (README.md here says how).
#
# Usage: check.sh SOURCE_DIR WORK_DIR
#   SOURCE_DIR  the repository's root (the tree copied: its tracked and untracked files)
#   WORK_DIR    a scratch folder, emptied first
# Builds with ccache when it is installed (the copy's compile lines match the tree's, so most of
# it is a cache hit); prints how long each stage took.
set -euo pipefail

src=$(cd "$1" && pwd)
work=$2
here="$src/tests/worked_example"
patch_file="$here/new_rule.patch"
case_id=ses-query-stopped

start=$SECONDS
stage() { echo "worked_example: $1 ($((SECONDS - start)) s)"; }
fail() {
  echo "worked_example: FAIL: $*" >&2
  exit 1
}

# (a) The files the patch touches: one family's folder, the catalog, rules.h, scenarios/ and the
# expectations; nothing else (no central table, no count).
mapfile -t touched < <(sed -n 's#^+++ b/\([^[:space:]]*\).*#\1#p' "$patch_file")
[ "${#touched[@]}" -gt 0 ] || fail "$patch_file touches no file"
families=()
for f in "${touched[@]}"; do
  case "$f" in
    harness/conformance/families/*/*)
      family=${f#harness/conformance/families/}
      families+=("${family%%/*}")
      ;;
    catalog/rules.json | harness/model/rules.h | scenarios/* | expectations/*.json) ;;
    *) fail "the patch touches $f, outside the family folder, catalog/rules.json, rules.h, scenarios/ and expectations/" ;;
  esac
done
mapfile -t families < <(printf '%s\n' "${families[@]}" | sort -u)
[ "${#families[@]}" -eq 1 ] || fail "the patch touches ${#families[@]} family folders (${families[*]:-none}), not one"
echo "worked_example: the patch touches ${#touched[@]} files:"
printf '  %s\n' "${touched[@]}"

# (b) A copy of the tree, the patch applied, etwh built there.
rm -rf "$work"
mkdir -p "$work/tree"
(cd "$src" && git ls-files -z --cached --others --exclude-standard |
  tar --null -T - --ignore-failed-read -cf - 2>/dev/null) | tar -xf - -C "$work/tree"
stage "copied the tree"
(cd "$work/tree" && git apply --verbose "$patch_file") ||
  fail "new_rule.patch does not apply to this tree any more: refresh it (tests/worked_example/README.md)"
stage "applied the patch"
export CCACHE_BASEDIR="$work/tree" CCACHE_NOHASHDIR=1
if command -v ccache >/dev/null; then
  export CMAKE_C_COMPILER_LAUNCHER=ccache CMAKE_CXX_COMPILER_LAUNCHER=ccache
fi
(cd "$work/tree" && cmake --preset default >"$work/configure.log" 2>&1) ||
  { cat "$work/configure.log"; fail "the patched tree does not configure"; }
stage "configured"
(cd "$work/tree" && nice -n 10 cmake --build build -j2 --target etwh etwh-agent etwrt-broker \
  etwh_core_test etwh_completeness_test etwh_op_registry_test >"$work/build.log" 2>&1) ||
  { tail -50 "$work/build.log"; fail "the patched tree does not build"; }
stage "built etwh, its agent, the broker and the catalog's tests"

# (c) The new case on etwrt (a private etwrt home), and the catalog's tests.
bin="$work/tree/build/bin"
env -u ETWRT_HOME "$bin/etwh" run --filter "^${case_id}\$" --json "$work/run.json" ||
  fail "etwh run --filter ^${case_id}\$ did not pass"
python3 - "$work/run.json" "$case_id" <<'EOF'
import json, sys
results = json.load(open(sys.argv[1]))["results"]
ran = [(r["id"], r["status"]) for r in results]
if ran != [(sys.argv[2], "PASS")]:
    sys.exit(f"worked_example: FAIL: expected {sys.argv[2]} alone, PASS; ran {ran}")
EOF
stage "$case_id PASSes on etwrt"
for t in etwh_core_test etwh_completeness_test etwh_op_registry_test; do
  "$bin/$t" --gtest_brief=1 >"$work/$t.log" 2>&1 || { cat "$work/$t.log"; fail "$t fails"; }
done
stage "the catalog, completeness and registration tests pass"
rm -rf "$work"
