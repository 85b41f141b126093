#!/usr/bin/env bash
# The etwh_doc_commands doc test: the commands the documentation shows, taken from the pages
# themselves so that they cannot go stale silently.
# - README.md and docs/**/*.md: every indented code line (4 spaces or more, outside ``` fences)
#   that starts with `./build/bin/` runs from the repository and exits 0; every synopsis line
#   (`etwh ...`, indented, in a "## Synopsis" section) names only options that
#   `etwh [COMMAND] --help` lists.
# - bench/README.md, "## Running": every command line runs and exits 0 (ratios.py: 0 or 1, a goal
#   verdict is a measurement, not a doc error). For speed, each benchmark program gets a filter
#   and a short minimum time appended (Google Benchmark takes the last value of a flag).
#   etwh_bench_trace_file and etwh_bench_judge read the trace-file corpus beside the source tree:
#   without it (nor ETWH_BENCH_ETL) their lines are skipped, saying so.
# `./build/` and `build/` in a command are the build directory. Needs at least 8 synopsis lines
# (one per command page), 10 command lines and 4 benchmark lines: a renamed section fails.
# Also: every command of `etwh --help` has its page docs/commands/<command>.md; README, the
# command pages and the catalog point nowhere outside the clone, and every catalog citation
# names one of the catalog's sources.
# Usage: doc_commands.sh SOURCE_DIR BUILD_DIR
set -euo pipefail

source_dir=$(realpath "$1")
build=$(realpath "$2")
fail() { echo "etwh_doc_commands: $*" >&2; exit 1; }
cd "$source_dir"
pages=$(find README.md docs -name '*.md' | sort)
[ -n "$pages" ] || fail "no documentation pages found"

