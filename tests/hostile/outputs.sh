#!/usr/bin/env bash
# Every output option of etwh given what is not a regular file: a device, a FIFO, a directory,
# symlinks to a device and to a FIFO, a symlink to nothing and a file in a missing folder. Each
# must be refused before any work (exit 2, the path named, within 5 s and 200 MB) and the path
# left as it was: nothing replaced, nothing created.
#
#   outputs.sh ETWH SOURCE_DIR
set -u
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh" "$@"

mkfifo "$work/fifo"
mkdir "$work/dir"
ln -s /dev/null "$work/to-device"
ln -s "$work/fifo" "$work/to-fifo"
ln -s "$work/nothing" "$work/to-nothing"
shapes=(fifo dir to-device to-fifo to-nothing missing/out.json)
# A device node of our own (as root): a command that replaced it would harm no system file.
if mknod "$work/device" c 1 3 2>/dev/null; then shapes+=(device); fi

scenario=$source_dir/scenarios/conformance/clocks.json
stress_profile=$source_dir/tests/data/short_steady.json
run_report=$source_dir/harness/report/html/testdata/wine_sourceid.json
cat >"$work/bench.json" <<'JSON'
{"context": {}, "benchmarks": [
 {"name": "BM_A", "run_type": "iteration", "repetitions": 3, "repetition_index": 0,
  "real_time": 10, "cpu_time": 10, "time_unit": "ns"},
 {"name": "BM_A", "run_type": "iteration", "repetitions": 3, "repetition_index": 1,
  "real_time": 11, "cpu_time": 11, "time_unit": "ns"},
 {"name": "BM_A", "run_type": "iteration", "repetitions": 3, "repetition_index": 2,
  "real_time": 12, "cpu_time": 12, "time_unit": "ns"}]}
JSON

# Each output option: the command with OUT where the path goes.
commands=(
  "report $run_report -o OUT"
  "expectations update --platform wine --from $run_report --file OUT"
  "selftest --json OUT"
)
# The file formats of run, observe, stress and compare (the registry of harness/report/) and
# --trace, as each command's --help offers them ("--NAME FILE  Write ..."): a new format is
# checked here without a line of its own.
for command in run observe stress compare; do
  options=$("$etwh" "$command" --help | grep -E -- '^ +--[a-z-]+ FILE +Write' | awk '{print $1}')
  [[ -n $options ]] || { echo "FAIL $command --help lists no output option"; failures=$((failures + 1)); }
  for option in $options; do
    case $command in
      run) commands+=("run $scenario $option OUT") ;;
      observe) commands+=("observe $option OUT -- /bin/true") ;;
      stress) commands+=("stress $stress_profile $option OUT") ;;
      compare) commands+=("compare $work/bench.json $work/bench.json $option OUT") ;;
    esac
  done
done

for shape in "${shapes[@]}"; do
  path=$work/$shape
  before=$(shape_of "$path")
  for command in "${commands[@]}"; do
    read -ra words <<<"${command//OUT/$path}"
    expect_refused "$command [$shape]" "$path" -- "$etwh" "${words[@]}"
    if [[ $(shape_of "$path") != "$before" ]]; then
      echo "FAIL $command [$shape]: $path changed ($before -> $(shape_of "$path"))"
      failures=$((failures + 1))
    fi
  done
done
if [[ -n $(find "$work" -name '*.tmp' -o -name 'out.json') ]]; then
  echo "FAIL files left behind: $(find "$work" -name '*.tmp' -o -name 'out.json')"
  failures=$((failures + 1))
fi

# "-" is standard output.
if ! "$etwh" compare "$work/bench.json" "$work/bench.json" --json - | grep -q '"thresholds"'; then
  echo "FAIL compare --json - printed no JSON"
  failures=$((failures + 1))
fi

echo "$failures failures"
((failures == 0))
