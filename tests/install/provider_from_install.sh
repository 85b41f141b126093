#!/usr/bin/env bash
# The etwh_provider_from_install test: `cmake --install` the build into a temporary prefix, build
# provider_sample/ (a provider under test as a user writes one) against that prefix alone with
# find_package(etwh CONFIG), then run the installed `etwh run --subject` on it with the
# provider cases: the sample passes every case, and its defect variant (a callback that ignores
# DISABLE) fails PROV-RECORD, read from the --json report as data. Where a mount namespace can
# be made, the build and source trees are hidden (an empty tmpfs over each) while the sample is
# built and judged, so nothing can come from them.
# Usage: provider_from_install.sh BUILD_DIR SOURCE_DIR CXX_COMPILER
# Exit 0: all as expected; else 1, saying what was not.
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/hidden_trees.sh"

build=$(realpath "$1")
source=$(realpath "$2")
cxx=$3

work=$(mktemp -d "${TMPDIR:-/tmp}/etwh-provider-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
require_outside_trees "$work" "$build" "$source"

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log" 2>&1 || {
  cat "$work/install.log" >&2; exit 1; }
cp -r "$source/tests/install/provider_sample" "$work/src"

hidden=("$source")
[[ "$build/" == "$source"/* ]] || hidden+=("$build")
runner=(bash -c)
if unshare --mount --propagation private \
     mount -t tmpfs -o size=64k etwh-hidden "${hidden[0]}" > /dev/null 2>&1; then
  runner=(unshare --mount --propagation private bash -c)
else
  echo "etwh_provider_from_install: NOTE: no mount namespace here; the build and source trees" \
       "stay visible (nothing names them: the sample gets only the prefix)"
  hidden=()
fi

# Runs in the private namespace (or not, see above): $1 the work folder, $2 the compiler, then
# the folders to hide.
inner=$(cat <<'INNER'
set -euo pipefail
work=$1 cxx=$2; shift 2
for dir in "$@"; do
  mount -t tmpfs -o size=64k,mode=0555 etwh-hidden "$dir"
  [ -z "$(ls -A "$dir")" ] || { echo "etwh_provider_from_install: $dir is still visible" >&2; exit 1; }
done
cd /
unset ETWRT_HOME ETWRT_BROKER ETWRT_MUTANT LD_LIBRARY_PATH
prefix=$work/prefix
cmake -S "$work/src" -B "$work/sample-build" "-DCMAKE_CXX_COMPILER=$cxx" \
  "-DCMAKE_PREFIX_PATH=$prefix" -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF > "$work/configure.log" 2>&1 ||
  { cat "$work/configure.log" >&2; exit 1; }
cmake --build "$work/sample-build" > "$work/sample-build.log" 2>&1 ||
  { cat "$work/sample-build.log" >&2; exit 1; }

cases=$prefix/share/etwh/scenarios/conformance/provider.json
# Runs the installed etwh on one agent: $1 the agent, $2 the exit wanted; leaves $work/$1.json.
judge() {
  local agent=$1 want=$2 code=0
  echo "+ etwh run --subject $agent provider.json"
  "$prefix/bin/etwh" run --subject "$work/sample-build/$agent" --json "$work/$agent.json" \
    "$cases" > "$work/$agent.out" 2>&1 || code=$?
  tail -n 12 "$work/$agent.out"
  if [ "$code" -ne "$want" ]; then
    echo "etwh_provider_from_install: $agent: etwh run exited with $code, expected $want" >&2
    exit 1
  fi
}

judge sample-provider-agent 0
# Every case of provider.json ran, and each passed.
jq -e '(.results | length) >= 6 and all(.results[]; .status == "PASS")' \
  "$work/sample-provider-agent.json" > /dev/null ||
  { echo "etwh_provider_from_install: the sample did not pass every case" >&2; exit 1; }

judge sample-provider-agent-ignores-disable 1
# The defect is named as data: the case that judges DISABLE fails with a failure finding, and
# the rule table gives PROV-RECORD (that case's rule) the verdict FAIL.
jq -e '(any(.results[]; .id == "prov-record-enable-disable" and .status == "FAIL" and
                        any(.findings[]; .severity == "failure")))
       and any(.rules[]; .id == "PROV-RECORD" and .status == "FAIL")' \
  "$work/sample-provider-agent-ignores-disable.json" > /dev/null ||
  { echo "etwh_provider_from_install: the defect was not reported as PROV-RECORD" >&2; exit 1; }
echo "etwh_provider_from_install: the sample passes; its defect fails PROV-RECORD"
INNER
)
"${runner[@]}" "$inner" inner "$work" "$cxx" "${hidden[@]}"