# Indented code lines of the pages (file<TAB>line), outside fences; SECTION limits them to the
# "## SECTION" sections.
code_lines() {
  local section=$1; shift
  awk -v title="$section" '
    FNR == 1 { fence = 0; inside = (title == "") }
    /^```/ { fence = !fence; next }
    /^## / { inside = (title == "" || $0 == "## " title); next }
    !fence && inside && /^    +[^ ]/ { line = $0; sub(/^ +/, "", line); print FILENAME "\t" line }
  ' "$@"
}
count() { [ -z "$1" ] && echo 0 || printf '%s\n' "$1" | wc -l; }

# shellcheck disable=SC2086 # one word per page
synopsis=$(code_lines Synopsis $pages | awk -F '\t' '$2 ~ /^etwh /' || true)
# shellcheck disable=SC2086
commands=$(code_lines "" $pages | awk -F '\t' '$2 ~ /^\.\/build\/bin\//' || true)
bench_commands=$(code_lines Running bench/README.md | cut -f 2)
[ "$(count "$synopsis")" -ge 8 ] || fail "the pages have $(count "$synopsis") synopsis lines"
[ "$(count "$commands")" -ge 10 ] || fail "the pages have $(count "$commands") command lines"
[ "$(count "$bench_commands")" -ge 4 ] ||
  fail "bench/README.md 'Running' has $(count "$bench_commands") command lines"

etwh=$build/bin/etwh
# Every command of `etwh --help` has its page.
subcommands=$("$etwh" --help | awk '/^Subcommands:/ { inside = 1; next } inside && NF == 0 { exit }
  inside { print $1 }')
[ -n "$subcommands" ] || fail "etwh --help lists no subcommand: the parse is broken"
for name in $subcommands; do
  [ -f "docs/commands/$name.md" ] || fail "etwh $name has no page docs/commands/$name.md"
done
# The synopsis is what comes before the description (two or more spaces).
while IFS=$'\t' read -r page line; do
  words=${line%%  *}
  command=$(printf '%s\n' "$words" | awk '{ print $2 }')
  case $command in
    list | run | stress | selftest | compare | report | observe | judge) ;;
    expectations) command="$command $(printf '%s\n' "$words" | awk '{ print $3 }')" ;;
    *) command="" ;;
  esac
  # shellcheck disable=SC2086 # "expectations update" is two words
  help=$("$etwh" --help; [ -z "$command" ] || "$etwh" $command --help)
  for option in $(printf '%s\n' "$words" | grep -oE -- '--[a-z][a-z-]*' || true); do
    # A here-string, not a pipe: with pipefail, grep -q leaving early would fail the printf.
    grep -qE -- "(^|[ ,])$option( |,|$)" <<< "$help" ||
      fail "$page: synopsis '$words': etwh ${command:+$command }--help lists no $option"
  done
done <<< "$synopsis"

# Runs one documented line from the repository, with build/ made the build directory.
run_line() {
  local page=$1 line=$2 allowed=$3 extra=${4:-}
  local cmd
  cmd=$(printf '%s\n' "$line" | sed -E "s#(^| |=)(\./)?build/#\1$build/#g")
  echo "+ $page: $line${extra:+ (+$extra)}"
  local code=0
  (eval "$cmd $extra") > "$build/doc_command.log" 2>&1 || code=$?
  tail -n 5 "$build/doc_command.log"
  case " $allowed " in
    *" $code "*) ;;
    *) cat "$build/doc_command.log" >&2
       fail "$page: line '$line' exited with $code (expected one of: $allowed)" ;;
  esac
}

while IFS=$'\t' read -r page line; do run_line "$page" "$line" 0; done <<< "$commands"

cheap_flags() {
  case $1 in
    */etwh_bench_event_path) echo "--benchmark_filter=BM_EventWrite_NoSession" ;;
    */etwh_bench_runtime) echo "--benchmark_filter=BM_Baseline_IndirectCall" ;;
    */etwrt_dataplane_bench) echo "--benchmark_filter=pool_clock" ;;
    */etwh_bench_trace_file) echo "--benchmark_filter=BM_TraceFile_ProcessAgain" ;;
    */etwh_bench_judge) echo "--benchmark_filter=BM_Judge_ProcessTraceOnly" ;;
    */etwh_bench_xpress) echo "--benchmark_filter=BM_Xpress_Compress/TraceRecords" ;;
    *) return ;;
  esac
  echo "--benchmark_min_time=0.01"
}
while IFS= read -r line; do
  program=${line%% *}
  case $program in
    */ratios.py) run_line bench/README.md "$line" "0 1" ;;
    */etwh_bench_trace_file | */etwh_bench_judge)
      if [ -z "${ETWH_BENCH_ETL:-}" ] &&
         [ ! -f "$source_dir/../shared/etl-corpus/net.4.5.2.x64.etl.zip" ]; then
        echo "+ bench/README.md: $line: skipped (no trace-file corpus beside the source tree)"
        continue
      fi
      run_line bench/README.md "$line" 0 "$(cheap_flags "$program" | tr '\n' ' ')" ;;
    *) run_line bench/README.md "$line" 0 "$(cheap_flags "$program" | tr '\n' ' ')" ;;
  esac
done <<< "$bench_commands"

# The README, the command pages and the catalog stand on their own: nothing outside the clone,
# each citation names one of the catalog's sources.
if grep -nE '\.\./shared|RULES\.md' README.md docs/commands/*.md catalog/rules.json; then
  fail "README.md, docs/commands or catalog/rules.json point outside the repository (lines above)"
fi
python3 - catalog/rules.json <<'PY' || fail "catalog/rules.json: a citation names no source"
import json, sys
catalog = json.load(open(sys.argv[1]))
sources = catalog.get("sources", {})
bad = [f"/rules/{i}/citation: {r['citation']!r}" for i, r in enumerate(catalog["rules"])
       if not any(r["citation"] == k or r["citation"].startswith(k + " ") for k in sources)]
for b in bad:
    print(f"{sys.argv[1]}: {b}: not one of /sources", file=sys.stderr)
sys.exit(1 if bad or not sources else 0)
PY
echo "etwh_doc_commands: $(count "$synopsis") synopsis lines, $(count "$commands") commands and" \
  "$(count "$bench_commands") benchmark lines of the documentation work"
