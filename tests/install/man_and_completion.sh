#!/usr/bin/env bash
# The etwh_man_and_completion test: after `cmake --install` into a temporary prefix, the etwh(1)
# man page (when help2man built it) and the bash completion are there; the man page describes
# every command and subcommand of a command (expectations update) with each option its --help
# lists; the completion registers for etwh, offers the commands, the subcommands of a command,
# exactly the options each of them lists in its --help, scenario and report paths, platforms and
# mutant names.
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

# The subcommands a --help text lists (etwh's commands; a command's own, as expectations update).
subcommands_of() {
  "$etwh" "$@" --help | awk '/^Subcommands:/ { inside = 1; next } inside && /^$/ { exit } inside && /^  [a-z]/ { print $1 }'
}
# The long options a --help text lists (not those its examples use), sorted.
help_options() {
  "$etwh" "$@" --help | sed '/^Examples:$/,$d' | grep -oE '(^|[ ,])--[a-z][a-z-]*' | tr -d ' ,' |
    sort -u
}

# The commands, as `etwh --help` lists them, and the subcommands of each ("expectations update"):
# the man page and completion must cover each, down to its options.
commands=$(subcommands_of)
[ -n "$commands" ] || fail "etwh --help lists no commands"
command_paths=$(for command in $commands; do
  echo "$command"
  for sub in $(subcommands_of "$command"); do echo "$command $sub"; done
done)
grep -qx 'expectations update' <<< "$command_paths" ||
  fail "etwh expectations --help lists no update subcommand"

if [ "$man_expected" = 1 ]; then
  [ -s "$man_page" ] || fail "$man_page is missing"
  grep -q '^\.TH ETWH "\?1' "$man_page" || fail "$man_page has no .TH ETWH 1 header"
  # Each command's section, from its heading to the next one, names every option of its --help.
  while read -r path; do
    section=$(awk -v heading=".SS \"etwh $path\"" '
      $0 == heading { inside = 1; next } inside && /^\.S[SH] / { exit } inside' "$man_page")
    [ -n "$section" ] || fail "$man_page has no section for 'etwh $path'"
    for option in $(help_options $path); do
      grep -q -- "$option" <<< "$section" ||
        fail "$man_page: the section 'etwh $path' does not describe $option"
    done
  done <<< "$command_paths"
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
    [ ${#COMPREPLY[@]} -eq 0 ] || printf "%s\n" "${COMPREPLY[@]}" | sort' _ "$completion" "$@"
}
expect_words() {
  local want=$1; shift
  local got; got=$(complete_words "$@" | tr '\n' ' ')
  [ "$got" = "$want" ] || fail "completing '$*' gives '$got', expected '$want'"
}

expect_words "$(printf '%s\n' $commands | sort | tr '\n' ' ')" etwh ""
expect_words "run " etwh ru
expect_words "run " etwh --catalog x.json ru
globals=$(help_options)
# Each command with subcommands offers them; each command or subcommand, its options.
while read -r path; do
  subs=$(subcommands_of $path)
  [ -z "$subs" ] || expect_words "$(sort <<< "$subs" | tr '\n' ' ')" etwh $path ""
  want=$( (help_options $path; echo "$globals") | sort -u | tr '\n' ' ')
  expect_words "$want" etwh $path -
done <<< "$command_paths"
scenarios=$prefix/share/etwh/scenarios/conformance
# Here-strings, not pipes: with pipefail, grep -q leaving early would fail the writer.
grep -qx "$scenarios/callbacks.json" <<< "$(complete_words etwh run "$scenarios/")" ||
  fail "completing a scenario folder does not offer callbacks.json"
expect_words "etwrt " etwh run --platform etw
expect_words "etwrt " etwh expectations update --from run.json --platform etw
expectations=$prefix/share/etwh/expectations
grep -qx "$expectations/etwrt.json" <<< "$(complete_words etwh expectations update --file "$expectations/")" ||
  fail "completing expectations update --file does not offer etwrt.json"
# A value that is a number or a regular expression gets no file names nor mutant names.
expect_words "" etwh compare --only level-
expect_words "" etwh stress --alpha ""
grep -qx level-min <<< "$(complete_words etwh selftest --only level-)" ||
  fail "completing selftest --only does not offer the installed mutants"
echo "etwh_man_and_completion: man page and completion as expected"
