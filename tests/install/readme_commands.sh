#!/usr/bin/env bash
# The etwh_readme_commands doc test: README.md's commands, taken from the README itself so that
# it cannot go stale silently.
# - "## Using etwh": every synopsis line (`etwh ...`) names only options that `etwh [COMMAND]
#   --help` lists; every command line (`./build/bin/...`) runs from the repository and exits 0.
# - "## Benchmarks": every command line runs and exits 0 (ratios.py: 0 or 1, a goal verdict is a
#   measurement, not a doc error). For speed, each benchmark program gets a filter and a short
#   minimum time appended (Google Benchmark takes the last value of a flag).
# `./build/` and `build/` in a command are the build directory. Needs at least 3 command lines and
# 4 synopsis lines in "Using etwh" and 4 command lines in "Benchmarks": a renamed section fails.
# Also: README and catalog point nowhere outside the clone, and every catalog citation names one
# of the catalog's sources.
# Usage: readme_commands.sh SOURCE_DIR BUILD_DIR
set -euo pipefail

source_dir=$(realpath "$1")
build=$(realpath "$2")
readme=$source_dir/README.md
fail() { echo "etwh_readme_commands: $*" >&2; exit 1; }

# The indented code lines of one "## " section.
section_code() {
  awk -v title="$1" '
    /^## / { inside = ($0 == "## " title); next }
    inside && /^    [^ ]/ { sub(/^    /, ""); print }' "$readme"
}
count() { [ -z "$1" ] && echo 0 || printf '%s\n' "$1" | wc -l; }

using=$(section_code "Using etwh")
synopsis=$(printf '%s\n' "$using" | grep '^etwh ' || true)
using_commands=$(printf '%s\n' "$using" | grep '^\./build/bin/' || true)
bench_commands=$(section_code "Benchmarks")
[ "$(count "$synopsis")" -ge 4 ] || fail "README 'Using etwh' has $(count "$synopsis") synopsis lines"
[ "$(count "$using_commands")" -ge 3 ] ||
  fail "README 'Using etwh' has $(count "$using_commands") command lines"
[ "$(count "$bench_commands")" -ge 4 ] ||
  fail "README 'Benchmarks' has $(count "$bench_commands") command lines"

etwh=$build/bin/etwh
# The synopsis is what comes before the description (two or more spaces).
while IFS= read -r line; do
  words=${line%%  *}
  command=$(printf '%s\n' "$words" | awk '{ print $2 }')
  case $command in
    list | run | stress | selftest | compare | report | observe) ;;
    expectations) command="$command $(printf '%s\n' "$words" | awk '{ print $3 }')" ;;
    *) command="" ;;
  esac
  # shellcheck disable=SC2086 # "expectations update" is two words
  help=$("$etwh" --help; [ -z "$command" ] || "$etwh" $command --help)
  for option in $(printf '%s\n' "$words" | grep -oE -- '--[a-z][a-z-]*' || true); do
    # A here-string, not a pipe: with pipefail, grep -q leaving early would fail the printf.
    grep -qE -- "(^|[ ,])$option( |,|$)" <<< "$help" ||
      fail "README synopsis '$words': etwh ${command:+$command }--help lists no $option"
  done
done <<< "$synopsis"

# Runs one README line from the repository, with build/ made the build directory.
run_line() {
  local line=$1 allowed=$2 extra=${3:-}
  local cmd
  cmd=$(printf '%s\n' "$line" | sed -E "s#(^| |=)(\./)?build/#\1$build/#g")
  echo "+ $line${extra:+ (+$extra)}"
  local code=0
  (cd "$source_dir" && eval "$cmd $extra") > "$build/readme_command.log" 2>&1 || code=$?
  tail -n 5 "$build/readme_command.log"
  case " $allowed " in
    *" $code "*) ;;
    *) cat "$build/readme_command.log" >&2
       fail "README line '$line' exited with $code (expected one of: $allowed)" ;;
  esac
}

while IFS= read -r line; do run_line "$line" 0; done <<< "$using_commands"

cheap_flags() {
  case $1 in
    */etwh_bench_event_path) echo "--benchmark_filter=BM_EventWrite_NoSession" ;;
    */etwh_bench_runtime) echo "--benchmark_filter=BM_Baseline_IndirectCall" ;;
    */etwrt_dataplane_bench) echo "--benchmark_filter=pool_clock" ;;
    *) return ;;
  esac
  echo "--benchmark_min_time=0.01"
}
while IFS= read -r line; do
  program=${line%% *}
  case $program in
    */ratios.py) run_line "$line" "0 1" ;;
    *) run_line "$line" 0 "$(cheap_flags "$program" | tr '\n' ' ')" ;;
  esac
done <<< "$bench_commands"
# The README and the catalog stand on their own: nothing outside the clone, each citation names
# one of the catalog's sources.
if grep -nE '\.\./shared|RULES\.md' "$readme" "$source_dir/catalog/rules.json"; then
  fail "README.md or catalog/rules.json points outside the repository (lines above)"
fi
python3 - "$source_dir/catalog/rules.json" <<'PY' || fail "catalog/rules.json: a citation names no source"
import json, sys
catalog = json.load(open(sys.argv[1]))
sources = catalog.get("sources", {})
bad = [f"/rules/{i}/citation: {r['citation']!r}" for i, r in enumerate(catalog["rules"])
       if not any(r["citation"] == k or r["citation"].startswith(k + " ") for k in sources)]
for b in bad:
    print(f"{sys.argv[1]}: {b}: not one of /sources", file=sys.stderr)
sys.exit(1 if bad or not sources else 0)
PY
echo "etwh_readme_commands: the README's commands work"
