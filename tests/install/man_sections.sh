#!/usr/bin/env bash
# The etwh_man_environment_and_examples test: the etwh(1) man page has an EXAMPLES section, and
# its ENVIRONMENT section names every environment variable that the source of etwh, its agents,
# writers and reports reads (getenv) or sets for its children (setenv), so that a new getenv
# without its entry fails here.
# Usage: man_sections.sh SOURCE_DIR MAN_PAGE
set -euo pipefail
src=$1
man_page=$2
fail() { echo "etwh_man_environment_and_examples: $*" >&2; exit 1; }

[ -s "$man_page" ] || fail "$man_page is missing"
grep -q '^\.SH EXAMPLES' "$man_page" || fail "$man_page has no EXAMPLES section"
environment=$(awk '/^\.SH ENVIRONMENT/ { inside = 1; next } inside && /^\.SH / { exit } inside' \
  "$man_page")
[ -n "$environment" ] || fail "$man_page has no ENVIRONMENT section"
variables=$(cd "$src" && grep -rhoE '(getenv|setenv)\("[A-Za-z_][A-Za-z0-9_]*"' \
  harness common providers --include='*.cc' --include='*.h' |
  sed -E 's/.*\("//; s/"$//' | sort -u)
[ -n "$variables" ] || fail "no getenv found in the source: the grep is broken"
for v in $variables; do
  grep -q "^\.B $v\$" <<< "$environment" || fail "ENVIRONMENT does not describe $v (read in the source)"
done
echo "etwh_man_environment_and_examples: EXAMPLES, and ENVIRONMENT names $(wc -w <<< "$variables") variables"
