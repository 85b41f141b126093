#!/usr/bin/env bash
# The etwh_man_and_completion test: after `cmake --install` into a temporary prefix, the etwh(1)
# man page (when help2man built it) and the bash completion are there; the completion registers
# for etwh, offers the commands, exactly the options each command's --help lists, scenario paths,
# platforms and mutant names.
# Usage: man_and_completion.sh BUILD_DIR MAN_EXPECTED(1|0)
set -euo pipefail

build=$(realpath "$1")
man_expected=$2
prefix=$(mktemp -d "${TMPDIR:-/tmp}/etwh-install-XXXXXX")
trap 'rm -rf "$prefix"' EXIT
fail() { echo "etwh_man_and_completion: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" > "$prefix/install.log" 2>&1 || {
  cat "$prefix/install.log" >&2; fail "cmake --install failed"; }
etwh=$prefix/bin/etwh
completion=$prefix/share/bash-completion/completions/etwh
man_page=$prefix/share/man/man1/etwh.1

# The commands, as `etwh --help` lists them: the man page and completion must cover each.
commands=$("$etwh" --help | awk '/^Subcommands:/ { inside = 1; next } inside && /^  [a-z]/ { print $1 }')
[ -n "$commands" ] || fail "etwh --help lists no commands"

if [ "$man_expected" = 1 ]; then
  [ -s "$man_page" ] || fail "$man_page is missing"
  grep -q '^\.TH ETWH "\?1' "$man_page" || fail "$man_page has no .TH ETWH 1 header"
  for command in $commands; do
    grep -q "etwh $command" "$man_page" || fail "$man_page does not describe 'etwh $command'"
  done
else
  echo "etwh_man_and_completion: help2man was not found at configure time: no man page to check"
fi
[ -s "$completion" ] || fail "$completion is missing"

registered=$(bash -c 'source "$1" && complete -p etwh' _ "$completion")
[ "$registered" = "complete -F _etwh etwh" ] || fail "complete -p etwh says '$registered'"

# What the completion offers for a command line whose last word is being typed.
complete_words() {
  PATH="$prefix/bin:$PATH" bash -c '
    source "$1"; shift
    COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); _etwh
    printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$completion" "$@"
}
# The long options a --help text lists, sorted.
help_options() { "$etwh" "$@" --help | grep -oE '(^|[ ,])--[a-z][a-z-]*' | tr -d ' ,' | sort -u; }
expect_words() {
  local want=$1; shift
  local got; got=$(complete_words "$@" | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "completing '$*' gives '$got', expected '$want'"
}

expect_words "$(printf '%s\n' $commands | sort | tr '\n' ' ')" etwh ""
expect_words "run " etwh ru
expect_words "run " etwh --catalog x.json ru
globals=$(help_options)
for command in $commands; do
  want=$( (help_options "$command"; echo "$globals") | sort -u | tr '\n' ' ')
  expect_words "$want" etwh "$command" -
done
scenarios=$prefix/share/etwh/scenarios/conformance
# Here-strings, not pipes: with pipefail, grep -q leaving early would fail the writer.
grep -qx "$scenarios/callbacks.json" <<< "$(complete_words etwh run "$scenarios/")" ||
  fail "completing a scenario folder does not offer callbacks.json"
expect_words "etwrt " etwh run --platform etw
grep -qx level-min <<< "$(complete_words etwh selftest --only level-)" ||
  fail "completing selftest --only does not offer the installed mutants"
echo "etwh_man_and_completion: man page and completion as expected"
