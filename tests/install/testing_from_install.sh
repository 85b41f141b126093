#!/usr/bin/env bash
# The etwh_testing_from_install test: install the build's components etwrt and
# provider_under_test (the package etwh: etwh::testing with it) into a temporary prefix, build
# etwh::testing's example project (share/etwh/examples/testing) against that prefix alone with
# find_package(etwh CONFIG), and run its tests with `ctest -j 4` ROUNDS times: every round
# passes and no etwrt broker of the prefix is left running afterwards. Then the example built
# with its planted defects (EXAMPLE_PLANTED_DEFECT=ON): the provider check of Example.Greeter
# fails, naming PROV-EVENT-ENABLED, PROV-RECORD and TR-SET-ONCE.
# Usage: testing_from_install.sh BUILD_DIR CXX_COMPILER [ROUNDS]
# Exit 0: all as expected; else 1, saying what was not.
set -euo pipefail

build=$(realpath "$1")
cxx=$2
rounds=${3:-1}

work=$(mktemp -d "${TMPDIR:-/tmp}/etwh-testing-install-XXXXXX")
trap 'rm -rf "$work"' EXIT
fail() { echo "etwh_testing_from_install: $*" >&2; exit 1; }

for component in etwrt provider_under_test; do
  cmake --install "$build" --prefix "$work/prefix" --component "$component" \
    >> "$work/install.log" 2>&1 || { cat "$work/install.log" >&2; exit 1; }
done
example=$work/prefix/share/etwh/examples/testing
[ -f "$example/CMakeLists.txt" ] || fail "the example is not installed at $example"

cd /
unset ETWRT_HOME ETWRT_BROKER ETWRT_MUTANT ETWH_TESTING_HOME LD_LIBRARY_PATH
# $1 the build folder, then cmake options.
build_example() {
  local dir=$1; shift
  cmake -S "$example" -B "$dir" "-DCMAKE_CXX_COMPILER=$cxx" "-DCMAKE_PREFIX_PATH=$work/prefix" \
    -DCMAKE_FIND_USE_PACKAGE_REGISTRY=OFF "$@" > "$dir.configure.log" 2>&1 ||
    { cat "$dir.configure.log" >&2; fail "the example does not configure"; }
  cmake --build "$dir" > "$dir.build.log" 2>&1 ||
    { cat "$dir.build.log" >&2; fail "the example does not build"; }
}

# Brokers started from the prefix still running, after giving them the half second they take
# to notice their owner ended.
leftovers() {
  local i
  for i in 1 2 3 4 5 6 7 8 9 10; do
    pgrep -f "$work/prefix/" > /dev/null || return 0
    sleep 0.2
  done
  pgrep -af "$work/prefix/" >&2
  return 1
}

build_example "$work/clean"
for round in $(seq 1 "$rounds"); do
  ctest --test-dir "$work/clean" -j 4 --output-on-failure > "$work/round.log" 2>&1 ||
    { cat "$work/round.log" >&2; fail "round $round: the example's tests failed"; }
  leftovers || fail "round $round: processes of the prefix outlived the tests"
done
tail -n 3 "$work/round.log"
echo "the example's tests passed $rounds time(s) under ctest -j 4, no process left"

build_example "$work/defect" -DEXAMPLE_PLANTED_DEFECT=ON
if ctest --test-dir "$work/defect" -R 'Greeter.FollowsTheProviderRules' --output-on-failure \
     > "$work/defect.log" 2>&1; then
  cat "$work/defect.log" >&2
  fail "the provider check passed Example.Greeter with its planted defects"
fi
for rule in PROV-EVENT-ENABLED PROV-RECORD TR-SET-ONCE; do
  grep -q "FAIL $rule " "$work/defect.log" ||
    { cat "$work/defect.log" >&2; fail "the defects' provider check does not name $rule"; }
done
grep "^FAIL " "$work/defect.log" | head -n 5
leftovers || fail "processes of the prefix outlived the defect's tests"
echo "the planted defects fail the provider check, naming each rule"
