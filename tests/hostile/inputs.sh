#!/usr/bin/env bash
# Every input file of etwh given a hostile shape: a FIFO (no writer: an ordinary open blocks),
# /dev/zero (never ends), a directory, a symlink to a device, JSON with a duplicate key and
# JSON with a number no double holds (1e999). Each must be refused: exit 2 naming the file,
# within 5 s and 200 MB. Then each pattern option given a pattern that backtracks for minutes
# in an ECMAScript engine: matched in linear time, it ends at once.
#
#   inputs.sh ETWH SOURCE_DIR
set -u
etwh=$1 source_dir=$2
work=$(mktemp -d "${TMPDIR:-/tmp}/etwh-hostile-XXXXXX")
trap 'rm -rf "$work"' EXIT
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
failures=0

mkfifo "$work/fifo.json"
mkdir "$work/dir.json"
ln -s /dev/zero "$work/to-device.json"
printf '{\n  "schema_version": 1,\n  "schema_version": 1\n}\n' >"$work/duplicate.json"
printf '{\n  "schema_version": 1e999\n}\n' >"$work/huge.json"
shapes=(fifo.json /dev/zero dir.json to-device.json duplicate.json huge.json)

scenario=$source_dir/scenarios/conformance/clocks.json
stress_profile=$source_dir/tests/data/short_steady.json
run_report=$source_dir/harness/report/html/testdata/wine_sourceid.json
cat >"$work/bench.json" <<'JSON'
{"context": {}, "benchmarks": [
 {"name": "BM_A", "run_type": "iteration", "real_time": 10, "cpu_time": 10, "time_unit": "ns"}]}
JSON

# Each input: the command with IN where the file goes (outputs, if any, into $work/out).
commands=(
  "run IN"
  "run $scenario --catalog IN"
  "run $scenario --expectations IN"
  "stress IN"
  "stress $stress_profile --baseline IN"
  "compare IN $work/bench.json"
  "compare $work/bench.json IN"
  "report IN -o $work/out/page.html"
  "expectations update --platform wine --from IN --file $work/out/wine.json"
  "selftest --mutants IN"
  "observe --schedule IN -- /bin/true"
)
mkdir "$work/out"

for shape in "${shapes[@]}"; do
  path=$shape
  [[ $path == /* ]] || path=$work/$shape
  for command in "${commands[@]}"; do
    read -ra words <<<"${command//IN/$path}"
    expect_refused "$command [$shape]" "$path" -- "$etwh" "${words[@]}"
  done
done
if [[ -n $(ls -A "$work/out") ]]; then
  echo "FAIL outputs written although an input was refused: $(ls -A "$work/out")"
  failures=$((failures + 1))
fi

# A name of 30 a's and a pattern that has no match in it: backtracking tries every way to split
# the a's among the nested stars before it gives up.
catastrophic='((a*)*)*((a*)*)*((a*)*)*b'
many_a=aaaaaaaaaaaaaaaaaaaaaaaaaaaaaa
sed "s/\"con-clock-filetime-by-default\"/\"$many_a\"/" "$scenario" >"$work/many-a.json"
sed "s/BM_A/$many_a/" "$work/bench.json" >"$work/many-a-bench.json"
expect_refused "run --filter CATASTROPHIC (selects none)" "$work/many-a.json" -- \
  "$etwh" run "$work/many-a.json" --filter "$catastrophic"
expect_exit "compare --only CATASTROPHIC" 0 -- \
  "$etwh" compare "$work/many-a-bench.json" "$work/many-a-bench.json" --only "$catastrophic"

echo "$failures failures"
((failures == 0))
