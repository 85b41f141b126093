#!/usr/bin/env bash
# The etwh_help_metavars test: every command's --help (and the subcommands of a command) names
# the value each option takes (FILE, DIR, N, REGEX, ...), never CLI11's TEXT, INT, UINT or FLOAT,
# and ends with its examples.
# Usage: help_metavars.sh ETWH
set -euo pipefail
etwh=$1
fail() { echo "etwh_help_metavars: $*" >&2; exit 1; }

subcommands_of() {
  "$etwh" "$@" --help | awk '/^Subcommands:/ { inside = 1; next } inside && /^$/ { exit } inside && /^  [a-z]/ { print $1 }'
}
paths=$(echo; for c in $(subcommands_of); do
  echo "$c"
  for s in $(subcommands_of "$c"); do echo "$c $s"; done
done)
while read -r path; do
  help=$("$etwh" $path --help)
  bad=$(grep -nE '(^|[ :=])(TEXT|INT|UINT|FLOAT|NUMBER)([ :]|$)' <<< "$help" || true)
  [ -z "$bad" ] || fail "etwh $path --help shows a type, not a metavar: $bad"
  grep -q '^Examples:$' <<< "$help" || fail "etwh $path --help has no Examples: section"
done <<< "$paths"
grep -q ' FILE' <<< "$("$etwh" run --help)" || fail "etwh run --help names no FILE"
echo "etwh_help_metavars: every --help names its values and has examples"
